//! pgbench's random numbers, hashes and permutation, bit for bit: PostgreSQL's `pg_prng`
//! (xoroshiro128** seeded through splitmix64, `src/common/pg_prng.c`) and the distributions,
//! hashes and `permute` of `src/bin/pgbench/pgbench.c`. Matching them exactly makes `permute`
//! and the hashes give pgbench's values, and a script seeded alike draws alike per client.

/// `pg_prng_state`.
#[derive(Debug, Clone)]
pub struct PgPrng {
    s0: u64,
    s1: u64,
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut v = *state;
    v = (v ^ (v >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    v = (v ^ (v >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    v ^ (v >> 31)
}

impl PgPrng {
    /// `pg_prng_seed`.
    pub fn seed(seed: u64) -> Self {
        let mut s = seed;
        let s0 = splitmix64(&mut s);
        let s1 = splitmix64(&mut s);
        if s0 == 0 && s1 == 0 {
            return PgPrng {
                s0: 0x5851_F42D_4C95_7F2D,
                s1: 0x1405_7B7E_F767_814F,
            };
        }
        PgPrng { s0, s1 }
    }

    /// `pg_prng_uint64` (xoroshiro128**).
    pub fn next_u64(&mut self) -> u64 {
        let s0 = self.s0;
        let sx = self.s1 ^ s0;
        let val = s0.wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        self.s0 = s0.rotate_left(24) ^ sx ^ (sx << 16);
        self.s1 = sx.rotate_left(37);
        val
    }

    /// `pg_prng_uint64_range`: uniform in [rmin, rmax] by bitmask rejection.
    pub fn uint64_range(&mut self, rmin: u64, rmax: u64) -> u64 {
        if rmax <= rmin {
            return rmin;
        }
        let range = rmax - rmin;
        let rshift = range.leading_zeros();
        loop {
            let v = self.next_u64() >> rshift;
            if v <= range {
                return rmin + v;
            }
        }
    }

    /// `pg_prng_double`: uniform in [0, 1).
    pub fn double(&mut self) -> f64 {
        (self.next_u64() >> 12) as f64 * (2f64).powi(-52)
    }

    /// `pg_prng_double_normal` (Box-Muller).
    pub fn double_normal(&mut self) -> f64 {
        let u1 = 1.0 - self.double();
        let u2 = 1.0 - self.double();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).sin()
    }

    /// `getrand`: uniform in [min, max] (the caller checked max - min + 1 fits).
    pub fn uniform(&mut self, min: i64, max: i64) -> i64 {
        min.wrapping_add(self.uint64_range(0, max.wrapping_sub(min) as u64) as i64)
    }

    /// `getExponentialRand` (parameter > 0, checked by the caller).
    pub fn exponential(&mut self, min: i64, max: i64, parameter: f64) -> i64 {
        let cut = (-parameter).exp();
        let uniform = 1.0 - self.double();
        let rand = -(cut + (1.0 - cut) * uniform).ln() / parameter;
        min + ((max - min + 1) as f64 * rand) as i64
    }

    /// `getGaussianRand` (parameter >= 2, checked by the caller).
    pub fn gaussian(&mut self, min: i64, max: i64, parameter: f64) -> i64 {
        let stdev = loop {
            let s = self.double_normal();
            if !(s < -parameter || s >= parameter) {
                break s;
            }
        };
        let rand = (stdev + parameter) / (parameter * 2.0);
        min + ((max - min + 1) as f64 * rand) as i64
    }

    /// `getZipfianRand` (Devroye's rejection method; s in [1.001, 1000], checked by the caller).
    pub fn zipfian(&mut self, min: i64, max: i64, s: f64) -> i64 {
        let n = max - min + 1;
        min - 1 + self.iterative_zipfian(n, s)
    }

    fn iterative_zipfian(&mut self, n: i64, s: f64) -> i64 {
        if n <= 1 {
            return 1;
        }
        let b = 2f64.powf(s - 1.0);
        loop {
            let u = self.double();
            let v = self.double();
            let x = u.powf(-1.0 / (s - 1.0)).floor();
            let t = (1.0 + 1.0 / x).powf(s - 1.0);
            if v * x * (t - 1.0) / (b - 1.0) <= t / b && x <= n as f64 {
                return x as i64;
            }
        }
    }
}

const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const MM2_MUL: u64 = 0xc6a4_a793_5bd1_e995;
const MM2_MUL_TIMES_8: u64 = 0x3525_3c9a_de8f_4ca8;
const MM2_ROT: u32 = 47;

/// `getHashFnv1a`.
pub fn hash_fnv1a(val: i64, seed: i64) -> i64 {
    let mut result = FNV_OFFSET_BASIS ^ seed as u64;
    let mut v = val;
    for _ in 0..8 {
        let octet = (v & 0xff) as u64;
        v >>= 8;
        result ^= octet;
        result = result.wrapping_mul(FNV_PRIME);
    }
    result as i64
}

/// `getHashMurmur2` (MurmurHash64A of one 8-byte value).
pub fn hash_murmur2(val: i64, seed: i64) -> i64 {
    let mut result = (seed as u64) ^ MM2_MUL_TIMES_8;
    let mut k = val as u64;
    k = k.wrapping_mul(MM2_MUL);
    k ^= k >> MM2_ROT;
    k = k.wrapping_mul(MM2_MUL);
    result ^= k;
    result = result.wrapping_mul(MM2_MUL);
    result ^= result >> MM2_ROT;
    result = result.wrapping_mul(MM2_MUL);
    result ^= result >> MM2_ROT;
    result as i64
}

/// pgbench's `permute`: the position of `val` (modulo `size`) in a pseudorandom permutation
/// of 0..size chosen by `seed` (size > 0, checked by the caller).
pub fn permute(val: i64, isize: i64, seed: i64) -> i64 {
    if isize < 2 {
        return 0;
    }
    let mut state = PgPrng::seed(seed as u64);
    let size = isize as u64;
    let mut v = (val as u64) % size;
    let masklen = 63 - size.leading_zeros();
    let mask = (1u64 << masklen) - 1;
    for _ in 0..6 {
        let m = (state.next_u64() & mask) | 1;
        let r = state.next_u64() & mask;
        if v <= mask {
            v = (v.wrapping_mul(m) ^ r) & mask;
            v = ((v << 1) & mask) | (v >> (masklen - 1));
        }
        let m = (state.next_u64() & mask) | 1;
        let r = state.next_u64() & mask;
        let mut t = size - 1 - v;
        if t <= mask {
            t = (t.wrapping_mul(m) ^ r) & mask;
            t = ((t << 1) & mask) | (t >> (masklen - 1));
            v = size - 1 - t;
        }
        let r = state.uint64_range(0, size - 1);
        v = (v + r) % size;
    }
    v as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The examples of pgbench's documentation (Table "pgbench Functions").
    #[test]
    fn documented_hash_values() {
        assert_eq!(hash_murmur2(10, 5432), -5817877081768721676);
        assert_eq!(hash_fnv1a(10, 5432), -7793829335365542153);
    }

    #[test]
    fn permute_is_a_bijection_of_the_range() {
        for size in [1i64, 2, 3, 7, 10, 64, 1000] {
            for seed in [0i64, 5432, -1] {
                let mut seen: Vec<i64> = (0..size).map(|i| permute(i, size, seed)).collect();
                seen.sort_unstable();
                assert_eq!(
                    seen,
                    (0..size).collect::<Vec<_>>(),
                    "size {size} seed {seed}"
                );
            }
        }
        // Values outside the range are taken modulo the size (as unsigned, as pgbench does).
        assert_eq!(permute(13, 10, 7), permute(3, 10, 7));
    }

    /// What pgbench 15.19's client 0 drew with `--random-seed=42` for `random(1, 1000000000)`,
    /// `random_gaussian(1, 1000, 2.5)`, `random_exponential(1, 1000, 3.0)` and
    /// `random_zipfian(1, 1000, 1.5)`, five transactions (read off its `debug()` lines): the
    /// client's state is seeded by the base sequence's first draw. Every step of the port shows
    /// here: the generator, the seeding, the range reduction, Box-Muller, the cut exponential,
    /// Devroye's zipfian.
    #[test]
    fn draws_what_pgbench_draws_for_a_seed() {
        let mut base = PgPrng::seed(42);
        let mut client0 = PgPrng::seed(base.next_u64());
        let pgbench = [
            [684288445, 777, 20, 12],
            [3700788, 553, 353, 10],
            [765954092, 721, 71, 4],
            [459973512, 175, 303, 2],
            [676452627, 621, 601, 1],
        ];
        for expected in pgbench {
            let drawn = [
                client0.uniform(1, 1_000_000_000),
                client0.gaussian(1, 1000, 2.5),
                client0.exponential(1, 1000, 3.0),
                client0.zipfian(1, 1000, 1.5),
            ];
            assert_eq!(drawn, expected);
        }
        // pgbench's default_seed with one client: the base sequence's second draw.
        assert_eq!(base.next_u64() as i64, 4306334408478191133);
    }

    #[test]
    fn distributions_stay_in_their_bounds() {
        let mut r = PgPrng::seed(42);
        for _ in 0..10_000 {
            let u = r.uniform(-5, 5);
            assert!((-5..=5).contains(&u));
            let e = r.exponential(1, 10, 3.0);
            assert!((1..=10).contains(&e), "{e}");
            let g = r.gaussian(1, 10, 2.5);
            assert!((1..=10).contains(&g), "{g}");
            let z = r.zipfian(1, 10, 1.5);
            assert!((1..=10).contains(&z), "{z}");
        }
        // Uniform over one value, and over a full-width range, never loops forever.
        assert_eq!(r.uniform(7, 7), 7);
        let _ = r.uniform(i64::MIN / 2, i64::MAX / 2);
    }
}
