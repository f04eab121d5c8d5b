//! The registry of the tables dbrig created (`dbrig_objects`, in the database that holds
//! them), shared by every workload family (OLTP, TPC-H, micro-benchmarks).
//!
//! A name alone proves nothing: a user may drop dbrig's `sbtest1` and make a table of their
//! own under that name. So every entry keeps a **creation marker** read from the catalog when
//! the table was made — MariaDB/MySQL: a random token in the table's comment plus its
//! `CREATE_TIME`; PostgreSQL: the table's OID; SQLite: a random token in a comment inside its
//! `CREATE TABLE` text — and nothing is dropped unless the table's marker is still the recorded
//! one (while dbrig's own DDL runs on a table still loading, MariaDB's is its comment token
//! alone: see [`ddl_begins`]). Each entry also has a state: `loading` from creation, `ready` only once everything
//! the table should hold is there (recorded last), so data an interrupted prepare left behind
//! is never taken for prepared data; and the data options it was prepared with.

use std::time::{SystemTime, UNIX_EPOCH};

use dbrig_core::Value;
use dbrig_driver::{Connection, Dialect, ErrorKind, Target};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::error::WorkloadError;
use crate::sql::{DialectSql, SqlSet};

fn sql_for(dialect: Dialect) -> &'static SqlSet {
    static SQL: DialectSql = DialectSql::new(
        include_str!("registry/common.sql"),
        include_str!("registry/mysql.sql"),
        include_str!("registry/postgres.sql"),
        include_str!("registry/sqlite.sql"),
    );
    SQL.get(dialect)
}

const REGISTRY: &str = "dbrig_objects";
/// Columns later than the first registry (name, kind, created_at); added to an older one.
const NEW_COLUMNS: [&str; 3] = ["marker", "state", "data"];

/// One registered table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub kind: String,
    pub marker: String,
    /// `loading` from creation, `ready` once everything it holds is there; empty for a table
    /// an older dbrig registered (its completeness is unknown).
    pub state: String,
    /// The data options it was prepared with (JSON text; empty when not recorded).
    pub data: String,
}

/// A fresh random token for a table about to be created (from the kernel's random source;
/// the clock and pid seed it where that is missing).
pub fn new_token() -> String {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    let n = match std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes)) {
        Ok(()) => u128::from_le_bytes(bytes),
        Err(_) => {
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0);
            let mut rng = SmallRng::seed_from_u64(nanos as u64 ^ u64::from(std::process::id()));
            rng.random()
        }
    };
    format!("{n:032x}")
}

/// The `CREATE TABLE` statement carrying `token` where the engine keeps it: SQLite keeps the
/// statement's text, so the token goes into a comment after the first parenthesis. The other
/// engines take theirs after creation ([`record`]).
pub fn marked_create(dialect: Dialect, create_sql: &str, token: &str) -> String {
    match (dialect, create_sql.find('(')) {
        (Dialect::Sqlite, Some(i)) => format!(
            "{} /* dbrig:{token} */{}",
            &create_sql[..=i],
            &create_sql[i + 1..]
        ),
        _ => create_sql.to_owned(),
    }
}

/// Make sure the registry exists with every column (an older dbrig's gets the new ones).
pub async fn ensure(conn: &mut Connection) -> Result<(), WorkloadError> {
    let sql = sql_for(conn.dialect());
    conn.execute_text(&sql.render("create_registry", &[]))
        .await?;
    if is_mock(conn) {
        return Ok(());
    }
    let have = registry_columns(conn).await?;
    for c in NEW_COLUMNS {
        if !have.iter().any(|h| h == c) {
            conn.execute_text(&sql.render("registry_add_column", &[("column", c)]))
                .await?;
        }
    }
    Ok(())
}

async fn registry_columns(conn: &mut Connection) -> Result<Vec<String>, WorkloadError> {
    let sql = sql_for(conn.dialect());
    Ok(conn
        .query(&sql.render("registry_columns", &[]), &[])
        .await?
        .into_iter()
        .filter_map(|r| r.first().and_then(Value::to_text))
        .map(|c| c.to_lowercase())
        .collect())
}

/// Create `table` with `create_sql` and record it: [`create_all`] for one table.
pub async fn create(
    conn: &mut Connection,
    table: &str,
    kind: &str,
    create_sql: &str,
    data: &str,
) -> Result<(), WorkloadError> {
    create_all(conn, kind, &[(table, create_sql.to_owned())], data).await
}

/// Create each `(table, create_sql)` (marked with a new token, [`marked_create`]) and record it
/// ([`record`]) as `loading` with `data`. Where DDL is transactional (PostgreSQL, SQLite) a
/// table and its entry are made in one transaction, so a prepare stopped between the two leaves
/// neither — a table without its entry is nobody's to drop. MariaDB commits DDL at once: there
/// the tables come first and are marked together (tables without InnoDB ids are sealed under
/// one lock and one wait for the clock, [`Identity::Sealed`]), their entries a moment after.
pub async fn create_all(
    conn: &mut Connection,
    kind: &str,
    tables: &[(&str, String)],
    data: &str,
) -> Result<(), WorkloadError> {
    let sql = sql_for(conn.dialect());
    if conn.dialect() == Dialect::Mysql && !is_mock(conn) {
        let mut tokens = Vec::new();
        for (table, create_sql) in tables {
            conn.execute_text(create_sql).await?;
            tokens.push((*table, new_token()));
        }
        let markers = stamp_all(conn, &tokens).await?;
        for ((table, _), marker) in tables.iter().zip(markers) {
            add_entry(conn, table, kind, &marker, data).await?;
        }
        return Ok(());
    }
    let transactional = !is_mock(conn);
    for (table, create_sql) in tables {
        let token = new_token();
        if transactional {
            conn.execute_text(&sql.render("begin", &[])).await?;
        }
        let made = async {
            conn.execute_text(&marked_create(conn.dialect(), create_sql, &token))
                .await?;
            record(conn, table, kind, &token, data).await
        }
        .await;
        if transactional {
            let end = if made.is_ok() { "commit" } else { "rollback" };
            let ended = conn.execute_text(&sql.render(end, &[])).await;
            made?;
            ended?;
        } else {
            made?;
        }
    }
    Ok(())
}

