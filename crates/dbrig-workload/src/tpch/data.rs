//! The eight tables: tpchgen's generators turned into dbrig rows (for bulk loads) or into dbgen's
//! `.tbl` text (tpchgen's own `Display`, `|`-separated with a trailing `|`).
//!
//! Every generator takes `(scale_factor, part, num_parts)`; the parts of a table, concatenated
//! in order, are the whole table, so generation and loading split by parts.

use std::io::Write;
use std::path::Path;

use dbrig_core::Value;
use dbrig_driver::FieldWriter;
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator,
    PartSuppGenerator, RegionGenerator, SupplierGenerator,
};

/// Rows of one part of one table, produced lazily.
pub type Rows = Box<dyn Iterator<Item = Vec<Value>> + Send>;

/// One of the eight TPC-H tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Table {
    Region,
    Nation,
    Supplier,
    Customer,
    Part,
    PartSupp,
    Orders,
    LineItem,
}

fn text(s: impl ToString) -> Value {
    Value::Text(s.to_string())
}

impl Table {
    /// In load order (parents first, the big tables last).
    pub const ALL: [Table; 8] = [
        Table::Region,
        Table::Nation,
        Table::Supplier,
        Table::Customer,
        Table::Part,
        Table::PartSupp,
        Table::Orders,
        Table::LineItem,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Table::Region => "region",
            Table::Nation => "nation",
            Table::Supplier => "supplier",
            Table::Customer => "customer",
            Table::Part => "part",
            Table::PartSupp => "partsupp",
            Table::Orders => "orders",
            Table::LineItem => "lineitem",
        }
    }

    pub fn from_name(name: &str) -> Option<Table> {
        Table::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Tables by name (`dbrig tpch gen --tables`); all eight when none is named.
    pub fn parse_list(names: &[String]) -> Result<Vec<Table>, super::TpchError> {
        if names.is_empty() {
            return Ok(Table::ALL.to_vec());
        }
        names
            .iter()
            .map(|n| {
                Table::from_name(n.trim()).ok_or_else(|| super::TpchError::UnknownTable(n.clone()))
            })
            .collect()
    }

    pub fn columns(self) -> &'static [&'static str] {
        match self {
            Table::Region => &["r_regionkey", "r_name", "r_comment"],
            Table::Nation => &["n_nationkey", "n_name", "n_regionkey", "n_comment"],
            Table::Supplier => &[
                "s_suppkey",
                "s_name",
                "s_address",
                "s_nationkey",
                "s_phone",
                "s_acctbal",
                "s_comment",
            ],
            Table::Customer => &[
                "c_custkey",
                "c_name",
                "c_address",
                "c_nationkey",
                "c_phone",
                "c_acctbal",
                "c_mktsegment",
                "c_comment",
            ],
            Table::Part => &[
                "p_partkey",
                "p_name",
                "p_mfgr",
                "p_brand",
                "p_type",
                "p_size",
                "p_container",
                "p_retailprice",
                "p_comment",
            ],
            Table::PartSupp => &[
                "ps_partkey",
                "ps_suppkey",
                "ps_availqty",
                "ps_supplycost",
                "ps_comment",
            ],
            Table::Orders => &[
                "o_orderkey",
                "o_custkey",
                "o_orderstatus",
                "o_totalprice",
                "o_orderdate",
                "o_orderpriority",
                "o_clerk",
                "o_shippriority",
                "o_comment",
            ],
            Table::LineItem => &[
                "l_orderkey",
                "l_partkey",
                "l_suppkey",
                "l_linenumber",
                "l_quantity",
                "l_extendedprice",
                "l_discount",
                "l_tax",
                "l_returnflag",
                "l_linestatus",
                "l_shipdate",
                "l_commitdate",
                "l_receiptdate",
                "l_shipinstruct",
                "l_shipmode",
                "l_comment",
            ],
        }
    }

    /// Primary-key columns.
    pub fn primary_key(self) -> &'static str {
        match self {
            Table::Region => "r_regionkey",
            Table::Nation => "n_nationkey",
            Table::Supplier => "s_suppkey",
            Table::Customer => "c_custkey",
            Table::Part => "p_partkey",
            Table::PartSupp => "ps_partkey, ps_suppkey",
            Table::Orders => "o_orderkey",
            Table::LineItem => "l_orderkey, l_linenumber",
        }
    }

    /// Approximate row count at a scale factor (lineitem ≈ 4 per order).
    pub fn approx_rows(self, sf: f64) -> u64 {
        let n = match self {
            Table::Region => return 5,
            Table::Nation => return 25,
            Table::Supplier => 10_000.0,
            Table::Customer => 150_000.0,
            Table::Part => 200_000.0,
            Table::PartSupp => 800_000.0,
            Table::Orders => 1_500_000.0,
            Table::LineItem => 6_000_000.0,
        };
        (n * sf).ceil() as u64
    }

    /// How many parts to split the table into for `parallel` workers: at least one per
    /// worker for the big tables, and parts of at most ~500 000 rows.
    pub fn parts(self, sf: f64, parallel: u32) -> u32 {
        match self {
            Table::Region | Table::Nation => 1,
            _ => {
                let rows = self.approx_rows(sf);
                let by_size = rows.div_ceil(500_000).max(1);
                let by_workers = if rows >= 1_000 { parallel as u64 } else { 1 };
                by_size.max(by_workers).min(rows.max(1)) as u32
            }
        }
    }

    /// The rows of part `part` (1-based) of `num_parts`, as dbrig values: integers as `Int`,
    /// money as exact decimal text (`902.00`), dates as ISO text.
    pub fn rows(self, sf: f64, part: u32, num_parts: u32) -> Rows {
        let (p, n) = (part as i32, num_parts as i32);
        match self {
            Table::Region => Box::new(
                RegionGenerator::new(sf, p, n)
                    .iter()
                    .map(|r| vec![Value::Int(r.r_regionkey), text(r.r_name), text(r.r_comment)]),
            ),
            Table::Nation => Box::new(NationGenerator::new(sf, p, n).iter().map(|r| {
                vec![
                    Value::Int(r.n_nationkey),
                    text(r.n_name),
                    Value::Int(r.n_regionkey),
                    text(r.n_comment),
                ]
            })),
            Table::Supplier => Box::new(SupplierGenerator::new(sf, p, n).iter().map(|r| {
                vec![
                    Value::Int(r.s_suppkey),
                    text(r.s_name),
                    text(r.s_address),
                    Value::Int(r.s_nationkey),
                    text(r.s_phone),
                    text(r.s_acctbal),
                    Value::Text(r.s_comment),
                ]
            })),
            Table::Customer => Box::new(CustomerGenerator::new(sf, p, n).iter().map(|r| {
                vec![
                    Value::Int(r.c_custkey),
                    text(r.c_name),
                    text(r.c_address),
                    Value::Int(r.c_nationkey),
                    text(r.c_phone),
                    text(r.c_acctbal),
                    text(r.c_mktsegment),
                    text(r.c_comment),
                ]
            })),
            Table::Part => Box::new(PartGenerator::new(sf, p, n).iter().map(|r| {
                vec![
                    Value::Int(r.p_partkey),
                    text(r.p_name),
                    text(r.p_mfgr),
                    text(r.p_brand),
                    text(r.p_type),
                    Value::Int(r.p_size.into()),
                    text(r.p_container),
                    text(r.p_retailprice),
                    text(r.p_comment),
                ]
            })),
            Table::PartSupp => Box::new(PartSuppGenerator::new(sf, p, n).iter().map(|r| {
                vec![
                    Value::Int(r.ps_partkey),
                    Value::Int(r.ps_suppkey),
                    Value::Int(r.ps_availqty.into()),
                    text(r.ps_supplycost),
                    text(r.ps_comment),
                ]
            })),
            Table::Orders => Box::new(
                OrderGenerator::new(sf, p, n)
                    .iter()
                    .map(|r| order_row(&r, 0)),
            ),
            Table::LineItem => Box::new(
                LineItemGenerator::new(sf, p, n)
                    .iter()
                    .map(|r| lineitem_row(&r, 0)),
            ),
        }
    }

    /// The rows of part `part` of `num_parts` as dbrig's bulk text (the rows of
    /// [`Table::rows`], encoded as [`dbrig_driver::encode_bulk_row`] would), in ~1 MiB chunks
    /// produced lazily. Written straight from tpchgen's `Display` with `|` turned into tabs:
    /// TPC-H text never holds `|`, tabs, newlines or backslashes, so nothing needs escaping,
    /// and a load skips building a value per field (most of its client CPU).
    pub fn bulk_text(self, sf: f64, part: u32, num_parts: u32) -> TextChunks {
        let (p, n) = (part as i32, num_parts as i32);
        match self {
            Table::Region => text_chunks(RegionGenerator::new(sf, p, n).iter()),
            Table::Nation => text_chunks(NationGenerator::new(sf, p, n).iter()),
            Table::Supplier => text_chunks(SupplierGenerator::new(sf, p, n).iter()),
            Table::Customer => text_chunks(CustomerGenerator::new(sf, p, n).iter()),
            Table::Part => text_chunks(PartGenerator::new(sf, p, n).iter()),
            Table::PartSupp => text_chunks(PartSuppGenerator::new(sf, p, n).iter()),
            Table::Orders => text_chunks(OrderGenerator::new(sf, p, n).iter()),
            Table::LineItem => text_chunks(LineItemGenerator::new(sf, p, n).iter()),
        }
    }

    /// The rows of part `part` of `num_parts` as typed fields in an engine's binary bulk
    /// format (`W`: PostgreSQL's binary `COPY`, MariaDB's bulk command), in ~1 MiB chunks
    /// produced lazily, for the column types of `sql/common.sql` (keys INTEGER but the order
    /// keys BIGINT, money DECIMAL(15,2), DATE). Typed rather than text because it is the
    /// cheaper form on both sides: the server parsed the same 2 M lineitem rows in 2.9-3.3 s
    /// from PostgreSQL's binary against 3.7-5.6 s from text (issue 20's notes), and the
    /// client writes tpchgen's integers, cents and day numbers as their bytes instead of
    /// formatting them (formatting was 40 % of a MariaDB load's client CPU, and the bulk
    /// command's text path then split that text again: 15 %).
    pub fn typed<W: FieldWriter>(self, sf: f64, part: u32, num_parts: u32) -> TypedChunks<W> {
        let (p, n) = (part as i32, num_parts as i32);
        match self {
            Table::Region => binary_chunks(RegionGenerator::new(sf, p, n).iter(), |t, r| {
                t.row(3);
                t.int4(r.r_regionkey as i32);
                t.text(r.r_name);
                t.text(r.r_comment);
            }),
            Table::Nation => binary_chunks(NationGenerator::new(sf, p, n).iter(), |t, r| {
                t.row(4);
                t.int4(r.n_nationkey as i32);
                t.text(r.n_name);
                t.int4(r.n_regionkey as i32);
                t.text(r.n_comment);
            }),
            Table::Supplier => binary_chunks(SupplierGenerator::new(sf, p, n).iter(), |t, r| {
                t.row(7);
                t.int4(r.s_suppkey as i32);
                t.display(r.s_name);
                t.display(&r.s_address);
                t.int4(r.s_nationkey as i32);
                t.display(&r.s_phone);
                t.numeric(r.s_acctbal.0, 2);
                t.text(&r.s_comment);
            }),
            Table::Customer => binary_chunks(CustomerGenerator::new(sf, p, n).iter(), |t, r| {
                t.row(8);
                t.int4(r.c_custkey as i32);
                t.display(r.c_name);
                t.display(&r.c_address);
                t.int4(r.c_nationkey as i32);
                t.display(&r.c_phone);
                t.numeric(r.c_acctbal.0, 2);
                t.text(r.c_mktsegment);
                t.text(r.c_comment);
            }),
            Table::Part => binary_chunks(PartGenerator::new(sf, p, n).iter(), |t, r| {
                t.row(9);
                t.int4(r.p_partkey as i32);
                t.display(&r.p_name);
                t.display(r.p_mfgr);
                t.display(r.p_brand);
                t.text(r.p_type);
                t.int4(r.p_size);
                t.text(r.p_container);
                t.numeric(r.p_retailprice.0, 2);
                t.text(r.p_comment);
            }),
            Table::PartSupp => binary_chunks(PartSuppGenerator::new(sf, p, n).iter(), |t, r| {
                t.row(5);
                t.int4(r.ps_partkey as i32);
                t.int4(r.ps_suppkey as i32);
                t.int4(r.ps_availqty);
                t.numeric(r.ps_supplycost.0, 2);
                t.text(r.ps_comment);
            }),
            Table::Orders => binary_chunks(OrderGenerator::new(sf, p, n).iter(), |t, r| {
                t.row(9);
                t.int8(r.o_orderkey);
                t.int4(r.o_custkey as i32);
                t.display(r.o_orderstatus);
                t.numeric(r.o_totalprice.0, 2);
                t.date(unix_days(r.o_orderdate));
                t.text(r.o_orderpriority);
                t.display(r.o_clerk);
                t.int4(r.o_shippriority);
                t.text(r.o_comment);
            }),
            Table::LineItem => binary_chunks(LineItemGenerator::new(sf, p, n).iter(), |t, r| {
                t.row(16);
                t.int8(r.l_orderkey);
                t.int4(r.l_partkey as i32);
                t.int4(r.l_suppkey as i32);
                t.int4(r.l_linenumber);
                // A whole number, as its text ("17"); the column's scale makes it 17.00.
                t.numeric(r.l_quantity, 0);
                t.numeric(r.l_extendedprice.0, 2);
                t.numeric(r.l_discount.0, 2);
                t.numeric(r.l_tax.0, 2);
                t.text(r.l_returnflag);
                t.text(r.l_linestatus);
                t.date(unix_days(r.l_shipdate));
                t.date(unix_days(r.l_commitdate));
                t.date(unix_days(r.l_receiptdate));
                t.text(r.l_shipinstruct);
                t.text(r.l_shipmode);
                t.text(r.l_comment);
            }),
        }
    }

    /// dbgen's `.tbl` text of one part: one row per line, as tpchgen's `Display` writes it.
    pub fn tbl_part(self, sf: f64, part: u32, num_parts: u32, out: &mut Vec<u8>) {
        let (p, n) = (part as i32, num_parts as i32);
        macro_rules! lines {
            ($g:expr) => {
                for r in $g.iter() {
                    let _ = writeln!(out, "{r}");
                }
            };
        }
        match self {
            Table::Region => lines!(RegionGenerator::new(sf, p, n)),
            Table::Nation => lines!(NationGenerator::new(sf, p, n)),
            Table::Supplier => lines!(SupplierGenerator::new(sf, p, n)),
            Table::Customer => lines!(CustomerGenerator::new(sf, p, n)),
            Table::Part => lines!(PartGenerator::new(sf, p, n)),
            Table::PartSupp => lines!(PartSuppGenerator::new(sf, p, n)),
            Table::Orders => lines!(OrderGenerator::new(sf, p, n)),
            Table::LineItem => lines!(LineItemGenerator::new(sf, p, n)),
        }
    }
}

