//! Faults in an EDM run (issue 25, paper §3.3; docs/faults.md §4): read
//! timeouts, bit errors, links and switches that fail, the BER monitor, the
//! dual switch, and the timers and idempotent retries that recover (the
//! receiver keeps a chunk's first intact copy). What a fault does to a unit
//! is decided here, seeded; the hosts and the switch call in from
//! `hosts.rs`, `switch.rs` and `sim.rs`.
//!
//! The error model: every bit of every block on every link flips
//! independently with probability `ber` (or, with `burst_bits`, in bursts at
//! the same bit rate). A unit of n blocks on one link is hit with
//! probability 1-(1-ber)^(66n). A hit control unit (/N/, /G/, a request, a
//! forwarded request) is dropped by its receiver (its CRC-8, the link's
//! control sequence, docs/protocol.md §5a, or the message CRC-32C); a hit
//! data unit fails its CRC-32C and is discarded. A hit unit passes
//! undetected only with the rates of docs/protocol.md §5 and §5a for the
//! number of bit errors it took (drawn from the binomial law): a control
//! block with an even number k ≥ 4 of errors with C(42,k)/C(66,k)·2^-7, a
//! data unit with k ≥ 4 errors with 2^-32 (CRC-32C detects every error of
//! up to 3 bits at these lengths).
use super::sim::{Chunk, Ev, Msg, Sim, Unit, NO_CHUNK};
use super::{Edm, UnitKind};
use crate::config::Ps;
use crate::edm::scheduler::Grant;
use crate::engine::{Outcome, Record};
use crate::rng::Rng;
use crate::workload::{MessageSpec, Op};

/// The faults a run models (all off by default).
#[derive(Clone, Debug, PartialEq)]
pub struct FaultConfig {
    /// A read or RMW not answered this long after its request left finishes
    /// with a NULL response (0: never, the RTL's `cfg_timeout` = 0).
    pub read_timeout_ns: u64,
    /// Bit-error rate of every link (0: none).
    pub ber: f64,
    /// Bits one error event spans (0 or 1: independent bit errors).
    pub burst_bits: u32,
    /// How long a host waits for a grant before it sends its /N/ or request
    /// again, and the switch for a granted chunk's data before it grants
    /// the chunk again.
    pub retry_timeout_ns: u64,
    /// Seeds the error draws (the run's `seed`).
    pub seed: u64,
    /// Links and switches that fail (and may come back) during the run.
    pub failures: Vec<Failure>,
    /// With lossy links: a message not completed this long after it was
    /// issued is reported failed and no longer retried (0: never).
    pub give_up_ns: u64,
    /// BER monitor: a link on which this many units are dropped for bit
    /// errors within `monitor_window_ns` is disabled for the rest of the run
    /// (0: no monitor; paper §3.3, 802.3 Clause 49's hi_ber).
    pub monitor_threshold: u32,
    pub monitor_window_ns: u64,
    /// The paper's dual switch (§3.3): every host mirrors its memory
    /// messages on two planes, each a switch with its own links and
    /// scheduler; the receiver keeps the first copy.
    pub dual_switch: bool,
}

/// A link (both directions of a host's link to a switch) or a whole switch
/// that is down (or, with `ber`, noisy) from `down_ns` until `up_ns` (never
/// back: `None`).
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    /// The host whose link fails; None: the switch (all its links).
    pub host: Option<u16>,
    /// Which switch plane (0, or 1 with the dual switch).
    pub plane: u8,
    pub down_ns: u64,
    pub up_ns: Option<u64>,
    /// Not down but noisy: the link's bit-error rate in that time.
    pub ber: Option<f64>,
}

impl Failure {
    /// Parses `target@down[-up][/ber]` events separated by commas, times in
    /// ns, the target `switch`, `switch:P`, `link:H` or `link:H:P` (P the
    /// plane); with `/ber` the target is noisy at that bit-error rate
    /// instead of down.
    pub fn parse_list(text: &str) -> Result<Vec<Failure>, String> {
        text.split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .map(|event| Failure::parse(event).map_err(|why| format!("event {event:?}: {why}")))
            .collect()
    }