/// Record a table just created with `token` (see [`marked_create`]) as `loading`, with the
/// data options it is prepared with. On MariaDB/MySQL the token goes into the table's comment
/// now ([`stamp_all`]).
pub async fn record(
    conn: &mut Connection,
    table: &str,
    kind: &str,
    token: &str,
    data: &str,
) -> Result<(), WorkloadError> {
    let marker = stamp_all(conn, &[(table, token.to_owned())])
        .await?
        .pop()
        .unwrap_or_default();
    add_entry(conn, table, kind, &marker, data).await
}

async fn add_entry(
    conn: &mut Connection,
    table: &str,
    kind: &str,
    marker: &Marker,
    data: &str,
) -> Result<(), WorkloadError> {
    let sql = sql_for(conn.dialect());
    // An entry left by a table of this name dropped by hand is stale: this table replaces it.
    conn.query(
        &sql.render("registry_remove", &[]),
        &[Value::Text(table.into())],
    )
    .await?;
    conn.query(
        &sql.render("registry_add", &[]),
        &[
            Value::Text(table.into()),
            Value::Text(kind.into()),
            Value::Text(unix_time_text()),
            Value::Text(marker.to_text()),
            Value::Text(data.into()),
        ],
    )
    .await?;
    Ok(())
}

/// Record that `table` holds everything it should: [`mark_all_ready`] for one table.
pub async fn mark_ready(conn: &mut Connection, table: &str) -> Result<(), WorkloadError> {
    mark_all_ready(conn, &[table]).await
}

/// Record that each of `tables` holds everything it should: the last step of a preparation.
/// Markers are taken again where dbrig's own work moved them (an InnoDB table's creation time;
/// a table without ids is sealed again, all of them under one lock and one wait); each table
/// must still carry the token dbrig gave it.
pub async fn mark_all_ready(
    conn: &mut Connection,
    tables: &[impl AsRef<str>],
) -> Result<(), WorkloadError> {
    let dialect = conn.dialect();
    let mut markers: Vec<Option<String>> = Vec::new();
    let mut reseal = Vec::new();
    for t in tables {
        let table = t.as_ref();
        let recorded = lookup(conn, table)
            .await?
            .map(|e| Marker::parse(dialect, &e.marker))
            .unwrap_or_default();
        let now = current_marker(conn, table).await?.unwrap_or_default();
        if dialect != Dialect::Mysql || is_mock(conn) {
            markers.push(Some(now.to_text()));
            continue;
        }
        if now.token != recorded.token {
            return Err(WorkloadError::NotTheTableDbrigMade {
                table: table.into(),
                target: conn.target().to_string(),
                why: "it no longer carries the token dbrig gave it while dbrig was preparing it"
                    .into(),
            });
        }
        markers.push(match (&recorded.identity, &now.identity) {
            (Identity::Sealed, _) if now.created == recorded.created => Some(
                Marker {
                    ddl_running: false,
                    ..recorded
                }
                .to_text(),
            ),
            (_, Identity::InnodbId(_)) => Some(now.to_text()),
            _ => {
                reseal.push((table, new_token()));
                None
            }
        });
    }
    let mut sealed = stamp_all(conn, &reseal).await?.into_iter();
    for (t, marker) in tables.iter().zip(markers) {
        let marker = match marker {
            Some(m) => m,
            None => sealed.next().unwrap_or_default().to_text(),
        };
        conn.query(
            &sql_for(dialect).render("registry_ready", &[]),
            &[Value::Text(marker), Value::Text(t.as_ref().into())],
        )
        .await?;
    }
    Ok(())
}

/// Before DDL of dbrig's own on a table still loading: MariaDB's `CREATE_TIME` moves with every
/// `CREATE INDEX` and `ALTER TABLE`, and a DDL statement cut off by Ctrl-C goes on in the server
/// after dbrig has gone. Until [`refresh_marker`], the recorded marker says dbrig's DDL runs:
/// [`verify`] then proves a table still `loading` by its token and InnoDB table id without its
/// creation time (a DDL that rebuilds the table, such as `ADD PRIMARY KEY`, gives it a new id:
/// then, as for engines without ids, nothing proves it and it is refused).
pub async fn ddl_begins(conn: &mut Connection, table: &str) -> Result<(), WorkloadError> {
    if conn.dialect() != Dialect::Mysql || is_mock(conn) {
        // PostgreSQL's OID and SQLite's token stay through an index build.
        return Ok(());
    }
    let Some(entry) = lookup(conn, table).await? else {
        return Ok(());
    };
    let mut marker = Marker::parse(Dialect::Mysql, &entry.marker);
    marker.ddl_running = true;
    set_marker(conn, table, marker.to_text()).await
}

