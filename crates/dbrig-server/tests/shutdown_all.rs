//! `shutdown_all` (what the binary's signal handler calls) stops every server the process
//! started, including a PostgreSQL postmaster's whole process group. It acts on the whole
//! process, so it lives in its own test binary, apart from the other managed-server tests.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use dbrig_server::managed::{
    Engine, ManagedServer, Params, ServerDef, processes_mentioning, registered_servers,
    shutdown_all,
};

#[test]
fn shutdown_all_stops_every_started_server() {
    let state = tempfile::Builder::new()
        .prefix("dbrig-shutdown-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(state.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut def = ServerDef::new("pg", Engine::Postgres);
    def.start_timeout = Some(90.0);
    let mut server = ManagedServer::init(def, state.path()).unwrap();
    server.start(&Params::new()).unwrap();
    let pid = server.status().pid.unwrap();
    assert_eq!(registered_servers(), vec![pid]);
    let data_dir = server.data_dir().display().to_string();
    assert_eq!(processes_mentioning(&data_dir), vec![pid]);

    shutdown_all(Duration::from_secs(30));

    assert!(registered_servers().is_empty());
    assert!(processes_mentioning(&data_dir).is_empty());
    let st = server.status();
    assert!(!st.running, "{st:?}");
    // Nothing of its process group (the backends) is left either.
    let group_left = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| {
                let rest = &s[s.rfind(')').unwrap() + 1..];
                let f: Vec<&str> = rest.split_whitespace().collect();
                f[0] != "Z" && f[2] == pid.to_string()
            })
        })
        .count();
    assert_eq!(group_left, 0);
    // It starts again afterwards.
    server.start(&Params::new()).unwrap();
    server.stop().unwrap();
    assert!(processes_mentioning(&data_dir).is_empty());
}
