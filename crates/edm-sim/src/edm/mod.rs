//! EDM (§3): hosts notify, the switch's priority-PIM scheduler grants chunks,
//! granted data follows a virtual circuit. Latencies per step are Table 1's
//! cycle counts (`edm_proto::spec`), so one message alone costs exactly the
//! Table 1 budget plus the serialization of its blocks (see `alone_ps`).
pub mod link;
pub mod placement;

use crate::background::FrameStream;
use crate::config::{EdmConfig, FabricConfig, MemoryOrder, Ps};
use crate::engine::{
    self, prefetch, utilisation, EventQueue, Outcome, Protocol, Record, Simulation, Totals,
};
use crate::scheduler::{Grant, Iteration, Scheduler};
use crate::workload::{overlaps, MessageSpec, Op};
use edm_proto::message::{message_blocks, Kind};
use edm_proto::spec::*;
use link::{frame_stats, Link};
use placement::{place_circuit, Timeline};
use std::collections::VecDeque;

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

/// What the handlers need of a message, carried by its units (so that events
/// need not look the message up: a cache miss per event on large workloads).
#[derive(Clone, Copy, Debug)]
struct Msg {
    /// Payload bytes; for a mega-message, its members' bytes and the headers
    /// between them (`Sim::fold`).
    size: u32,
    requester: u16,
    memory: u16,
    /// Messages it carries (more than 1: a mega-message).
    count: u16,
    op: Op,
}

impl Msg {
    fn of(m: &MessageSpec) -> Msg {
        Msg {
            size: m.size,
            requester: m.requester,
            memory: m.memory,
            count: 1,
            op: m.op,
        }
    }
}

/// No batch (a message on its own).
const NO_BATCH: u32 = u32::MAX;

/// A mega-message: its members in order, each with the offset just past its
/// bytes in the mega-message's data, and how many have completed.
#[derive(Clone, Debug, Default)]
struct Batch {
    members: Vec<(u32, u32)>,
    completed: usize,
}

#[derive(Clone, Copy, Debug)]
struct Unit {
    kind: UnitKind,
    msg: u32,
    spec: Msg,
    /// Data bytes granted or carried.
    bytes: u32,
    last: bool,
    blocks: u32,
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
}

