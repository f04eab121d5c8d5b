//! dbrig-server (placeholder while the crate is built).
