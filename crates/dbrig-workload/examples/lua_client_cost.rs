//! The per-event cost of a sysbench Lua script's client, without the rest of dbrig (host
//! facts, the store): one client's `thread_init`, then EVENTS events on one connection, on
//! one thread. Run it under `valgrind --tool=callgrind` twice with different event counts:
//! the difference in instructions over the difference in queries is the client's cost per
//! query (bench/lua-vs-sysbench has the recipe).
//!
//! Usage: `lua_client_cost SCRIPT EVENTS [TARGET_URL] [NAME=VALUE…]` (TARGET_URL defaults to
//! `mock:`; NAME=VALUE are the script's options, e.g. `table_size=1000`).

use dbrig_core::{EventTally, KeyDistribution, KeyGenerator};
use dbrig_driver::{Connection, Target};
use dbrig_workload::{LuaOptions, LuaWorkload, RunOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [script, events, rest @ ..] = args.as_slice() else {
        return Err("usage: lua_client_cost SCRIPT EVENTS [TARGET_URL] [NAME=VALUE…]".into());
    };
    let events: u64 = events.parse()?;
    let (url, options) = match rest.first() {
        Some(u) if !u.contains('=') || u.contains("://") || u.ends_with(':') => {
            (u.clone(), rest[1..].to_vec())
        }
        _ => ("mock:".to_owned(), rest.to_vec()),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let target = Target::parse(&url)?;
        let w = LuaWorkload::new(LuaOptions {
            script: script.clone(),
            script_options: options,
        })?;
        let run = RunOptions {
            threads: 1,
            rand_seed: 7,
            ..RunOptions::default()
        };
        w.set_run(&run);
        let mut connect = run.connect_options();
        connect.lean = true;
        // As the runner does for a client with a worker thread of its own (MariaDB/MySQL up
        // to 64 clients): blocking socket calls.
        connect.own_thread = Some(dbrig_driver::OwnThread {
            abandon: std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
        });
        let mut conn = Connection::connect(&target, &connect).await?;
        let keys = KeyGenerator::new(KeyDistribution::Uniform, 7);
        let mut client = w.new_client(&mut conn, 0, 1, keys, 7).await?;
        let mut tally = EventTally::default();
        let (mut queries, mut failed) = (0u64, 0u64);
        for _ in 0..events {
            match client.event(&mut conn, &mut tally).await {
                Ok(()) => {}
                Err(_) => failed += 1,
            }
            queries += tally.queries.total();
            tally.clear();
        }
        client.finish(&mut conn, &mut tally).await;
        println!("events {events} queries {queries} failed {failed}");
        Ok::<_, Box<dyn std::error::Error>>(())
    })
}
