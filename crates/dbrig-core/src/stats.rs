//! Statistics over whole trials: summaries and A/B verdicts.
//!
//! Implements the "Summaries" and "A/B verdicts" sections of `shared/specs/measurement.md`.
//! Every input slice holds one value per **trial** (never per-second samples of one trial: those
//! are not independent). All functions are pure and deterministic (no resampling, no random
//! numbers) and never panic on tiny or empty inputs. A NaN or infinite trial value is refused
//! where it enters ([`finite`]): [`summarize`], [`median`] and [`mann_whitney`] give nothing,
//! [`compare`] calls no verdict ([`Verdict::TooFewTrials`], counting only finite trials) and
//! [`holm`] and [`benjamini_hochberg`] keep a NaN p-value NaN. (Sorting alone would put a NaN first or last by its sign bit and let it pass as
//! a stable trial.)
//!
//! Methods and where they come from:
//!
//! * median confidence interval: the symmetric order-statistic interval (ranks j and n + 1 − j)
//!   from the binomial distribution (Lehmann, *Nonparametrics*, 1975, pp. 182–183), dbrig's
//!   own rule; Go's benchstat (`golang.org/x/perf/benchmath`) computes its interval
//!   differently, so the two need not agree;
//! * outliers: modified z-score with the median absolute deviation (Iglewicz & Hoaglin 1993),
//!   threshold 10 robust standard deviations = 14.826 × MAD as in hyperfine;
//! * unstable: standard deviation ≥ 10 % of the mean (pyperf's `check` warning);
//! * significance: two-sided Mann–Whitney U test (Mann & Whitney 1947), exact or normal
//!   approximation following R's `wilcox.test`;
//! * multiple comparisons: Benjamini–Hochberg step-up adjustment of the false-discovery rate
//!   (Benjamini & Hochberg 1995), the default, or Holm–Bonferroni step-down adjustment of the
//!   family-wise error rate (Holm 1979) on request ([`Correction`]); whether a verdict was
//!   reachable at all from the smallest p-value the exact test allows at the trial counts
//!   run ([`smallest_p`], [`Comparison::p_floor`], [`trials_for_verdict`]);
//! * relative change: Hodges–Lehmann shift estimate with Moses' distribution-free confidence
//!   interval (Hodges & Lehmann 1963; Moses 1965; Hollander & Wolfe, *Nonparametric
//!   Statistical Methods*, §4.3) on log values, exponentiated to a ratio.

use std::cmp::Ordering;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Confidence level of the median interval in [`summarize`] (95 %).
pub const SUMMARY_CONFIDENCE: f64 = 0.95;

/// Outlier threshold in units of MAD: 10 robust standard deviations, 10 × 1.4826 (hyperfine's
/// `OUTLIER_THRESHOLD`; 1.4826 makes the MAD a consistent estimator of σ for normal data).
pub const OUTLIER_MADS: f64 = 14.826;

/// Relative standard deviation from which a cell is called unstable (pyperf: 10 % of the mean).
pub const UNSTABLE_REL_STDDEV: f64 = 0.10;

/// Largest sample size (each side, exclusive) for which the exact null distribution of the
/// Mann–Whitney U statistic is used; R's `wilcox.test` uses the same bound (`n < 50`).
pub const EXACT_MAX_N: usize = 50;

/// Tolerance for comparing a computed tail probability with the target level, so that an
/// interval whose coverage equals the requested confidence exactly is not lost to rounding.
const PROB_EPS: f64 = 1e-12;

// ---------------------------------------------------------------------------------------------
// Summaries
// ---------------------------------------------------------------------------------------------

/// Summary of one cell's trials (see [`summarize`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of trials.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (divisor n − 1); `None` when n < 2.
    pub stddev: Option<f64>,
    pub min: f64,
    pub max: f64,
    /// Median (mean of the two middle values when n is even).
    pub median: f64,
    /// Distribution-free 95 % confidence interval of the median (see [`median_ci`]);
    /// `None` when n < 6, where no pair of order statistics reaches 95 %.
    pub median_ci: Option<(f64, f64)>,
    /// Median absolute deviation from the median, unscaled: `median(|xᵢ − median|)`.
    pub mad: f64,
    /// Indices (into the input order) of trials with |x − median| > 14.826 × MAD.
    /// Flagged only, never dropped.
    pub outliers: Vec<usize>,
    /// The first trial is an outlier: the warm-up was probably too short.
    pub first_is_outlier: bool,
    /// Standard deviation ≥ 10 % of the mean (pyperf's rule; the seeds' `*`).
    pub unstable: bool,
}

impl Summary {
    /// Coefficient of variation, stddev / |mean|; `None` when n < 2 or the mean is 0.
    pub fn cv(&self) -> Option<f64> {
        let sd = self.stddev?;
        (self.mean != 0.0).then(|| sd / self.mean.abs())
    }
}

/// Summarizes one cell's trials; `None` for an empty slice.
///
/// Methods: arithmetic mean; sample standard deviation with Bessel's correction (n − 1);
/// median of the sorted values; median confidence interval from order statistics and the
/// binomial distribution ([`median_ci`], the symmetric order-statistic rule) at 95 %; outliers by the
/// MAD rule of [`outliers`] (hyperfine); `unstable` when stddev ≥ 10 % of |mean| (pyperf's
/// `check` warning), never for n < 2 or when the stddev is 0. `None` also when a value is NaN
/// or infinite ([`finite`]): no summary of a meaningless trial, and no claim that it is stable.
pub fn summarize(samples: &[f64]) -> Option<Summary> {
    let n = samples.len();
    if n == 0 || !finite(samples) {
        return None;
    }
    let sorted = sorted_copy(samples);
    let mean = samples.iter().sum::<f64>() / n as f64;
    let stddev = (n >= 2).then(|| {
        let ss: f64 = samples.iter().map(|x| (x - mean).powi(2)).sum();
        (ss / (n - 1) as f64).sqrt()
    });
    let median = median_of_sorted(&sorted);
    let mad = mad_about(samples, median);
    let outliers = outliers_about(samples, median, mad);
    let first_is_outlier = outliers.first() == Some(&0);
    let unstable = matches!(stddev, Some(sd) if sd > 0.0 && sd >= UNSTABLE_REL_STDDEV * mean.abs());
    Some(Summary {
        n,
        mean,
        stddev,
        min: sorted[0],
        max: sorted[n - 1],
        median,
        median_ci: median_ci(&sorted, SUMMARY_CONFIDENCE),
        mad,
        outliers,
        first_is_outlier,
        unstable,
    })
}

/// Median of unsorted values; `None` when empty or not [`finite`]. Even n: mean of the two
/// middle values.
pub fn median(samples: &[f64]) -> Option<f64> {
    (!samples.is_empty() && finite(samples)).then(|| median_of_sorted(&sorted_copy(samples)))
}

/// Whether every trial value is a finite number: the door every statistic here checks, since
/// a NaN or infinite value (a division by a zero duration, say) has no place among trials.
pub fn finite(samples: &[f64]) -> bool {
    samples.iter().all(|x| x.is_finite())
}

/// Median absolute deviation, unscaled: `median(|xᵢ − median(x)|)`; `None` when empty.
///
/// Method: Hampel (1974); multiply by 1.4826 for a robust estimate of σ under normality.
pub fn mad(samples: &[f64]) -> Option<f64> {
    let m = median(samples)?;
    Some(mad_about(samples, m))
}

/// Indices of the outliers among `samples`, in input order.
///
/// Method: hyperfine's modified z-score rule (Iglewicz & Hoaglin 1993): xᵢ is an outlier when
/// |xᵢ − median| > 14.826 × MAD, i.e. more than 10 robust standard deviations from the median.
///
/// MAD = 0 (more than half of the trials are exactly equal): the robust spread is zero, so
/// every value that differs from the median at all is flagged, and none when all are equal.
/// This is what hyperfine does (it substitutes machine epsilon for a zero MAD); since outliers
/// are only flagged, over-flagging quantized data is harmless.
pub fn outliers(samples: &[f64]) -> Vec<usize> {
    match median(samples) {
        None => Vec::new(),
        Some(m) => outliers_about(samples, m, mad_about(samples, m)),
    }
}

/// Order statistics (1-based ranks `(j, n + 1 − j)`) bounding a distribution-free confidence
/// interval for the median of n values; `None` when none reaches `confidence`.
///
/// Method (Lehmann 1975, pp. 182–183; a symmetric rule, not benchstat's): the number of values
/// below the population median is Binomial(n, ½), so P(X₍ⱼ₎ ≤ median ≤ X₍ₙ₊₁₋ⱼ₎) = 1 − 2·P(Bin(n, ½) ≤ j − 1).
/// The largest j whose coverage is still ≥ `confidence` gives the narrowest such interval.
/// At 95 %: n = 6 → (1, 6), n = 10 → (2, 9), n = 20 → (6, 15); n ≤ 5 → `None`.
pub fn median_ci_ranks(n: usize, confidence: f64) -> Option<(usize, usize)> {
    // Confidence 1 or more leaves no tail, and the walk below then finds no rank (None); only
    // 0 or less (and NaN) must stop here, where the walk would run to the middle.
    if n == 0 || confidence.is_nan() || confidence <= 0.0 {
        return None;
    }
    let tail = (1.0 - confidence) / 2.0;
    // Largest j ≥ 1 with P(Bin(n, ½) ≤ j − 1) ≤ tail, walking the CDF upwards.
    let ln_half_n = -(n as f64) * std::f64::consts::LN_2;
    let mut ln_choose = 0.0_f64; // ln C(n, k)
    let mut cdf = 0.0_f64;
    let mut j = 0;
    // The CDF passes ½ (and so any tail below it) by the middle, so the walk stops there
    // without a bound of its own.
    for k in 0..=n {
        if k > 0 {
            ln_choose += ((n - k + 1) as f64).ln() - (k as f64).ln();
        }
        cdf += (ln_choose + ln_half_n).exp();
        if cdf > tail + PROB_EPS {
            break;
        }
        j = k + 1;
    }
    // j stays below the middle (the CDF reaches ½ there, above any tail), so n + 1 − j ≥ j.
    (j >= 1).then_some((j, n + 1 - j))
}

/// Distribution-free confidence interval for the median of **sorted** values.
///
/// Method: order statistics via the binomial distribution, see [`median_ci_ranks`]
/// (symmetric ranks; with 10 values at 95 % it is the 2nd to the 9th smallest).
/// `None` when too few values give a finite interval (n < 6 at 95 %) or `confidence`
/// is not in (0, 1).
pub fn median_ci(sorted: &[f64], confidence: f64) -> Option<(f64, f64)> {
    debug_assert!(
        sorted
            .windows(2)
            .all(|w| w[0].total_cmp(&w[1]) != Ordering::Greater),
        "median_ci needs sorted input"
    );
    let (lo, hi) = median_ci_ranks(sorted.len(), confidence)?;
    Some((sorted[lo - 1], sorted[hi - 1]))
}

fn sorted_copy(samples: &[f64]) -> Vec<f64> {
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// Median of a non-empty sorted slice.
fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

fn mad_about(samples: &[f64], median: f64) -> f64 {
    let dev: Vec<f64> = samples.iter().map(|x| (x - median).abs()).collect();
    median_of_sorted(&sorted_copy(&dev))
}

fn outliers_about(samples: &[f64], median: f64, mad: f64) -> Vec<usize> {
    let limit = OUTLIER_MADS * mad;
    samples
        .iter()
        .enumerate()
        .filter(|&(_, x)| (x - median).abs() > limit)
        .map(|(i, _)| i)
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Mann–Whitney U
// ---------------------------------------------------------------------------------------------

/// Result of a two-sided Mann–Whitney U test (see [`mann_whitney`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MannWhitney {
    /// U of the first sample: the number of pairs (aᵢ, bⱼ) with aᵢ > bⱼ, ties counting ½
    /// (R's `W`). U of the second sample is n₁·n₂ − u.
    pub u: f64,
    /// Two-sided p-value.
    pub p_value: f64,
    /// Whether `p_value` comes from the exact null distribution (else: normal approximation).
    pub exact: bool,
}

/// Two-sided Mann–Whitney U test (Wilcoxon rank-sum test) of `a` against `b`.
///
/// Method (Mann & Whitney 1947; computed as R's `wilcox.test`): U = R₁ − n₁(n₁+1)/2 with
/// mid-ranks for ties.
/// * No ties and both n < 50: exact p = min(1, 2·min(P(U ≤ u), P(U ≥ u))) under the null
///   distribution of U, counted exactly as the coefficients of the Gaussian binomial
///   coefficient [n₁+n₂ choose n₁]_q (each arrangement of the ranks is equally likely).
///   4 vs 4 completely separated: 2/70 = 0.0286; 3 vs 3: 2/20 = 0.1.
/// * Otherwise: normal approximation with tie correction,
///   σ² = n₁n₂/12 · ((N+1) − Σ(t³−t)/(N(N−1))), and continuity correction ½ towards the mean.
///   If σ = 0 (all values equal) p = 1.
///
/// An empty side gives u = 0 and p = 1 (no evidence either way). `None` when a value is not
/// [`finite`]: a NaN has no rank (sorting would place it by its sign bit).
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    if !finite(a) || !finite(b) {
        return None;
    }
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return Some(MannWhitney {
            u: 0.0,
            p_value: 1.0,
            exact: true,
        });
    }
    let ranked = rank_all(a, b);
    let r1: f64 = ranked.ranks[..n1].iter().sum();
    let u = r1 - (n1 * (n1 + 1)) as f64 / 2.0;
    let (n1f, n2f) = (n1 as f64, n2 as f64);

    if !ranked.has_ties && n1 < EXACT_MAX_N && n2 < EXACT_MAX_N {
        let cdf = u_null_cdf(n1, n2);
        let u_int = u.round() as usize; // integral without ties
        let lower = cdf[u_int];
        // P(U ≥ u) = P(U ≤ n₁n₂ − u) by symmetry.
        let upper = cdf[n1 * n2 - u_int];
        let p = (2.0 * lower.min(upper)).min(1.0);
        return Some(MannWhitney {
            u,
            p_value: p,
            exact: true,
        });
    }

    Some(MannWhitney {
        u,
        p_value: normal_p(u, n1f, n2f, ranked.tie_sum),
        exact: false,
    })
}