    fn parse(event: &str) -> Result<Failure, String> {
        let (target, times) = event.split_once('@').ok_or("needs target@time_ns")?;
        let (times, ber) = match times.split_once('/') {
            Some((t, b)) => match b.trim().parse::<f64>() {
                Ok(x) if x > 0.0 && x <= 0.01 => (t, Some(x)),
                _ => return Err(format!("bit-error rate {b:?} is not in (0, 0.01]")),
            },
            None => (times, None),
        };
        let number = |s: &str, what: &str| {
            s.trim()
                .parse::<u64>()
                .map_err(|_| format!("{what} {s:?} is not a whole number"))
        };
        let (down_ns, up_ns) = match times.split_once('-') {
            Some((d, u)) => (number(d, "down time")?, Some(number(u, "up time")?)),
            None => (number(times, "down time")?, None),
        };
        if up_ns.is_some_and(|u| u <= down_ns) {
            return Err("comes back before it fails".into());
        }
        let parts: Vec<&str> = target.trim().split(':').collect();
        let (host, plane) = match parts.as_slice() {
            ["switch"] => (None, "0"),
            ["switch", p] => (None, *p),
            ["link", h] => (Some(number(h, "host")?), "0"),
            ["link", h, p] => (Some(number(h, "host")?), *p),
            _ => return Err("target is not switch, switch:P, link:H or link:H:P".into()),
        };
        let plane = match plane {
            "0" => 0,
            "1" => 1,
            _ => return Err(format!("plane {plane:?} is not 0 or 1")),
        };
        Ok(Failure {
            host: host.map(|h| h.min(u16::MAX as u64) as u16),
            plane,
            down_ns,
            up_ns,
            ber,
        })
    }

    /// Whether it takes down host `host`'s link on `plane` at `at` ps.
    fn covers(&self, plane: u8, host: u16, at: Ps) -> bool {
        self.plane == plane
            && self.host.is_none_or(|h| h == host)
            && at >= self.down_ns * 1000
            && self.up_ns.is_none_or(|u| at < u * 1000)
    }
}

/// The events as `parse_list` reads them.
pub fn format_failures(failures: &[Failure]) -> String {
    let events: Vec<String> = failures
        .iter()
        .map(|f| {
            let target = match f.host {
                None => format!("switch:{}", f.plane),
                Some(h) => format!("link:{h}:{}", f.plane),
            };
            let noise = f.ber.map_or(String::new(), |b| format!("/{b:e}"));
            match f.up_ns {
                Some(u) => format!("{target}@{}-{u}{noise}", f.down_ns),
                None => format!("{target}@{}{noise}", f.down_ns),
            }
        })
        .collect();
    events.join(",")
}

impl Default for FaultConfig {
    fn default() -> Self {
        FaultConfig {
            read_timeout_ns: 0,
            ber: 0.0,
            burst_bits: 0,
            retry_timeout_ns: 20_000,
            seed: 1,
            failures: Vec::new(),
            give_up_ns: 1_000_000,
            monitor_threshold: 0,
            monitor_window_ns: 125_000,
            dual_switch: false,
        }
    }
}

impl FaultConfig {
    /// Whether units can be lost (the hosts and the switch then keep the
    /// timers and state recovery needs).
    pub fn lossy(&self) -> bool {
        self.ber > 0.0 || !self.failures.is_empty() || self.dual_switch
    }

    pub fn retry_timeout_ps(&self) -> Ps {
        self.retry_timeout_ns * 1000
    }
}

/// What the faults did in a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultCounters {
    /// Reads and RMWs finished by their timeout with a NULL response.
    pub timed_out: u64,
    /// Data units for a message already finished by its timeout (ignored).
    pub late_data: u64,
    /// Control units (/N/, requests, /G/, forwarded requests) hit by bit
    /// errors and dropped by their receiver.
    pub control_corrupted: u64,
    /// Data units hit by bit errors, failing their CRC-32C, discarded.
    pub data_corrupted: u64,
    /// Hit units that passed their receiver's checks (target 0).
    pub undetected: u64,
    /// /N/ and requests sent again after no grant came in time.
    pub notify_retries: u64,
    /// Chunks granted again after their data did not arrive intact in time.
    pub chunk_retries: u64,
    /// Notifications the switch already held (a retry of one that was
    /// merely slow): ignored.
    pub duplicate_notifications: u64,
    /// Copies of a chunk that arrived after a good one (a retry of one that
    /// was merely late): discarded, the first copy kept.
    pub duplicate_data: u64,
    /// Grants that reached a source after an earlier copy of the same chunk.
    pub duplicate_grants: u64,
    /// Units sent into a link or switch that was down (or disabled).
    pub link_down_drops: u64,
    /// Links the BER monitor disabled.
    pub links_disabled: u64,
    /// Messages given up (`give_up_ns`) and reported failed.
    pub failed: u64,
    /// Dual switch: messages whose second copy arrived too (discarded).
    pub mirror_copies_discarded: u64,
}

