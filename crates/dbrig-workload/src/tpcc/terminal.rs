//! Keying and think times (clause 5.2.5), off by default as in HammerDB: the specification's
//! emulated users, ten terminals per warehouse, each keying its next transaction's input
//! (a fixed 18/3/2/2/2 s for New-Order/Payment/Order-Status/Delivery/Stock-Level), waiting
//! for the response, then thinking (negative-exponential, means 12/12/10/5/5 s, truncated at
//! 10× the mean). A terminal is not a connection: the run's clients each serve their share of
//! the terminals (terminal `k` goes to client `k mod clients`), the one whose transaction is
//! due first, as a transaction monitor multiplexes terminals on few server connections. A
//! terminal's response time runs from when its input was keyed, so a client still busy with
//! another terminal's transaction counts as waiting, as the terminal would see it.
//!
//! With keying and thinking each terminal can make at most about 1.286 New-Orders a minute
//! (its cycle's New-Order share over the mean cycle time), so a warehouse's ten at most 12.86:
//! the ceiling a tpmC figure is held against.

use std::time::{Duration, Instant};

use rand::Rng;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;

use super::data::DISTRICTS;
use super::txn::TxType;

/// Terminals per warehouse (clause 4.2.2).
pub const TERMINALS_PER_WAREHOUSE: u32 = 10;

/// The most New-Orders a minute a warehouse's terminals make with keying and thinking: the
/// ceiling a tpmC figure's efficiency is against.
pub const TPMC_CEILING_PER_WAREHOUSE: f64 = 12.86;

impl TxType {
    /// The minimum keying time of clause 5.2.5.7, seconds.
    pub fn keying_s(self) -> f64 {
        match self {
            TxType::NewOrder => 18.0,
            TxType::Payment => 3.0,
            TxType::OrderStatus | TxType::Delivery | TxType::StockLevel => 2.0,
        }
    }

    /// The mean think time of clause 5.2.5.7, seconds.
    pub fn think_mean_s(self) -> f64 {
        match self {
            TxType::NewOrder | TxType::Payment => 12.0,
            TxType::OrderStatus => 10.0,
            TxType::Delivery | TxType::StockLevel => 5.0,
        }
    }
}

/// The most New-Orders a minute a warehouse's ten terminals make with `mix` (response times
/// taken as nothing): [`TPMC_CEILING_PER_WAREHOUSE`] at clause 5.2.3's minimum mix.
pub fn ceiling(mix: [u32; 5]) -> f64 {
    let cycle_s: f64 = TxType::ALL
        .iter()
        .zip(mix)
        .map(|(t, n)| f64::from(n) * (t.keying_s() + t.think_mean_s()))
        .sum();
    match cycle_s > 0.0 {
        true => f64::from(TERMINALS_PER_WAREHOUSE) * f64::from(mix[0]) * 60.0 / cycle_s,
        false => 0.0,
    }
}

/// A think time of mean `mean_s` (clause 5.2.5.4): `-ln(r) × mean` with `r` uniform in
/// (0, 1], truncated at 10× the mean.
pub fn think_time(rng: &mut impl Rng, mean_s: f64) -> Duration {
    // `random::<f64>()` is in [0, 1): its complement is in (0, 1], never ln(0).
    let r = 1.0 - rng.random::<f64>();
    Duration::from_secs_f64((-r.ln() * mean_s).min(10.0 * mean_s))
}

/// A shuffled deck of the mix's cards, drawn in turn and shuffled again when it runs out
/// (clause 5.2.4.2).
#[derive(Debug, Clone)]
pub struct Deck {
    cards: Vec<TxType>,
    at: usize,
}

impl Deck {
    pub fn new(mix: [u32; 5], rng: &mut impl Rng) -> Deck {
        let mut cards: Vec<TxType> = TxType::ALL
            .iter()
            .zip(mix)
            .flat_map(|(&t, n)| std::iter::repeat_n(t, n as usize))
            .collect();
        cards.shuffle(rng);
        Deck { cards, at: 0 }
    }

    pub fn cards(&self) -> &[TxType] {
        &self.cards
    }

    pub fn draw(&mut self, rng: &mut impl Rng) -> TxType {
        if self.at >= self.cards.len() {
            self.cards.shuffle(rng);
            self.at = 0;
        }
        self.at += 1;
        self.cards[self.at - 1]
    }
}

/// One emulated terminal: its warehouse and district, its deck, its next transaction and
/// when that transaction's input is keyed (`None` before its first).
#[derive(Debug, Clone)]
pub struct Terminal {
    pub warehouse: u32,
    pub district: u32,
    deck: Deck,
    pub next: TxType,
    pub due: Option<Instant>,
}

/// The terminals a client serves: terminal `k` of `10 × warehouses` (warehouse `k / 10 + 1`,
/// district `k mod 10 + 1`) when `k mod clients` is the client's index.
pub fn terminals_of(
    index: u32,
    clients: u32,
    warehouses: u32,
    mix: [u32; 5],
    rng: &mut impl Rng,
) -> Vec<Terminal> {
    (0..warehouses * TERMINALS_PER_WAREHOUSE)
        .filter(|k| k % clients.max(1) == index)
        .map(|k| {
            let mut deck = Deck::new(mix, rng);
            let next = deck.draw(rng);
            Terminal {
                warehouse: k / TERMINALS_PER_WAREHOUSE + 1,
                district: k % DISTRICTS + 1,
                deck,
                next,
                due: None,
            }
        })
        .collect()
}

