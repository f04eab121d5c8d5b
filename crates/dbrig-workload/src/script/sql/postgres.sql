-- pgbench's tables on PostgreSQL, exactly as pgbench -i makes them (fillfactor on the three
-- updated tables); the rows go in by COPY.

-- name: create_tellers
CREATE TABLE pgbench_tellers (tid int not null, bid int, tbalance int, filler char(84)) WITH (fillfactor={fillfactor})

-- name: create_accounts
CREATE TABLE pgbench_accounts (aid {aid_type} not null, bid int, abalance int, filler char(84)) WITH (fillfactor={fillfactor})

-- name: create_branches
CREATE TABLE pgbench_branches (bid int not null, bbalance int, filler char(88)) WITH (fillfactor={fillfactor})

-- name: analyze
VACUUM ANALYZE pgbench_branches;
VACUUM ANALYZE pgbench_tellers;
VACUUM ANALYZE pgbench_accounts;
VACUUM ANALYZE pgbench_history

-- name: load_begin
-- pgbench -i's own load: one transaction that empties the tables and copies the rows in
-- WITH (FREEZE), which a table emptied in the same transaction allows; the rows are written
-- frozen and all-visible, so the VACUUM after has no page to rewrite.
BEGIN;
TRUNCATE pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers

-- name: load_commit
COMMIT
