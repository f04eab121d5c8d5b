//! Records the git commit dbrig is built from (`DBRIG_GIT_COMMIT`), so `dbrig --version` and
//! every stored run say which code measured, not only the package version. Outside a git
//! checkout (a source tarball) the commit is `unknown`.

use std::path::PathBuf;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        .filter(|s| !s.is_empty())
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]);
    // Rebuild when HEAD moves: the worktree's HEAD, and the branch it points at (loose or
    // packed).
    if let Some(dir) = git(&["rev-parse", "--git-dir"]).map(PathBuf::from) {
        println!("cargo:rerun-if-changed={}", dir.join("HEAD").display());
    }
    if let Some(common) = git(&["rev-parse", "--git-common-dir"]).map(PathBuf::from) {
        println!(
            "cargo:rerun-if-changed={}",
            common.join("packed-refs").display()
        );
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={}", common.join(branch).display());
        }
    }
    println!(
        "cargo:rustc-env=DBRIG_GIT_COMMIT={}",
        commit.as_deref().unwrap_or("unknown")
    );
}
