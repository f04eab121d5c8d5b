//! Change points in a result history: where a series of figures (one per run, in commit or
//! time order) moved to another level, found as Apache Otava finds them (Fleming et al.,
//! "Hunter: Using Change Point Detection to Hunt for Performance Regressions", 2023): E-divisive
//! means (Matteson and James) in sliding windows, each candidate tested with Student's t-test
//! instead of permutations, then the "weak" change points of a relaxed first pass merged away,
//! weakest first, until every one left is significant and moves the mean by more than a
//! magnitude floor.
//!
//! Where this differs from Otava, on purpose: the t-test takes each side's sample standard
//! deviation (Otava hands scipy the population one, which understates the variance of small
//! sides and so their p-values), and removing a weak change point recomputes both of its
//! neighbours (the one before it and the one after).

use statrs::distribution::{ContinuousCDF, StudentsT};

/// How change points are found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePointOptions {
    /// Points per sliding window (Otava's default 50). Windows overlap by half, so a point
    /// added at the end moves no change point more than a window behind it.
    pub window: usize,
    /// A change point's largest p-value (two-sided Student's t-test of the segments beside it).
    pub max_p: f64,
    /// Relative change of the mean a change point must exceed (0.01: 1 %, dbrig's default
    /// noise band), either way: `max(|after/before − 1|, |before/after − 1|)`.
    pub min_magnitude: f64,
}

impl Default for ChangePointOptions {
    fn default() -> Self {
        ChangePointOptions {
            window: 50,
            max_p: 0.001,
            min_magnitude: 0.01,
        }
    }
}

/// The points on one side of a change point, up to the next one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (0 for a single point).
    pub stddev: f64,
    /// 95 % confidence interval of the mean (Student's t); none for a single point.
    pub ci95: Option<(f64, f64)>,
}

/// A change point: the series moved to another level at `index`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    /// The first point of the new level.
    pub index: usize,
    /// From the previous change point (or the start) up to `index`.
    pub before: Segment,
    /// From `index` up to the next change point (or the end).
    pub after: Segment,
    /// Two-sided p-value of Student's t-test between `before` and `after`.
    pub p: f64,
    /// `after.mean / before.mean − 1` (0 when `before.mean` is 0).
    pub change: f64,
    /// `max(|after/before − 1|, |before/after − 1|)`, what the magnitude floor is held to.
    pub magnitude: f64,
}

/// The change points of `series`, in index order; `None` when the series holds a value that
/// is not finite or the options are out of their domain (a window under 2 points, a p-value
/// outside (0, 1], a negative floor).
pub fn change_points(series: &[f64], opts: &ChangePointOptions) -> Option<Vec<ChangePoint>> {
    let p_ok = opts.max_p > 0.0 && opts.max_p <= 1.0;
    let floor_ok = opts.min_magnitude >= 0.0 && opts.min_magnitude.is_finite();
    if !crate::stats::finite(series) || opts.window < 2 || !p_ok || !floor_ok {
        return None;
    }
    // The first pass takes weaker evidence, as Otava's: its "weak" change points are then
    // merged down to those that meet the real threshold.
    let weak_p = if opts.max_p < 0.05 {
        opts.max_p * 10.0
    } else if opts.max_p < 0.5 {
        opts.max_p * 2.0
    } else {
        opts.max_p
    };
    let weak = split(series, opts.window, weak_p);
    Some(merge(series, weak, opts.max_p, opts.min_magnitude))
}

/// The split step: E-divisive in windows of `window` points, starting every half window (or
/// at the last change point found, if that is further on); the union of what they find.
fn split(series: &[f64], window: usize, max_p: f64) -> Vec<usize> {
    let step = window / 2;
    let mut found: Vec<usize> = Vec::new();
    let mut start = 0;
    while start < series.len() {
        let end = (start + window).min(series.len());
        let in_window = e_divisive(&series[start..end], max_p);
        let last = in_window.last().map_or(0, |&i| i + start);
        for i in in_window {
            if !found.contains(&(i + start)) {
                found.push(i + start);
            }
        }
        start = last.max(start + step);
    }
    found.sort_unstable();
    found
}

/// E-divisive means with Student's t-test on one window: repeatedly the strongest candidate
/// of the segments between the change points found so far, kept while significant.
fn e_divisive(x: &[f64], max_p: f64) -> Vec<usize> {
    let pairs = PairSums::new(x);
    let mut found: Vec<usize> = Vec::new();
    loop {
        let bounds = bounds(&found, x.len());
        let best = bounds
            .windows(2)
            .filter(|b| b[1] - b[0] > 1)
            .filter_map(|b| pairs.best_split(b[0], b[1]).map(|c| (c, b[0], b[1])))
            .max_by(|a, b| a.0.1.total_cmp(&b.0.1));
        let Some(((tau, _), lo, hi)) = best else {
            break;
        };
        if t_test(&x[lo..tau], &x[tau..hi]) > max_p {
            break;
        }
        found.push(tau);
        found.sort_unstable();
    }
    found
}

/// `0`, the change points, `len`: the edges of the segments between them.
fn bounds(points: &[usize], len: usize) -> Vec<usize> {
    let mut b = Vec::with_capacity(points.len() + 2);
    b.push(0);
    b.extend_from_slice(points);
    b.push(len);
    b
}

/// The merge step: while a change point fails the threshold (or, all passing it, the
/// smallest falls under the magnitude floor), remove the weakest and re-test its neighbours
/// against their new segments.
fn merge(
    series: &[f64],
    mut points: Vec<usize>,
    max_p: f64,
    min_magnitude: f64,
) -> Vec<ChangePoint> {
    let mut stats: Vec<ChangePoint> = (0..points.len())
        .map(|k| describe(series, &points, k))
        .collect();
    loop {
        let Some(weakest) = (0..stats.len()).max_by(|&a, &b| stats[a].p.total_cmp(&stats[b].p))
        else {
            return stats;
        };
        let weakest = if stats[weakest].p <= max_p {
            let smallest = (0..stats.len())
                .min_by(|&a, &b| stats[a].magnitude.total_cmp(&stats[b].magnitude))
                .unwrap_or(weakest);
            if stats[smallest].magnitude > min_magnitude {
                return stats;
            }
            smallest
        } else {
            weakest
        };
        points.remove(weakest);
        stats.remove(weakest);
        for k in [weakest.checked_sub(1), Some(weakest)]
            .into_iter()
            .flatten()
        {
            if k < points.len() {
                stats[k] = describe(series, &points, k);
            }
        }
    }
}

/// Change point `k` of `points` against the segments beside it.
fn describe(series: &[f64], points: &[usize], k: usize) -> ChangePoint {
    let lo = if k == 0 { 0 } else { points[k - 1] };
    let hi = points.get(k + 1).copied().unwrap_or(series.len());
    let (left, right) = (&series[lo..points[k]], &series[points[k]..hi]);
    let before = segment(left);
    let after = segment(right);
    let rel = |a: f64, b: f64| if a == 0.0 { 0.0 } else { b / a - 1.0 };
    ChangePoint {
        index: points[k],
        before,
        after,
        p: t_test(left, right),
        change: rel(before.mean, after.mean),
        magnitude: rel(before.mean, after.mean)
            .abs()
            .max(rel(after.mean, before.mean).abs()),
    }
}

fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = if x.len() < 2 {
        0.0
    } else {
        x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
    };
    (mean, var)
}

fn segment(x: &[f64]) -> Segment {
    let (mean, var) = mean_var(x);
    let stddev = var.sqrt();
    let ci95 = (x.len() >= 2).then(|| {
        let df = (x.len() - 1) as f64;
        let t = StudentsT::new(0.0, 1.0, df).map_or(f64::NAN, |d| d.inverse_cdf(0.975));
        let half = t * stddev / (x.len() as f64).sqrt();
        (mean - half, mean + half)
    });
    Segment {
        n: x.len(),
        mean,
        stddev,
        ci95,
    }
}

/// Two-sided p-value of Student's t-test (pooled variance) between two samples; 1 when there
/// are no degrees of freedom (two points in all), 0 for different constant samples.
pub fn t_test(a: &[f64], b: &[f64]) -> f64 {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 || n1 + n2 <= 2 {
        return 1.0;
    }
    let ((m1, v1), (m2, v2)) = (mean_var(a), mean_var(b));
    let df = (n1 + n2 - 2) as f64;
    let pooled = ((n1 - 1) as f64 * v1 + (n2 - 1) as f64 * v2) / df;
    let se = (pooled * (1.0 / n1 as f64 + 1.0 / n2 as f64)).sqrt();
    if se == 0.0 {
        return if m1 == m2 { 1.0 } else { 0.0 };
    }
    let t = ((m1 - m2) / se).abs();
    StudentsT::new(0.0, 1.0, df).map_or(1.0, |d| 2.0 * d.sf(t))
}

/// Sums of pairwise distances `|x_i − x_j|` over any block of indices in O(1), from a 2-D
/// prefix sum: what makes each window's search O(n²).
struct PairSums {
    n: usize,
    /// `prefix[(i) * (n + 1) + j]` = Σ over a < i, b < j of |x_a − x_b|.
    prefix: Vec<f64>,
}

impl PairSums {
    fn new(x: &[f64]) -> PairSums {
        let n = x.len();
        let w = n + 1;
        let mut prefix = vec![0.0; w * w];
        for i in 0..n {
            for j in 0..n {
                prefix[(i + 1) * w + j + 1] =
                    (x[i] - x[j]).abs() + prefix[i * w + j + 1] + prefix[(i + 1) * w + j]
                        - prefix[i * w + j];
            }
        }
        PairSums { n, prefix }
    }

    /// Σ |x_i − x_j| for i in [a, b), j in [c, d).
    fn block(&self, a: usize, b: usize, c: usize, d: usize) -> f64 {
        let w = self.n + 1;
        self.prefix[b * w + d] - self.prefix[a * w + d] - self.prefix[b * w + c]
            + self.prefix[a * w + c]
    }

    /// Matteson and James' divergence (α = 1) of `x[s..tau]` and `x[tau..kappa]`, scaled as
    /// Otava scales it.
    fn q(&self, s: usize, tau: usize, kappa: usize) -> f64 {
        let n = (tau - s) as f64;
        let m = (kappa - tau) as f64;
        let between = self.block(s, tau, tau, kappa);
        let within_x = self.block(s, tau, s, tau) / 2.0;
        let within_y = self.block(tau, kappa, tau, kappa) / 2.0;
        let mut q = 2.0 / (m + n) * between;
        if n > 1.0 {
            q -= 2.0 * m / ((m + n) * (n - 1.0)) * within_x;
        }
        if m > 1.0 {
            q -= 2.0 * n / ((m + n) * (m - 1.0)) * within_y;
        }
        q
    }

    /// The split of `[lo, hi)` that maximises the divergence over every `tau` and every end
    /// `kappa` of the right side: `(tau, q)`.
    fn best_split(&self, lo: usize, hi: usize) -> Option<(usize, f64)> {
        let mut best: Option<(usize, f64)> = None;
        for tau in lo + 1..hi {
            for kappa in tau + 1..=hi {
                let q = self.q(lo, tau, kappa);
                if best.is_none_or(|(_, b)| q > b) {
                    best = Some((tau, q));
                }
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_distr::{Distribution, Normal};

    #[test]
    fn the_divergence_is_the_hand_computed_one() {
        // X = [1, 2], Y = [10, 11]: between |1−10|+|1−11|+|2−10|+|2−11| = 36, × 2/4 = 18;
        // within X 1 × 2·2/(4·1) = 1; within Y likewise 1: Q = 16.
        let pairs = PairSums::new(&[1.0, 2.0, 10.0, 11.0]);
        assert!((pairs.q(0, 2, 4) - 16.0).abs() < 1e-12);
        // X = [1], Y = [2, 10]: between 1 + 9 = 10, × 2/3; within Y 8 × 2·1/(3·1): 20/3 − 16/3.
        assert!((pairs.q(0, 1, 3) - 4.0 / 3.0).abs() < 1e-12);
        assert_eq!(pairs.best_split(0, 4).map(|c| c.0), Some(2));
    }

    #[test]
    fn the_t_test_is_scipys() {
        // scipy.stats.ttest_ind([1, 2, 3], [4, 5, 6]): t = −3.6742, p = 0.021311641128756727.
        let p = t_test(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]);
        assert!((p - 0.021_311_641_128_756_727).abs() < 1e-9, "{p}");
        // ttest_ind([10, 12, 11, 13], [10.5, 11.5]): t = 0.4924, p = 0.6482612949673071.
        let p = t_test(&[10.0, 12.0, 11.0, 13.0], &[10.5, 11.5]);
        assert!((p - 0.648_261_294_967_307_1).abs() < 1e-9, "{p}");
        assert_eq!(t_test(&[1.0], &[2.0]), 1.0);
        assert_eq!(t_test(&[1.0, 1.0], &[2.0, 2.0]), 0.0);
        assert_eq!(t_test(&[3.0, 3.0], &[3.0]), 1.0);
    }

    fn noisy(rng: &mut rand::rngs::StdRng, levels: &[(usize, f64)], sd: f64) -> Vec<f64> {
        let mut out = Vec::new();
        for &(n, level) in levels {
            let noise = Normal::new(0.0, sd).unwrap();
            out.extend((0..n).map(|_| level + noise.sample(rng)));
        }
        out
    }

    #[test]
    fn a_step_is_found_where_it_is_with_its_means() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let series = noisy(&mut rng, &[(30, 1000.0), (25, 940.0)], 10.0);
        let found = change_points(&series, &ChangePointOptions::default()).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        let cp = found[0];
        assert_eq!(cp.index, 30);
        assert!(cp.p <= 0.001);
        assert!((cp.before.mean - 1000.0).abs() < 6.0, "{cp:?}");
        assert!((cp.after.mean - 940.0).abs() < 6.0, "{cp:?}");
        assert!((cp.change + 0.06).abs() < 0.01, "{cp:?}");
        let (lo, hi) = cp.before.ci95.unwrap();
        assert!(lo < cp.before.mean && cp.before.mean < hi && hi - lo < 10.0);
        assert_eq!((cp.before.n, cp.after.n), (30, 25));
    }

    #[test]
    fn two_steps_in_a_long_series_are_both_found() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        let series = noisy(&mut rng, &[(60, 100.0), (70, 110.0), (50, 95.0)], 2.0);
        let found = change_points(&series, &ChangePointOptions::default()).unwrap();
        let at: Vec<usize> = found.iter().map(|c| c.index).collect();
        assert_eq!(at, vec![60, 130], "{found:?}");
    }

