//! The simulator's configuration, defined once: every field a run takes —
//! its name, type, range, default, meaning and the protocols it applies to —
//! and the one place it is checked. Python (`edm._core.sim_schema`,
//! `edm.sim.config`), the `edm simulate` flags and docs/config.md are derived
//! from [`FIELDS`]; a field's value lives in the typed structs the engine
//! takes ([`FabricConfig`], [`EdmConfig`], [`BaselineParams`]) inside a
//! [`RunConfig`].
use crate::baselines::{baseline_with, BaselineParams, BASELINES};
use crate::config::FabricConfig;
use crate::edm::config::{EdmConfig, MemoryOrder, Priority};
use crate::edm::faults::format_failures;
use crate::edm::faults::DataRecovery;
use crate::edm::Edm;
use crate::engine::closed_loop::{ClosedLoopConfig, ClosedLoopRun, ComputeTime};
use crate::engine::ideal::{IdealFabric, IdealLatency};
use crate::engine::Protocol;
use crate::memory::placement::{PlacementConfig, Policy, POLICIES};
use crate::time::Ps;
use crate::workload::{MessageSpec, OpenLoop, Roles, SizeCdf};
use edm_proto::spec;
use std::fmt;

mod check;
mod rules;
mod run;
mod setting;
#[cfg(test)]
mod tests;

pub use check::ConfigError;
use check::{accept, name_list};
pub use setting::Setting;

/// EDM's two rule sets on its one model: "edm" (EDM's rules, the default)
/// and "edm-paper" (the paper's, fixed).
pub const EDM_PROTOCOLS: &[&str] = &["edm", "edm-paper"];

/// Every protocol a run may name: [`EDM_PROTOCOLS`], then the paper's
/// baselines in its order and the ideal reference `ideal-srpt` (together
/// [`BASELINES`], which the baselines name themselves).
pub const PROTOCOLS: &[&str] =
    &concat::<{ EDM_PROTOCOLS.len() + BASELINES.len() }>(EDM_PROTOCOLS, BASELINES);

const fn concat<const N: usize>(a: &[&'static str], b: &[&'static str]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < a.len() {
        out[i] = a[i];
        i += 1;
    }
    while i < N {
        out[i] = b[i - a.len()];
        i += 1;
    }
    out
}

/// Workloads the open-loop generator makes: fixed-size `micro`, then the
/// applications whose size CDFs ship in crates/edm-sim/workloads ([`crate::workload::APP_CDFS`]).
pub const GENERATED_WORKLOADS: &[&str] = &[
    "micro",
    "hadoop",
    "spark",
    "sparksql",
    "graphlab",
    "memcached",
];

/// What a workload names: a generated workload ([`GENERATED_WORKLOADS`]), a
/// size-CDF file (the applications' format: three columns a line; sampled by
/// the open-loop generator) or a trace file (seven columns a line; its
/// messages run as given). docs/workloads.md has both formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkloadKind {
    Named,
    CdfFile,
    TraceFile,
}

impl WorkloadKind {
    /// The kind of `workload`: a file's first line that is neither blank nor
    /// a comment (`#`) decides; anything unreadable counts as a trace (whose
    /// reader then says what is wrong).
    pub fn of(workload: &str) -> Self {
        use std::io::BufRead;
        if GENERATED_WORKLOADS.contains(&workload) {
            return WorkloadKind::Named;
        }
        let first = std::fs::File::open(workload).ok().and_then(|f| {
            std::io::BufReader::new(f)
                .lines()
                .map_while(Result::ok)
                .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        });
        match first {
            Some(line) if line.split_whitespace().count() == 3 => WorkloadKind::CdfFile,
            _ => WorkloadKind::TraceFile,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::Named => "named",
            WorkloadKind::CdfFile => "cdf",
            WorkloadKind::TraceFile => "trace",
        }
    }
}

/// Application CDF sizes are in packets of this many bytes.
pub const CDF_UNIT_BYTES: u32 = 1460;

/// Most messages in one run: past it a typo would abort the process on allocation.
pub const MAX_MESSAGES: usize = 100_000_000;

/// A field's value, as a configuration file or Python gives it.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Int(i128),
    Float(f64),
    Text(String),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x:?}"),
            Value::Text(s) => write!(f, "'{s}'"),
        }
    }
}

