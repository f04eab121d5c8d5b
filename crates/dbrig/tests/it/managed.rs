//! Plans on servers dbrig starts itself: settings per configuration, hooks, OS samples,
//! restart detection (a server killed mid-trial makes that trial invalid; the next one runs
//! on a server brought back up), read-only starts, every server variable recorded, OS charts
//! on the report, Ctrl-C and SIGKILL of dbrig with servers up, a closed stdout pipe, and no
//! server process left behind.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use dbrig_store::{Store, TrialStatus};

use crate::{dbrig, error_line, json, ok, text};

/// Every stored trial of the latest run, in the order they ran:
/// (configuration, workload, status, reason, environment and result as JSON).
type StoredTrial = (
    String,
    String,
    TrialStatus,
    Option<String>,
    serde_json::Value,
);

fn stored_trials(db: &Path) -> Vec<StoredTrial> {
    let store = Store::open(db).unwrap();
    let run_id = store.latest_run_id().unwrap().unwrap();
    let mut trials = Vec::new();
    for c in store.cells(run_id).unwrap() {
        for t in store.trials(c.id).unwrap() {
            trials.push((
                t.started_at.clone(),
                (
                    c.configuration.clone(),
                    c.workload.clone(),
                    t.status,
                    t.reason.clone(),
                    crate::trial_json(&t),
                ),
            ));
        }
    }
    trials.sort_by(|a, b| a.0.cmp(&b.0));
    trials.into_iter().map(|t| t.1).collect()
}

/// Waits up to `secs` for `done`.
fn wait_for(secs: u64, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    done()
}

fn leftover_servers(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(needle) && (cmd.contains("mariadbd") || cmd.contains("postgres")) {
                found.push(cmd);
            }
        }
    }
    found
}