#[derive(Clone, Copy, Debug)]
enum Ev {
    Issue(u32),
    HostSend(u16, Unit),
    UplinkFree(u16),
    DownlinkFree(u16),
    /// First block of a unit at the switch from host `.0`.
    SwitchIn(u16, Unit),
    /// A unit ready at the switch egress toward host `.0`.
    SwitchOut(u16, Unit),
    /// Last block of a unit at host `.0`.
    HostIn(u16, Unit),
    SchedulerTick,
    /// Zero-queue mode: host `.0` looks again at its waiting /N/ and requests.
    HostControl(u16),
    /// Message (or mega-message) `.0` has finished at its requester: a
    /// write's last data block has left it, a read's response has arrived.
    Finished(u32),
    /// The scheduler looks at notifications that became visible (see
    /// `Sim::notify_wakes`).
    NotifyTick,
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
        let mut cycles = HOST_PROC_GRANT_CYCLES + HOST_READ_GRANT_CYCLES + HOST_GEN_DATA_CYCLES;
        if forwarded_request {
            cycles += HOST_PROC_RREQ_EXTRA_CYCLES;
        }
        let t = self.c(cycles)
            + if forwarded_request {
                self.fabric.dram_ps
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

    /// Zero-queue mode: a switch egress's timeline. After every data unit
    /// it keeps room for a /G/ or forwarded RREQ (3 blocks), and after every
    /// circuit lag of back-to-back data room for the longest forwarded
    /// request (an RMWREQ, 5 blocks), so a control unit waits about a data
    /// unit, and at most about a circuit lag, for its slot.
    fn egress_timeline(&self) -> Timeline {
        let block = self.fabric.block_ps();
        Timeline::new(
            message_blocks(Kind::Rreq, 0) as Ps * block,
            Self::longest_request_blocks() as Ps * block,
            self.circuit_lag(),
        )
    }

    /// Zero-queue mode: a host uplink's timeline, with room for the host's
    /// longest request after every circuit lag of back-to-back granted data
    /// (so a request waits about that long at most).
    fn uplink_timeline(&self) -> Timeline {
        let block = self.fabric.block_ps();
        Timeline::new(
            0,
            Self::longest_request_blocks() as Ps * block,
            self.circuit_lag(),
        )
    }

    /// Zero-queue mode: from a grant's first block on its egress (`control_blocks`
    /// long; a forwarded request if `forwarded`) to its data's first block on
    /// the source's uplink, and from there to the data at its egress.
    fn circuit_delays(&self, control_blocks: u32, forwarded: bool) -> (Ps, Ps) {
        let hop = self.fabric.hop_ps();
        let to_data = hop
            + (control_blocks as Ps - 1) * self.fabric.block_ps()
            + self.grant_to_data(forwarded);
        (to_data, hop + self.c(SW_FORWARD_CYCLES))
    }

    /// Zero-queue mode: when a circuit's ports are released: when a circuit
    /// decided then would start right after its data leaves the egress at
    /// `data_end`, and never before the scheduler's `planned` release.
    fn zero_queue_release(&self, data_end: Ps, planned: Ps) -> Ps {
        data_end.saturating_sub(self.circuit_lag()).max(planned)
    }

    /// Zero-queue mode: how far ahead of an instant every data unit booked on
    /// an uplink by a grant decided from then on starts (a host may fix a
    /// request's start up to this far ahead: no later grant can take it).
    fn booking_horizon(&self) -> Ps {
        self.iteration_ps()
            + self.c(SW_GEN_GRANT_CYCLES)
            + self.fabric.hop_ps()
            + self.grant_to_data(false)
    }

    /// How much later a read's first response chunk reaches the switch than a
    /// chunk sent on a /G/: the forwarded request is longer than a /G/ and the
    /// memory node spends an extra cycle (and the DRAM access) on it.
    fn first_response_extra(&self, m: Msg) -> Ps {
        (Self::request_blocks(m) as Ps - 1) * self.fabric.block_ps() + self.grant_to_data(true)
            - self.grant_to_data(false)
    }

    fn iteration_ps(&self) -> Ps {
        SW_PIM_ITER_CYCLES as Ps * self.fabric.scheduler_cycle_ps
    }

    /// Zero-queue rules with start delays (`EdmConfig::start_delay`): the
    /// unit of a grant's start delay (one link block) and the largest one.
    fn start_delay(&self) -> Option<(Ps, Ps)> {
        let block = self.fabric.block_ps();
        self.cfg
            .start_delay
            .then_some((block, ((1 << NG_DELAY_W) - 1) * block))
    }

    /// Zero-queue rules: how far before its release a port may be granted
    /// (`Scheduler::grant_early`): one circuit lag, or half of one with
    /// start delays, where a grant's slot no longer has to line up with its
    /// data (measured: docs/simulator.md, "EDM's rules").
    fn early_grant_ps(&self) -> Ps {
        if let Some(early) = self.cfg.early_grant_ps {
            early
        } else if self.cfg.start_delay {
            self.circuit_lag() / 2
        } else {
            self.circuit_lag()
        }
    }

    /// From an iteration's start to the first block at the switch egress of
    /// the chunk it grants on a /G/ (no waiting anywhere): a port released at
    /// `t` expects the next circuit's data there at `t + circuit_lag`.
    fn circuit_lag(&self) -> Ps {
        let hop = self.fabric.hop_ps();
        self.iteration_ps()
            + self.c(SW_GEN_GRANT_CYCLES)
            + hop
            + self.grant_to_data(false)
            + hop
            + self.c(SW_FORWARD_CYCLES)
    }

    fn notification_delay(&self) -> Ps {
        self.c(SW_CLASSIFY_CYCLES + SW_NQ_INSERT_CYCLES)
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

    /// The same steps the engine takes, with no other traffic: the request or
    /// notification reaches the switch, waits the insert latency, one PIM
    /// iteration grants, and each chunk follows; later chunks are granted one
    /// iteration after the ports' release (`wire - iteration` after a grant).
    fn alone_ps(&self, m: &MessageSpec) -> Ps {
        let m = Msg::of(m);
        if self.cfg.zero_queue {
            return self.alone_zero_queue_ps(m);
        }
        let f = &self.fabric;
        let block = f.block_ps();
        let hop = f.hop_ps();
        let iteration = self.iteration_ps();
        let kind = Self::data_kind(m);
        let mut remaining = Self::data_bytes(m);
        let visible = self.c(HOST_GEN_REQ_CYCLES) + hop + self.notification_delay();
        let mut grant = visible + iteration;
        let mut first = true;
        let (mut uplink_free, mut downlink_free) = (0, 0);
        loop {
            let bytes = remaining.min(self.cfg.chunk_bytes);
            remaining -= bytes;
            let blocks = message_blocks(kind, bytes as u16) as Ps;
            let to_source = grant + self.c(SW_GEN_GRANT_CYCLES) + hop;
            let at_source = if first && m.op != Op::Write {
                to_source + (Self::request_blocks(m) as Ps - 1) * block + self.grant_to_data(true)
            } else {
                to_source + self.grant_to_data(false)
            };
            let send = at_source.max(uplink_free);
            uplink_free = send + blocks * block;
            let egress = (send + hop + self.c(SW_FORWARD_CYCLES)).max(downlink_free);
            downlink_free = egress + blocks * block;
            let last_block = egress + hop + (blocks - 1) * block;
            if remaining == 0 {
                return last_block + self.c(HOST_PROC_DATA_CYCLES);
            }
            let extra = if first && m.op != Op::Write {
                self.first_response_extra(m)
            } else {
                0
            };
            let release = (grant + extra + blocks * block).saturating_sub(iteration);
            // The next iteration starts at the release, once the scheduler
            // may use the ports again: a whole iteration after this one's
            // start (pipelined, they are masked while it is in flight).
            grant = release.max(grant) + iteration;
            first = false;
        }
    }

    fn run(&mut self, messages: &[MessageSpec], progress: &mut dyn FnMut(u64, u64)) -> Outcome {
        Sim::new(self, messages).run(progress).0
    }
}

impl Edm {
    /// [`Protocol::alone_ps`] under the zero-queue rules: the same steps, with
    /// each chunk's circuit placed as the engine places it (`place_circuit`,
    /// the guards), and the next chunk granted at the first iteration its
    /// ports are eligible (`circuit_lag` before their release).
    fn alone_zero_queue_ps(&self, m: Msg) -> Ps {
        let f = &self.fabric;
        let block = f.block_ps();
        let hop = f.hop_ps();
        let iteration = self.iteration_ps();
        let early = self.early_grant_ps();
        let kind = Self::data_kind(m);
        let mut remaining = Self::data_bytes(m);
        let visible = self.c(HOST_GEN_REQ_CYCLES) + hop + self.notification_delay();
        // The iteration deciding the next chunk starts at `decided`.
        let mut decided = visible;
        let mut first = true;
        // The message alone: its grants go on one egress, its data on an
        // uplink and another egress.
        let src_egress = self.egress_timeline();
        let mut uplink = self.uplink_timeline();
        let mut egress = self.egress_timeline();
        let mut pair_end = 0;
        loop {
            let bytes = remaining.min(self.cfg.chunk_bytes);
            remaining -= bytes;
            let wire = message_blocks(kind, bytes as u16) as Ps * block;
            let forwarded = first && m.op != Op::Write;
            let control_blocks = if forwarded {
                Self::request_blocks(m)
            } else {
                1
            };
            let (to_data, to_egress) = self.circuit_delays(control_blocks, forwarded);
            let generated = decided + iteration + self.c(SW_GEN_GRANT_CYCLES);
            // (What ended before this grant cannot matter: keeps long messages linear.)
            uplink.prune(decided);
            egress.prune(decided);
            let (_, up, at_egress) = place_circuit(
                &src_egress,
                &uplink,
                &egress,
                generated,
                pair_end,
                control_blocks as Ps * block,
                wire,
                to_data,
                to_egress,
                self.start_delay(),
            );
            uplink.book_data(up, wire);
            egress.book_data(at_egress, wire);
            pair_end = up + wire;
            if remaining == 0 {
                return at_egress + hop + wire - block + self.c(HOST_PROC_DATA_CYCLES);
            }
            let extra = if forwarded {
                self.first_response_extra(m)
            } else {
                0
            };
            let release = self.zero_queue_release(at_egress + wire, decided + extra + wire);
            // The engine looks again when the ports may be used early, or, if
            // that has passed, at their release; never during an iteration.
            let look = if release.saturating_sub(early) > decided {
                release - early
            } else {
                release
            };
            decided = look.max(decided + iteration);
            first = false;
        }
    }
}

struct Sim<'a> {
    edm: &'a Edm,
    msgs: &'a [MessageSpec],
    n: usize,
    q: EventQueue<Ev>,
    uplinks: Vec<Link<Unit>>,
    downlinks: Vec<Link<Unit>>,
    /// Until when each switch egress is sending a data unit.
    egress_data_until: Vec<Ps>,
    /// Wire time of the data units granted into each egress that have not
    /// started there yet (kept only with egress feedback).
    egress_granted_ps: Vec<Ps>,
    sched: Scheduler,
    scheduler_busy_until: Ps,
    last_iteration_at: Option<Ps>,
    deferred_tick: Option<Ps>,
    /// Iterations in a row that only retried refused requests (capped by
    /// `max_iterations`), and when the next such retry is due.
    iterations_since_wake: u32,
    retry_at: Option<Ps>,
    /// Scratch of `scheduler_tick`: the times it asks to look again.
    tick_times: Vec<Ps>,
    /// Scratch: the last iteration's grants.
    iteration: Iteration,
    /// When notifications become visible, in order (the delay is fixed),
    /// and whether a `NotifyTick` for the first is queued: one event per
    /// distinct time the scheduler is idle at, not one per notification.
    notify_wakes: VecDeque<Ps>,
    notify_tick_queued: bool,
    /// Active notifications per (requester, memory) and the messages waiting behind X.
    active: Vec<u8>,
    pending: Vec<VecDeque<(u32, Msg)>>,
    /// The messages in the scheduler, by the id it knows them by: (index,
    /// what the grant's units need). Ids are reused (`queued_free`), so these
    /// stay few and in cache where `msgs` (all messages) would miss.
    queued: Vec<(u32, Msg)>,
    queued_free: Vec<u32>,
    delivered: Vec<u32>,
    records: Vec<Record>,
    /// (message, completion time), in completion order.
    completions: Vec<(u32, Ps)>,
    totals: Totals,
    completed: u64,
    /// Zero-queue mode (`EdmConfig::zero_queue`; empty otherwise): what each
    /// uplink and switch egress has booked.
    zq: bool,
    up_book: Vec<Timeline>,
    down_book: Vec<Timeline>,
    /// When the data granted so far leaves its uplink, per (source,
    /// destination) pair.
    pair_data_end: Vec<Ps>,
    /// Each host's /N/ and requests waiting for a gap, in order, with when
    /// each is ready. A `HostControl` look is queued exactly while the queue
    /// is not empty (see `host_controls`).
    controls: Vec<VecDeque<(Ps, Unit)>>,
    /// Each unit sent, when tracing.
    trace: Option<Vec<Transmission>>,
    /// Whether messages' finishing at their requester is followed (the
    /// memory-order rule or fences need it).
    track_finish: bool,
    /// Memory-order rule (`MemoryOrder::Address`; empty otherwise): per
    /// requester-memory pair the messages issued and not finished, and those
    /// held back by an overlapping earlier one, with how many they wait for.
    unfinished: Vec<Vec<u32>>,
    held: Vec<Vec<u32>>,
    waits_for: Vec<u32>,
    /// Fences: per requester, messages not finished, and the messages
    /// waiting behind a fence (from the fence on, in order).
    outstanding: Vec<u32>,
    fenced: Vec<VecDeque<u32>>,
    /// Batching: each message's batch (`NO_BATCH`: none) and the batches.
    batch_of: Vec<u32>,
    batches: Vec<Batch>,
}

impl<'a> Sim<'a> {
    fn new(edm: &'a Edm, msgs: &'a [MessageSpec]) -> Self {
        let n = edm.fabric.nodes;
        let f = &edm.fabric;
        let address = edm.cfg.memory_order == MemoryOrder::Address;
        Sim {
            edm,
            msgs,
            n,
            q: EventQueue::default(),
            uplinks: (0..n).map(|h| edm.link(2 * h as u64)).collect(),
            downlinks: (0..n).map(|h| edm.link(2 * h as u64 + 1)).collect(),
            egress_data_until: vec![0; n],
            egress_granted_ps: vec![0; n],
            sched: {
                let mut s = Scheduler::new(
                    n,
                    edm.cfg.priority,
                    edm.cfg.chunk_bytes,
                    edm.iteration_ps(),
                    f.block_ps(),
                );
                s.hold_for_shorter(edm.cfg.priority_hold);
                if address {
                    s.without_pair_order();
                }
                if edm.cfg.pipelined_matching {
                    s.pipeline(f.scheduler_cycle_ps);
                }
                if edm.cfg.zero_queue {
                    // Circuits are booked to start when their ports are free:
                    // the scheduler may plan one grant-to-egress lag ahead.
                    s.grant_early(edm.early_grant_ps());
                }
                s
            },
            scheduler_busy_until: 0,
            last_iteration_at: None,
            deferred_tick: None,
            iterations_since_wake: 0,
            retry_at: None,
            tick_times: Vec::new(),
            iteration: Iteration::default(),
            notify_wakes: VecDeque::new(),
            notify_tick_queued: false,
            active: vec![0; n * n],
            pending: vec![VecDeque::new(); n * n],
            queued: Vec::new(),
            queued_free: Vec::new(),
            delivered: vec![0; msgs.len()],
            completions: Vec::with_capacity(msgs.len()),
            records: {
                // Alone latency depends only on the operation and size: a
                // small direct-mapped cache of it (workloads repeat sizes).
                let mut cache = [(u32::MAX, Op::Read, 0); 256];
                msgs.iter()
                    .map(|m| {
                        let slot = &mut cache[(m.size as usize ^ m.op as usize) & 255];
                        if (slot.0, slot.1) != (m.size, m.op) {
                            *slot = (m.size, m.op, edm.alone_ps(m));
                        }
                        Record {
                            complete_ps: None,
                            alone_ps: slot.2,
                        }
                    })
                    .collect()
            },
            totals: Totals::default(),
            completed: 0,
            zq: edm.cfg.zero_queue,
            up_book: vec![edm.uplink_timeline(); if edm.cfg.zero_queue { n } else { 0 }],
            down_book: vec![edm.egress_timeline(); if edm.cfg.zero_queue { n } else { 0 }],
            controls: vec![VecDeque::new(); if edm.cfg.zero_queue { n } else { 0 }],
            pair_data_end: vec![0; if edm.cfg.zero_queue { n * n } else { 0 }],
            trace: None,
            track_finish: address || msgs.iter().any(|m| m.fence),
            unfinished: vec![Vec::new(); if address { n * n } else { 0 }],
            held: vec![Vec::new(); if address { n * n } else { 0 }],
            waits_for: vec![0; if address { msgs.len() } else { 0 }],
            outstanding: vec![0; n],
            fenced: vec![VecDeque::new(); n],
            batch_of: vec![
                NO_BATCH;
                if edm.cfg.batch_bytes > 0 {
                    msgs.len()
                } else {
                    0
                }
            ],
            batches: Vec::new(),
        }
    }

