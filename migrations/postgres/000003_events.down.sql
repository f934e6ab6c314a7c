-- The sequence is owned by events.id and goes with the table.
DROP TABLE IF EXISTS event_log;
DROP TABLE IF EXISTS events;
