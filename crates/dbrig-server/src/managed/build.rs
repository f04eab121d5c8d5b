//! Servers built from source as part of a configuration: a `[[server]]` with `source` and
//! `build` is built once per (source revision, recipe, flags) into an install prefix dbrig
//! chooses, `<builds>/<key>/prefix`, and that prefix is what the server runs from. The key
//! folder keeps the build's log and `build.json` (what [`BuildInfo`] records with every
//! trial); a later plan with the same key reuses the prefix. The built-in recipe is the seeds'
//! `BUILD/compile-amd64-max`: cmake RelWithDebInfo with their CFLAGS, OQGraph off, the RPM
//! layout with the server in `libexec/`, installed as an ordinary user can.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use dbrig_core::results::BuildInfo;
use sha2::{Digest, Sha256};

use super::def::ServerDef;
use super::{ManagedError, Result};

/// The built-in recipe's name.
pub const RECIPE_CMAKE: &str = "cmake";

/// The seeds' CFLAGS (BUILD/compile-amd64-max).
pub const DEFAULT_FLAGS: &str =
    "-O3 -g -fno-omit-frame-pointer -fno-strict-aliasing -DNDEBUG -DDBUG_OFF";

/// The seeds' build script, with dbrig's folders: cmake configures out of tree in
/// `$DBRIG_BUILD_DIR` and installs into `$DBRIG_PREFIX`.
const CMAKE_SCRIPT: &str = r#"set -e
INSTDIR="$DBRIG_PREFIX"
cmake -S "$DBRIG_SOURCE" -B "$DBRIG_BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DINSTALL_LAYOUT=RPM -DINSTALL_SCRIPTDIR=bin -DINSTALL_MYSQLDATADIR=var \
  -DINSTALL_SBINDIR=libexec -DINSTALL_SUPPORTFILESDIR=share -DINSTALL_SYSCONFDIR=etc \
  -DINSTALL_SYSCONF2DIR=etc/my.cnf.d -DCMAKE_INSTALL_PREFIX="$INSTDIR" \
  -DMYSQL_DATADIR="$INSTDIR/var" -DWITH_READLINE=1 -DWITHOUT_OQGRAPH_STORAGE_ENGINE=1 \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="$CFLAGS" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$CXXFLAGS"
make -C "$DBRIG_BUILD_DIR" -j"$(nproc)"
make -C "$DBRIG_BUILD_DIR" install
"#;

/// Lines of the build log a failure carries.
const TAIL_LINES: usize = 15;

fn io_err(server: &str, context: String) -> impl FnOnce(std::io::Error) -> ManagedError {
    let server = server.to_owned();
    move |source| ManagedError::Io {
        server,
        context,
        source,
    }
}

