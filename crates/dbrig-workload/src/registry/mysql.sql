-- MariaDB / MySQL: a table's creation marker is its comment (a random token set at creation)
-- with its information_schema CREATE_TIME: a table dropped and made again by hand, even with
-- the comment copied (CREATE TABLE … LIKE), has another creation time.

-- name: registry_columns
SELECT column_name FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 'dbrig_objects'

-- name: set_marker
ALTER TABLE {table} COMMENT = '{comment}'

-- name: table_marker
SELECT table_comment, COALESCE(CAST(create_time AS CHAR), '') FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?
