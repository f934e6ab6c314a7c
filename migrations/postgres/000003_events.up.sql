-- No BEGIN/COMMIT, as in 000001: the file is one simple query, one implicit transaction.

-- The events of the registrations (directory.Event), written in the transaction of the
-- change they record. Ids come from events_id_seq, drawn only while the writer holds the
-- store's events lock, which it keeps until it commits: ids are therefore handed out in
-- commit order (a reader that saw an id has seen every smaller one), which a sequence
-- alone does not give, and never reused, not even once every event is purged. The
-- sequence keeps the default CACHE 1: with a cache, each session would draw from its own
-- range and the order would be lost even under the lock.
CREATE SEQUENCE events_id_seq AS bigint;

CREATE TABLE events (
    id          bigint PRIMARY KEY,
    type        text NOT NULL CHECK (type IN ('thing_created', 'thing_updated', 'thing_deleted')),
    -- COLLATE "C" as things.id: code-point order and comparison whatever the server's locale.
    thing_id    text COLLATE "C" NOT NULL,
    -- Copied from the Thing's index when the event happens, not joined: the Thing changes or
    -- goes afterwards, and the event must still say what it was. '' when it had no index.
    kind        text NOT NULL DEFAULT '',
    vendor_name text NOT NULL DEFAULT '',
    vendor_url  text NOT NULL DEFAULT '',
    time        timestamptz NOT NULL,
    -- document: the Enriched TD of a creation; patch: the RFC 7396 merge patch of an
    -- update, much smaller than the TDs before and after it. NULL otherwise.
    document    bytea NULL,
    patch       bytea NULL
);

ALTER SEQUENCE events_id_seq OWNED BY events.id;

-- For the retention purge (time < cutoff), which would otherwise read every event.
CREATE INDEX events_time_idx ON events (time);

-- The greatest id purged so far, one row. Not derivable from events: once the newest event
-- is purged, nothing there says which ids were given out, and a subscriber resuming after
-- one of them must learn that what followed it is gone rather than get nothing.
CREATE TABLE event_log (
    purged_through bigint NOT NULL
);

INSERT INTO event_log (purged_through) VALUES (0);
