//! Simulation configuration: the fabric, EDM's scheduler, and its defaults
//! (Table 1 constants from `edm_proto::spec`).
use crate::schema::RunConfig;
use edm_proto::spec;

/// Picoseconds: the simulator's exact unit of time.
pub type Ps = u64;

/// Notification-queue priority (§3.1.1 property 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Priority {
    /// Shortest remaining bytes first (heavy-tailed workloads).
    Srpt,
    /// Earliest notification first (light-tailed workloads).
    Fcfs,
}

impl Priority {
    pub fn from_name(name: &str) -> Option<Priority> {
        match name {
            "srpt" => Some(Priority::Srpt),
            "fcfs" => Some(Priority::Fcfs),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Priority::Srpt => "srpt",
            Priority::Fcfs => "fcfs",
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
pub struct FabricConfig {
    /// Hosts on the one switch.
    pub nodes: usize,
    /// 10, 25, 100 or 400.
    pub link_gbps: u32,
    /// Propagation per hop.
    pub prop_ps: Ps,
    /// PMA + PMD + transceiver, per traversal (twice per hop).
    pub phy_ps: Ps,
    /// PHY pipeline clock (Table 1's 2.56 ns).
    pub cycle_ps: Ps,
    /// Scheduler clock (default the PHY clock, as in the FPGA prototype; the
    /// paper's ASIC estimate is 3 GHz, 333 ps).
    pub scheduler_cycle_ps: Ps,
    /// DRAM access at the memory node (Table 1 excludes it; default 0).
    pub dram_ps: Ps,
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
    pub background: crate::background::BackgroundConfig,
    /// Bit errors, timeouts and retries (off by default).
    pub faults: crate::edm::faults::FaultConfig,
}

impl Default for FabricConfig {
    fn default() -> Self {
        FabricConfig {
            nodes: 144,
            link_gbps: 100,
            prop_ps: spec::PROP_PS,
            phy_ps: spec::PMA_PMD_XCVR_PS,
            cycle_ps: spec::CYCLE_PS,
            scheduler_cycle_ps: spec::CYCLE_PS,
            dram_ps: 0,
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

impl FabricConfig {
    /// Time of one 66-bit block on a link.
    pub fn block_ps(&self) -> Ps {
        spec::block_ps(self.link_gbps).expect("validated link rate")
    }

    pub fn cycles(&self, n: u32) -> Ps {
        n as Ps * self.cycle_ps
    }

    /// One link traversal's fixed delay for the first block: a PCS pass and a
    /// PHY at each end plus propagation (Table 1; serialization is added per block).
    pub fn hop_ps(&self) -> Ps {
        2 * self.cycles(spec::PCS_PASS_CYCLES) + 2 * self.phy_ps + self.prop_ps
    }

    /// Checked by the configuration schema (`crate::schema`), the one place
    /// configurations are validated.
    pub fn validate(&self) -> Result<(), String> {
        let run = RunConfig {
            fabric: self.clone(),
            ..RunConfig::default()
        };
        run.validate().map_err(|e| e.to_string())
    }
}

impl EdmConfig {
    /// Checked by the configuration schema (`crate::schema`).
    pub fn validate(&self) -> Result<(), String> {
        let run = RunConfig {
            edm: self.clone(),
            ..RunConfig::default()
        };
        run.validate().map_err(|e| e.to_string())
    }
}
