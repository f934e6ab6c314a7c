-- Dropping a column drops the indexes on it too; they are named anyway so that this file
-- lists exactly what 000002_search.up.sql adds.
DROP INDEX IF EXISTS things_doc_path_idx;
DROP INDEX IF EXISTS things_unexpanded_idx;
DROP INDEX IF EXISTS things_vendor_url_idx;
DROP INDEX IF EXISTS things_vendor_name_idx;
DROP INDEX IF EXISTS things_facets_idx;
DROP INDEX IF EXISTS things_filters_idx;
DROP INDEX IF EXISTS things_search_idx;

ALTER TABLE things
    DROP COLUMN IF EXISTS expanded_at,
    DROP COLUMN IF EXISTS expansion_problem,
    DROP COLUMN IF EXISTS expanded,
    DROP COLUMN IF EXISTS search,
    DROP COLUMN IF EXISTS protocols,
    DROP COLUMN IF EXISTS capabilities,
    DROP COLUMN IF EXISTS events,
    DROP COLUMN IF EXISTS properties,
    DROP COLUMN IF EXISTS actions,
    DROP COLUMN IF EXISTS description,
    DROP COLUMN IF EXISTS title,
    DROP COLUMN IF EXISTS vendor_url,
    DROP COLUMN IF EXISTS vendor_name,
    DROP COLUMN IF EXISTS type_iris,
    DROP COLUMN IF EXISTS types,
    DROP COLUMN IF EXISTS kind;
