//! One EDM run: the state of hosts, links, switch and scheduler, and the
//! handling of the events that move units between them (the units and
//! events themselves are in `units.rs`). State one rule owns is a part held
//! here as a field, with private fields and methods: `ordering.rs` (fences,
//! memory order), `batching.rs`, `records.rs`, `memory_nodes.rs`,
//! `faults/acks.rs` and `faults/chunks.rs`. The hosts' rules are in `hosts.rs`, the switch's
//! scheduling and circuits in `switch.rs`, the faults' in `faults/`.
use super::batching::Batching;
use super::faults::acks::Acks;
use super::faults::chunks::Chunks;
use super::faults::dedup::{Outcomes, RmwVerdict};
use super::faults::message_recovery::MessageRecovery;
use super::faults::DataRecovery;
use super::link::frame_stats;
use super::memory_nodes::MemoryNodes;
use super::model::{Edm, EdmCounters, Transmission};
use super::ordering::Ordering;
use super::plane::{Plane, ALL_PLANES};
use super::records::Records;
use super::units::UnitKind;
use super::units::{Ev, Msg, Unit};
use crate::background::FrameStats;
use crate::edm::config::MemoryOrder;
use crate::engine::{
    self, prefetch, utilisation, EventQueue, Feed, Outcome, Progress, RecordSink, Simulation,
    Totals,
};
use crate::memory::protection::Access;
use crate::time::Ps;
use crate::workload::{MessageSpec, Op};
use edm_proto::message::message_blocks;
use std::collections::VecDeque;

pub(super) struct Sim<'a> {
    pub(super) edm: &'a Edm,
    pub(super) msgs: &'a [MessageSpec],
    pub(super) n: usize,
    pub(super) q: EventQueue<Ev>,
    /// The switch plane the event being handled belongs to, and with the
    /// dual switch the other one (`plane.rs`).
    pub(super) plane: Plane,
    pub(super) other_plane: Option<Box<Plane>>,
    /// Active notifications per (requester, memory) and the messages waiting behind X.
    pub(super) active: Vec<u8>,
    pub(super) pending: Vec<VecDeque<(u32, Msg)>>,
    pub(super) delivered: Vec<u32>,
    /// The records and the completion log (`records.rs`).
    pub(super) records: Records<'a>,
    pub(super) totals: Totals,
    /// EDM's own counters, handed to `totals` when the run ends.
    pub(super) counters: EdmCounters,
    /// Zero-queue mode (`EdmConfig::zero_queue`).
    pub(super) zq: bool,
    /// Each unit sent, when tracing.
    pub(super) trace: Option<Vec<Transmission>>,
    /// Fences and the memory-order rule (`ordering.rs`).
    pub(super) ordering: Ordering,
    /// Mega-messages (`batching.rs`).
    pub(super) batching: Batching,
    /// Faults (`FaultConfig`): whether links lose units (then the parts
    /// below and the planes' fault state are kept) and the read timeout.
    pub(super) lossy: bool,
    pub(super) read_timeout: Ps,
    /// Lossy links: every chunk granted (`faults/chunks.rs`).
    pub(super) chunks: Chunks,
    /// Per message, where faults and recovery stand (`faults/message_recovery.rs`).
    pub(super) recovery: MessageRecovery,
    /// The memory nodes' DRAMs and protection (`memory_nodes.rs`).
    pub(super) memory: MemoryNodes,
    /// Lossy links with `data_recovery = "protocol"`
    /// (`FaultConfig::protocol_recovery`): the switch's timer sees only
    /// what reached it, and every message gets an outcome
    /// (`faults/outcome.rs`); with lossy links the retry buffers and
    /// duplicate records (`faults/dedup.rs`).
    pub(super) protocol: bool,
    pub(super) outcomes: Option<Outcomes>,
    /// The memory nodes' write acknowledgements (/A/).
    pub(super) acks: Acks,
}

