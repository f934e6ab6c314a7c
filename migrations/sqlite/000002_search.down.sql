DROP TABLE IF EXISTS thing_expansions;
DROP TABLE IF EXISTS thing_text;
DROP TABLE IF EXISTS thing_terms;
DROP TABLE IF EXISTS thing_index;

-- Back to 000001's things, without num: the same copy as the up migration, reversed.
CREATE TABLE things_id (
    id         TEXT PRIMARY KEY,
    created    INTEGER NOT NULL,
    modified   INTEGER NOT NULL,
    expires    INTEGER NULL,
    ttl        REAL NULL,
    member_seq INTEGER NOT NULL,
    revision   INTEGER NOT NULL,
    document   BLOB NOT NULL
) STRICT;

INSERT INTO things_id (rowid, id, created, modified, expires, ttl, member_seq, revision, document)
SELECT num, id, created, modified, expires, ttl, member_seq, revision, document FROM things;

DROP TABLE things;
ALTER TABLE things_id RENAME TO things;
CREATE INDEX things_expires_idx ON things (expires, member_seq);
