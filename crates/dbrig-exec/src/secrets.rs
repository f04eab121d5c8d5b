//! The secrets a plan knows (every configuration's password, however it came: `--password-env`,
//! `--password-file`, a `${NAME}` from `--define` or the environment, a URL, `--set`) and the
//! one place that keeps them out of what dbrig stores or hands on: a hook's environment loses
//! every variable holding one or naming a password file (and the engines' own password
//! variables, `PGPASSWORD`, `MYSQL_PWD`, `PGPASSFILE`), and anything stored (the command line,
//! plan text, resolved plan, hook commands and output, failure reasons) has every occurrence
//! replaced by `***`.
//!
//! A password has many written forms, and each hands it on: a URL carries it percent-encoded
//! (`p%40ss` is `p@ss`, the README's way to write an `@`), in upper- or lower-case hex, wholly
//! or in part (only the `@` escaped), and a password that itself holds `%XX` also reads as its
//! decoded text. So a secret is not a string to find but a pattern: each of its bytes written
//! as it is or as `%HH` ([`form_end`]), plus its percent-decoded and JSON-escaped forms.

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

use dbrig_core::results::HookOutput;
use dbrig_core::url;

use crate::plan::Plan;

/// What replaces a secret in stored text.
pub const MASK: &str = "***";

/// The plan's secrets. Empty by default (a plan without passwords).
#[derive(Debug, Clone, Default)]
pub struct Secrets {
    /// Every secret and the forms derived from it (decoded, JSON-escaped), longest first, so
    /// a secret containing another is masked whole.
    values: Vec<String>,
    /// Password files (`--password-file`, `password-file`): a variable naming one hands the
    /// password on as surely as one holding it.
    files: Vec<String>,
}

/// The engines' clients read a password (or a password file) from these: a hook running
/// `mariadb` or `psql` would log in with it, so no hook gets them.
const PASSWORD_VARIABLES: [&str; 3] = ["PGPASSWORD", "MYSQL_PWD", "PGPASSFILE"];

impl Secrets {
    /// Every password of the plan's configurations.
    pub fn of_plan(plan: &Plan) -> Self {
        let mut s = Secrets::default();
        for c in &plan.configurations {
            if let Some(p) = c.target.as_ref().and_then(|t| t.password()) {
                s.add(p.expose());
                if let Some(f) = p.file() {
                    s.add_file(f);
                }
            }
        }
        s
    }

    /// Know one more secret (empty strings are no secret: replacing them would mangle text).
    /// Its percent-decoded text (a password given as `p%40ss` through a variable that is not a
    /// URL) and its form inside a JSON string are known with it; every percent-encoded writing
    /// of each is found by [`form_end`].
    pub fn add(&mut self, secret: &str) {
        if secret.is_empty() {
            return;
        }
        let mut forms = vec![secret.to_owned(), url::percent_decode(secret)];
        for f in forms.clone() {
            let json = serde_json::to_string(&f).unwrap_or_default();
            forms.push(json[1..json.len() - 1].to_owned());
        }
        for f in forms {
            if !f.is_empty() && !self.values.contains(&f) {
                self.values.push(f);
            }
        }
        self.values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    }