/// Bulk text of one part of one table, in chunks ending on row boundaries.
pub type TextChunks = Box<dyn Iterator<Item = Vec<u8>> + Send>;

/// Chunk size of [`Table::bulk_text`]: large enough that per-chunk overhead vanishes, small
/// enough that a load of any size streams through a bounded buffer.
const TEXT_CHUNK: usize = 1 << 20;

/// dbgen lines (`a|b|c|`) as bulk text lines (`a\tb\tc\n`), a chunk at a time.
fn text_chunks<R: std::fmt::Display>(rows: impl Iterator<Item = R> + Send + 'static) -> TextChunks {
    let mut rows = rows;
    Box::new(std::iter::from_fn(move || {
        let mut buf = Vec::with_capacity(TEXT_CHUNK + 4096);
        while buf.len() < TEXT_CHUNK {
            let Some(r) = rows.next() else { break };
            let start = buf.len();
            let _ = write!(buf, "{r}");
            for b in &mut buf[start..] {
                if *b == b'|' {
                    *b = b'\t';
                }
            }
            // The line's trailing separator becomes its end.
            if let Some(last) = buf.last_mut() {
                *last = b'\n';
            }
        }
        (!buf.is_empty()).then_some(buf)
    }))
}

/// Typed rows of one part of one table, in chunks ending on row boundaries.
pub type TypedChunks<W> = Box<dyn Iterator<Item = W> + Send>;

