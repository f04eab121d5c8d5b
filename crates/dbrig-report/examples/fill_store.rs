//! Fill a results database through `dbrig_report::fixture` (test support), for
//! `bench/report-scale` and for trying the reports by hand.
//!
//! Usage: fill_store PATH [demo | mixed | singles | scale CONFIGURATIONS WORKLOADS CLIENTS
//! TRIALS INTERVALS] (default: scale 4 25 20 5 10, i.e. 2 000 cells × 5 trials). `mixed` is a
//! plan of every kind; `singles` one run of each single command.

use std::path::PathBuf;
use std::time::Instant;

use dbrig_report::fixture;
use dbrig_store::Store;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = PathBuf::from(
        args.first()
            .ok_or("usage: fill_store PATH [demo | mixed | singles | scale C W N T I]")?,
    );
    let mut store = Store::open(&path)?;
    let started = Instant::now();
    let run = match args.get(1).map(String::as_str) {
        Some("demo") => fixture::demo_run(&mut store)?,
        Some("mixed") => fixture::mixed_plan(&mut store)?,
        Some("singles") => fixture::single_runs(&mut store)?.perfrun,
        None | Some("scale") => {
            let n = |i: usize, default: usize| -> Result<usize, Box<dyn std::error::Error>> {
                Ok(args
                    .get(i)
                    .map(|s| s.parse())
                    .transpose()?
                    .unwrap_or(default))
            };
            let (c, w, k, t, iv) = (n(2, 4)?, n(3, 25)?, n(4, 20)?, n(5, 5)?, n(6, 10)?);
            let run = fixture::scale_run(&mut store, c, w, k, t, iv)?;
            eprintln!("{} cells × {t} trials", c * w * k);
            run
        }
        Some(other) => {
            return Err(format!("unknown kind {other:?} (demo, mixed, singles or scale)").into());
        }
    };
    eprintln!(
        "filled run {run} in {} in {:.1} s",
        path.display(),
        started.elapsed().as_secs_f64()
    );
    println!("{run}");
    Ok(())
}
