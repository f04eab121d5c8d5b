//! The engines' own credential files (issue 30, items 2 and 3), against real servers: a
//! `~/.my.cnf` (HOME pointed at a folder of the test's own) logs dbrig in as the user it names
//! with that user's password, never sends it to another user, and gives the socket the URL
//! leaves out; `~/.pgpass` lines are matched for a Unix socket as libpq matches them, checked
//! against psql itself on a private, password-protected PostgreSQL on a port of its own.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

use crate::mysql::{TestDb, sql};
use crate::{dbrig, ok, text};

/// dbrig with HOME (and nothing else of the engines' password variables) set for the test.
fn dbrig_home(home: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_dbrig"));
    c.args(args)
        .env("HOME", home)
        .env_remove("MYSQL_PWD")
        .env_remove("MYSQL_HOME")
        .env_remove("MARIADB_HOME")
        .env_remove("PGPASSWORD")
        .env_remove("PGPASSFILE")
        .env_remove("PGHOST")
        .env_remove("PGPORT")
        .env_remove("PGUSER")
        .env_remove("DBRIG_TARGET");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("dbrig runs")
}

fn private_file(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

/// The target dbrig resolved and logged in to (`doctor` asks the server for its settings,
/// so it succeeds only once logged in).
fn doctor_target(o: &Output) -> String {
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", text(o)));
    v["server"]["target"].as_str().unwrap().to_owned()
}

/// Accounts of the test's own on the shared MariaDB, dropped at the end.
struct Accounts(Vec<String>);

impl Drop for Accounts {
    fn drop(&mut self) {
        for a in &self.0 {
            let _ = Command::new("mariadb")
                .args(["-uroot", "-h127.0.0.1", "-e"])
                .arg(format!("DROP USER IF EXISTS '{a}'@'%'"))
                .output();
        }
    }
}

#[test]
fn my_cnf_user_password_and_socket_as_the_mariadb_client() {
    let db = TestDb::new("mycnf");
    let id = std::process::id();
    let (alice, bob) = (format!("dbrig_cf_a{id}"), format!("dbrig_cf_b{id}"));
    let accounts = Accounts(vec![alice.clone(), bob.clone()]);
    // Quotes, '#' and a space, as an option file writes them.
    let password = format!("pw#'{id} x");
    sql(&format!(
        "DROP USER IF EXISTS '{alice}'@'%'; DROP USER IF EXISTS '{bob}'@'%';\
         CREATE USER '{alice}'@'%' IDENTIFIED BY '{}'; CREATE USER '{bob}'@'%';\
         GRANT ALL ON {db}.* TO '{alice}'@'%'; GRANT ALL ON {db}.* TO '{bob}'@'%'",
        password.replace('\'', "''"),
        db = db.0
    ));
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    // The user in [client], the password in [client-mariadb] of an included file: the
    // client merges them (`mariadb --print-defaults` shows both).
    private_file(
        &h.join(".my.cnf"),
        &format!(
            "[client]\nuser = {alice}\n!include {}/secret.cnf\n",
            h.display()
        ),
    );
    private_file(
        &h.join("secret.cnf"),
        &format!("[client-mariadb]\npassword = \"{password}\"  # alice's\n"),
    );
    let socket = sql("SELECT @@socket").trim().to_owned();
    let cli = Command::new("mariadb")
        .env("HOME", h)
        .args(["-h127.0.0.1", "-N", "-B", "-e", "SELECT CURRENT_USER()"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&cli.stdout).contains(&alice),
        "the mariadb client logs in as alice with these files: {}",
        String::from_utf8_lossy(&cli.stderr)
    );

    // The URL names no user: alice and her password (before: her password sent for root).
    let url = format!("mysql://127.0.0.1:3306/{}", db.0);
    let o = ok(dbrig_home(
        h,
        &[],
        &["doctor", "--target", &url, "--format", "json"],
    ));
    assert_eq!(
        doctor_target(&o),
        format!("mysql://{alice}:***@127.0.0.1:3306/{}", db.0)
    );
    // The URL names bob: alice's password is not sent to him, and the warning says why
    // (bob has no password, so he logs in; before, alice's was sent and refused).
    let url_bob = format!("mysql://{bob}@127.0.0.1:3306/{}", db.0);
    let o = ok(dbrig_home(
        h,
        &[],
        &["doctor", "--target", &url_bob, "--format", "json"],
    ));
    assert_eq!(
        doctor_target(&o),
        format!("mysql://{bob}@127.0.0.1:3306/{}", db.0)
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("is for user '{alice}'")) && err.contains("not sent to"),
        "{err}"
    );
    assert!(!text(&o).contains(&password));
    // The URL names no host: the files' socket, as the client takes it.
    private_file(
        &h.join("sock.cnf"),
        &format!("[client]\nsocket = {socket}\n"),
    );
    let extra = h.join("sock.cnf").display().to_string();
    let o = ok(dbrig_home(
        h,
        &[],
        &[
            "doctor",
            "--defaults-extra-file",
            &extra,
            "--target",
            &format!("mysql:///{}", db.0),
            "--format",
            "json",
        ],
    ));
    assert_eq!(
        doctor_target(&o),
        format!("mysql://{alice}:***@localhost/{}?socket={socket}", db.0)
    );
    // --no-defaults: root, no password, dbrig's default host.
    let o = ok(dbrig_home(
        h,
        &[],
        &[
            "doctor",
            "--no-defaults",
            "--target",
            &url,
            "--format",
            "json",
        ],
    ));
    assert_eq!(
        doctor_target(&o),
        format!("mysql://root@127.0.0.1:3306/{}", db.0)
    );

    // A measured run as alice: her password, from the option file, is masked in what is
    // stored like any other (the hook's command and output hold it).
    let out = tempfile::tempdir().unwrap();
    let o_dir = out.path().display().to_string();
    let out_arg = format!("--out={o_dir}");
    let common = ["--tables", "1", "--table-size", "100", "--target", &url];
    let mut prepare = vec!["prepare", "oltp_point_select"];
    prepare.extend(common);
    prepare.push(&out_arg);
    let o = ok(dbrig_home(h, &[], &prepare));
    assert!(!text(&o).contains(&password));
    let hook = format!("echo '{}'", password.replace('\'', "'\\''"));
    let mut run = vec![
        "run",
        "oltp_point_select",
        "--events",
        "20",
        "--time",
        "0",
        "--before-trial",
        &hook,
    ];
    run.extend(common);
    run.push(&out_arg);
    let o = ok(dbrig_home(h, &[], &run));
    assert!(!text(&o).contains(&password), "{}", text(&o));
    for format in ["json", "html", "markdown", "text"] {
        let mut args = vec!["report", "latest", "--format", format];
        if matches!(format, "markdown" | "text") {
            args.extend(["--with", "hooks"]);
        }
        let shown = text(&ok(dbrig(out.path(), &args)));
        assert!(
            !shown.contains(&password),
            "report {format} shows the password"
        );
        if format == "markdown" {
            assert!(
                shown.contains("***"),
                "the hook's output is masked: {shown}"
            );
        }
    }
    let stored = std::fs::read(out.path().join("results.db")).unwrap();
    assert!(
        !String::from_utf8_lossy(&stored).contains(&password),
        "the results database holds the password"
    );
    let mut cleanup = vec![
        "cleanup",
        "oltp_point_select",
        "--tables",
        "1",
        "--target",
        &url,
    ];
    cleanup.push(&out_arg);
    ok(dbrig_home(h, &[], &cleanup));
    drop(accounts);
}

