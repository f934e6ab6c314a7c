-- No BEGIN/COMMIT: golang-migrate sends the file as one simple query, which PostgreSQL runs
-- as one implicit transaction. An explicit block would, on failure, leave the session in an
-- aborted transaction, and golang-migrate could not even release its lock.

-- member_seq numbers every arrival of an id in the set of live things, so that the
-- membership tag can tell sets of the same size apart. A replace keeps the number.
CREATE SEQUENCE things_member_seq AS bigint;

CREATE TABLE things (
    -- COLLATE "C" makes ORDER BY id the code-point order of the UTF-8 ids on every server,
    -- whatever its locale.
    id         text COLLATE "C" PRIMARY KEY,
    -- The registered bytes, served verbatim: jsonb would reorder members, drop duplicates
    -- and respell numbers.
    document   bytea NOT NULL,
    -- A copy of document for queries only.
    doc        jsonb NOT NULL,
    created    timestamptz NOT NULL,
    modified   timestamptz NOT NULL,
    expires    timestamptz NULL,
    ttl        double precision NULL,
    member_seq bigint NOT NULL DEFAULT nextval('things_member_seq')
);

ALTER SEQUENCE things_member_seq OWNED BY things.member_seq;

-- Most things never expire; the purge only looks for those that do.
CREATE INDEX things_expires_idx ON things (expires) WHERE expires IS NOT NULL;
