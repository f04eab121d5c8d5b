//! dbrig-workload (placeholder while the crate is built).
