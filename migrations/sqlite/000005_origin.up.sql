-- No BEGIN/COMMIT, as in 000001: golang-migrate runs the file in one transaction.

-- Where a TD the directory fetched itself came from (directory.Thing's Retrieved and
-- Origin); both NULL for a TD a client registered, which is every Thing registered before
-- this migration. ADD COLUMN only changes the schema, not the rows. The columns come after
-- document (see 000001), which 000002 copied the table to avoid for the columns it needed;
-- here that costs nothing, because every statement that reads these columns reads
-- document too, and so walks its overflow pages anyway.
-- Microseconds since the Unix epoch, UTC, as created and expires.
ALTER TABLE things ADD COLUMN retrieved INTEGER NULL;
-- A JSON object, served verbatim in the registration like document.
ALTER TABLE things ADD COLUMN origin BLOB NULL;