/// What values a field takes.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// An integer in `min..=max`; with `or_zero`, also 0 (off, or the protocol's own default).
    Int { min: i128, max: i128, or_zero: bool },
    /// One of these integers.
    IntOf(&'static [i128]),
    /// 0 (off) or 1 (on).
    Flag,
    /// A number from `min` to `max`, each end included unless open.
    Float {
        min: f64,
        max: f64,
        open_min: bool,
        open_max: bool,
    },
    /// One of these names.
    Choice(&'static [&'static str]),
    /// A generated workload's name, or a size-CDF or trace file's path.
    Workload,
    /// Failure events (`Failure::parse_list`).
    Failures,
}

/// Which protocols a field applies to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scope {
    /// Every protocol.
    All,
    /// EDM's model ("edm" and "edm-paper"); the baselines ignore it.
    Edm,
    /// EDM's model only: any other protocol refuses a value but the default.
    EdmOnly,
    /// A lever of EDM's rules: set freely with "edm"; fixed at the paper's
    /// value with "edm-paper" and recorded so for the baselines.
    Rule,
    /// These baselines; the others ignore it (so one grid can span them all).
    Baselines(&'static [&'static str]),
}

impl Scope {
    /// Its name in lower case (Python's `scope` of a field).
    pub fn name(&self) -> &'static str {
        match self {
            Scope::All => "all",
            Scope::Edm => "edm",
            Scope::EdmOnly => "edmonly",
            Scope::Rule => "rule",
            Scope::Baselines(_) => "baselines",
        }
    }

    /// The protocols the field applies to.
    pub fn protocols(&self) -> Vec<&'static str> {
        match self {
            Scope::All => PROTOCOLS.to_vec(),
            Scope::Edm | Scope::EdmOnly => EDM_PROTOCOLS.to_vec(),
            Scope::Rule => vec!["edm"],
            Scope::Baselines(names) => names.to_vec(),
        }
    }
}

/// One configuration field.
pub struct Field {
    pub name: &'static str,
    pub kind: Kind,
    pub scope: Scope,
    pub doc: &'static str,
    pub get: fn(&RunConfig) -> Value,
    set: fn(&mut RunConfig, &Value),
}

// The enums of choice fields as values (plain values: schema/setting.rs).
impl Setting for Priority {
    fn to_value(&self) -> Value {
        Value::Text(self.name().into())
    }
    fn from_value(v: &Value) -> Self {
        Priority::from_name(&String::from_value(v)).expect("kind-checked")
    }
}

impl Setting for MemoryOrder {
    fn to_value(&self) -> Value {
        Value::Text(self.name().into())
    }
    fn from_value(v: &Value) -> Self {
        MemoryOrder::from_name(&String::from_value(v)).expect("kind-checked")
    }
}

impl Setting for DataRecovery {
    fn to_value(&self) -> Value {
        Value::Text(self.name().into())
    }
    fn from_value(v: &Value) -> Self {
        DataRecovery::from_name(&String::from_value(v)).expect("kind-checked")
    }
}

impl Setting for Policy {
    fn to_value(&self) -> Value {
        Value::Text(self.name().into())
    }
    fn from_value(v: &Value) -> Self {
        Policy::from_name(&String::from_value(v)).expect("kind-checked")
    }
}

impl Setting for ComputeTime {
    fn to_value(&self) -> Value {
        Value::Text(self.name().into())
    }
    fn from_value(v: &Value) -> Self {
        ComputeTime::from_name(&String::from_value(v)).expect("kind-checked")
    }
}

/// The ideal fabric a run may take instead of its protocol's (engine/ideal.rs).
#[derive(Clone, Debug, PartialEq)]
pub struct IdealConfig {
    /// "off", "unloaded" or "fixed" (the `ideal_fabric` field).
    pub mode: String,
    pub latency_ns: f64,
    /// 0: no serialization.
    pub gbps: f64,
}

impl Default for IdealConfig {
    fn default() -> Self {
        IdealConfig {
            mode: "off".into(),
            latency_ns: 0.0,
            gbps: 0.0,
        }
    }
}

/// One run: what it simulates and on what.
#[derive(Clone, Debug)]
pub struct RunConfig {
    pub protocol: String,
    pub workload: String,
    pub memory_nodes: usize,
    pub load: f64,
    pub write_ratio: f64,
    pub message_bytes: u32,
    pub messages: usize,
    pub seed: u64,
    pub warmup_fraction: f64,
    pub address_space_bytes: u64,
    pub fabric: FabricConfig,
    pub edm: EdmConfig,
    pub baselines: BaselineParams,
    pub closed_loop: ClosedLoopConfig,
    pub ideal: IdealConfig,
    /// The rack memory manager's placement of regions (off: uniform).
    pub placement: PlacementConfig,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            protocol: "edm".into(),
            workload: "micro".into(),
            memory_nodes: 0,
            load: 0.5,
            write_ratio: 0.5,
            message_bytes: 64,
            messages: 100_000,
            seed: 1,
            warmup_fraction: 0.0,
            address_space_bytes: 1 << 30,
            fabric: FabricConfig::default(),
            edm: EdmConfig::edm_rules(),
            baselines: BaselineParams::default(),
            closed_loop: ClosedLoopConfig::default(),
            ideal: IdealConfig::default(),
            placement: PlacementConfig::default(),
        }
    }
}

impl RunConfig {
    /// The defaults with the paper's rules (protocol "edm-paper").
    pub fn paper() -> Self {
        RunConfig {
            protocol: "edm-paper".into(),
            edm: EdmConfig::paper(),
            ..RunConfig::default()
        }
    }
}

impl Field {
    /// A rule lever's value under the paper's rules (None for other fields).
    pub fn paper_value(&self) -> Option<Value> {
        (self.scope == Scope::Rule).then(|| (self.get)(&RunConfig::paper()))
    }
}

macro_rules! fields {
    ($( $name:ident : $kind:expr, $scope:expr, $doc:literal => $($path:ident).+ ;)*) => {
        /// Every field, in the order files, flags and docs list them.
        pub static FIELDS: &[Field] = &[$(
            Field {
                name: stringify!($name),
                kind: $kind,
                scope: $scope,
                doc: $doc,
                get: |c| Setting::to_value(&c.$($path).+),
                set: |c, v| c.$($path).+ = Setting::from_value(v),
            },
        )*];
    };
}

const fn int(min: i128, max: i128) -> Kind {
    Kind::Int {
        min,
        max,
        or_zero: false,
    }
}
/// 0 keeps the protocol's own default; else at least `min`.
const fn override_of(min: i128, max: i128) -> Kind {
    Kind::Int {
        min,
        max,
        or_zero: true,
    }
}
const fn real(min: f64, max: f64, open_min: bool, open_max: bool) -> Kind {
    Kind::Float {
        min,
        max,
        open_min,
        open_max,
    }
}
const U32: i128 = u32::MAX as i128;
const U64: i128 = u64::MAX as i128;
const PORTS: i128 = spec::MAX_PORTS as i128;
const MESSAGE_BYTES: i128 = spec::MAX_MESSAGE_BYTES as i128;
const DCTCP: Scope = Scope::Baselines(&["dctcp"]);
const DCQCN: Scope = Scope::Baselines(&["pfc_dcqcn"]);

fields! {
    protocol: Kind::Choice(PROTOCOLS), Scope::All,
        "edm (EDM's rules), edm-paper (the paper's), a baseline or ideal-srpt (pFabric's Ideal: central preemptive SRPT, no control)" => protocol;
    nodes: int(2, PORTS), Scope::All, "hosts on the one switch" => fabric.nodes;
    memory_nodes: int(0, PORTS - 1), Scope::All,
        "0: every node is compute and memory (all-to-all); else the last this many nodes serve" => memory_nodes;
    link_gbps: Kind::IntOf(&[10, 25, 100, 400]), Scope::All, "link rate, Gb/s" => fabric.link_gbps;
    workload: Kind::Workload, Scope::All,
        "micro, an application (hadoop, spark, sparksql, graphlab, memcached), a size-CDF file or a trace file (docs/workloads.md)" => workload;
    load: real(0.0, 1.5, true, false), Scope::All,
        "memory payload per compute node, fraction of its link rate (generated workloads)" => load;
    write_ratio: real(0.0, 1.0, false, false), Scope::All,
        "fraction of generated messages that are writes" => write_ratio;
    message_bytes: int(1, MESSAGE_BYTES), Scope::All, "size of every micro message" => message_bytes;
    messages: int(1, MAX_MESSAGES as i128), Scope::All, "messages a generated workload issues" => messages;
    seed: int(0, U64), Scope::All, "every random choice of the run (workload, addresses, frames)" => seed;
    warmup_fraction: real(0.0, 1.0, false, true), Scope::All,
        "leading fraction of messages left out of the statistics" => warmup_fraction;
    chunk_bytes: int(1, MESSAGE_BYTES), Scope::Edm, "bytes one grant allows" => edm.chunk_bytes;
    max_active_notifs: int(1, 255), Scope::Edm, "X: most active notifications per destination at a host" => edm.max_active_notifs;
    priority: Kind::Choice(&["srpt", "fcfs", "las"]), Scope::Edm,
        "notification priority: shortest remaining first, first come, or least attained service (chunks granted)" => edm.priority;
    max_iterations: int(0, U32), Scope::Edm,
        "most PIM iterations after a wake-up (0: while any request was refused)" => edm.max_iterations;
    memory_order: Kind::Choice(&["pair", "address"]), Scope::Rule,
        "pair: per-pair FIFO (the paper); address: only overlapping messages keep their order" => edm.memory_order;
    pipelined_matching: Kind::Flag, Scope::Rule,
        "0: one 3-cycle PIM iteration at a time (the paper); 1: a new one every scheduler cycle" => edm.pipelined_matching;
    batch_bytes: override_of(64, 1 << 24), Scope::Rule,
        "0: off; B: fold a pair's waiting writes into one /N/ of at most B bytes" => edm.batch_bytes;
    priority_hold: int(0, 1_000_000), Scope::Rule,
        "0: the paper's PIM; k: wait for a k-times shorter message's busy source" => edm.priority_hold;
    zero_queue: Kind::Flag, Scope::Rule,
        "1: /G/, /N/ and requests only in gaps of booked data (no switch queueing)" => edm.zero_queue;
    start_delay: Kind::Flag, Scope::Rule,
        "1 (zero_queue only): grants carry a start delay of up to 63 blocks (default: on with zero_queue)" => edm.start_delay;
    egress_feedback: Kind::Flag, Scope::Rule,
        "1: late circuits hold their port's release back (not with zero_queue)" => edm.egress_feedback;
    address_space_bytes: int(64, 1 << 62), Scope::All,
        "bytes per memory node that messages' addresses are drawn from" => address_space_bytes;
    early_grant_ps: int(-1, 10_000_000), Scope::Edm,
        "zero-queue rules: how early a port may be granted, ps (-1: a circuit lag, half with start delays)" => edm.early_grant_ps;
    background_load: real(0.0, 1.0, false, true), Scope::EdmOnly,
        "Ethernet frames on every link, fraction of its rate" => edm.background.load;
    background_frame_bytes: int(64, 9216), Scope::Edm, "size of a background frame" => edm.background.frame_bytes;
    background_preemption: Kind::Flag, Scope::Edm,
        "1: EDM preempts frames between blocks; 0: memory waits for the frame" => edm.background.preemption;
    switch_buffer_bytes: override_of(0, U64), Scope::Baselines(&["dctcp", "pfabric", "pfc_dcqcn"]),
        "per-egress buffer (200 KB; pFabric 2 BDP; at least two MTU frames)" => baselines.switch_buffer_bytes;
    dctcp_k_bytes: override_of(0, U64), DCTCP, "ECN marking threshold K (BDP/7)" => baselines.dctcp_k_bytes;
    dctcp_init_cwnd: override_of(0, U64), DCTCP, "initial window, packets (10)" => baselines.dctcp_init_cwnd;
    dctcp_ack_every: override_of(0, U32), DCTCP,
        "one ACK per this many packets (1; more = delayed ACKs)" => baselines.dctcp_ack_every;
    pfabric_window_packets: override_of(0, U64), Scope::Baselines(&["pfabric"]),
        "fixed window, packets (1 BDP)" => baselines.pfabric_window_packets;
    dcqcn_kmin_bytes: override_of(0, U64), DCQCN, "RED marking Kmin (5 KB; at most Kmax)" => baselines.dcqcn_kmin_bytes;
    dcqcn_kmax_bytes: override_of(0, U64), DCQCN, "RED marking Kmax (200 KB)" => baselines.dcqcn_kmax_bytes;
    dcqcn_pmax: real(0.0, 1.0, false, false), DCQCN,
        "RED marking probability at Kmax (0.01)" => baselines.dcqcn_pmax;
    pfc_xoff_bytes: override_of(0, U64), DCQCN,
        "per-ingress PFC Xoff, Xon two MTUs below (64 KB; at least three MTU frames)" => baselines.pfc_xoff_bytes;
    cxl_credits: override_of(0, U32), Scope::Baselines(&["cxl"]), "flit credits per switch ingress (64)" => baselines.cxl_credits;
    ird_window_bytes: override_of(0, U64), Scope::Baselines(&["ird"]),
        "granted-but-unreceived bytes per flow (1 BDP)" => baselines.ird_window_bytes;
    prop_ps: int(0, U64), Scope::All, "propagation per hop, ps" => fabric.prop_ps;
    phy_ps: int(0, U64), Scope::All, "PMA + PMD + transceiver per traversal, ps" => fabric.phy_ps;
    fec_ps: int(0, U64), Scope::All,
        "FEC encode + decode per link traversal, ps (0: none, the paper's; 100000: RS-FEC at 100 Gb/s)" => fabric.fec_ps;
    cycle_ps: int(1, U64), Scope::All, "PHY pipeline clock period, ps" => fabric.cycle_ps;
    scheduler_cycle_ps: int(1, U64), Scope::All,
        "switch scheduler clock period, ps (the PHY's, as in the FPGA prototype)" => fabric.scheduler_cycle_ps;
    scheduler_registered_tree: Kind::Flag, Scope::Edm,
        "1: the scheduler's request tree registered a level per cycle, an iteration of ceil(log4 nodes) + 3 cycles (0: 3, the paper's)" => fabric.scheduler_registered_tree;
    dram_ps: int(0, U64), Scope::All, "DRAM access at the memory node, ps (Table 1 excludes it)" => fabric.dram_ps;
    pcs_pass_cycles: int(0, 64), Scope::All,
        "PCS cycles per link end (the paper's 2; `--timing rtl`: our RTL's)" => fabric.pcs_pass_cycles;
    gen_req_cycles: int(0, 1024), Scope::Edm, "compute node: a request to its /N/ or RREQ on the line" => edm.steps.gen_req;
    sw_notify_cycles: int(0, 1024), Scope::Edm,
        "switch: a /N/ in to its notification visible to the scheduler" => edm.steps.sw_notify;
    sw_request_extra_cycles: int(0, 1024), Scope::Edm,
        "switch: what an RREQ's implicit notification takes more than a /N/" => edm.steps.sw_request_extra;
    sw_gen_grant_cycles: int(0, 1024), Scope::Edm,
        "switch: a match to its /G/ or forwarded request leaving" => edm.steps.sw_gen_grant;
    sw_forward_cycles: int(0, 1024), Scope::Edm, "switch: a data block in to out along its circuit" => edm.steps.sw_forward;
    grant_to_data_cycles: int(0, 1024), Scope::Edm,
        "host: a /G/ in to its chunk's first block on the line" => edm.steps.grant_to_data;
    rreq_extra_cycles: int(-1024, 1024), Scope::Edm,
        "memory node: what a forwarded RREQ takes more than a /G/, from its last block (DRAM excluded)"
        => edm.steps.rreq_extra;
    proc_response_cycles: int(0, 1024), Scope::Edm,
        "compute node: a response's last block in to the read complete" => edm.steps.proc_response;
    proc_write_cycles: int(0, 1024), Scope::Edm,
        "memory node: a write's last block in to the memory written" => edm.steps.proc_write;
    read_timeout_ns: int(0, U32), Scope::EdmOnly,
        "0: never (the RTL's cfg_timeout = 0); T: a read or RMW unanswered T ns after its request finishes with a NULL response" => edm.faults.read_timeout_ns;
    ber: real(0.0, 0.01, false, false), Scope::EdmOnly,
        "bit-error rate of every link; hit units are dropped by their receiver and recovered by retries as far as data_recovery says (memory_order = address, no batching)" => edm.faults.ber;
    retry_timeout_ns: int(1, U32), Scope::EdmOnly,
        "with ber > 0: a host re-sends an ungranted /N/ or request, the switch re-grants a chunk nothing of which reached it (data_recovery = ideal: whose data did not arrive intact), after this many ns" => edm.faults.retry_timeout_ns;
    data_recovery: Kind::Choice(&["protocol", "ideal"]), Scope::EdmOnly,
        "with ber or failures: protocol: every write acknowledged (/A/) or sent again with its id until acknowledged or reported failed (docs/protocol.md 4b), a dropped response re-requested, a bounded duplicate record; ideal: a bound, the switch's timer knows whether the data arrived intact" => edm.faults.data_recovery;
    failures: Kind::Failures, Scope::EdmOnly,
        "links or switches down at a time, e.g. 'switch:0@20000,link:3@5000-9000' (ns; plane 1 with dual_switch); '/BER' after the times: noisy instead of down" => edm.faults.failures;
    give_up_ns: int(0, U64), Scope::EdmOnly,
        "with ber, failures or dual_switch: a message not completed this many ns after issue is reported failed (0: never)" => edm.faults.give_up_ns;
    ber_monitor_threshold: int(0, U32), Scope::EdmOnly,
        "0: off; k: a link dropping k units for bit errors within ber_monitor_window_ns is disabled" => edm.faults.monitor_threshold;
    ber_monitor_window_ns: int(1, U64), Scope::EdmOnly, "the BER monitor's window (802.3: 125 us)" => edm.faults.monitor_window_ns;
    dual_switch: Kind::Flag, Scope::EdmOnly,
        "1: every host mirrors its memory messages on two switch planes; the receiver keeps the first copy" => edm.faults.dual_switch;
    // A host leaves a plane whose link it sees down out of new messages
    // (the RTL's edm_mirror on plane_down), after its PHY's detection time.
    link_detect_ns: int(0, U32), Scope::EdmOnly,
        "a host and its switch see their link down (or back) this many ns after it fails (or returns): the switch refuses the demand for that port meanwhile; with dual_switch the host sends new messages on the other plane only (or mirrors again)" => edm.faults.link_detect_ns;
    ber_burst_bits: int(0, 4096), Scope::EdmOnly,
        "0 or 1: independent bit errors; L: errors come in bursts of L bits (first and last flipped), at ber / L bursts per bit" => edm.faults.burst_bits;
    // Closed-loop applications (Gao et al., issue #24; engine/closed_loop.rs)
    // and the ideal fabric they are measured against (engine/ideal.rs).
    closed_loop_threads: int(0, 4096), Scope::All,
        "0: open loop (issue times from load); T: every compute node runs T threads that compute, issue one message, wait for it and go on (load unused)" => closed_loop.threads;
    compute_ns: real(0.0, 1e12, false, false), Scope::All,
        "closed loop: mean compute time before each message, ns" => closed_loop.compute_ns;
    compute_distribution: Kind::Choice(&["fixed", "exponential"]), Scope::All,
        "closed loop: compute times all the mean, or exponential about it (from the seed)" => closed_loop.compute;
    ideal_fabric: Kind::Choice(&["off", "unloaded", "fixed"]), Scope::All,
        "off: the protocol's fabric; unloaded: no queueing, each message takes its latency alone under the protocol; fixed: ideal_latency_ns plus its payload at ideal_gbps" => ideal.mode;
    ideal_latency_ns: real(0.0, 1e9, false, false), Scope::All,
        "ideal_fabric = fixed: every message's latency before its payload, ns" => ideal.latency_ns;
    ideal_gbps: real(0.0, 1e6, false, false), Scope::All,
        "ideal_fabric = fixed: the rate its payload is serialized at, Gb/s (0: no serialization)" => ideal.gbps;
    // Rack memory pools (Puri, issue #24; docs/related.md): the DRAM model at
    // memory nodes (DDR4-3200AA defaults) and the memory manager's placement.
    dram_channels: override_of(1, 64), Scope::All,
        "0: memory answers dram_ps after a request, unlimited bandwidth; C: a DDR4 model of C channels per memory node" => fabric.dram.channels;
    dram_banks: int(1, 1024), Scope::All, "DRAM model: banks per channel (closed page)" => fabric.dram.banks;
    dram_trcd_ps: int(1, 1_000_000), Scope::All, "DRAM model: activate to column command, ps (tRCD)" => fabric.dram.trcd_ps;
    dram_tcl_ps: int(1, 1_000_000), Scope::All, "DRAM model: column command to data, ps (tCL)" => fabric.dram.tcl_ps;
    dram_trp_ps: int(1, 1_000_000), Scope::All, "DRAM model: precharge, ps (tRP)" => fabric.dram.trp_ps;
    dram_tras_ps: int(1, 1_000_000), Scope::All, "DRAM model: activate to precharge at least, ps (tRAS)" => fabric.dram.tras_ps;
    dram_tburst_ps: int(1, 1_000_000), Scope::All, "DRAM model: one 64-byte burst on a channel's bus, ps" => fabric.dram.tburst_ps;
    placement: Kind::Choice(POLICIES), Scope::All,
        "uniform: each message to a uniformly drawn memory node; else regions placed by random, round-robin or smart-idle (Puri)" => placement.policy;
    placement_regions: int(1, 65_536), Scope::All, "placement: regions each compute node touches" => placement.regions_per_node;
    placement_region_bytes: int(64, 1 << 40), Scope::All, "placement: bytes of one region (Puri: 4 MB)" => placement.region_bytes;
    placement_skew: real(0.0, 8.0, false, false), Scope::All,
        "placement: Zipf exponent of a node's region popularity (0: all alike)" => placement.skew;
    // ---- Clio (issue 24): address translation at the memory node; off by default ----
    translate_hit_ps: int(0, U64), Scope::All,
        "Clio: a read's translation at the memory node on a TLB hit, ps (0 with translate_miss_ps 0: none)" => fabric.translate.hit_ps;
    translate_miss_ps: int(0, U64), Scope::All,
        "Clio: a read's translation on a TLB miss (one page-table bucket read), ps; EDM's switch plans every read for the larger of the two" => fabric.translate.miss_ps;
    tlb_hit_rate: real(0.0, 1.0, false, false), Scope::All,
        "Clio: share of reads whose translation hits the TLB, drawn per request from translate_seed" => fabric.translate.hit_rate;
    translate_seed: int(0, U64), Scope::All, "Clio: seed of the TLB hits and misses" => fabric.translate.seed;
    // ---- protection (Clio, issue 24): mappings per compute node, checked at the memory node; off by default ----
    protection: Kind::Flag, Scope::All,
        "Clio: 1: memory nodes serve only accesses inside the requester's mappings (a denied read or RMW gets an empty response, a denied write is dropped); generated addresses are aimed into the mappings" => fabric.protection.enabled;
    protection_outside: real(0.0, 1.0, false, false), Scope::All,
        "protection: share of messages aimed at an access the memory node denies (no mapping, a write to a read-only page, across a page)" => fabric.protection.outside;
    protection_regions: int(1, 256), Scope::All,
        "protection: regions (1 to 8 pages each) every compute node maps on every memory node" => fabric.protection.regions;
    protection_page_bits: int(12, 30), Scope::All,
        "protection: log2 of the page size (21: 2 MiB); a message longer than a page is refused" => fabric.protection.page_bits;
    protection_read_only: real(0.0, 1.0, false, false), Scope::All,
        "protection: share of regions (besides each space's first) mapped read-only" => fabric.protection.read_only;
    protection_seed: int(0, U64), Scope::All, "protection: seed of the mappings and of the addresses aimed into them" => fabric.protection.seed;
}

