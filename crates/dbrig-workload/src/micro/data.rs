//! The micro-benchmarks' data, generated from a seed (the same seed gives the same rows).

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Seed 000's INT data: `rows` integers uniform in `[0, rows)` (`int(rand($ROWS))`).
pub fn random_ints(rows: u64, seed: u64) -> Vec<u32> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let n = rows.clamp(1, u64::from(u32::MAX) + 1);
    (0..rows).map(|_| rng.random_range(0..n) as u32).collect()
}

/// Seed 000's CHAR(20) data: `rows` strings of 20 random lowercase letters.
pub fn random_words(rows: u64, seed: u64) -> Vec<[u8; 20]> {
    let mut rng = SmallRng::seed_from_u64(seed);
    (0..rows)
        .map(|_| {
            let mut w = [0u8; 20];
            for b in &mut w {
                *b = b'a' + rng.random_range(0..26u8);
            }
            w
        })
        .collect()
}

/// Seed 004's narrow table: `i` is 1 for a third of the rows (at random) and 0 otherwise.
/// The seed's own figures show only 0 and 1 occur: sum(i) equals count(*) WHERE i>0, and
/// avg(i+sqrt(i+1)+abs(i)) = 1.80474 = 2/3·1 + 1/3·(2+√2).
pub fn narrow_values(rows: u64, seed: u64) -> impl Iterator<Item = i64> + Send + 'static {
    let mut rng = SmallRng::seed_from_u64(seed);
    (0..rows).map(move |_| i64::from(rng.random_ratio(1, 3)))
}

/// Seed 004's wide table `m4(c CHAR(128))`: 128 random decimal digits a row, so every row
/// compares below 'a' and `count(*) WHERE c>'a'` scans all rows and finds none (as the seed's 0).
pub fn wide_values(rows: u64, seed: u64) -> impl Iterator<Item = String> + Send + 'static {
    let mut rng = SmallRng::seed_from_u64(seed);
    (0..rows).map(move |_| {
        (0..128)
            .map(|_| char::from(b'0' + rng.random_range(0..10u8)))
            .collect()
    })
}

/// Seed 003's `t1(id, tea)` rows as `INSERT t1 SELECT rand()*2e8, repeat(rand(), rand()*64)`
/// makes them: id uniform in [0, 2e8) and tea the decimal text of a random number in [0, 1)
/// repeated floor(rand()*64) times (0–63). (MariaDB itself rounds both when converting to
/// INT; the half-step difference at the ends does not matter here.)
pub fn groupby_rows(rows: u64, seed: u64) -> impl Iterator<Item = (i64, String)> + Send + 'static {
    let mut rng = SmallRng::seed_from_u64(seed);
    (0..rows).map(move |_| groupby_row(&mut rng))
}

fn groupby_row(rng: &mut SmallRng) -> (i64, String) {
    let id = (rng.random::<f64>() * 2e8).floor() as i64;
    let r: f64 = rng.random();
    let times = (rng.random::<f64>() * 64.0).floor() as usize;
    (id, r.to_string().repeat(times))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints_are_in_range_and_spread() {
        let v = random_ints(10_000, 7);
        assert_eq!(v.len(), 10_000);
        assert!(v.iter().all(|&x| x < 10_000));
        // Uniform: each tenth of the range holds about a tenth of the values.
        let mut buckets = [0u32; 10];
        for &x in &v {
            buckets[(x / 1000) as usize] += 1;
        }
        assert!(
            buckets.iter().all(|&b| (800..1200).contains(&b)),
            "{buckets:?}"
        );
        assert_eq!(v, random_ints(10_000, 7));
        assert_ne!(v, random_ints(10_000, 8));
    }

    #[test]
    fn words_are_twenty_lowercase_letters() {
        let v = random_words(2000, 1);
        assert!(v.iter().all(|w| w.iter().all(u8::is_ascii_lowercase)));
        let mut seen = [false; 26];
        for w in &v {
            for &b in w {
                seen[(b - b'a') as usize] = true;
            }
        }
        assert!(seen.iter().all(|&s| s), "every letter occurs");
        assert_eq!(v, random_words(2000, 1));
        assert_ne!(v, random_words(2000, 2));
    }

    #[test]
    fn narrow_matches_a_third() {
        let v: Vec<i64> = narrow_values(30_000, 3).collect();
        assert!(v.iter().all(|&i| i == 0 || i == 1));
        let ones = v.iter().filter(|&&i| i > 0).count();
        assert!((9_400..10_600).contains(&ones), "{ones}");
        assert_eq!(v, narrow_values(30_000, 3).collect::<Vec<_>>());
    }

    #[test]
    fn wide_rows_sort_below_a() {
        let v: Vec<String> = wide_values(100, 3).collect();
        assert!(v.iter().all(|s| s.len() == 128 && s.as_str() < "a"));
        assert_eq!(v, wide_values(100, 3).collect::<Vec<_>>());
    }

    #[test]
    fn groupby_rows_follow_the_seed_distribution() {
        let v: Vec<(i64, String)> = groupby_rows(8192, 11).collect();
        assert!(v.iter().all(|(id, _)| (0..200_000_000).contains(id)));
        // id uniform: its mean is near 1e8, and its first digits cover 1–9.
        let mean = v.iter().map(|(id, _)| *id as f64).sum::<f64>() / v.len() as f64;
        assert!((0.95e8..1.05e8).contains(&mean), "{mean}");
        let first: std::collections::BTreeSet<char> = v
            .iter()
            .map(|(id, _)| id.to_string().chars().next().unwrap())
            .collect();
        assert!(first.len() >= 9, "{first:?}");
        // tea: one decimal number in [0, 1) repeated 0–63 times, about 31.5 on average.
        let mut repeats = Vec::new();
        for (_, tea) in &v {
            if tea.is_empty() {
                repeats.push(0);
                continue;
            }
            let unit_len = tea[1..].find("0.").map(|p| p + 1).unwrap_or(tea.len());
            let unit = &tea[..unit_len];
            assert!(
                unit.starts_with("0.") && unit.parse::<f64>().is_ok(),
                "{unit}"
            );
            assert_eq!(tea.len() % unit.len(), 0);
            assert_eq!(tea, &unit.repeat(tea.len() / unit.len()));
            repeats.push(tea.len() / unit.len());
        }
        assert!(repeats.iter().all(|&n| n < 64));
        assert!(repeats.contains(&0) && repeats.contains(&63));
        let mean = repeats.iter().sum::<usize>() as f64 / repeats.len() as f64;
        assert!((29.5..33.5).contains(&mean), "{mean}");
        assert_eq!(v, groupby_rows(8192, 11).collect::<Vec<_>>());
        assert_ne!(v, groupby_rows(8192, 12).collect::<Vec<_>>());
    }
}
