-- TPC-H schema pieces for MariaDB / MySQL (sections override common.sql).

-- name: type_decimal
DECIMAL(15,2)

-- name: type_date
DATE

-- name: type_suffix


-- name: analyze
ANALYZE TABLE {table}

-- name: table_size
SELECT COALESCE(SUM(data_length + index_length), 0) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?

-- name: explain
-- The structured plan (one row, one JSON column); {query} is a query statement.
EXPLAIN FORMAT=JSON {query}
