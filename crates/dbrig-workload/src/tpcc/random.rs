//! TPC-C's random rules (clauses 2.1.6, 4.3.2): `NURand(A, x, y)` with its constants `C`,
//! the run-time `C` for C_LAST drawn so that its distance to the load's obeys clause 2.1.6.1,
//! a-strings and n-strings, zip codes, the syllable last names of clause 4.3.2.3, and the
//! "ORIGINAL" marker of 10 % of item and stock data.
//!
//! Every stream of random numbers is a `SmallRng` seeded from the load's seed and the stream's
//! identity (table, warehouse, district), so a warehouse's rows are the same whichever loader
//! makes them and in whatever order.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// HammerDB's alphabet for a-strings: the 62 ASCII letters and digits.
const ALPHANUMERIC: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The ten syllables of clause 4.3.2.3, indexed by a digit.
const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// The constants `C` of `NURand` (clause 2.1.6): one per field it draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Constants {
    /// For C_LAST, `NURand(255, 0, 999)`: in 0..=255.
    pub c_last: u32,
    /// For C_ID, `NURand(1023, 1, 3000)`: in 0..=1023.
    pub c_id: u32,
    /// For OL_I_ID, `NURand(8191, 1, 100000)`: in 0..=8191.
    pub ol_i_id: u32,
}

impl Constants {
    /// The load's constants, drawn from `rng`.
    pub fn load(rng: &mut impl Rng) -> Constants {
        Constants {
            c_last: rng.random_range(0..=255),
            c_id: rng.random_range(0..=1023),
            ol_i_id: rng.random_range(0..=8191),
        }
    }

    /// Run-time constants for a database loaded with `load`'s: C_LAST's drawn again until
    /// [`c_last_delta_ok`] holds (clause 2.1.6.1); C_ID's and OL_I_ID's are free.
    pub fn run(load: &Constants, rng: &mut impl Rng) -> Constants {
        let c_last = loop {
            let c = rng.random_range(0..=255);
            if c_last_delta_ok(load.c_last, c) {
                break c;
            }
        };
        Constants {
            c_last,
            c_id: rng.random_range(0..=1023),
            ol_i_id: rng.random_range(0..=8191),
        }
    }
}

/// Clause 2.1.6.1: the run's C for C_LAST differs from the load's by 65..=119, but not by 96
/// or 112 (those make the two distributions too alike or too apart).
pub fn c_last_delta_ok(load: u32, run: u32) -> bool {
    let delta = load.abs_diff(run);
    (65..=119).contains(&delta) && delta != 96 && delta != 112
}

/// `NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x`.
pub fn nurand(rng: &mut impl Rng, a: u32, x: u32, y: u32, c: u32) -> u32 {
    (((rng.random_range(0..=a) | rng.random_range(x..=y)) + c) % (y - x + 1)) + x
}

/// The last name of number `n` (0..=999): the syllables of its three digits.
pub fn last_name(n: u32) -> String {
    debug_assert!(n < 1000, "last-name number {n}");
    let mut s = String::with_capacity(15);
    s.push_str(SYLLABLES[(n / 100) as usize]);
    s.push_str(SYLLABLES[(n / 10 % 10) as usize]);
    s.push_str(SYLLABLES[(n % 10) as usize]);
    s
}

/// A random a-string of `min..=max` alphanumeric characters (clause 4.3.2.2).
pub fn a_string(rng: &mut impl Rng, min: usize, max: usize) -> String {
    let len = rng.random_range(min..=max);
    (0..len)
        .map(|_| ALPHANUMERIC[rng.random_range(0..ALPHANUMERIC.len())] as char)
        .collect()
}

/// A random n-string of `min..=max` digits (clause 4.3.2.2).
pub fn n_string(rng: &mut impl Rng, min: usize, max: usize) -> String {
    let len = rng.random_range(min..=max);
    (0..len)
        .map(|_| char::from(b'0' + rng.random_range(0..10u8)))
        .collect()
}

/// A zip code: 4 random digits and "11111" (clause 4.3.2.7).
pub fn zip(rng: &mut impl Rng) -> String {
    let mut z = n_string(rng, 4, 4);
    z.push_str("11111");
    z
}

/// An item's or stock's data: an a-string of 26..=50, and in 10 % of rows "ORIGINAL" in
/// place of 8 of its characters at a random position (clause 4.3.3.1).
pub fn data_with_original(rng: &mut impl Rng) -> String {
    let mut s = a_string(rng, 26, 50);
    if rng.random_range(0..10) == 0 {
        let at = rng.random_range(0..=s.len() - 8);
        s.replace_range(at..at + 8, "ORIGINAL");
    }
    s
}

/// A random amount of `lo..=hi` hundredths (cents, or ten-thousandths for a rate), as the
/// unscaled integer the bulk writers take.
pub fn unscaled(rng: &mut impl Rng, lo: i64, hi: i64) -> i64 {
    rng.random_range(lo..=hi)
}