#[test]
fn managed_mariadb_plan_with_settings_hooks_and_a_killed_server() {
    let out = tempfile::tempdir().unwrap();
    let o = out.path().display().to_string();
    let plan = format!(
        r#"
name = "managed"
trials = 2
duration = 3
clients = [2]
baseline = "A"
[[server]]
name = "m1"
engine = "mariadb"
start-timeout = 120
[[configuration]]
name = "A"
server = "m1"
[[configuration]]
name = "B"
server = "m1"
params = ["max_connections=77"]
[[workload]]
name = "oltp_point_select"
[workload.options]
table-size = 500
[environment]
os-stats-interval = 0.5
[environment.hooks]
before-trial-sql = "SELECT @@max_connections"
before-trial = "[ -e {o}/killed ] || (touch {o}/killed; (sleep 1; pkill -9 -f '{o}/servers/m1/data') >/dev/null 2>&1 &)"
"#
    );
    let path = out.path().join("plan.toml");
    std::fs::write(&path, plan).unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_dbrig"))
        .args(["run", path.to_str().unwrap()])
        .arg(format!("--out={o}"))
        .output()
        .unwrap();
    let all = text(&run);
    // A trial short: the run fails, saying so and how to finish it.
    assert_eq!(run.status.code(), Some(1), "{all}");
    assert!(
        all.contains("1 of 4 trial(s) invalid") && all.contains("redo them with --resume"),
        "{all}"
    );

    let store = Store::open(&out.path().join("results.db")).unwrap();
    let run_id = store.latest_run_id().unwrap().unwrap();
    let mut trials = Vec::new();
    for c in store.cells(run_id).unwrap() {
        for t in store.trials(c.id).unwrap() {
            trials.push((
                t.started_at.clone(),
                c.configuration.clone(),
                t.status,
                t.reason.clone(),
                crate::trial_json(&t),
            ));
        }
    }
    trials.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(trials.len(), 4, "{trials:?}");
    // The first trial saw its server killed: invalid, with the reason; the rest ran.
    assert_eq!(trials[0].2, TrialStatus::Invalid, "{all}\n{:?}", trials[0]);
    assert!(
        trials[0]
            .3
            .as_deref()
            .unwrap_or("")
            .contains("restarted or died")
    );
    assert!(
        trials[1..].iter().all(|t| t.2 == TrialStatus::Done),
        "{trials:?}"
    );
    // Each configuration ran with its own setting (read back by the SQL hook).
    for (_, conf, status, _, extra) in &trials {
        if *status != TrialStatus::Done {
            continue;
        }
        let hook = &extra["hooks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["hook"] == "before-trial-sql")
            .unwrap()["output"];
        let expected = if conf == "B" { "77" } else { "151" };
        assert_eq!(hook.as_str().unwrap().trim(), expected, "{conf}: {extra}");
        assert!(
            !extra["os_samples"].as_array().unwrap().is_empty(),
            "{extra}"
        );
        assert!(
            extra["server"]["binary"]
                .as_str()
                .unwrap()
                .contains("mariadbd")
        );
    }
    // --resume redoes the invalid trial (and only it); the run is then done.
    let resumed = Command::new(env!("CARGO_BIN_EXE_dbrig"))
        .args(["run", path.to_str().unwrap(), "--resume"])
        .arg(format!("--out={o}"))
        .output()
        .unwrap();
    assert!(resumed.status.success(), "{}", text(&resumed));
    assert!(
        text(&resumed).contains("3 already done"),
        "{}",
        text(&resumed)
    );
    let store = Store::open(&out.path().join("results.db")).unwrap();
    assert_eq!(store.latest_run_id().unwrap(), Some(run_id));
    assert_eq!(store.run(run_id).unwrap().status.as_str(), "done");
    let mut done = 0;
    for c in store.cells(run_id).unwrap() {
        done += store
            .trials(c.id)
            .unwrap()
            .iter()
            .filter(|t| t.status == TrialStatus::Done)
            .count();
    }
    assert_eq!(done, 4);
    assert!(
        leftover_servers(&o).is_empty(),
        "server processes left: {:?}",
        leftover_servers(&o)
    );
}

#[test]
fn managed_postgres_plan_read_only_start_configuration_hooks_settings_and_os_charts() {
    let out = tempfile::tempdir().unwrap();
    let o = out.path().display().to_string();
    let plan = format!(
        r#"
name = "managed-pg"
trials = 1
duration = 2
clients = [2]
baseline = "A"
[[server]]
name = "pg1"
engine = "postgres"
start-timeout = 120
[[configuration]]
name = "A"
server = "pg1"
[[configuration]]
name = "B"
server = "pg1"
params = ["work_mem=8MB"]
[configuration.hooks]
before-configuration-sql = "SHOW work_mem"
after-configuration = "echo B done > {o}/b-done"
before-trial = "echo B trial"
[[workload]]
name = "oltp_read_only"
[workload.options]
table-size = 500
[[workload]]
name = "oltp_update_index"
[workload.options]
table-size = 500
[environment]
os-stats-interval = 0.5
start-read-only = true
[environment.hooks]
before-trial-sql = "SHOW default_transaction_read_only"
"#
    );
    let path = out.path().join("plan.toml");
    std::fs::write(&path, plan).unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_dbrig"))
        .args(["run", path.to_str().unwrap()])
        .arg(format!("--out={o}"))
        .output()
        .unwrap();
    let all = text(&run);
    assert!(run.status.success(), "{all}");

    let trials = stored_trials(&out.path().join("results.db"));
    assert_eq!(trials.len(), 4, "{trials:?}");
    for (conf, workload, status, reason, extra) in &trials {
        assert_eq!(*status, TrialStatus::Done, "{conf} {workload}: {reason:?}");
        // An OLTP workload on a managed PostgreSQL, read-only where the workload only reads.
        let read_only = workload == "oltp_read_only";
        assert_eq!(extra["server"]["read_only"], read_only, "{extra}");
        let vars = &extra["server_settings"]["variables"];
        assert_eq!(
            vars["default_transaction_read_only"],
            if read_only { "on" } else { "off" },
            "{conf} {workload}"
        );
        // Every setting, not a selection; the configuration's own setting is in force.
        assert!(
            extra["server_settings"]["variable_count"].as_u64().unwrap() > 200,
            "{extra}"
        );
        assert_eq!(vars["work_mem"], if conf == "B" { "8MB" } else { "4MB" });
        assert!(
            extra["server_settings"]["binary"]
                .as_str()
                .unwrap()
                .ends_with("/postgres"),
            "{extra}"
        );
        assert!(
            extra["server_settings"]["version"]
                .as_str()
                .unwrap()
                .starts_with("PostgreSQL"),
        );
        // Placement: the CPUs dbrig and the server were allowed on, and the NUMA choice.
        assert!(
            extra["placement"]["client_cpus_allowed"].is_string(),
            "{extra}"
        );
        assert!(
            extra["placement"]["server_cpus_allowed"].is_string(),
            "{extra}"
        );
        assert_eq!(extra["placement"]["numa"], "not requested");
        assert_eq!(
            extra["server"]["launch"]["dies_with_dbrig"], true,
            "{extra}"
        );
        assert!(!extra["os_samples"].as_array().unwrap().is_empty());
        let hooks = extra["hooks"].as_array().unwrap();
        let hook = |name: &str, scope: &str| {
            hooks
                .iter()
                .find(|h| h["hook"] == name && h["scope"] == scope)
                .cloned()
        };
        // The plan's SQL hook saw the read-only switch of this trial's server.
        assert_eq!(
            hook("before-trial-sql", "plan").unwrap()["output"]
                .as_str()
                .unwrap()
                .trim(),
            if read_only { "on" } else { "off" }
        );
        // B's own hooks ran on B only, after the plan's.
        assert_eq!(hook("before-trial", "configuration").is_some(), conf == "B");
    }
    // B's before-configuration SQL (stored with its first trial) and after-configuration
    // shell hook (stored with its last trial).
    let b: Vec<&StoredTrial> = trials.iter().filter(|t| t.0 == "B").collect();
    let first_hooks = b[0].4["hooks"].as_array().unwrap();
    let before_conf = first_hooks
        .iter()
        .find(|h| h["hook"] == "before-configuration-sql")
        .unwrap();
    assert_eq!(before_conf["output"].as_str().unwrap().trim(), "8MB");
    assert_eq!(before_conf["scope"], "configuration");
    let last_hooks = b[b.len() - 1].4["hooks"].as_array().unwrap();
    assert!(
        last_hooks
            .iter()
            .any(|h| h["hook"] == "after-configuration" && h["exit_code"] == 0),
        "{last_hooks:?}"
    );
    assert_eq!(
        std::fs::read_to_string(out.path().join("b-done")).unwrap(),
        "B done\n"
    );
    // The HTML page draws the OS statistics of the trials.
    let html = std::fs::read_dir(out.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .find(|e| e.file_name().to_string_lossy().ends_with(".html"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .expect("an HTML report");
    for caption in ["CPU iowait", "disk writes", "server CPU", "server RSS"] {
        assert!(
            html.contains(&format!("oltp_update_index: {caption}")),
            "{caption}"
        );
    }
    assert!(
        leftover_servers(&o).is_empty(),
        "server processes left: {:?}",
        leftover_servers(&o)
    );
}

/// The pid of the managed server serving `data_dir`, once it runs.
fn server_pid(data_dir: &str) -> Option<u32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        (cmd.contains("mariadbd") && cmd.contains(data_dir)).then_some(pid)
    })
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !matches!(
            s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .chars()
                .next(),
            Some('Z' | 'X')
        )
    })
}

