-- pgbench's tables (pgbench -i, PostgreSQL 15). Sections start with "-- name: NAME";
-- {fillfactor} and {aid_type} are numbers and type names dbrig fills in.

-- name: create_history
CREATE TABLE pgbench_history (tid int, bid int, aid {aid_type}, delta int, mtime timestamp, filler char(22))

-- name: create_tellers
CREATE TABLE pgbench_tellers (tid int not null, bid int, tbalance int, filler char(84))

-- name: create_accounts
CREATE TABLE pgbench_accounts (aid {aid_type} not null, bid int, abalance int, filler char(84))

-- name: create_branches
CREATE TABLE pgbench_branches (bid int not null, bbalance int, filler char(88))

-- name: primary_keys
ALTER TABLE pgbench_branches ADD PRIMARY KEY (bid);
ALTER TABLE pgbench_tellers ADD PRIMARY KEY (tid);
ALTER TABLE pgbench_accounts ADD PRIMARY KEY (aid)

-- name: foreign_keys
ALTER TABLE pgbench_tellers ADD CONSTRAINT pgbench_tellers_bid_fkey FOREIGN KEY (bid) REFERENCES pgbench_branches;
ALTER TABLE pgbench_accounts ADD CONSTRAINT pgbench_accounts_bid_fkey FOREIGN KEY (bid) REFERENCES pgbench_branches;
ALTER TABLE pgbench_history ADD CONSTRAINT pgbench_history_bid_fkey FOREIGN KEY (bid) REFERENCES pgbench_branches;
ALTER TABLE pgbench_history ADD CONSTRAINT pgbench_history_tid_fkey FOREIGN KEY (tid) REFERENCES pgbench_tellers;
ALTER TABLE pgbench_history ADD CONSTRAINT pgbench_history_aid_fkey FOREIGN KEY (aid) REFERENCES pgbench_accounts

-- name: analyze
ANALYZE pgbench_branches;
ANALYZE pgbench_tellers;
ANALYZE pgbench_accounts;
ANALYZE pgbench_history

-- name: scale
SELECT count(*) FROM pgbench_branches