/// Two-sided p of U = `u` by the normal approximation with tie correction (`tie_sum` =
/// Σ(t³−t)) and continuity correction, as R's `wilcox.test` (see [`mann_whitney`]).
fn normal_p(u: f64, n1: f64, n2: f64, tie_sum: f64) -> f64 {
    let nn = n1 + n2;
    let mean = n1 * n2 / 2.0;
    let var = n1 * n2 / 12.0 * ((nn + 1.0) - tie_sum / (nn * (nn - 1.0)));
    if var <= 0.0 {
        return 1.0;
    }
    let d = u - mean;
    let correction = if d > 0.0 {
        0.5
    } else if d < 0.0 {
        -0.5
    } else {
        0.0
    };
    let z = (d - correction) / var.sqrt();
    (2.0 * normal_sf(z.abs())).min(1.0)
}

/// The smallest two-sided p-value [`mann_whitney`] can give with `n1` and `n2` trials: that of
/// two completely separated samples, whatever the size of the change. Exact (both sides
/// below [`EXACT_MAX_N`]): 2 / C(n₁+n₂, n₁) — 4 vs 4: 2/70 = 0.0286, 5 vs 5: 0.0079, 3 vs 3:
/// 0.1; else the normal approximation at U = 0. 1 when a side is empty. No correction for
/// many comparisons can bring a p-value below it, so it decides whether the trials run can
/// reach a verdict at all ([`Comparison::p_floor`], [`trials_for_verdict`]).
pub fn smallest_p(n1: usize, n2: usize) -> f64 {
    if n1 == 0 || n2 == 0 {
        return 1.0;
    }
    if n1 < EXACT_MAX_N && n2 < EXACT_MAX_N {
        return (2.0 * u_null_cdf(n1, n2)[0]).min(1.0);
    }
    normal_p(0.0, n1 as f64, n2 as f64, 0.0)
}

/// Trials per side from which a change can be called in any one of `comparisons` compared
/// at once, at level `alpha`: the smallest n with [`smallest_p`](n, n) × `comparisons` <
/// `alpha`. Both corrections multiply the p-value of a change seen alone among the
/// comparisons by their number (Holm its smallest p-value always, Benjamini–Hochberg when
/// the others show no change), so below n no verdict is certain to be reachable: one
/// comparison needs 4 (2/70 = 0.029), 4 need 5 (4 × 0.0079 = 0.032), 12 need 6, 35 need 7.
/// `None` when `alpha` is not in (0, 1].
pub fn trials_for_verdict(comparisons: usize, alpha: f64) -> Option<usize> {
    if !(alpha > 0.0 && alpha <= 1.0) {
        return None;
    }
    let m = comparisons.max(1) as f64;
    // The smallest p falls faster than geometrically (n = 60: 4e-21), so this ends early.
    (1..).find(|&n| smallest_p(n, n) * m < alpha)
}

struct Ranked {
    /// Mid-ranks (1-based) of a ++ b, in that order.
    ranks: Vec<f64>,
    has_ties: bool,
    /// Σ (t³ − t) over groups of t tied values.
    tie_sum: f64,
}

fn rank_all(a: &[f64], b: &[f64]) -> Ranked {
    let all: Vec<f64> = a.iter().chain(b).copied().collect();
    let mut order: Vec<usize> = (0..all.len()).collect();
    order.sort_by(|&i, &j| all[i].total_cmp(&all[j]));
    let mut ranks = vec![0.0; all.len()];
    let mut has_ties = false;
    let mut tie_sum = 0.0;
    let mut i = 0;
    while i < order.len() {
        let mut j = i + 1;
        while j < order.len() && all[order[j]] == all[order[i]] {
            j += 1;
        }
        // Positions i..j (0-based) share the mid-rank of ranks i+1..=j.
        let mid = (i + 1 + j) as f64 / 2.0;
        for &k in &order[i..j] {
            ranks[k] = mid;
        }
        let t = (j - i) as f64;
        if j - i > 1 {
            has_ties = true;
            tie_sum += t * t * t - t;
        }
        i = j;
    }
    Ranked {
        ranks,
        has_ties,
        tie_sum,
    }
}

/// Exact null distribution of U for sizes n₁, n₂ (no ties): `cdf[k] = P(U ≤ k)`, k = 0..=n₁n₂.
///
/// Method: the number of rank arrangements with U = k is the coefficient of qᵏ in the Gaussian
/// binomial coefficient [n₁+n₂ choose n₁]_q = ∏ᵢ₌₁..ₙ₁ (1 − q^(n₂+i)) / (1 − q^i)
/// (Andrews, *The Theory of Partitions*, 1976, §3.2), expanded with exact integer arithmetic
/// (i128 holds C(98, 49) ≈ 2.5·10²⁸, the largest total for n₁, n₂ < 50).
fn u_null_cdf(n1: usize, n2: usize) -> Vec<f64> {
    let mut poly: Vec<i128> = vec![1];
    for i in 1..=n1 {
        // Multiply by (1 − q^m), m = n₂ + i.
        let m = n2 + i;
        let deg = poly.len() - 1;
        poly.resize(deg + m + 1, 0);
        for k in (m..=deg + m).rev() {
            poly[k] -= poly[k - m];
        }
        // Divide by (1 − q^i): series division, exact because the quotient is a polynomial.
        for k in i..poly.len() {
            poly[k] += poly[k - i];
        }
        poly.truncate(poly.len() - i);
    }
    debug_assert_eq!(poly.len(), n1 * n2 + 1);
    let total: i128 = poly.iter().sum();
    let mut acc: i128 = 0;
    poly.iter()
        .map(|&c| {
            acc += c;
            acc as f64 / total as f64
        })
        .collect()
}

/// Upper tail of the standard normal distribution, P(Z > z) = erfc(z/√2)/2.
fn normal_sf(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// Complementary error function, relative accuracy ~1e-15.
///
/// Method: for |x| < 0.5 (where erfc ≥ 0.48, so 1 − erf loses nothing) the everywhere-positive
/// series
/// erf(x) = 2/√π · e^(−x²) · Σₙ 2ⁿ x^(2n+1) / (1·3·…·(2n+1)) (Abramowitz & Stegun 7.1.6);
/// for x ≥ 0.5 the continued fraction
/// erfc(x) = e^(−x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …)))) (A&S 7.1.14),
/// evaluated backwards with a fixed 1000 terms (converged to 1 ulp from x = 0.5 on).
fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    if x < 0.5 {
        let mut term = x;
        let mut sum = x;
        let mut n = 0.0;
        while term > sum * 1e-17 {
            n += 1.0;
            term *= 2.0 * x * x / (2.0 * n + 1.0);
            sum += term;
        }
        let erf = 2.0 / std::f64::consts::PI.sqrt() * (-x * x).exp() * sum;
        return 1.0 - erf;
    }
    let mut f = x;
    for k in (1..=1000).rev() {
        f = x + (k as f64 / 2.0) / f;
    }
    (-x * x).exp() / (std::f64::consts::PI.sqrt() * f)
}

/// Standard normal quantile Φ⁻¹(p) for p in (0, 1), by bisection on [`normal_sf`]
/// (deterministic, accurate to ~1e-12; only used for large-sample interval ranks).
fn normal_quantile(p: f64) -> f64 {
    let (mut lo, mut hi) = (-40.0_f64, 40.0_f64);
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if 1.0 - normal_sf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

// ---------------------------------------------------------------------------------------------
// Many comparisons at once: Benjamini–Hochberg and Holm–Bonferroni
// ---------------------------------------------------------------------------------------------

/// How the p-values of many comparisons made at once are adjusted, so that some do not look
/// significant by chance alone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Correction {
    /// Benjamini–Hochberg ([`benjamini_hochberg`]): controls the false-discovery rate, the
    /// expected share of wrong calls among the changes called. The default: with many rows
    /// (workloads × client counts × items) it keeps its power where Holm's grows with the
    /// number of rows and can leave every row uncalled.
    #[default]
    #[serde(alias = "bh", alias = "benjamini-hochberg")]
    Fdr,
    /// Holm–Bonferroni ([`holm`]): controls the family-wise error rate, the chance of even one
    /// wrong call among all rows; stricter, on request.
    Holm,
}

impl Correction {
    /// The adjusted p-values of `p`, in the input order.
    pub fn adjust(self, p: &[f64]) -> Vec<f64> {
        match self {
            Correction::Fdr => benjamini_hochberg(p),
            Correction::Holm => holm(p),
        }
    }

    /// Short name for a column header: `BH`, `Holm`.
    pub fn label(self) -> &'static str {
        match self {
            Correction::Fdr => "BH",
            Correction::Holm => "Holm",
        }
    }

    /// What it is and what it controls, for a report's notes.
    pub fn describe(self) -> &'static str {
        match self {
            Correction::Fdr => "Benjamini-Hochberg (false-discovery rate)",
            Correction::Holm => "Holm-Bonferroni (family-wise error rate)",
        }
    }

    /// The spelling of the option (`fdr`, `holm`).
    pub fn as_str(self) -> &'static str {
        match self {
            Correction::Fdr => "fdr",
            Correction::Holm => "holm",
        }
    }
}

impl fmt::Display for Correction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Correction {
    type Err = crate::ValueError;
    fn from_str(s: &str) -> Result<Self, crate::ValueError> {
        match s.to_ascii_lowercase().as_str() {
            "fdr" | "bh" | "benjamini-hochberg" => Ok(Correction::Fdr),
            "holm" => Ok(Correction::Holm),
            _ => Err(crate::ValueError::Unknown {
                what: "correction",
                given: s.to_owned(),
                expected: "fdr (Benjamini-Hochberg, the default) or holm".to_owned(),
            }),
        }
    }
}

/// Benjamini–Hochberg adjusted p-values, in the input order.
///
/// Method (Benjamini & Hochberg 1995, in the adjusted-p form of R's `p.adjust(method =
/// "BH")` and statsmodels' `multipletests(method = "fdr_bh")`): sort the m p-values
/// ascending, p₍ᵢ₎ ↦ min(1, minⱼ≥ᵢ m·p₍ⱼ₎/j). Rejecting where the adjusted p < α keeps the
/// expected share of false discoveries among the rejections at most α (independent or
/// positively dependent tests). Example: four p-values of 0.0286 stay 0.0286 (Holm: 0.114
/// each). A NaN p-value stays NaN and still counts in m, as in [`holm`].
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).filter(|&i| !p[i].is_nan()).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    let mut out = vec![f64::NAN; m];
    let mut running = 1.0_f64;
    for (rank, &i) in order.iter().enumerate().rev() {
        running = running.min(m as f64 * p[i] / (rank + 1) as f64);
        out[i] = running;
    }
    out
}

/// The adjusted p-value that `p` would get in place of `sorted_others`' missing member: the
/// family being `sorted_others` (the other members' p-values, ascending, NaN left out) and
/// `p`, of `m` members in all (NaN ones included). Equal to `correction.adjust(family)` at
/// that member's place, in O(m): a comparison's floor ([`Comparison::p_floor`]) and a
/// figure that tests another's hypothesis ([`compare_all_with`]) ask it once per row.
fn adjusted_in_place(sorted_others: &[f64], m: usize, p: f64, correction: Correction) -> f64 {
    let mf = m as f64;
    let adjusted = match correction {
        // Tied values share the value at the first of them: the running maximum up to p.
        Correction::Holm => {
            let r = sorted_others.partition_point(|x| *x < p);
            sorted_others[..r]
                .iter()
                .enumerate()
                .map(|(j, x)| (mf - j as f64) * x)
                .fold((mf - r as f64) * p, f64::max)
        }
        // Tied values share the value at the last of them: the running minimum from p up.
        Correction::Fdr => {
            let r = sorted_others.partition_point(|x| *x <= p);
            sorted_others[r..]
                .iter()
                .enumerate()
                .map(|(j, x)| mf * x / (r + j + 2) as f64)
                .fold(mf * p / (r + 1) as f64, f64::min)
        }
    };
    adjusted.min(1.0)
}

/// Holm–Bonferroni adjusted p-values, in the input order.
///
/// Method (Holm 1979, in the adjusted-p form of R's `p.adjust(method = "holm")`): sort the m
/// p-values ascending, p₍ᵢ₎ ↦ min(1, maxⱼ≤ᵢ (m − j + 1)·p₍ⱼ₎). The max makes the result
/// monotone in p; rejecting where the adjusted p < α controls the family-wise error rate.
/// Example: [0.01, 0.04, 0.03, 0.005] → [0.03, 0.06, 0.06, 0.02]. A NaN p-value stays NaN
/// (it is no evidence either way) and still counts in m, which keeps the others conservative.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).filter(|&i| !p[i].is_nan()).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    let mut out = vec![f64::NAN; m];
    let mut running = 0.0_f64;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max((m - rank) as f64 * p[i]).min(1.0);
        out[i] = running;
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Relative change with a confidence interval
// ---------------------------------------------------------------------------------------------

/// Hodges–Lehmann estimate of the ratio B/A with Moses' confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RatioEstimate {
    /// Point estimate of B/A − 1: exp(median of all ln bⱼ − ln aᵢ) − 1.
    pub estimate: f64,
    /// Confidence interval of B/A − 1; `None` when the samples are too small for a finite
    /// interval at the requested confidence (at 95 %: fewer than 4 vs 4).
    pub ci: Option<(f64, f64)>,
}

/// Distribution-free estimate and confidence interval of the relative change B/A − 1.
///
/// Method: shift model on log values (a multiplicative change is a shift of ln x).
/// The Hodges–Lehmann estimate (Hodges & Lehmann 1963) is the median of the n₁n₂ pairwise
/// differences Dᵢⱼ = ln bⱼ − ln aᵢ; Moses' interval (Moses 1965; Hollander & Wolfe §4.3) is
/// [D₍ₖ₎, D₍ₙ₁ₙ₂₊₁₋ₖ₎] of the sorted differences with the largest k ≥ 1 such that
/// 2·P(U ≤ k − 1) ≤ 1 − confidence under the exact Mann–Whitney null distribution (normal
/// approximation with continuity correction when a side has ≥ 50 values). Both ends are
/// exponentiated: (e^D₍ₖ₎ − 1, e^D₍ₙ₁ₙ₂₊₁₋ₖ₎ − 1). Deterministic (no bootstrap).
///
/// `None` when a side is empty or any value is not finite and > 0 (no logarithm).
pub fn ratio_estimate(a: &[f64], b: &[f64], confidence: f64) -> Option<RatioEstimate> {
    if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|&x| !(x.is_finite() && x > 0.0)) {
        return None;
    }
    let (n1, n2) = (a.len(), b.len());
    let mut diffs: Vec<f64> = Vec::with_capacity(n1 * n2);
    for &x in a {
        for &y in b {
            diffs.push(y.ln() - x.ln());
        }
    }
    diffs.sort_by(f64::total_cmp);
    let hl = median_of_sorted(&diffs);
    let ci = moses_rank(n1, n2, confidence).map(|k| {
        let big_n = diffs.len();
        (diffs[k - 1].exp_m1(), diffs[big_n - k].exp_m1())
    });
    Some(RatioEstimate {
        estimate: hl.exp_m1(),
        ci,
    })
}

/// Rank k (1-based) of Moses' interval, see [`ratio_estimate`]; `None` if no finite interval.
fn moses_rank(n1: usize, n2: usize, confidence: f64) -> Option<usize> {
    if !(confidence > 0.0 && confidence < 1.0) || n1 == 0 || n2 == 0 {
        return None;
    }
    let tail = (1.0 - confidence) / 2.0;
    let big_n = n1 * n2;
    let k = if n1 < EXACT_MAX_N && n2 < EXACT_MAX_N {
        let cdf = u_null_cdf(n1, n2);
        // Largest k with P(U ≤ k − 1) ≤ tail.
        cdf.iter().take_while(|&&c| c <= tail + PROB_EPS).count()
    } else {
        let (n1f, n2f) = (n1 as f64, n2 as f64);
        let z = normal_quantile(1.0 - tail);
        let sd = (n1f * n2f * (n1f + n2f + 1.0) / 12.0).sqrt();
        // P(U ≤ k − 1) ≈ Φ((k − 1 + ½ − n₁n₂/2)/σ) ≤ tail  ⇔  k ≤ n₁n₂/2 + ½ − zσ.
        let kf = (n1f * n2f / 2.0 + 0.5 - z * sd).floor();
        if kf < 1.0 { 0 } else { kf as usize }
    };
    (k >= 1 && k <= big_n + 1 - k).then_some(k)
}

// ---------------------------------------------------------------------------------------------
// Verdicts
// ---------------------------------------------------------------------------------------------

/// Outcome of an A/B comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Fewer than `min_trials` on a side: no verdict is possible, none is guessed.
    TooFewTrials,
    /// Not significant, or the change may lie inside the noise band.
    NoChange,
    /// Tested, but no verdict was reachable with these trials: even completely separated
    /// trials would have given a p-value of at least alpha after the correction for the
    /// comparisons made with it ([`Comparison::p_floor`]). Not "no change": run more trials
    /// ([`trials_for_verdict`]).
    Unreachable,
    /// Significant and the whole interval is beyond the noise band, in the good direction.
    Improvement,
    /// Significant and the whole interval is beyond the noise band, in the bad direction.
    Regression,
}

impl Verdict {
    /// Short label for report cells: `~` for no change (benchstat), `too few trials`,
    /// `unreachable`, `improvement`, `regression`.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::TooFewTrials => "too few trials",
            Verdict::NoChange => "~",
            Verdict::Unreachable => "unreachable",
            Verdict::Improvement => "improvement",
            Verdict::Regression => "regression",
        }
    }

    /// A verdict that calls a change (improvement or regression).
    pub fn is_change(self) -> bool {
        matches!(self, Verdict::Improvement | Verdict::Regression)
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// Options of [`compare`] / [`compare_all`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CompareOptions {
    /// Significance level for the adjusted p-value; the interval of the relative change is
    /// computed at confidence 1 − alpha. Default 0.05.
    pub alpha: f64,
    /// Relative changes whose interval reaches into ±noise_band are not called. Default 0.01
    /// (criterion's default noise threshold). A fraction ≥ 0: where a plan or a report sets
    /// it, in percent, [`noise_band_from_percent`] checks it.
    pub noise_band: f64,
    /// Throughput: `true`; latency / seconds: `false`.
    pub higher_is_better: bool,
    /// Fewer trials than this on either side → [`Verdict::TooFewTrials`]. Default 4 (the
    /// smallest size at which a two-sided p below 0.05 is possible: 2/70 = 0.0286).
    pub min_trials: usize,
    /// How [`compare_all`] adjusts the p-values of many comparisons (default
    /// Benjamini–Hochberg).
    #[serde(default)]
    pub correction: Correction,
}

impl CompareOptions {
    /// The defaults (α = 0.05, noise band 1 %, at least 4 trials a side, Benjamini–Hochberg)
    /// for a metric where larger values are better (`true`: throughput) or worse (`false`:
    /// latency).
    pub fn new(higher_is_better: bool) -> Self {
        Self {
            alpha: 0.05,
            noise_band: 0.01,
            higher_is_better,
            min_trials: 4,
            correction: Correction::default(),
        }
    }
}

/// A noise band given in percent (a plan's `[report] noise-band`, `dbrig report
/// --noise-band`) as the fraction [`CompareOptions::noise_band`] holds: `Some(percent / 100)`
/// for a percentage from 0 to [`MAX_NOISE_BAND_PERCENT`], `None` otherwise — a negative band
/// would call changes whose interval lies inside the noise, and a NaN or a huge one would
/// silently call none.
pub fn noise_band_from_percent(percent: f64) -> Option<f64> {
    (percent.is_finite() && (0.0..=MAX_NOISE_BAND_PERCENT).contains(&percent))
        .then_some(percent / 100.0)
}

/// The widest noise band, in percent: ±1000 % (a tenfold change).
pub const MAX_NOISE_BAND_PERCENT: f64 = 1000.0;

/// Result of comparing baseline A with candidate B.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub n_a: usize,
    pub n_b: usize,
    /// median(B)/median(A) − 1 (the seeds' `(B/A*100)-100` divided by 100); `None` when a side
    /// is empty or median(A) is 0. Given even with too few trials, for the ratio tables.
    pub delta: Option<f64>,
    /// Hodges–Lehmann estimate of B/A − 1 (see [`ratio_estimate`]).
    pub delta_hl: Option<f64>,
    /// Confidence interval (1 − alpha) of B/A − 1 (Moses' interval, see [`ratio_estimate`]).
    pub delta_ci: Option<(f64, f64)>,
    /// Two-sided Mann–Whitney p-value; `None` with too few trials.
    pub p_value: Option<f64>,
    /// The p-value adjusted for the comparisons made with it ([`CompareOptions::correction`];
    /// equal to `p_value` for a single [`compare`]).
    pub p_adjusted: Option<f64>,
    /// The smallest adjusted p-value these trial counts could have given: [`smallest_p`] in
    /// place of this comparison's p-value, the others' as they were. At or above alpha no
    /// verdict was reachable ([`Verdict::Unreachable`]), however large the change.
    #[serde(default)]
    pub p_floor: Option<f64>,
    pub verdict: Verdict,
}

/// Compares baseline `a` with candidate `b` (one value per trial each).
///
/// Rules (measurement spec, "A/B verdicts"): fewer than `min_trials` (and at least 1) trials on
/// either side → [`Verdict::TooFewTrials`], without p-value or interval. Otherwise the
/// two-sided Mann–Whitney p-value ([`mann_whitney`]) and the Hodges–Lehmann/Moses interval of
/// B/A − 1 at confidence 1 − alpha ([`ratio_estimate`]); when even the smallest p-value these
/// trial counts allow ([`smallest_p`]) is not below alpha, [`Verdict::Unreachable`]; else a
/// change is called only if p < alpha **and** the whole interval lies outside ±noise_band
/// (criterion's noise threshold), its direction decided by `higher_is_better`. Anything else,
/// including a missing interval (non-positive values), is [`Verdict::NoChange`].
pub fn compare(a: &[f64], b: &[f64], opts: &CompareOptions) -> Comparison {
    let delta = match (median(a), median(b)) {
        (Some(ma), Some(mb)) if ma != 0.0 => Some(mb / ma - 1.0),
        _ => None,
    };
    let min = opts.min_trials.max(1);
    // A side holding a NaN or infinite value has no verdict (the test refuses it): its finite
    // trials are counted, none is guessed from the rest.
    let test = if a.len() < min || b.len() < min {
        None
    } else {
        mann_whitney(a, b)
    };
    let Some(test) = test else {
        let count = |s: &[f64]| s.iter().filter(|x| x.is_finite()).count();
        return Comparison {
            n_a: count(a),
            n_b: count(b),
            delta,
            delta_hl: None,
            delta_ci: None,
            p_value: None,
            p_adjusted: None,
            p_floor: None,
            verdict: Verdict::TooFewTrials,
        };
    };
    let p = test.p_value;
    let floor = smallest_p(a.len(), b.len());
    let est = ratio_estimate(a, b, 1.0 - opts.alpha);
    let delta_ci = est.and_then(|e| e.ci);
    Comparison {
        n_a: a.len(),
        n_b: b.len(),
        delta,
        delta_hl: est.map(|e| e.estimate),
        delta_ci,
        p_value: Some(p),
        p_adjusted: Some(p),
        p_floor: Some(floor),
        verdict: decide(p, floor, delta_ci, opts),
    }
}

/// Trials per side that would narrow the confidence interval of B/A − 1 to ±`half_width` at
/// the noise `a` and `b` showed: n = (z · √(π/2))² · (cv_a² + cv_b²) / half_width², the
/// normal approximation of the interval of a ratio of two medians (a median needs π/2 times
/// the trials of a mean for the same precision), z for `confidence`. An estimate for planning
/// trial counts, not a guarantee. `None` with fewer than 2 trials on a side, a zero mean, or
/// a non-positive `half_width`.
pub fn trials_for_half_width(
    a: &[f64],
    b: &[f64],
    half_width: f64,
    confidence: f64,
) -> Option<usize> {
    if half_width.is_nan() || half_width <= 0.0 {
        return None;
    }
    let cv_a = summarize(a)?.cv()?;
    let cv_b = summarize(b)?.cv()?;
    let z = normal_quantile(0.5 + confidence / 2.0) * (std::f64::consts::PI / 2.0).sqrt();
    let n = (z * z * (cv_a * cv_a + cv_b * cv_b) / (half_width * half_width)).ceil();
    Some((n as usize).max(2))
}

/// Compares many (A, B) pairs as one family: like [`compare`], then the p-values of all
/// comparisons that have one (not [`Verdict::TooFewTrials`]) are adjusted with
/// [`CompareOptions::correction`] and the verdicts are decided on the adjusted p-values, each
/// with its floor ([`Comparison::p_floor`]). The intervals of the relative change stay at
/// confidence 1 − alpha (per comparison, not simultaneous); the correction guards the family
/// through the significance condition, which every called change must also meet.
pub fn compare_all(pairs: &[(Vec<f64>, Vec<f64>)], opts: &CompareOptions) -> Vec<Comparison> {
    compare_all_with(pairs, &vec![None; pairs.len()], opts)
}

/// [`compare_all`] where some pairs test the hypothesis of another pair: `same_as[i] =
/// Some(j)` says pair i measures what pair j measures (a figure derived from j's own
/// measurement: a micro item's MB/s and cycles/row from the seconds its rows/s comes from).
/// Such a pair is not one more member of the family: its p-value is adjusted as if it stood
/// in pair j's place. A pair j that is itself derived or has no p-value leaves pair i a
/// member of its own.
pub fn compare_all_with(
    pairs: &[(Vec<f64>, Vec<f64>)],
    same_as: &[Option<usize>],
    opts: &CompareOptions,
) -> Vec<Comparison> {
    let mut out: Vec<Comparison> = pairs.iter().map(|(a, b)| compare(a, b, opts)).collect();
    let tested = |i: usize| out[i].p_value.is_some();
    let standing_for = |i: usize| {
        same_as
            .get(i)
            .copied()
            .flatten()
            .filter(|&j| j != i && j < out.len() && tested(j))
            .filter(|&j| same_as.get(j).copied().flatten().is_none())
    };
    let members: Vec<usize> = (0..out.len())
        .filter(|&i| tested(i) && standing_for(i).is_none())
        .collect();
    let slot: Vec<Option<usize>> = (0..out.len())
        .map(|i| {
            let at = standing_for(i).unwrap_or(i);
            members.iter().position(|&k| k == at).filter(|_| tested(i))
        })
        .collect();
    let raw: Vec<f64> = members.iter().filter_map(|&i| out[i].p_value).collect();
    let m = raw.len();
    let correction = opts.correction;
    let adjusted = correction.adjust(&raw);
    let mut sorted: Vec<f64> = raw.iter().copied().filter(|p| !p.is_nan()).collect();
    sorted.sort_by(f64::total_cmp);
    // The other members' p-values, ascending: the family without member k.
    let others_of = |k: usize| {
        let mut v = sorted.clone();
        if let Some(at) = v.iter().position(|x| x.total_cmp(&raw[k]).is_eq()) {
            v.remove(at);
        }
        v
    };
    for (i, c) in out.iter_mut().enumerate() {
        let (Some(k), Some(p)) = (slot[i], c.p_value) else {
            continue;
        };
        let others = others_of(k);
        let adj = if members[k] == i {
            adjusted[k]
        } else {
            adjusted_in_place(&others, m, p, correction)
        };
        let floor = adjusted_in_place(&others, m, smallest_p(c.n_a, c.n_b), correction);
        c.p_adjusted = Some(adj);
        c.p_floor = Some(floor);
        c.verdict = decide(adj, floor, c.delta_ci, opts);
    }
    out
}

/// The verdict rule of [`compare`] for a trial count that allows a test: `floor` is the
/// smallest adjusted p-value the trial counts allowed.
fn decide(p: f64, floor: f64, ci: Option<(f64, f64)>, opts: &CompareOptions) -> Verdict {
    if floor.is_nan() || floor >= opts.alpha {
        return Verdict::Unreachable;
    }
    let Some((lo, hi)) = ci else {
        return Verdict::NoChange;
    };
    if p.is_nan() || p >= opts.alpha {
        return Verdict::NoChange;
    }
    let up = lo > opts.noise_band;
    let down = hi < -opts.noise_band;
    match (up, down) {
        (true, _) if opts.higher_is_better => Verdict::Improvement,
        (true, _) => Verdict::Regression,
        (_, true) if opts.higher_is_better => Verdict::Regression,
        (_, true) => Verdict::Improvement,
        _ => Verdict::NoChange,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only improvements and regressions call a change.
    #[test]
    fn only_improvements_and_regressions_are_changes() {
        assert!(Verdict::Improvement.is_change());
        assert!(Verdict::Regression.is_change());
        assert!(!Verdict::NoChange.is_change());
        assert!(!Verdict::TooFewTrials.is_change());
    }

    /// Both sides' noise adds up: by hand, a = [9, 11] and b = [18, 22] each have cv √2/10
    /// (sample sd √2), so cv_a² + cv_b² = 0.04; z for 95 % is 1.959964 · √(π/2) = 2.456430;
    /// n = ⌈2.456430² · 0.04 / 0.05²⌉ = ⌈96.54⌉ = 97. One side alone gives ⌈48.27⌉ = 49.
    #[test]
    fn trials_for_half_width_adds_both_sides_noise() {
        assert_eq!(
            trials_for_half_width(&[9.0, 11.0], &[18.0, 22.0], 0.05, 0.95),
            Some(97)
        );
        assert_eq!(
            trials_for_half_width(&[9.0, 11.0], &[20.0, 20.0], 0.05, 0.95),
            Some(49)
        );
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    /// The test on finite values (which it always accepts).
    fn mw(a: &[f64], b: &[f64]) -> MannWhitney {
        mann_whitney(a, b).expect("finite values")
    }

    macro_rules! assert_close {
        ($a:expr, $b:expr, $tol:expr) => {{
            let (a, b) = ($a, $b);
            assert!(close(a, b, $tol), "{a} != {b} (tol {})", $tol);
        }};
    }

    // ----- summaries -------------------------------------------------------------------------

    #[test]
    fn summary_basic_even() {
        // [2,4,4,4,5,5,7,9]: sum 40 → mean 5; squared deviations 9+1+1+1+0+0+4+16 = 32,
        // sample variance 32/7 = 4.571428…, sd = 2.138089935…; median (4+5)/2 = 4.5.
        let s = summarize(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(s.n, 8);
        assert_close!(s.mean, 5.0, 1e-12);
        assert_close!(s.stddev.unwrap(), (32.0_f64 / 7.0).sqrt(), 1e-12);
        assert_close!(s.stddev.unwrap(), 2.138_089_935, 1e-9);
        assert_eq!((s.min, s.max, s.median), (2.0, 9.0, 4.5));
        // n = 8 at 95 %: j = 2 would need 2·(1+8)/256 = 0.0703 ≤ 0.05 – no; j = 1: 2/256 ok.
        assert_eq!(s.median_ci, Some((2.0, 9.0)));
        // |x − 4.5| = 2.5,.5,.5,.5,.5,.5,2.5,4.5 → sorted middle pair (.5, .5) → MAD 0.5;
        // limit 7.413 > 4.5 → no outliers.
        assert_eq!(s.mad, 0.5);
        assert!(s.outliers.is_empty());
        assert!(!s.first_is_outlier);
        // 2.138 / 5 = 42.8 % ≥ 10 % → unstable.
        assert!(s.unstable);
    }

    #[test]
    fn summary_basic_odd_unsorted() {
        // [3,1,2]: mean 2, deviations 1,−1,0 → var 2/2 = 1 → sd 1; median 2.
        let s = summarize(&[3.0, 1.0, 2.0]).unwrap();
        assert_close!(s.mean, 2.0, 1e-12);
        assert_close!(s.stddev.unwrap(), 1.0, 1e-12);
        assert_eq!((s.min, s.max, s.median), (1.0, 3.0, 2.0));
        assert_eq!(s.median_ci, None); // n < 6
        assert_eq!(s.mad, 1.0); // |dev| = 1,1,0 → median 1
        assert_close!(s.cv().unwrap(), 0.5, 1e-12);
    }

    #[test]
    fn summary_tiny_samples_never_panic() {
        assert_eq!(summarize(&[]), None);
        assert_eq!(median(&[]), None);
        assert_eq!(mad(&[]), None);
        assert!(outliers(&[]).is_empty());

        let one = summarize(&[7.0]).unwrap();
        assert_eq!(one.n, 1);
        assert_eq!(
            (one.mean, one.min, one.max, one.median, one.mad),
            (7.0, 7.0, 7.0, 7.0, 0.0)
        );
        assert_eq!(one.stddev, None);
        assert_eq!(one.median_ci, None);
        assert!(one.outliers.is_empty() && !one.first_is_outlier && !one.unstable);
        assert_eq!(one.cv(), None);

        // [1, 3]: mean 2, sd = √2 (70.7 % of the mean → unstable), median 2, MAD 1.
        let two = summarize(&[1.0, 3.0]).unwrap();
        assert_close!(two.stddev.unwrap(), 2.0_f64.sqrt(), 1e-12);
        assert_eq!((two.median, two.mad), (2.0, 1.0));
        assert!(two.unstable);
        assert!(two.outliers.is_empty());
    }

    /// NaN (of either sign bit) and infinities are refused where trial values enter.
    #[test]
    fn non_finite_trials_are_refused() {
        for bad in [f64::NAN, -f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let trials = [100.0, bad, 101.0, 99.0, 100.5, 100.2];
            assert_eq!(summarize(&trials), None, "{bad}");
            assert_eq!(median(&trials), None, "{bad}");
            assert_eq!(mad(&trials), None, "{bad}");
            assert!(outliers(&trials).is_empty());
            assert!(!finite(&trials));
            let good = [100.0, 101.0, 99.0, 100.5, 100.2];
            for (a, b) in [(&trials[..], &good[..]), (&good[..], &trials[..])] {
                let c = compare(a, b, &CompareOptions::new(true));
                assert_eq!(c.verdict, Verdict::TooFewTrials, "{bad}");
                assert_eq!((c.p_value, c.delta), (None, None));
                assert_eq!(c.n_a + c.n_b, 10);
            }
        }
        assert!(finite(&[1.0, -2.0, 0.0]));
    }

    #[test]
    fn median_ci_order_statistic_indices() {
        // 1 − 2·P(Bin(n,½) ≤ j−1) ≥ 0.95, largest j:
        // n = 5: j = 1 gives 1 − 2/32 = 0.9375 < 0.95 → none.
        assert_eq!(median_ci_ranks(5, 0.95), None);
        // n = 6: j = 1 gives 1 − 2/64 = 0.96875; j = 2: 1 − 2·7/64 = 0.78 → (1, 6).
        assert_eq!(median_ci_ranks(6, 0.95), Some((1, 6)));
        // n = 9: j = 2: 1 − 2·10/512 = 0.961; j = 3: 1 − 2·46/512 = 0.82 → (2, 8).
        assert_eq!(median_ci_ranks(9, 0.95), Some((2, 8)));
        // n = 10: j = 2: 1 − 2·11/1024 = 0.9785; j = 3: 1 − 2·56/1024 = 0.8906 → (2, 9).
        assert_eq!(median_ci_ranks(10, 0.95), Some((2, 9)));
        // n = 20: P(Bin ≤ 5) = (1+20+190+1140+4845+15504)/2²⁰ = 21700/1048576 = 0.0207 ≤ 0.025,
        // P(Bin ≤ 6) = 60460/1048576 = 0.0577 > 0.025 → j − 1 = 5 → (6, 15).
        assert_eq!(median_ci_ranks(20, 0.95), Some((6, 15)));
        for n in 0..6 {
            assert_eq!(median_ci_ranks(n, 0.95), None, "n = {n}");
        }
        assert_eq!(median_ci_ranks(10, 1.0), None);
        assert_eq!(median_ci_ranks(10, 0.0), None);
        for odd in [f64::NAN, 1.5, -0.5] {
            assert_eq!(median_ci_ranks(10, odd), None, "{odd}");
        }
        // Coverage exactly equal to the confidence is enough: n = 6, j = 1 covers 1 − 2/64.
        assert_eq!(median_ci_ranks(6, 0.968_75), Some((1, 6)));
        assert_eq!(median_ci_ranks(6, 0.968_751), None);
    }

    /// Against exact integer binomial sums (no logarithms): for every n up to 120 and three
    /// levels, the largest j with 2·Σ_{k<j} C(n, k) ≤ (1 − confidence)·2ⁿ.
    #[test]
    fn median_ci_ranks_match_exact_binomial_sums() {
        for n in 1..=120usize {
            // C(n, k) for k = 0..=n in u128 (C(120, 60) < 2^117).
            let mut c = vec![1u128; n + 1];
            for k in 1..=n {
                c[k] = c[k - 1] * (n - k + 1) as u128 / k as u128;
            }
            let total = 2f64.powi(n as i32);
            for confidence in [0.9, 0.95, 0.99] {
                let mut j = 0;
                let mut cdf = 0u128;
                for (k, ck) in c.iter().enumerate().take(n / 2 + 1) {
                    cdf += ck;
                    if 2.0 * cdf as f64 > (1.0 - confidence) * total * (1.0 + 1e-12) {
                        break;
                    }
                    j = k + 1;
                }
                let want = (j >= 1).then_some((j, n + 1 - j));
                assert_eq!(
                    median_ci_ranks(n, confidence),
                    want,
                    "n = {n}, {confidence}"
                );
            }
        }
        // Large n does not underflow: the interval hugs the middle.
        let (lo, hi) = median_ci_ranks(10_000, 0.95).unwrap();
        assert!(lo > 4800 && hi < 5200 && lo + hi == 10_001);
    }

    #[test]
    fn median_ci_values() {
        let sorted: Vec<f64> = (1..=10).map(|i| i as f64 * 10.0).collect();
        assert_eq!(median_ci(&sorted, 0.95), Some((20.0, 90.0)));
        let sorted6 = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        assert_eq!(median_ci(&sorted6, 0.95), Some((1.0, 6.0)));
        assert_eq!(median_ci(&sorted6[..5], 0.95), None);
        let sorted20: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(median_ci(&sorted20, 0.95), Some((6.0, 15.0)));
        // summarize sorts first: shuffled 1..=10 → (2, 9).
        let s = summarize(&[7.0, 3.0, 10.0, 1.0, 5.0, 9.0, 2.0, 8.0, 4.0, 6.0]).unwrap();
        assert_eq!(s.median_ci, Some((2.0, 9.0)));
        assert_eq!(s.median, 5.5);
    }

    #[test]
    fn mad_and_outliers() {
        // [10,11,12,13,100]: median 12, |dev| 2,1,0,1,88 → MAD 1 → limit 14.826 → 100 flagged.
        let s = summarize(&[10.0, 11.0, 12.0, 13.0, 100.0]).unwrap();
        assert_eq!(s.mad, 1.0);
        assert_eq!(s.outliers, vec![4]);
        assert!(!s.first_is_outlier);
        // Same values, outlier first → warm-up warning.
        let s = summarize(&[100.0, 10.0, 11.0, 12.0, 13.0]).unwrap();
        assert_eq!(s.outliers, vec![0]);
        assert!(s.first_is_outlier);
        // Even n: [1,2,3,4]: median 2.5, |dev| 1.5,.5,.5,1.5 → MAD (0.5+1.5)/2 = 1.
        assert_eq!(mad(&[1.0, 2.0, 3.0, 4.0]), Some(1.0));
    }

    #[test]
    fn outliers_with_ties() {
        // [1,1,2,2,3,3,20]: median 2, |dev| 1,1,0,0,1,1,18 → sorted 0,0,1,1,1,1,18 → MAD 1;
        // 18 > 14.826 → index 6 flagged.
        assert_eq!(outliers(&[1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 20.0]), vec![6]);
        // 16 instead of 20: |dev| 14 ≤ 14.826 → not flagged.
        assert!(outliers(&[1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 16.0]).is_empty());
    }

    #[test]
    fn outliers_with_zero_mad() {
        // [5,5,5,5,9]: median 5, |dev| 0,0,0,0,4 → MAD 0 → anything ≠ median is flagged.
        let s = summarize(&[5.0, 5.0, 5.0, 5.0, 9.0]).unwrap();
        assert_eq!(s.mad, 0.0);
        assert_eq!(s.outliers, vec![4]);
        // All equal: MAD 0, nothing differs → no outliers, sd 0 → not unstable.
        let s = summarize(&[5.0; 6]).unwrap();
        assert_eq!(s.mad, 0.0);
        assert!(s.outliers.is_empty());
        assert_eq!(s.stddev, Some(0.0));
        assert!(!s.unstable);
        // All zero: sd 0 and mean 0 → not unstable, cv undefined.
        let s = summarize(&[0.0; 4]).unwrap();
        assert!(!s.unstable);
        assert_eq!(s.cv(), None);
    }

    #[test]
    fn unstable_flag() {
        // [100,100,100,130]: mean 107.5, squared deviations 56.25·3 + 506.25 = 675,
        // var 675/3 = 225 → sd 15 → 15/107.5 = 13.95 % ≥ 10 % → unstable.
        let s = summarize(&[100.0, 100.0, 100.0, 130.0]).unwrap();
        assert_close!(s.stddev.unwrap(), 15.0, 1e-12);
        assert!(s.unstable);
        // [100,101,99,100]: var (0+1+1+0)/3 → sd 0.816 → 0.8 % → stable.
        let s = summarize(&[100.0, 101.0, 99.0, 100.0]).unwrap();
        assert!(!s.unstable);
        // Boundary: [90, 110] has sd 20/√2 = 14.1 % ≥ 10 %; [95, 105]: 10/√2 = 7.07 % < 10 %.
        assert!(summarize(&[90.0, 110.0]).unwrap().unstable);
        assert!(!summarize(&[95.0, 105.0]).unwrap().unstable);
    }

    // ----- Mann–Whitney ----------------------------------------------------------------------

    #[test]
    fn u_null_distribution_counts() {
        // [6 choose 3]_q = 1,1,2,3,3,3,3,2,1,1 (sum 20); [8 choose 4]_q =
        // 1,1,2,3,5,5,7,7,8,7,7,5,5,3,2,1,1 (sum 70).
        let cdf = u_null_cdf(3, 3);
        let counts3 = [1, 1, 2, 3, 3, 3, 3, 2, 1, 1];
        let mut acc = 0;
        for (k, c) in counts3.iter().enumerate() {
            acc += c;
            assert_close!(cdf[k], f64::from(acc) / 20.0, 1e-15);
        }
        let cdf = u_null_cdf(4, 4);
        let counts4 = [1, 1, 2, 3, 5, 5, 7, 7, 8, 7, 7, 5, 5, 3, 2, 1, 1];
        let mut acc = 0;
        for (k, c) in counts4.iter().enumerate() {
            acc += c;
            assert_close!(cdf[k], f64::from(acc) / 70.0, 1e-15);
        }
        // Unequal sizes: 1 vs 3 → U uniform on 0..=3.
        assert_eq!(u_null_cdf(1, 3), vec![0.25, 0.5, 0.75, 1.0]);
        assert_eq!(u_null_cdf(3, 1), vec![0.25, 0.5, 0.75, 1.0]);
        // Largest exact size does not overflow: C(98, 49) arrangements, CDF ends at 1.
        let big = u_null_cdf(49, 49);
        assert_eq!(big.len(), 49 * 49 + 1);
        assert_close!(*big.last().unwrap(), 1.0, 1e-12);
        assert_close!(big[1200], 1.0 - big[49 * 49 - 1201], 1e-12); // symmetry
    }

    #[test]
    fn mann_whitney_exact_small() {
        // 3 vs 3 completely separated: U = 0, P(U ≤ 0) = 1/20 → p = 2/20 = 0.1.
        let r = mw(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]);
        assert!(r.exact);
        assert_eq!(r.u, 0.0);
        assert_close!(r.p_value, 0.1, 1e-12);
        // Reversed: U = 9 = n₁n₂, P(U ≥ 9) = 1/20 → same p.
        let r = mw(&[4.0, 5.0, 6.0], &[1.0, 2.0, 3.0]);
        assert_eq!(r.u, 9.0);
        assert_close!(r.p_value, 0.1, 1e-12);
        // 3 vs 3, a = [1,2,4], b = [3,5,6]: U = 1 (only 4 > 3); P(U ≤ 1) = 2/20 → p = 0.2.
        let r = mw(&[1.0, 2.0, 4.0], &[3.0, 5.0, 6.0]);
        assert_eq!(r.u, 1.0);
        assert_close!(r.p_value, 0.2, 1e-12);
        // 4 vs 4 separated: p = 2/70 = 0.028571…
        let r = mw(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0]);
        assert_eq!(r.u, 0.0);
        assert_close!(r.p_value, 2.0 / 70.0, 1e-12);
        assert_close!(r.p_value, 0.0286, 1e-4);
        // 4 vs 4, a = [1,2,3,5], b = [4,6,7,8]: U = 1; P(U ≤ 1) = 2/70 → p = 4/70.
        let r = mw(&[1.0, 2.0, 3.0, 5.0], &[4.0, 6.0, 7.0, 8.0]);
        assert_eq!(r.u, 1.0);
        assert_close!(r.p_value, 4.0 / 70.0, 1e-12);
        // 4 vs 4 interleaved: a = [1,4,5,8], b = [2,3,6,7]: U = 0+2+2+4 = 8 = n₁n₂/2;
        // P(U ≤ 8) = 39/70 → 2·39/70 > 1 → p = 1.
        let r = mw(&[1.0, 4.0, 5.0, 8.0], &[2.0, 3.0, 6.0, 7.0]);
        assert_eq!(r.u, 8.0);
        assert_eq!(r.p_value, 1.0);
        // 1 vs 1: P(U ≤ 0) = 1/2 → p = 1.
        assert_eq!(mw(&[1.0], &[2.0]).p_value, 1.0);
        // 2 vs 3 separated: 1/C(5,2) = 1/10 → p = 0.2.
        assert_close!(mw(&[1.0, 2.0], &[3.0, 4.0, 5.0]).p_value, 0.2, 1e-12);
    }

    #[test]
    fn mann_whitney_ties_normal_approximation() {
        // a = [1,2,2,3], b = [2,3,4,5]. Mid-ranks: 1→1, the three 2s → 3, the two 3s → 5.5,
        // 4 → 7, 5 → 8. R₁ = 1+3+3+5.5 = 12.5, U = 12.5 − 10 = 2.5. E[U] = 8.
        // Ties: (27−3) + (8−2) = 30 → σ² = 16/12·(9 − 30/56) = 11.2857…, σ = 3.35942.
        // z = (2.5 − 8 + 0.5)/σ = −1.48835 → p = 2Φ(−1.48835) = erfc(1.48835/√2) = 0.136658.
        let r = mw(&[1.0, 2.0, 2.0, 3.0], &[2.0, 3.0, 4.0, 5.0]);
        assert!(!r.exact);
        assert_eq!(r.u, 2.5);
        assert_close!(r.p_value, 0.136_658_247_738, 1e-9);
        // Tie only inside a: a = [1,1,2,3], b = [5,6,7,8] separated: U = 0, ties 2³−2 = 6,
        // σ² = 16/12·(9 − 6/56) = 11.857, z = (0 − 8 + 0.5)/3.44342 = −2.17807 → p = 0.029401.
        let r = mw(&[1.0, 1.0, 2.0, 3.0], &[5.0, 6.0, 7.0, 8.0]);
        assert!(!r.exact);
        assert_close!(r.p_value, 0.029_401_048, 1e-8);
    }

    #[test]
    fn mann_whitney_identical_and_empty() {
        // Identical samples: every value tied in pairs, U = 8 = E[U] → z = 0 → p = 1.
        let x = [1.0, 2.0, 3.0, 4.0];
        let r = mw(&x, &x);
        assert_eq!(r.u, 8.0);
        assert_eq!(r.p_value, 1.0);
        // All values equal: σ = 0 → p = 1.
        assert_eq!(mw(&[5.0; 4], &[5.0; 4]).p_value, 1.0);
        assert_eq!(mw(&[], &[1.0]).p_value, 1.0);
        assert_eq!(mw(&[1.0], &[]).p_value, 1.0);
        assert_eq!(mw(&[], &[]).p_value, 1.0);
        assert_eq!(mw(&[1.0], &[1.0]).p_value, 1.0);
        // An empty side is no test at all, whatever the other holds (ties, or 50 values and
        // more, would otherwise take the normal approximation).
        let none = MannWhitney {
            u: 0.0,
            p_value: 1.0,
            exact: true,
        };
        let many: Vec<f64> = (0..60).map(f64::from).collect();
        for side in [&[1.0, 1.0, 2.0][..], &many] {
            assert_eq!(mw(side, &[]), none);
            assert_eq!(mw(&[], side), none);
        }
    }

    #[test]
    fn mann_whitney_large_samples_use_normal() {
        // 60 vs 60 separated: U = 0, σ² = 3600·121/12 = 36300 → z = (−1800 + .5)/190.526
        // = −9.4449 → p ≈ 3.6e-21 (tiny, finite, positive).
        let a: Vec<f64> = (0..60).map(f64::from).collect();
        let b: Vec<f64> = (100..160).map(f64::from).collect();
        let r = mw(&a, &b);
        assert!(!r.exact);
        assert!(r.p_value > 0.0 && r.p_value < 1e-19, "{}", r.p_value);
        // R's bound: exact while both sides have fewer than 50 values, 50 on either side
        // takes the normal approximation.
        let n = |k: u32, from: u32| (from..from + k).map(f64::from).collect::<Vec<f64>>();
        assert!(mw(&n(49, 0), &n(49, 100)).exact);
        assert!(!mw(&n(50, 0), &n(3, 100)).exact);
        assert!(!mw(&n(3, 0), &n(50, 100)).exact);
    }

    #[test]
    fn erfc_matches_reference_values() {
        // Reference values from a libm erfc.
        let cases = [
            (0.0, 1.0),
            (0.5, 0.479_500_122_186_953_5),
            (1.0, 0.157_299_207_050_285_13),
            (2.0, 0.004_677_734_981_047_265),
            (2.9, 4.109_787_809_945_886e-5),
            (3.0, 2.209_049_699_858_543_8e-5),
            (3.5, 7.430_983_723_414_128e-7),
            (5.0, 1.537_459_794_428_035_1e-12),
            (10.0, 2.088_487_583_762_545e-45),
        ];
        for (x, want) in cases {
            let got = erfc(x);
            assert!(
                ((got - want) / want).abs() < 1e-12,
                "erfc({x}) = {got}, want {want}"
            );
        }
        assert_close!(erfc(-1.0), 2.0 - 0.157_299_207_050_285_13, 1e-15);
        assert_close!(normal_quantile(0.975), 1.959_963_984_540_054, 1e-9);
        assert_close!(normal_quantile(0.5), 0.0, 1e-12);
    }

    /// An interval that touches the noise band reaches into it: only one wholly beyond the
    /// band calls a change; a p-value equal to alpha is not significant.
    #[test]
    fn decide_at_the_edges() {
        let up = CompareOptions::new(true);
        let band = up.noise_band;
        assert_eq!(
            decide(0.01, 0.001, Some((band, 0.2)), &up),
            Verdict::NoChange
        );
        assert_eq!(
            decide(0.01, 0.001, Some((band + 1e-9, 0.2)), &up),
            Verdict::Improvement
        );
        assert_eq!(
            decide(0.01, 0.001, Some((-0.2, -band)), &up),
            Verdict::NoChange
        );
        assert_eq!(
            decide(0.01, 0.001, Some((-0.2, -band - 1e-9)), &up),
            Verdict::Regression
        );
        assert_eq!(
            decide(up.alpha, 0.001, Some((0.1, 0.2)), &up),
            Verdict::NoChange
        );
        assert_eq!(
            decide(f64::NAN, 0.001, Some((0.1, 0.2)), &up),
            Verdict::NoChange
        );
        assert_eq!(decide(0.01, 0.001, None, &up), Verdict::NoChange);
        // A floor at alpha or above: no verdict was reachable, whatever p and the interval.
        assert_eq!(
            decide(0.01, up.alpha, Some((0.1, 0.2)), &up),
            Verdict::Unreachable
        );
        assert_eq!(
            decide(0.01, f64::NAN, Some((0.1, 0.2)), &up),
            Verdict::Unreachable
        );
        let down = CompareOptions::new(false);
        assert_eq!(
            decide(0.01, 0.001, Some((0.1, 0.2)), &down),
            Verdict::Regression
        );
        assert_eq!(
            decide(0.01, 0.001, Some((-0.2, -0.1)), &down),
            Verdict::Improvement
        );
    }

    // ----- Holm ------------------------------------------------------------------------------

    #[test]
    fn holm_adjustment() {
        // Sorted: 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 → max → 0.06.
        let adj = holm(&[0.01, 0.04, 0.03, 0.005]);
        let want = [0.03, 0.06, 0.06, 0.02];
        for (g, w) in adj.iter().zip(want) {
            assert_close!(*g, w, 1e-15);
        }
        // A NaN stays NaN and counts in m (3): 0.01·3 = 0.03, 0.04·2 = 0.08; a NaN with its
        // sign bit set (which total_cmp sorts first) changes nothing.
        for nan in [f64::NAN, -f64::NAN] {
            let adj = holm(&[0.01, nan, 0.04]);
            assert!(adj[1].is_nan(), "{adj:?}");
            assert_close!(adj[0], 0.03, 1e-15);
            assert_close!(adj[2], 0.08, 1e-15);
        }
        // Cap at 1: 0.5·2 = 1.0, then max(1.0, 0.6) = 1.0.
        assert_eq!(holm(&[0.5, 0.6]), vec![1.0, 1.0]);
        // Monotone: 0.4·2 = 0.8, max(0.8, 0.6·1) = 0.8.
        assert_close!(holm(&[0.6, 0.4])[0], 0.8, 1e-15);
        assert_close!(holm(&[0.6, 0.4])[1], 0.8, 1e-15);
        assert_eq!(holm(&[]), Vec::<f64>::new());
        assert_eq!(holm(&[0.02]), vec![0.02]);
    }

    // ----- references computed outside dbrig ---------------------------------------------------
    //
    // The constants below were computed with SciPy 1.17.1 and statsmodels 0.15.0 (Python 3,
    // a scratch venv: `pip install scipy statsmodels`):
    //   scipy.stats.mannwhitneyu(a, b, alternative="two-sided", method="exact")
    //   scipy.stats.mannwhitneyu(a, b, method="asymptotic", use_continuity=True)
    //   statsmodels.stats.multitest.multipletests(p, method="fdr_bh" | "holm")[1]
    // The tests do not run Python; they hold its answers.

    /// Exact two-sided p-values against SciPy's `mannwhitneyu(method="exact")`, no ties.
    #[test]
    fn mann_whitney_matches_scipy_exact() {
        let cases: [(&[f64], &[f64], f64, f64); 7] = [
            (&A, &B_UP, 0.0, 0.028_571_428_571_428_57),
            (
                &[1.0, 2.0, 3.0, 4.0, 5.0],
                &[6.0, 7.0, 8.0, 9.0, 10.0],
                0.0,
                0.007_936_507_936_507_936,
            ),
            (
                &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
                &[7.0, 8.0, 9.0, 10.0, 11.0, 12.0],
                0.0,
                0.002_164_502_164_502_164_5,
            ),
            (
                &[1.0, 2.0, 3.0],
                &[4.0, 5.0, 6.0, 7.0, 8.0],
                0.0,
                0.035_714_285_714_285_71,
            ),
            (
                &[1.5, 4.2, 5.1, 8.8, 9.3],
                &[2.2, 3.1, 6.4, 7.7, 10.5, 11.9],
                12.0,
                0.662_337_662_337_662_3,
            ),
            (
                &[10.1, 10.4, 10.9, 11.3, 12.0, 12.2, 12.8],
                &[9.7, 10.8, 11.6, 11.9, 12.5, 13.1, 13.4, 13.9],
                19.0,
                0.335_664_335_664_335_73,
            ),
            (&[1.0, 4.0, 5.0, 8.0], &[2.0, 3.0, 6.0, 7.0], 8.0, 1.0),
        ];
        for (a, b, u, p) in cases {
            let r = mw(a, b);
            assert!(r.exact, "{a:?} {b:?}");
            assert_eq!(r.u, u, "{a:?} {b:?}");
            assert_close!(r.p_value, p, 1e-12);
        }
    }

    /// The normal approximation (ties; a side of 50 or more) against SciPy's
    /// `mannwhitneyu(method="asymptotic", use_continuity=True)`, which corrects for ties as R.
    #[test]
    fn mann_whitney_matches_scipy_asymptotic() {
        let r = mw(&[1.0, 2.0, 2.0, 3.0, 5.0], &[2.0, 4.0, 5.0, 5.0, 6.0]);
        assert!(!r.exact);
        assert_close!(r.p_value, 0.133_862_144_755_430_9, 1e-12);
        // 55 vs 55, a few ties: a = 100 + (37·i mod 50), b = 103 + (23·i mod 50).
        let a: Vec<f64> = (0..55).map(|i| f64::from(100 + (i * 37) % 50)).collect();
        let b: Vec<f64> = (0..55).map(|i| f64::from(103 + (i * 23) % 50)).collect();
        let r = mw(&a, &b);
        assert_eq!(r.u, 1327.0);
        assert_close!(r.p_value, 0.268_664_264_290_539_9, 1e-12);
    }

    /// The smallest p-value a trial count allows: SciPy's exact p of n vs n completely
    /// separated values, n = 2..8, and 3 vs 5; 60 vs 60 by the normal approximation.
    #[test]
    fn smallest_p_matches_scipy() {
        let scipy = [
            (2, 0.333_333_333_333_333_3),
            (3, 0.1),
            (4, 0.028_571_428_571_428_57),
            (5, 0.007_936_507_936_507_936),
            (6, 0.002_164_502_164_502_164_5),
            (7, 0.000_582_750_582_750_582_8),
            (8, 0.000_155_400_155_400_155_4),
        ];
        for (n, p) in scipy {
            assert_close!(smallest_p(n, n), p, 1e-15);
            // The same as the test gives for such trials.
            let a: Vec<f64> = (0..n).map(|i| i as f64).collect();
            let b: Vec<f64> = (0..n).map(|i| 100.0 + i as f64).collect();
            assert_close!(mw(&a, &b).p_value, smallest_p(n, n), 1e-15);
        }
        assert_close!(smallest_p(3, 5), 0.035_714_285_714_285_71, 1e-15);
        assert_close!(smallest_p(5, 3), 0.035_714_285_714_285_71, 1e-15);
        let p60 = smallest_p(60, 60);
        assert!(
            ((p60 - 3.556_570_974_984_722_6e-21) / p60).abs() < 1e-9,
            "{p60}"
        );
        assert_eq!(smallest_p(0, 4), 1.0);
        assert_eq!(smallest_p(1, 1), 1.0);
    }

    /// Benjamini–Hochberg and Holm against statsmodels' `multipletests`.
    #[test]
    fn corrections_match_statsmodels() {
        let p = [0.01, 0.04, 0.03, 0.005, 0.2, 0.0286, 0.5, 0.049];
        let fdr_bh = [
            0.04,
            0.064,
            0.06,
            0.04,
            0.228_571_428_571_428_6,
            0.06,
            0.5,
            0.065_333_333_333_333_34,
        ];
        let holm_sm = [0.07, 0.1716, 0.1716, 0.04, 0.4, 0.1716, 0.5, 0.1716];
        for (got, want) in [
            (benjamini_hochberg(&p), fdr_bh),
            (holm(&p), holm_sm),
            (Correction::Fdr.adjust(&p), fdr_bh),
            (Correction::Holm.adjust(&p), holm_sm),
        ] {
            for (g, w) in got.iter().zip(want) {
                assert_close!(*g, w, 1e-12);
            }
        }
        // Four rows at 4 vs 4's smallest p: BH keeps 0.0286, Holm makes each 0.1144.
        let four = [0.0286; 4];
        assert!(
            benjamini_hochberg(&four)
                .iter()
                .all(|&x| close(x, 0.0286, 1e-15))
        );
        assert!(holm(&four).iter().all(|&x| close(x, 0.1144, 1e-12)));
        // One such row among three that show nothing: 0.1144 under both.
        let lone = [0.0286, 0.3, 0.6, 0.9];
        let bh = benjamini_hochberg(&lone);
        for (g, w) in bh.iter().zip([0.1144, 0.6, 0.8, 0.9]) {
            assert_close!(*g, w, 1e-12);
        }
        assert_close!(holm(&lone)[0], 0.1144, 1e-12);
        // A NaN stays NaN and counts in m: 0.01·3/1 = 0.03, 0.04·3/2 = 0.06.
        let adj = benjamini_hochberg(&[0.01, f64::NAN, 0.04]);
        assert!(adj[1].is_nan());
        assert_close!(adj[0], 0.03, 1e-15);
        assert_close!(adj[2], 0.06, 1e-15);
        assert!(benjamini_hochberg(&[]).is_empty());
    }

    /// The one-member shortcut gives what adjusting the whole family gives, for both
    /// corrections, ties and every place (deterministic pseudo-random families).
    #[test]
    fn adjusted_in_place_equals_the_whole_familys_adjustment() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Coarse values, so that ties happen.
            (x % 40) as f64 / 40.0 + 0.001
        };
        for m in 1..=12 {
            for _ in 0..30 {
                let family: Vec<f64> = (0..m).map(|_| next()).collect();
                for c in [Correction::Fdr, Correction::Holm] {
                    let full = c.adjust(&family);
                    for k in 0..m {
                        let mut others: Vec<f64> = family
                            .iter()
                            .enumerate()
                            .filter(|&(j, _)| j != k)
                            .map(|(_, p)| *p)
                            .collect();
                        others.sort_by(f64::total_cmp);
                        let got = adjusted_in_place(&others, m, family[k], c);
                        assert_close!(got, full[k], 1e-12);
                    }
                }
            }
        }
    }

    #[test]
    fn correction_names() {
        assert_eq!(Correction::default(), Correction::Fdr);
        for (s, c) in [
            ("fdr", Correction::Fdr),
            ("BH", Correction::Fdr),
            ("benjamini-hochberg", Correction::Fdr),
            ("Holm", Correction::Holm),
        ] {
            assert_eq!(s.parse::<Correction>(), Ok(c));
        }
        assert!(
            "bonferroni"
                .parse::<Correction>()
                .unwrap_err()
                .to_string()
                .contains("fdr")
        );
        assert_eq!(Correction::Holm.to_string(), "holm");
        assert_eq!(
            serde_json::from_str::<Correction>("\"bh\"").unwrap(),
            Correction::Fdr
        );
        assert_eq!(
            serde_json::to_string(&Correction::Holm).unwrap(),
            "\"holm\""
        );
    }

    /// Trials a side for a verdict among m comparisons: 2/C(2n, n) · m < 0.05.
    #[test]
    fn trials_for_a_verdict_grow_with_the_comparisons() {
        // m = 1: 4 (0.0286); 4: 5 (0.0317; 4 gives 0.114); 6: 5 (0.0476); 7: 6 (0.0556 at
        // 5); 12: 6 (0.026); 23: 6 (0.0498); 24: 7 (0.052 at 6); 35: 7; 85: 7 (0.0495); 86: 8.
        for (m, n) in [
            (0, 4),
            (1, 4),
            (2, 5),
            (4, 5),
            (6, 5),
            (7, 6),
            (12, 6),
            (23, 6),
            (24, 7),
            (35, 7),
            (85, 7),
            (86, 8),
        ] {
            assert_eq!(trials_for_verdict(m, 0.05), Some(n), "m = {m}");
        }
        assert_eq!(trials_for_verdict(1, 0.1), Some(4)); // 3 a side give exactly 0.1
        // A million: 2/C(26, 13) = 1.9e-7 is not below 5e-8, 2/C(28, 14) = 4.99e-8 is.
        assert_eq!(trials_for_verdict(1_000_000, 0.05), Some(14));
        for bad in [0.0, -0.1, 1.5, f64::NAN] {
            assert_eq!(trials_for_verdict(4, bad), None, "{bad}");
        }
    }

    // ----- ratio interval --------------------------------------------------------------------

    #[test]
    fn moses_ranks() {
        // 3 vs 3: 2·P(U ≤ 0) = 0.1 > 0.05 → no finite 95 % interval.
        assert_eq!(moses_rank(3, 3, 0.95), None);
        // 4 vs 4: 2/70 = 0.0286 ≤ 0.05, 2·P(U ≤ 1) = 4/70 > 0.05 → k = 1 (min, max).
        assert_eq!(moses_rank(4, 4, 0.95), Some(1));
        // 5 vs 5: cumulative counts 1,2,4,7 of 252; 0.025·252 = 6.3 → P(U ≤ 2) ok → k = 3
        // (the tabulated two-sided 5 % critical value of U is 2).
        assert_eq!(moses_rank(5, 5, 0.95), Some(3));
        // 10 vs 10: tabulated critical value 23 → k = 24.
        assert_eq!(moses_rank(10, 10, 0.95), Some(24));
        // Normal approximation (≥ 50 a side) agrees with the exact rank at 50 vs 50.
        let exact = u_null_cdf(50, 50)
            .iter()
            .take_while(|&&c| c <= 0.025 + PROB_EPS)
            .count();
        let approx = moses_rank(50, 50, 0.95).unwrap();
        assert!(exact.abs_diff(approx) <= 2, "exact {exact} approx {approx}");
        assert_eq!(moses_rank(0, 4, 0.95), None);
    }

    #[test]
    fn ratio_estimate_interval() {
        // 4 vs 4: k = 1 → [min, max] of ln(b/a): ln(110/103) … ln(113/100).
        let a = [100.0, 101.0, 102.0, 103.0];
        let b = [110.0, 111.0, 112.0, 113.0];
        let r = ratio_estimate(&a, &b, 0.95).unwrap();
        let (lo, hi) = r.ci.unwrap();
        assert_close!(lo, 110.0 / 103.0 - 1.0, 1e-12);
        assert_close!(hi, 113.0 / 100.0 - 1.0, 1e-12);
        assert!(lo < r.estimate && r.estimate < hi);
        // Exact multiplicative shift: b = 1.2·a → every ln(bⱼ/aᵢ) with i = j is ln 1.2 and the
        // pairwise differences are symmetric around it → HL estimate 0.2.
        let a = [10.0, 20.0, 40.0, 80.0, 160.0];
        let b: Vec<f64> = a.iter().map(|x| x * 1.2).collect();
        assert_close!(ratio_estimate(&a, &b, 0.95).unwrap().estimate, 0.2, 1e-12);
        // Too few for an interval, but an estimate.
        let r = ratio_estimate(&[1.0, 2.0, 3.0], &[2.0, 3.0, 4.0], 0.95).unwrap();
        assert_eq!(r.ci, None);
        // Non-positive or empty → none.
        assert_eq!(ratio_estimate(&[0.0, 1.0], &[1.0, 2.0], 0.95), None);
        assert_eq!(ratio_estimate(&[], &[1.0], 0.95), None);
    }

    // ----- verdicts --------------------------------------------------------------------------

    const A: [f64; 4] = [100.0, 101.0, 102.0, 103.0];
    const B_UP: [f64; 4] = [110.0, 111.0, 112.0, 113.0];
    const B_DOWN: [f64; 4] = [90.0, 91.0, 92.0, 93.0];

    #[test]
    fn verdict_direction() {
        // Separated 4 vs 4: p = 2/70 < 0.05; CI of B_UP/A − 1 is [0.068, 0.13] > 1 %.
        let lat = CompareOptions::new(false);
        let tput = CompareOptions::new(true);
        let c = compare(&A, &B_UP, &lat);
        assert_eq!(c.verdict, Verdict::Regression);
        assert_close!(c.p_value.unwrap(), 2.0 / 70.0, 1e-12);
        assert_eq!(c.p_adjusted, c.p_value);
        // delta = median(B)/median(A) − 1 = 111.5/101.5 − 1.
        assert_close!(c.delta.unwrap(), 111.5 / 101.5 - 1.0, 1e-12);
        assert_eq!(compare(&A, &B_UP, &tput).verdict, Verdict::Improvement);
        // B smaller: CI [90/103 − 1, 93/100 − 1] = [−0.126, −0.07] < −1 %.
        assert_eq!(compare(&A, &B_DOWN, &lat).verdict, Verdict::Improvement);
        assert_eq!(compare(&A, &B_DOWN, &tput).verdict, Verdict::Regression);
    }

    /// Called directly, the test refuses what has no rank; the same values finite pass.
    #[test]
    fn mann_whitney_refuses_nan_and_infinite_values() {
        let a = [1.0, 2.0, 3.0, 4.0];
        for bad in [f64::NAN, -f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let b = [5.0, 6.0, 7.0, bad];
            assert_eq!(mann_whitney(&a, &b), None, "{bad}");
            assert_eq!(mann_whitney(&b, &a), None, "{bad}");
            // Empty on the other side: still refused (not the empty side's p = 1).
            assert_eq!(mann_whitney(&[], &b), None, "{bad}");
            assert_eq!(mann_whitney(&b, &[]), None, "{bad}");
        }
        assert_eq!(mw(&a, &[5.0, 6.0, 7.0, 8.0]).u, 0.0);
    }

    #[test]
    fn noise_band_in_percent_is_finite_and_not_negative() {
        assert_eq!(noise_band_from_percent(2.0), Some(0.02));
        assert_eq!(noise_band_from_percent(0.0), Some(0.0));
        assert_eq!(noise_band_from_percent(250.0), Some(2.5));
        assert_eq!(noise_band_from_percent(1000.0), Some(10.0));
        assert_eq!(noise_band_from_percent(1000.5), None);
        for bad in [-0.5, -1e-300, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(noise_band_from_percent(bad), None, "{bad}");
        }
    }

    #[test]
    fn verdict_noise_band() {
        // Separated (p = 0.0286) but the CI [100.5/100.3 − 1, 100.8/100 − 1] = [0.2 %, 0.8 %]
        // reaches into ±1 % → no change; with a 0.1 % band it is a change.
        let a = [100.0, 100.1, 100.2, 100.3];
        let b = [100.5, 100.6, 100.7, 100.8];
        let mut opts = CompareOptions::new(true);
        let c = compare(&a, &b, &opts);
        assert!(c.p_value.unwrap() < 0.05);
        assert_eq!(c.verdict, Verdict::NoChange);
        assert_eq!(c.verdict.label(), "~");
        opts.noise_band = 0.001;
        assert_eq!(compare(&a, &b, &opts).verdict, Verdict::Improvement);
    }

    #[test]
    fn verdict_not_significant() {
        // Interleaved: p = 1 → no change even though the medians differ.
        let a = [1.0, 4.0, 5.0, 8.0];
        let b = [2.0, 3.0, 6.0, 7.0];
        let c = compare(&a, &b, &CompareOptions::new(true));
        assert_eq!(c.p_value, Some(1.0));
        assert_eq!(c.verdict, Verdict::NoChange);
    }

    #[test]
    fn verdict_too_few_trials() {
        let opts = CompareOptions::new(false);
        // 3 vs 3, fully separated, 10 % apart: no verdict, no p, but the delta for tables.
        let c = compare(&A[..3], &B_UP[..3], &opts);
        assert_eq!(c.verdict, Verdict::TooFewTrials);
        assert_eq!(c.verdict.label(), "too few trials");
        assert_eq!(c.verdict.to_string(), "too few trials");
        assert_eq!((c.p_value, c.p_adjusted, c.delta_ci), (None, None, None));
        assert_close!(c.delta.unwrap(), 111.0 / 101.0 - 1.0, 1e-12);
        // One side short is enough.
        assert_eq!(
            compare(&A, &B_UP[..3], &opts).verdict,
            Verdict::TooFewTrials
        );
        // n = 0, 1, 2 never panic.
        for n in 0..=2 {
            for m in 0..=2 {
                let c = compare(&A[..n], &B_UP[..m], &opts);
                assert_eq!(c.verdict, Verdict::TooFewTrials);
                assert_eq!(c.delta.is_some(), n > 0 && m > 0);
            }
        }
        // min_trials 0 still refuses an empty side.
        let zero = CompareOptions {
            min_trials: 0,
            ..opts
        };
        assert_eq!(compare(&[], &[1.0], &zero).verdict, Verdict::TooFewTrials);
        // Lower min_trials: 2 vs 2 is tested (p = 2/6 at best), never a change at α = 0.05:
        // no verdict was reachable, which is not "no change".
        let two = CompareOptions {
            min_trials: 2,
            ..opts
        };
        let c = compare(&A[..2], &B_UP[..2], &two);
        assert_close!(c.p_value.unwrap(), 1.0 / 3.0, 1e-12);
        assert_close!(c.p_floor.unwrap(), 1.0 / 3.0, 1e-12);
        assert_eq!(c.verdict, Verdict::Unreachable);
        assert_eq!(c.verdict.label(), "unreachable");
        assert!(!c.verdict.is_change());
    }

    #[test]
    fn verdict_non_positive_values() {
        // A zero in A: no log-ratio interval → never a change; delta from the medians.
        let a = [0.0, 1.0, 2.0, 3.0];
        let b = [10.0, 11.0, 12.0, 13.0];
        let c = compare(&a, &b, &CompareOptions::new(true));
        assert_eq!(c.delta_ci, None);
        assert_eq!(c.verdict, Verdict::NoChange);
        assert_close!(c.delta.unwrap(), 11.5 / 1.5 - 1.0, 1e-12);
        // median(A) = 0 → no delta.
        let c = compare(&[0.0; 4], &b, &CompareOptions::new(true));
        assert_eq!(c.delta, None);
    }

    #[test]
    fn compare_all_applies_holm() {
        let lat = CompareOptions {
            correction: Correction::Holm,
            ..CompareOptions::new(false)
        };
        // Two separated 4 vs 4 cells: 2·(2/70) = 0.057 ≥ 0.05 after Holm: no verdict was
        // reachable (the floor is that same 0.057), not "no change".
        let pairs = vec![(A.to_vec(), B_UP.to_vec()), (A.to_vec(), B_DOWN.to_vec())];
        let out = compare_all(&pairs, &lat);
        for c in &out {
            assert_close!(c.p_adjusted.unwrap(), 4.0 / 70.0, 1e-12);
            assert_close!(c.p_floor.unwrap(), 4.0 / 70.0, 1e-12);
            assert_eq!(c.verdict, Verdict::Unreachable);
        }
        // A 3-vs-3 cell stays outside the family: the other one keeps p = 2/70 → regression.
        let pairs = vec![
            (A.to_vec(), B_UP.to_vec()),
            (A[..3].to_vec(), B_DOWN[..3].to_vec()),
        ];
        let out = compare_all(&pairs, &lat);
        assert_eq!(out[0].verdict, Verdict::Regression);
        assert_close!(out[0].p_adjusted.unwrap(), 2.0 / 70.0, 1e-12);
        assert_eq!(out[1].verdict, Verdict::TooFewTrials);
        assert_eq!(out[1].p_adjusted, None);
        // 8 vs 8 separated (p = 2/12870) with a 4 vs 4 one: sorted 2·(2/12870), 1·(2/70)
        // → both significant.
        let a8: Vec<f64> = (0..8).map(|i| 100.0 + f64::from(i)).collect();
        let b8: Vec<f64> = (0..8).map(|i| 120.0 + f64::from(i)).collect();
        let pairs = vec![(a8, b8), (A.to_vec(), B_UP.to_vec())];
        let out = compare_all(&pairs, &lat);
        assert_close!(out[0].p_adjusted.unwrap(), 4.0 / 12870.0, 1e-12);
        assert_close!(out[1].p_adjusted.unwrap(), 2.0 / 70.0, 1e-12);
        assert!(out.iter().all(|c| c.verdict == Verdict::Regression));
        assert!(compare_all(&[], &lat).is_empty());
    }

    /// The case: four rows of 4 vs 4, each B more than four times A. Holm can call
    /// none (every floor 4 · 2/70 = 0.114); Benjamini–Hochberg, the default, calls all four
    /// (each 0.0286). With one clear row among three that show nothing, BH cannot call it
    /// either (0.114): unreachable, and five trials a side would make it reachable.
    #[test]
    fn benjamini_hochberg_reaches_the_verdicts_holm_cannot() {
        let a = [100.0, 101.0, 102.0, 103.0];
        let b = [433.0, 434.0, 435.0, 436.0];
        let pairs = vec![(a.to_vec(), b.to_vec()); 4];
        let holm_opts = CompareOptions {
            correction: Correction::Holm,
            ..CompareOptions::new(true)
        };
        for c in compare_all(&pairs, &holm_opts) {
            assert_close!(c.p_floor.unwrap(), 0.1143, 1e-3);
            assert_eq!(c.verdict, Verdict::Unreachable);
            // The interval is still there to read: [+320 %, +336 %].
            let (lo, hi) = c.delta_ci.unwrap();
            assert!(lo > 3.2 && hi < 3.37, "{lo} {hi}");
        }
        for c in compare_all(&pairs, &CompareOptions::new(true)) {
            assert_close!(c.p_adjusted.unwrap(), 2.0 / 70.0, 1e-12);
            assert_eq!(c.verdict, Verdict::Improvement);
        }
        let mut lone = vec![(a.to_vec(), b.to_vec())];
        lone.extend((0..3).map(|_| (a.to_vec(), vec![99.0, 101.5, 102.5, 104.0])));
        let out = compare_all(&lone, &CompareOptions::new(true));
        assert_close!(out[0].p_floor.unwrap(), 4.0 * 2.0 / 70.0, 1e-12);
        assert_eq!(out[0].verdict, Verdict::Unreachable);
        assert_eq!(trials_for_verdict(4, 0.05), Some(5));
        let a5 = [100.0, 101.0, 102.0, 103.0, 104.0];
        let mut five = vec![(a5.to_vec(), vec![433.0, 434.0, 435.0, 436.0, 437.0])];
        five.extend((0..3).map(|_| (a5.to_vec(), vec![99.0, 101.5, 102.5, 103.5, 104.5])));
        let out = compare_all(&five, &CompareOptions::new(true));
        assert_eq!(out[0].verdict, Verdict::Improvement);
        assert!(out[1..].iter().all(|c| c.verdict == Verdict::NoChange));
    }

    /// A pair that tests another pair's hypothesis (a derived figure) stands in its place:
    /// the family keeps its size, and the derived figure gets the adjusted p it would have
    /// had there.
    #[test]
    fn a_derived_figure_stands_in_its_items_place() {
        let a5 = [100.0, 101.0, 102.0, 103.0, 104.0];
        let up = vec![110.0, 111.0, 112.0, 113.0, 114.0];
        let noisy = vec![99.0, 101.5, 102.5, 103.5, 104.5];
        // Items 0 and 1; 2 is derived from 0 (the same trials in another unit), 3 from 1.
        let pairs = vec![
            (a5.to_vec(), up.clone()),
            (a5.to_vec(), noisy.clone()),
            (a5.to_vec(), up.iter().map(|x| x * 2.0).collect()),
            (a5.to_vec(), noisy.iter().map(|x| x / 2.0).collect()),
        ];
        let opts = CompareOptions {
            correction: Correction::Holm,
            ..CompareOptions::new(true)
        };
        let same_as = [None, None, Some(0), Some(1)];
        let out = compare_all_with(&pairs, &same_as, &opts);
        // A family of two: 2 · 2/252, not 4 · 2/252.
        assert_close!(out[0].p_adjusted.unwrap(), 2.0 * 2.0 / 252.0, 1e-12);
        assert_close!(out[2].p_adjusted.unwrap(), 2.0 * 2.0 / 252.0, 1e-12);
        assert_close!(out[0].p_floor.unwrap(), 2.0 * 2.0 / 252.0, 1e-12);
        assert_eq!(out[2].verdict, Verdict::Improvement);
        // Without the link the derived figures are members: four.
        let plain = compare_all(&pairs, &opts);
        assert_close!(plain[0].p_adjusted.unwrap(), 4.0 * 2.0 / 252.0, 1e-12);
        // A link to a pair without a p-value, or to itself, leaves a pair a member.
        let short = vec![(a5[..2].to_vec(), up[..2].to_vec()), pairs[0].clone()];
        let out = compare_all_with(&short, &[None, Some(0)], &opts);
        assert_close!(out[1].p_adjusted.unwrap(), 2.0 / 252.0, 1e-12);
        let out = compare_all_with(&pairs[..1], &[Some(0)], &opts);
        assert_close!(out[0].p_adjusted.unwrap(), 2.0 / 252.0, 1e-12);
    }

    #[test]
    fn serde_round_trip() {
        let s = summarize(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 100.0]).unwrap();
        let json = serde_json::to_string(&s).unwrap();
        let back: Summary = serde_json::from_str(&json).unwrap();
        assert_eq!(
            (back.n, back.median, &back.outliers),
            (s.n, s.median, &s.outliers)
        );
        assert_eq!(back.median_ci, s.median_ci);
        assert_close!(back.mean, s.mean, 1e-12);
        let c = compare(&A, &B_UP, &CompareOptions::new(false));
        let json = serde_json::to_string(&c).unwrap();
        assert!(json.contains("\"regression\""));
        // serde_json without its `float_roundtrip` feature may be 1 ulp off when parsing.
        let back: Comparison = serde_json::from_str(&json).unwrap();
        assert_eq!(
            (back.verdict, back.n_a, back.n_b),
            (c.verdict, c.n_a, c.n_b)
        );
        assert_close!(back.delta.unwrap(), c.delta.unwrap(), 1e-15);
        assert_close!(back.delta_ci.unwrap().0, c.delta_ci.unwrap().0, 1e-15);
        assert_close!(back.p_value.unwrap(), c.p_value.unwrap(), 1e-15);
        let o = CompareOptions::new(true);
        let json = serde_json::to_string(&o).unwrap();
        assert_eq!(serde_json::from_str::<CompareOptions>(&json).unwrap(), o);
    }

    #[test]
    fn trials_to_narrow_an_interval() {
        let a = [90.0, 110.0, 90.0, 110.0];
        let cv = summarize(&a).unwrap().cv().unwrap();
        assert!((cv - 0.11547).abs() < 1e-4, "{cv}");
        let n = trials_for_half_width(&a, &a, 0.05, 0.95).unwrap();
        // 1.96² · π/2 · 2 · 0.11547² / 0.05² = 64.4
        assert_eq!(n, 65);
        // Half the width, four times the trials.
        let n2 = trials_for_half_width(&a, &a, 0.025, 0.95).unwrap();
        assert!((257..=258).contains(&n2), "{n2}");
        assert_eq!(trials_for_half_width(&a, &[1.0], 0.05, 0.95), None);
        assert_eq!(trials_for_half_width(&a, &a, 0.0, 0.95), None);
    }

    /// The series branch (0 < |x| < 0.5): Abramowitz & Stegun Table 7.1 gives erf to 10
    /// decimals (erf 0.1 = 0.1124629160, 0.2 = 0.2227025892, 0.3 = 0.3286267595,
    /// 0.4 = 0.4283923550); a libm erfc gives the full digits, up to the branch's edge.
    #[test]
    fn erfc_series_branch_matches_the_tables() {
        let table = [
            (0.1, 0.112_462_916_0),
            (0.2, 0.222_702_589_2),
            (0.3, 0.328_626_759_5),
            (0.4, 0.428_392_355_0),
        ];
        for (x, erf) in table {
            assert_close!(erfc(x), 1.0 - erf, 1e-10);
        }
        let libm = [
            (0.1, 0.887_537_083_981_715_2),
            (0.25, 0.723_673_609_831_763_1),
            (0.4, 0.571_607_644_953_331_5),
            (0.49, 0.488_331_738_811_476_9),
            (0.4999, 0.479_588_004_838_613_4),
        ];
        for (x, want) in libm {
            let got = erfc(x);
            assert!(
                ((got - want) / want).abs() < 1e-14,
                "erfc({x}) = {got}, want {want}"
            );
            // erfc(−x) = 2 − erfc(x).
            assert_close!(erfc(-x), 2.0 - want, 1e-14);
        }
    }

    /// Upper normal tail and quantile against the standard table values: P(Z > 1) =
    /// 0.158655, P(Z > 3) = 0.00134990; z of 0.9, 0.995 and 0.025 = 1.281552, 2.575829,
    /// −1.959964 (full digits from a libm erfc / NormalDist.inv_cdf).
    #[test]
    fn normal_tail_and_quantile_reference_values() {
        assert_close!(normal_sf(1.0), 0.158_655_253_931_457_07, 1e-15);
        assert_close!(normal_sf(-1.0), 0.841_344_746_068_542_9, 1e-15);
        assert_close!(normal_sf(3.0), 0.001_349_898_031_630_095, 1e-15);
        assert_close!(normal_sf(0.0), 0.5, 1e-15);
        assert_close!(normal_quantile(0.9), 1.281_551_565_544_600_8, 1e-9);
        assert_close!(normal_quantile(0.995), 2.575_829_303_548_9, 1e-9);
        assert_close!(normal_quantile(0.025), -1.959_963_984_540_054, 1e-9);
    }

    /// median and mad on their own (summarize has its own tests): odd, even and signed values.
    #[test]
    fn median_and_mad_values() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[-5.0, 7.0]), Some(1.0));
        assert_eq!(median(&[-3.0]), Some(-3.0));
        // [1,2,4,8,16]: median 4, |dev| 3,2,0,4,12 → sorted 0,2,3,4,12 → MAD 3.
        assert_eq!(mad(&[16.0, 1.0, 8.0, 2.0, 4.0]), Some(3.0));
        // [−4, 0, 10]: median 0, |dev| 4, 0, 10 → MAD 4.
        assert_eq!(mad(&[-4.0, 0.0, 10.0]), Some(4.0));
        assert_eq!(mad(&[7.0]), Some(0.0));
    }

    /// Moses' rank where the exact distribution and the normal approximation part ways, and
    /// the approximation's own figures. Exact: 8 vs 8 has the tabulated two-sided 5 % critical
    /// value 13 → k = 14 (the normal formula would give 13). Normal (a side ≥ 50):
    /// k = ⌊n₁n₂/2 + ½ − z·√(n₁n₂(n₁+n₂+1)/12)⌋, z = 1.959964 at 95 %, 1.644854 at 90 %.
    #[test]
    fn moses_rank_exact_and_normal_figures() {
        assert_eq!(moses_rank(8, 8, 0.95), Some(14));
        // 50 vs 3: 75.5 − 1.959964·√(150·54/12) = 75.5 − 50.92 = 24.58 → 24 (the exact
        // distribution, were it used, gives 25).
        assert_eq!(moses_rank(50, 3, 0.95), Some(24));
        assert_eq!(moses_rank(3, 50, 0.95), Some(24));
        // 60 vs 60: 1800.5 − 1.959964·√(3600·121/12) = 1800.5 − 373.42 = 1427.08 → 1427.
        assert_eq!(moses_rank(60, 60, 0.95), Some(1427));
        // 50 vs 1 at 90 %: 25.5 − 1.644854·√(50·52/12) = 25.5 − 24.21 = 1.29 → k = 1, the
        // smallest finite interval (exact: P(U ≤ 0) = 1/51 ≤ 0.05, also k = 1).
        assert_eq!(moses_rank(50, 1, 0.90), Some(1));
        // A tail exactly on a CDF step is enough: 4 vs 4, P(U ≤ 0) = 1/70, confidence 1 − 2/70.
        assert_eq!(moses_rank(4, 4, 1.0 - 2.0 / 70.0), Some(1));
        // No interval without a confidence in (0, 1).
        for odd in [0.0, -0.5, f64::NAN, 1.0, 1.5] {
            assert_eq!(moses_rank(4, 4, odd), None, "{odd}");
            assert_eq!(ratio_estimate(&A, &B_UP, odd).unwrap().ci, None, "{odd}");
        }
    }
}
