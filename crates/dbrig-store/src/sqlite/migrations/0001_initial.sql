-- dbrig results database, schema version 1.
--
-- Applied by dbrig-store inside one transaction that also sets PRAGMA user_version = 1.
-- Never edit a released migration: add the next numbered file instead.
--
-- Conventions: timestamps are RFC 3339 UTC text ("2024-05-01T12:34:56.789Z"), so they sort
-- as text; JSON columns are checked with json_valid; REAL columns that hold measurements are
-- nullable because SQLite stores a NaN as NULL (the store reads NULL back as NaN).

-- One invocation of dbrig: a single workload run or a whole plan.
CREATE TABLE run (
    id             INTEGER PRIMARY KEY,
    kind           TEXT NOT NULL CHECK (kind <> ''),
    name           TEXT NOT NULL,
    status         TEXT NOT NULL DEFAULT 'running'
                   CHECK (status IN ('running', 'done', 'failed', 'interrupted')),
    error          TEXT,
    started_at     TEXT NOT NULL,
    finished_at    TEXT,
    dbrig_version  TEXT NOT NULL,
    -- argv as a JSON array of strings, already redacted by the caller.
    command_line   TEXT NOT NULL CHECK (json_valid(command_line)),
    -- The fully resolved options, so a result can be explained without the plan file.
    options        TEXT NOT NULL CHECK (json_valid(options)),
    host           TEXT NOT NULL CHECK (json_valid(host)),
    plan_text      TEXT,
    -- Process that wrote the run: lets a later dbrig tell a live run from an abandoned one.
    pid            INTEGER
);
CREATE INDEX run_by_name ON run (name, id);
CREATE INDEX run_by_status ON run (status);

-- One configuration x workload x client count within a run.
CREATE TABLE cell (
    id             INTEGER PRIMARY KEY,
    run_id         INTEGER NOT NULL REFERENCES run (id) ON DELETE CASCADE,
    -- Hash of the cell's full specification, computed by the caller; the resume key.
    cell_key       TEXT NOT NULL CHECK (cell_key <> ''),
    configuration  TEXT NOT NULL,
    workload       TEXT NOT NULL,
    clients        INTEGER NOT NULL CHECK (clients >= 0),
    options        TEXT NOT NULL CHECK (json_valid(options)),
    -- Connection target, redacted (password shown as ***).
    target         TEXT NOT NULL,
    UNIQUE (run_id, cell_key)
);
CREATE INDEX cell_by_key ON cell (cell_key);

-- One measurement of a cell. The measurement columns are NULL when measured = 0 (a trial
-- that failed before it measured anything).
CREATE TABLE trial (
    id               INTEGER PRIMARY KEY,
    cell_id          INTEGER NOT NULL REFERENCES cell (id) ON DELETE CASCADE,
    trial_no         INTEGER NOT NULL CHECK (trial_no >= 0),
    status           TEXT NOT NULL CHECK (status IN ('done', 'failed', 'interrupted', 'invalid')),
    reason           TEXT,
    server_version   TEXT,
    started_at       TEXT NOT NULL,
    finished_at      TEXT NOT NULL,
    measured         INTEGER NOT NULL CHECK (measured IN (0, 1)),
    threads          INTEGER,
    duration_s       REAL,
    transactions     INTEGER,
    reads            INTEGER,
    writes           INTEGER,
    others           INTEGER,
    ignored_errors   INTEGER,
    reconnects       INTEGER,
    fatal_errors     TEXT CHECK (fatal_errors IS NULL OR json_valid(fatal_errors)),
    key_distribution TEXT CHECK (key_distribution IS NULL OR json_valid(key_distribution)),
    percentile       REAL,
    interrupted      INTEGER CHECK (interrupted IS NULL OR interrupted IN (0, 1)),
    -- LatencyHistogram::to_bytes (HDR V2 + exact sum); the summary columns below are derived
    -- from it so reports can filter and sort without decoding.
    latency_hist     BLOB,
    lat_count        INTEGER,
    lat_min_ms       REAL,
    lat_avg_ms       REAL,
    lat_max_ms       REAL,
    lat_p50_ms       REAL,
    lat_p90_ms       REAL,
    lat_p95_ms       REAL,
    lat_p99_ms       REAL,
    lat_p999_ms      REAL,
    lat_sum_ms       REAL,
    tps              REAL,
    qps              REAL,
    -- Open-loop RateReport as JSON, NULL in closed loop.
    rate             TEXT CHECK (rate IS NULL OR json_valid(rate)),
    -- Results of later kinds (TPC-H per-query timings, OS samples, hook outputs) as JSON,
    -- so each addition does not need a migration.
    extra            TEXT CHECK (extra IS NULL OR json_valid(extra)),
    CHECK (measured = 0 OR (latency_hist IS NOT NULL AND transactions IS NOT NULL))
);
CREATE INDEX trial_by_cell ON trial (cell_id, trial_no);
-- A cell never holds two finished results for the same trial number (resume must skip it);
-- failed or interrupted attempts stay as history and may be retried.
CREATE UNIQUE INDEX trial_finished_once ON trial (cell_id, trial_no)
    WHERE status IN ('done', 'invalid');

-- The --report-interval samples of a trial, in order.
CREATE TABLE interval_sample (
    trial_id        INTEGER NOT NULL REFERENCES trial (id) ON DELETE CASCADE,
    seq             INTEGER NOT NULL,
    t_s             REAL,
    threads         INTEGER NOT NULL,
    tps             REAL,
    qps             REAL,
    reads_ps        REAL,
    writes_ps       REAL,
    other_ps        REAL,
    latency_pct_ms  REAL,
    errors_ps       REAL,
    reconnects_ps   REAL,
    backlog         INTEGER,
    PRIMARY KEY (trial_id, seq)
) WITHOUT ROWID;
