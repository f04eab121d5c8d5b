//! A password in every written form (issue 30 item 1): holding `@ : / ? # %` and non-ASCII,
//! given raw, percent-encoded in upper- and lower-case hex and partly encoded, through every
//! way dbrig takes one (`${VAR}` from the environment, `--define`, `--set`, `--password-env`,
//! `--password-file`, `DBRIG_TARGET`, a URL), for real accounts on MariaDB (the shared server)
//! and PostgreSQL (a private server that checks passwords with scram-sha-256), with hooks that
//! print their environment, every form and run SQL returning them. Afterwards no form is in
//! any field of the results database, any report of any format, any file dbrig wrote, or
//! anything it printed, and no hook saw one.

use std::path::Path;
use std::process::{Command, Output};

use crate::mysql::{TestDb as MyDb, sql as mysql};
use crate::{dbrig, error_line, ok, text};

/// The password: every character a URL gives a meaning to, a `%`, and non-ASCII.
const PASSWORD: &str = "p@ss:w/rd?#%é€@X";

/// Written forms of [`PASSWORD`], each of which a URL decodes to it (checked by logging in).
struct Forms {
    raw: String,
    /// Every byte `%HH`, upper-case hex.
    upper: String,
    /// Every byte `%hh`, lower-case hex.
    lower: String,
    /// Only the `@`s escaped, as the README shows for an `@`.
    at_only: String,
    /// Some escaped, in mixed case, the `%` as `%25`.
    mixed: String,
    /// Only the non-ASCII bytes escaped.
    non_ascii: String,
}

impl Forms {
    fn new() -> Self {
        let every = |upper: bool| {
            PASSWORD
                .bytes()
                .map(|b| match upper {
                    true => format!("%{b:02X}"),
                    false => format!("%{b:02x}"),
                })
                .collect::<String>()
        };
        Forms {
            raw: PASSWORD.to_owned(),
            upper: every(true),
            lower: every(false),
            at_only: "p%40ss:w/rd?#%é€%40X".to_owned(),
            mixed: "p%40ss%3aw%2Frd?%23%25é%e2%82%AC@X".to_owned(),
            non_ascii: "p@ss:w/rd?#%%C3%A9%E2%82%AC@X".to_owned(),
        }
    }

    fn all(&self) -> [&str; 6] {
        [
            &self.raw,
            &self.upper,
            &self.lower,
            &self.at_only,
            &self.mixed,
            &self.non_ascii,
        ]
    }
}

/// A MariaDB account of this test's own on the shared server, dropped at the end.
struct MyUser(String);

