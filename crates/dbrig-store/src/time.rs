//! RFC 3339 UTC timestamps from `SystemTime`, without a date-time dependency.
//!
//! The store writes one fixed form, `YYYY-MM-DDTHH:MM:SS.mmmZ` (millisecond precision), so
//! timestamps sort correctly as text in SQL. Calendar arithmetic is Howard Hinnant's
//! `days_from_civil` / `civil_from_days` (proleptic Gregorian calendar,
//! <https://howardhinnant.github.io/date_algorithms.html>).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Format `t` as RFC 3339 UTC with milliseconds, e.g. `2024-05-01T12:34:56.789Z`.
/// Times outside years 0000–9999 are clamped to that range (the form has four year digits).
pub fn format_rfc3339(t: SystemTime) -> String {
    let ms: i128 = match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_millis() as i128,
        Err(e) => -(e.duration().as_millis() as i128),
    };
    // 0000-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z in ms since the epoch.
    let ms = ms.clamp(-62_167_219_200_000, 253_402_300_799_999) as i64;
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        sod / 3600,
        sod % 3600 / 60,
        sod % 60
    )
}

/// Parse the form written by [`format_rfc3339`]; also accepts no or any number of fraction
/// digits and a `+00:00` suffix. Other offsets are rejected (the store writes only UTC).
pub fn parse_rfc3339(s: &str) -> Option<SystemTime> {
    let s = s.strip_suffix('Z').or_else(|| s.strip_suffix("+00:00"))?;
    let (date, time) = s.split_once('T')?;
    let mut dp = date.splitn(3, '-');
    let y: i64 = num(dp.next()?, 4)?;
    let m: i64 = num(dp.next()?, 2)?;
    let d: i64 = num(dp.next()?, 2)?;
    let (hms, frac) = match time.split_once('.') {
        Some((hms, frac)) => (hms, Some(frac)),
        None => (time, None),
    };
    let mut tp = hms.splitn(3, ':');
    let hh: i64 = num(tp.next()?, 2)?;
    let mm: i64 = num(tp.next()?, 2)?;
    let ss: i64 = num(tp.next()?, 2)?;
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    let nanos: u32 = match frac {
        None => 0,
        Some(f) if !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()) => {
            let digits: String = f.chars().chain(std::iter::repeat('0')).take(9).collect();
            digits.parse().ok()?
        }
        Some(_) => return None,
    };
    let secs = days_from_civil(y, m, d) * 86_400 + hh * 3600 + mm * 60 + ss;
    let t = if secs >= 0 {
        UNIX_EPOCH + Duration::new(secs as u64, nanos)
    } else {
        UNIX_EPOCH - Duration::from_secs(secs.unsigned_abs()) + Duration::new(0, nanos)
    };
    Some(t)
}

fn num(s: &str, width: usize) -> Option<i64> {
    (s.len() == width && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

use dbrig_core::calendar::{civil_from_days, days_from_civil};

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64, ms: u32) -> SystemTime {
        let base = if secs >= 0 {
            UNIX_EPOCH + Duration::from_secs(secs as u64)
        } else {
            UNIX_EPOCH - Duration::from_secs(secs.unsigned_abs())
        };
        base + Duration::from_millis(u64::from(ms))
    }

    #[test]
    fn formats_known_instants() {
        assert_eq!(format_rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        // `date -u -d @1714566896` = 2024-05-01 12:34:56 UTC.
        assert_eq!(
            format_rfc3339(at(1_714_566_896, 789)),
            "2024-05-01T12:34:56.789Z"
        );
        // Leap day and end of a leap year.
        assert_eq!(
            format_rfc3339(at(951_782_400, 0)),
            "2000-02-29T00:00:00.000Z"
        );
        assert_eq!(
            format_rfc3339(at(1_735_689_599, 999)),
            "2024-12-31T23:59:59.999Z"
        );
        assert_eq!(format_rfc3339(at(-1, 0)), "1969-12-31T23:59:59.000Z");
    }

    #[test]
    fn parses_what_it_formats() {
        for secs in [0, 1, -86_401, 951_782_400, 1_714_566_896, 4_102_444_800] {
            for ms in [0, 1, 500, 999] {
                let t = at(secs, ms);
                assert_eq!(parse_rfc3339(&format_rfc3339(t)), Some(t), "{secs}.{ms}");
            }
        }
        assert_eq!(
            parse_rfc3339("2024-05-01T12:34:56+00:00"),
            Some(at(1_714_566_896, 0))
        );
        assert_eq!(
            parse_rfc3339("2024-05-01T12:34:56.5Z"),
            Some(at(1_714_566_896, 500))
        );
    }

    #[test]
    fn rejects_malformed() {
        for s in [
            "",
            "2024-05-01",
            "2024-05-01T12:34:56",
            "2024-05-01T12:34:56+02:00",
            "2023-02-29T00:00:00Z",
            "2024-13-01T00:00:00Z",
            "2024-05-01T24:00:00Z",
            "2024-05-01T12:34:56.Z",
            "24-05-01T12:34:56Z",
        ] {
            assert_eq!(parse_rfc3339(s), None, "{s:?}");
        }
    }
}
