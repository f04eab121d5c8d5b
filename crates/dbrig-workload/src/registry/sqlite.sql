-- SQLite: a table's creation marker is a comment holding a random token inside its CREATE TABLE
-- text, which SQLite keeps verbatim in sqlite_master: a table made again by hand lacks it.

-- name: registry_columns
SELECT name FROM pragma_table_info('dbrig_objects')

-- name: table_marker
SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?
