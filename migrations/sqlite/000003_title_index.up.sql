-- The JSONPath pre-filter answers $[?@.title=='…'] from the search index: this makes it a
-- lookup instead of a scan of every Thing's index row.
CREATE INDEX thing_index_title_idx ON thing_index (title);