    #[inline]
    fn record(&mut self, host: u16, up: bool, start: Ps, blocks: u32, unit: &Unit) {
        if let Some(t) = &mut self.trace {
            t.push(Transmission {
                host,
                up,
                start,
                blocks,
                kind: unit.kind,
                msg: unit.msg,
            });
        }
    }

    fn run(mut self, progress: &mut dyn FnMut(u64, u64)) -> (Outcome, Vec<Transmission>) {
        let msgs = self.msgs;
        let run = engine::run(&mut self, msgs, progress);
        self.totals.events = run.events;
        self.totals.end_ps = self.totals.end_ps.max(run.end_ps);
        for &(i, at) in &self.completions {
            self.records[i as usize].complete_ps = Some(at);
        }
        let end = self.totals.end_ps;
        for link in self.uplinks.iter_mut().chain(&mut self.downlinks) {
            link.apply_controls(Ps::MAX);
        }
        (self.totals.uplink_util_mean, self.totals.uplink_util_max) =
            utilisation(self.uplinks.iter().map(|l| l.busy_ps), end);
        (
            self.totals.downlink_util_mean,
            self.totals.downlink_util_max,
        ) = utilisation(self.downlinks.iter().map(|l| l.busy_ps), end);
        let mut frames = frame_stats(&mut self.uplinks, end);
        frames.merge(&frame_stats(&mut self.downlinks, end));
        self.totals.frames = frames;
        self.totals.max_notification_queue = self.sched.max_occupancy;
        self.totals.scheduler_iterations = self.sched.iterations;
        debug_assert!(self.up_book.iter().all(|t| t.overlaps == 0));
        debug_assert!(self.down_book.iter().all(|t| t.overlaps == 0));
        debug_assert!(self.controls.iter().all(VecDeque::is_empty));
        (
            Outcome {
                records: self.records,
                totals: self.totals,
            },
            self.trace.unwrap_or_default(),
        )
    }

