-- OLTP statements for MariaDB / MySQL. Sections start with "-- name: NAME".
-- {table} and {index} are replaced by validated identifiers; values are always bind
-- parameters written as ?.

-- name: create_table
CREATE TABLE {table} (
  id INTEGER NOT NULL AUTO_INCREMENT,
  k INTEGER NOT NULL DEFAULT '0',
  c CHAR(120) NOT NULL DEFAULT '',
  pad CHAR(60) NOT NULL DEFAULT '',
  PRIMARY KEY (id)
) ENGINE = {engine}

-- name: create_bulk_table
CREATE TABLE {table} (
  id INTEGER NOT NULL,
  k INTEGER NOT NULL DEFAULT '0',
  PRIMARY KEY (id)
) ENGINE = {engine}

-- name: create_index
CREATE INDEX {index} ON {table}(k)

-- name: after_load
-- InnoDB samples statistics itself after a bulk load; an explicit ANALYZE only slows prepare
-- (sysbench does none).
SELECT 1

-- name: drop_table
DROP TABLE {table}

-- name: engine_available
SELECT 1 FROM information_schema.engines WHERE UPPER(engine) = UPPER(?) AND support IN ('YES', 'DEFAULT')
-- name: insert_text_auto
-- oltp_insert as sysbench sends it with --auto-inc on MariaDB/MySQL: id 0, which
-- AUTO_INCREMENT replaces with the next id.
INSERT INTO {table} (id, k, c, pad) VALUES (0, ?, ?, ?)
