//! Plans on servers dbrig starts itself: settings per configuration, hooks, OS samples,
//! restart detection (a server killed mid-trial makes that trial invalid; the next one runs
//! on a server brought back up), and no server process left behind.

use std::process::Command;

use dbrig_store::{Store, TrialStatus};

use crate::text;

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
    assert!(run.status.success(), "{all}");

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
                t.extra.clone().unwrap(),
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
    assert!(
        leftover_servers(&o).is_empty(),
        "server processes left: {:?}",
        leftover_servers(&o)
    );
}