/// After DDL of dbrig's own on a table still loading (see [`ddl_begins`]): record the marker an
/// InnoDB table has now (its token, id and new creation time), its state unchanged. A table
/// without ids keeps saying dbrig's DDL ran until [`mark_all_ready`] seals it again: sealing
/// waits for the clock's next second, which would be timed as part of the load's steps.
pub async fn refresh_marker(conn: &mut Connection, table: &str) -> Result<(), WorkloadError> {
    if conn.dialect() != Dialect::Mysql || is_mock(conn) {
        return Ok(());
    }
    let recorded = lookup(conn, table)
        .await?
        .map(|e| Marker::parse(Dialect::Mysql, &e.marker))
        .unwrap_or_default();
    let now = current_marker(conn, table).await?.unwrap_or_default();
    if now.token != recorded.token || !matches!(now.identity, Identity::InnodbId(_)) {
        return Ok(());
    }
    set_marker(conn, table, now.to_text()).await
}

async fn set_marker(
    conn: &mut Connection,
    table: &str,
    marker: String,
) -> Result<(), WorkloadError> {
    conn.query(
        &sql_for(conn.dialect()).render("registry_marker", &[]),
        &[Value::Text(marker), Value::Text(table.into())],
    )
    .await?;
    Ok(())
}

/// What proves a table is the one dbrig made rather than a copy of it (a copy takes its
/// definition, comment and rows; never these).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
enum Identity {
    /// MariaDB/MySQL: the table's id in InnoDB's dictionary. Kept through `RENAME TABLE`,
    /// `CREATE INDEX`, `ANALYZE TABLE`; new for a copy, a table made again, and a rebuild
    /// (`ADD PRIMARY KEY`, `TRUNCATE`, `OPTIMIZE`).
    InnodbId(u64),
    /// MariaDB/MySQL, an engine without ids (MyISAM, Aria, MEMORY …, or InnoDB where its ids
    /// cannot be read): the token was set under `LOCK TABLES … WRITE` once the table's creation
    /// second was over and the lock held until its marker's second was over, so no copy
    /// (blocked by the lock) and no table made by hand (the token was unknown before) can have
    /// both the token and the creation time.
    Sealed,
    /// PostgreSQL: the database's OID and the cluster's system identifier beside the table's
    /// OID (a database made from another as its TEMPLATE copies the tables' OIDs; a fresh
    /// cluster may give a restored table the same ones).
    Postgres { database: String, cluster: String },
    /// SQLite: the database file's `device:inode` (empty for an in-memory database), which a
    /// copy of the file does not share.
    File(String),
    /// MariaDB/MySQL, only as the catalog shows a table now: an InnoDB table whose id cannot
    /// be read, and why.
    Unreadable(String),
    /// Nothing beside the token (and time): an older dbrig's marker, or an engine table
    /// dbrig could not seal (no creation time, no `LOCK TABLES` privilege). Never a proof.
    #[default]
    None,
}

/// A creation marker: what [`record`] stores and what the catalog shows now. Its text form is
/// the registry's `marker` column: MariaDB `dbrig:TOKEN@CREATE_TIME#innodb:ID` or
/// `…#sealed` (`!ddl` appended while dbrig's own DDL runs); PostgreSQL
/// `oid:OID#db:OID#cluster:ID`; SQLite `dbrig:TOKEN#file:DEV:INO`. Older dbrigs stored the
/// part before `#`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Marker {
    /// MariaDB: the table comment `dbrig:TOKEN`; SQLite: `dbrig:TOKEN`; PostgreSQL: `oid:OID`.
    token: String,
    /// MariaDB's `CREATE_TIME` (empty elsewhere).
    created: String,
    identity: Identity,
    /// MariaDB: dbrig's own DDL on the table began and its outcome was not recorded.
    ddl_running: bool,
}

/// How an older dbrig recorded a MariaDB marker while its DDL ran (`TOKEN@DDL_RUNNING`).
const OLD_DDL_RUNNING: &str = "dbrig DDL running";

impl Marker {
    fn parse(dialect: Dialect, text: &str) -> Marker {
        let (text, ddl_running) = match text.strip_suffix("!ddl") {
            Some(t) => (t, true),
            None => (text, false),
        };
        let mut parts = text.split('#');
        let head = parts.next().unwrap_or_default();
        let fields: Vec<(&str, &str)> = parts
            .filter_map(|p| p.split_once(':').or(Some((p, ""))))
            .collect();
        let field = |name: &str| {
            fields
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        };
        let identity = match dialect {
            Dialect::Mysql => match (field("innodb"), field("sealed")) {
                (Some(id), _) => id.parse().map_or(Identity::None, Identity::InnodbId),
                (None, Some(_)) => Identity::Sealed,
                _ => Identity::None,
            },
            Dialect::Postgres => match (field("db"), field("cluster")) {
                (Some(database), Some(cluster)) => Identity::Postgres { database, cluster },
                _ => Identity::None,
            },
            Dialect::Sqlite => field("file").map_or(Identity::None, Identity::File),
        };
        let (token, created) = match dialect {
            Dialect::Mysql => head.split_once('@').unwrap_or((head, "")),
            _ => (head, ""),
        };
        let old_ddl = created == OLD_DDL_RUNNING;
        Marker {
            token: token.to_owned(),
            created: if old_ddl {
                String::new()
            } else {
                created.to_owned()
            },
            identity,
            ddl_running: ddl_running || old_ddl,
        }
    }

