//! Goodness of fit: do counts drawn from a random source follow the distribution that source
//! is meant to have?
//!
//! Every generator whose draws decide what a benchmark touches (sysbench's key distributions,
//! pgbench's `random_*` functions, open-loop arrival schedules) is held by its tests to the
//! distribution it documents with Pearson's chi-square test, not by eyeballing a histogram: a
//! hot set twice as wide, a Pareto exponent halved or a Gaussian drawn from an exponential all
//! move some buckets by far more than chance allows. Tests draw from a fixed seed, so a
//! verdict never changes between runs.

use statrs::distribution::{ChiSquared, ContinuousCDF};

/// Pearson's chi-square test of observed counts against expected probabilities.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChiSquare {
    /// Σ (observed − expected)² / expected over the (pooled) buckets.
    pub statistic: f64,
    /// Degrees of freedom: pooled buckets − 1.
    pub df: usize,
    /// P(χ²(df) ≥ statistic): the chance of a fit this bad or worse if the source is right.
    pub p_value: f64,
}

/// The smallest expected count a bucket may have: below it the chi-square approximation of the
/// statistic's distribution fails (Cochran's rule), so neighbouring buckets are pooled.
const MIN_EXPECTED: f64 = 5.0;

/// Tests `observed[i]` draws against probabilities `expected[i]` (which should sum to 1 over
/// every value the source can give: pass the remainder as a last bucket). Adjacent buckets are
/// pooled, in order, until each expects at least 5 draws; a bucket that expects nothing but got
/// draws makes the fit impossible (p = 0).
///
/// # Panics
/// If the slices differ in length: that is a bug in the test that calls it.
pub fn chi_square(observed: &[u64], expected: &[f64]) -> ChiSquare {
    assert_eq!(observed.len(), expected.len(), "one probability per bucket");
    let n: u64 = observed.iter().sum();
    let total = n as f64;
    let mut pooled: Vec<(f64, f64)> = Vec::new(); // (observed, expected count)
    let mut open = (0.0, 0.0);
    for (&o, &p) in observed.iter().zip(expected) {
        if p <= 0.0 && o > 0 {
            return ChiSquare {
                statistic: f64::INFINITY,
                df: observed.len().saturating_sub(1),
                p_value: 0.0,
            };
        }
        open.0 += o as f64;
        open.1 += p * total;
        if open.1 >= MIN_EXPECTED {
            pooled.push(open);
            open = (0.0, 0.0);
        }
    }
    if open.1 > 0.0 || open.0 > 0.0 {
        match pooled.last_mut() {
            Some(last) => {
                last.0 += open.0;
                last.1 += open.1;
            }
            None => pooled.push(open),
        }
    }
    let statistic: f64 = pooled
        .iter()
        .map(|&(o, e)| if e > 0.0 { (o - e).powi(2) / e } else { 0.0 })
        .sum();
    let df = pooled.len().saturating_sub(1);
    let p_value = if df == 0 {
        1.0
    } else {
        ChiSquared::new(df as f64)
            .map(|d| d.sf(statistic))
            .unwrap_or(0.0)
    };
    ChiSquare {
        statistic,
        df,
        p_value,
    }
}

/// Bucket probabilities of a distribution over the integers `0..n` given its cumulative
/// distribution `cdf(k)` = P(X < k) at the bucket edges `edges` (ascending, first 0, last n):
/// bucket i holds `edges[i]..edges[i + 1]`.
pub fn bucket_probabilities(edges: &[u64], cdf: impl Fn(u64) -> f64) -> Vec<f64> {
    edges.windows(2).map(|w| cdf(w[1]) - cdf(w[0])).collect()
}

/// Counts `draws` (each in `0..n`, the last edge) into the buckets of `edges`.
pub fn bucket_counts(edges: &[u64], draws: impl IntoIterator<Item = u64>) -> Vec<u64> {
    let mut counts = vec![0u64; edges.len().saturating_sub(1)];
    for d in draws {
        let i = edges.partition_point(|&e| e <= d).saturating_sub(1);
        if let Some(c) = counts.get_mut(i) {
            *c += 1;
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 100 draws over 4 equal buckets: the statistic worked by hand below, and the p-value from the closed form of χ²(3)'s tail, erfc(√(x/2)) + √(2x/π)·e^(−x/2)
    /// (Python's `math.erfc`: 0.22891886433610498 at x = 4.32).
    #[test]
    fn statistic_and_p_value_match_the_closed_form() {
        // (18−25)² + (22−25)² + (30−25)² + (30−25)² = 49 + 9 + 25 + 25 = 108; 108 / 25 = 4.32.
        let r = chi_square(&[18, 22, 30, 30], &[0.25; 4]);
        assert!((r.statistic - 4.32).abs() < 1e-12, "{r:?}");
        assert_eq!(r.df, 3);
        assert!((r.p_value - 0.228_918_864_336_105).abs() < 1e-9, "{r:?}");
    }

    #[test]
    fn small_buckets_are_pooled_and_impossible_draws_fail() {
        // 100 draws: the last two buckets expect 1 and 2, pooled into the third's 7 → 10.
        let r = chi_square(&[45, 45, 7, 2, 1], &[0.45, 0.45, 0.07, 0.02, 0.01]);
        assert_eq!(r.df, 2, "{r:?}");
        assert!(r.statistic.abs() < 1e-12, "{r:?}");
        assert_eq!(chi_square(&[5, 5, 1], &[0.5, 0.5, 0.0]).p_value, 0.0);
    }

    #[test]
    fn buckets_from_edges() {
        let edges = [0, 1, 10, 100];
        assert_eq!(bucket_counts(&edges, [0, 1, 9, 10, 99, 5]), vec![1, 3, 2]);
        let p = bucket_probabilities(&edges, |k| k as f64 / 100.0);
        for (got, want) in p.iter().zip([0.01, 0.09, 0.90]) {
            assert!((got - want).abs() < 1e-12, "{p:?}");
        }
    }
}
