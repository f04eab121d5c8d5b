-- The registry of the tables dbrig created (`dbrig_objects`), shared by every workload family.
-- A row is added when a table is created (state 'loading') and set 'ready' when everything it
-- holds is there; `marker` proves the table is still the one dbrig created.

-- name: registry_add
INSERT INTO dbrig_objects (name, kind, created_at, marker, state, data) VALUES (?, ?, ?, ?, 'loading', ?)

-- name: registry_ready
UPDATE dbrig_objects SET marker = ?, state = 'ready' WHERE name = ?

-- name: registry_marker
UPDATE dbrig_objects SET marker = ? WHERE name = ?

-- name: registry_remove
DELETE FROM dbrig_objects WHERE name = ?

-- name: registry_lookup
SELECT kind, marker, state, data FROM dbrig_objects WHERE name = ?

-- name: registry_lookup_old
SELECT kind, '', '', '' FROM dbrig_objects WHERE name = ?

-- name: drop_table
DROP TABLE {table}

-- name: registry_count
SELECT COUNT(*) FROM dbrig_objects

-- name: drop_registry
DROP TABLE dbrig_objects

-- name: registry_add_column
ALTER TABLE dbrig_objects ADD COLUMN {column} VARCHAR(1000) NOT NULL DEFAULT ''

-- name: create_registry
CREATE TABLE IF NOT EXISTS dbrig_objects (
  name VARCHAR(64) NOT NULL PRIMARY KEY,
  kind VARCHAR(32) NOT NULL,
  created_at VARCHAR(40) NOT NULL,
  marker VARCHAR(1000) NOT NULL DEFAULT '',
  state VARCHAR(1000) NOT NULL DEFAULT '',
  data VARCHAR(1000) NOT NULL DEFAULT ''
)

-- name: begin
BEGIN

-- name: commit
COMMIT

-- name: rollback
ROLLBACK
