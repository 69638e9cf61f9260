//! The EDM fabric model: its configuration and the timing every part of a
//! run derives from it (Table 1's steps), what it counts, and what a traced
//! run records. Below `sim.rs` and its parts, which all read it.
use super::faults::FaultCounters;
use super::link::Link;
use super::units::{Msg, UnitKind};
use crate::background::{FrameStats, FrameStream};
use crate::config::FabricConfig;
use crate::edm::config::EdmConfig;
use crate::time::Ps;
use crate::workload::Op;
use edm_proto::message::{message_blocks, Kind};
use edm_proto::spec::*;

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
    /// Grants the scheduler's iterations issued (a chunk each; with
    /// `scheduler_iterations`, how much each iteration matched).
    pub scheduler_grants: u64,
    /// /A/ blocks the memory nodes started (docs/protocol.md §4b; each
    /// takes one block of the node's uplink and of the requester's
    /// downlink).
    pub acks_sent: u64,
    /// Background Ethernet frames (with `background.load` > 0).
    pub frames: FrameStats,
    /// What faults did (`EdmConfig::faults`).
    pub faults: FaultCounters,
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
    pub(super) fabric: FabricConfig,
    pub(super) cfg: EdmConfig,
}

impl Edm {
    pub fn new(fabric: FabricConfig, cfg: EdmConfig) -> Self {
        Edm { fabric, cfg }
    }

    /// Its configuration.
    pub fn config(&self) -> &EdmConfig {
        &self.cfg
    }

    pub(super) fn c(&self, cycles: u32) -> Ps {
        self.fabric.cycles(cycles)
    }

    /// Data bytes a message moves (the response for reads and RMWs).
    pub(super) fn data_bytes(m: Msg) -> u32 {
        match m.op {
            Op::Rmw => RMW_RESULT_BYTES,
            _ => m.size,
        }
    }

    pub(super) fn data_kind(m: Msg) -> Kind {
        if m.op == Op::Write {
            Kind::Wreq
        } else {
            Kind::Rres
        }
    }

    /// Blocks of a message's /N/ or request.
    pub(super) fn request_blocks(m: Msg) -> u32 {
        match m.op {
            Op::Write => 1,
            Op::Read => message_blocks(Kind::Rreq, 0) as u32,
            Op::Rmw => message_blocks(Kind::Rmwreq, RMW_OPERAND_BYTES as u16) as u32,
        }
    }

    /// What a member after the first adds to a mega-message's data besides
    /// its payload: its own header, address and CRC (as many bytes as an
    /// empty message's blocks, plus one block for rounding).
    pub(super) fn batch_overhead_bytes(kind: Kind) -> u32 {
        8 * (message_blocks(kind, 0) as u32 + 1)
    }

    /// (data source, data destination) of a message.
    pub(super) fn data_path(m: Msg) -> (u16, u16) {
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
    pub(super) fn longest_request_blocks() -> u32 {
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
    pub(super) fn first_response_extra(&self, m: Msg) -> Ps {
        ((Self::request_blocks(m) as Ps - 1) * self.fabric.block_ps() + self.grant_to_data(true))
            .saturating_sub(self.grant_to_data(false))
    }

    /// One iteration of the switch scheduler: its RTL's cycles (3, or with the
    /// registered request tree a level per cycle at this port count).
    pub(super) fn iteration_ps(&self) -> Ps {
        sw_pim_iter_cycles(
            self.fabric.nodes as u32,
            self.fabric.scheduler_registered_tree,
        ) as Ps
            * self.fabric.scheduler_cycle_ps
    }

    /// From an iteration's start to the first block at the switch egress of
    /// the chunk it grants on a /G/ (no waiting anywhere): a port released at
    /// `t` expects the next circuit's data there at `t + circuit_lag`.
    pub(super) fn circuit_lag(&self) -> Ps {
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
    /// With the registered request tree a notification also waits a cycle
    /// in its lane's FIFO (only a FIFO's head is an insert candidate).
    pub(super) fn notification_delay(&self, request: bool) -> Ps {
        let steps = &self.cfg.steps;
        let lane = if self.fabric.scheduler_registered_tree {
            SW_NQ_LANE_CYCLES_REGISTERED
        } else {
            0
        };
        self.c(steps.sw_notify + lane + if request { steps.sw_request_extra } else { 0 })
    }

    /// From a data unit's last block at its receiver to the message complete:
    /// a read's response at the compute node, a write at the memory node.
    pub(super) fn proc_data(&self, m: Msg) -> Ps {
        let steps = &self.cfg.steps;
        self.c(if m.op == Op::Write {
            steps.proc_write
        } else {
            steps.proc_response
        })
    }

    /// From an /A/ leaving its memory node to its requester having read it:
    /// one block on each link, a hop each, the switch's forwarding (as a
    /// data block's, RX to TX) and the host's processing of a block.
    pub(super) fn ack_path_ps(&self) -> Ps {
        let steps = &self.cfg.steps;
        2 * (self.fabric.block_ps() + self.fabric.hop_ps())
            + self.c(steps.sw_forward + steps.proc_response)
    }

    /// A link direction, with its background frames if configured.
    pub(super) fn link<U>(&self, stream: u64) -> Link<U> {
        let bg = &self.cfg.background;
        Link::new(
            &self.fabric,
            bg.enabled()
                .then(|| FrameStream::new(bg, &self.fabric, stream)),
        )
    }
}
