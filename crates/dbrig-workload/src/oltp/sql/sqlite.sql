-- OLTP statements for SQLite. Sections start with "-- name: NAME".
-- {table} and {index} are replaced by validated identifiers; values are bind parameters (?).

-- name: create_table
CREATE TABLE {table} (
  id INTEGER NOT NULL PRIMARY KEY,
  k INTEGER NOT NULL DEFAULT 0,
  c CHAR(120) NOT NULL DEFAULT '',
  pad CHAR(60) NOT NULL DEFAULT ''
)

-- name: create_bulk_table
CREATE TABLE {table} (
  id INTEGER NOT NULL PRIMARY KEY,
  k INTEGER NOT NULL DEFAULT 0
)

-- name: create_index
CREATE INDEX {index} ON {table}(k)

-- name: after_load
ANALYZE {table}

-- name: drop_table
DROP TABLE {table}

-- name: create_registry
CREATE TABLE IF NOT EXISTS dbrig_objects (
  name VARCHAR(64) NOT NULL PRIMARY KEY,
  kind VARCHAR(32) NOT NULL,
  created_at VARCHAR(40) NOT NULL
)
