//! One module per kind of workload, each implementing [`crate::kind::Kind`], and the registry
//! ([`REGISTRY`]) that resolves a plan's name to one of them. The client-driven kinds (OLTP, pgbench scripts, Lua scripts,
//! connect, TPC-C) share the runner's client loop through `clients.rs`; the TPC-H tests share their
//! options and data through `tpch.rs`.

use crate::error::WorkloadError;
use crate::kind::{Registration, WorkloadKind};

mod clients;
pub mod connect;
pub mod load;
pub mod lua;
pub mod micro;
pub mod oltp;
pub mod perfrun;
pub mod script;
pub mod sql_bench;
pub mod tpcc;
pub mod tpch;
pub mod tpch_power;
pub mod tpch_throughput;

pub use connect::Connect;
pub use load::Load;
pub use lua::LuaScript;
pub use micro::Micro;
pub use oltp::SysbenchOltp;
pub use perfrun::Perfrun;
pub use script::PgbenchScripts;
pub use sql_bench::SqlBench;
pub use tpcc::Tpcc;
pub use tpch::{PowerRef, TpchPowerOptions};
pub use tpch_power::TpchPower;
pub use tpch_throughput::TpchThroughput;

/// Every kind, in the order a name is tried: the one list a new kind joins.
pub const REGISTRY: &[Registration] = &[
    lua::REGISTRATION,
    oltp::REGISTRATION,
    connect::REGISTRATION,
    script::REGISTRATION,
    micro::REGISTRATION,
    tpch_power::REGISTRATION,
    tpch_throughput::REGISTRATION,
    perfrun::REGISTRATION,
    load::REGISTRATION,
    sql_bench::REGISTRATION,
    tpcc::REGISTRATION,
];

/// The kinds a plan runs besides the OLTP workloads, for `dbrig list`: name and what a
/// trial does (the options are those of `dbrig micro NAME` and the kinds' option structs).
pub fn plan_only_kinds() -> Vec<(&'static str, &'static str)> {
    REGISTRY
        .iter()
        .flat_map(|r| r.listed.iter().copied())
        .collect()
}

