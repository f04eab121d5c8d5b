//! Restart detection: the marks and the rule are plain values of `dbrig_core::results` (they
//! are stored with every trial); re-exported here where the managed servers produce them.

pub use dbrig_core::results::{LifeMark, server_restarted};