impl<'a> Sim<'a> {
    pub(super) fn new(edm: &'a Edm, msgs: &'a [MessageSpec]) -> Self {
        let n = edm.fabric.nodes;
        let address = edm.cfg.memory_order == MemoryOrder::Address;
        let faults = &edm.cfg.faults;
        let mut sim = Sim {
            edm,
            msgs,
            n,
            q: EventQueue::default(),
            plane: Plane::new(edm, 0, msgs.len()),
            other_plane: faults
                .dual_switch
                .then(|| Box::new(Plane::new(edm, 1, msgs.len()))),
            active: vec![0; n * n],
            pending: vec![VecDeque::new(); n * n],
            delivered: vec![0; msgs.len()],
            records: Records::new(),
            totals: Totals::default(),
            counters: EdmCounters::default(),
            zq: edm.cfg.zero_queue,
            trace: None,
            ordering: Ordering::new(n, msgs, address),
            batching: Batching::new(edm.cfg.batch_bytes, msgs.len()),
            lossy: faults.lossy(),
            read_timeout: faults.read_timeout_ns * 1000,
            chunks: Chunks::new(Plane::chunks_named(edm), msgs.len()),
            recovery: MessageRecovery::new(faults, msgs.len()),
            memory: MemoryNodes::new(edm, msgs.len()),
            protocol: faults.protocol_recovery(),
            // (The protocol's bounded record; other lossy runs, the ideal
            // NACK's bound and the dual switch alone, keep an exact one.)
            outcomes: faults.lossy().then(|| {
                if faults.protocol_recovery() {
                    Outcomes::new(
                        n * n,
                        msgs.len(),
                        faults.dup_window,
                        faults.retry_unresolved,
                        faults.dup_rmw_results,
                    )
                } else {
                    Outcomes::new(n * n, msgs.len(), u32::MAX, 0, u32::MAX)
                }
            }),
            acks: Acks::new(n),
        };
        sim.schedule_failures();
        sim
    }

    #[inline]
    pub(super) fn record(&mut self, host: u16, up: bool, start: Ps, blocks: u32, unit: &Unit) {
        if let Some(t) = &mut self.trace {
            t.push(Transmission {
                host,
                up,
                start,
                blocks,
                kind: unit.kind,
                msg: unit.msg,
                plane: self.plane.id,
                chunk: unit.chunk,
            });
        }
    }

    /// Runs the messages `feed` issues (`self.msgs`, the feed's messages).
    pub(super) fn run(mut self, feed: Feed, progress: Progress) -> (Outcome, Vec<Transmission>) {
        self.records
            .start(self.edm, self.msgs, feed.reads_completions());
        let run = engine::run(&mut self, feed, progress);
        self.finish(run)
    }

    /// [`Sim::run`] of an open loop handing the records to `sink`
    /// ([`Protocol::run_streamed`]): during the run when no fault can change
    /// a finished message's record.
    pub(super) fn run_streamed(mut self, progress: Progress, sink: &'a mut RecordSink) -> Outcome {
        let during = !self.recovery.tracks_ends() && !self.lossy;
        self.records.stream_to(sink, during);
        let msgs = self.msgs;
        self.run(Feed::Open(msgs), progress).0
    }

