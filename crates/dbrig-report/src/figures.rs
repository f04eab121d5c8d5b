//! The one rounding rule for the numbers dbrig writes for scripts (every JSON document, the
//! derived columns of its CSV): 4 decimals, and 4 significant digits below 0.001, so that a
//! figure never shows floating-point noise (`413.2231`, not `413.22314049586777`; `5`, not
//! `5.000000000000004`) and a small one (a p-value, a fast query's seconds) never rounds to 0.
//! 4 decimals keep a tenth of a microsecond in milliseconds and of a millisecond in seconds,
//! finer than any clock dbrig reads. Integers (counts, ids, seeds) are never touched.
//!
//! Text reports keep the precision of their own layouts (sysbench's `%.2f`, the seeds'
//! tables); formats that imitate another tool (sysbench's `report_json`, BenchBase's files)
//! keep that tool's.

/// Decimals every figure keeps.
const DECIMALS: i32 = 4;

/// `x` by the rule: 4 decimals, or 4 significant digits when that keeps more.
pub fn round(x: f64) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    // Digits before the decimal point minus one: 0 for 1..10, -4 for 0.0001..0.001.
    let magnitude = x.abs().log10().floor() as i32;
    let decimals = DECIMALS.max(DECIMALS - 1 - magnitude) as usize;
    // Through decimal text: exact to the digit, where scaling by 10^n would add noise back.
    format!("{x:.decimals$}").parse().unwrap_or(x)
}

/// Every non-integer number of `v`, rounded by [`round`].
pub fn round_json(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Number(n) if n.is_f64() => {
            if let Some(r) = n
                .as_f64()
                .and_then(|x| serde_json::Number::from_f64(round(x)))
            {
                *n = r;
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(round_json),
        serde_json::Value::Object(map) => map.values_mut().for_each(round_json),
        _ => {}
    }
}

/// A JSON document as dbrig prints it: its figures rounded, pretty, one final newline.
pub fn json_text(v: &serde_json::Value) -> String {
    let mut v = v.clone();
    round_json(&mut v);
    serde_json::to_string_pretty(&v).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_decimals_or_four_significant_digits() {
        assert_eq!(round(413.22314049586777), 413.2231);
        assert_eq!(round(5.000000000000004), 5.0);
        assert_eq!(round(0.1 + 0.2), 0.3);
        assert_eq!(round(-2.41256), -2.4126);
        assert_eq!(round(0.000012346), 0.00001235);
        assert_eq!(round(0.0286), 0.0286);
        assert_eq!(round(123456789.123456), 123456789.1235);
        assert_eq!(round(0.0), 0.0);
        assert!(round(f64::NAN).is_nan());
    }

    #[test]
    fn json_floats_are_rounded_and_integers_kept() {
        let v = serde_json::json!({
            "tps": 413.22314049586777,
            "events": 18446744073709551615u64,
            "rows": [1, 2.000000000000001],
            "nested": {"p": 0.000012346}
        });
        let text = json_text(&v);
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["tps"], 413.2231);
        assert_eq!(back["events"], 18446744073709551615u64);
        assert_eq!(back["rows"][1], 2.0);
        assert_eq!(back["nested"]["p"], 0.00001235);
        assert!(text.ends_with("}\n"));
    }
}
