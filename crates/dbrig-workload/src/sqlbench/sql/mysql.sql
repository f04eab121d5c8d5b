-- MariaDB / MySQL. {database} is a name dbrig built (letters, digits, `_`).

-- name: database_exists
SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?

-- name: create_database
CREATE DATABASE `{database}`

-- name: drop_database
DROP DATABASE `{database}`

-- name: list_tables
SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY table_name