impl WorkloadKind {
    /// The options of the kind named `name` that are paths (keys kebab-case), which a plan
    /// resolves against its own folder: pgbench scripts (`FILE@WEIGHT`), query folders, the
    /// sql-bench suite, memory_load's server-side file folder.
    pub fn path_options(name: &str) -> &'static [&'static str] {
        let name = name.trim().to_ascii_lowercase().replace('-', "_");
        REGISTRY
            .iter()
            .map(|r| (r.path_options)(&name))
            .find(|p| !p.is_empty())
            .unwrap_or(&[])
    }

    /// The kind named `name` with its options (a JSON object; keys kebab-case). OLTP names
    /// keep their aliases; micro-benchmarks and `tpch_power` accept `-` for `_`. A name ending
    /// in `.lua` is always a sysbench Lua script (a file), never dbrig's workload of that name.
    pub fn from_json(name: &str, options: &serde_json::Value) -> Result<Self, WorkloadError> {
        let empty = serde_json::Value::Object(serde_json::Map::new());
        let options = if options.is_null() { &empty } else { options };
        REGISTRY
            .iter()
            .find_map(|r| (r.parse)(name, options))
            .unwrap_or_else(|| Err(WorkloadError::UnknownWorkload(name.to_owned())))
            .map(WorkloadKind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbrig_core::results::ResultKind;
    use serde_json::json;

    #[test]
    fn names_resolve_to_their_kind() {
        let o = WorkloadKind::from_json("oltp_read_write", &json!({"table-size": 10})).unwrap();
        assert!(o.uses_clients() && o.is_timed() && o.writes());
        assert_eq!(o.options_json()["table-size"], 10);
        let ro = WorkloadKind::from_json("oltp_read_only", &serde_json::Value::Null).unwrap();
        assert!(!ro.writes());
        let m =
            WorkloadKind::from_json("scan-filter", &json!({"rows": 7, "wide_rows": 0})).unwrap();
        assert_eq!(m.name(), "scan_filter");
        assert!(!m.uses_clients() && !m.is_timed() && !m.writes());
        assert_eq!(m.options_json()["rows"], 7);
        assert_eq!(m.options_json()["wide_rows"], 0);
        let t =
            WorkloadKind::from_json("tpch-power", &json!({"sf": 0.01, "queries": ["1"]})).unwrap();
        assert_eq!(t.name(), "tpch_power");
        assert!(!t.writes());
        let r =
            WorkloadKind::from_json("tpch_power", &json!({"sf": 0.01, "refresh": true})).unwrap();
        assert!(r.writes(), "RF1/RF2 change the data");
    }

    #[test]
    fn every_listed_plan_kind_resolves() {
        for (name, _) in plan_only_kinds() {
            let options = match name {
                n if n.starts_with("tpch") => json!({"sf": 0.01}),
                "perfrun" => json!({"tpch": true}),
                "script" => json!({"builtins": ["select-only@2", "tpcb"]}),
                "sql-bench" => json!({"tests": ["connect"], "small-test": true}),
                "load" => json!({"of": "oltp_read_only"}),
                _ => json!({}),
            };
            let k = WorkloadKind::from_json(name, &options).unwrap();
            assert_eq!(k.name(), name.replace('-', "_"));
        }
    }

    /// Every kind of stored result has a registered kind that produces it: a new
    /// `TrialResult` variant without its `Kind` fails here (the match has no wildcard).
    #[test]
    fn every_result_kind_has_a_registered_kind() {
        for kind in ResultKind::ALL {
            // Exhaustive on purpose: a new variant must be added here and registered.
            let _: () = match kind {
                ResultKind::Oltp
                | ResultKind::Micro
                | ResultKind::TpchPower
                | ResultKind::TpchThroughput
                | ResultKind::Perfrun
                | ResultKind::SqlBench
                | ResultKind::Load
                | ResultKind::Tpcc => (),
            };
            assert!(
                REGISTRY.iter().any(|r| r.result == kind),
                "no registered Kind produces {kind:?}"
            );
        }
        // And what a registration says it produces is what its kinds produce.
        for (name, options) in [
            ("oltp_read_write", json!({})),
            ("connect", json!({})),
            ("script", json!({"builtins": ["tpcb"]})),
            ("tmp_groupby", json!({})),
            ("tpch-power", json!({"sf": 0.01})),
            ("tpch-throughput", json!({"sf": 0.01})),
            ("perfrun", json!({"tpch": true})),
            ("load", json!({"of": "oltp_read_only"})),
            ("sql-bench", json!({"tests": ["connect"]})),
            ("tpcc", json!({"warehouses": 2})),
        ] {
            let k = WorkloadKind::from_json(name, &options).unwrap();
            let r = REGISTRY
                .iter()
                .find(|r| (r.parse)(name, &options).is_some())
                .unwrap();
            assert_eq!(k.result_kind(), r.result, "{name}");
        }
    }

    #[test]
    fn perfrun_needs_one_query_source() {
        let e = WorkloadKind::from_json("perfrun", &json!({})).unwrap_err();
        assert!(e.to_string().contains("queries = DIR"), "{e}");
        let e = WorkloadKind::from_json("perfrun", &json!({"tpch": true, "queries": "/tmp"}))
            .unwrap_err();
        assert!(e.to_string().contains("not both"), "{e}");
        let e =
            WorkloadKind::from_json("perfrun", &json!({"queries": "/nonexistent/q"})).unwrap_err();
        assert!(e.to_string().contains("cannot read the folder"), "{e}");
        let p = WorkloadKind::from_json("perfrun", &json!({"tpch": true, "filter": "rows_a > 1"}))
            .unwrap();
        assert!(p.has_preflight() && !p.writes() && p.data_identity().is_none());
        assert_eq!(p.options_json()["filter"], "rows_a > 1");
    }

    #[test]
    fn bad_options_name_the_option() {
        let e = WorkloadKind::from_json("memory_load", &json!({"rowz": 1})).unwrap_err();
        assert!(
            e.to_string().contains("unknown option 'rowz'") && e.to_string().contains("rows"),
            "{e}"
        );
        let e = WorkloadKind::from_json("tmp_groupby", &json!({"runs": 0})).unwrap_err();
        assert!(
            e.to_string()
                .contains("0 is out of range: give 1 to 1000000 runs"),
            "{e}"
        );
        let e = WorkloadKind::from_json("tpch-power", &json!({"sf": 0})).unwrap_err();
        assert!(e.to_string().contains("scale factor"), "{e}");
        let e = WorkloadKind::from_json("tpch-power", &json!({"sf": 1, "qeries": []})).unwrap_err();
        assert!(e.to_string().contains("qeries"), "{e}");
        let e = WorkloadKind::from_json("tpch-power", &json!({"sf": 1, "streams": 2})).unwrap_err();
        assert!(e.to_string().contains("tpch-throughput"), "{e}");
        let t =
            WorkloadKind::from_json("tpch-throughput", &json!({"sf": 0.01, "streams": 2})).unwrap();
        assert_eq!(
            (t.name(), t.options_json()["streams"].as_u64()),
            ("tpch_throughput", Some(2))
        );
        let e = WorkloadKind::from_json("nope", &json!({})).unwrap_err();
        assert!(matches!(e, WorkloadError::UnknownWorkload(_)), "{e}");
    }
}
