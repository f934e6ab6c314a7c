-- No BEGIN/COMMIT, as in 000001: golang-migrate runs the file in one transaction.

-- The events of the registrations (directory.Event), written in the transaction of the
-- change they record. id is not AUTOINCREMENT: the writer draws it from write_seq, like
-- the revisions, so ids are handed out in commit order (a reader that saw an id has seen
-- every smaller one) and never reused, not even once every event is purged. The columns
-- are copied from the Thing when the event happens, not joined: the Thing changes or goes
-- afterwards, and the event must still say what it was.
CREATE TABLE events (
    id          INTEGER PRIMARY KEY,
    type        TEXT NOT NULL CHECK (type IN ('thing_created', 'thing_updated', 'thing_deleted')),
    thing_id    TEXT NOT NULL,
    -- From thing_index; '' when the Thing had no index.
    kind        TEXT NOT NULL DEFAULT '',
    vendor_name TEXT NOT NULL DEFAULT '',
    vendor_url  TEXT NOT NULL DEFAULT '',
    -- Microseconds since the Unix epoch, UTC, as in things.
    time        INTEGER NOT NULL,
    -- document: the Enriched TD of a creation; patch: the RFC 7396 merge patch of an
    -- update, much smaller than the TDs before and after it. NULL otherwise. Last, for the
    -- reason document is last in things.
    document    BLOB NULL,
    patch       BLOB NULL
) STRICT;

-- For the retention purge (time < cutoff), which would otherwise read every event.
CREATE INDEX events_time_idx ON events (time);

-- The greatest id purged so far. Not derivable from events: once the newest event is
-- purged, nothing there says which ids were given out, and a subscriber resuming after
-- one of them must learn that what followed it is gone rather than get nothing.
CREATE TABLE event_log (
    purged_through INTEGER NOT NULL
) STRICT;

INSERT INTO event_log (purged_through) VALUES (0);
