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

-- name: begin_write
-- A deferred BEGIN takes SQLite's write lock at the first write; when another connection wrote
-- since this transaction's first read, that upgrade fails at once with SQLITE_BUSY (the busy
-- timeout does not apply) and the event is retried, so concurrent writers mostly measured
-- retries. IMMEDIATE takes the lock at BEGIN, waiting through the busy timeout: writers queue.
BEGIN IMMEDIATE
