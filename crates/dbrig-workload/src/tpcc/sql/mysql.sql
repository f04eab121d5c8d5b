-- TPC-C schema pieces for MariaDB / MySQL (sections override common.sql). InnoDB; primary
-- keys declared with the tables (common.sql's {key}).

-- name: type_timestamp
DATETIME

-- name: type_suffix
 ENGINE = InnoDB

-- name: indexes
-- common.sql's indexes as ALTER TABLE (InnoDB reads the table once per statement).
ALTER TABLE customer ADD UNIQUE INDEX customer_i2 (c_w_id, c_d_id, c_last, c_first, c_id);
ALTER TABLE orders ADD UNIQUE INDEX orders_i2 (o_w_id, o_d_id, o_c_id, o_id)

-- name: analyze
ANALYZE TABLE {table}

-- name: table_size
SELECT COALESCE(SUM(data_length + index_length), 0) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?

-- name: server_transactions
-- TPM's counters, as HammerDB reads them: the server's commits and rollbacks (every
-- session's), one (name, value) row each.
SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_commit', 'Com_rollback')