    /// Starts loading what the events a few pops ahead will touch when they
    /// end a message (its pair's pending queue): the queue's header two pops
    /// before the event, the queue's front one pop before. Hints only:
    /// handling is unchanged.
    #[inline(always)]
    fn prefetch_ahead(&self) {
        let ends = |unit: &Unit| match unit.kind {
            UnitKind::Data => true,
            UnitKind::Grant => unit.last && unit.spec.op == Op::Write,
            _ => false,
        };
        if let Some(Ev::HostIn(_, unit)) = self.q.ahead(2) {
            if ends(unit) {
                prefetch(&self.pending[self.pair(unit.spec)]);
            }
        }
        if let Some(Ev::HostIn(_, unit)) = self.q.ahead(0) {
            if ends(unit) {
                if let Some(front) = self.pending[self.pair(unit.spec)].front() {
                    prefetch(front);
                }
            }
        }
    }

    fn pair(&self, m: Msg) -> usize {
        m.requester as usize * self.n + m.memory as usize
    }

    fn handle_event(&mut self, now: Ps, ev: Ev) {
        let edm = self.edm;
        match ev {
            Ev::Issue(i) => self.issue(now, i),
            Ev::Finished(i) => self.finished(now, i),
            Ev::HostSend(h, unit) if unit.kind == UnitKind::Notify => {
                let d = self.uplinks[h as usize].insert_control_block(now);
                self.record(h, true, d.start, 1, &unit);
                self.q.push(d.first_block, Ev::SwitchIn(h, unit));
                self.wake_uplink(h);
            }
            Ev::HostSend(h, unit) => {
                let high = unit.kind == UnitKind::Data;
                let link = &mut self.uplinks[h as usize];
                match link.start_time(now, high) {
                    Some(at) => self.send_up(at, h, unit.blocks, unit),
                    None => link.wait(now, unit.blocks, high, unit),
                }
                self.wake_uplink(h);
            }
            Ev::UplinkFree(h) => {
                if let Some((blocks, unit, _)) = self.uplinks[h as usize].next(now) {
                    self.send_up(now, h, blocks, unit);
                }
                self.wake_uplink(h);
            }
            Ev::DownlinkFree(h) => {
                if let Some((blocks, unit, offered)) = self.downlinks[h as usize].next(now) {
                    self.send_down(now, now, h, blocks, unit, offered);
                }
                self.wake_downlink(h);
            }
            Ev::SwitchIn(from, unit) => {
                let m = unit.spec;
                match unit.kind {
                    UnitKind::Notify | UnitKind::Request => {
                        let (src, dst) = Edm::data_path(m);
                        debug_assert!(unit.kind != UnitKind::Notify || src == from);
                        let visible = now + edm.notification_delay();
                        let first_extra = if m.op == Op::Write {
                            0
                        } else {
                            edm.first_response_extra(m)
                        };
                        let id = self.enqueue(unit.msg, m);
                        self.sched.notify(
                            visible,
                            src,
                            dst,
                            id,
                            Edm::data_bytes(m),
                            Edm::data_kind(m),
                            first_extra,
                        );
                        self.wake_on_notification(visible);
                    }
                    UnitKind::Data | UnitKind::Grant | UnitKind::ForwardedRequest => {
                        unreachable!("data goes straight to its egress; hosts do not send grants")
                    }
                }
            }
            Ev::SwitchOut(to, unit) if unit.kind == UnitKind::Grant => {
                let d = self.downlinks[to as usize].insert_control_block(now);
                self.record(to, false, d.start, 1, &unit);
                self.q.push(d.last_block, Ev::HostIn(to, unit));
                self.wake_downlink(to);
            }
            Ev::SwitchOut(to, unit) => {
                // Data and forwarded requests (the first grant of a response) first.
                let high = matches!(unit.kind, UnitKind::Data | UnitKind::ForwardedRequest);
                if high && now < self.egress_data_until[to as usize] {
                    self.totals.switch_data_conflicts += 1;
                }
                let link = &mut self.downlinks[to as usize];
                let start = link.start_time(now, high);
                if start.is_none() {
                    link.wait(now, unit.blocks, high, unit);
                }
                if high {
                    let waiting = link.max_waiting;
                    self.totals.max_switch_data_queue =
                        self.totals.max_switch_data_queue.max(waiting);
                }
                if let Some(at) = start {
                    self.send_down(now, at, to, unit.blocks, unit, now);
                }
                self.wake_downlink(to);
            }
            Ev::SchedulerTick => self.scheduler_tick(now),
            Ev::HostControl(h) => self.host_controls(now, h),
            Ev::NotifyTick => self.notify_tick(now),
            Ev::HostIn(h, unit) => self.host_in(now, h, unit),
        }
    }

