//! Bit errors on the links (the error model above, seeded) and the BER
//! monitor that disables a link after too many of them.
use super::{Fate, FaultConfig};
use crate::rng::Rng;
use crate::time::Ps;

/// The seeded error draws of a run.
pub struct Faults {
    pub cfg: FaultConfig,
    rng: Rng,
    /// Every link's bit-error rate (`ber`).
    noise: Noise,
    /// The switch plane this run models (0; 1: a dual switch's second).
    plane: u8,
    /// BER monitor, per host link: when its window started, the units
    /// dropped for bit errors in it, and when it disabled the link.
    window_start: Vec<Ps>,
    window_drops: Vec<u32>,
    disabled_at: Vec<Option<Ps>>,
    /// Links disabled so far (for the counters).
    pub links_disabled: u64,
    /// The link the BER monitor disabled last, and when, until its switch
    /// is told (`Sim::cross_link`).
    pub newly_disabled: Option<(u16, Ps)>,
}

/// Bits of one block on the wire, and of its scrambled payload (the 2-bit
/// sync header is not scrambled).
const BLOCK_BITS: u32 = 66;
const PAYLOAD_BITS: u32 = 64;

/// The self-synchronising descrambler x^58 + x^39 + 1 (docs/protocol.md §1)
/// turns a line error in a payload bit at payload position p into errors at
/// p, p + 39 and p + 58: a unit also takes errors from line errors up to 58
/// payload bits before it.
const DESCRAMBLER_TAPS: [i64; 3] = [0, 39, 58];
const DESCRAMBLER_REACH: u32 = 58;

/// Undetected-error probability of a control block with `k` random bit
/// errors while its link is in step (docs/protocol.md §5a): 0 for odd k and
/// k ≤ 3, else C(42,k)/C(66,k)·2^-7.
pub fn control_undetected(k: u32) -> f64 {
    if k < 4 || k % 2 == 1 || k > 42 {
        return 0.0;
    }
    let mut ratio = 1.0;
    for i in 0..k {
        ratio *= (42 - i) as f64 / (66 - i) as f64;
    }
    ratio / 128.0
}

/// Undetected-error probability of a data unit with `k` bit errors: CRC-32C
/// detects every error of up to 3 bits; past that, 2^-32.
/// (The simulator charges it for `k` line errors whose descrambled copies
/// all lie in the unit: see `Noise::escape`.)
pub fn data_undetected(k: u32) -> f64 {
    if k < 4 {
        0.0
    } else {
        (2.0f64).powi(-32)
    }
}

impl Faults {
    pub fn new(cfg: &FaultConfig, plane: u8, nodes: usize) -> Self {
        Faults {
            rng: Rng::fork(cfg.seed, 0xFA17_0000 + plane as u64),
            noise: Noise::of(cfg.ber, cfg.burst_bits),
            cfg: cfg.clone(),
            plane,
            window_start: vec![0; nodes],
            window_drops: vec![0; nodes],
            disabled_at: vec![None; nodes],
            links_disabled: 0,
            newly_disabled: None,
        }
    }

    /// Whether host `host`'s link is down at `at` (failed or disabled).
    pub fn link_down(&self, host: u16, at: Ps) -> bool {
        self.disabled_at
            .get(host as usize)
            .is_some_and(Option::is_some)
            || self
                .cfg
                .failures
                .iter()
                .any(|f| f.ber.is_none() && f.covers(self.plane, host, at))
    }

    /// Whether the whole switch of this plane is down at `at`.
    pub fn switch_down(&self, at: Ps) -> bool {
        self.cfg.failures.iter().any(|f| {
            f.host.is_none() && f.ber.is_none() && f.plane == self.plane && f.covers(f.plane, 0, at)
        })
    }

    /// Whether host `host` sees its link down at `at`: it has been down
    /// (failed or disabled) for `link_detect_ns`, and is not back for as
    /// long (the host's PHY takes that to lose lock and to regain it).
    pub fn seen_down(&self, host: u16, at: Ps) -> bool {
        let Some(since) = at.checked_sub(self.cfg.link_detect_ps()) else {
            return false;
        };
        self.disabled_at
            .get(host as usize)
            .is_some_and(|d| d.is_some_and(|d| d <= since))
            || self
                .cfg
                .failures
                .iter()
                .any(|f| f.ber.is_none() && f.covers(self.plane, host, since))
    }