/// tpchgen's day number (days since 1992-01-01) as days since 1970-01-01.
fn unix_days(d: tpchgen::dates::TPCHDate) -> i32 {
    d.into_inner() + tpchgen::dates::TPCHDate::UNIX_EPOCH_OFFSET
}

/// Rows written by `encode` into chunks of about [`TEXT_CHUNK`] bytes.
fn binary_chunks<R: 'static, W: FieldWriter>(
    rows: impl Iterator<Item = R> + Send + 'static,
    encode: fn(&mut W, &R),
) -> TypedChunks<W> {
    let mut rows = rows;
    Box::new(std::iter::from_fn(move || {
        let mut chunk = W::with_capacity(TEXT_CHUNK + 4096);
        while chunk.len() < TEXT_CHUNK {
            let Some(r) = rows.next() else { break };
            encode(&mut chunk, &r);
        }
        (!chunk.is_empty()).then_some(chunk)
    }))
}

/// An ORDERS row with its key moved by `key_shift` (RF1's new orders; 0 for the base data).
pub(crate) fn order_row(r: &tpchgen::generators::Order<'_>, key_shift: i64) -> Vec<Value> {
    vec![
        Value::Int(r.o_orderkey + key_shift),
        Value::Int(r.o_custkey),
        text(r.o_orderstatus),
        text(r.o_totalprice),
        text(r.o_orderdate),
        text(r.o_orderpriority),
        text(r.o_clerk),
        Value::Int(r.o_shippriority.into()),
        text(r.o_comment),
    ]
}

