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

-- name: counters
-- The server's cumulative counters, sampled at the report interval during a trial.
SHOW GLOBAL STATUS

-- name: wait_source
-- Whether performance_schema runs, and whether it keeps current waits.
SELECT @@performance_schema, (SELECT COUNT(*) FROM performance_schema.setup_consumers WHERE NAME = 'events_waits_current' AND ENABLED = 'YES')

-- name: waits
-- The wait each busy session in the benchmark's database is in now, by session (the sampler
-- counts only the sessions dbrig opened, by these ids): only events still
-- open (END_EVENT_ID IS NULL), or a completed wait would read as current; a session in no
-- wait is on CPU.
SELECT t.PROCESSLIST_ID, COALESCE(w.EVENT_NAME, 'CPU')
FROM performance_schema.threads t
LEFT JOIN performance_schema.events_waits_current w
  ON w.THREAD_ID = t.THREAD_ID AND w.END_EVENT_ID IS NULL
WHERE t.PROCESSLIST_DB = DATABASE() AND t.PROCESSLIST_ID <> CONNECTION_ID()
  AND t.PROCESSLIST_COMMAND IN ('Query', 'Execute')

-- name: lock_waits
-- Sessions whose transaction waits for a row lock: InnoDB's row lock waits are not
-- instrumented in performance_schema (the waiting thread shows the table I/O around it, or no
-- wait). The server refreshes this table's cache only when it was not read for 100 ms, so it
-- is read less often than the waits.
SELECT trx_mysql_thread_id FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'