impl FaultCounters {
    /// Adds `other`'s counts (the two planes of a dual switch).
    pub fn add(&mut self, o: &FaultCounters) {
        self.timed_out += o.timed_out;
        self.late_data += o.late_data;
        self.control_corrupted += o.control_corrupted;
        self.data_corrupted += o.data_corrupted;
        self.undetected += o.undetected;
        self.notify_retries += o.notify_retries;
        self.chunk_retries += o.chunk_retries;
        self.duplicate_notifications += o.duplicate_notifications;
        self.duplicate_data += o.duplicate_data;
        self.duplicate_grants += o.duplicate_grants;
        self.link_down_drops += o.link_down_drops;
        self.links_disabled += o.links_disabled;
        self.failed += o.failed;
        self.mirror_copies_discarded += o.mirror_copies_discarded;
    }
}

/// What happened to a unit on its way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    Intact,
    /// Hit and detected: the receiver drops it.
    Dropped,
    /// Hit and not detected: the receiver takes a corrupted unit.
    Undetected,
    /// Sent into a link that is down: lost.
    LinkDown,
}

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

impl Edm {
    /// The dual switch (paper §3.3): each host mirrors every memory message
    /// on two planes, each with its own links, switch and scheduler seeing
    /// the same demand; the receiver keeps the first copy. Modelled as two
    /// runs: the first plane on its own, then the second, whose hosts stop
    /// retrying a message once the first plane delivered it. (Each plane's
    /// hosts apply their rules to their own copies: a message held back on
    /// one plane is not released by the other's earlier delivery, which
    /// can only make the model slower than the design.)
    pub(super) fn run_dual(
        &self,
        messages: &[MessageSpec],
        progress: &mut dyn FnMut(u64, u64),
    ) -> Outcome {
        let first = Sim::new(self, messages).run(progress).0;
        let delivered: Vec<Option<Ps>> = first.records.iter().map(|r| r.complete_ps).collect();
        let mut sim = Sim::new(self, messages);
        sim.faults = Faults::new(&self.cfg.faults, 1, self.fabric.nodes);
        sim.mirror = Some(&delivered);
        let second = sim.run(progress).0;
        merge_planes(messages, first, second)
    }
}

/// One outcome of a dual switch's two planes: each message at its first
/// copy; counters added, utilisation the busier plane's.
fn merge_planes(messages: &[MessageSpec], first: Outcome, second: Outcome) -> Outcome {
    let mut totals = first.totals.clone();
    let other = &second.totals;
    totals.events += other.events;
    totals.end_ps = totals.end_ps.max(other.end_ps);
    totals.uplink_util_max = totals.uplink_util_max.max(other.uplink_util_max);
    totals.uplink_util_mean = totals.uplink_util_mean.max(other.uplink_util_mean);
    totals.downlink_util_max = totals.downlink_util_max.max(other.downlink_util_max);
    totals.downlink_util_mean = totals.downlink_util_mean.max(other.downlink_util_mean);
    totals.edm.faults.add(&other.edm.faults);
    totals.delivered_bytes = 0;
    let records = first
        .records
        .iter()
        .zip(&second.records)
        .zip(messages)
        .map(|((a, b), m)| {
            let complete_ps = match (a.complete_ps, b.complete_ps) {
                (Some(x), Some(y)) => {
                    totals.edm.faults.mirror_copies_discarded += 1;
                    Some(x.min(y))
                }
                (x, y) => x.or(y),
            };
            if complete_ps.is_some() {
                totals.delivered_bytes += Edm::data_bytes(Msg::of(m)) as u64;
            }
            Record {
                complete_ps,
                alone_ps: a.alone_ps,
                timed_out: complete_ps.is_none() && (a.timed_out || b.timed_out),
            }
        })
        .collect::<Vec<Record>>();
    // A plane's give-ups and timeouts are not losses if the other plane
    // delivered: what counts is what neither delivered.
    totals.edm.faults.timed_out = 0;
    totals.edm.faults.failed = records.iter().filter(|r| r.complete_ps.is_none()).count() as u64;
    Outcome { records, totals }
}

