//! One module per kind of workload, each implementing [`crate::kind::Kind`] and registered in
//! [`crate::kind::REGISTRY`]. The client-driven kinds (OLTP, pgbench scripts, Lua scripts,
//! connect) share the runner's client loop through `clients.rs`; the TPC-H tests share their
//! options and data through `tpch.rs`.

mod clients;
pub mod connect;
pub mod load;
pub mod lua;
pub mod micro;
pub mod oltp;
pub mod perfrun;
pub mod script;
pub mod sql_bench;
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
pub use tpch::{PowerRef, TpchPowerOptions};
pub use tpch_power::TpchPower;
pub use tpch_throughput::TpchThroughput;
