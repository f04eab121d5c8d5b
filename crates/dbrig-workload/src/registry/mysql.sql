-- MariaDB / MySQL: a table's creation marker is its comment (a random token set by dbrig) with
-- its information_schema CREATE_TIME and what proves the table itself rather than a copy of it
-- (CREATE TABLE … LIKE copies the comment, and a copy made in the same second has the same
-- CREATE_TIME): an InnoDB table's id in InnoDB's dictionary, which no copy shares; for other
-- engines (no id), a seal: the token is set under LOCK TABLES … WRITE once the table's creation
-- second is over, so no copy can carry the token with that creation time.

-- name: registry_columns
SELECT column_name FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 'dbrig_objects'

-- name: set_marker
ALTER TABLE {table} COMMENT = '{comment}'

-- name: table_marker
SELECT table_comment, COALESCE(CAST(create_time AS CHAR), ''), COALESCE(engine, ''), DATABASE() FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?

-- name: innodb_table_id
-- MariaDB's InnoDB dictionary (readable with the PROCESS privilege); the name is
-- `database/table` in the server's file-name encoding.
SELECT table_id FROM information_schema.innodb_sys_tables WHERE name = ?

-- name: innodb_table_id_mysql
-- MySQL 8's name for the same dictionary view.
SELECT table_id FROM information_schema.innodb_tables WHERE name = ?

-- name: creation_second_over
-- Whether the server's clock has left the second the table was created in (NULL: the engine
-- shows no creation time).
SELECT UNIX_TIMESTAMP() > UNIX_TIMESTAMP(create_time) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?

-- name: lock_tables
LOCK TABLES {tables}

-- name: unlock_tables
UNLOCK TABLES