#[test]
fn ctrl_c_and_sigkill_of_dbrig_leave_no_server_and_a_later_run_recovers() {
    let out = tempfile::tempdir().unwrap();
    let o = out.path().display().to_string();
    let plan = |duration: u32| {
        format!(
            r#"
name = "killed"
trials = 2
duration = {duration}
clients = [1]
[[server]]
name = "m1"
engine = "mariadb"
start-timeout = 120
[[configuration]]
name = "A"
server = "m1"
[[workload]]
name = "oltp_point_select"
[workload.options]
table-size = 200
[environment.hooks]
before-trial = "touch {o}/trial-began"
"#
        )
    };
    let path = out.path().join("plan.toml");
    let data_dir = format!("{o}/servers/m1/data");
    let began = out.path().join("trial-began");
    let spawn = |duration: u32| {
        std::fs::write(&path, plan(duration)).unwrap();
        Command::new(env!("CARGO_BIN_EXE_dbrig"))
            .args(["run", path.to_str().unwrap()])
            .arg(format!("--out={o}"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let results = out.path().join("results.db");
    // A trial has begun: its before-trial hook ran (the server is up, its tables prepared).
    // A signal from then on lands in the trial or its hooks, which store it as interrupted.
    let trial_started = || began.exists();

    // 1. Ctrl-C (SIGINT) while the server is up: the trial is saved as interrupted, the
    //    server is stopped, dbrig exits 130.
    let child = spawn(60);
    assert!(wait_for(180, trial_started), "the server never came up");
    let pid = server_pid(&data_dir).expect("a running server");
    assert!(
        Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
    let o1 = child.wait_with_output().unwrap();
    assert_eq!(o1.status.code(), Some(130), "{}", text(&o1));
    assert!(!alive(pid), "server {pid} still running after Ctrl-C");
    assert!(
        leftover_servers(&o).is_empty(),
        "{:?}",
        leftover_servers(&o)
    );
    // The first trial, begun before the signal, is the one stored: interrupted.
    let trials = stored_trials(&results);
    assert_eq!(
        trials.iter().map(|t| t.2).collect::<Vec<_>>(),
        [TrialStatus::Interrupted],
        "{trials:?}"
    );

    // 2. SIGKILL: no handler runs, yet the server dies with dbrig (parent-death signal).
    std::fs::remove_file(&began).unwrap();
    let child = spawn(60);
    assert!(wait_for(180, || server_pid(&data_dir).is_some() && trial_started()));
    let pid = server_pid(&data_dir).unwrap();
    assert!(
        Command::new("kill")
            .args(["-KILL", &child.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
    let o2 = child.wait_with_output().unwrap();
    assert_eq!(o2.status.code(), None, "killed by a signal");
    assert!(
        wait_for(90, || !alive(pid)),
        "server {pid} outlived a SIGKILLed dbrig"
    );
    assert!(
        wait_for(30, || leftover_servers(&o).is_empty()),
        "{:?}",
        leftover_servers(&o)
    );
    // Its state file is left behind, naming a dead pid.
    assert!(out.path().join("servers/m1/state.json").exists());
    // The run it was writing is still marked running, so `dbrig runs` shows it abandoned.
    let runs = text(&ok(dbrig(out.path(), &["runs"])));
    let killed = runs
        .lines()
        .rfind(|l| l.contains("killed"))
        .unwrap_or_else(|| panic!("{runs}"));
    assert!(killed.contains("abandoned"), "{runs}");

    // 3. The next dbrig finds the stale state and recovers: status says not running (and
    //    cleans up), and a plan runs on the same data directory.
    let st = dbrig(
        out.path(),
        &["server", "status", "m1", "--plan", path.to_str().unwrap()],
    );
    assert_eq!(st.status.code(), Some(3), "{}", text(&st));
    assert!(text(&st).contains("not running"), "{}", text(&st));
    assert!(!out.path().join("servers/m1/state.json").exists());
    let child = spawn(1);
    let o3 = child.wait_with_output().unwrap();
    assert!(o3.status.success(), "{}", text(&o3));
    let trials = stored_trials(&results);
    assert_eq!(trials.len(), 2, "{trials:?}");
    assert!(
        trials.iter().all(|t| t.2 == TrialStatus::Done),
        "{trials:?}"
    );
    assert!(
        leftover_servers(&o).is_empty(),
        "{:?}",
        leftover_servers(&o)
    );
}

#[test]
fn printing_to_a_closed_pipe_exits_quietly() {
    let out = tempfile::tempdir().unwrap();
    // A pipe whose reading end is closed before dbrig writes a byte: `| head -0`, for sure.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let o = Command::new(env!("CARGO_BIN_EXE_dbrig"))
        .args(["server", "status", "nothing", "--engine", "mariadb"])
        .arg(format!("--out={}", out.path().display()))
        .stdout(writer)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(141), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.is_empty(), "{err}");
}

#[test]
fn mysql_engine_without_mysql_binaries_is_a_clear_error() {
    let out = tempfile::tempdir().unwrap();
    let o = dbrig(out.path(), &["server", "start", "my", "--engine", "mysql"]);
    let e = error_line(&o);
    // Debian's mysqld is a link to mariadbd; anything else is simply not found.
    assert!(
        e.contains("not Oracle MySQL") || e.contains("not found"),
        "{e}"
    );
    assert!(
        e.contains("server my") || e.contains("server binary"),
        "{e}"
    );
    assert!(leftover_servers(&out.path().display().to_string()).is_empty());
}

#[test]
fn doctor_shows_a_servers_version_binary_and_settings() {
    // `doctor` has no output folder (the `dbrig` helper adds one).
    let doctor = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_dbrig"))
            .arg("doctor")
            .args(args)
            .output()
            .unwrap()
    };
    for (url, binary, setting) in [
        (
            "mysql://root@127.0.0.1:3306/test",
            "mariadbd",
            "innodb_buffer_pool_size",
        ),
        (
            "postgres://postgres@127.0.0.1:5432/postgres",
            "postgres",
            "shared_buffers",
        ),
    ] {
        let o = ok(doctor(&["--target", url, "--clients", "100000"]));
        let t = text(&o);
        assert!(t.contains(&format!("Server ({url})")), "{t}");
        assert!(t.contains(setting), "{t}");
        assert!(t.contains("max_connections"), "{t}");
        // 100000 clients are more than any default max_connections.
        assert!(t.contains("raise max_connections"), "{t}");
        let o = ok(doctor(&["--target", url, "--format", "json"]));
        let v = json(&o);
        let facts = &v["server"]["facts"];
        assert!(
            facts["binary"].as_str().unwrap().ends_with(binary),
            "{facts}"
        );
        let vars = facts["variables"].as_object().unwrap();
        assert_eq!(vars.len() as u64, facts["variable_count"].as_u64().unwrap());
        assert!(vars.len() > 200, "all of them: {}", vars.len());
        assert!(vars.contains_key(setting));
    }
    // A server that does not answer: one clear line naming it.
    let e = error_line(&doctor(&["--target", "mysql://root@127.0.0.1:1/test"]));
    assert!(e.contains("127.0.0.1:1") && e.contains("doctor"), "{e}");
}

#[test]
fn a_setting_the_server_rejects_fails_that_configuration_with_the_servers_own_line() {
    let out = tempfile::tempdir().unwrap();
    let o = out.path().display().to_string();
    let plan = r#"
name = "rejected"
trials = 1
duration = 1
clients = [1]
[[server]]
name = "pg"
engine = "postgres"
start-timeout = 120
[[configuration]]
name = "bad"
server = "pg"
params = ["no_such_option=1"]
[[configuration]]
name = "good"
server = "pg"
[[workload]]
name = "oltp_point_select"
[workload.options]
table-size = 200
"#;
    let path = out.path().join("plan.toml");
    std::fs::write(&path, plan).unwrap();
    let o_run = dbrig(out.path(), &["run", path.to_str().unwrap()]);
    let e = error_line(&o_run);
    assert!(e.contains("1 of 2 trial(s) failed"), "{e}");
    let trials = stored_trials(&out.path().join("results.db"));
    let bad = trials.iter().find(|t| t.0 == "bad").unwrap();
    assert_eq!(bad.2, TrialStatus::Failed);
    let reason = bad.3.as_deref().unwrap();
    assert!(
        reason.contains("FATAL: unrecognized configuration parameter \"no_such_option\""),
        "{reason}"
    );
    // The plan went on: the other configuration ran on the same server definition.
    let good = trials.iter().find(|t| t.0 == "good").unwrap();
    assert_eq!(good.2, TrialStatus::Done, "{:?}", good.3);
    assert!(
        leftover_servers(&o).is_empty(),
        "{:?}",
        leftover_servers(&o)
    );
}

#[test]
fn fresh_data_restores_the_prepared_data_before_every_write_trial() {
    let out = tempfile::tempdir().unwrap();
    let o = out.path().display().to_string();
    let plan = r#"
name = "fresh"
trials = 3
duration = 1
clients = [1]
[[server]]
name = "pg"
engine = "postgres"
start-timeout = 120
[[configuration]]
name = "A"
server = "pg"
[[workload]]
name = "oltp_insert"
lifecycle = "fresh-data"
[workload.options]
table-size = 300
[environment.hooks]
before-trial-sql = "SELECT count(*) FROM sbtest1"
after-trial-sql = "SELECT count(*) FROM sbtest1"
"#;
    let path = out.path().join("plan.toml");
    std::fs::write(&path, plan).unwrap();
    ok(dbrig(out.path(), &["run", path.to_str().unwrap()]));
    let trials = stored_trials(&out.path().join("results.db"));
    assert_eq!(trials.len(), 3);
    let count = |extra: &serde_json::Value, hook: &str| -> u64 {
        extra["hooks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["hook"] == hook)
            .unwrap()["output"]
            .as_str()
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    for (_, _, status, reason, extra) in &trials {
        assert_eq!(*status, TrialStatus::Done, "{reason:?}");
        // Every trial starts from the prepared 300 rows, though each one inserted more.
        assert_eq!(count(extra, "before-trial-sql"), 300, "{extra}");
        assert!(count(extra, "after-trial-sql") > 300, "{extra}");
    }
    assert!(out.path().join("servers/pg/snapshots/prepared").is_dir());
    assert!(
        leftover_servers(&o).is_empty(),
        "{:?}",
        leftover_servers(&o)
    );
}

/// Prepared data belongs to what it was prepared for: two configurations of one managed
/// MariaDB that differ only in the default storage engine each load and measure TPC-H tables
/// of their own engine (the before-trial SQL hook reads `information_schema` in the database
/// each trial ran on), never the other configuration's tables.
#[test]
fn configurations_differing_in_storage_engine_measure_their_own_tables() {
    let out = tempfile::tempdir().unwrap();
    let plan = r#"
name = "engines"
trials = 2
clients = [1]
baseline = "innodb"
[[server]]
name = "e1"
engine = "mariadb"
start-timeout = 120
[[configuration]]
name = "innodb"
server = "e1"
params = ["default-storage-engine=InnoDB"]
[[configuration]]
name = "myisam"
server = "e1"
params = ["default-storage-engine=MyISAM"]
[[workload]]
name = "tpch-power"
[workload.options]
sf = 0.01
queries = ["1", "6"]
[environment]
os-stats-interval = 0
[environment.hooks]
before-trial-sql = "SELECT DATABASE(), engine FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'lineitem'"
"#;
    let path = out.path().join("plan.toml");
    std::fs::write(&path, plan).unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_dbrig"))
        .args(["run", path.to_str().unwrap()])
        .arg(format!("--out={}", out.path().display()))
        .output()
        .unwrap();
    let all = text(&run);
    assert!(run.status.success(), "{all}");
    let trials = stored_trials(&out.path().join("results.db"));
    assert_eq!(trials.len(), 4, "{trials:?}");
    let mut databases = std::collections::BTreeMap::new();
    for (conf, _, status, reason, v) in &trials {
        assert_eq!(*status, TrialStatus::Done, "{conf}: {reason:?}");
        let hook = v["hooks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["hook"] == "before-trial-sql")
            .unwrap();
        let row = hook["output"].as_str().unwrap().trim().to_owned();
        let (db, engine) = row
            .split_once('\t')
            .unwrap_or_else(|| panic!("{conf}: {row:?}"));
        let expected = if conf == "myisam" { "MyISAM" } else { "InnoDB" };
        assert_eq!(engine, expected, "{conf} measured {engine} tables:\n{all}");
        databases
            .entry(conf.clone())
            .or_insert_with(std::collections::BTreeSet::new)
            .insert(db.to_owned());
        assert_eq!(
            v["tpch_power"]["queries"].as_array().unwrap().len(),
            2,
            "{v}"
        );
    }
    // Each configuration kept its own database over its trials.
    assert!(databases.values().all(|d| d.len() == 1), "{databases:?}");
    assert_ne!(databases["innodb"], databases["myisam"]);
    assert!(
        all.contains("prepared in database"),
        "the second load is said:\n{all}"
    );
}

/// Issue 30, item 26: a `[[server]]` built from source with the built-in cmake recipe and the
/// default (relative) output folder installs into dbrig's build cache, not inside the source
/// tree: the recipe runs in the tree, so every path it is given is absolute. A tiny CMake
/// project stands in for the server's source (its "server" then does not start; the build is
/// what is checked).
#[test]
fn a_cmake_build_with_the_default_output_folder_installs_into_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("CMakeLists.txt"),
        "cmake_minimum_required(VERSION 3.10)\nproject(tiny NONE)\ninstall(FILES hello.txt DESTINATION share)\n",
    )
    .unwrap();
    std::fs::write(src.join("hello.txt"), "hello\n").unwrap();
    std::fs::write(
        dir.path().join("plan.toml"),
        "name = \"b\"\nclients = [1]\ntrials = 1\nduration = 1\n\
         [[server]]\nname = \"tiny\"\nengine = \"mariadb\"\nsource = \"src\"\nbuild = \"cmake\"\n\
         [[configuration]]\nname = \"A\"\nserver = \"tiny\"\n\
         [[workload]]\nname = \"oltp_point_select\"\n",
    )
    .unwrap();
    // From the plan's folder, without --out: the output folder is `dbrig-out`, relative.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_dbrig"))
        .args(["run", "plan.toml"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let t = crate::text(&o);
    assert!(!t.contains("nothing was installed"), "{t}");
    let builds = dir.path().join("dbrig-out/builds");
    let installed: Vec<_> = std::fs::read_dir(&builds)
        .unwrap_or_else(|e| panic!("{}: {e}\n{t}", builds.display()))
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("prefix/share/hello.txt"))
        .filter(|p| p.is_file())
        .collect();
    assert_eq!(installed.len(), 1, "{t}");
    assert!(
        !src.join("dbrig-out").exists(),
        "installed inside the source tree: {t}"
    );
}
