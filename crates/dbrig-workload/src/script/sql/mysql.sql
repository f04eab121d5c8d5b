-- pgbench's tables on MariaDB/MySQL: the same columns (no fillfactor; DROP takes the tables
-- in the order foreign keys allow), rows through the bulk path (LOAD DATA).

-- name: foreign_keys
ALTER TABLE pgbench_tellers ADD CONSTRAINT pgbench_tellers_bid_fkey FOREIGN KEY (bid) REFERENCES pgbench_branches (bid);
ALTER TABLE pgbench_accounts ADD CONSTRAINT pgbench_accounts_bid_fkey FOREIGN KEY (bid) REFERENCES pgbench_branches (bid);
ALTER TABLE pgbench_history ADD CONSTRAINT pgbench_history_bid_fkey FOREIGN KEY (bid) REFERENCES pgbench_branches (bid);
ALTER TABLE pgbench_history ADD CONSTRAINT pgbench_history_tid_fkey FOREIGN KEY (tid) REFERENCES pgbench_tellers (tid);
ALTER TABLE pgbench_history ADD CONSTRAINT pgbench_history_aid_fkey FOREIGN KEY (aid) REFERENCES pgbench_accounts (aid)

-- name: analyze
ANALYZE TABLE pgbench_branches;
ANALYZE TABLE pgbench_tellers;
ANALYZE TABLE pgbench_accounts;
ANALYZE TABLE pgbench_history
