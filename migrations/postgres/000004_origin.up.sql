-- No BEGIN/COMMIT, as in 000001: the file is one simple query, one implicit transaction.

-- Where a TD the directory fetched itself came from (directory.Thing's Retrieved and
-- Origin); both NULL for a TD a client registered, which is every Thing registered before
-- this migration. Nullable columns without a default only change the catalog, so adding
-- them does not rewrite the table.
ALTER TABLE things
    -- When the directory fetched the TD.
    ADD COLUMN retrieved timestamptz NULL,
    -- A JSON object, served verbatim in the registration like document, hence bytes
    -- rather than jsonb.
    ADD COLUMN origin    bytea       NULL;