impl Sim<'_> {
    /// The timers of a message whose /N/ or request its host sends at `at`:
    /// the retry of an ungranted notification, a read's timeout.
    pub(super) fn arm_timers(&mut self, at: Ps, unit: Unit) {
        if self.lossy {
            let check = at + self.edm.cfg.faults.retry_timeout_ps();
            self.q.push(check, Ev::NotifyCheck(unit));
            let give_up = self.edm.cfg.faults.give_up_ns * 1000;
            if give_up > 0 {
                // Not before now: a message activated after its deadline
                // (it waited behind X active ones) gives up at once, in
                // time order (an event in the past would turn time back).
                let issued = self.msgs[unit.msg as usize].issue_ps;
                self.q.push((issued + give_up).max(at), Ev::GiveUp(unit.msg));
            }
        }
        if self.read_timeout > 0 && unit.spec.op != Op::Write {
            self.q
                .push(at + self.read_timeout, Ev::ReadTimeout(unit.msg));
        }
    }

    /// An /N/ or request reaches the switch: false if it was hit (dropped)
    /// or the switch already holds its message (a retry: ignored, so the
    /// demand is counted once).
    pub(super) fn notification_accepted(&mut self, now: Ps, unit: Unit) -> bool {
        if !self.crosses(unit.spec.requester, now, unit.blocks, true) {
            return false;
        }
        let seen = &mut self.at_switch[unit.msg as usize];
        if *seen {
            self.totals.edm.faults.duplicate_notifications += 1;
            return false;
        }
        *seen = true;
        true
    }

    /// One link's errors on a unit: false if its receiver drops it.
    fn crosses(&mut self, host: u16, at: Ps, blocks: u32, control: bool) -> bool {
        let fate = self.faults.cross_link(host, at, blocks, control);
        self.count(fate, control)
    }

    /// Counts a unit's fate: false if it is lost.
    fn count(&mut self, fate: Fate, control: bool) -> bool {
        let counters = &mut self.totals.edm.faults;
        counters.links_disabled = self.faults.links_disabled;
        match fate {
            Fate::Intact => true,
            Fate::LinkDown => {
                counters.link_down_drops += 1;
                false
            }
            Fate::Dropped => {
                if control {
                    counters.control_corrupted += 1;
                } else {
                    counters.data_corrupted += 1;
                }
                false
            }
            Fate::Undetected => {
                counters.undetected += 1;
                true
            }
        }
    }

    /// A forwarded request (down to the memory node) or a data unit (up to
    /// the switch, down to its destination) arrives: false if a link's
    /// errors made its receiver drop it.
    /// `to` is the host it is going down to, `at` when.
    pub(super) fn arrives_intact(&mut self, to: u16, at: Ps, unit: &Unit) -> bool {
        match unit.kind {
            UnitKind::Data => {
                // A unit hit on the uplink is dropped at its receiver as
                // well (the switch forwards cut-through): one draw per link;
                // the worse fate counts.
                let (src, _) = Edm::data_path(unit.spec);
                let up = self.faults.cross_link(src, at, unit.blocks, false);
                let down = self.faults.cross_link(to, at, unit.blocks, false);
                let worst = [Fate::LinkDown, Fate::Dropped, Fate::Undetected]
                    .into_iter()
                    .find(|f| up == *f || down == *f)
                    .unwrap_or(Fate::Intact);
                self.count(worst, false)
            }
            _ => self.crosses(to, at, unit.blocks, true),
        }
    }

    /// A /G/ reaches its source: None if dropped, else whether it is the
    /// first copy of its chunk's grant there.
    pub(super) fn grant_arrives(&mut self, to: u16, at: Ps, unit: &Unit) -> Option<bool> {
        if !self.crosses(to, at, unit.blocks, true) {
            return None;
        }
        if unit.kind == UnitKind::Grant {
            // (A forwarded request reaches the memory node, not the requester.)
            self.heard[unit.msg as usize] = true;
        }
        let chunk = &mut self.chunks[unit.chunk as usize];
        let first = !chunk.grant_heard;
        chunk.grant_heard = true;
        if !first {
            self.totals.edm.faults.duplicate_grants += 1;
        }
        Some(first)
    }

    /// Whether a data unit arriving at its destination is taken: not for a
    /// message that ended (timed out), not a second copy of a chunk.
    pub(super) fn take_data(&mut self, unit: &Unit) -> bool {
        let i = unit.msg as usize;
        if self.lossy {
            self.heard[i] = true;
        }
        if self.ended[i] {
            self.totals.edm.faults.late_data += 1;
            return false;
        }
        if self.lossy {
            let chunk = &mut self.chunks[unit.chunk as usize];
            if chunk.delivered {
                self.totals.edm.faults.duplicate_data += 1;
                return false;
            }
            chunk.delivered = true;
        }
        true
    }

    /// The chunk grant `g` grants, with its `last` flag: a new chunk, or the
    /// one its notification grants again (then `last` only if no copy of
    /// that chunk's last grant reached the source yet).
    pub(super) fn grant_chunk(&mut self, g: &Grant) -> (u32, bool) {
        let again = self.queued_chunk[g.msg as usize];
        if again != NO_CHUNK {
            let c = self.chunks[again as usize];
            return (again, c.last && !c.grant_heard);
        }
        self.chunks.push(Chunk {
            delivered: false,
            grant_heard: false,
            last: g.last,
        });
        ((self.chunks.len() - 1) as u32, g.last)
    }

    /// The requester's retry timer: an /N/ or request not granted yet is
    /// sent again (the switch ignores it if it holds the message already).
    pub(super) fn notify_check(&mut self, now: Ps, unit: Unit) -> bool {
        let i = unit.msg as usize;
        if self.ended[i] || self.heard[i] || self.mirror_done(i, now) {
            return false;
        }
        self.totals.edm.faults.notify_retries += 1;
        // Generated again, as a new one is (so the uplink's control blocks
        // stay in time order behind those of messages issued just before).
        let at = now + self.edm.c(self.edm.cfg.steps.gen_req);
        self.send_control(now, at, unit);
        let check = now + self.edm.cfg.faults.retry_timeout_ps();
        self.q.push(check, Ev::NotifyCheck(unit));
        true
    }

    /// The switch's timer on a grant: if no copy of its chunk arrived
    /// intact (the grant, the forwarded request or the data was hit), the
    /// circuit is given up and the chunk's demand queued again, same
    /// message, same chunk.
    pub(super) fn chunk_check(&mut self, now: Ps, grant: Unit) -> bool {
        let i = grant.msg as usize;
        if self.chunks[grant.chunk as usize].delivered || self.ended[i] || self.mirror_done(i, now)
        {
            return false;
        }
        self.totals.edm.faults.chunk_retries += 1;
        let m: Msg = grant.spec;
        let id = self.enqueue_chunk(grant.msg, m, grant.chunk);
        let visible = now + self.edm.notification_delay(false);
        let (src, dst) = Edm::data_path(m);
        let first_extra = if m.op == Op::Write {
            0
        } else {
            self.edm.first_response_extra(m)
        };
        self.sched.notify(
            visible,
            src,
            dst,
            id,
            grant.bytes,
            Edm::data_kind(m),
            first_extra,
        );
        self.wake_on_notification(visible);
        true
    }

    /// A read's or RMW's timeout: unless answered, it finishes with a NULL
    /// response (later data for it is ignored).
    pub(super) fn read_timeout(&mut self, now: Ps, i: u32) -> bool {
        self.end_unanswered(now, i, false)
    }

    /// A message not completed `give_up_ns` after its issue is reported
    /// failed and no longer retried.
    pub(super) fn give_up(&mut self, now: Ps, i: u32) -> bool {
        self.end_unanswered(now, i, true)
    }

    fn end_unanswered(&mut self, now: Ps, i: u32, give_up: bool) -> bool {
        if self.ended[i as usize] {
            return false;
        }
        self.ended[i as usize] = true;
        if self.mirror_done(i as usize, now) {
            // Delivered by the other plane: its host is done with it.
        } else if give_up {
            self.records[i as usize].timed_out = true;
            self.totals.edm.faults.failed += 1;
        } else {
            self.records[i as usize].timed_out = true;
            self.totals.edm.faults.timed_out += 1;
        }
        let m = Msg::of(&self.msgs[i as usize]);
        self.release(now, i, m);
        if self.track_finish {
            self.finished(now, i);
        }
        true
    }

    /// Message `i` stops being active at its pair (once: a write's last
    /// grant may come twice, a timeout may follow it).
    pub(super) fn release(&mut self, now: Ps, i: u32, m: Msg) {
        if let Some(released) = self.released.get_mut(i as usize) {
            if *released {
                return;
            }
            *released = true;
        }
        self.deactivate(now, m);
    }

    /// Dual switch, second plane: whether the first plane delivered
    /// message `i` by `at` (its receiver keeps that copy).
    pub(super) fn mirror_done(&self, i: usize, at: Ps) -> bool {
        self.mirror
            .is_some_and(|done| done[i].is_some_and(|t| t <= at))
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