    /// Hit and false-alarm rates on generated series, printed (`cargo test -p dbrig-core
    /// changepoint -- --nocapture`): 60 points with one step at a random point, in noise of
    /// 2 % of the level. A hit is a change point within one point of the step; a false alarm
    /// is a change point anywhere else (in a flat series, anywhere). Steps of 3 and 5
    /// standard deviations are found nearly always, and false alarms stay rare.
    #[test]
    fn hit_and_false_alarm_rates_on_generated_series() {
        let opts = ChangePointOptions::default();
        let mut rng = rand::rngs::StdRng::seed_from_u64(2026);
        let trials = 200;
        let mut rates = |step_sd: f64| {
            let (mut hits, mut alarms) = (0, 0);
            for _ in 0..trials {
                let at = rng.random_range(10..50);
                let series = noisy(
                    &mut rng,
                    &[(at, 100.0), (60 - at, 100.0 + 2.0 * step_sd)],
                    2.0,
                );
                let found = change_points(&series, &opts).unwrap();
                let near = |c: &ChangePoint| step_sd > 0.0 && c.index.abs_diff(at) <= 1;
                hits += usize::from(found.iter().any(near));
                alarms += usize::from(found.iter().any(|c| !near(c)));
            }
            (hits as f64 / trials as f64, alarms as f64 / trials as f64)
        };
        let flat = rates(0.0);
        let steps: Vec<(f64, (f64, f64))> =
            [2.0, 3.0, 5.0].iter().map(|&sd| (sd, rates(sd))).collect();
        println!("change points, {trials} series of 60 points each:");
        println!("  flat: false-alarm rate {:.3}", flat.1);
        for (sd, (hit, alarm)) in &steps {
            println!("  step of {sd} sd: hit rate {hit:.3}, false-alarm rate {alarm:.3}");
        }
        assert!(flat.1 <= 0.05, "flat: {flat:?}");
        assert!(steps[1].1.0 >= 0.9, "3 sd: {steps:?}");
        assert!(steps[2].1.0 >= 0.99, "5 sd: {steps:?}");
        // A 2 sd step is often placed a point or two off, which counts as a false alarm here.
        assert!(
            steps[1..].iter().all(|(_, (_, alarm))| *alarm <= 0.08),
            "{steps:?}"
        );
    }

    #[test]
    fn a_change_under_the_magnitude_floor_is_not_one() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        // 0.5 % step in 0.05 % noise: significant, but under a 1 % floor.
        let series = noisy(&mut rng, &[(25, 1000.0), (25, 1005.0)], 0.5);
        assert!(
            change_points(&series, &ChangePointOptions::default())
                .unwrap()
                .is_empty()
        );
        let no_floor = ChangePointOptions {
            min_magnitude: 0.0,
            ..ChangePointOptions::default()
        };
        let found = change_points(&series, &no_floor).unwrap();
        assert_eq!(found.iter().map(|c| c.index).collect::<Vec<_>>(), vec![25]);
    }

    #[test]
    fn new_points_do_not_move_old_change_points() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let series = noisy(&mut rng, &[(40, 50.0), (60, 46.0), (100, 46.0)], 0.8);
        let opts = ChangePointOptions::default();
        let early = change_points(&series[..100], &opts).unwrap();
        assert_eq!(early.iter().map(|c| c.index).collect::<Vec<_>>(), vec![40]);
        for len in (110..=200).step_by(10) {
            let later = change_points(&series[..len], &opts).unwrap();
            assert_eq!(
                later.iter().map(|c| c.index).collect::<Vec<_>>(),
                vec![40],
                "after {len} points"
            );
        }
    }

    #[test]
    fn bad_input_is_refused() {
        let opts = ChangePointOptions::default();
        assert!(change_points(&[1.0, f64::NAN, 2.0], &opts).is_none());
        assert!(change_points(&[1.0, 2.0], &ChangePointOptions { window: 1, ..opts }).is_none());
        assert!(change_points(&[1.0, 2.0], &ChangePointOptions { max_p: 0.0, ..opts }).is_none());
        assert_eq!(change_points(&[], &opts), Some(vec![]));
        assert_eq!(change_points(&[5.0], &opts), Some(vec![]));
    }
}
