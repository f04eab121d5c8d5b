-- dbrig results database on MariaDB/MySQL: schema version 4, the first a server holds.
--
-- The same model as the SQLite file at version 4 (sqlite/migrations/0001..0004). Applied by
-- dbrig-store under GET_LOCK (MariaDB's DDL commits as it goes, so the lock, not a
-- transaction, makes the step once); statements are separated by lines holding only `;`.
-- Never edit a released migration: add the next numbered file instead.
--
-- Conventions: InnoDB, utf8mb4 with binary collation (text compares as SQLite's does);
-- timestamps are RFC 3339 UTC text; JSON columns are LONGTEXT checked by JSON_VALID (what
-- MariaDB's JSON type is); measurements are DOUBLE, NULL for NaN (MariaDB has no NaN), read
-- back as NaN as in SQLite; integers are BIGINT.

CREATE TABLE run (
    id             BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    uid            VARCHAR(64) NOT NULL,
    kind           VARCHAR(64) NOT NULL CHECK (kind <> ''),
    name           VARCHAR(512) NOT NULL,
    status         VARCHAR(16) NOT NULL DEFAULT 'running'
                   CHECK (status IN ('running', 'done', 'failed', 'interrupted')),
    error          LONGTEXT,
    started_at     VARCHAR(40) NOT NULL,
    finished_at    VARCHAR(40),
    dbrig_version  VARCHAR(255) NOT NULL,
    command_line   LONGTEXT NOT NULL CHECK (JSON_VALID(command_line)),
    options        LONGTEXT NOT NULL CHECK (JSON_VALID(options)),
    host           LONGTEXT NOT NULL CHECK (JSON_VALID(host)),
    plan_text      LONGTEXT,
    pid            BIGINT,
    machine        VARCHAR(255),
    UNIQUE KEY run_by_uid (uid),
    KEY run_by_name (name(191), id),
    KEY run_by_status (status)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin
;
CREATE TABLE cell (
    id             BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    run_id         BIGINT NOT NULL,
    cell_key       VARCHAR(255) NOT NULL CHECK (cell_key <> ''),
    configuration  LONGTEXT NOT NULL,
    workload       LONGTEXT NOT NULL,
    clients        BIGINT NOT NULL CHECK (clients >= 0),
    options        LONGTEXT NOT NULL CHECK (JSON_VALID(options)),
    target         LONGTEXT NOT NULL,
    UNIQUE KEY cell_of_run (run_id, cell_key),
    KEY cell_by_key (cell_key),
    FOREIGN KEY (run_id) REFERENCES run (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin
;
CREATE TABLE trial (
    id               BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    cell_id          BIGINT NOT NULL,
    trial_no         BIGINT NOT NULL CHECK (trial_no >= 0),
    status           VARCHAR(16) NOT NULL
                     CHECK (status IN ('done', 'failed', 'interrupted', 'invalid')),
    reason           LONGTEXT,
    server_version   VARCHAR(255),
    started_at       VARCHAR(40) NOT NULL,
    finished_at      VARCHAR(40) NOT NULL,
    result           LONGTEXT CHECK (result IS NULL OR JSON_VALID(result)),
    environment      LONGTEXT CHECK (environment IS NULL OR JSON_VALID(environment)),
    measured         BOOLEAN NOT NULL,
    threads          BIGINT,
    duration_s       DOUBLE,
    transactions     BIGINT,
    `reads`          BIGINT,
    writes           BIGINT,
    others           BIGINT,
    ignored_errors   BIGINT,
    reconnects       BIGINT,
    fatal_errors     LONGTEXT CHECK (fatal_errors IS NULL OR JSON_VALID(fatal_errors)),
    key_distribution LONGTEXT CHECK (key_distribution IS NULL OR JSON_VALID(key_distribution)),
    percentile       DOUBLE,
    interrupted      BOOLEAN,
    latency_hist     LONGBLOB,
    lat_count        BIGINT,
    lat_min_ms       DOUBLE,
    lat_avg_ms       DOUBLE,
    lat_max_ms       DOUBLE,
    lat_p50_ms       DOUBLE,
    lat_p90_ms       DOUBLE,
    lat_p95_ms       DOUBLE,
    lat_p99_ms       DOUBLE,
    lat_p999_ms      DOUBLE,
    lat_sum_ms       DOUBLE,
    tps              DOUBLE,
    qps              DOUBLE,
    rate             LONGTEXT CHECK (rate IS NULL OR JSON_VALID(rate)),
    -- The trial number of a `done` trial, NULL otherwise: MariaDB has no partial index, and
    -- NULLs do not collide, so the unique key below is SQLite's and PostgreSQL's
    -- "finished once".
    done_no          BIGINT AS (IF(status = 'done', trial_no, NULL)) STORED,
    CHECK (NOT measured OR (latency_hist IS NOT NULL AND transactions IS NOT NULL)),
    KEY trial_by_cell (cell_id, trial_no),
    UNIQUE KEY trial_finished_once (cell_id, done_no),
    FOREIGN KEY (cell_id) REFERENCES cell (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin
;
CREATE TABLE interval_sample (
    trial_id        BIGINT NOT NULL,
    seq             BIGINT NOT NULL,
    t_s             DOUBLE,
    threads         BIGINT NOT NULL,
    tps             DOUBLE,
    qps             DOUBLE,
    reads_ps        DOUBLE,
    writes_ps       DOUBLE,
    other_ps        DOUBLE,
    latency_pct_ms  DOUBLE,
    errors_ps       DOUBLE,
    reconnects_ps   DOUBLE,
    backlog         BIGINT,
    PRIMARY KEY (trial_id, seq),
    FOREIGN KEY (trial_id) REFERENCES trial (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin
