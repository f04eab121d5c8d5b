//! Key distributions for choosing row ids, with sysbench's names and parameters.
//!
//! Semantics follow sysbench 1.0.20's documented options (`--rand-type`, `--rand-spec-*`,
//! `--rand-pareto-h`, `--rand-zipfian-exp`); the code is dbrig's own. dbrig defaults to
//! `uniform` because sysbench's `special` default concentrates 75 % of accesses on 1 % of
//! the keys and misleads comparisons (sysbench issues #207, #329).

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Zipf};
use serde::{Deserialize, Serialize};

/// A key distribution with its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum KeyDistribution {
    Uniform,
    /// Mean of `iter` uniform draws (sysbench `--rand-spec-iter`, default 12).
    Gaussian {
        iter: u32,
    },
    /// `res` percent of accesses fall on `pct` percent of the keys (sysbench defaults 75 / 1),
    /// the hot keys drawn gaussian-like from the middle of the range.
    Special {
        iter: u32,
        pct: f64,
        res: f64,
    },
    /// Pareto with shape `h` (default 0.2): low keys are hot.
    Pareto {
        h: f64,
    },
    /// Zipfian with exponent `exp` (default 0.8), sampled by rejection-inversion.
    Zipfian {
        exp: f64,
    },
}

impl KeyDistribution {
    /// The name used on the command line and in reports.
    pub fn name(&self) -> &'static str {
        match self {
            KeyDistribution::Uniform => "uniform",
            KeyDistribution::Gaussian { .. } => "gaussian",
            KeyDistribution::Special { .. } => "special",
            KeyDistribution::Pareto { .. } => "pareto",
            KeyDistribution::Zipfian { .. } => "zipfian",
        }
    }

    /// A one-line description with parameters, printed in every report.
    pub fn describe(&self) -> String {
        match self {
            KeyDistribution::Uniform => "uniform".into(),
            KeyDistribution::Gaussian { iter } => format!("gaussian (iter={iter})"),
            KeyDistribution::Special { iter, pct, res } => {
                format!("special ({res}% of accesses on {pct}% of keys, iter={iter})")
            }
            KeyDistribution::Pareto { h } => format!("pareto (h={h})"),
            KeyDistribution::Zipfian { exp } => format!("zipfian (exp={exp})"),
        }
    }
}

/// Draws keys in `[low, high]` from a distribution with its own seeded generator.
#[derive(Debug, Clone)]
pub struct KeyGenerator {
    dist: KeyDistribution,
    rng: SmallRng,
    /// Zipf sampler for the range it was built for (rebuilding it per draw is costly).
    zipf: Option<(u64, Zipf<f64>)>,
}

impl KeyGenerator {
    pub fn new(dist: KeyDistribution, seed: u64) -> Self {
        Self {
            dist,
            rng: SmallRng::seed_from_u64(seed),
            zipf: None,
        }
    }

    pub fn distribution(&self) -> KeyDistribution {
        self.dist
    }

    /// The generator's random source, for values that are not keys (strings, coin flips),
    /// so one seed makes a whole client reproducible.
    pub fn rng(&mut self) -> &mut SmallRng {
        &mut self.rng
    }

    /// A uniform integer in `[low, high]`.
    pub fn uniform(&mut self, low: i64, high: i64) -> i64 {
        if high <= low {
            low
        } else {
            self.rng.random_range(low..=high)
        }
    }

    /// A key in `[low, high]` drawn from the distribution.
    pub fn key(&mut self, low: i64, high: i64) -> i64 {
        if high <= low {
            return low;
        }
        let span = (high - low + 1) as u64;
        match self.dist {
            KeyDistribution::Uniform => self.uniform(low, high),
            KeyDistribution::Gaussian { iter } => low + self.centered(span, iter) as i64,
            KeyDistribution::Special { iter, pct, res } => {
                let hot = ((span as f64 * pct / 100.0) as u64).max(1);
                if self.rng.random::<f64>() * 100.0 < res {
                    let start = (span - hot) / 2;
                    low + (start + self.centered(hot, iter)) as i64
                } else {
                    self.uniform(low, high)
                }
            }
            KeyDistribution::Pareto { h } => {
                let power = h.ln() / (1.0 - h).ln();
                let u: f64 = self.rng.random();
                let offset = ((span as f64) * u.powf(power)) as u64;
                low + offset.min(span - 1) as i64
            }
            KeyDistribution::Zipfian { exp } => {
                let sampler = match &self.zipf {
                    Some((n, z)) if *n == span => *z,
                    _ => {
                        let z = Zipf::new(span as f64, exp).expect("span >= 1, exp >= 0");
                        self.zipf = Some((span, z));
                        z
                    }
                };
                let rank = sampler.sample(&mut self.rng) as u64; // 1..=span
                low + (rank.clamp(1, span) - 1) as i64
            }
        }
    }

    /// Mean of `iter` uniform draws over `[0, span)`: bell-shaped around the middle.
    fn centered(&mut self, span: u64, iter: u32) -> u64 {
        let iter = iter.max(1);
        let sum: u64 = (0..iter).map(|_| self.rng.random_range(0..span)).sum();
        sum / u64::from(iter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(dist: KeyDistribution) -> Vec<u64> {
        let mut g = KeyGenerator::new(dist, 42);
        let mut buckets = vec![0u64; 100];
        for _ in 0..100_000 {
            let k = g.key(1, 10_000);
            assert!((1..=10_000).contains(&k), "{k} out of range for {dist:?}");
            buckets[((k - 1) / 100) as usize] += 1;
        }
        buckets
    }

    #[test]
    fn uniform_is_flat() {
        let b = histogram(KeyDistribution::Uniform);
        assert!(b.iter().all(|&n| (800..1200).contains(&n)), "{b:?}");
    }

    #[test]
    fn special_puts_most_accesses_on_few_keys() {
        let b = histogram(KeyDistribution::Special {
            iter: 12,
            pct: 1.0,
            res: 75.0,
        });
        // The hot 1 % (100 keys) sits in the middle bucket(s): about 75 % + 0.75 % of draws.
        let middle: u64 = b[49] + b[50];
        assert!(middle > 74_000, "middle buckets {middle}");
    }

    #[test]
    fn gaussian_peaks_in_the_middle() {
        let b = histogram(KeyDistribution::Gaussian { iter: 12 });
        assert!(b[50] > 10 * b[10].max(1), "{b:?}");
    }

    #[test]
    fn pareto_and_zipfian_favour_low_keys() {
        for dist in [
            KeyDistribution::Pareto { h: 0.2 },
            KeyDistribution::Zipfian { exp: 0.8 },
        ] {
            let b = histogram(dist);
            assert!(b[0] > 5 * b[99].max(1), "{dist:?}: {} vs {}", b[0], b[99]);
        }
    }

    #[test]
    fn same_seed_same_keys() {
        let mut a = KeyGenerator::new(KeyDistribution::Zipfian { exp: 0.8 }, 7);
        let mut b = KeyGenerator::new(KeyDistribution::Zipfian { exp: 0.8 }, 7);
        for _ in 0..100 {
            assert_eq!(a.key(1, 1000), b.key(1, 1000));
        }
    }
}