    /// Message `i` is issued: unless a fence holds it back, on to the
    /// memory-order rule.
    fn issue(&mut self, now: Ps, i: u32) {
        let spec = &self.msgs[i as usize];
        let r = spec.requester as usize;
        if !self.fenced[r].is_empty() || (spec.fence && self.outstanding[r] > 0) {
            self.fenced[r].push_back(i);
            return;
        }
        self.order(now, i);
    }

    /// The memory-order rule: message `i` waits for every earlier unfinished
    /// message of its requester-memory pair that overlaps it, one of the two
    /// a write or RMW (a read beside a read needs no order).
    fn order(&mut self, now: Ps, i: u32) {
        let spec = &self.msgs[i as usize];
        if self.track_finish {
            self.outstanding[spec.requester as usize] += 1;
        }
        if self.edm.cfg.memory_order == MemoryOrder::Address {
            let pair = self.pair(Msg::of(spec));
            let msgs = self.msgs;
            let conflicts = self.unfinished[pair]
                .iter()
                .filter(|&&j| conflict(&msgs[j as usize], spec))
                .count() as u32;
            self.unfinished[pair].push(i);
            if conflicts > 0 {
                self.waits_for[i as usize] = conflicts;
                self.held[pair].push(i);
                return;
            }
        }
        self.admit(now, i);
    }

    /// Message `i` may go: it takes one of its pair's X notifications, or
    /// waits for one.
    fn admit(&mut self, now: Ps, i: u32) {
        let m = Msg::of(&self.msgs[i as usize]);
        let pair = self.pair(m);
        if (self.active[pair] as u32) < self.edm.cfg.max_active_notifs {
            self.activate(now, i, m);
        } else {
            self.pending[pair].push_back((i, m));
        }
    }

    /// Message or mega-message `i` has finished at its requester: the
    /// messages that waited for its members may go.
    fn finished(&mut self, now: Ps, i: u32) {
        if self
            .batch_of
            .get(i as usize)
            .is_some_and(|&b| b != NO_BATCH)
        {
            let b = self.batch_of[i as usize] as usize;
            for k in 0..self.batches[b].members.len() {
                let member = self.batches[b].members[k].0;
                self.finished_one(now, member);
            }
        } else {
            self.finished_one(now, i);
        }
    }

    fn finished_one(&mut self, now: Ps, i: u32) {
        let msgs = self.msgs;
        let spec = &msgs[i as usize];
        let r = spec.requester as usize;
        self.outstanding[r] -= 1;
        if self.edm.cfg.memory_order == MemoryOrder::Address {
            let pair = self.pair(Msg::of(spec));
            let at = self.unfinished[pair].iter().position(|&j| j == i);
            self.unfinished[pair].remove(at.expect("a finished message was unfinished"));
            let mut free = Vec::new();
            let waits_for = &mut self.waits_for;
            self.held[pair].retain(|&h| {
                if h > i && conflict(spec, &msgs[h as usize]) {
                    waits_for[h as usize] -= 1;
                    if waits_for[h as usize] == 0 {
                        free.push(h);
                        return false;
                    }
                }
                true
            });
            for h in free {
                self.admit(now, h);
            }
        }
        while let Some(&f) = self.fenced[r].front() {
            if msgs[f as usize].fence && self.outstanding[r] > 0 {
                break;
            }
            self.fenced[r].pop_front();
            self.order(now, f);
        }
    }

    /// The id the scheduler knows message `i` by (until its last grant).
    fn enqueue(&mut self, i: u32, m: Msg) -> u32 {
        match self.queued_free.pop() {
            Some(id) => {
                self.queued[id as usize] = (i, m);
                id
            }
            None => {
                self.queued.push((i, m));
                (self.queued.len() - 1) as u32
            }
        }
    }

    fn activate(&mut self, now: Ps, i: u32, m: Msg) {
        let pair = self.pair(m);
        self.active[pair] += 1;
        let kind = if m.op == Op::Write {
            UnitKind::Notify
        } else {
            UnitKind::Request
        };
        let unit = Unit {
            kind,
            msg: i,
            spec: m,
            bytes: 0,
            last: false,
            blocks: Edm::request_blocks(m),
        };
        let at = now + self.edm.c(HOST_GEN_REQ_CYCLES);
        let h = m.requester;
        if self.zq {
            let waiting = &mut self.controls[h as usize];
            waiting.push_back((at, unit));
            if waiting.len() == 1 {
                self.host_controls(now, h);
            }
            return;
        }
        if kind == UnitKind::Notify {
            if let Some(d) = self.uplinks[h as usize].control_block_at(at) {
                self.record(h, true, d.start, 1, &unit);
                self.q.push(d.first_block, Ev::SwitchIn(h, unit));
                return;
            }
        }
        self.q.push(at, Ev::HostSend(h, unit));
    }

    /// Zero-queue mode: host `h` sends its waiting /N/ and requests, in
    /// order, each in the first gap of its uplink's booked data from when it
    /// is ready. A start is fixed only once no grant decided later can book
    /// data into its window (`booking_horizon`); else the host looks again
    /// then (it would know of such a grant by the time it starts).
    fn host_controls(&mut self, now: Ps, h: u16) {
        let block = self.edm.fabric.block_ps();
        let horizon = self.edm.booking_horizon();
        let hop = self.edm.fabric.hop_ps();
        while let Some(&(ready, unit)) = self.controls[h as usize].front() {
            let len = unit.blocks as Ps * block;
            let book = &mut self.up_book[h as usize];
            book.prune(now);
            let start = book.first_fit(ready.max(now), len, false);
            if start + len > now + horizon {
                self.q.push(start + len - horizon, Ev::HostControl(h));
                return;
            }
            book.book(start, len);
            self.totals.max_request_wait_ps = self.totals.max_request_wait_ps.max(start - ready);
            self.uplinks[h as usize].account(now, start, unit.blocks);
            self.controls[h as usize].pop_front();
            self.record(h, true, start, unit.blocks, &unit);
            self.q.push(start + hop, Ev::SwitchIn(h, unit));
        }
    }

