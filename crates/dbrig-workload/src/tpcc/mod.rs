//! TPC-C. This branch holds only the stored-procedure mode ([`procedures`]); the `tpcc`
//! branch's module (schema, load, client-side transactions, the kind) replaces this file when
//! it is merged, keeping the `pub mod procedures;` line.

pub mod procedures;
