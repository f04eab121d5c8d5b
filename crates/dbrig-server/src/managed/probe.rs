//! Is the server up? A trivial protocol check per engine (no client library), and the server's
//! own error line picked out of its log for messages.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use super::Engine;

/// What one probe found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// The server answered with its protocol: it accepts connections.
    Ready,
    /// Nothing listens yet, or the server says it is still starting.
    NotYet,
}

/// Connects to 127.0.0.1:`port` and checks the engine's greeting.
///
/// - MariaDB/MySQL send a handshake packet (protocol 10) on connect; an error packet (`0xff`,
///   e.g. "too many connections") also proves the server is up.
/// - PostgreSQL: a startup message for user `postgres`, database `postgres`; any
///   authentication request (`R`) or an error other than SQLSTATE 57P03 ("the database system
///   is starting up") means it accepts connections.
pub fn probe(engine: Engine, port: u16) -> Probe {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_millis(500)) else {
        return Probe::NotYet;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let _ = s.set_write_timeout(Some(Duration::from_secs(2)));
    match engine {
        Engine::Mariadb | Engine::Mysql => {
            let mut head = [0u8; 5];
            match s.read_exact(&mut head) {
                Ok(()) if head[4] == 10 || head[4] == 0xff => Probe::Ready,
                _ => Probe::NotYet,
            }
        }
        Engine::Postgres => {
            let mut body = Vec::new();
            body.extend_from_slice(&196608u32.to_be_bytes()); // protocol 3.0
            for kv in ["user", "postgres", "database", "postgres"] {
                body.extend_from_slice(kv.as_bytes());
                body.push(0);
            }
            body.push(0);
            let mut msg = ((body.len() + 4) as u32).to_be_bytes().to_vec();
            msg.extend_from_slice(&body);
            if s.write_all(&msg).is_err() {
                return Probe::NotYet;
            }
            let mut head = [0u8; 5];
            if s.read_exact(&mut head).is_err() {
                return Probe::NotYet;
            }
            let result = match head[0] {
                b'R' => Probe::Ready,
                b'E' => {
                    let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
                    let mut rest = vec![0u8; len.saturating_sub(4).min(8192)];
                    let _ = s.read_exact(&mut rest);
                    if pg_error_code(&rest).as_deref() == Some("57P03") {
                        Probe::NotYet
                    } else {
                        Probe::Ready
                    }
                }
                _ => Probe::NotYet,
            };
            // Terminate politely.
            let _ = s.write_all(&[b'X', 0, 0, 0, 4]);
            result
        }
    }
}

/// The SQLSTATE (`C` field) of a PostgreSQL ErrorResponse body.
fn pg_error_code(body: &[u8]) -> Option<String> {
    body.split(|b| *b == 0)
        .find(|f| f.first() == Some(&b'C'))
        .map(|f| String::from_utf8_lossy(&f[1..]).into_owned())
}

/// The server's most relevant error line in `log` (the text this start wrote): the first
/// `[ERROR]` line of MariaDB/MySQL that is not "Aborting", the first `FATAL`/`PANIC` line of
/// PostgreSQL (else its first `ERROR`), else the last non-empty line.
pub fn error_line(engine: Engine, log: &str) -> Option<String> {
    let lines: Vec<&str> = log
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let found = match engine {
        Engine::Mariadb | Engine::Mysql => lines
            .iter()
            .find(|l| {
                (l.contains("[ERROR]") || l.contains("[Error]") || l.contains("ERROR:"))
                    && !l.ends_with("Aborting")
                    && !l.contains("Aborting.")
            })
            .map(|l| strip_mysql_prefix(l)),
        Engine::Postgres => lines
            .iter()
            .find(|l| l.contains("FATAL:") || l.contains("PANIC:"))
            .or_else(|| lines.iter().find(|l| l.contains("ERROR:")))
            .map(|l| strip_pg_prefix(l)),
    };
    found
        .or_else(|| lines.last().map(|l| (*l).to_owned()))
        .map(|l| truncate(&l, 300))
}

fn strip_mysql_prefix(l: &str) -> String {
    for tag in ["[ERROR] ", "[Error] "] {
        if let Some(i) = l.find(tag) {
            return format!("[ERROR] {}", &l[i + tag.len()..]);
        }
    }
    l.to_owned()
}

fn strip_pg_prefix(l: &str) -> String {
    for tag in ["FATAL:", "PANIC:", "ERROR:"] {
        if let Some(i) = l.find(tag) {
            return format!("{tag} {}", l[i + tag.len()..].trim());
        }
    }
    l.to_owned()
}

fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Whether a failed start's log says the port was taken (worth retrying on another port).
pub fn port_conflict(log: &str) -> bool {
    log.contains("Address already in use") || log.contains("another mysqld server running on port")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mariadb_error_line() {
        let log = "2024-01-01  0:00:00 0 [Note] Starting MariaDB\n\
                   2024-01-01  0:00:00 0 [ERROR] /usr/sbin/mariadbd: unknown variable 'no-such-option=1'\n\
                   2024-01-01  0:00:00 0 [ERROR] Aborting\n";
        assert_eq!(
            error_line(Engine::Mariadb, log).unwrap(),
            "[ERROR] /usr/sbin/mariadbd: unknown variable 'no-such-option=1'"
        );
    }

    #[test]
    fn postgres_error_line() {
        let log = "2024-01-01 00:00:00.000 UTC [12] LOG:  starting PostgreSQL\n\
                   2024-01-01 00:00:00.000 UTC [12] FATAL:  unrecognized configuration parameter \"no_such_option\"\n";
        assert_eq!(
            error_line(Engine::Postgres, log).unwrap(),
            "FATAL: unrecognized configuration parameter \"no_such_option\""
        );
        assert_eq!(
            error_line(Engine::Postgres, "just this\n").unwrap(),
            "just this"
        );
        assert_eq!(error_line(Engine::Postgres, ""), None);
    }

    #[test]
    fn pg_code() {
        assert_eq!(
            pg_error_code(b"SFATAL\0C57P03\0Mstarting\0\0").as_deref(),
            Some("57P03")
        );
    }
}
