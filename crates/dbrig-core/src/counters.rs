//! Query counters, counted the way sysbench counts them.

use serde::{Deserialize, Serialize};

/// sysbench's classification of one executed statement: a statement that returned a result
/// set is a *read*; a DML statement that changed rows is a *write*; everything else (BEGIN,
/// COMMIT, DML that changed no rows) is *other*.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StatementClass {
    Read,
    Write,
    Other,
}

impl StatementClass {
    /// Classify from what the driver saw: whether a result set came back, and how many rows
    /// a DML statement changed.
    pub fn classify(returned_result_set: bool, rows_affected: u64) -> Self {
        if returned_result_set {
            StatementClass::Read
        } else if rows_affected > 0 {
            StatementClass::Write
        } else {
            StatementClass::Other
        }
    }
}

/// Read / write / other statement counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueryCounters {
    pub read: u64,
    pub write: u64,
    pub other: u64,
}

impl QueryCounters {
    pub fn total(&self) -> u64 {
        self.read + self.write + self.other
    }

    pub fn count(&mut self, class: StatementClass) {
        match class {
            StatementClass::Read => self.read += 1,
            StatementClass::Write => self.write += 1,
            StatementClass::Other => self.other += 1,
        }
    }

    pub fn add(&mut self, other: &QueryCounters) {
        self.read += other.read;
        self.write += other.write;
        self.other += other.other;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification_follows_sysbench() {
        assert_eq!(StatementClass::classify(true, 0), StatementClass::Read);
        // A result set decides, whatever the affected-row count says (RETURNING, say).
        assert_eq!(StatementClass::classify(true, 3), StatementClass::Read);
        assert_eq!(StatementClass::classify(false, 1), StatementClass::Write);
        assert_eq!(StatementClass::classify(false, 0), StatementClass::Other);
    }

    /// Different counts per class, so a swapped or merged pair of counters shows.
    #[test]
    fn counts_and_sums_keep_each_class_apart() {
        let mut c = QueryCounters::default();
        let classes = [
            (StatementClass::Read, 1),
            (StatementClass::Write, 2),
            (StatementClass::Other, 4),
        ];
        for (class, n) in classes {
            for _ in 0..n {
                c.count(class);
            }
        }
        assert_eq!(
            c,
            QueryCounters {
                read: 1,
                write: 2,
                other: 4
            }
        );
        c.add(&QueryCounters {
            read: 10,
            write: 20,
            other: 40,
        });
        assert_eq!((c.read, c.write, c.other, c.total()), (11, 22, 44, 77));
    }
}
