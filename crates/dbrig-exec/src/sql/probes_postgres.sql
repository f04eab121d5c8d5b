-- What dbrig asks a PostgreSQL server about itself around every trial.

-- name: uptime
SELECT extract(epoch from pg_postmaster_start_time())::float8

-- name: variables
SELECT name, current_setting(name) FROM pg_settings ORDER BY name

-- name: version
SELECT version(), ''

-- name: data_settings
SELECT current_setting('default_table_access_method')

-- name: database_exists
SELECT COUNT(*) FROM pg_database WHERE datname = ?

-- name: create_database
CREATE DATABASE {database}

-- name: data_directory
-- Where the server keeps its data (for the free-space check of a large load).
SELECT current_setting('data_directory')
