// Package migrations holds the SQL schema of each store backend as numbered golang-migrate
// files, embedded so that the binary can migrate a database without files on disk.
//
// Files are append-only: a released migration is never edited, only followed by a new one,
// because databases in the field have already applied it.
package migrations

import "embed"

// Postgres holds the PostgreSQL migrations under the directory "postgres".
//
//go:embed postgres/*.sql
var Postgres embed.FS

// SQLite holds the SQLite migrations under the directory "sqlite".
//
//go:embed sqlite/*.sql
var SQLite embed.FS
