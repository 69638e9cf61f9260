//! EDM (§3): hosts notify, the switch's priority-PIM scheduler grants chunks,
//! granted data follows a virtual circuit. Latencies per step are Table 1's
//! cycle counts (`edm_proto::spec`), so one message alone costs exactly the
//! Table 1 budget plus the serialization of its blocks (see `alone_ps`).
//!
//! The rooms: `sim.rs` (one run: state, event handling, links), `units.rs`
//! (messages, units and events as they travel), `hosts.rs` (when a
//! message may go, what hosts do), `switch.rs` (notifications, the
//! scheduler's iterations, grants), `scheduler/` (the priority-PIM matcher
//! the RTL is checked against), `placement.rs` (zero-queue mode: timelines
//! and where circuits go), `plane.rs` (a switch plane: its links, switch and
//! scheduler; two with the dual switch), `link.rs` (a link with /N/ and /G/ insertion),
//! `config.rs` (EDM's configuration), `alone.rs` (a message's latency alone, in closed form), `faults.rs` and
//! `faults/` (bit errors, read timeouts, and the timers and retries that
//! recover).
mod alone;
pub mod config;
pub mod faults;
mod hosts;
pub mod link;
pub mod placement;
mod plane;
pub mod scheduler;
mod sim;
mod switch;
mod units;

use crate::background::{FrameStats, FrameStream};
use crate::config::FabricConfig;
use crate::edm::config::EdmConfig;
use crate::engine::{closed_loop::ClosedLoop, Outcome, Progress, Protocol, Totals};
use crate::time::Ps;
use crate::workload::{MessageSpec, Op};
use edm_proto::message::{message_blocks, Kind};
use edm_proto::spec::*;
use link::Link;
use sim::Sim;
use std::sync::LazyLock;
use units::Msg;

/// What a unit on a link is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnitKind {
    /// /N/ for a write.
    Notify,
    /// An RREQ or RMWREQ from the requester (the implicit notification).
    Request,
    /// /G/ to a data source.
    Grant,
    /// The RREQ/RMWREQ forwarded to the memory node: the response's first grant.
    ForwardedRequest,
    /// One chunk of WREQ or RRES data.
    Data,
}

/// What EDM counts in a run besides the engine's totals.
#[derive(Clone, Debug, Default)]
pub struct EdmCounters {
    /// Data units that found another data unit still being sent at their switch
    /// egress (two circuits overlapping): the scheduler must keep this at 0.
    pub switch_data_conflicts: u64,
    /// Zero-queue mode: longest wait of a /G/ or forwarded request at a
    /// switch egress for a gap (beyond when it was generated), and of a
    /// host's /N/ or request for a gap in its granted data.
    pub max_grant_wait_ps: Ps,
    pub max_request_wait_ps: Ps,
    pub max_notification_queue: usize,
    pub scheduler_iterations: u64,
    /// Background Ethernet frames (with `background.load` > 0).
    pub frames: FrameStats,
    /// What faults did (`EdmConfig::faults`).
    pub faults: faults::FaultCounters,
}

impl Totals {
    /// EDM's counters of this run (all 0 for another protocol's run).
    pub fn edm(&self) -> &EdmCounters {
        static NONE: LazyLock<EdmCounters> = LazyLock::new(EdmCounters::default);
        self.counters().unwrap_or(&NONE)
    }
}

/// One unit on one link, as [`Edm::run_traced`] records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmission {
    /// The host whose link it is: its uplink (`up`) or the switch egress to it.
    pub host: u16,
    pub up: bool,
    /// When its first block goes on the wire (a /N/ or /G/ slipped inside
    /// another unit: when it was inserted).
    pub start: Ps,
    pub blocks: u32,
    pub kind: UnitKind,
    /// The message's index in the workload.
    pub msg: u32,
    /// The switch plane of the link (0; 1: the dual switch's second).
    pub plane: u8,
    /// With lossy links, the chunk it grants or carries (a chunk granted
    /// again keeps its id); else `u32::MAX`.
    pub chunk: u32,
}

/// The EDM fabric model.
pub struct Edm {
    fabric: FabricConfig,
    cfg: EdmConfig,
}

impl Edm {
    pub fn new(fabric: FabricConfig, cfg: EdmConfig) -> Self {
        Edm { fabric, cfg }
    }

    /// [`Protocol::run`], also returning every unit each link sent, in the
    /// order they were decided (for checking the model's timing from outside).
    pub fn run_traced(&self, messages: &[MessageSpec]) -> (Outcome, Vec<Transmission>) {
        let mut sim = Sim::new(self, messages);
        sim.trace = Some(Vec::new());
        sim.run(&mut |_, _| {})
    }

    /// Its configuration.
    pub fn config(&self) -> &EdmConfig {
        &self.cfg
    }

    fn c(&self, cycles: u32) -> Ps {
        self.fabric.cycles(cycles)
    }

    /// Data bytes a message moves (the response for reads and RMWs).
    fn data_bytes(m: Msg) -> u32 {
        match m.op {
            Op::Rmw => RMW_RESULT_BYTES,
            _ => m.size,
        }
    }

    fn data_kind(m: Msg) -> Kind {
        if m.op == Op::Write {
            Kind::Wreq
        } else {
            Kind::Rres
        }
    }

