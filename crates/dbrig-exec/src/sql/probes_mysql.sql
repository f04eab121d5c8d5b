-- What dbrig asks a MariaDB/MySQL server about itself around every trial.

-- name: uptime
SHOW GLOBAL STATUS LIKE 'Uptime'

-- name: variables
SHOW GLOBAL VARIABLES

-- name: version
SELECT @@version, @@version_comment

-- name: data_settings
SELECT @@default_storage_engine

-- name: database_exists
SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?

-- name: create_database
CREATE DATABASE {database}

-- name: data_directory
-- Where the server keeps its data (for the free-space check of a large load).
SELECT @@datadir
