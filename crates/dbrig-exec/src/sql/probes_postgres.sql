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

-- name: counters
-- The database's cumulative counters (every numeric column of pg_stat_database, whatever the
-- version has), sampled at the report interval during a trial.
SELECT 'db.' || key, value::text::float8
FROM pg_stat_database d, jsonb_each(to_jsonb(d))
WHERE d.datname = current_database() AND key NOT IN ('datid', 'numbackends')
  AND jsonb_typeof(value) = 'number'

-- name: counters_bgwriter
SELECT 'bgwriter.' || key, value::text::float8
FROM pg_stat_bgwriter b, jsonb_each(to_jsonb(b))
WHERE jsonb_typeof(value) = 'number'

-- name: has_stat_io
SELECT (to_regclass('pg_catalog.pg_stat_io') IS NOT NULL)::int

-- name: counters_io
-- PostgreSQL 16 and later: I/O by backend type, object and context.
SELECT 'io.' || i.backend_type || '.' || i.object || '.' || i.context || '.' || key, value::text::float8
FROM pg_stat_io i, jsonb_each(to_jsonb(i) - 'backend_type' - 'object' - 'context' - 'op_bytes')
WHERE jsonb_typeof(value) = 'number'

-- name: waits
-- The wait each active session in the benchmark's database is in now, by backend pid (the
-- sampler counts only the sessions dbrig opened); an active session in no wait is on CPU.
SELECT pid, COALESCE(wait_event_type || ':' || wait_event, 'CPU')
FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'
  AND backend_type = 'client backend'