    /// Blocks of a message's /N/ or request.
    fn request_blocks(m: Msg) -> u32 {
        match m.op {
            Op::Write => 1,
            Op::Read => message_blocks(Kind::Rreq, 0) as u32,
            Op::Rmw => message_blocks(Kind::Rmwreq, RMW_OPERAND_BYTES as u16) as u32,
        }
    }

    /// What a member after the first adds to a mega-message's data besides
    /// its payload: its own header, address and CRC (as many bytes as an
    /// empty message's blocks, plus one block for rounding).
    fn batch_overhead_bytes(kind: Kind) -> u32 {
        8 * (message_blocks(kind, 0) as u32 + 1)
    }

    /// (data source, data destination) of a message.
    fn data_path(m: Msg) -> (u16, u16) {
        if m.op == Op::Write {
            (m.requester, m.memory)
        } else {
            (m.memory, m.requester)
        }
    }

    /// Host cycles from receiving a grant (or the forwarded request) to the
    /// data unit entering the uplink. With the zero-queue rules at least the
    /// wire time of the longest request a host sends (an RMWREQ): a request
    /// started before the grant arrived has then ended when the data starts.
    pub fn grant_to_data(&self, forwarded_request: bool) -> Ps {
        let steps = &self.cfg.steps;
        let mut cycles = steps.grant_to_data;
        if forwarded_request {
            // Not below 0: the schema refuses grant_to_data + rreq_extra < 0.
            cycles = cycles.saturating_add_signed(steps.rreq_extra);
        }
        // A read's translation (Clio) at its bound: the switch plans the
        // response's circuit before the memory node knows whether it hits.
        let t = self.c(cycles)
            + if forwarded_request {
                self.fabric.memory_ps() + self.fabric.translate.bound_ps()
            } else {
                0
            };
        if self.cfg.zero_queue {
            t.max(Self::longest_request_blocks() as Ps * self.fabric.block_ps())
        } else {
            t
        }
    }

    /// Blocks of the longest unit a host sends to the switch on its own.
    fn longest_request_blocks() -> u32 {
        let rmw = message_blocks(Kind::Rmwreq, RMW_OPERAND_BYTES as u16);
        rmw.max(message_blocks(Kind::Rreq, 0)) as u32
    }

    /// How much later a read's first response chunk reaches the switch than a
    /// chunk sent on a /G/: the forwarded request is longer than a /G/ and the
    /// memory node spends an extra cycle (and the DRAM access) on it. Never
    /// below 0: a memory node that starts on the request's first block (our
    /// RTL's timing, `rreq_extra` < 0) can be earlier than a /G/'s chunk on a
    /// fast link; its circuit then ends early, which costs nothing.
    #[inline]
    fn first_response_extra(&self, m: Msg) -> Ps {
        ((Self::request_blocks(m) as Ps - 1) * self.fabric.block_ps() + self.grant_to_data(true))
            .saturating_sub(self.grant_to_data(false))
    }

    fn iteration_ps(&self) -> Ps {
        SW_PIM_ITER_CYCLES as Ps * self.fabric.scheduler_cycle_ps
    }

    /// From an iteration's start to the first block at the switch egress of
    /// the chunk it grants on a /G/ (no waiting anywhere): a port released at
    /// `t` expects the next circuit's data there at `t + circuit_lag`.
    fn circuit_lag(&self) -> Ps {
        let hop = self.fabric.hop_ps();
        self.iteration_ps()
            + self.c(self.cfg.steps.sw_gen_grant)
            + hop
            + self.grant_to_data(false)
            + hop
            + self.c(self.cfg.steps.sw_forward)
    }

    /// From a notification's first block at the switch (a /N/, or an RREQ's
    /// /MS/ when `request`) to the scheduler seeing it.
    fn notification_delay(&self, request: bool) -> Ps {
        let steps = &self.cfg.steps;
        self.c(steps.sw_notify + if request { steps.sw_request_extra } else { 0 })
    }

    /// From a data unit's last block at its receiver to the message complete:
    /// a read's response at the compute node, a write at the memory node.
    fn proc_data(&self, m: Msg) -> Ps {
        let steps = &self.cfg.steps;
        self.c(if m.op == Op::Write {
            steps.proc_write
        } else {
            steps.proc_response
        })
    }

    /// A link direction, with its background frames if configured.
    fn link<U>(&self, stream: u64) -> Link<U> {
        let bg = &self.cfg.background;
        Link::new(
            &self.fabric,
            bg.enabled()
                .then(|| FrameStream::new(bg, &self.fabric, stream)),
        )
    }
}

impl Protocol for Edm {
    fn name(&self) -> &'static str {
        "edm"
    }

    /// The closed forms of `alone.rs`.
    fn alone_ps(&self, m: &MessageSpec) -> Ps {
        let m = Msg::of(m);
        if self.cfg.zero_queue {
            self.alone_zero_queue_ps(m)
        } else {
            self.alone_paper_ps(m)
        }
    }

    fn run(&mut self, messages: &[MessageSpec], progress: &mut dyn FnMut(u64, u64)) -> Outcome {
        Sim::new(self, messages).run(progress).0
    }

    fn run_closed_loop(&mut self, threads: &mut ClosedLoop, progress: Progress) -> Outcome {
        // The configuration schema refuses faults with a closed loop: a
        // message given up or timed out would stall its thread.
        assert!(
            !self.cfg.faults.dual_switch,
            "closed loops run without faults"
        );
        Sim::new(self, threads.messages())
            .run_fed(threads, progress)
            .0
    }
}