/// Builds the server of `def` unless the same (revision, recipe, flags) was built before
/// under `builds_dir`; returns the install prefix and what to record.
pub fn ensure_build(def: &ServerDef, builds_dir: &Path) -> Result<(PathBuf, BuildInfo)> {
    let (Some(source), Some(recipe)) = (&def.source, &def.build) else {
        return Err(ManagedError::BadDefinition(format!(
            "server {}: a build needs both source and build",
            def.name
        )));
    };
    let name = &def.name;
    // Every path the recipe is given is absolute: it runs in the source tree, where a relative
    // output folder (the default `dbrig-out`) would put the install inside the tree.
    let source = std::path::absolute(source).map_err(io_err(name, "source path".into()))?;
    let builds_dir =
        std::path::absolute(builds_dir).map_err(io_err(name, "builds folder path".into()))?;
    if !source.exists() {
        return Err(ManagedError::BadDefinition(format!(
            "server {name}: source {} does not exist",
            source.display()
        )));
    }
    let flags = def
        .build_flags
        .clone()
        .unwrap_or_else(|| DEFAULT_FLAGS.to_owned());
    let recipe_label = if recipe.trim() == RECIPE_CMAKE {
        "cmake-relwithdebinfo".to_owned()
    } else {
        recipe.clone()
    };
    let revision = revision(&source).map_err(io_err(name, "reading the source revision".into()))?;
    let key = {
        let mut h = Sha256::new();
        for part in [revision.as_str(), recipe_label.as_str(), flags.as_str()] {
            h.update(part.as_bytes());
            h.update(b"\n");
        }
        hex(&h.finalize())[..16].to_owned()
    };
    let dir = builds_dir.join(&key);
    let prefix = dir.join("prefix");
    let info_path = dir.join("build.json");
    let compiler = compiler_version();
    let mut info = BuildInfo {
        source: source.display().to_string(),
        revision,
        recipe: recipe_label,
        flags: flags.clone(),
        compiler,
        prefix: prefix.display().to_string(),
        cached: false,
        build_ms: None,
    };
    if prefix.is_dir()
        && let Ok(text) = fs::read_to_string(&info_path)
        && let Ok(done) = serde_json::from_str::<BuildInfo>(&text)
    {
        // The compiler of the build that made the prefix, not today's.
        return Ok((
            prefix,
            BuildInfo {
                cached: true,
                build_ms: None,
                ..done
            },
        ));
    }
    fs::create_dir_all(&dir).map_err(io_err(name, format!("creating {}", dir.display())))?;
    let _ = fs::remove_dir_all(&prefix);
    let build_dir = dir.join("build");
    fs::create_dir_all(&build_dir).map_err(io_err(name, "creating the build folder".into()))?;
    let log_path = dir.join("build.log");
    let log = fs::File::create(&log_path).map_err(io_err(name, "creating the build log".into()))?;
    let log2 = log
        .try_clone()
        .map_err(io_err(name, "opening the build log".into()))?;
    let script = if recipe.trim() == RECIPE_CMAKE {
        CMAKE_SCRIPT
    } else {
        recipe.as_str()
    };
    let cxxflags = if recipe.trim() == RECIPE_CMAKE {
        format!("{flags} -felide-constructors")
    } else {
        flags.clone()
    };
    let cwd = if source.is_dir() {
        source.clone()
    } else {
        source.parent().unwrap_or(Path::new("/")).to_owned()
    };
    let started = Instant::now();
    let status = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(&cwd)
        .env("DBRIG_PREFIX", &prefix)
        .env("DBRIG_SOURCE", &source)
        .env("DBRIG_BUILD_DIR", &build_dir)
        .env("CFLAGS", &flags)
        .env("CXXFLAGS", &cxxflags)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log2)
        .status()
        .map_err(io_err(name, "running the build".into()))?;
    let elapsed = started.elapsed().as_secs_f64();
    let _ = fs::remove_dir_all(&build_dir);
    if !status.success() || !prefix.is_dir() {
        let _ = fs::remove_dir_all(&prefix);
        let why = if status.success() {
            format!("{status}, but nothing was installed into $DBRIG_PREFIX")
        } else {
            status.to_string()
        };
        return Err(ManagedError::BuildFailed {
            server: name.clone(),
            status: why,
            tail: tail(&log_path, TAIL_LINES),
            log: log_path,
        });
    }
    info.build_ms = Some((elapsed * 1000.0) as u64);
    let mut f = fs::File::create(&info_path).map_err(io_err(name, "writing build.json".into()))?;
    let text = serde_json::to_string_pretty(&info).unwrap_or_default();
    f.write_all(text.as_bytes())
        .map_err(io_err(name, "writing build.json".into()))?;
    Ok((prefix, info))
}

/// One entry of a cmake build tree's `CMakeCache.txt` (`NAME:TYPE=VALUE`).
pub(crate) fn cmake_cache_value(tree: &Path, name: &str) -> Option<String> {
    let text = fs::read_to_string(tree.join("CMakeCache.txt")).ok()?;
    text.lines().find_map(|l| {
        let (key, value) = l.split_once('=')?;
        let (key_name, _) = key.split_once(':')?;
        (key_name == name).then(|| value.trim().to_owned())
    })
}