    fn to_text(&self) -> String {
        let mut s = self.token.clone();
        if !self.created.is_empty() {
            s.push('@');
            s.push_str(&self.created);
        }
        match &self.identity {
            Identity::InnodbId(id) => s.push_str(&format!("#innodb:{id}")),
            Identity::Sealed => s.push_str("#sealed"),
            Identity::Postgres { database, cluster } => {
                s.push_str(&format!("#db:{database}#cluster:{cluster}"))
            }
            Identity::File(f) => s.push_str(&format!("#file:{f}")),
            Identity::Unreadable(_) | Identity::None => {}
        }
        if self.ddl_running {
            s.push_str("!ddl");
        }
        s
    }
}

/// Why the table `now` shows is not proven the one recorded (`None`: proven). A table still
/// `loading` under dbrig's own DDL ([`ddl_begins`]) may have another creation time.
fn disproof(recorded: &Marker, state: &str, now: &Marker) -> Option<Disproof> {
    use Disproof::{Ambiguous, Other};
    if now.token.is_empty() {
        return Some(Other("it has no creation marker".into()));
    }
    if now.token != recorded.token {
        return Some(Other(match recorded.token.starts_with("oid:") {
            true => format!(
                "it is {} where dbrig made {}: it was dropped and made again since",
                now.token.replace("oid:", "OID "),
                recorded.token.replace("oid:", "OID ")
            ),
            false => "it carries another token than the one dbrig gave it".into(),
        }));
    }
    let ddl_cut = recorded.ddl_running && state == "loading";
    let created = || {
        (now.created != recorded.created).then(|| {
            Other(format!(
                "it was created {} where dbrig recorded {}: it is a copy, or was made again since",
                now.created, recorded.created
            ))
        })
    };
    match (&recorded.identity, &now.identity) {
        (Identity::None, _) => Some(Ambiguous(
            "its marker was recorded by an older dbrig (or without the privilege to seal it), and a copy made in the same second (CREATE TABLE … LIKE) carries the same marker"
                .into(),
        )),
        (Identity::InnodbId(id), Identity::InnodbId(n)) if id == n => {
            if ddl_cut { None } else { created() }
        }
        (Identity::InnodbId(id), Identity::InnodbId(n)) => Some(match ddl_cut {
            true => Ambiguous(format!(
                "its InnoDB table id is {n} where dbrig recorded {id}, and dbrig's own DDL on it was cut off: a rebuild by that DDL and a copy (CREATE TABLE … LIKE) both get a new id"
            )),
            false => Other(format!(
                "its InnoDB table id is {n} where dbrig recorded {id}: it is a copy (CREATE TABLE … LIKE or … AS SELECT), or was made again since"
            )),
        }),
        (Identity::InnodbId(_), Identity::Unreadable(why)) => Some(Ambiguous(why.clone())),
        (Identity::InnodbId(_), _) => Some(Other("it is no longer an InnoDB table".into())),
        (Identity::Sealed, _) => match created() {
            None => None,
            Some(_) if ddl_cut => Some(Ambiguous(
                "dbrig's own DDL on it was cut off and moved its creation time, and its engine keeps no table id: a copy made meanwhile would look the same"
                    .into(),
            )),
            other => other,
        },
        (Identity::Postgres { database, cluster }, Identity::Postgres { database: d, cluster: c }) => {
            if d != database {
                Some(Other(format!(
                    "its database's OID is {d} where dbrig made it in {database}: it is a copy of dbrig's database (CREATE DATABASE … TEMPLATE)"
                )))
            } else if c != cluster {
                Some(Other(format!(
                    "it is in the cluster {c} where dbrig made it in {cluster}: it was restored from a copy"
                )))
            } else {
                None
            }
        }
        (Identity::File(f), Identity::File(g)) if f == g => None,
        (Identity::File(f), Identity::File(g)) => Some(Other(format!(
            "its database file is device:inode {g} where dbrig made it in {f}: the file is a copy"
        ))),
        (_, _) => Some(Other("its marker is of another kind than dbrig recorded".into())),
    }
}

/// Why a table is not proven dbrig's.
enum Disproof {
    /// It is not the table dbrig made.
    Other(String),
    /// It may be; nothing proves it.
    Ambiguous(String),
}

/// The registry's entry for `table`, if it has one.
pub async fn lookup(conn: &mut Connection, table: &str) -> Result<Option<Entry>, WorkloadError> {
    if is_mock(conn) {
        // The mock engine answers every query with one row: everything is dbrig's, ready.
        return Ok(Some(Entry {
            kind: String::new(),
            marker: "mock".into(),
            state: "ready".into(),
            data: String::new(),
        }));
    }
    if !conn.table_exists(REGISTRY).await? {
        return Ok(None);
    }
    let sql = sql_for(conn.dialect());
    // Read only: a run may look on a server started read-only. An older dbrig's registry
    // lacks the marker, state and data columns.
    let columns = registry_columns(conn).await?;
    let current = NEW_COLUMNS.iter().all(|c| columns.iter().any(|h| h == c));
    let lookup = if current {
        "registry_lookup"
    } else {
        "registry_lookup_old"
    };
    let rows = conn
        .query(&sql.render(lookup, &[]), &[Value::Text(table.into())])
        .await?;
    let text = |r: &[Value], i: usize| r.get(i).and_then(Value::to_text).unwrap_or_default();
    Ok(rows.first().map(|r| Entry {
        kind: text(r, 0),
        marker: text(r, 1),
        state: text(r, 2),
        data: text(r, 3),
    }))
}