impl MyUser {
    fn new(db: &str) -> Self {
        let user = format!("dbrig_forms_{}", std::process::id());
        let o = Command::new("mariadb")
            .args([
                "-uroot",
                "-h127.0.0.1",
                "--default-character-set=utf8mb4",
                "-e",
                &format!(
                    "DROP USER IF EXISTS '{user}'@'127.0.0.1'; \
                     CREATE USER '{user}'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}'; \
                     GRANT ALL ON {db}.* TO '{user}'@'127.0.0.1'"
                ),
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        MyUser(user)
    }
}

impl Drop for MyUser {
    fn drop(&mut self) {
        mysql(&format!("DROP USER IF EXISTS '{}'@'127.0.0.1'", self.0));
    }
}

/// A PostgreSQL server of this test's own (dbrig's managed server, open to local superuser
/// logins) whose `pg_hba.conf` asks the test's role for its password by scram-sha-256, so a
/// form that did not decode to the password could not log in. Stopped when dropped.
struct PrivatePg {
    dir: tempfile::TempDir,
    port: String,
    role: String,
}

impl PrivatePg {
    fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let role = format!("dbrig_forms_{}", std::process::id());
        let hba = dir.path().join("pg_hba.conf");
        std::fs::write(
            &hba,
            format!(
                "local all all trust\n\
                 host all {role} 127.0.0.1/32 scram-sha-256\n\
                 host all all 127.0.0.1/32 trust\n"
            ),
        )
        .unwrap();
        let plan = dir.path().join("server.toml");
        std::fs::write(
            &plan,
            "[[server]]\nname = \"formspg\"\nengine = \"postgres\"\nopen-access = true\n",
        )
        .unwrap();
        let o = ok(dbrig(
            dir.path(),
            &[
                "server",
                "start",
                "formspg",
                "--plan",
                plan.to_str().unwrap(),
                "--param",
                &format!("hba_file={}", hba.display()),
            ],
        ));
        let target = text(&o)
            .lines()
            .find_map(|l| l.trim().strip_prefix("target: ").map(str::to_owned))
            .expect("the target line");
        let port = target
            .rsplit_once(':')
            .and_then(|(_, rest)| rest.split('/').next())
            .expect("a port in the target")
            .to_owned();
        let pg = PrivatePg { dir, port, role };
        pg.psql(&format!(
            "SET password_encryption = 'scram-sha-256'; \
             CREATE ROLE {} LOGIN PASSWORD '{PASSWORD}'",
            pg.role
        ));
        pg.psql(&format!("CREATE DATABASE forms OWNER {}", pg.role));
        pg
    }

    fn psql(&self, statements: &str) {
        let o = Command::new("psql")
            .args(["-h", "127.0.0.1", "-p", &self.port, "-U", "postgres"])
            .args(["-d", "postgres", "-X", "-q", "-v", "ON_ERROR_STOP=1"])
            .args(["-c", statements])
            .env("PGCLIENTENCODING", "UTF8")
            .output()
            .unwrap();
        assert!(o.status.success(), "{statements}: {}", text(&o));
    }

    fn url(&self, password: &str) -> String {
        format!(
            "postgres://{}{password}@127.0.0.1:{}/forms",
            self.role, self.port
        )
    }
}

impl Drop for PrivatePg {
    fn drop(&mut self) {
        let _ = dbrig(self.dir.path(), &["server", "stop", "formspg"]);
    }
}

/// `dbrig ARGS --out=OUT` with extra environment variables.
fn dbrig_env(out: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_dbrig"));
    c.args(args).arg(format!("--out={}", out.display()));
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

#[test]
fn every_form_of_a_password_is_masked_everywhere() {
    let forms = Forms::new();
    let db = MyDb::new("secret_forms");
    let user = MyUser::new(&db.0);
    let pg = PrivatePg::start();
    let out = tempfile::tempdir().unwrap();
    let o = out.path();
    // Files the test keeps outside dbrig's output folder (which is searched whole at the end).
    let side = tempfile::tempdir().unwrap();
    let my = |password: &str| format!("mysql://{}{password}@127.0.0.1:3306/{}", user.0, db.0);
    let pw_file = side.path().join("pw");
    std::fs::write(&pw_file, format!("{PASSWORD}\n")).unwrap();
    std::fs::set_permissions(
        &pw_file,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let forms_file = side.path().join("forms");
    std::fs::write(&forms_file, forms.all().join("\n")).unwrap();
    let hook_env = side.path().join("hook-env");
    // The hook prints its environment and every form (read from a file, so only its output
    // holds them), echoes the forms its own command holds, and keeps its environment.
    let hook = format!(
        "env; env >> {env}; echo 'hook-env-end' >> {env}; echo 'forms:'; cat {forms}; echo; \
         echo 'command: ${{FORMS_PW_UPPER}} ${{PW_LOWER}} ${{PW_AT}}'",
        env = hook_env.display(),
        forms = forms_file.display()
    );
    let plan = side.path().join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            r#"
name = "secret-forms"
trials = 1
duration = 0.3
clients = [1]
[[configuration]]
name = "my-env-upper"
target = "{my_env_upper}"
[[configuration]]
name = "my-define-lower"
target = "{my_define_lower}"
[[configuration]]
name = "my-define-at"
target = "{my_define_at}"
[[configuration]]
name = "my-set-mixed"
target = "mock:"
[[configuration]]
name = "my-env-raw"
target = "{my_env_raw}"
[[configuration]]
name = "my-file"
target = "{my_file}"
[[configuration]]
name = "pg-define-non-ascii"
target = "{pg_define_non_ascii}"
[[configuration]]
name = "pg-file"
target = "{pg_file}"
[[workload]]
name = "oltp_point_select"
[workload.options]
table-size = 100
[environment.hooks]
before-trial = "{hook}"
after-trial-sql = "SELECT '${{PW_LOWER}}' AS lower_form, '${{PW_NON_ASCII}}' AS non_ascii_form"
"#,
            my_env_upper = my(":${FORMS_PW_UPPER}"),
            my_define_lower = my(":${PW_LOWER}"),
            my_define_at = my(":${PW_AT}"),
            my_env_raw = my(":${FORMS_PW_RAW}"),
            my_file = my(""),
            pg_define_non_ascii = pg.url(":${PW_NON_ASCII}"),
            pg_file = pg.url(""),
        ),
    )
    .unwrap();
    let secret_env = [
        ("FORMS_PW_UPPER", forms.upper.as_str()),
        ("FORMS_PW_RAW", forms.raw.as_str()),
        ("FORMS_PW_LOWER_TOO", forms.lower.as_str()),
    ];
    let dbrig_target = my(&format!(":{}", forms.mixed));
    let mut env: Vec<(&str, &str)> = secret_env.to_vec();
    env.push(("DBRIG_TARGET", &dbrig_target));
    let mut printed = String::new();
    let mut keep = |o: &Output| printed.push_str(&text(o));
    // The plan: every configuration logs in with its form, the `file` ones with the password
    // file given on the command line (issue 30 item 14).
    let set_target = format!(
        "configuration.my-set-mixed.target={}",
        my(&format!(":{}", forms.mixed))
    );
    let defines = [
        format!("PW_LOWER={}", forms.lower),
        format!("PW_AT={}", forms.at_only),
        format!("PW_NON_ASCII={}", forms.non_ascii),
    ];
    let mut plan_args = vec!["run", plan.to_str().unwrap()];
    for d in &defines {
        plan_args.extend(["--define", d]);
    }
    plan_args.extend(["--set", &set_target]);
    plan_args.extend(["--password-file", pw_file.to_str().unwrap()]);
    let r = dbrig_env(o, &plan_args, &env);
    keep(&r);
    assert!(r.status.success(), "{}", text(&r));
    assert!(
        text(&r).contains(&format!(
            "--password-file {}: the password of configuration(s) my-file, pg-file",
            pw_file.display()
        )),
        "{}",
        text(&r)
    );
    // What a dry run prints.
    let r = dbrig_env(o, &[&plan_args[..], &["--dry-run"]].concat(), &env);
    keep(&r);
    assert!(text(&r).contains("my-set-mixed"), "{}", text(&r));
    // Single commands: a URL with a form, `--password-env`, `--password-file`, DBRIG_TARGET.
    let single = |target: Option<String>, extra: &[&str]| {
        let mut args = vec![
            "run",
            "oltp_point_select",
            "--table-size",
            "100",
            "--events",
            "10",
            "--time",
            "0",
            "--before-trial",
            &hook,
        ];
        let target_arg;
        if let Some(t) = target {
            target_arg = t;
            args.extend(["--target", &target_arg]);
        }
        args.extend(extra);
        dbrig_env(o, &args, &env)
    };
    for r in [
        single(Some(my(&format!(":{}", forms.lower))), &[]),
        single(Some(pg.url(&format!(":{}", forms.at_only))), &[]),
        single(Some(my("")), &["--password-env", "FORMS_PW_RAW"]),
        single(
            Some(pg.url("")),
            &["--password-file", pw_file.to_str().unwrap()],
        ),
        single(None, &[]),
    ] {
        keep(&r);
        ok(r);
    }
    // Every trial ran, so every form logged in as the account it names (a form that did not
    // decode to the password could not: MariaDB and the private PostgreSQL check it).
    let store = dbrig_store::Store::open(&o.join("results.db")).unwrap();
    let runs = store.runs().unwrap();
    // The plan (its prepare is a step of its trial), then five single runs.
    assert_eq!(runs.len(), 6, "{runs:?}");
    assert!(runs.iter().all(|r| r.status.as_str() == "done"), "{runs:?}");
    let plan_run = runs
        .iter()
        .find(|r| r.name == "secret-forms")
        .expect("the plan's run");
    let cells = store.cells(plan_run.id).unwrap();
    assert_eq!(cells.len(), 8);
    for c in &cells {
        let trials = store.trials(c.id).unwrap();
        assert_eq!(trials.len(), 1, "{}", c.configuration);
        assert_eq!(trials[0].status.as_str(), "done", "{}", c.configuration);
    }
    drop(store);

    // Errors quote the target redacted, whatever form its password had.
    for form in forms.all() {
        let bad_port = my(&format!(":{form}")).replace(":3306/", ":99999/");
        let r = dbrig_env(
            o,
            &["run", "oltp_point_select", "--target", &bad_port],
            &env,
        );
        keep(&r);
        let e = error_line(&r);
        assert!(e.contains(":***@127.0.0.1:99999/"), "{e}");
        let down = my(&format!(":{form}")).replace(":3306/", ":1/");
        let r = dbrig_env(o, &["run", "oltp_point_select", "--target", &down], &env);
        keep(&r);
        error_line(&r);
    }
    // A plan whose `--set` target does not parse: the error quotes it redacted.
    let bad_set = set_target.replace(":3306/", ":99999/");
    let bad_plan: Vec<&str> = plan_args
        .iter()
        .map(|a| if *a == set_target { &bad_set } else { *a })
        .collect();
    let r = dbrig_env(o, &bad_plan, &env);
    keep(&r);
    assert!(
        error_line(&r).contains("configuration 'my-set-mixed'"),
        "{}",
        text(&r)
    );

    let runs = dbrig_store::Store::open(&o.join("results.db"))
        .unwrap()
        .runs()
        .unwrap();

    // Every report of every run in every format, with the hooks' records.
    for run in &runs {
        let id = run.id.0.to_string();
        for format in [
            "text",
            "json",
            "csv",
            "csv-trials",
            "csv-intervals",
            "markdown",
            "html",
            "sysbench-json",
            "svg",
            "benchbase",
        ] {
            let r = dbrig(o, &["report", &id, "--format", format]);
            keep(&r);
            ok(r);
        }
        for format in ["text", "markdown"] {
            let r = ok(dbrig(
                o,
                &["report", &id, "--format", format, "--with", "hooks"],
            ));
            keep(&r);
            // The hooks' outputs are there, masked: the test is not looking at nothing.
            let shown = text(&r);
            if run.status.as_str() == "done" {
                assert!(shown.contains("forms:"), "{shown}");
                assert!(shown.matches("***").count() >= forms.all().len(), "{shown}");
            }
            if run.name == "secret-forms" {
                assert!(shown.contains("command: *** *** ***"), "{shown}");
            }
        }
    }
    let r = ok(dbrig(o, &["runs"]));
    keep(&r);

    // Every field of every table of the results database.
    let dump = Command::new("sqlite3")
        .arg(o.join("results.db"))
        .arg(".dump")
        .output()
        .expect("sqlite3 is installed");
    assert!(dump.status.success());
    let dump = String::from_utf8_lossy(&dump.stdout).into_owned();
    assert!(dump.contains("forms:"), "the hook outputs are stored");
    // The SQL hook's rows (each form one `***`) are stored.
    assert!(
        dump.contains("lower_form"),
        "the SQL hook's output is stored"
    );
    let hooks_seen = std::fs::read_to_string(&hook_env).unwrap();
    // Eight plan trials and five single runs ran the hook.
    assert_eq!(hooks_seen.matches("hook-env-end").count(), 13);
    for form in forms.all() {
        assert!(!dump.contains(form), "the results database holds {form}");
        assert!(!printed.contains(form), "dbrig printed {form}");
        assert!(
            !hooks_seen.contains(form),
            "a hook's environment held {form}"
        );
        let files = crate::safety::files_holding(o, form);
        assert!(files.is_empty(), "{form} is in {files:?}");
    }
    // The variables that held a form were kept from the hooks, and so was DBRIG_TARGET.
    for (name, _) in secret_env {
        assert!(!hooks_seen.contains(&format!("{name}=")), "{name}");
    }
    assert!(!hooks_seen.contains("DBRIG_TARGET="));
}

/// `run PLAN --password-file F` where no configuration can take it: one clear line, nothing
/// run, rather than a password silently unused.
#[test]
fn a_plan_password_no_configuration_takes_is_refused() {
    let out = tempfile::tempdir().unwrap();
    let plan = out.path().join("plan.toml");
    std::fs::write(
        &plan,
        "name = \"lite\"\ntrials = 1\nclients = [1]\n[[configuration]]\nname = \"A\"\n\
         target = \"sqlite::memory:\"\n[[workload]]\nname = \"oltp_point_select\"\n",
    )
    .unwrap();
    let pw = out.path().join("pw");
    std::fs::write(&pw, "x").unwrap();
    let r = dbrig(
        out.path(),
        &[
            "run",
            plan.to_str().unwrap(),
            "--password-file",
            pw.to_str().unwrap(),
        ],
    );
    let e = error_line(&r);
    assert!(
        e.contains("--password-file") && e.contains("no configuration of"),
        "{e}"
    );
    assert!(!out.path().join("results.db").exists());
    // perfrun's sides from a plan take their passwords from it: its own password options are
    // refused with --plan, not ignored.
    let r = dbrig(
        out.path(),
        &[
            "perfrun",
            "--plan",
            plan.to_str().unwrap(),
            "--a",
            "A",
            "--b",
            "A",
            "--password-file-a",
            pw.to_str().unwrap(),
        ],
    );
    assert!(!r.status.success());
    assert!(
        text(&r).contains("'--plan <FILE>' cannot be used with '--password-file-a <PATH>'"),
        "{}",
        text(&r)
    );
    assert!(!out.path().join("results.db").exists());
}