/// A locked-down PostgreSQL of the test's own (scram-sha-256 on TCP and on its socket).
struct PrivatePg {
    out: tempfile::TempDir,
    port: String,
    socket_dir: String,
    password: String,
}

impl PrivatePg {
    fn start(name: &str) -> Self {
        let out = tempfile::tempdir().unwrap();
        let plan = out.path().join("server.toml");
        std::fs::write(
            &plan,
            format!("[[server]]\nname = \"{name}\"\nengine = \"postgres\"\n"),
        )
        .unwrap();
        let o = ok(dbrig(
            out.path(),
            &["server", "start", name, "--plan", plan.to_str().unwrap()],
        ));
        let t = text(&o);
        let socket = t
            .lines()
            .find_map(|l| l.split_once(", socket ").map(|(_, p)| p.trim().to_owned()))
            .unwrap_or_else(|| panic!("no socket in:\n{t}"));
        let (dir, file) = socket.rsplit_once('/').unwrap();
        let port = file.strip_prefix(".s.PGSQL.").unwrap().to_owned();
        let secret = t
            .lines()
            .find_map(|l| l.trim().strip_prefix("password: in "))
            .and_then(|l| l.split_once(' ').map(|(p, _)| p.to_owned()))
            .unwrap_or_else(|| panic!("no password file in:\n{t}"));
        let password = std::fs::read_to_string(secret).unwrap().trim().to_owned();
        PrivatePg {
            out,
            port,
            socket_dir: dir.to_owned(),
            password,
        }
    }
}

