-- TPC-H / DBT-3 schema and housekeeping shared by every dialect. Sections start with
-- "-- name: NAME". {decimal}, {date} and {suffix} come from the dialect file's type_* sections;
-- {table}, {columns} and {index} are identifiers dbrig builds (validated); values are bind
-- parameters written as ?. {key} is empty, or the primary key declared with the table (MariaDB's
-- keys before the load: InnoDB would rebuild the table to add it, giving it a new table id).

-- name: create_region
CREATE TABLE region (
  r_regionkey INTEGER NOT NULL,
  r_name CHAR(25) NOT NULL,
  r_comment VARCHAR(152) NOT NULL{key}
){suffix}

-- name: create_nation
CREATE TABLE nation (
  n_nationkey INTEGER NOT NULL,
  n_name CHAR(25) NOT NULL,
  n_regionkey INTEGER NOT NULL,
  n_comment VARCHAR(152) NOT NULL{key}
){suffix}

-- name: create_part
CREATE TABLE part (
  p_partkey INTEGER NOT NULL,
  p_name VARCHAR(55) NOT NULL,
  p_mfgr CHAR(25) NOT NULL,
  p_brand CHAR(10) NOT NULL,
  p_type VARCHAR(25) NOT NULL,
  p_size INTEGER NOT NULL,
  p_container CHAR(10) NOT NULL,
  p_retailprice {decimal} NOT NULL,
  p_comment VARCHAR(23) NOT NULL{key}
){suffix}

-- name: create_supplier
CREATE TABLE supplier (
  s_suppkey INTEGER NOT NULL,
  s_name CHAR(25) NOT NULL,
  s_address VARCHAR(40) NOT NULL,
  s_nationkey INTEGER NOT NULL,
  s_phone CHAR(15) NOT NULL,
  s_acctbal {decimal} NOT NULL,
  s_comment VARCHAR(101) NOT NULL{key}
){suffix}

-- name: create_partsupp
CREATE TABLE partsupp (
  ps_partkey INTEGER NOT NULL,
  ps_suppkey INTEGER NOT NULL,
  ps_availqty INTEGER NOT NULL,
  ps_supplycost {decimal} NOT NULL,
  ps_comment VARCHAR(199) NOT NULL{key}
){suffix}

-- name: create_customer
CREATE TABLE customer (
  c_custkey INTEGER NOT NULL,
  c_name VARCHAR(25) NOT NULL,
  c_address VARCHAR(40) NOT NULL,
  c_nationkey INTEGER NOT NULL,
  c_phone CHAR(15) NOT NULL,
  c_acctbal {decimal} NOT NULL,
  c_mktsegment CHAR(10) NOT NULL,
  c_comment VARCHAR(117) NOT NULL{key}
){suffix}

-- name: create_orders
CREATE TABLE orders (
  o_orderkey BIGINT NOT NULL,
  o_custkey INTEGER NOT NULL,
  o_orderstatus CHAR(1) NOT NULL,
  o_totalprice {decimal} NOT NULL,
  o_orderdate {date} NOT NULL,
  o_orderpriority CHAR(15) NOT NULL,
  o_clerk CHAR(15) NOT NULL,
  o_shippriority INTEGER NOT NULL,
  o_comment VARCHAR(79) NOT NULL{key}
){suffix}

-- name: create_lineitem
CREATE TABLE lineitem (
  l_orderkey BIGINT NOT NULL,
  l_partkey INTEGER NOT NULL,
  l_suppkey INTEGER NOT NULL,
  l_linenumber INTEGER NOT NULL,
  l_quantity {decimal} NOT NULL,
  l_extendedprice {decimal} NOT NULL,
  l_discount {decimal} NOT NULL,
  l_tax {decimal} NOT NULL,
  l_returnflag CHAR(1) NOT NULL,
  l_linestatus CHAR(1) NOT NULL,
  l_shipdate {date} NOT NULL,
  l_commitdate {date} NOT NULL,
  l_receiptdate {date} NOT NULL,
  l_shipinstruct CHAR(25) NOT NULL,
  l_shipmode CHAR(10) NOT NULL,
  l_comment VARCHAR(44) NOT NULL{key}
){suffix}

-- name: primary_key
ALTER TABLE {table} ADD PRIMARY KEY ({columns})

-- name: indexes
-- The DBT-3 kit's secondary indexes (foreign keys and the date columns the queries filter on),
-- one statement per line.
CREATE INDEX i_n_regionkey ON nation (n_regionkey);
CREATE INDEX i_s_nationkey ON supplier (s_nationkey);
CREATE INDEX i_c_nationkey ON customer (c_nationkey);
CREATE INDEX i_ps_suppkey ON partsupp (ps_suppkey);
CREATE INDEX i_o_custkey ON orders (o_custkey);
CREATE INDEX i_o_orderdate ON orders (o_orderdate);
CREATE INDEX i_l_partkey_suppkey ON lineitem (l_partkey, l_suppkey);
CREATE INDEX i_l_suppkey ON lineitem (l_suppkey);
CREATE INDEX i_l_shipdate ON lineitem (l_shipdate);
CREATE INDEX i_l_commitdate ON lineitem (l_commitdate);
CREATE INDEX i_l_receiptdate ON lineitem (l_receiptdate)

-- name: analyze
ANALYZE {table}

-- name: drop_table
DROP TABLE {table}

-- name: count_rows
SELECT COUNT(*) FROM {table}

-- name: order_exists
SELECT 1 FROM orders WHERE o_orderkey = ?

-- name: rf2_delete_lineitem
DELETE FROM lineitem WHERE l_orderkey IN ({keys})

-- name: rf2_delete_orders
DELETE FROM orders WHERE o_orderkey IN ({keys})

-- name: begin
BEGIN

-- name: commit
COMMIT

-- name: ping
-- Whether the server still answers on a connection (after a failed step of the throughput test).
SELECT 1
