-- No BEGIN/COMMIT: golang-migrate's sqlite driver runs each file in a transaction of its
-- own, so a failure leaves nothing half-applied.

-- STRICT makes SQLite refuse a value of the wrong type instead of storing it as another
-- one, which is what the Go code reading these columns assumes.
CREATE TABLE things (
    -- TEXT with the default BINARY collation compares the UTF-8 bytes, which for UTF-8 is
    -- the code-point order the listing promises. No NOCASE: ids are exact.
    id         TEXT PRIMARY KEY,
    -- Microseconds since the Unix epoch, UTC: Things carry microseconds, and integers
    -- compare faster than any text form.
    created    INTEGER NOT NULL,
    modified   INTEGER NOT NULL,
    -- NULL: the Thing does not expire.
    expires    INTEGER NULL,
    ttl        REAL NULL,
    -- member_seq numbers every arrival of an id in the set of live things, so that the
    -- membership tag can tell sets of the same size apart; a replace keeps it. revision
    -- changes on every write, for the optimistic Update. Both are drawn from write_seq,
    -- so neither is ever reused, not even after a delete.
    member_seq INTEGER NOT NULL,
    revision   INTEGER NOT NULL,
    -- The registered bytes, served verbatim. SQLite's JSON functions read this JSON text
    -- directly, so there is no separate copy for queries (see directory/sqlite). Last,
    -- because what does not fit in the row's page continues on overflow pages, and a
    -- column after it could only be read by following them.
    document   BLOB NOT NULL
) STRICT;

-- For the purge (expires <= now) and for the membership, which this index covers: the
-- count of live things then reads the index, not every document.
CREATE INDEX things_expires_idx ON things (expires, member_seq);

-- The last number handed out to member_seq or revision. A counter rather than max()+1,
-- because max()+1 gives a deleted arrival's number to the next one.
CREATE TABLE write_seq (
    one  INTEGER PRIMARY KEY CHECK (one = 1),
    last INTEGER NOT NULL
) STRICT;

INSERT INTO write_seq (one, last) VALUES (1, 0);
