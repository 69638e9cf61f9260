//! Faults in an EDM run (issue 25, paper §3.3; docs/faults.md §4): read
//! timeouts, bit errors, links and switches that fail, the BER monitor, the
//! dual switch, and the timers and idempotent retries that recover (the
//! receiver keeps a chunk's first intact copy). What a fault does to a unit
//! is decided here, seeded; the hosts and the switch call in from
//! `hosts.rs`, `switch.rs` and `sim.rs`.
//!
//! The error model: every bit of every block on every link flips
//! independently with probability `ber` (or, with `burst_bits`, in bursts at
//! the same bit rate), and the receiver's descrambler (x^58 + x^39 + 1)
//! triples each line error in a payload bit (copies at +0, +39, +58), so a
//! unit of n blocks is hit with probability 1-(1-ber)^(66n+58). A hit control
//! unit (/N/, /G/, a request, a forwarded request) is dropped by its receiver
//! (its CRC-8, the link's control sequence, docs/protocol.md §5a, or the
//! message CRC-32C); a hit data unit fails its CRC-32C and is discarded. A
//! hit unit passes undetected only with the rates of docs/protocol.md §5 and
//! §5a for the errors the descrambler leaves in it (`errors.rs`,
//! `Noise::escape`): never for up to 3 errors, so never for one line error.
//!
//! Here the configuration, the failure events and the counters;
//! `faults/errors.rs` draws the bit errors (and runs the BER monitor),
//! `faults/recovery.rs` holds the timers, retries and the receivers' first
//! copies (from either plane of the dual switch, `plane.rs`);
//! `faults/failover.rs` what a switch drops when it fails or sees a port
//! go down; `faults/outcome.rs` the write outcome (acknowledgements, the
//! requesters' retries; the /A/ senders' state is `faults/acks.rs`'s) and
//! `faults/dedup.rs` its bounded state (retry buffers, the memory nodes'
//! duplicate records).
use crate::time::Ps;

pub(super) mod acks;
pub(super) mod chunks;
pub(super) mod dedup;
pub mod errors;
mod failover;
pub(super) mod message_recovery;
mod outcome;
mod recovery;

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
    /// scheduler, in one run; the receiver keeps each chunk's first copy.
    pub dual_switch: bool,
    /// How long a host and its switch take to see their link go down or
    /// come back (their PHYs losing or regaining lock); from then on the
    /// switch refuses the demand for that port (or takes it again) and,
    /// with the dual switch, the host leaves that plane out of new
    /// messages (or mirrors again).
    pub link_detect_ns: u64,
    /// What recovers lost data (docs/faults.md §4).
    pub data_recovery: DataRecovery,
    /// The write outcome's bounds (docs/protocol.md §4b; spec defaults
    /// `RETRY_UNRESOLVED`, `DUP_WINDOW_IDS`, `DUP_RMW_RESULTS`): ids
    /// unresolved per pair, the memory node's window per source, RMW
    /// results kept per source. (Set apart from the spec only by tests
    /// that drive the window to its edge.)
    pub retry_unresolved: u32,
    pub dup_window: u32,
    pub dup_rmw_results: u32,
}

/// What the switch's chunk timer can see of a granted chunk's data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataRecovery {
    /// The protocol (docs/protocol.md §4b): the switch sees only its own
    /// ingress and grants a chunk again only if nothing of it reached the
    /// switch; end to end, the memory node acknowledges every write (/A/)
    /// and the requester sends a write again (same id) until acknowledged
    /// or reported failed; a read's dropped response is asked for again.
    /// The memory node's duplicate record is bounded, as the hardware's.
    Protocol,
    /// A bound, not a protocol: the switch's timer knows whether a copy of
    /// the chunk's data arrived intact at its destination and grants it
    /// again at once if not; writes finish when in memory; the duplicate
    /// record is exact.
    Ideal,
}

impl DataRecovery {
    pub fn from_name(name: &str) -> Option<DataRecovery> {
        match name {
            "protocol" => Some(DataRecovery::Protocol),
            "ideal" => Some(DataRecovery::Ideal),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            DataRecovery::Protocol => "protocol",
            DataRecovery::Ideal => "ideal",
        }
    }
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
            // The RTL's link guard takes a cut link down after 16 invalid
            // sync headers (41 ns at its 2.56 ns clock) and tells the
            // partner two flops later: 100 ns covers both.
            link_detect_ns: 100,
            data_recovery: DataRecovery::Protocol,
            retry_unresolved: edm_proto::spec::RETRY_UNRESOLVED,
            dup_window: edm_proto::spec::DUP_WINDOW_IDS,
            dup_rmw_results: edm_proto::spec::DUP_RMW_RESULTS,
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

    pub fn link_detect_ps(&self) -> Ps {
        self.link_detect_ns * 1000
    }

    /// Whether a switch may drop demand it holds (it fails, or sees a port
    /// down): then a requester's timer keeps looking at its message until
    /// it ends, and re-sends it where the demand was dropped.
    pub fn drops_demand(&self) -> bool {
        !self.failures.is_empty() || self.monitor_threshold > 0
    }

    /// Whether units can be lost and the switch's timer sees only what
    /// reached it (`DataRecovery::Protocol`): a write's data dropped after
    /// the switch is lost, a read's response re-requested by its requester.
    /// (Not without bit errors or failures: nothing is dropped then, the
    /// dual switch alone runs as before.)
    pub fn protocol_recovery(&self) -> bool {
        self.drops_units() && self.data_recovery == DataRecovery::Protocol
    }

    /// Whether a unit can be dropped: bit errors, links or switches that
    /// fail.
    pub fn drops_units(&self) -> bool {
        self.ber > 0.0 || !self.failures.is_empty()
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
    /// Chunks granted again: nothing of them reached the switch in time
    /// (`data_recovery = "protocol"`), or their data did not arrive intact
    /// at its destination in time (`"ideal"`).
    pub chunk_retries: u64,
    /// `data_recovery = "protocol"`: write data units dropped after the
    /// switch (on either link's errors, or into a link gone down): not
    /// written; their write is sent again when no /A/ comes.
    pub write_data_dropped: u64,
    /// Writes neither in memory nor reported failed at the end: lost
    /// unseen (target 0; the record's `lost`, -3 in Python).
    pub writes_lost: u64,
    /// Write outcome (`data_recovery = "protocol"`, docs/protocol.md §4b):
    /// /A/ blocks lost (on either link, every plane), writes sent again
    /// for want of an /A/, writes acknowledged, reported failed, reported
    /// failed though applied (outcome unknown to the host: target 0),
    /// neither at the end (target 0), and chunks applied twice (a copy
    /// whose 8-bit id was misread as new: target 0).
    pub acks_lost: u64,
    pub write_retries: u64,
    pub writes_acked: u64,
    pub writes_failed: u64,
    pub writes_failed_applied: u64,
    pub writes_unresolved: u64,
    pub writes_applied_twice: u64,
    /// The duplicate record: copies refused as stale (behind the window),
    /// stale copies that were a waiting message's first (target 0), the
    /// most ids a copy of an unresolved message arrived behind its
    /// source's newest (below the window), and the most unresolved ids a
    /// pair held (at most `retry_unresolved`).
    pub dup_stale_refused: u64,
    pub dup_first_copy_refused: u64,
    pub dup_span_max: u64,
    pub retry_buffer_max: u64,
    /// `data_recovery = "protocol"`: read and RMW response units dropped
    /// after the switch (their requester re-sends the request, or its
    /// timeout ends it).
    pub response_data_dropped: u64,
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
    /// Dual switch: data units discarded because the other plane's copy of
    /// their chunk arrived first.
    pub mirror_copies_discarded: u64,
    /// Dual switch: messages whose /N/ or request went on one plane only,
    /// their requester seeing its link to the other down (the RTL's
    /// `cnt_unmirrored`); lost if that plane fails too.
    pub unmirrored: u64,
    /// Notifications a switch dropped: all it held when it failed, and
    /// those to or from a port it saw down (held, or arriving then); their
    /// requesters re-send them as a lost /N/ (docs/faults.md §4).
    pub demand_dropped: u64,
    /// Second copies of an RMW request (the other plane's, or a retry's)
    /// its memory node recognised and answered with the first's result.
    pub rmw_replayed: u64,
    /// RMW copies its memory node refused (answered empty, not applied):
    /// stale, or applied with the result no longer kept (`faults/dedup.rs`).
    pub rmw_refused: u64,
    /// The most RMW results a memory node kept for one requester at once.
    pub rmw_results_kept_max: u64,
    /// RMWs applied again by a copy the memory node did not recognise,
    /// refused copies that were their waiting RMW's first, and copies of an
    /// RMW applied and still waited for whose result was gone (all: target 0).
    pub rmw_applied_twice: u64,
    pub rmw_first_copy_refused: u64,
    pub rmw_result_gone: u64,
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
