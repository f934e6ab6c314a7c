-- No BEGIN/COMMIT, as in 000001: golang-migrate runs the file in one transaction.

-- things gets a declared INTEGER PRIMARY KEY, num, which the search tables below are keyed
-- by. Without one the rowid is not the row's for good: VACUUM may renumber it, and the
-- sqlite3 shell's .dump leaves it out, so a restored backup would tie every index entry to
-- another Thing. ALTER TABLE cannot add a primary key, hence the copy; the rowids are kept.
-- The columns are 000001's, with document still last.
CREATE TABLE things_num (
    num        INTEGER PRIMARY KEY,
    -- UNIQUE is what 000001's PRIMARY KEY on a TEXT column was: an index on id beside the
    -- rowid table.
    id         TEXT NOT NULL UNIQUE,
    created    INTEGER NOT NULL,
    modified   INTEGER NOT NULL,
    expires    INTEGER NULL,
    ttl        REAL NULL,
    member_seq INTEGER NOT NULL,
    revision   INTEGER NOT NULL,
    document   BLOB NOT NULL
) STRICT;

INSERT INTO things_num (num, id, created, modified, expires, ttl, member_seq, revision, document)
SELECT rowid, id, created, modified, expires, ttl, member_seq, revision, document FROM things;

DROP TABLE things;
ALTER TABLE things_num RENAME TO things;
CREATE INDEX things_expires_idx ON things (expires, member_seq);

-- The search index of a Thing (directory.Index) whose value is one string each. A Thing
-- without a row here has no index and search does not find it: that is how a Thing stored
-- with a nil Index, or registered before this migration, waits for the background
-- derivation. A table of its own rather than columns of things, because a column added to
-- things would come after document (see 000001), and because search reads these columns
-- for every match: a few dozen rows fit in a page here, where a row of things fills one.
CREATE TABLE thing_index (
    thing       INTEGER PRIMARY KEY, -- things.num
    -- things.expires, repeated so that search and its facets tell the live Things without
    -- reading a page of things for each: counting 5,000 live Things took 0.9 ms this way,
    -- 3 to 6 ms through things. Every write of things.expires writes it too, in the same
    -- transaction.
    expires     INTEGER NULL,
    kind        TEXT NOT NULL,
    -- @type as written, a JSON array without repeats, which the type facet counts. Kept
    -- with the row, because otherwise a search that matches every Thing would look up the
    -- types of each in an index.
    types       TEXT NOT NULL,
    -- Shown in result lists, so that they need not parse documents.
    title       TEXT NOT NULL,
    description TEXT NOT NULL,
    -- As written, for the vendor facet and the result lists; '' when the TD names none.
    -- The vendor filter reads thing_terms.
    vendor_name TEXT NOT NULL,
    vendor_url  TEXT NOT NULL
) STRICT;

-- Most Things are agents or tools, so this serves the searches for the rarer kinds.
CREATE INDEX thing_index_kind_idx ON thing_index (kind);

-- The values the search filters match, one row each, so that every filter is a lookup in
-- the primary key. field is one of:
--   type_iri     @type as written, plus the expansion of each
--   action, property, event, capability
--   protocol     lower case, as the filter lowers its value
--   vendor_name  lower case (Unicode-aware, done in Go: NOCASE only folds ASCII)
--   vendor_url   as written
-- WITHOUT ROWID: the rows are nothing but their key, which is then stored once.
CREATE TABLE thing_terms (
    field TEXT NOT NULL,
    value TEXT NOT NULL,
    thing INTEGER NOT NULL, -- things.num
    PRIMARY KEY (field, value, thing)
) STRICT, WITHOUT ROWID;

-- Replacing or deleting a Thing's terms finds them by Thing.
CREATE INDEX thing_terms_thing_idx ON thing_terms (thing, field);

-- The full text of each indexed Thing, its rowid being things.num. Contentless, because
-- nothing reads the text back: search only matches it. contentless_delete lets a row be
-- deleted by its rowid alone, without the text it was indexed with. The tokenizer folds
-- case and diacritics and reduces English words to their Porter stems, much as
-- PostgreSQL's english configuration does. The four columns are the three weights of
-- directory.SearchQuery: titles, then names and vendor, then descriptions.
CREATE VIRTUAL TABLE thing_text USING fts5 (
    titles, names, vendor, descriptions,
    content = '',
    contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
);

-- The JSON-LD expansion of each Thing's document, one row per Thing from its first write
-- on: done = 0 marks it pending, for the background expansion, which the partial index
-- below finds without reading the whole table. A table of its own, because expanded is
-- larger than the document it expands; Get reads only problem, which comes before it for
-- the reason document is last in things.
CREATE TABLE thing_expansions (
    thing    INTEGER PRIMARY KEY, -- things.num
    done     INTEGER NOT NULL CHECK (done IN (0, 1)),
    -- Why expanded is incomplete or missing; NULL when it is complete or not done.
    problem  TEXT NULL,
    -- NULL when not done, or when the document could not be expanded at all.
    expanded BLOB NULL
) STRICT;

-- The work queue of the background expansion, which shrinks to nothing once it catches up.
CREATE INDEX thing_expansions_pending_idx ON thing_expansions (thing) WHERE done = 0;

-- The Things registered before this migration have no index and no expansion yet: the
-- background derivation gives them both.
INSERT INTO thing_expansions (thing, done) SELECT num, 0 FROM things;
