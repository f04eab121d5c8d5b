-- Micro-benchmarks of the seeds (spec seed-benchmarks.md §1–§3): statements shared by every
-- dialect. {table}, {engine}, {using} are replaced by names dbrig built and validated; values
-- are bind parameters (?).

-- name: drop_table
DROP TABLE {table}

-- name: count_rows
SELECT count(*) FROM {table}

-- ---------------------------------------------------------------- scan_filter (seed 004)

-- name: scan_count
SELECT count(*) FROM m WHERE i>0

-- name: scan_sum
SELECT sum(i) FROM m

-- name: scan_avg
SELECT avg(i) FROM m

-- name: scan_wide
SELECT count(*) FROM m4 WHERE c>'a'

-- name: scan_loop
SELECT count(*) FROM m1 WHERE i>0

-- ---------------------------------------------------------------- tmp_groupby (seed 003)
-- The seed's queries, verbatim (MariaDB syntax): non-grouped columns are returned from any
-- row of the group, ORDER BY null skips the sort.

-- name: q1
SELECT id, tea FROM t1 GROUP BY left(id,1) ORDER BY null

-- name: q2
SELECT id, count(*), tea FROM t1 GROUP BY left(id,1) ORDER BY null

-- name: q3
SELECT id, tea FROM t1 GROUP BY left(id,2) ORDER BY null

-- name: q4
SELECT id, count(*), tea FROM t1 GROUP BY left(id,2) ORDER BY null

-- name: q5
SELECT id, tea FROM t1 GROUP BY id % 100 ORDER BY null

-- name: q6
SELECT id, count(*), tea FROM t1 GROUP BY id % 100 ORDER BY null