/// Prove that `table` is the one dbrig created for `kind`: registered, and its creation
/// marker the recorded one — token, creation time and what proves the table itself rather
/// than a copy ([`Identity`]). Returns its entry; otherwise the error names the table and why
/// (`NotTheTableDbrigMade`: it is not; `Unproven`: nothing proves it is).
pub async fn verify(
    conn: &mut Connection,
    table: &str,
    kind: &str,
    target: &(dyn std::fmt::Display + Sync),
) -> Result<Entry, WorkloadError> {
    let not_ours = || WorkloadError::NotCreatedByDbrig {
        table: table.into(),
        target: target.to_string(),
    };
    let entry = lookup(conn, table).await?.ok_or_else(not_ours)?;
    if is_mock(conn) {
        return Ok(entry);
    }
    if entry.kind != kind {
        return Err(not_ours());
    }
    if entry.marker.is_empty() {
        return Err(WorkloadError::Unproven {
            table: table.into(),
            target: target.to_string(),
            why: "it was registered by an older dbrig without a creation marker".into(),
        });
    }
    let recorded = Marker::parse(conn.dialect(), &entry.marker);
    let now = current_marker(conn, table).await?.unwrap_or_default();
    match disproof(&recorded, &entry.state, &now) {
        None => Ok(entry),
        Some(Disproof::Other(why)) => Err(WorkloadError::NotTheTableDbrigMade {
            table: table.into(),
            target: target.to_string(),
            why,
        }),
        Some(Disproof::Ambiguous(why)) => Err(WorkloadError::Unproven {
            table: table.into(),
            target: target.to_string(),
            why,
        }),
    }
}

/// Drop a table verified with [`verify`] and forget it.
pub async fn drop_table(conn: &mut Connection, table: &str) -> Result<(), WorkloadError> {
    let sql = sql_for(conn.dialect());
    conn.execute_text(&sql.render("drop_table", &[("table", table)]))
        .await?;
    conn.query(
        &sql.render("registry_remove", &[]),
        &[Value::Text(table.into())],
    )
    .await?;
    Ok(())
}

/// A sysbench Lua script's prepare, registered under `name` (not a table: a script's tables
/// are its own, unknown to dbrig) as `loading` with `data` (its options' digest) before the
/// script's prepare runs; [`script_prepared`] marks it ready after. A plan prepares a script
/// only where no ready entry with the same data is found.
pub async fn record_script(
    conn: &mut Connection,
    name: &str,
    data: &str,
) -> Result<(), WorkloadError> {
    ensure(conn).await?;
    forget(conn, name).await?;
    let sql = sql_for(conn.dialect());
    conn.query(
        &sql.render("registry_add", &[]),
        &[
            Value::Text(name.into()),
            Value::Text("lua-script".into()),
            Value::Text(unix_time_text()),
            Value::Text(String::new()),
            Value::Text(data.into()),
        ],
    )
    .await?;
    Ok(())
}

/// The script registered by [`record_script`] finished its prepare.
pub async fn script_prepared(conn: &mut Connection, name: &str) -> Result<(), WorkloadError> {
    let sql = sql_for(conn.dialect());
    conn.query(
        &sql.render("registry_ready", &[]),
        &[Value::Text(String::new()), Value::Text(name.into())],
    )
    .await?;
    Ok(())
}

/// Remove an entry that names no table (a script's, after its cleanup).
pub async fn forget(conn: &mut Connection, name: &str) -> Result<(), WorkloadError> {
    if !conn.table_exists(REGISTRY).await? {
        return Ok(());
    }
    let sql = sql_for(conn.dialect());
    conn.query(
        &sql.render("registry_remove", &[]),
        &[Value::Text(name.into())],
    )
    .await?;
    Ok(())
}

/// Drop the registry once no table is left in it.
pub async fn drop_if_empty(conn: &mut Connection) -> Result<(), WorkloadError> {
    if !conn.table_exists(REGISTRY).await? {
        return Ok(());
    }
    let sql = sql_for(conn.dialect());
    let left = conn.query(&sql.render("registry_count", &[]), &[]).await?;
    if left.first().and_then(|r| r.first()).and_then(Value::as_i64) == Some(0) {
        conn.execute_text(&sql.render("drop_registry", &[])).await?;
    }
    Ok(())
}

