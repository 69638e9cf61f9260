//! EDM's configuration: its scheduler, host and switch rules, the pipeline's
//! step cycles (Table 1 constants from `edm_proto::spec`), and the parts it
//! composes (background frames, faults), each defined by its owner.
use crate::background::BackgroundConfig;
use crate::edm::faults::FaultConfig;
use crate::time::Ps;
use edm_proto::spec;

/// Notification-queue priority (§3.1.1 property 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Priority {
    /// Shortest remaining bytes first (heavy-tailed workloads).
    Srpt,
    /// Earliest notification first (light-tailed workloads).
    Fcfs,
    /// Least attained service first: the message granted the fewest chunks so
    /// far (ties: the earliest). Needs no size in advance; it shares a
    /// destination chunk by chunk among equal messages. Simulator only (the
    /// RTL scheduler has srpt and fcfs); the example of docs/architecture.md,
    /// "Add a priority".
    Las,
}

impl Priority {
    pub fn from_name(name: &str) -> Option<Priority> {
        match name {
            "srpt" => Some(Priority::Srpt),
            "fcfs" => Some(Priority::Fcfs),
            "las" => Some(Priority::Las),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Priority::Srpt => "srpt",
            Priority::Fcfs => "fcfs",
            Priority::Las => "las",
        }
    }
}

/// Which memory messages of one requester may overtake which.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryOrder {
    /// The paper's: the switch grants the messages of each data source and
    /// destination pair in notification order.
    Pair,
    /// EDM's memory-order rule (docs/protocol.md): a message waits only for
    /// earlier messages of its requester-memory pair whose byte ranges
    /// overlap it (one of the two a write or RMW), and for fences; the host
    /// holds it back until those have finished, and the switch grants
    /// without a per-pair FIFO.
    Address,
}

impl MemoryOrder {
    pub fn from_name(name: &str) -> Option<MemoryOrder> {
        match name {
            "pair" => Some(MemoryOrder::Pair),
            "address" => Some(MemoryOrder::Address),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            MemoryOrder::Pair => "pair",
            MemoryOrder::Address => "address",
        }
    }
}

#[derive(Clone, Debug)]
pub struct EdmConfig {
    pub chunk_bytes: u32,
    /// X: most active notifications per destination at a host.
    pub max_active_notifs: u32,
    pub priority: Priority,
    /// Most PIM iterations after a wake-up before the scheduler waits for the
    /// next change (0: iterate while any request was refused).
    pub max_iterations: u32,
    /// Priority hold factor (0: off, as in the paper); `Scheduler::hold_for_shorter`.
    pub priority_hold: u32,
    /// Egress feedback (off: the paper's scheduler): a data unit that starts
    /// on a switch egress later than its circuit was planned (behind /G/
    /// blocks or a forwarded RREQ on that link, or late from its source)
    /// holds the port's release back as long, so later circuits into it are
    /// granted that much later instead of queueing at the switch.
    pub egress_feedback: bool,
    /// Zero-queue rules (off: the paper's, where a /G/, /N/ or forwarded RREQ
    /// takes a block slot inside whatever unit is on the wire): the switch
    /// books every unit on its egresses ahead and sends a /G/ or forwarded
    /// RREQ only in a gap of the data it has granted into that port, moving
    /// the circuit it starts later if need be; a host sends its /N/ and
    /// requests only in gaps of its granted data, and starts data at least its
    /// longest request's wire time after the grant. Memory data then never
    /// waits at the switch (docs/simulator.md, "Zero-queue rules").
    pub zero_queue: bool,
    /// Start delays (with `zero_queue` only; off: the grant's slot must line
    /// up with its data): a /G/ or forwarded request tells its source to
    /// start the data up to 63 blocks later (`NG_DELAY_*`), so it may take any
    /// gap in that window before its data.
    pub start_delay: bool,
    /// Zero-queue rules: how far before its release a port may be granted
    /// (None: one circuit lag, half of one with start delays).
    pub early_grant_ps: Option<Ps>,
    /// Which messages of a requester may overtake which (the paper: per-pair FIFO).
    pub memory_order: MemoryOrder,
    /// Pipelined matching (off: the paper's, one 3-cycle iteration at a
    /// time): an iteration may start every scheduler cycle
    /// (`Scheduler::pipeline`).
    pub pipelined_matching: bool,
    /// Mega-message batching (0: off, the paper's evaluation): a host folds
    /// the writes of one requester-memory pair that wait behind its X active
    /// notifications into one /N/ of at most this many bytes (each write
    /// keeps its own header on the wire, counted in). Reads are not folded.
    pub batch_bytes: u32,
    /// Ethernet frames sharing every link (off by default).
    pub background: BackgroundConfig,
    /// Cycles of each step of the hosts' and the switch's pipelines.
    pub steps: StepCycles,
    /// Bit errors, timeouts and retries (off by default).
    pub faults: FaultConfig,
}

