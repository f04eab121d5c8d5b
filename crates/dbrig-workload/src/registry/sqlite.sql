-- SQLite: a table's creation marker is a comment holding a random token inside its CREATE TABLE
-- text, which SQLite keeps verbatim in sqlite_master: a table made again by hand lacks it. A
-- copy of the whole file carries it, so the marker also holds the database file's identity
-- (device and inode), which a copy does not share.

-- name: registry_columns
SELECT name FROM pragma_table_info('dbrig_objects')

-- name: table_marker
SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?

-- name: database_file
SELECT file FROM pragma_database_list WHERE name = 'main'
