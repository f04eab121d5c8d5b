-- perfrun's MariaDB/MySQL statements: the counters read around each measured query.

-- name: session_status
SHOW SESSION STATUS

-- name: innodb_status
-- The global InnoDB counters (the session ones do not count the engine's work).
SHOW GLOBAL STATUS LIKE 'Innodb\_%'
