//! The server sessions this process has open, by server: what "the benchmark's own sessions"
//! means to the wait sampler, which must not count a foreign session that happens to be busy in
//! the same database. Every [`crate::Connection`] to MariaDB/MySQL (its connection id, the
//! processlist id) or PostgreSQL (its backend's pid) is registered while it is open.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use crate::target::{Endpoint, Target};

/// (server, session id) → how many of this process's connections hold it (a reconnect may
/// briefly hold two registrations of one id after the server reused it).
type Registry = HashMap<(String, i64), usize>;

static OPEN: Mutex<Option<Registry>> = Mutex::new(None);

/// Which server a target's sessions belong to: its engine and endpoint (the database does not
/// matter: session ids are the server's).
fn server_key(target: &Target) -> Option<String> {
    let (engine, endpoint) = match target {
        Target::Mysql { endpoint, .. } => ("mysql", endpoint),
        Target::Postgres { endpoint, .. } => ("postgres", endpoint),
        _ => return None,
    };
    Some(match endpoint {
        Endpoint::Tcp { host, port } => format!("{engine} {host}:{port}"),
        Endpoint::Socket(path) => format!("{engine} {}", path.display()),
    })
}

/// Registered while alive: dropping it forgets the session.
#[derive(Debug)]
pub(crate) struct SessionMark(Option<(String, i64)>);

impl SessionMark {
    pub(crate) fn new(target: &Target, id: Option<i64>) -> SessionMark {
        let key = server_key(target).zip(id);
        if let Some(k) = &key {
            let mut open = OPEN.lock().unwrap_or_else(|p| p.into_inner());
            *open
                .get_or_insert_with(HashMap::new)
                .entry(k.clone())
                .or_insert(0) += 1;
        }
        SessionMark(key)
    }
}

impl Drop for SessionMark {
    fn drop(&mut self) {
        if let Some(k) = self.0.take() {
            let mut open = OPEN.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(map) = open.as_mut()
                && let Some(n) = map.get_mut(&k)
            {
                *n -= 1;
                if *n == 0 {
                    map.remove(&k);
                }
            }
        }
    }
}

/// The session ids this process has open on `target`'s server now.
pub fn own_sessions(target: &Target) -> HashSet<i64> {
    let Some(server) = server_key(target) else {
        return HashSet::new();
    };
    let open = OPEN.lock().unwrap_or_else(|p| p.into_inner());
    open.iter()
        .flatten()
        .filter(|((s, _), _)| *s == server)
        .map(|((_, id), _)| *id)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_are_registered_while_marked() {
        let a = Target::parse("postgres://u@127.0.0.1:65001/db").unwrap();
        let other_db = Target::parse("postgres://u@127.0.0.1:65001/other").unwrap();
        let other_server = Target::parse("postgres://u@127.0.0.1:65002/db").unwrap();
        let m1 = SessionMark::new(&a, Some(7));
        let m2 = SessionMark::new(&other_db, Some(8));
        let _m3 = SessionMark::new(&other_server, Some(9));
        assert_eq!(own_sessions(&a), HashSet::from([7, 8]));
        drop(m1);
        assert_eq!(own_sessions(&a), HashSet::from([8]));
        drop(m2);
        assert!(own_sessions(&a).is_empty());
        assert_eq!(own_sessions(&other_server), HashSet::from([9]));
    }
}