/// The table's creation marker as the catalog shows it now (`None`: no such table). Its
/// token is empty where the table carries none.
async fn current_marker(
    conn: &mut Connection,
    table: &str,
) -> Result<Option<Marker>, WorkloadError> {
    if is_mock(conn) {
        return Ok(Some(Marker {
            token: "mock".into(),
            ..Marker::default()
        }));
    }
    let dialect = conn.dialect();
    let sql = sql_for(dialect);
    let rows = conn
        .query(
            &sql.render("table_marker", &[]),
            &[Value::Text(table.into())],
        )
        .await?;
    let Some(row) = rows.first() else {
        return Ok(None);
    };
    let text = |i: usize| row.get(i).and_then(Value::to_text).unwrap_or_default();
    let (first, created, engine, database) = (text(0), text(1), text(2), text(3));
    Ok(Some(match dialect {
        Dialect::Mysql => {
            let identity = match engine.eq_ignore_ascii_case("InnoDB") {
                true => innodb_id(conn, &database, table).await?,
                false => Identity::None,
            };
            Marker {
                token: if first.starts_with("dbrig:") {
                    first
                } else {
                    String::new()
                },
                created,
                identity,
                ddl_running: false,
            }
        }
        Dialect::Postgres => {
            let cluster = match conn.query(&sql.render("cluster_identity", &[]), &[]).await {
                Ok(rows) => rows
                    .first()
                    .and_then(|r| r.first())
                    .and_then(Value::to_text)
                    .unwrap_or_default(),
                // Where the function is withheld (a managed service), the OIDs stand alone.
                Err(e) if e.kind == ErrorKind::Statement => String::new(),
                Err(e) => return Err(e.into()),
            };
            Marker {
                token: format!("oid:{first}"),
                identity: Identity::Postgres {
                    database: created,
                    cluster,
                },
                ..Marker::default()
            }
        }
        Dialect::Sqlite => {
            let token = first
                .find("/* dbrig:")
                .and_then(|i| {
                    let rest = &first[i + 3..];
                    rest.find(" */").map(|end| rest[..end].to_owned())
                })
                .unwrap_or_default();
            Marker {
                token,
                identity: Identity::File(sqlite_file_identity(conn).await?),
                ..Marker::default()
            }
        }
    }))
}

/// The `device:inode` of the SQLite database file `conn` has open (empty: in memory).
async fn sqlite_file_identity(conn: &mut Connection) -> Result<String, WorkloadError> {
    use std::os::unix::fs::MetadataExt;
    let rows = conn
        .query(&sql_for(Dialect::Sqlite).render("database_file", &[]), &[])
        .await?;
    let file = rows
        .first()
        .and_then(|r| r.first())
        .and_then(Value::to_text)
        .unwrap_or_default();
    if file.is_empty() {
        return Ok(String::new());
    }
    let meta = std::fs::metadata(&file).map_err(|e| {
        WorkloadError::InvalidOptions(format!("cannot read the SQLite file {file}: {e}"))
    })?;
    Ok(format!("{}:{}", meta.dev(), meta.ino()))
}

/// An InnoDB table's id in InnoDB's dictionary, or why it cannot be read: MariaDB shows the
/// dictionary as `INNODB_SYS_TABLES`, MySQL 8 as `INNODB_TABLES`, both only to accounts with
/// the PROCESS privilege; decided by error number.
async fn innodb_id(
    conn: &mut Connection,
    database: &str,
    table: &str,
) -> Result<Identity, WorkloadError> {
    let (Some(db), Some(t)) = (innodb_file_name(database), innodb_file_name(table)) else {
        return Ok(Identity::Unreadable(format!(
            "dbrig cannot look up InnoDB's table id, which tells dbrig's table from a copy, in the database `{database}` (its name holds characters beyond ASCII)"
        )));
    };
    let name = Value::Text(format!("{db}/{t}"));
    let sql = sql_for(Dialect::Mysql);
    let mut rows = conn
        .query(
            &sql.render("innodb_table_id", &[]),
            std::slice::from_ref(&name),
        )
        .await;
    if matches!(&rows, Err(e) if e.code.as_deref() == Some("1109")) {
        // ER_UNKNOWN_TABLE: MySQL 8 names the view otherwise.
        rows = conn
            .query(&sql.render("innodb_table_id_mysql", &[]), &[name])
            .await;
    }
    match rows {
        Ok(rows) => Ok(
            match rows.first().and_then(|r| r.first()).and_then(Value::as_i64) {
                Some(id) => Identity::InnodbId(id as u64),
                None => Identity::Unreadable(
                    "InnoDB's dictionary does not list it, and its table id is what tells dbrig's table from a copy".into(),
                ),
            },
        ),
        // ER_SPECIFIC_ACCESS_DENIED_ERROR: the account lacks PROCESS.
        Err(e) if e.code.as_deref() == Some("1227") => Ok(Identity::Unreadable(
            "dbrig's account cannot read InnoDB's table ids (information_schema.INNODB_SYS_TABLES needs the PROCESS privilege), which tell dbrig's table from a copy: grant it PROCESS".into(),
        )),
        Err(e) => Err(e.into()),
    }
}

/// A database or table name as InnoDB's dictionary spells it (the server's file-name encoding:
/// ASCII letters, digits and `_` as they are, other ASCII as `@` and four hex digits); `None`
/// for names beyond ASCII, whose encoding follows the server's own tables.
fn innodb_file_name(name: &str) -> Option<String> {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '_' => out.push(c),
            c if c.is_ascii() => out.push_str(&format!("@{:04x}", c as u32)),
            _ => return None,
        }
    }
    Some(out)
}