/// A client's terminals and which one's transaction runs now.
#[derive(Debug, Clone, Default)]
pub struct Terminals {
    all: Vec<Terminal>,
    /// The terminal whose transaction the client ran last (its think time not yet begun).
    current: Option<usize>,
}

impl Terminals {
    pub fn new(all: Vec<Terminal>) -> Terminals {
        Terminals { all, current: None }
    }

    pub fn is_empty(&self) -> bool {
        self.all.is_empty()
    }

    /// The terminal that runs next and when its input is keyed: the last one's think time
    /// and next keying begin `now`, a terminal that has not run yet keys its first input
    /// from `now`.
    pub fn next_due(&mut self, now: Instant, rng: &mut SmallRng) -> Option<(Instant, &Terminal)> {
        if let Some(i) = self.current.take() {
            let t = &mut self.all[i];
            let think = think_time(rng, t.next.think_mean_s());
            t.next = t.deck.draw(rng);
            t.due = Some(now + think + Duration::from_secs_f64(t.next.keying_s()));
        }
        for t in self.all.iter_mut().filter(|t| t.due.is_none()) {
            t.due = Some(now + Duration::from_secs_f64(t.next.keying_s()));
        }
        let (i, t) = self
            .all
            .iter()
            .enumerate()
            .min_by_key(|(_, t)| t.due.unwrap_or(now))?;
        self.current = Some(i);
        Some((t.due.unwrap_or(now), t))
    }

    /// The terminal chosen by the last [`Terminals::next_due`].
    pub fn current(&self) -> Option<&Terminal> {
        self.current.map(|i| &self.all[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn think_times_are_negative_exponential_truncated_at_ten_means() {
        let mut rng = SmallRng::seed_from_u64(5);
        for mean in [12.0, 10.0, 5.0] {
            let n = 400_000;
            let samples: Vec<f64> = (0..n)
                .map(|_| think_time(&mut rng, mean).as_secs_f64())
                .collect();
            let avg = samples.iter().sum::<f64>() / n as f64;
            // The truncation takes e^-10 of the mass beyond 10 means: the mean stays the
            // mean within the sampling error (sd/sqrt(n) = mean/632).
            assert!((avg / mean - 1.0).abs() < 0.01, "mean {avg} for {mean}");
            let max = samples.iter().copied().fold(0.0, f64::max);
            assert!(
                (max - 10.0 * mean).abs() < 1e-9,
                "max {max}: truncated at {}",
                10.0 * mean
            );
            // At the cap: about e^-10 of the draws (18 of 400 000); none above it.
            let capped = samples.iter().filter(|&&s| s >= 10.0 * mean - 1e-9).count();
            assert!((3..=60).contains(&capped), "{capped} at the cap");
            // The median of an exponential is ln 2 × the mean.
            let mut sorted = samples.clone();
            sorted.sort_by(f64::total_cmp);
            let median = sorted[n / 2];
            assert!(
                (median / (std::f64::consts::LN_2 * mean) - 1.0).abs() < 0.01,
                "median {median}"
            );
        }
    }

    #[test]
    fn keying_and_think_times_are_the_specs() {
        assert_eq!(
            TxType::ALL.map(TxType::keying_s),
            [18.0, 3.0, 2.0, 2.0, 2.0]
        );
        assert_eq!(
            TxType::ALL.map(TxType::think_mean_s),
            [12.0, 12.0, 10.0, 5.0, 5.0]
        );
        // The ceiling: per terminal, the New-Order share over the mean cycle (keying + think,
        // the response time taken as nothing), times ten terminals; at the mix of clause
        // 5.2.3's minimums (45 % New-Order) it is the specification's 12.86, at the deck's
        // 10/10/1/1/1 (43.5 %) about 12.6.
        assert!((ceiling([45, 43, 4, 4, 4]) - TPMC_CEILING_PER_WAREHOUSE).abs() < 0.01);
        assert!((ceiling([10, 10, 1, 1, 1]) - 12.61).abs() < 0.01);
    }

    #[test]
    fn terminals_are_shared_out_and_served_earliest_first() {
        let mut rng = SmallRng::seed_from_u64(1);
        let all: Vec<Vec<Terminal>> = (0..3)
            .map(|i| terminals_of(i, 3, 2, [10, 10, 1, 1, 1], &mut rng))
            .collect();
        assert_eq!(all.iter().map(Vec::len).collect::<Vec<_>>(), [7, 7, 6]);
        let mut seen: Vec<(u32, u32)> = all
            .iter()
            .flatten()
            .map(|t| (t.warehouse, t.district))
            .collect();
        seen.sort();
        let want: Vec<(u32, u32)> = (1..=2)
            .flat_map(|w| (1..=10).map(move |d| (w, d)))
            .collect();
        assert_eq!(seen, want, "each warehouse's ten districts, once");

        let mut terms = Terminals::new(all[0].clone());
        let t0 = Instant::now();
        let (first, t) = terms.next_due(t0, &mut rng).unwrap();
        // Nothing ran yet: the first due is the shortest first keying.
        assert_eq!(
            first,
            t0 + Duration::from_secs_f64(t.next.keying_s()),
            "{:?}",
            t.next
        );
        let mut last = first;
        for _ in 0..200 {
            let (due, _) = terms.next_due(last, &mut rng).unwrap();
            // Served in order of due time; each ran one keying later at least.
            assert!(due >= last);
            last = due;
        }
    }
}
