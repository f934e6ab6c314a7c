-- No BEGIN/COMMIT, as in 000001: the file is one simple query, one implicit transaction.

-- The search index of each Thing (directory.Index), which the directory derives from the TD
-- and the store writes. kind IS NULL marks a Thing without one: search does not find it until
-- the background derivation gives it one, which is also how the Things registered before this
-- migration get theirs. Nullable columns without a default only change the catalog, so adding
-- them does not rewrite the table.
ALTER TABLE things
    ADD COLUMN kind         text     NULL,
    -- @type as written, which the type facet counts; type_iris adds the expansions of each,
    -- which the type filter matches.
    ADD COLUMN types        text[]   NULL,
    ADD COLUMN type_iris    text[]   NULL,
    ADD COLUMN vendor_name  text     NULL,
    ADD COLUMN vendor_url   text     NULL,
    -- title and description are only returned with hits, so that result lists need not
    -- parse documents; full-text search reads search.
    ADD COLUMN title        text     NULL,
    ADD COLUMN description  text     NULL,
    ADD COLUMN actions      text[]   NULL,
    ADD COLUMN properties   text[]   NULL,
    ADD COLUMN events       text[]   NULL,
    ADD COLUMN capabilities text[]   NULL,
    -- Lower case, as the directory derives them, so that the filter lowers only its value.
    ADD COLUMN protocols    text[]   NULL,
    -- The weighted text (titles A, names and vendor B, descriptions C). The store computes it
    -- when it writes the index rather than as a generated column, because its sources are
    -- not kept in columns of their own.
    ADD COLUMN search       tsvector NULL,
    -- The JSON-LD expansion of document, made in the background after each write because
    -- expanding is far slower than a write. expanded_at IS NULL means not done for the
    -- current document; expanded stays NULL when the document could not be expanded at all,
    -- and expansion_problem says why it is missing or incomplete.
    ADD COLUMN expanded          bytea       NULL,
    ADD COLUMN expansion_problem text        NULL,
    ADD COLUMN expanded_at       timestamptz NULL;

-- The two search indexes do without GIN's pending list (fastupdate): with it, every search
-- also scans the entries written since the list was last merged, up to 4 MB of them, which
-- measured twice as slow for a selective search after a few thousand writes. A write,
-- renewals included (expires is indexed, so they are never HOT updates), pays instead by
-- inserting its entries at once, about half a millisecond.
CREATE INDEX things_search_idx ON things USING gin (search) WITH (fastupdate = off);

-- One GIN index for all the filter arrays rather than one each: GIN finds entries of any
-- one of its columns as fast as a single-column index would, a write then updates one index
-- instead of six, and filters on several arrays combine within one index scan.
CREATE INDEX things_filters_idx ON things USING gin (type_iris, actions, properties, events, capabilities, protocols)
    WITH (fastupdate = off);

-- Facets count every match, and a search without text or with only a kind matches most of
-- the directory: an index-only scan of this narrow index counts 100,000 Things about ten
-- times faster than reading their rows, which are wide with the tsvector. Its leading
-- kind also serves the kind filter.
CREATE INDEX things_facets_idx ON things (kind, vendor_name, types) INCLUDE (expires) WHERE kind IS NOT NULL;

-- The vendor filter matches either; both sides of the OR need an index for a bitmap OR.
CREATE INDEX things_vendor_name_idx ON things (lower(vendor_name));
CREATE INDEX things_vendor_url_idx ON things (vendor_url);

-- The work queue of the background expansion, which shrinks to nothing once it catches up.
CREATE INDEX things_unexpanded_idx ON things (id) WHERE expanded_at IS NULL;

-- The JSONPath pre-filter: jsonb_path_ops answers doc @? path, and is smaller than the
-- default operator class, which would also index every key on its own. It is the one index
-- here with data to read on a populated table (the new columns are all NULL), and like the
-- others it blocks writes while it builds: CONCURRENTLY cannot run inside the transaction
-- the migration is.
CREATE INDEX things_doc_path_idx ON things USING gin (doc jsonb_path_ops);
