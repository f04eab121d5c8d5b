-- perfrun's PostgreSQL statements: pg_stat_statements, where the server preloads it, and the
-- plan with its buffers of each measured query.

-- name: preload_libraries
SELECT current_setting('shared_preload_libraries')

-- name: create_stat_statements
CREATE EXTENSION IF NOT EXISTS pg_stat_statements

-- name: stat_statements_columns
SELECT column_name::text FROM information_schema.columns
WHERE table_name = 'pg_stat_statements'
  AND data_type IN ('bigint', 'integer', 'double precision', 'numeric')
ORDER BY ordinal_position

-- name: query_identifier
-- (the query follows: its plan's "Query Identifier" is the queryid in pg_stat_statements)
EXPLAIN (VERBOSE)

-- name: stat_statements_row
SELECT to_jsonb(s)::text FROM pg_stat_statements s
WHERE s.queryid = ?
  AND s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND s.userid = (SELECT oid FROM pg_roles WHERE rolname = current_user)

-- name: explain_analyze
-- {query} is the measured query's text (put in as it is, not rendered).
EXPLAIN (ANALYZE, BUFFERS) {query}