    fn deactivate(&mut self, now: Ps, m: Msg) {
        let pair = self.pair(m);
        self.active[pair] -= 1;
        if let Some((next, m)) = self.pending[pair].pop_front() {
            let m = self.fold(pair, next, m);
            self.activate(now, next, m);
        }
    }

    /// Batching: write `i` (`m`), about to take a notification, takes with
    /// it the writes waiting behind it in `pair`'s queue, in order, while the
    /// whole fits `batch_bytes`; returns what the mega-message's one /N/
    /// announces. Reads and RMWs go alone: each request carries its own
    /// address and already is the notification (a mega-request would be a
    /// unit longer than the zero-queue rules keep room for).
    fn fold(&mut self, pair: usize, i: u32, m: Msg) -> Msg {
        let limit = self.edm.cfg.batch_bytes;
        if limit == 0 || m.op != Op::Write {
            return m;
        }
        let overhead = Edm::batch_overhead_bytes(Edm::data_kind(m));
        let mut members = vec![(i, m.size)];
        let mut size = m.size;
        let mut k = 0;
        while k < self.pending[pair].len() && size < limit {
            let (j, other) = self.pending[pair][k];
            if other.op == m.op && size + overhead + other.size <= limit {
                size += overhead + other.size;
                members.push((j, size));
                self.pending[pair].remove(k);
            } else {
                k += 1;
            }
        }
        if members.len() == 1 {
            return m;
        }
        self.batch_of[i as usize] = self.batches.len() as u32;
        let count = members.len() as u16;
        self.batches.push(Batch {
            members,
            completed: 0,
        });
        Msg { size, count, ..m }
    }

    #[inline]
    fn wake_uplink(&mut self, h: u16) {
        if let Some(at) = self.uplinks[h as usize].wake_needed() {
            self.q.push(at, Ev::UplinkFree(h));
        }
    }

    #[inline]
    fn wake_downlink(&mut self, h: u16) {
        if let Some(at) = self.downlinks[h as usize].wake_needed() {
            self.q.push(at, Ev::DownlinkFree(h));
        }
    }

    fn send_up(&mut self, now: Ps, h: u16, blocks: u32, unit: Unit) {
        let (d, _) = self.uplinks[h as usize].start(now, blocks);
        self.record(h, true, d.start, blocks, &unit);
        if self.track_finish
            && unit.kind == UnitKind::Data
            && unit.last
            && unit.spec.op == Op::Write
        {
            let sent = d.start + blocks as Ps * self.edm.fabric.block_ps();
            self.q.push(sent, Ev::Finished(unit.msg));
        }
        if unit.kind == UnitKind::Data {
            // The switch only forwards data on its circuit (no state to look
            // at on arrival): straight to the egress, `SW_FORWARD_CYCLES` later.
            let (_, dst) = Edm::data_path(unit.spec);
            let ready = d.first_block + self.edm.c(SW_FORWARD_CYCLES);
            self.q.push(ready, Ev::SwitchOut(dst, unit));
        } else {
            self.q.push(d.first_block, Ev::SwitchIn(h, unit));
        }
    }

    /// Sends `unit`, offered to the link at `offered`, down to host `h`,
    /// starting at `start` (from `now` on).
    fn send_down(&mut self, now: Ps, start: Ps, h: u16, blocks: u32, unit: Unit, offered: Ps) {
        let (d, free) = self.downlinks[h as usize].start(start, blocks);
        self.record(h, false, d.start, blocks, &unit);
        if unit.kind == UnitKind::Data {
            self.totals.max_switch_data_wait_ps =
                self.totals.max_switch_data_wait_ps.max(start - offered);
            self.egress_data_until[h as usize] = free;
            if self.edm.cfg.egress_feedback {
                self.egress_granted_ps[h as usize] -= blocks as Ps * self.edm.fabric.block_ps();
                self.egress_feedback(now, h, free);
            }
        }
        if unit.kind == UnitKind::ForwardedRequest {
            // The memory node only answers it: its response chunk is sent
            // `grant_to_data` after the request's last block arrives.
            let data = Self::data_unit(unit);
            let at = d.last_block + self.edm.grant_to_data(true);
            self.q.push(at, Ev::HostSend(h, data));
        } else if unit.kind == UnitKind::Data && unit.spec.op == Op::Write {
            // Nothing at the memory node waits on a write's data (the write
            // stopped being active at its last /G/): no event needed.
            self.totals.end_ps = self.totals.end_ps.max(d.last_block);
            self.data_arrives(d.last_block, unit);
        } else {
            self.q.push(d.last_block, Ev::HostIn(h, unit));
        }
    }

    /// A notification turns visible at `at`: the scheduler looks then.
    fn wake_on_notification(&mut self, at: Ps) {
        self.iterations_since_wake = 0;
        debug_assert!(self.notify_wakes.back().is_none_or(|&b| b <= at));
        self.notify_wakes.push_back(at);
        if !self.notify_tick_queued {
            self.notify_tick_queued = true;
            self.q.push(at, Ev::NotifyTick);
        }
    }

    /// The scheduler's tick for the notifications visible at `now`. Those
    /// that turn visible while the iteration in flight runs would each only
    /// defer to its end: one tick there stands for all of them.
    fn notify_tick(&mut self, now: Ps) {
        self.notify_tick_queued = false;
        while self.notify_wakes.front().is_some_and(|&t| t <= now) {
            self.notify_wakes.pop_front();
        }
        self.scheduler_tick(now);
        let busy_until = self.scheduler_busy_until;
        if self.notify_wakes.front().is_some_and(|&t| t < busy_until) {
            while self.notify_wakes.front().is_some_and(|&t| t <= busy_until) {
                self.notify_wakes.pop_front();
            }
            self.defer_tick(busy_until);
        }
        if let Some(&next) = self.notify_wakes.front() {
            self.notify_tick_queued = true;
            self.q.push(next, Ev::NotifyTick);
        }
    }