    /// The BER monitor counts a unit dropped for bit errors on `host`'s link.
    fn monitor(&mut self, host: u16, at: Ps) {
        let threshold = self.cfg.monitor_threshold;
        let h = host as usize;
        if threshold == 0 || self.disabled_at[h].is_some() {
            return;
        }
        if at >= self.window_start[h] + self.cfg.monitor_window_ns * 1000 {
            self.window_start[h] = at;
            self.window_drops[h] = 0;
        }
        self.window_drops[h] += 1;
        if self.window_drops[h] >= threshold {
            self.disabled_at[h] = Some(at);
            self.links_disabled += 1;
            self.newly_disabled = Some((host, at));
        }
    }

    /// Draws the fate of a unit of `blocks` blocks crossing host `host`'s
    /// link at `at`.
    pub fn cross_link(&mut self, host: u16, at: Ps, blocks: u32, control: bool) -> Fate {
        if self.link_down(host, at) {
            return Fate::LinkDown;
        }
        let noisy = self.cfg.failures.iter().find_map(|f| {
            f.ber
                .filter(|_| f.covers(self.plane, host, at))
                .map(|ber| Noise::of(ber, self.cfg.burst_bits))
        });
        let fate = self.cross_with(noisy.unwrap_or(self.noise), blocks, control);
        if fate == Fate::Dropped {
            self.monitor(host, at);
        }
        fate
    }

    /// Probability that a unit of `blocks` blocks is hit on a link of the
    /// run's `ber`.
    pub fn hit_probability(&self, blocks: u32) -> f64 {
        self.noise.hit_probability(blocks)
    }

    /// Draws the fate of a unit of `blocks` blocks crossing a link of the
    /// run's `ber`.
    pub fn cross(&mut self, blocks: u32, control: bool) -> Fate {
        self.cross_with(self.noise, blocks, control)
    }

    fn cross_with(&mut self, noise: Noise, blocks: u32, control: bool) -> Fate {
        if noise.ber <= 0.0 {
            return Fate::Intact;
        }
        let hit = noise.hit_probability(blocks);
        let u = self.rng.uniform();
        if u >= hit {
            return Fate::Intact;
        }
        let events = noise.errors_given_hit(noise.exposed_bits(blocks), u);
        let pattern = self.descrambled(noise, blocks, events);
        if pattern.inside == 0 {
            // (The copies cancelled out in the unit.)
            return Fate::Intact;
        }
        let escape = noise.escape(&pattern, events, control);
        if escape > 0.0 && self.rng.uniform() < escape {
            Fate::Undetected
        } else {
            Fate::Dropped
        }
    }

    /// Places `events` line error events (bits or bursts) uniformly over
    /// the bits exposed to them and returns what the descrambler makes of
    /// them in the unit of `blocks` blocks.
    fn descrambled(&mut self, noise: Noise, blocks: u32, events: u32) -> Pattern {
        let exposed = noise.exposed_bits(blocks) as i64;
        let before = exposed - (blocks * BLOCK_BITS) as i64;
        let mut line_bits = Vec::with_capacity((events * noise.burst) as usize);
        for _ in 0..events {
            let start = self.rng.below(exposed as u64) as i64 - before;
            // A burst: its first and last bits flipped, those between at random.
            for b in 0..noise.burst as i64 {
                if b == 0 || b == noise.burst as i64 - 1 || self.rng.uniform() < 0.5 {
                    line_bits.push(start + b);
                }
            }
        }
        Pattern::of(&line_bits, blocks)
    }
}

/// A unit's bit errors after the descrambler.
#[derive(Clone, Debug, PartialEq)]
struct Pattern {
    /// Errors in the unit (copies that meet cancel).
    inside: u32,
    /// Every copy of every line error lies in the unit: the pattern is the
    /// line pattern times x^58 + x^39 + 1, which no CRC here divides (both
    /// generators are prime to it: a test checks), so it passes a CRC exactly
    /// when the line pattern alone would.
    whole: bool,
}

impl Pattern {
    /// The pattern of line errors at `line_bits` (relative to the unit's
    /// first bit; before it: payload bits of the blocks before) in a unit of
    /// `blocks` blocks.
    fn of(line_bits: &[i64], blocks: u32) -> Pattern {
        let (block, payload) = (BLOCK_BITS as i64, PAYLOAD_BITS as i64);
        let unit_payload = blocks as i64 * payload;
        let mut inside: Vec<i64> = Vec::new();
        let mut whole = true;
        let mut toggle = |at: i64| match inside.iter().position(|&x| x == at) {
            Some(i) => {
                inside.swap_remove(i);
            }
            None => inside.push(at),
        };
        for &x in line_bits {
            let in_unit = (0..blocks as i64 * block).contains(&x);
            if in_unit && x % block < 2 {
                // A sync-header bit is not scrambled: one error.
                toggle(x);
                continue;
            }
            // Its payload position (before the unit: negative; after: past
            // the unit's payload).
            let p = match x {
                x if x < 0 => x,
                x if in_unit => x / block * payload + x % block - 2,
                x => unit_payload + x - blocks as i64 * block,
            };
            for tap in DESCRAMBLER_TAPS {
                let q = p + tap;
                if (0..unit_payload).contains(&q) {
                    toggle(q / payload * block + 2 + q % payload);
                } else {
                    whole = false;
                }
            }
        }
        Pattern {
            inside: inside.len() as u32,
            whole,
        }
    }
}

/// A link's bit errors: independent bits, or bursts.
#[derive(Clone, Copy, Debug)]
struct Noise {
    /// The bit-error rate.
    ber: f64,
    /// Bits an error event spans (1: independent bit errors), and the
    /// events' rate per bit, ber / burst (the bit-error rate stays `ber`).
    burst: u32,
    event_rate: f64,
    /// ln(1 - event_rate), for the per-unit hit probability.
    ln_keep: f64,
}

impl Noise {
    fn of(ber: f64, burst: u32) -> Noise {
        let burst = burst.max(1);
        let event_rate = ber / burst as f64;
        Noise {
            ber,
            burst,
            event_rate,
            ln_keep: (1.0 - event_rate).ln(),
        }
    }

    /// Bits where an event that reaches a unit of `blocks` blocks starts: its
    /// own, and the 58 payload bits before it whose descrambled copies land in
    /// it (a burst starting up to burst − 1 bits before those too).
    fn exposed_bits(&self, blocks: u32) -> u32 {
        blocks * BLOCK_BITS + DESCRAMBLER_REACH + self.burst - 1
    }

    fn hit_probability(&self, blocks: u32) -> f64 {
        -(self.ln_keep * self.exposed_bits(blocks) as f64).exp_m1()
    }

    /// Probability that a hit unit passes its receiver's checks, given its
    /// `events` line error events and their descrambled `pattern`. Exact:
    /// both codes detect every error of up to 3 bits (distance 4), and x + 1
    /// divides the CRC-8's generator, so it detects every odd number of
    /// errors; a whole pattern passes the CRC-32C exactly when its line
    /// pattern does (`Pattern::whole`): never for up to 3 line bits or one
    /// burst of up to 32. Past that, bounds: a data unit 2^-32; a control
    /// block with an even number of errors docs/protocol.md §5a's law for as
    /// many random errors (independent bits; the tripled positions are not
    /// credited), or 2^-8 (bursts: the structure bits are not credited).
    fn escape(&self, pattern: &Pattern, events: u32, control: bool) -> f64 {
        let errors = pattern.inside;
        if errors < 4 {
            return 0.0;
        }
        match (self.burst, control) {
            (1, true) => control_undetected(errors),
            (_, true) if errors % 2 == 1 => 0.0,
            (_, true) => 1.0 / 256.0,
            (1, false) if pattern.whole => data_undetected(events),
            (b, false) if pattern.whole && events == 1 && b <= 32 => 0.0,
            (_, false) => (2.0f64).powi(-32),
        }
    }

