//! Bit errors on the links (the error model above, seeded) and the BER
//! monitor that disables a link after too many of them.
use super::{Fate, FaultConfig};
use crate::config::Ps;
use crate::rng::Rng;

/// The seeded error draws of a run.
pub struct Faults {
    pub cfg: FaultConfig,
    rng: Rng,
    /// Every link's bit-error rate (`ber`).
    noise: Noise,
    /// The switch plane this run models (0; 1: a dual switch's second).
    plane: u8,
    /// BER monitor, per host link: when its window started, the units
    /// dropped for bit errors in it, and whether it disabled the link.
    window_start: Vec<Ps>,
    window_drops: Vec<u32>,
    disabled: Vec<bool>,
    /// Links disabled so far (for the counters).
    pub links_disabled: u64,
}

/// Bits of one block on the wire.
const BLOCK_BITS: u32 = 66;

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
            disabled: vec![false; nodes],
            links_disabled: 0,
        }
    }

    /// Whether host `host`'s link is down at `at` (failed or disabled).
    pub fn link_down(&self, host: u16, at: Ps) -> bool {
        self.disabled.get(host as usize).is_some_and(|&d| d)
            || self
                .cfg
                .failures
                .iter()
                .any(|f| f.ber.is_none() && f.covers(self.plane, host, at))
    }

    /// The BER monitor counts a unit dropped for bit errors on `host`'s link.
    fn monitor(&mut self, host: u16, at: Ps) {
        let threshold = self.cfg.monitor_threshold;
        let h = host as usize;
        if threshold == 0 || self.disabled[h] {
            return;
        }
        if at >= self.window_start[h] + self.cfg.monitor_window_ns * 1000 {
            self.window_start[h] = at;
            self.window_drops[h] = 0;
        }
        self.window_drops[h] += 1;
        if self.window_drops[h] >= threshold {
            self.disabled[h] = true;
            self.links_disabled += 1;
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
        let k = noise.errors_given_hit(noise.exposed_bits(blocks), u);
        let escape = noise.escape(k, control);
        if escape > 0.0 && self.rng.uniform() < escape {
            Fate::Undetected
        } else {
            Fate::Dropped
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

    /// Bits where an event that reaches a unit of `blocks` blocks starts (a
    /// burst starting up to burst − 1 bits before it reaches it too).
    fn exposed_bits(&self, blocks: u32) -> u32 {
        blocks * BLOCK_BITS + self.burst - 1
    }

    fn hit_probability(&self, blocks: u32) -> f64 {
        -(self.ln_keep * self.exposed_bits(blocks) as f64).exp_m1()
    }

    /// Probability that a hit unit with `events` error events passes its
    /// receiver's checks. Independent bits: docs/protocol.md §5a for the
    /// number of bit errors. Bursts (first and last bit flipped, the ones
    /// between at random): the CRC-8 catches every single burst of up to 8
    /// bits and the CRC-32C of up to 32; past that an upper bound, 2^-8 and
    /// 2^-32 (the structure bits a control block must keep are not credited).
    fn escape(&self, events: u32, control: bool) -> f64 {
        match (self.burst, control) {
            (1, true) => control_undetected(events),
            (1, false) => data_undetected(events),
            (b, true) if events == 1 && b <= 8 => 0.0,
            (_, true) => 1.0 / 256.0,
            (b, false) if events == 1 && b <= 32 => 0.0,
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
        let p = 1.0 - (1.0 - 1e-3f64).powi(66 * 4);
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
        let expected = 1.0 - (1.0 - 1e-4 / 8.0f64).powi(66 * 10 + 7);
        assert!((p - expected).abs() < 1e-12 && p < bits.hit_probability(10));
        assert_eq!(bursts.escape(1, true), 0.0);
        assert!(Noise::of(1e-4, 9).escape(1, true) > 0.0);
        assert_eq!(Noise::of(1e-4, 32).escape(1, false), 0.0);
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
        // At ber 0.05 on one block, P(k = 1 | hit) = 66 p q^65 / (1 - q^66).
        let f = Noise::of(0.05, 1);
        let q: f64 = 0.95;
        let p1 = 66.0 * 0.05 * q.powi(65) / (1.0 - q.powi(66));
        let hit = f.hit_probability(1);
        assert_eq!(f.errors_given_hit(66, hit * p1 * 0.999), 1);
        assert!(f.errors_given_hit(66, hit * p1 * 1.001) >= 2);
    }
}