    /// A tick when the iteration in flight ends (once per end).
    fn defer_tick(&mut self, at: Ps) {
        if self.deferred_tick != Some(at) {
            self.deferred_tick = Some(at);
            self.q.push(at, Ev::SchedulerTick);
        }
    }

    fn scheduler_tick(&mut self, now: Ps) {
        if now < self.scheduler_busy_until {
            // An iteration is in flight: look again when it ends.
            self.defer_tick(self.scheduler_busy_until);
            return;
        }
        if self.last_iteration_at == Some(now) || self.sched.is_empty() {
            return;
        }
        // Anything but a retry of refused requests is a change (a port
        // released, a notification visible): the count starts again.
        let max = self.edm.cfg.max_iterations;
        let since = self.last_iteration_at.unwrap_or(0);
        if self.retry_at != Some(now)
            || (max > 0
                && self.iterations_since_wake >= max
                && self.sched.released_between(since, now))
        {
            self.iterations_since_wake = 0;
        }
        if max > 0 && self.iterations_since_wake >= max {
            return;
        }
        self.iterations_since_wake += 1;
        let mut it = std::mem::take(&mut self.iteration);
        self.sched.iterate_into(now, &mut it);
        self.last_iteration_at = Some(now);
        let iteration = self.sched.issue_interval_ps();
        self.scheduler_busy_until = now + iteration;
        // The scheduler looks again when a granted port is released (or may
        // be used early by a read's first chunk), and at once if a request
        // was refused: one tick per distinct time (many grants share one).
        let mut ticks = std::mem::take(&mut self.tick_times);
        ticks.clear();
        for g in &it.grants {
            prefetch(&self.queued[g.msg as usize]);
        }
        for g in &it.grants {
            let release = if self.zq {
                self.book_grant(now, g)
            } else {
                self.issue_grant(g);
                g.release
            };
            let early = release.saturating_sub(self.sched.lookahead_ps(g.src, g.dst));
            // Pipelined, its ports are masked while this iteration is in
            // flight: nothing can use them before it ends. (Otherwise the
            // next iteration cannot start before then anyway.)
            let masked = if self.edm.cfg.pipelined_matching {
                now + self.sched.iteration_ps()
            } else {
                0
            };
            for t in [early, release] {
                let t = if t > now { t.max(masked) } else { continue };
                // Grants of one iteration mostly share these: skip repeats.
                if !ticks.iter().rev().take(4).any(|&x| x == t) {
                    ticks.push(t);
                }
            }
        }
        if it.refused {
            ticks.push(now + iteration);
            self.retry_at = Some(now + iteration);
        }
        if it.masked_until > now {
            ticks.push(it.masked_until);
        }
        ticks.sort_unstable();
        ticks.dedup();
        for &at in &ticks {
            self.q.push(at, Ev::SchedulerTick);
        }
        self.tick_times = ticks;
        self.iteration = it;
    }

    /// The /G/ (or forwarded request, a read's first grant) grant `g` sends;
    /// the scheduler's id of its message is free again after its last grant.
    fn grant_unit(&mut self, g: &Grant) -> Unit {
        let (msg, m) = self.queued[g.msg as usize];
        if g.last {
            self.queued_free.push(g.msg);
        }
        let forwarded = g.first && m.op != Op::Write;
        Unit {
            kind: if forwarded {
                UnitKind::ForwardedRequest
            } else {
                UnitKind::Grant
            },
            msg,
            spec: m,
            bytes: g.bytes,
            last: g.last,
            blocks: if forwarded { Edm::request_blocks(m) } else { 1 },
        }
    }

    /// Sends the grant's /G/ (or forwarded request).
    fn issue_grant(&mut self, g: &Grant) {
        let unit = self.grant_unit(g);
        let (m, forwarded) = (unit.spec, unit.kind == UnitKind::ForwardedRequest);
        if self.edm.cfg.egress_feedback {
            // Only the feedback needs what is granted into each egress.
            let data_blocks = message_blocks(Edm::data_kind(m), g.bytes as u16) as Ps;
            self.egress_granted_ps[g.dst as usize] += data_blocks * self.edm.fabric.block_ps();
        }
        let at = g.at + self.edm.c(SW_GEN_GRANT_CYCLES);
        if !forwarded {
            let link = &mut self.downlinks[g.src as usize];
            if let Some(d) = link.control_block_at(at) {
                self.record(g.src, false, d.start, 1, &unit);
                self.q.push(d.last_block, Ev::HostIn(g.src, unit));
                return;
            }
        }
        self.q.push(at, Ev::SwitchOut(g.src, unit));
    }

    /// Zero-queue mode: books grant `g`'s whole circuit at once. Its /G/ (or
    /// forwarded request) takes the first gap on the source's egress from
    /// when it is generated such that the data it asks for, sent by the host
    /// the fixed `grant_to_data` after it, finds the source's uplink free and
    /// its destination's egress free, guard included, when it gets there; the
    /// data then crosses the switch without waiting. Returns when its ports
    /// are released: when a circuit decided then would start right after
    /// this one (later than the scheduler planned if the grant waited).
    fn book_grant(&mut self, now: Ps, g: &Grant) -> Ps {
        let edm = self.edm;
        let grant = self.grant_unit(g);
        let (m, forwarded) = (grant.spec, grant.kind == UnitKind::ForwardedRequest);
        let data = Self::data_unit(grant);
        let block = edm.fabric.block_ps();
        let hop = edm.fabric.hop_ps();
        let (control_len, wire) = (grant.blocks as Ps * block, data.blocks as Ps * block);
        let (to_data, to_egress) = edm.circuit_delays(grant.blocks, forwarded);
        let generated = g.at + edm.c(SW_GEN_GRANT_CYCLES);
        let (src, dst) = (g.src as usize, g.dst as usize);
        self.down_book[src].prune(now);
        self.down_book[dst].prune(now);
        self.up_book[src].prune(now);
        // A pair's data goes in grant order (per-pair order; a later grant
        // could otherwise take an earlier gap).
        let pair = src * self.n + dst;
        let (grant_at, data_up, data_egress) = place_circuit(
            &self.down_book[src],
            &self.up_book[src],
            &self.down_book[dst],
            generated,
            self.pair_data_end[pair],
            control_len,
            wire,
            to_data,
            to_egress,
            edm.start_delay(),
        );
        self.pair_data_end[pair] = data_up + wire;
        if self.track_finish && g.last && m.op == Op::Write {
            self.q.push(data_up + wire, Ev::Finished(grant.msg));
        }
        self.down_book[src].book(grant_at, control_len);
        self.downlinks[src].account(now, grant_at, grant.blocks);
        self.record(g.src, false, grant_at, grant.blocks, &grant);
        let up_clear = self.up_book[src].book_data(data_up, wire);
        debug_assert!(up_clear, "data overlaps on uplink {src}");
        self.uplinks[src].account(now, data_up, data.blocks);
        self.record(g.src, true, data_up, data.blocks, &data);
        if !self.down_book[dst].book_data(data_egress, wire) {
            self.totals.switch_data_conflicts += 1;
        }
        self.downlinks[dst].account(now, data_egress, data.blocks);
        self.record(g.dst, false, data_egress, data.blocks, &data);
        // When the source learns of its last grant (a write stops being
        // active) and when the data's last block arrives.
        if g.last && m.op == Op::Write {
            self.q.push(grant_at + hop, Ev::HostIn(g.src, grant));
        }
        let arrives = data_egress + hop + wire - block;
        self.totals.end_ps = self.totals.end_ps.max(arrives);
        if g.last && m.op != Op::Write {
            self.q.push(arrives, Ev::HostIn(g.dst, data));
        } else {
            // Nothing waits on it at its destination (a write's memory node,
            // or a response chunk before the last): count it now.
            self.data_arrives(arrives, data);
        }
        self.totals.max_grant_wait_ps = self.totals.max_grant_wait_ps.max(grant_at - generated);
        let release = edm.zero_queue_release(data_egress + wire, g.release);
        self.sched.hold_src_until(g.src, release);
        self.sched.hold_dst_until(g.dst, release);
        release
    }