    /// The number of error events (≥ 1) of a hit unit exposed over `bits`
    /// bits, by inverting the binomial law with the draw `u` < P(hit)
    /// already made (u is uniform on [0, P(hit)): P(k ≥ 1) is split by k).
    fn errors_given_hit(&self, bits: u32, u: f64) -> u32 {
        let p = self.event_rate;
        let q = 1.0 - p;
        // pmf(1) = n p q^(n-1); pmf(k+1) = pmf(k) (n-k)/(k+1) p/q.
        let mut pmf = bits as f64 * p * (self.ln_keep * (bits - 1) as f64).exp();
        let mut below = 0.0;
        let mut k = 1;
        while k < bits {
            below += pmf;
            if u < below {
                return k;
            }
            pmf *= (bits - k) as f64 / (k + 1) as f64 * p / q;
            k += 1;
        }
        bits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn faults(ber: f64, seed: u64) -> Faults {
        Faults::new(
            &FaultConfig {
                ber,
                seed,
                ..FaultConfig::default()
            },
            0,
            1,
        )
    }

    #[test]
    fn hit_rate_follows_the_block_count() {
        let mut f = faults(1e-3, 7);
        let trials = 200_000;
        let hits = (0..trials)
            .filter(|_| f.cross(4, false) != Fate::Intact)
            .count() as f64;
        // Its own 4 blocks and the 58 payload bits whose descrambled copies reach it.
        let p = 1.0 - (1.0 - 1e-3f64).powi(66 * 4 + 58);
        let sd = (trials as f64 * p * (1.0 - p)).sqrt();
        assert!((hits - trials as f64 * p).abs() < 4.0 * sd, "{hits} vs {p}");
    }

    #[test]
    fn no_errors_without_ber_and_single_errors_are_always_caught() {
        let mut f = faults(0.0, 1);
        assert!((0..1000).all(|_| f.cross(10, true) == Fate::Intact));
        // At 1e-6 nearly every hit is one bit: never undetected.
        let mut f = faults(1e-6, 3);
        assert!((0..100_000).all(|_| f.cross(100, true) != Fate::Undetected));
    }

    #[test]
    fn bursts_keep_the_bit_error_rate_and_short_ones_never_escape() {
        // 1e-4 in bursts of 8: an eighth of the events, a longer exposure.
        let (bits, bursts) = (Noise::of(1e-4, 1), Noise::of(1e-4, 8));
        let p = bursts.hit_probability(10);
        let expected = 1.0 - (1.0 - 1e-4 / 8.0f64).powi(66 * 10 + 58 + 7);
        assert!((p - expected).abs() < 1e-12 && p < bits.hit_probability(10));
        // One burst of up to 32 bits, all its copies in the unit, passes the
        // CRC-32C exactly when the burst would: never.
        let whole = Pattern {
            inside: 40,
            whole: true,
        };
        assert_eq!(Noise::of(1e-4, 32).escape(&whole, 1, false), 0.0);
        assert!(Noise::of(1e-4, 33).escape(&whole, 1, false) > 0.0);
        let cut = Pattern {
            whole: false,
            ..whole
        };
        assert!(Noise::of(1e-4, 8).escape(&cut, 1, false) > 0.0);
        // The CRC-8 sees every odd number of errors, burst or not.
        let odd = Pattern {
            inside: 9,
            whole: false,
        };
        assert_eq!(Noise::of(1e-4, 16).escape(&odd, 1, true), 0.0);
    }

    #[test]
    fn a_line_error_becomes_three_after_the_descrambler() {
        // Line bit x of a 3-block unit: block x / 66, payload bit x % 66 - 2.
        let at = |block: i64, payload: i64| block * 66 + 2 + payload;
        // Payload bit 10 of block 0: copies at payload 10, 49 and 68 (block 1).
        assert_eq!(
            Pattern::of(&[at(0, 10)], 3),
            Pattern {
                inside: 3,
                whole: true
            }
        );
        // The unit's last payload bit: its two copies fall after the unit.
        let last = Pattern::of(&[at(2, 63)], 3);
        assert_eq!((last.inside, last.whole), (1, false));
        // 10 payload bits before the unit: copies at payload 29 and 48.
        let before = Pattern::of(&[-10], 3);
        assert_eq!((before.inside, before.whole), (2, false));
        // A sync-header bit is not scrambled.
        assert_eq!(Pattern::of(&[66], 3).inside, 1);
        // Two line errors 39 bits apart: their copies at +39 and +0 meet.
        assert_eq!(Pattern::of(&[at(0, 1), at(0, 40)], 3).inside, 4);
        // A single line error never gets past either check.
        let mut f = faults(1e-7, 5);
        for blocks in [1, 3, 35] {
            for control in [true, false] {
                assert!((0..100_000).all(|_| f.cross(blocks, control) != Fate::Undetected));
            }
        }
    }

    #[test]
    fn one_line_error_lands_as_the_descrambler_places_it() {
        // One error uniformly over a 4-block unit's exposure (264 + 58 bits):
        // all three copies in it for payload bits 0..198; two for the 39
        // payload bits before it past 58 back and its payload bits
        // 198..217; one for its 8 sync bits, 19 bits further back and its
        // last 39 payload bits.
        let mut f = faults(1e-3, 11);
        let noise = f.noise;
        let draws = 100_000;
        let mut seen = [0u32; 4];
        for _ in 0..draws {
            let p = f.descrambled(noise, 4, 1);
            // (Whole: all three copies, or a sync bit, unscrambled.)
            assert!(!p.whole || p.inside != 2);
            seen[p.inside as usize] += 1;
        }
        for (inside, positions) in [(1, 66.0), (2, 58.0), (3, 198.0)] {
            let p = positions / 322.0;
            let sd = (draws as f64 * p * (1.0 - p)).sqrt();
            let got = seen[inside] as f64;
            assert!((got - draws as f64 * p).abs() < 4.0 * sd, "{inside}: {got}");
        }
        assert_eq!(seen[0], 0);
    }

    /// GF(2) polynomials as bit sets: the remainder of `a` by `b`.
    fn poly_mod(mut a: u128, b: u128) -> u128 {
        let degree = |x: u128| 127 - x.leading_zeros();
        while a != 0 && degree(a) >= degree(b) {
            a ^= b << (degree(a) - degree(b));
        }
        a
    }

    #[test]
    fn the_crcs_are_prime_to_the_descrambler() {
        // Hence g | l(x)·(1 + x^39 + x^58) only if g | l(x): a tripled
        // pattern inside a unit passes exactly when its line errors would.
        let scrambler = (1u128 << 58) | (1 << 39) | 1;
        let crc32c = (1u128 << 32) | edm_proto::spec::CRC32C_POLY_REFLECTED.reverse_bits() as u128;
        assert_eq!(crc32c, 0x1_1EDC_6F41);
        let crc8 = 0x100 | edm_proto::spec::CRC8_POLY as u128;
        for g in [crc32c, crc8] {
            let (mut a, mut b) = (scrambler, g);
            while b != 0 {
                (a, b) = (b, poly_mod(a, b));
            }
            assert_eq!(a, 1, "gcd with {g:#x}");
        }
    }

    #[test]
    fn undetected_rates_follow_protocol_5a() {
        assert_eq!(control_undetected(3), 0.0);
        assert_eq!(control_undetected(5), 0.0);
        let k4 = control_undetected(4);
        assert!((k4 - 1.2e-3).abs() < 0.05e-3, "{k4}");
        assert_eq!(data_undetected(3), 0.0);
    }

    #[test]
    fn error_counts_follow_the_binomial_law() {
        // At ber 0.05 on one block (66 bits and the 58 before it, n = 124),
        // P(k = 1 | hit) = n p q^(n-1) / (1 - q^n).
        let f = Noise::of(0.05, 1);
        let (q, n): (f64, u32) = (0.95, f.exposed_bits(1));
        assert_eq!(n, 124);
        let p1 = n as f64 * 0.05 * q.powi(n as i32 - 1) / (1.0 - q.powi(n as i32));
        let hit = f.hit_probability(1);
        assert_eq!(f.errors_given_hit(n, hit * p1 * 0.999), 1);
        assert!(f.errors_given_hit(n, hit * p1 * 1.001) >= 2);
    }
}