/// A LINEITEM row with its order key moved by `key_shift`.
pub(crate) fn lineitem_row(r: &tpchgen::generators::LineItem<'_>, key_shift: i64) -> Vec<Value> {
    vec![
        Value::Int(r.l_orderkey + key_shift),
        Value::Int(r.l_partkey),
        Value::Int(r.l_suppkey),
        Value::Int(r.l_linenumber.into()),
        Value::Int(r.l_quantity),
        text(r.l_extendedprice),
        text(r.l_discount),
        text(r.l_tax),
        text(r.l_returnflag),
        text(r.l_linestatus),
        text(r.l_shipdate),
        text(r.l_commitdate),
        text(r.l_receiptdate),
        text(r.l_shipinstruct),
        text(r.l_shipmode),
        text(r.l_comment),
    ]
}

/// What `write_tbl` wrote for one table.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TblFile {
    pub table: Table,
    pub path: std::path::PathBuf,
    pub bytes: u64,
}

/// Write `<table>.tbl` for each table into `dir`, generating parts on `parallel` threads (0:
/// one per CPU) and writing them in order (so the file is exactly what one generator would
/// write).
pub fn write_tbl(
    sf: f64,
    tables: &[Table],
    dir: &Path,
    parallel: u32,
    progress: &(dyn Fn(&str) + Sync),
) -> std::io::Result<Vec<TblFile>> {
    std::fs::create_dir_all(dir)?;
    let parallel = match parallel {
        0 => std::thread::available_parallelism().map_or(2, |n| n.get() as u32),
        n => n,
    };
    let mut written = Vec::new();
    for &t in tables {
        let path = dir.join(format!("{}.tbl", t.name()));
        let mut file = std::io::BufWriter::new(std::fs::File::create(&path)?);
        let parts = t.parts(sf, parallel);
        let mut bytes = 0u64;
        let mut next = 1;
        while next <= parts {
            let wave: Vec<u32> = (next..=parts).take(parallel as usize).collect();
            next += wave.len() as u32;
            let buffers: Vec<Vec<u8>> = std::thread::scope(|s| {
                let handles: Vec<_> = wave
                    .iter()
                    .map(|&p| {
                        s.spawn(move || {
                            let mut buf = Vec::new();
                            t.tbl_part(sf, p, parts, &mut buf);
                            buf
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_default())
                    .collect()
            });
            for b in buffers {
                bytes += b.len() as u64;
                file.write_all(&b)?;
            }
        }
        file.flush()?;
        progress(&format!("wrote {} ({bytes} bytes)", path.display()));
        written.push(TblFile {
            table: t,
            path,
            bytes,
        });
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bulk_text_is_the_rows_encoded() {
        for t in Table::ALL {
            let parts = t.parts(0.01, 3);
            let part = parts.min(2);
            let mut expected = Vec::new();
            for row in t.rows(0.01, part, parts) {
                dbrig_driver::encode_bulk_row(&row, &mut expected);
            }
            let text: Vec<u8> = t.bulk_text(0.01, part, parts).flatten().collect();
            assert_eq!(
                String::from_utf8_lossy(&text),
                String::from_utf8_lossy(&expected),
                "{t:?}"
            );
        }
        // Chunks end on row boundaries.
        for chunk in Table::LineItem.bulk_text(0.1, 1, 1) {
            assert_eq!(chunk.last(), Some(&b'\n'));
        }
    }

    /// The typed rows stand for the same rows as the bulk text: as many rows, the same text
    /// size (what MB/s is of), a row's field count the table's columns. (That the servers
    /// read them as the text's values: the driver's typed bulk tests, and the TPC-H answers
    /// compared across engines after loads.)
    #[test]
    fn typed_rows_are_the_bulk_texts_rows() {
        use dbrig_driver::{MariaDbBulkChunk, PgBinaryChunk};
        for t in Table::ALL {
            let parts = t.parts(0.01, 3);
            let part = parts.min(2);
            let text: Vec<u8> = t.bulk_text(0.01, part, parts).flatten().collect();
            let lines = text.iter().filter(|&&b| b == b'\n').count() as u64;
            let (mut rows, mut bytes) = (0, 0);
            for chunk in t.typed::<PgBinaryChunk>(0.01, part, parts) {
                rows += chunk.rows();
                bytes += chunk.text_bytes();
                let fields = i16::from_be_bytes([chunk.buf[0], chunk.buf[1]]);
                assert_eq!(fields as usize, t.columns().len(), "{t:?}");
            }
            assert_eq!((rows, bytes), (lines, text.len() as u64), "{t:?}");
            let (mut rows, mut bytes) = (0, 0);
            for chunk in t.typed::<MariaDbBulkChunk>(0.01, part, parts) {
                rows += chunk.rows();
                bytes += chunk.text_bytes();
                assert_eq!(chunk.types.len(), t.columns().len(), "{t:?}");
            }
            assert_eq!((rows, bytes), (lines, text.len() as u64), "{t:?}");
        }
    }

    #[test]
    fn parts_concatenate_to_the_whole_table() {
        let sf = 0.01;
        for t in [Table::Supplier, Table::Orders] {
            let mut whole = Vec::new();
            t.tbl_part(sf, 1, 1, &mut whole);
            let mut split = Vec::new();
            for p in 1..=3 {
                t.tbl_part(sf, p, 3, &mut split);
            }
            assert_eq!(whole, split, "{t:?}");
        }
    }

    #[test]
    fn rows_match_the_tbl_fields() {
        let rows: Vec<_> = Table::LineItem.rows(0.01, 1, 1).take(3).collect();
        let mut tbl = Vec::new();
        Table::LineItem.tbl_part(0.01, 1, 1, &mut tbl);
        let text = String::from_utf8(tbl).unwrap();
        for (row, line) in rows.iter().zip(text.lines()) {
            let fields: Vec<&str> = line.trim_end_matches('|').split('|').collect();
            assert_eq!(fields.len(), row.len());
            for (v, f) in row.iter().zip(fields) {
                let s = match v {
                    Value::Int(i) => i.to_string(),
                    Value::Text(s) => s.clone(),
                    other => panic!("{other:?}"),
                };
                assert_eq!(s, f);
            }
        }
        assert_eq!(Table::Region.rows(0.01, 1, 1).count(), 5);
        assert_eq!(Table::Nation.rows(0.01, 1, 1).count(), 25);
        assert_eq!(Table::Supplier.rows(0.01, 1, 1).count(), 100);
    }

    /// `dbrig tpch gen --tables`: names in the order given, all eight for none, an unknown
    /// name refused with the eight listed.
    #[test]
    fn table_lists_parse_or_name_the_tables() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(Table::parse_list(&[]).unwrap(), Table::ALL.to_vec());
        assert_eq!(
            Table::parse_list(&names(&["orders", " nation"])).unwrap(),
            [Table::Orders, Table::Nation]
        );
        let e = Table::parse_list(&names(&["order"]))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("unknown TPC-H table 'order': region, nation"),
            "{e}"
        );
    }
}