    /// A data unit leaves egress `h` until `free`; the circuits already
    /// granted into `h` follow it, back to back at best, so the egress is
    /// busy until at least `free` plus their wire time, and the next circuit
    /// should be decided no earlier than that minus `circuit_lag` (for
    /// circuits on time that is the port's release already). If later, the
    /// release moves there and the scheduler looks again then.
    fn egress_feedback(&mut self, now: Ps, h: u16, free: Ps) {
        let busy_until = free + self.egress_granted_ps[h as usize];
        let release = busy_until.saturating_sub(self.edm.circuit_lag());
        if self.sched.hold_dst_until(h, release) {
            let early = release.saturating_sub(self.sched.dst_lookahead_ps(h));
            for at in [early, release] {
                if at > now {
                    self.q.push(at, Ev::SchedulerTick);
                }
            }
        }
    }

    /// Data unit `unit`'s last block reaches its destination at `at`; true
    /// if that completes its message.
    fn data_arrives(&mut self, at: Ps, unit: Unit) -> bool {
        let i = unit.msg as usize;
        if unit.spec.count > 1 {
            return self.batch_data_arrives(at, unit);
        }
        self.totals.delivered_bytes += unit.bytes as u64;
        // A message in one chunk is complete without its running count.
        let whole = Edm::data_bytes(unit.spec);
        let done = unit.bytes == whole || {
            self.delivered[i] += unit.bytes;
            self.delivered[i] == whole
        };
        if done {
            // Logged in completion order and written to the records at the end
            // (one pass) rather than to a far-away record now.
            self.completions
                .push((unit.msg, at + self.edm.c(HOST_PROC_DATA_CYCLES)));
            self.completed += 1;
        }
        done
    }

    /// [`Sim::data_arrives`] for a mega-message: each member completes when
    /// the data up to its end has arrived.
    fn batch_data_arrives(&mut self, at: Ps, unit: Unit) -> bool {
        let i = unit.msg as usize;
        self.delivered[i] += unit.bytes;
        let done_to = self.delivered[i];
        let done_at = at + self.edm.c(HOST_PROC_DATA_CYCLES);
        let b = &mut self.batches[self.batch_of[i] as usize];
        while b.completed < b.members.len() && b.members[b.completed].1 <= done_to {
            let member = b.members[b.completed].0;
            // Its payload (the headers between members are not payload).
            self.totals.delivered_bytes += self.msgs[member as usize].size as u64;
            self.completions.push((member, done_at));
            self.completed += 1;
            b.completed += 1;
        }
        done_to == unit.spec.size
    }

    /// The data unit a grant (or forwarded request) asks for.
    fn data_unit(grant: Unit) -> Unit {
        Unit {
            kind: UnitKind::Data,
            blocks: message_blocks(Edm::data_kind(grant.spec), grant.bytes as u16) as u32,
            ..grant
        }
    }

    fn host_in(&mut self, now: Ps, h: u16, unit: Unit) {
        let m = unit.spec;
        match unit.kind {
            UnitKind::Grant => {
                if !self.zq {
                    // (Zero-queue mode booked the data with the grant.)
                    let data = Self::data_unit(unit);
                    self.q
                        .push(now + self.edm.grant_to_data(false), Ev::HostSend(h, data));
                }
                if m.op == Op::Write && unit.last {
                    self.deactivate(now, m);
                }
            }
            UnitKind::Data => {
                if self.data_arrives(now, unit) {
                    self.deactivate(now, m);
                    if self.track_finish {
                        self.finished(now, unit.msg);
                    }
                }
            }
            UnitKind::Notify | UnitKind::Request | UnitKind::ForwardedRequest => {
                unreachable!("the switch does not send these to hosts as such")
            }
        }
    }
}

impl Simulation for Sim<'_> {
    type Event = Ev;

    #[inline(always)]
    fn queue(&mut self) -> &mut EventQueue<Ev> {
        &mut self.q
    }

    #[inline(always)]
    fn issue_event(i: u32) -> Ev {
        Ev::Issue(i)
    }

    #[inline(always)]
    fn handle(&mut self, now: Ps, ev: Ev) -> bool {
        self.handle_event(now, ev);
        true
    }

    fn completed(&self) -> u64 {
        self.completed
    }

    #[inline(always)]
    fn before_event(&self) {
        self.prefetch_ahead();
    }
}

/// Whether `b` must wait for the earlier `a` under the memory-order rule
/// (same requester and memory node assumed): their byte ranges overlap and
/// one of them changes memory.
fn conflict(a: &MessageSpec, b: &MessageSpec) -> bool {
    (a.op != Op::Read || b.op != Op::Read) && overlaps(a.range(), b.range())
}