/// The field called `name`.
pub fn field(name: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.name == name)
}

impl RunConfig {
    /// The configuration `given` names (every other field at its default),
    /// checked: the one place a configuration is validated.
    pub fn resolve(given: &[(String, Value)]) -> Result<RunConfig, ConfigError> {
        let mut unknown: Vec<&str> = given
            .iter()
            .map(|(k, _)| k.as_str())
            .filter(|k| field(k).is_none())
            .collect();
        if !unknown.is_empty() {
            unknown.sort_unstable();
            let mut known: Vec<&str> = FIELDS.iter().map(|f| f.name).collect();
            known.sort_unstable();
            return Err(ConfigError {
                field: None,
                value: None,
                why: format!(
                    "unknown field(s) {}; known: {}",
                    name_list(&unknown),
                    name_list(&known)
                ),
            });
        }
        let given_value = |name: &str| given.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v);
        let mut c = RunConfig::default();
        if let Some(v) = given_value("protocol") {
            (field("protocol").unwrap().set)(&mut c, &accept(field("protocol").unwrap(), v)?);
        }
        if c.protocol != "edm" {
            c.take_the_papers_rules(given)?;
        }
        for f in FIELDS {
            if let Some(v) = given_value(f.name) {
                (f.set)(&mut c, &accept(f, v)?);
            }
        }
        if given_value("start_delay").is_none() && !c.edm.zero_queue {
            c.edm.start_delay = false; // a part of the zero-queue rules: off with them
        }
        c.edm.background.seed = c.seed;
        c.edm.faults.seed = c.seed;
        c.check_together()?;
        Ok(c)
    }

    /// The paper's values of EDM's rule levers; "edm-paper" refuses others,
    /// and so do the baselines, for which the levers mean nothing.
    fn take_the_papers_rules(&mut self, given: &[(String, Value)]) -> Result<(), ConfigError> {
        let paper = RunConfig::paper();
        let rules: Vec<&Field> = FIELDS.iter().filter(|f| f.scope == Scope::Rule).collect();
        let mut changed: Vec<&str> = rules
            .iter()
            .filter(|f| {
                given
                    .iter()
                    .any(|(k, v)| k == f.name && f.kind.accept(v) != Ok((f.get)(&paper)))
            })
            .map(|f| f.name)
            .collect();
        changed.sort_unstable();
        changed.dedup();
        if let Some(&first) = changed.first() {
            let first = field(first).unwrap().name;
            let why = if self.protocol == "edm-paper" {
                let values: Vec<String> = rules
                    .iter()
                    .map(|f| format!("{} = {}", f.name, (f.get)(&paper)))
                    .collect();
                format!(
                    "field(s) {} cannot be changed with protocol 'edm-paper' (the paper's rules: {}); \
                     use protocol 'edm' to vary them",
                    name_list(&changed),
                    values.join(", ")
                )
            } else {
                format!(
                    "field(s) {} apply to EDM only, not '{}'",
                    name_list(&changed),
                    self.protocol
                )
            };
            return Err(ConfigError::about(first, why));
        }
        for f in rules {
            (f.set)(self, &(f.get)(&paper));
        }
        Ok(())
    }

    /// Every field's value against its kind, then the rules that tie fields
    /// together (a configuration built in Rust rather than resolved).
    pub fn validate(&self) -> Result<(), ConfigError> {
        for f in FIELDS {
            accept(f, &(f.get)(self))?;
        }
        self.check_together()
    }

    /// Baseline overrides alone (every other field at its default), checked.
    pub fn validate_baselines(baselines: &BaselineParams) -> Result<(), String> {
        let run = RunConfig {
            baselines: baselines.clone(),
            ..Default::default()
        };
        run.validate().map_err(|e| e.to_string())
    }

    /// An open-loop workload's parameters, checked as the run that would
    /// generate it.
    pub fn validate_open_loop(w: &OpenLoop) -> Result<(), String> {
        let mut run = RunConfig {
            memory_nodes: match w.roles {
                Roles::AllToAll => 0,
                Roles::Split { memory } => memory,
            },
            load: w.load,
            write_ratio: w.write_ratio,
            messages: w.messages,
            seed: w.seed,
            ..Default::default()
        };
        run.fabric.nodes = w.nodes;
        run.fabric.link_gbps = w.link_gbps;
        if let Roles::Split { memory: 0 } = w.roles {
            return Err(
                "memory_nodes: a split of compute and memory nodes needs at least one memory node"
                    .into(),
            );
        }
        run.validate().map_err(|e| e.to_string())
    }

    /// Every field's value, in [`FIELDS`] order.
    pub fn values(&self) -> Vec<(&'static str, Value)> {
        FIELDS.iter().map(|f| (f.name, (f.get)(self))).collect()
    }
}
