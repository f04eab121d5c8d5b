//! dbrig-store (placeholder while the crate is built).