impl Drop for PrivatePg {
    fn drop(&mut self) {
        let plan = self.out.path().join("server.toml");
        let name = std::fs::read_to_string(&plan).unwrap();
        let name = name.split('"').nth(1).unwrap().to_owned();
        let _ = dbrig(
            self.out.path(),
            &["server", "stop", &name, "--plan", plan.to_str().unwrap()],
        );
    }
}

#[test]
fn pgpass_over_a_socket_as_libpq() {
    let pg = PrivatePg::start("pgpass");
    let home = tempfile::tempdir().unwrap();
    let pgpass = home.path().join("pgpass");
    let pgpass_s = pgpass.display().to_string();
    let env = [
        ("PGPASSFILE", pgpass_s.as_str()),
        ("PGHOST", pg.socket_dir.as_str()),
        ("PGPORT", pg.port.as_str()),
    ];
    // What psql does with the same file, socket and port: the reference.
    let psql_logs_in = || {
        Command::new("psql")
            .args([
                "-w", "-X", "-At", "-d", "postgres", "-U", "postgres", "-c", "SELECT 1",
            ])
            .envs(env)
            .env_remove("PGPASSWORD")
            .output()
            .unwrap()
            .status
            .success()
    };
    let doctor = || {
        dbrig_home(
            home.path(),
            &env,
            &[
                "doctor",
                "--target",
                "postgres:///postgres",
                "--format",
                "json",
            ],
        )
    };
    // libpq looks a socket up by its folder (not the default one here) and its port: the
    // second line. dbrig looked it up as localhost:5432 and sent the first line's password.
    private_file(
        &pgpass,
        &format!(
            "localhost:5432:*:postgres:not-this-one\n{}:{}:*:postgres:{}\n",
            pg.socket_dir.replace(':', "\\:"),
            pg.port,
            pg.password
        ),
    );
    assert!(psql_logs_in(), "psql takes the socket folder's line");
    let o = ok(doctor());
    assert_eq!(
        doctor_target(&o),
        format!(
            "postgres://postgres:***@localhost/postgres?socket={}/.s.PGSQL.{}",
            pg.socket_dir, pg.port
        )
    );
    assert!(!text(&o).contains(&pg.password));
    // A line filed for localhost:5432 (the right password, the wrong server) is not this
    // server's: libpq does not use it, nor does dbrig (which logged in with it before).
    private_file(
        &pgpass,
        &format!("localhost:5432:*:postgres:{}\n", pg.password),
    );
    assert!(!psql_logs_in(), "psql does not use another port's line");
    let o = doctor();
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("password missing"), "{}", text(&o));
    // libpq's permission rule: readable by others, the file is not read, with a warning.
    private_file(
        &pgpass,
        &format!("{}:{}:*:postgres:{}\n", pg.socket_dir, pg.port, pg.password),
    );
    ok(doctor());
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o644)).unwrap();
    let o = doctor();
    assert!(!o.status.success());
    assert!(
        text(&o).contains("has group or world access"),
        "{}",
        text(&o)
    );
}
