//! Latency histograms: HDR histograms with 3 significant digits over 1 µs … 1 h.

use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};

/// Lowest and highest trackable latency, in microseconds (1 µs … 1 h).
const LOWEST_US: u64 = 1;
const HIGHEST_US: u64 = 3_600_000_000;
const SIGNIFICANT_DIGITS: u8 = 3;

/// A latency histogram in microseconds. Values outside 1 µs … 1 h are clamped to the range
/// rather than dropped, so a count is never lost (sysbench clamps at 100 s and says nothing).
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    inner: Histogram<u64>,
    /// Exact sum of recorded values, so the sysbench `sum` line is not a bucket approximation.
    sum_us: u128,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    pub fn new() -> Self {
        let inner = Histogram::new_with_bounds(LOWEST_US, HIGHEST_US, SIGNIFICANT_DIGITS)
            .expect("static histogram bounds are valid");
        Self { inner, sum_us: 0 }
    }

    /// Record one latency in microseconds.
    pub fn record_us(&mut self, us: u64) {
        let v = us.clamp(LOWEST_US, HIGHEST_US);
        self.inner.saturating_record(v);
        self.sum_us += u128::from(us);
    }

    pub fn add(&mut self, other: &LatencyHistogram) {
        // Same bounds on both sides, so adding cannot fail.
        self.inner
            .add(&other.inner)
            .expect("histograms share bounds");
        self.sum_us += other.sum_us;
    }

    pub fn reset(&mut self) {
        self.inner.reset();
        self.sum_us = 0;
    }

    pub fn count(&self) -> u64 {
        self.inner.len()
    }

    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    pub fn min_us(&self) -> u64 {
        if self.is_empty() { 0 } else { self.inner.min() }
    }

    pub fn max_us(&self) -> u64 {
        self.inner.max()
    }

    pub fn mean_us(&self) -> f64 {
        if self.is_empty() {
            0.0
        } else {
            self.sum_us as f64 / self.count() as f64
        }
    }

    /// Standard deviation of the recorded values (bucket precision), µs.
    pub fn stdev_us(&self) -> f64 {
        if self.is_empty() {
            0.0
        } else {
            self.inner.stdev()
        }
    }

    pub fn sum_us(&self) -> u128 {
        self.sum_us
    }

    /// Counts in logarithmic buckets (each `factor` times wider than the last, from 1 µs), as
    /// (bucket's upper value in µs, count), empty buckets left out: the shape sysbench's
    /// `--histogram` prints.
    pub fn log_buckets(&self, factor: f64) -> Vec<(u64, u64)> {
        if self.is_empty() {
            return Vec::new();
        }
        self.inner
            .iter_log(LOWEST_US, factor)
            .filter(|v| v.count_since_last_iteration() > 0)
            .map(|v| (v.value_iterated_to(), v.count_since_last_iteration()))
            .collect()
    }

    /// The value at percentile `p` (0–100), in microseconds.
    pub fn percentile_us(&self, p: f64) -> u64 {
        if self.is_empty() {
            0
        } else {
            self.inner.value_at_quantile(p / 100.0)
        }
    }

    /// Serialize (HDR V2 format, interoperable with other HDR tools; the exact sum is
    /// appended as 16 bytes because the format does not carry it).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        V2Serializer::new()
            .serialize(&self.inner, &mut out)
            .expect("serializing into a Vec cannot fail");
        out.extend_from_slice(&self.sum_us.to_le_bytes());
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Self, HistogramDecodeError> {
        if bytes.len() < 16 {
            return Err(HistogramDecodeError);
        }
        let (body, sum) = bytes.split_at(bytes.len() - 16);
        let mut reader = body;
        let inner: Histogram<u64> = Deserializer::new()
            .deserialize(&mut reader)
            .map_err(|_| HistogramDecodeError)?;
        let sum_us = u128::from_le_bytes(sum.try_into().map_err(|_| HistogramDecodeError)?);
        Ok(Self { inner, sum_us })
    }
}

/// A stored histogram could not be decoded (corrupt or foreign bytes).
#[derive(Debug, thiserror::Error)]
#[error("stored latency histogram is corrupt")]
pub struct HistogramDecodeError;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_merges_and_round_trips() {
        let mut a = LatencyHistogram::new();
        for us in 1..=1000 {
            a.record_us(us);
        }
        let mut b = LatencyHistogram::new();
        b.record_us(5_000_000_000); // beyond one hour: clamped, still counted
        a.add(&b);
        assert_eq!(a.count(), 1001);
        assert_eq!(a.min_us(), 1);
        assert!(a.max_us() >= 3_599_000_000);
        let p50 = a.percentile_us(50.0);
        assert!((499..=501).contains(&p50), "p50 {p50}");
        let back = LatencyHistogram::from_bytes(&a.to_bytes()).unwrap();
        assert_eq!(back.count(), a.count());
        assert_eq!(back.sum_us(), a.sum_us());
        assert_eq!(back.percentile_us(99.0), a.percentile_us(99.0));
        assert!(LatencyHistogram::from_bytes(b"junk").is_err());
    }

    /// Spread and shape from known values: half at 100 µs, half at 300 µs (mean 200, population
    /// standard deviation 100); sysbench's `--histogram` buckets hold every value once, each
    /// under its bucket's upper value; an empty histogram is all zeros.
    #[test]
    fn spread_and_buckets_of_known_values() {
        let empty = LatencyHistogram::new();
        assert_eq!(
            (empty.mean_us(), empty.stdev_us(), empty.min_us()),
            (0.0, 0.0, 0)
        );
        assert!(empty.log_buckets(2.0).is_empty());
        let mut h = LatencyHistogram::new();
        for _ in 0..500 {
            h.record_us(100);
            h.record_us(300);
        }
        h.record_us(1);
        h.record_us(3);
        h.record_us(3);
        assert!((h.stdev_us() - 100.0).abs() < 1.0, "{}", h.stdev_us());
        let buckets = h.log_buckets(2.0);
        assert_eq!(buckets.iter().map(|b| b.1).sum::<u64>(), h.count());
        assert!(buckets.windows(2).all(|w| w[0].0 < w[1].0), "{buckets:?}");
        // 1 µs, the two 3s, the 100s and the 300s: four buckets (of 2, 4, 128, 512 µs).
        assert_eq!(
            buckets.iter().map(|b| b.1).collect::<Vec<_>>(),
            [1, 2, 500, 500],
            "{buckets:?}"
        );
        for (upper, value) in buckets.iter().map(|b| b.0).zip([1, 3, 100, 300]) {
            assert!(upper >= value && upper < 2 * value.max(2), "{buckets:?}");
        }
    }
}
