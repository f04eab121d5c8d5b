//! The secrets a plan knows (every configuration's password, however it came: `--password-env`,
//! `--password-file`, a `${NAME}` from `--define` or the environment, a URL, `--set`) and the
//! one place that keeps them out of what dbrig stores or hands on: a hook's environment loses
//! every variable holding one or naming a password file (and the engines' own password
//! variables, `PGPASSWORD`, `MYSQL_PWD`, `PGPASSFILE`), and anything stored (the command line, hook commands and
//! output, failure reasons) has every occurrence replaced by `***`.

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

use dbrig_core::results::HookOutput;

use crate::plan::Plan;

/// What replaces a secret in stored text.
pub const MASK: &str = "***";

/// The plan's secrets. Empty by default (a plan without passwords).
#[derive(Debug, Clone, Default)]
pub struct Secrets {
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
    pub fn add(&mut self, secret: &str) {
        if !secret.is_empty() && !self.values.iter().any(|v| v == secret) {
            self.values.push(secret.to_owned());
            // Longest first, so a secret containing another is masked whole.
            self.values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        }
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

    /// `text` with every secret replaced by `***`.
    pub fn scrub(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for v in &self.values {
            if out.contains(v.as_str()) {
                out = out.replace(v.as_str(), MASK);
            }
        }
        out
    }

    /// A JSON value with every secret masked in its strings (keys included).
    pub fn scrub_json(&self, value: &serde_json::Value) -> serde_json::Value {
        if self.values.is_empty() {
            return value.clone();
        }
        let text = serde_json::to_string(value).unwrap_or_default();
        // A secret may hold characters JSON escapes: mask both forms.
        let mut out = self.scrub(&text);
        for v in &self.values {
            let escaped = serde_json::to_string(v).unwrap_or_default();
            let inner = escaped.trim_matches('"');
            if inner != v && !inner.is_empty() {
                out = out.replace(inner, MASK);
            }
        }
        serde_json::from_str(&out).unwrap_or_else(|_| value.clone())
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

    /// Remove from a child's environment every variable that hands a password on: the engines'
    /// own password variables, and any whose value holds a secret (the `--password-env`
    /// variable, a `${NAME}` taken from the environment) or names a password file.
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
                    || self.values.iter().any(|v| value.contains(v.as_str()))
                    || self.files.iter().any(|f| value.contains(f.as_str()))
            })
            .map(|(name, _)| name)
            .collect()
    }
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
                "MYSQL_PWD"
            ]
        );
        // A plan without secrets still keeps the engines' password variables from hooks.
        let none = Secrets::default()
            .variables_to_strip([(OsString::from("MYSQL_PWD"), OsString::from("x"))]);
        assert_eq!(none, [OsString::from("MYSQL_PWD")]);
    }
}
