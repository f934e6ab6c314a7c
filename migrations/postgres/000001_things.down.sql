-- The sequence is owned by things.member_seq and goes with the table.
DROP TABLE IF EXISTS things;