    /// Know a password file: variables naming it (as given or resolved) leave hooks' environments.
    pub fn add_file(&mut self, path: &Path) {
        let mut forms = vec![path.display().to_string()];
        if let Ok(real) = path.canonicalize() {
            forms.push(real.display().to_string());
        }
        for f in forms {
            if !f.is_empty() && !self.files.contains(&f) {
                self.files.push(f);
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Where the first written form of a secret in `text` starts and ends.
    fn find(&self, text: &[u8], from: usize) -> Option<(usize, usize)> {
        (from..text.len()).find_map(|at| {
            self.values
                .iter()
                .find_map(|v| form_end(&text[at..], v.as_bytes()))
                .map(|len| (at, at + len))
        })
    }

    /// Whether `text` holds any form of a secret.
    pub fn holds_secret(&self, text: &str) -> bool {
        self.find(text.as_bytes(), 0).is_some()
    }

    /// `text` with every form of every secret replaced by `***`.
    pub fn scrub(&self, text: &str) -> String {
        let bytes = text.as_bytes();
        let mut out = Vec::with_capacity(bytes.len());
        let mut from = 0;
        while let Some((start, end)) = self.find(bytes, from) {
            out.extend_from_slice(&bytes[from..start]);
            out.extend_from_slice(MASK.as_bytes());
            from = end;
        }
        out.extend_from_slice(&bytes[from..]);
        // A form starts and ends on whole characters of valid text; lossy only in case.
        String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    /// A JSON value with every secret masked in its strings (keys included), and any number
    /// that reads as one (a numeric password in a numeric field) made the mask.
    pub fn scrub_json(&self, value: &serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        match value {
            Value::String(s) => Value::String(self.scrub(s)),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.scrub_json(v)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (self.scrub(k), self.scrub_json(v)))
                    .collect(),
            ),
            Value::Number(n) if self.holds_secret(&n.to_string()) => {
                Value::String(self.scrub(&n.to_string()))
            }
            other => other.clone(),
        }
    }

    /// Scrub every argument of a command line.
    pub fn scrub_all(&self, args: &[String]) -> Vec<String> {
        args.iter().map(|a| self.scrub(a)).collect()
    }

    /// A hook's command and output with every secret masked, ready to store.
    pub fn scrub_hook(&self, mut hook: HookOutput) -> HookOutput {
        hook.command = self.scrub(&hook.command);
        hook.output = self.scrub(&hook.output);
        hook
    }

    /// What a plan stores of itself, masked: the resolved plan, and each cell's specification
    /// and label (a `${PW}` may have been put anywhere in a plan). Cells keep their keys, so a
    /// resumed run finds them.
    pub fn scrub_plan(&self, plan: &mut Plan) {
        plan.resolved = self.scrub_json(&plan.resolved);
        for c in &mut plan.cells {
            c.spec = self.scrub_json(&c.spec);
            c.label = c.label.as_deref().map(|l| self.scrub(l));
        }
    }

    /// Remove from a child's environment every variable that hands a password on: the engines'
    /// own password variables, and any whose value holds a secret in any form (the
    /// `--password-env` variable, a `${NAME}` taken from the environment, a `DBRIG_TARGET`
    /// URL) or names a password file.
    pub fn strip_env(&self, command: &mut Command) {
        for name in self.variables_to_strip(std::env::vars_os()) {
            command.env_remove(name);
        }
    }

    /// Which of `vars` a child must not inherit (see [`strip_env`](Self::strip_env)).
    pub fn variables_to_strip(
        &self,
        vars: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Vec<OsString> {
        vars.into_iter()
            .filter(|(name, value)| {
                let value = value.to_string_lossy();
                PASSWORD_VARIABLES.iter().any(|v| name == v)
                    || self.holds_secret(&value)
                    || self.files.iter().any(|f| value.contains(f.as_str()))
            })
            .map(|(name, _)| name)
            .collect()
    }
}

/// The length of the written form of `secret` that `text` starts with, if it does: each byte
/// of the secret as it is or as `%HH` (either case), so the raw password, its percent-encoded
/// form and any mix of the two match alike. A `%` of the secret written `%25` can also read as a
/// literal `%` followed by `25`: both readings are tried.
fn form_end(text: &[u8], secret: &[u8]) -> Option<usize> {
    let mut t = 0;
    for (s, &b) in secret.iter().enumerate() {
        let literal = text.get(t) == Some(&b);
        let encoded =
            text.get(t) == Some(&b'%') && text.get(t + 1..t + 3).and_then(hex_byte) == Some(b);
        match (literal, encoded) {
            (true, true) => {
                let rest = &secret[s + 1..];
                return form_end(&text[t + 1..], rest)
                    .map(|n| t + 1 + n)
                    .or_else(|| form_end(&text[t + 3..], rest).map(|n| t + 3 + n));
            }
            (true, false) => t += 1,
            (false, true) => t += 3,
            (false, false) => return None,
        }
    }
    Some(t)
}

/// The byte two hex digits (either case) stand for.
fn hex_byte(pair: &[u8]) -> Option<u8> {
    let digit = |c: u8| (c as char).to_digit(16);
    Some((digit(pair[0])? * 16 + digit(pair[1])?) as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_every_occurrence_longest_first() {
        let mut s = Secrets::default();
        s.add("");
        assert!(s.is_empty());
        s.add("pw");
        s.add("pw-long");
        assert_eq!(
            s.scrub("--define PW=pw-long mysql://u:pw@h/db pw"),
            "--define PW=*** mysql://u:***@h/db ***"
        );
        assert_eq!(s.scrub_all(&["a".into(), "xpwx".into()]), ["a", "x***x"]);
        s.add("q\"uote");
        assert_eq!(
            s.scrub_json(&serde_json::json!({"hook": "echo q\"uote", "n": 1})),
            serde_json::json!({"hook": "echo ***", "n": 1})
        );
        // Inside JSON text a hook printed, the secret is escaped.
        assert_eq!(s.scrub(r#"{"k":"q\"uote"}"#), r#"{"k":"***"}"#);
    }

    /// The password of issue 30 (`@ : / ? # %` and non-ASCII) in every written form: raw,
    /// percent-encoded in upper, lower and mixed case, partly encoded (only the `@`, only the
    /// non-ASCII bytes, a lone `%` as `%25`), inside URLs, next to other text, and each form
    /// one `***`. What only looks like it (one byte off, an `%4` cut short) stays.
    #[test]
    fn every_written_form_of_a_secret_is_masked() {
        let pw = "p@ss:w/rd?#%é€@X";
        let mut s = Secrets::default();
        s.add(pw);
        let forms = [
            pw.to_owned(),
            "p%40ss%3Aw%2Frd%3F%23%25%C3%A9%E2%82%AC%40X".to_owned(),
            "p%40ss%3aw%2frd%3f%23%25%c3%a9%e2%82%ac%40X".to_owned(),
            "p%40ss%3aW".replace('W', "w%2Frd%3f#%25%C3%a9€@X"),
            "p%40ss:w/rd?#%é€%40X".to_owned(),
            "p@ss:w/rd?#%25é€@X".to_owned(),
            "p@ss:w/rd?#%%C3%A9%E2%82%AC@X".to_owned(),
            "%70%40%73%73%3A%77%2F%72%64%3F%23%25%C3%A9%E2%82%AC%40%58".to_owned(),
        ];
        for f in &forms {
            assert_eq!(url::percent_decode(f), pw, "{f} is a form of the password");
            assert_eq!(s.scrub(f), MASK, "{f}");
            assert_eq!(
                s.scrub(&format!("mysql://u:{f}@h/db and PW={f}; {f}{f}")),
                "mysql://u:***@h/db and PW=***; ******",
                "{f}"
            );
            assert!(s.holds_secret(&format!("x{f}y")), "{f}");
            let stored =
                s.scrub_json(&serde_json::json!({ f.clone(): [f, {"cmd": format!("echo {f}")}] }));
            assert_eq!(
                stored,
                serde_json::json!({"***": ["***", {"cmd": "echo ***"}]})
            );
        }
        for near in [
            "p@ss:w/rd?#%é€@Y",
            "p%4ss:w/rd?#%é€@X",
            "p%40ss%3Aw%2Frd%3F%23%25%C3%A9%E2%82%AC%4X",
            "p@ss:w/rd?#%é€",
        ] {
            assert_eq!(s.scrub(near), near);
            assert!(!s.holds_secret(near), "{near}");
        }
        // A secret that is itself encoded text (`--password-env` holding `a%40b`): its decoded
        // text is masked too.
        let mut s = Secrets::default();
        s.add("a%40b");
        assert_eq!(s.scrub("a%40b a%2540b a@b a%40B"), "*** *** *** a%40B");
        // A secret holding `%25` itself: written raw, the literal reading of its `%` is the one
        // that matches; percent-encoded, the other.
        let mut s = Secrets::default();
        s.add("a%25z");
        assert_eq!(s.scrub("[a%25z] [a%2525z] [a%z]"), "[***] [***] [***]");
        // A numeric password set where a number goes.
        let mut s = Secrets::default();
        s.add("12345");
        assert_eq!(
            s.scrub_json(&serde_json::json!({"port": 12345, "n": 1})),
            serde_json::json!({"port": "***", "n": 1})
        );
    }

    /// What a hook printed is stored masked, whatever form of the secret it printed: the
    /// hook's own command names none (it reads them from a file), so only the output's masking
    /// stands between them and the results database.
    #[test]
    fn a_hooks_output_is_stored_masked() {
        let pw = "p@ss:w/rd?#%é€@X";
        let dir = tempfile::tempdir().unwrap();
        let forms = dir.path().join("forms");
        let written = [
            pw,
            "p%40ss%3Aw%2Frd%3F%23%25%C3%A9%E2%82%AC%40X",
            "p%40ss%3aw%2frd%3f%23%25%c3%a9%e2%82%ac%40X",
            "p%40ss:w/rd?#%é€%40X",
        ];
        std::fs::write(&forms, written.join("\n")).unwrap();
        let mut s = Secrets::default();
        s.add(pw);
        let command = format!("cat {}; echo; cat {} >&2", forms.display(), forms.display());
        let out = crate::environment::run_shell_hook("before-trial", &command, 10.0, &s);
        assert_eq!(out.exit_code, Some(0), "{out:?}");
        assert_eq!(out.command, command);
        assert_eq!(
            out.output, "***\n***\n***\n***\n***\n***\n***\n***",
            "{out:?}"
        );
    }

    #[test]
    fn hooks_lose_password_variables_and_password_file_names() {
        let mut s = Secrets::default();
        s.add("s3cret");
        s.add_file(Path::new("/home/dba/.dbpw"));
        let vars = [
            ("HOME", "/home/dba"),
            ("PW", "s3cret"),
            ("OPTS", "--password=s3cret --x"),
            ("PWFILE", "/home/dba/.dbpw"),
            ("PGPASSFILE", "/elsewhere/pgpass"),
            ("PGPASSWORD", "another"),
            ("MYSQL_PWD", "another"),
            ("PGHOST", "127.0.0.1"),
            // Encoded forms hand it on as well (a `${PW_ENC}` feeding a URL, DBRIG_TARGET).
            ("PW_ENC", "s3cr%65t"),
            ("DBRIG_TARGET", "mysql://u:%73%33%43%52%45%54@h/db"),
            ("DBRIG_TARGET2", "mysql://u:%73%33%63%72%65%74@h/db"),
        ]
        .map(|(n, v)| (OsString::from(n), OsString::from(v)));
        let stripped: Vec<String> = s
            .variables_to_strip(vars)
            .into_iter()
            .map(|n| n.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            stripped,
            [
                "PW",
                "OPTS",
                "PWFILE",
                "PGPASSFILE",
                "PGPASSWORD",
                "MYSQL_PWD",
                "PW_ENC",
                "DBRIG_TARGET2"
            ]
        );
        // A plan without secrets still keeps the engines' password variables from hooks.
        let none = Secrets::default()
            .variables_to_strip([(OsString::from("MYSQL_PWD"), OsString::from("x"))]);
        assert_eq!(none, [OsString::from("MYSQL_PWD")]);
    }
}
