-- OLTP statements for PostgreSQL. Sections start with "-- name: NAME".
-- {table} and {index} are replaced by validated identifiers; values are bind parameters,
-- written as ? here and numbered $1, $2… when loaded.

-- name: create_table
CREATE TABLE {table} (
  id SERIAL NOT NULL,
  k INTEGER NOT NULL DEFAULT 0,
  c CHAR(120) NOT NULL DEFAULT '',
  pad CHAR(60) NOT NULL DEFAULT '',
  PRIMARY KEY (id)
)

-- name: create_bulk_table
CREATE TABLE {table} (
  id INTEGER NOT NULL,
  k INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (id)
)

-- name: create_index
CREATE INDEX {index} ON {table}(k)

-- name: after_load
SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT COALESCE(MAX(id), 1) FROM {table}))

-- name: analyze
ANALYZE {table}

-- name: drop_table
DROP TABLE {table}
