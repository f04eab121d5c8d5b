-- pgbench's tables on SQLite: primary keys are declared with the tables (SQLite cannot add
-- one later) and foreign keys are not made (SQLite cannot add them later either); DROP takes
-- one table per statement.

-- name: create_tellers
CREATE TABLE pgbench_tellers (tid int not null PRIMARY KEY, bid int, tbalance int, filler char(84))

-- name: create_accounts
CREATE TABLE pgbench_accounts (aid {aid_type} not null PRIMARY KEY, bid int, abalance int, filler char(84))

-- name: create_branches
CREATE TABLE pgbench_branches (bid int not null PRIMARY KEY, bbalance int, filler char(88))

-- name: primary_keys
SELECT 1

-- name: foreign_keys
SELECT 1
