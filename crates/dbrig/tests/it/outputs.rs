//! Where results go (issue 30 items 11 and 24): a results database removed or replaced during a
//! run is noticed, its results saved to a file the run names, and the run fails; every output
//! place of a plan is checked before its first trial.

use std::path::Path;

use crate::{dbrig, error_line, text};

fn runs_in(file: &Path) -> Vec<(u32, String)> {
    let store = dbrig_store::Store::open(file).unwrap();
    let mut out = Vec::new();
    for r in store.runs().unwrap() {
        for cell in store.cells(r.id).unwrap() {
            for t in store.trials(cell.id).unwrap() {
                out.push((r.id.0 as u32, t.status.as_str().to_owned()));
            }
        }
    }
    out
}

/// `rm results.db` while a single command runs: the run is written back to the path, and the
/// command says so and fails (it printed "Stored as run 1" over a file that was gone).
#[test]
fn a_results_database_removed_during_a_run_is_saved_and_said() {
    let out = tempfile::tempdir().unwrap();
    let db = out.path().join("results.db");
    let r = dbrig(
        out.path(),
        &[
            "run",
            "oltp_point_select",
            "--target",
            "mock:",
            "--time",
            "0.3",
            "--before-trial",
            &format!("rm -f {}", db.display()),
        ],
    );
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    let e = error_line(&r);
    assert!(
        e.contains(&format!(
            "results database {} was removed while dbrig had it open",
            db.display()
        )) && e.contains(&format!(
            "run 1's results (and the file's earlier runs) were saved to {}",
            db.display()
        )),
        "{e}"
    );
    assert!(
        text(&r).contains("warning: results database"),
        "said as soon as a trial was recorded: {}",
        text(&r)
    );
    assert_eq!(runs_in(&db), vec![(1, "done".to_owned())]);
}

/// A plan's results database replaced by another file mid-run: the run's results are saved
/// beside it (the other file is left alone), named in the error line.
#[test]
fn a_results_database_replaced_during_a_plan_is_saved_beside_it() {
    let out = tempfile::tempdir().unwrap();
    let o = out.path();
    let db = o.join("results.db");
    let flag = o.join("replaced");
    let plan = o.join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"moved\"\ntrials = 2\nduration = 0.2\nclients = [1]\n\
             [[configuration]]\nname = \"A\"\ntarget = \"mock:\"\n\
             [[workload]]\nname = \"oltp_point_select\"\n\
             [environment.hooks]\nbefore-trial = \"if [ ! -f {flag} ]; then touch {flag}; mv {db} {moved}; echo not a database > {db}; fi\"\n",
            flag = flag.display(),
            db = db.display(),
            moved = o.join("moved.db").display(),
        ),
    )
    .unwrap();
    let r = dbrig(o, &["run", plan.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    let saved = o.join("results-run-1.db");
    let e = error_line(&r);
    assert!(
        e.contains("was replaced by another file while dbrig had it open")
            && e.contains(&format!("were saved to {}", saved.display())),
        "{e}"
    );
    assert!(
        text(&r).contains(&format!("results in {}", saved.display())),
        "{}",
        text(&r)
    );
    assert_eq!(
        runs_in(&saved),
        vec![(1, "done".to_owned()), (1, "done".to_owned())]
    );
    assert_eq!(
        std::fs::read_to_string(&db).unwrap(),
        "not a database\n",
        "the file now at the path is left alone"
    );
}

fn mock_plan(dir: &Path) -> std::path::PathBuf {
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        "name = \"places\"\ntrials = 2\nduration = 0.2\nclients = [1]\n\
         [[configuration]]\nname = \"A\"\ntarget = \"mock:\"\n\
         [[workload]]\nname = \"oltp_point_select\"\n",
    )
    .unwrap();
    plan
}

/// A plan run with `--results` (or `DBRIG_RESULTS`) from a folder without `dbrig-out/`: the
/// HTML page's folder is made before the first trial and the page written (it measured every
/// trial, then failed on the page).
#[test]
fn a_plan_with_results_elsewhere_writes_its_page() {
    let dir = tempfile::tempdir().unwrap();
    let plan = mock_plan(dir.path());
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let results = dir.path().join("results.db");
    for (env, args) in [
        (None, vec!["--results", results.to_str().unwrap()]),
        (Some(results.to_str().unwrap()), vec![]),
    ] {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_dbrig"));
        c.current_dir(&work)
            .args(["run", plan.to_str().unwrap()])
            .args(&args)
            .env_remove("DBRIG_RESULTS");
        if let Some(e) = env {
            c.env("DBRIG_RESULTS", e);
        }
        let r = c.output().unwrap();
        assert!(r.status.success(), "{}", text(&r));
        assert!(
            !text(&r).contains("could not update the HTML report"),
            "{}",
            text(&r)
        );
    }
    assert!(work.join("dbrig-out/run-1.html").is_file());
    assert!(work.join("dbrig-out/run-2.html").is_file());
}

/// An output place that cannot be written is refused before the first trial: nothing is
/// measured, the line names the place and the option.
#[test]
fn an_unwritable_output_place_is_refused_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let plan = mock_plan(dir.path());
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let out = file.join("out");
    let results = dir.path().join("results.db");
    let r = std::process::Command::new(env!("CARGO_BIN_EXE_dbrig"))
        .args(["run", plan.to_str().unwrap(), "--results"])
        .arg(&results)
        .arg(format!("--out={}", out.display()))
        .output()
        .unwrap();
    let e = error_line(&r);
    assert!(
        e.contains(&format!(
            "cannot write the plan's HTML page in {}",
            out.display()
        )) && e.contains("--out")
            && e.contains("before anything was measured"),
        "{e}"
    );
    assert!(!text(&r).contains("trial 1:"), "no trial ran: {}", text(&r));
    assert!(!results.exists() || runs_in(&results).is_empty());
    // tpch power --chart into a folder that is not there: refused before the power test.
    let r = dbrig(
        dir.path(),
        &[
            "tpch",
            "power",
            "--target",
            "mock:",
            "--chart",
            dir.path().join("no/such/chart.svg").to_str().unwrap(),
        ],
    );
    let e = error_line(&r);
    assert!(
        e.contains("cannot write the --chart file in") && e.contains("no such folder"),
        "{e}"
    );
}
