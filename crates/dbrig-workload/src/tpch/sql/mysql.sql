-- TPC-H schema pieces for MariaDB / MySQL (sections override common.sql).

-- name: type_decimal
DECIMAL(15,2)

-- name: type_date
DATE

-- name: type_suffix


-- name: analyze
ANALYZE TABLE {table}

-- name: indexes
-- common.sql's indexes, a table's in one ALTER TABLE: InnoDB then reads the table once for all
-- of them. lineitem's five at SF 1 on MariaDB 10.11: 24.2-25.9 s in one statement against
-- 40.1-41.2 s as five CREATE INDEX (two alternated pairs).
ALTER TABLE nation ADD INDEX i_n_regionkey (n_regionkey);
ALTER TABLE supplier ADD INDEX i_s_nationkey (s_nationkey);
ALTER TABLE customer ADD INDEX i_c_nationkey (c_nationkey);
ALTER TABLE partsupp ADD INDEX i_ps_suppkey (ps_suppkey);
ALTER TABLE orders ADD INDEX i_o_custkey (o_custkey), ADD INDEX i_o_orderdate (o_orderdate);
ALTER TABLE lineitem ADD INDEX i_l_partkey_suppkey (l_partkey, l_suppkey),
  ADD INDEX i_l_suppkey (l_suppkey), ADD INDEX i_l_shipdate (l_shipdate),
  ADD INDEX i_l_commitdate (l_commitdate), ADD INDEX i_l_receiptdate (l_receiptdate)

-- name: table_size
SELECT COALESCE(SUM(data_length + index_length), 0) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?

-- name: explain
-- The structured plan (one row, one JSON column); {query} is a query statement.
EXPLAIN FORMAT=JSON {query}