/// The random stream of one piece of the population: `seed` mixed with the stream's identity
/// (a tag per table, the warehouse and district), through SplitMix64 so neighbouring
/// identities give unrelated streams.
pub fn stream(seed: u64, tag: u64, w: u32, d: u32) -> SmallRng {
    let mut x = seed ^ tag.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x = splitmix(x ^ (u64::from(w) << 20) ^ u64::from(d));
    SmallRng::seed_from_u64(splitmix(x))
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nurand_stays_in_bounds_and_covers_them() {
        let mut rng = SmallRng::seed_from_u64(7);
        for (a, x, y) in [(255, 0, 999), (1023, 1, 3000), (8191, 1, 100_000)] {
            let c = a / 2;
            let mut lo = u32::MAX;
            let mut hi = 0;
            for _ in 0..200_000 {
                let v = nurand(&mut rng, a, x, y, c);
                assert!((x..=y).contains(&v), "NURand({a},{x},{y}) gave {v}");
                lo = lo.min(v);
                hi = hi.max(v);
            }
            // Non-uniform but covering: both ends are reached, within a hundredth of the range.
            let slack = (y - x) / 100;
            assert!(lo <= x + slack && hi >= y - slack, "{a}: {lo}..{hi}");
        }
    }

    #[test]
    fn nurand_is_skewed() {
        // With A = 255 over 0..=999, the OR makes some values far likelier than others: the
        // most frequent is at least three times the least (a uniform draw would be ~1×).
        let mut rng = SmallRng::seed_from_u64(1);
        let mut counts = vec![0u32; 1000];
        for _ in 0..1_000_000 {
            counts[nurand(&mut rng, 255, 0, 999, 0) as usize] += 1;
        }
        let max = *counts.iter().max().unwrap();
        let min = *counts.iter().min().unwrap();
        assert!(max >= 3 * min.max(1), "max {max} min {min}");
    }

    #[test]
    fn the_run_constant_keeps_its_distance_from_the_loads() {
        assert!(c_last_delta_ok(0, 65));
        assert!(c_last_delta_ok(200, 81));
        assert!(!c_last_delta_ok(0, 64));
        assert!(!c_last_delta_ok(0, 120));
        assert!(!c_last_delta_ok(100, 4)); // 96
        assert!(!c_last_delta_ok(0, 112));
        let mut rng = SmallRng::seed_from_u64(3);
        for _ in 0..2000 {
            let load = Constants::load(&mut rng);
            assert!(load.c_last <= 255 && load.c_id <= 1023 && load.ol_i_id <= 8191);
            let run = Constants::run(&load, &mut rng);
            let delta = load.c_last.abs_diff(run.c_last);
            assert!(
                (65..=119).contains(&delta) && delta != 96 && delta != 112,
                "{load:?} {run:?}"
            );
            assert!(run.c_last <= 255 && run.c_id <= 1023 && run.ol_i_id <= 8191);
        }
    }

    #[test]
    fn last_names_are_the_syllables_of_the_digits() {
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(999), "EINGEINGEING");
        assert!((0..1000).all(|n| last_name(n).len() <= 16));
    }

    #[test]
    fn strings_have_their_lengths_and_alphabets() {
        let mut rng = SmallRng::seed_from_u64(9);
        let mut originals = 0;
        for _ in 0..10_000 {
            let a = a_string(&mut rng, 8, 16);
            assert!((8..=16).contains(&a.len()) && a.bytes().all(|b| b.is_ascii_alphanumeric()));
            let n = n_string(&mut rng, 16, 16);
            assert!(n.len() == 16 && n.bytes().all(|b| b.is_ascii_digit()));
            let z = zip(&mut rng);
            assert!(z.len() == 9 && z.ends_with("11111") && z.bytes().all(|b| b.is_ascii_digit()));
            let d = data_with_original(&mut rng);
            assert!((26..=50).contains(&d.len()));
            originals += usize::from(d.contains("ORIGINAL"));
        }
        // 10 % of 10 000, within a wide margin.
        assert!((800..=1200).contains(&originals), "{originals}");
    }

    #[test]
    fn streams_repeat_for_one_identity_and_differ_across() {
        let draw = |mut r: SmallRng| (0..4).map(|_| r.random::<u64>()).collect::<Vec<_>>();
        assert_eq!(draw(stream(1, 2, 3, 4)), draw(stream(1, 2, 3, 4)));
        assert_ne!(draw(stream(1, 2, 3, 4)), draw(stream(1, 2, 3, 5)));
        assert_ne!(draw(stream(1, 2, 3, 4)), draw(stream(1, 2, 4, 4)));
        assert_ne!(draw(stream(1, 2, 3, 4)), draw(stream(2, 2, 3, 4)));
    }
}