/// Cycles of each step of EDM's pipeline (§3.2, Table 1, Figure 5) that the
/// model uses: the paper's by default; `edm simulate --timing rtl` sets them
/// to our RTL's, measured by `edm rtl latency` (python/edm/sim/timing.py).
/// Several of the paper's steps appear only as sums in the model, so they are
/// one field each here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepCycles {
    /// Compute node: a request to its /N/ or RREQ on the line.
    pub gen_req: u32,
    /// Switch: a /N/ in to its notification visible to the scheduler
    /// (classify, insert).
    pub sw_notify: u32,
    /// Switch: the extra cycles an RREQ's implicit notification takes over a /N/.
    pub sw_request_extra: u32,
    /// Switch: a match to its /G/ (or forwarded request) leaving the switch.
    pub sw_gen_grant: u32,
    /// Switch: a data block in to out along its circuit.
    pub sw_forward: u32,
    /// Host: a /G/ in to its chunk's first block on the line (process the
    /// grant, read the data, generate).
    pub grant_to_data: u32,
    /// Memory node: the extra cycles a forwarded RREQ takes over a /G/,
    /// counted from the request's last block (the DRAM access, `dram_ps`,
    /// excluded); negative when the node starts on the request's first block.
    pub rreq_extra: i32,
    /// Compute node: a response's last block in to the read complete.
    pub proc_response: u32,
    /// Memory node: a write's last block in to the memory written.
    pub proc_write: u32,
}

impl Default for StepCycles {
    fn default() -> Self {
        use spec::*;
        StepCycles {
            gen_req: HOST_GEN_REQ_CYCLES,
            sw_notify: SW_CLASSIFY_CYCLES + SW_NQ_INSERT_CYCLES,
            sw_request_extra: 0,
            sw_gen_grant: SW_GEN_GRANT_CYCLES,
            sw_forward: SW_FORWARD_CYCLES,
            grant_to_data: HOST_PROC_GRANT_CYCLES + HOST_READ_GRANT_CYCLES + HOST_GEN_DATA_CYCLES,
            rreq_extra: HOST_PROC_RREQ_EXTRA_CYCLES as i32,
            proc_response: HOST_PROC_DATA_CYCLES,
            proc_write: HOST_PROC_DATA_CYCLES,
        }
    }
}

impl Default for EdmConfig {
    fn default() -> Self {
        EdmConfig {
            chunk_bytes: spec::DEFAULT_CHUNK_BYTES,
            max_active_notifs: spec::DEFAULT_MAX_ACTIVE_NOTIFS,
            priority: Priority::Srpt,
            max_iterations: 0,
            priority_hold: 0,
            egress_feedback: false,
            zero_queue: false,
            start_delay: false,
            early_grant_ps: None,
            memory_order: MemoryOrder::Pair,
            pipelined_matching: false,
            batch_bytes: 0,
            background: Default::default(),
            steps: StepCycles::default(),
            faults: Default::default(),
        }
    }
}

impl EdmConfig {
    /// The rules of the paper (§3.1) and its evaluation: what `Default` gives
    /// (Python's protocol "edm-paper").
    pub fn paper() -> Self {
        Self::default()
    }

    /// EDM's own rules (Python's protocol "edm", the default there): the
    /// paper's scheduler with zero switch queueing, the memory-order rule,
    /// pipelined matching and priority hold (docs/simulator.md, "EDM's
    /// rules and the paper's"; Python's `DEFAULTS` must agree, a test checks).
    pub fn edm_rules() -> Self {
        EdmConfig {
            zero_queue: true,
            start_delay: true,
            memory_order: MemoryOrder::Address,
            pipelined_matching: true,
            priority_hold: 2,
            ..Self::paper()
        }
    }
}