/// Give each MariaDB/MySQL table its token (`dbrig:TOKEN` in its comment) and return their
/// markers, in order: with the InnoDB table id where one can be read, else sealed
/// ([`Identity::Sealed`]) — all such tables under one `LOCK TABLES … WRITE` and one wait for
/// the clock. Elsewhere the token is already in place ([`marked_create`]) or not needed: the
/// markers as they are now.
async fn stamp_all(
    conn: &mut Connection,
    tables: &[(&str, String)],
) -> Result<Vec<Marker>, WorkloadError> {
    let mut markers = Vec::new();
    if conn.dialect() != Dialect::Mysql || is_mock(conn) {
        for (table, _) in tables {
            markers.push(current_marker(conn, table).await?.unwrap_or_default());
        }
        return Ok(markers);
    }
    let sql = sql_for(Dialect::Mysql);
    let comment = |table: &str, token: &str| {
        sql.render(
            "set_marker",
            &[("table", table), ("comment", &format!("dbrig:{token}"))],
        )
    };
    let mut unsealed = Vec::new();
    for (i, (table, token)) in tables.iter().enumerate() {
        let before = current_marker(conn, table).await?.unwrap_or_default();
        if matches!(before.identity, Identity::InnodbId(_)) {
            conn.execute_text(&comment(table, token)).await?;
            markers.push(current_marker(conn, table).await?.unwrap_or_default());
        } else {
            unsealed.push(i);
            markers.push(Marker::default());
        }
    }
    if unsealed.is_empty() {
        return Ok(markers);
    }
    // No id: seal. A copy reads the table, which the write lock blocks.
    let locks = unsealed
        .iter()
        .map(|&i| format!("{} WRITE", tables[i].0))
        .collect::<Vec<_>>()
        .join(", ");
    match conn
        .execute_text(&sql.render("lock_tables", &[("tables", &locks)]))
        .await
    {
        Ok(_) => {}
        // ER_DBACCESS_DENIED_ERROR / ER_TABLEACCESS_DENIED_ERROR: no LOCK TABLES privilege;
        // the markers then prove nothing, and cleanup will say so.
        Err(e) if matches!(e.code.as_deref(), Some("1044" | "1142")) => {
            for &i in &unsealed {
                let (table, token) = &tables[i];
                conn.execute_text(&comment(table, token)).await?;
                let mut m = current_marker(conn, table).await?.unwrap_or_default();
                m.identity = Identity::None;
                markers[i] = m;
            }
            return Ok(markers);
        }
        Err(e) => return Err(e.into()),
    }
    let sealed = async {
        // Nobody knows a new token before its table's creation second is over; once it is, a
        // table made later has a later creation time.
        let mut sealed = vec![true; tables.len()];
        for &i in &unsealed {
            sealed[i] = creation_second_over(conn, tables[i].0).await?;
        }
        for &i in &unsealed {
            let (table, token) = &tables[i];
            conn.execute_text(&comment(table, token)).await?;
        }
        // The comment may have moved a creation time (InnoDB rewrites its definition): a copy
        // waits for the lock until that second is over too.
        for &i in &unsealed {
            let (table, _) = &tables[i];
            sealed[i] &= creation_second_over(conn, table).await?;
            let mut m = current_marker(conn, table).await?.unwrap_or_default();
            m.identity = match sealed[i] {
                true => Identity::Sealed,
                false => Identity::None,
            };
            markers[i] = m;
        }
        Ok::<_, WorkloadError>(())
    }
    .await;
    let unlocked = conn.execute_text(&sql.render("unlock_tables", &[])).await;
    sealed?;
    unlocked?;
    Ok(markers)
}

/// Wait (under the table's write lock) until the server's clock has left the second the table
/// was created in; `false` where the engine shows no creation time (nothing to seal with).
async fn creation_second_over(conn: &mut Connection, table: &str) -> Result<bool, WorkloadError> {
    let sql = sql_for(Dialect::Mysql).render("creation_second_over", &[]);
    // A second and a little; a clock that jumps back ends at the bound, unsealed.
    for _ in 0..60 {
        let rows = conn.query(&sql, &[Value::Text(table.into())]).await?;
        match rows.first().and_then(|r| r.first()).and_then(Value::as_i64) {
            None => return Ok(false),
            Some(1) => return Ok(true),
            Some(_) => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
        }
    }
    Ok(false)
}

fn is_mock(conn: &Connection) -> bool {
    matches!(conn.target(), Target::Mock { .. })
}