/// What a trial records of a `build-tree` run in place: its source tree's revision, the
/// compiler and flags the tree was configured with (its `CMakeCache.txt`), and the tree
/// itself where a built prefix would be. Nothing is built: `cached` is true.
pub fn build_tree_info(def: &ServerDef) -> Result<BuildInfo> {
    let name = &def.name;
    let Some(tree) = &def.build_tree else {
        return Err(ManagedError::BadDefinition(format!(
            "server {name}: no build-tree"
        )));
    };
    let tree = std::path::absolute(tree).map_err(io_err(name, "build tree path".into()))?;
    let source = def.build_tree_source().unwrap_or_else(|| tree.clone());
    let revision = revision(&source).map_err(io_err(
        name,
        format!("reading the revision of {}", source.display()),
    ))?;
    let cache = |key: &str| cmake_cache_value(&tree, key).filter(|v| !v.is_empty());
    let build_type = cache("CMAKE_BUILD_TYPE");
    let flags = [
        cache("CMAKE_C_FLAGS"),
        build_type
            .as_ref()
            .and_then(|t| cache(&format!("CMAKE_C_FLAGS_{}", t.to_ascii_uppercase()))),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(" ");
    let compiler = match cache("CMAKE_C_COMPILER") {
        Some(cc) => command_version(&cc),
        None => "unknown (no CMAKE_C_COMPILER in the tree's CMakeCache.txt)".to_owned(),
    };
    Ok(BuildInfo {
        source: source.display().to_string(),
        revision,
        recipe: format!(
            "build tree run in place ({})",
            build_type.as_deref().unwrap_or("build type unknown")
        ),
        flags,
        compiler,
        prefix: tree.display().to_string(),
        cached: true,
        build_ms: None,
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The last `n` lines of a file.
fn tail(path: &Path, n: usize) -> String {
    let mut text = String::new();
    if let Ok(mut f) = fs::File::open(path) {
        let mut bytes = Vec::new();
        let _ = f.read_to_end(&mut bytes);
        text = String::from_utf8_lossy(&bytes).into_owned();
    }
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(n)..].join("\n");
    if tail.is_empty() {
        "(the build printed nothing)".to_owned()
    } else {
        tail
    }
}

/// The first line of `$CC --version` (`cc`).
fn compiler_version() -> String {
    command_version(&std::env::var("CC").unwrap_or_else(|_| "cc".to_owned()))
}

/// The first line of `CC --version`.
fn command_version(cc: &str) -> String {
    match Command::new(cc).arg("--version").output() {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_owned(),
        _ => format!("unknown ({cc} --version failed)"),
    }
}

/// What identifies the source: its git commit (with a hash of the uncommitted changes), a
/// tarball's SHA-256, or a hash of a plain folder's file names, sizes and modification times.
fn revision(source: &Path) -> std::io::Result<String> {
    if source.is_file() {
        let mut h = Sha256::new();
        let mut f = fs::File::open(source)?;
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = f.read(&mut buf)?;
            if n == 0 {
                break;
            }
            h.update(&buf[..n]);
        }
        return Ok(format!("sha256 {}", hex(&h.finalize())));
    }
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(source)
            .args(args)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| o.stdout)
    };
    if source.join(".git").exists()
        && let Some(head) = git(&["rev-parse", "HEAD"])
    {
        let head = String::from_utf8_lossy(&head).trim().to_owned();
        let diff = git(&["diff", "HEAD"]).unwrap_or_default();
        let untracked = git(&["ls-files", "--others", "--exclude-standard"]).unwrap_or_default();
        if diff.is_empty() && untracked.is_empty() {
            return Ok(format!("git {head}"));
        }
        let mut h = Sha256::new();
        h.update(&diff);
        h.update(&untracked);
        return Ok(format!("git {head} +dirty {}", &hex(&h.finalize())[..12]));
    }
    let mut entries = Vec::new();
    walk(source, source, &mut entries)?;
    entries.sort();
    let mut h = Sha256::new();
    for e in &entries {
        h.update(e.as_bytes());
        h.update(b"\n");
    }
    Ok(format!("tree {}", &hex(&h.finalize())[..16]))
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) -> std::io::Result<()> {
    for e in fs::read_dir(dir)? {
        let e = e?;
        let meta = e.metadata()?;
        let path = e.path();
        if meta.is_dir() {
            walk(root, &path, out)?;
        } else {
            let mtime = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            let rel = path.strip_prefix(root).unwrap_or(&path);
            out.push(format!("{} {} {mtime}", rel.display(), meta.len()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::managed::Engine;

    fn def(source: &Path, build: &str) -> ServerDef {
        let mut d = ServerDef::new("b", Engine::Mariadb);
        d.source = Some(source.to_owned());
        d.build = Some(build.to_owned());
        d
    }

    /// Built once per key, reused after; other flags make another build; a failure carries
    /// the log's last lines and leaves no prefix.
    #[test]
    fn builds_are_cached_by_revision_recipe_and_flags() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("src");
        fs::create_dir(&src).unwrap();
        fs::write(src.join("a.c"), "int main(){}").unwrap();
        let builds = tmp.path().join("builds");
        let cmd = r#"mkdir -p "$DBRIG_PREFIX/bin" && echo "$CFLAGS" > "$DBRIG_PREFIX/flags" && echo built >> "$DBRIG_SOURCE/count""#;
        let d = def(&src, cmd);
        let (p1, i1) = ensure_build(&d, &builds).unwrap();
        assert!(!i1.cached && i1.build_ms.is_some());
        assert!(i1.revision.starts_with("tree "), "{}", i1.revision);
        assert_eq!(i1.flags, DEFAULT_FLAGS);
        assert_eq!(
            fs::read_to_string(p1.join("flags")).unwrap().trim(),
            DEFAULT_FLAGS
        );
        // The build wrote into the tree: a new revision, so build again once.
        let (p2, i2) = ensure_build(&d, &builds).unwrap();
        assert_ne!(p1, p2);
        assert!(!i2.cached);
        fs::remove_file(src.join("count")).unwrap();
        let (p3, i3) = ensure_build(&d, &builds).unwrap();
        assert_eq!((p3, i3.cached), (p1.clone(), true));
        let mut other = d.clone();
        other.build_flags = Some("-O0".into());
        let (p4, _) = ensure_build(&other, &builds).unwrap();
        assert_ne!(p4, p1);
        let _ = fs::remove_file(src.join("count"));

        let bad = def(
            &src,
            "echo compiling; echo 'error: no such file' >&2; exit 3",
        );
        let e = ensure_build(&bad, &builds).unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, ManagedError::BuildFailed { .. }));
        assert!(
            text.contains("error: no such file") && text.contains("exit status: 3"),
            "{text}"
        );
        let nothing = def(&src, "true");
        let e = ensure_build(&nothing, &builds).unwrap_err().to_string();
        assert!(e.contains("nothing was installed"), "{e}");
    }

    /// A build tree's record: the source tree's revision, the cache's compiler and flags.
    #[test]
    fn a_build_tree_is_recorded_from_its_cmake_cache() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("src");
        let tree = tmp.path().join("build");
        fs::create_dir_all(&src).unwrap();
        fs::create_dir_all(&tree).unwrap();
        fs::write(src.join("a.c"), "int main(){}").unwrap();
        fs::write(
            tree.join("CMakeCache.txt"),
            format!(
                "CMAKE_HOME_DIRECTORY:INTERNAL={}\nCMAKE_BUILD_TYPE:STRING=RelWithDebInfo\nCMAKE_C_COMPILER:FILEPATH=/nonexistent/cc\nCMAKE_C_FLAGS:STRING=-march=native\nCMAKE_C_FLAGS_RELWITHDEBINFO:STRING=-O2 -g\n",
                src.display()
            ),
        )
        .unwrap();
        let mut d = ServerDef::new("t", Engine::Mariadb);
        d.build_tree = Some(tree.clone());
        let info = build_tree_info(&d).unwrap();
        assert_eq!(info.source, src.display().to_string());
        assert_eq!(info.prefix, tree.display().to_string());
        assert!(info.revision.starts_with("tree "), "{}", info.revision);
        assert_eq!(info.flags, "-march=native -O2 -g");
        assert_eq!(info.recipe, "build tree run in place (RelWithDebInfo)");
        assert!(
            info.compiler.contains("/nonexistent/cc"),
            "{}",
            info.compiler
        );
        assert!(info.cached && info.build_ms.is_none());
        // Another source file: another revision.
        fs::write(src.join("b.c"), "").unwrap();
        assert_ne!(build_tree_info(&d).unwrap().revision, info.revision);
    }

    #[test]
    fn a_tarball_is_identified_by_its_checksum() {
        let tmp = tempfile::tempdir().unwrap();
        let tar = tmp.path().join("x.tar.gz");
        fs::write(&tar, b"abc").unwrap();
        assert_eq!(
            revision(&tar).unwrap(),
            "sha256 ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
