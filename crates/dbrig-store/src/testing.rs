//! Test support: a writer for tests and fixtures that fill a results database with made-up
//! runs (`dbrig_report::fixture`, the store's own tests). Compiled only for this crate's tests
//! and with the `test-support` feature, which only dev-dependencies turn on: nothing shipped
//! can reach it.

use crate::store::Store;
use crate::writer::StoreWriter;

/// A writer on `store`, as the recorder has one.
pub fn writer(store: &mut Store) -> StoreWriter<'_> {
    StoreWriter::for_recorder(store)
}