fn unix_time_text() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format!("unix:{secs}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_keeps_the_token_inside_the_statement() {
        assert_eq!(
            marked_create(Dialect::Sqlite, "CREATE TABLE t (\n  id INTEGER\n)", "ab12"),
            "CREATE TABLE t ( /* dbrig:ab12 */\n  id INTEGER\n)"
        );
        assert_eq!(
            marked_create(Dialect::Mysql, "CREATE TABLE t (id INT)", "ab12"),
            "CREATE TABLE t (id INT)"
        );
        let a = new_token();
        assert_eq!(a.len(), 32);
        assert_ne!(a, new_token());
    }

    #[test]
    fn markers_read_back_as_written() {
        for (dialect, text) in [
            (Dialect::Mysql, "dbrig:ab12@2026-01-02 03:04:05#innodb:42"),
            (
                Dialect::Mysql,
                "dbrig:ab12@2026-01-02 03:04:05#innodb:42!ddl",
            ),
            (Dialect::Mysql, "dbrig:ab12@2026-01-02 03:04:05#sealed"),
            (Dialect::Mysql, "dbrig:ab12@2026-01-02 03:04:05"),
            (Dialect::Postgres, "oid:16385#db:5#cluster:771338197782989"),
            (Dialect::Sqlite, "dbrig:ab12#file:2049:1234"),
            (Dialect::Sqlite, "dbrig:ab12#file:"),
        ] {
            assert_eq!(Marker::parse(dialect, text).to_text(), text);
        }
        // An older dbrig's marker while its DDL ran: no time, no identity.
        let old = Marker::parse(Dialect::Mysql, "dbrig:ab12@dbrig DDL running");
        assert!(old.ddl_running && old.created.is_empty() && old.identity == Identity::None);
    }

    /// The proof of a MariaDB table: its token, creation time and InnoDB id (or seal); a copy
    /// made in the same second (CREATE TABLE … LIKE: the same comment and time) differs in id.
    #[test]
    fn only_the_table_itself_is_proven() {
        let m = |t: &str| Marker::parse(Dialect::Mysql, t);
        let dbrigs = m("dbrig:ab@2026-01-02 03:04:05#innodb:42");
        let proven =
            |recorded: &Marker, state: &str, now: &Marker| disproof(recorded, state, now).is_none();
        let ambiguous = |recorded: &Marker, state: &str, now: &Marker| {
            matches!(disproof(recorded, state, now), Some(Disproof::Ambiguous(_)))
        };
        assert!(proven(&dbrigs, "ready", &dbrigs));
        let copy = m("dbrig:ab@2026-01-02 03:04:05#innodb:43");
        assert!(!proven(&dbrigs, "ready", &copy) && !ambiguous(&dbrigs, "ready", &copy));
        // Its own DDL moved the time: proven by token and id while loading, not once ready.
        let moved = m("dbrig:ab@2026-01-02 03:04:09#innodb:42");
        let running = m("dbrig:ab@2026-01-02 03:04:05#innodb:42!ddl");
        assert!(proven(&running, "loading", &moved));
        assert!(!proven(&running, "ready", &moved));
        assert!(!proven(&dbrigs, "loading", &moved));
        // A rebuild cut off and a copy look alike: refused as unproven.
        let rebuilt = m("dbrig:ab@2026-01-02 03:04:09#innodb:44");
        assert!(ambiguous(&running, "loading", &rebuilt));
        // No id readable now, or none recorded: nothing proves it.
        let mut unreadable = dbrigs.clone();
        unreadable.identity = Identity::Unreadable("no PROCESS".into());
        assert!(ambiguous(&dbrigs, "ready", &unreadable));
        let old = m("dbrig:ab@2026-01-02 03:04:05");
        assert!(ambiguous(&old, "ready", &dbrigs));
        // Sealed (no id): token and time.
        let sealed = m("dbrig:ab@2026-01-02 03:04:05#sealed");
        let now = m("dbrig:ab@2026-01-02 03:04:05");
        assert!(proven(&sealed, "ready", &now));
        assert!(!proven(
            &sealed,
            "ready",
            &m("dbrig:ab@2026-01-02 03:04:06")
        ));
        assert!(!proven(
            &sealed,
            "ready",
            &m("dbrig:cd@2026-01-02 03:04:05")
        ));
        let sealed_ddl = m("dbrig:ab@2026-01-02 03:04:05#sealed!ddl");
        assert!(proven(&sealed_ddl, "loading", &now));
        assert!(ambiguous(
            &sealed_ddl,
            "loading",
            &m("dbrig:ab@2026-01-02 03:04:07")
        ));
        // PostgreSQL: a TEMPLATE copy of the database keeps the table's OID.
        let pg = |t: &str| Marker::parse(Dialect::Postgres, t);
        let made = pg("oid:16385#db:16384#cluster:77");
        assert!(proven(&made, "ready", &made));
        assert!(!proven(
            &made,
            "ready",
            &pg("oid:16385#db:16390#cluster:77")
        ));
        assert!(!proven(
            &made,
            "ready",
            &pg("oid:16385#db:16384#cluster:78")
        ));
        assert!(!proven(
            &made,
            "ready",
            &pg("oid:16399#db:16384#cluster:77")
        ));
        // SQLite: a copy of the file.
        let lite = |t: &str| Marker::parse(Dialect::Sqlite, t);
        let made = lite("dbrig:ab#file:1:2");
        assert!(proven(&made, "ready", &made));
        assert!(!proven(&made, "ready", &lite("dbrig:ab#file:1:3")));
    }

    #[test]
    fn innodb_spells_names_as_the_server_files_them() {
        assert_eq!(innodb_file_name("sbtest1").as_deref(), Some("sbtest1"));
        assert_eq!(
            innodb_file_name("a-b$c.d").as_deref(),
            Some("a@002db@0024c@002ed")
        );
        assert_eq!(innodb_file_name("pröbe"), None);
    }

    #[test]
    fn every_dialect_has_every_registry_statement() {
        for d in [Dialect::Mysql, Dialect::Postgres, Dialect::Sqlite] {
            let sql = sql_for(d);
            for name in [
                "create_registry",
                "registry_columns",
                "registry_add",
                "registry_ready",
                "registry_lookup",
                "registry_lookup_old",
                "table_marker",
                "drop_table",
            ] {
                assert!(sql.has(name), "{name} missing for {d:?}");
            }
        }
        assert!(sql_for(Dialect::Mysql).has("set_marker"));
    }
}
