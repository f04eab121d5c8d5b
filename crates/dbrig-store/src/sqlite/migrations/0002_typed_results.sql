-- dbrig results database, schema version 2: typed trial results.
--
-- A trial's `extra` JSON (whose keys differed by the command that wrote it) becomes two typed
-- JSON columns written and read through the same Rust types (dbrig_core::results):
--   result       what the workload measured, tagged with its kind
--                ({"kind": "oltp" | "micro" | "tpch_power" | "tpch_throughput" | "perfrun", …})
--   environment  what the trial ran in (OS samples, hooks, server settings, placement, …)
-- Run kinds become a closed set. The rows written by schema 1 are converted by dbrig-store's
-- Rust step of this migration (legacy.rs), which then drops `extra`.

ALTER TABLE trial ADD COLUMN result TEXT CHECK (result IS NULL OR json_valid(result));
ALTER TABLE trial ADD COLUMN environment TEXT
    CHECK (environment IS NULL OR json_valid(environment));

-- `dbrig run WORKLOAD` was stored as kind 'workload'.
UPDATE run SET kind = 'oltp' WHERE kind = 'workload';
