//! dbrig-report (placeholder while the crate is built).
