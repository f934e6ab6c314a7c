ALTER TABLE things DROP COLUMN origin;
ALTER TABLE things DROP COLUMN retrieved;