    /// The run's end: settles outcomes, closes the records, and adds up
    /// every link's and plane's figures.
    fn finish(mut self, run: engine::RunEnd) -> (Outcome, Vec<Transmission>) {
        self.settle_outcomes();
        self.totals.events = run.events;
        self.totals.end_ps = self.totals.end_ps.max(run.end_ps);
        self.records.close(self.msgs, &mut self.totals);
        let end = self.totals.end_ps;
        // Per plane, then the busier plane's utilisation, every frame.
        let (mut up, mut down) = ((0.0, 0.0), (0.0, 0.0));
        let mut frames = FrameStats::default();
        self.enter(0);
        let counters = &mut self.counters;
        for plane in std::iter::once(&mut self.plane).chain(self.other_plane.as_deref_mut()) {
            for link in plane.uplinks.iter_mut().chain(&mut plane.downlinks) {
                link.apply_controls(Ps::MAX);
            }
            let busiest = |a: (f64, f64), b: (f64, f64)| (a.0.max(b.0), a.1.max(b.1));
            up = busiest(
                up,
                utilisation(plane.uplinks.iter().map(|l| l.busy_ps), end),
            );
            down = busiest(
                down,
                utilisation(plane.downlinks.iter().map(|l| l.busy_ps), end),
            );
            frames.merge(&frame_stats(&mut plane.uplinks, end));
            frames.merge(&frame_stats(&mut plane.downlinks, end));
            counters.max_notification_queue = counters
                .max_notification_queue
                .max(plane.sched.max_occupancy);
            counters.scheduler_iterations += plane.sched.iterations;
            counters.faults.links_disabled += plane.faults.links_disabled;
            debug_assert!(plane.up_book.iter().all(|t| t.overlaps == 0));
            debug_assert!(plane.down_book.iter().all(|t| t.overlaps == 0));
            debug_assert!(plane.controls.iter().all(VecDeque::is_empty));
        }
        (self.totals.uplink_util_mean, self.totals.uplink_util_max) = up;
        (
            self.totals.downlink_util_mean,
            self.totals.downlink_util_max,
        ) = down;
        self.counters.frames = frames;
        self.totals.protocol = Some(Box::new(self.counters));
        self.memory.report(&mut self.totals);
        (
            Outcome {
                records: self.records.into_vec(),
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
        // (A message that finishes also reads its pair's memory-order lists.)
        match self.q.ahead(2) {
            Some(Ev::HostIn(_, unit)) if ends(unit) => {
                prefetch(&self.pending[self.pair(unit.spec)]);
            }
            Some(Ev::Finished(_, m)) if self.ordering.by_address() => {
                self.ordering.prefetch_pair(m.requester, m.memory);
            }
            _ => {}
        }
        match self.q.ahead(0) {
            Some(Ev::HostIn(_, unit)) if ends(unit) => {
                if let Some(front) = self.pending[self.pair(unit.spec)].front() {
                    prefetch(front);
                }
            }
            Some(Ev::Finished(_, m)) if self.ordering.by_address() => {
                self.ordering.prefetch_first(m.requester, m.memory);
            }
            _ => {}
        }
    }

    /// Memory-order rule: starts loading what the next issues (in an open
    /// loop the next messages) will read of their pairs' lists: message
    /// `i + 2`'s list header, and `i + 1`'s first entries (its header asked
    /// for at the last issue). Hints only: handling is unchanged.
    #[inline(always)]
    fn prefetch_order_of_next_issues(&self, i: usize) {
        if !self.ordering.by_address() {
            return;
        }
        if let Some(m) = self.msgs.get(i + 2) {
            self.ordering.prefetch_pair(m.requester, m.memory);
        }
        if let Some(m) = self.msgs.get(i + 1) {
            self.ordering.prefetch_first(m.requester, m.memory);
        }
    }

    pub(super) fn pair(&self, m: Msg) -> usize {
        m.requester as usize * self.n + m.memory as usize
    }

    // (Inlined into the run loop, its one caller.)
    #[inline(always)]
    fn handle_event(&mut self, now: Ps, ev: Ev) {
        let edm = self.edm;
        match ev {
            Ev::Issue(i) => {
                if self.records.streamed_during() {
                    self.records.hold(self.edm, self.msgs, i);
                }
                self.prefetch_order_of_next_issues(i as usize);
                self.issue(now, i)
            }
            Ev::Finished(i, m) => self.finished(now, i, m),
            Ev::HostSend(h, unit) if unit.kind == UnitKind::Notify => {
                let d = self.plane.uplinks[h as usize].insert_control_block(now);
                self.record(h, true, d.start, 1, &unit);
                self.q.push(d.first_block, Ev::SwitchIn(h, unit));
                self.wake_uplink(h);
            }
            Ev::HostSend(h, unit) => {
                let high = unit.kind == UnitKind::Data;
                let link = &mut self.plane.uplinks[h as usize];
                match link.start_time(now, high) {
                    Some(at) => self.send_up(at, h, unit.blocks, unit),
                    None => link.wait(now, unit.blocks, high, unit),
                }
                self.wake_uplink(h);
            }
            Ev::UplinkFree(_, h) => {
                if let Some((blocks, unit, _)) = self.plane.uplinks[h as usize].next(now) {
                    self.send_up(now, h, blocks, unit);
                }
                self.wake_uplink(h);
            }
            Ev::DownlinkFree(_, h) => {
                if let Some((blocks, unit, offered)) = self.plane.downlinks[h as usize].next(now) {
                    self.send_down(now, now, h, blocks, unit, offered);
                }
                self.wake_downlink(h);
            }
            Ev::SwitchIn(from, unit) => {
                let m = unit.spec;
                match unit.kind {
                    UnitKind::Notify | UnitKind::Request => {
                        if self.lossy && !self.notification_accepted(now, unit) {
                            return;
                        }
                        let (src, dst) = Edm::data_path(m);
                        debug_assert!(unit.kind != UnitKind::Notify || src == from);
                        let visible = now + edm.notification_delay(unit.kind == UnitKind::Request);
                        let first_extra = if m.op == Op::Write {
                            0
                        } else {
                            edm.first_response_extra(m)
                        };
                        let id = self.enqueue(unit.msg, m);
                        self.plane.sched.notify(
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
                let d = self.plane.downlinks[to as usize].insert_control_block(now);
                self.record(to, false, d.start, 1, &unit);
                self.q.push(d.last_block, Ev::HostIn(to, unit));
                self.wake_downlink(to);
            }
            Ev::SwitchOut(to, unit) => {
                // Data and forwarded requests (the first grant of a response) first.
                let high = matches!(unit.kind, UnitKind::Data | UnitKind::ForwardedRequest);
                if high && now < self.plane.egress_data_until[to as usize] {
                    self.counters.switch_data_conflicts += 1;
                }
                let link = &mut self.plane.downlinks[to as usize];
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
            Ev::SchedulerTick(_) => self.scheduler_tick(now),
            Ev::HostControl(_, h) => self.host_controls(now, h),
            Ev::NotifyTick(_) => self.notify_tick(now),
            Ev::HostIn(h, unit) => self.host_in(now, h, unit),
            Ev::NotifyCheck(_)
            | Ev::ChunkCheck(_)
            | Ev::ReadTimeout(_)
            | Ev::GiveUp(_)
            | Ev::AckIn(_)
            | Ev::SwitchFails(_)
            | Ev::PortSeen(..) => {
                unreachable!("handled by `handle`")
            }
        }
    }

    #[inline]
    fn wake_uplink(&mut self, h: u16) {
        if let Some(at) = self.plane.uplinks[h as usize].wake_needed() {
            self.q.push(at, Ev::UplinkFree(self.plane.id, h));
        }
    }

    #[inline]
    fn wake_downlink(&mut self, h: u16) {
        if let Some(at) = self.plane.downlinks[h as usize].wake_needed() {
            self.q.push(at, Ev::DownlinkFree(self.plane.id, h));
        }
    }

    fn send_up(&mut self, now: Ps, h: u16, blocks: u32, unit: Unit) {
        let (d, _) = self.plane.uplinks[h as usize].start(now, blocks);
        self.record(h, true, d.start, blocks, &unit);
        // (A write finishes for the memory-order rule and fences when it
        // is acknowledged, `acknowledge`; with lossy links and the ideal
        // NACK when its data is in memory.)
        if self.protocol && unit.kind == UnitKind::Data {
            let sent = d.start + blocks as Ps * self.edm.fabric.block_ps();
            self.write_sent(sent, &unit);
        }
        if unit.kind == UnitKind::Data {
            // The switch only forwards data on its circuit (no state to look
            // at on arrival): straight to the egress, `SW_FORWARD_CYCLES` later.
            let (_, dst) = Edm::data_path(unit.spec);
            let ready = d.first_block + self.edm.c(self.edm.cfg.steps.sw_forward);
            self.q.push(ready, Ev::SwitchOut(dst, unit));
        } else {
            self.q.push(d.first_block, Ev::SwitchIn(h, unit));
        }
    }

    /// Sends `unit`, offered to the link at `offered`, down to host `h`,
    /// starting at `start` (from `now` on).
    fn send_down(&mut self, now: Ps, start: Ps, h: u16, blocks: u32, unit: Unit, offered: Ps) {
        let (d, free) = self.plane.downlinks[h as usize].start(start, blocks);
        self.record(h, false, d.start, blocks, &unit);
        if unit.kind == UnitKind::Data {
            self.totals.max_switch_data_wait_ps =
                self.totals.max_switch_data_wait_ps.max(start - offered);
            self.plane.egress_data_until[h as usize] = free;
            if self.edm.cfg.egress_feedback {
                self.plane.egress_granted_ps[h as usize] -=
                    blocks as Ps * self.edm.fabric.block_ps();
                self.egress_feedback(now, h, free);
            }
        }
        if self.lossy && !self.arrives_intact(h, d.last_block, &unit) {
            // Dropped by its receiver (`arrives_intact` counted it); the
            // switch's chunk check grants the chunk again.
            return;
        }
        if unit.kind == UnitKind::ForwardedRequest {
            // The memory node only answers it: its response chunk is sent
            // `grant_to_data` after the request's last block arrives.
            let at = self.response_at(d.last_block, unit, false);
            self.request_reaches_memory(&unit);
            if let Some(data) = self.data_sent(unit) {
                self.q.push(at, Ev::HostSend(h, data));
            }
        } else if unit.kind == UnitKind::Data && unit.spec.op == Op::Write && !self.lossy {
            // Nothing at the memory node waits on a write's data (the write
            // stopped being active at its last /G/): no event needed. (With
            // lossy links one, as with the dual switch, whose copies race:
            // its /A/ is decided in its arrival's event on one plane or two.)
            self.totals.end_ps = self.totals.end_ps.max(d.last_block);
            if self.data_arrives(d.last_block, unit) && self.finish_on_arrival() {
                self.q.push(d.last_block, Ev::Finished(unit.msg, unit.spec));
            }
        } else {
            self.q.push(d.last_block, Ev::HostIn(h, unit));
        }
    }

    /// A forwarded request's last block reaches its memory node at
    /// `arrived`: when its response's first chunk leaves (with the DRAM
    /// model, once the response can stream from the DRAM; an RMW's write
    /// follows its read). With `trial`, the DRAM is left as it was
    /// (zero-queue booking tries circuits before it fixes one).
    pub(super) fn response_at(&mut self, arrived: Ps, request: Unit, trial: bool) -> Ps {
        let fixed = self.edm.grant_to_data(true);
        // A denied request, and an RMW's copy answered from the duplicate
        // record, are answered on their circuit without a DRAM access.
        if self.rmw_replays(&request) {
            return arrived + fixed;
        }
        self.memory
            .response_at(self.edm, self.msgs, &request, (arrived, fixed), trial)
    }

    /// Whether a write finishes at its requester (the memory-order rule,
    /// fences) when its data is in memory: with lossy links and the ideal
    /// NACK (`data_recovery = "ideal"`); else when it is acknowledged.
    #[inline(always)]
    pub(super) fn finish_on_arrival(&self) -> bool {
        self.lossy
            && self.edm.cfg.faults.data_recovery == DataRecovery::Ideal
            && self.ordering.tracked()
    }

    /// Whether every message goes on two switch planes (the dual switch).
    #[inline(always)]
    pub(super) fn mirrored(&self) -> bool {
        self.other_plane.is_some()
    }

    /// A write's data unit reaches its memory node at `at` (posted: only
    /// the DRAM's queue sees it).
    /// (A denied write is dropped: never written.)
    pub(super) fn write_to_memory(&mut self, at: Ps, unit: &Unit) {
        self.memory.write(at, unit, self.msgs);
    }

    /// Message `i`'s verdict at its memory node (None: protection off).
    pub(super) fn access(&mut self, i: u32) -> Option<Access> {
        self.memory.access(i, self.msgs)
    }

    /// Whether message `i`'s memory node denied it.
    pub(super) fn denied(&self, i: u32) -> bool {
        self.memory.denied(i)
    }

    /// The data unit a host sends on `grant` (or the forwarded request): the
    /// one it asks for, but for a denied read or RMW (as the RTL's memory
    /// node) an empty response (STATUS_DENIED, header only, its last) on the
    /// forwarded request and nothing on the later grants.
    pub(super) fn data_sent(&mut self, grant: Unit) -> Option<Unit> {
        let data = Self::data_unit(grant);
        if grant.spec.op == Op::Write || self.access(grant.msg) != Some(Access::Denied) {
            return Some(data);
        }
        (grant.kind == UnitKind::ForwardedRequest).then(|| Unit {
            bytes: 0,
            last: true,
            blocks: message_blocks(Edm::data_kind(grant.spec), 0) as u32,
            ..data
        })
    }

    /// The data unit a grant (or forwarded request) asks for.
    pub(super) fn data_unit(grant: Unit) -> Unit {
        Unit {
            kind: UnitKind::Data,
            blocks: message_blocks(Edm::data_kind(grant.spec), grant.bytes as u16) as u32,
            ..grant
        }
    }
}

/// The memory nodes' duplicate record (`faults/dedup.rs`), when the run
/// keeps one.
impl Sim<'_> {
    /// The verdict on RMW copy `request` at its memory node (None: not an
    /// RMW, or no record), without recording it.
    fn rmw_verdict(&mut self, request: &Unit) -> Option<RmwVerdict> {
        if request.spec.op != Op::Rmw {
            return None;
        }
        let pair = self.pair(request.spec);
        let outcomes = self.outcomes.as_mut()?;
        // (Peeking at the window moves nothing it would not move anyway:
        // the request's arrival.)
        let mut scratch = super::faults::FaultCounters::default();
        let place = outcomes.arrives(request.msg, pair, &mut scratch);
        Some(outcomes.rmw_verdict(request.msg, pair, place))
    }

    /// Whether the forwarded request `request` is an RMW copy its memory
    /// node answers without applying it (its DRAM is not touched).
    pub(super) fn rmw_replays(&mut self, request: &Unit) -> bool {
        self.rmw_verdict(request)
            .is_some_and(|v| v != RmwVerdict::Apply)
    }

    /// A forwarded request reaches its memory node intact: the source's
    /// window moves on to it, and an RMW's copy is applied, answered with
    /// the kept result, or refused.
    pub(super) fn request_reaches_memory(&mut self, request: &Unit) {
        debug_assert_eq!(request.kind, UnitKind::ForwardedRequest);
        if self.outcomes.is_none() || self.denied(request.msg) {
            return;
        }
        let pair = self.pair(request.spec);
        let outcomes = self.outcomes.as_mut().expect("checked above");
        let place = outcomes.arrives(request.msg, pair, &mut self.counters.faults);
        if request.spec.op == Op::Rmw {
            let verdict = outcomes.rmw_verdict(request.msg, pair, place);
            outcomes.rmw_done(request.msg, pair, verdict, &mut self.counters.faults);
        }
    }
}

/// The dual switch's planes: which one events work on.
impl Sim<'_> {
    /// Makes plane `id` the one events work on (with one plane: it is).
    #[inline(always)]
    pub(super) fn enter(&mut self, id: u8) {
        if self.plane.id != id {
            let other = self
                .other_plane
                .as_mut()
                .expect("an event names a plane the run has");
            std::mem::swap(&mut self.plane, other);
        }
    }

    /// Runs `act` on each plane of `planes` (a bit per plane id) in turn (a
    /// host mirroring a message), and returns to the plane it was on.
    pub(super) fn on_planes(&mut self, planes: u8, mut act: impl FnMut(&mut Self)) {
        if self.other_plane.is_none() {
            return act(self);
        }
        let back = self.plane.id;
        for id in (0..2).filter(|id| planes & 1 << id != 0) {
            self.enter(id);
            act(self);
        }
        self.enter(back);
    }

    /// The planes host `h` sends a message's /N/ or request on at `at`
    /// (a bit per plane id): with the dual switch, those whose link it does
    /// not see down (docs/faults.md §4), as the RTL's `edm_mirror` leaves
    /// out a plane whose link guard reports it down; every plane if it sees
    /// them all down (it has nothing better: the retries and `give_up_ns`
    /// take over).
    pub(super) fn mirror_planes(&self, h: u16, at: Ps) -> u8 {
        let Some(other) = self.other_plane.as_deref() else {
            return ALL_PLANES;
        };
        let seen_up = [&self.plane, other]
            .into_iter()
            .filter(|p| !p.faults.seen_down(h, at))
            .fold(0, |mask, p| mask | 1 << p.id);
        if seen_up == 0 {
            ALL_PLANES
        } else {
            seen_up
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
        if self.mirrored() {
            if let Some(plane) = ev.plane() {
                self.enter(plane);
            }
        }
        // A timer that finds nothing to do does not extend the run.
        match ev {
            Ev::NotifyCheck(unit) => self.notify_check(now, unit),
            Ev::ChunkCheck(grant) => self.chunk_check(now, grant),
            Ev::ReadTimeout(i) => self.read_timeout(now, i),
            Ev::GiveUp(i) => self.give_up(now, i),
            Ev::AckIn(i) => self.ack_arrives(now, i),
            // (A failure does not extend the run.)
            Ev::SwitchFails(_) => self.switch_fails(now),
            Ev::PortSeen(_, h, down) => self.port_seen(h, down),
            _ => {
                self.handle_event(now, ev);
                self.records.write_full_batch(self.msgs);
                true
            }
        }
    }

    fn completed(&self) -> u64 {
        self.records.completed()
    }

    #[inline(always)]
    fn completion_log(&self) -> &[(u32, Ps)] {
        self.records.completion_log()
    }

    #[inline(always)]
    fn before_event(&self) {
        self.prefetch_ahead();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::FabricConfig;
    use crate::edm::config::EdmConfig;
    use crate::edm::records::COMPLETION_BATCH;
    use crate::engine::Record;
    use crate::workload::{assign_addresses, OpenLoop, Roles, SizeCdf};

    /// The open loop's issues, but a feed that reads the completion log (so
    /// the run keeps it whole, as a closed loop does).
    struct Reading<'a>(engine::InOrder<'a>);

    impl engine::Issues for Reading<'_> {
        fn next_time(&self) -> Option<Ps> {
            self.0.next_time()
        }
        fn take(&mut self) -> u32 {
            self.0.take()
        }
        fn after_event(&mut self, now: Ps, completions: &[(u32, Ps)]) {
            self.0.after_event(now, completions)
        }
        fn total(&self) -> u64 {
            self.0.total()
        }
    }

    /// EDM's rules on 16 nodes and `messages` 64 B messages at `load`, half
    /// writes, addresses in 1 MB.
    fn micro_run(load: f64, messages: usize, seed: u64) -> (Edm, Vec<MessageSpec>) {
        let mut msgs = OpenLoop {
            nodes: 16,
            roles: Roles::AllToAll,
            link_gbps: 100,
            load,
            write_ratio: 0.5,
            sizes: SizeCdf::fixed(64),
            messages,
            seed,
        }
        .generate();
        assign_addresses(&mut msgs, 1 << 20, seed);
        let fabric = FabricConfig {
            nodes: 16,
            ..FabricConfig::default()
        };
        (Edm::new(fabric, EdmConfig::edm_rules()), msgs)
    }

    /// Records written from the completion log in batches during the run
    /// (several batches here) are those written from the whole log at its end.
    #[test]
    fn completions_written_in_batches_give_the_records_of_the_whole_log() {
        let (edm, msgs) = micro_run(0.7, 3 * COMPLETION_BATCH + 123, 4);
        let (batched, _) = Sim::new(&edm, &msgs).run(Feed::Open(&msgs), &mut |_, _| {});
        let mut kept = Sim::new(&edm, &msgs);
        kept.records.start(&edm, &msgs, true);
        let run = engine::run_fed(
            &mut kept,
            &mut Reading(engine::InOrder::new(&msgs)),
            &mut |_, _| {},
        );
        let (kept, _) = kept.finish(run);
        let complete = |o: &Outcome| o.records.iter().map(|r| r.complete_ps).collect::<Vec<_>>();
        assert!(complete(&batched).iter().all(Option::is_some));
        assert_eq!(complete(&batched), complete(&kept));
        assert_eq!(batched.totals.events, kept.totals.events);
    }

    /// A streamed run hands every record once, in batches of at most the
    /// sink's, the same records a run returns; and it holds far fewer at once
    /// than the run's messages, also past saturation (where some message
    /// waits nearly the whole run).
    #[test]
    fn a_streamed_run_hands_the_records_of_a_run_in_bounded_batches() {
        for load in [0.3, 0.9] {
            streams_in_bounded_batches(load);
        }
    }

    fn streams_in_bounded_batches(load: f64) {
        let messages = 10 * COMPLETION_BATCH;
        let (edm, msgs) = micro_run(load, messages, 5);
        let (whole, _) = Sim::new(&edm, &msgs).run(Feed::Open(&msgs), &mut |_, _| {});
        let batch = 5000;
        let mut handed: Vec<Option<Record>> = vec![None; messages];
        let mut largest = 0;
        let mut hand = |ids: &[u32], records: &[Record]| {
            assert_eq!(ids.len(), records.len());
            largest = largest.max(records.len());
            for (&i, r) in ids.iter().zip(records) {
                assert!(handed[i as usize].replace(r.clone()).is_none(), "once");
            }
        };
        let sink = &mut RecordSink {
            batch,
            hand: &mut hand,
        };
        let streamed = Sim::new(&edm, &msgs).run_streamed(&mut |_, _| {}, sink);
        assert!(streamed.records.is_empty());
        assert!(largest <= batch);
        let key = |r: &Record| (r.complete_ps, r.alone_ps, r.acked_ps, r.timed_out, r.lost);
        let handed: Vec<Record> = handed.into_iter().map(|r| r.expect("handed")).collect();
        assert!(handed.iter().map(key).eq(whole.records.iter().map(key)));
        assert_eq!(streamed.totals.events, whole.totals.events);
        assert_eq!(whole.totals.max_records_held, messages);
        // Held: the messages in flight (past saturation a backlog that grows
        // with the run), those completed since the completion log was last
        // written, and a sink batch.
        let mut steps: Vec<(Ps, i64)> = msgs.iter().map(|m| (m.issue_ps, 1)).collect();
        steps.extend(whole.records.iter().map(|r| (r.complete_ps.unwrap(), -1)));
        steps.sort_unstable();
        let mut in_flight = 0;
        let most_in_flight = steps.iter().fold(0, |most, &(_, d)| {
            in_flight += d;
            most.max(in_flight)
        }) as usize;
        let held = streamed.totals.max_records_held;
        assert!(
            held <= most_in_flight + COMPLETION_BATCH + batch,
            "{load}: {held}"
        );
        if load < 0.5 {
            assert!(held < messages / 4, "{held}");
        }
    }
}
