//! A switch plane: a switch with its scheduler and a link to every host.
//! A run has one; with the dual switch (paper §3.3) two, each seeing the
//! same demand, in one event list. The hosts, their rules and the
//! receivers are shared (`sim.rs`): one host mirrors each message on both
//! planes and learns of its completion once, whichever plane delivered.
//!
//! The event being handled works on `Sim::plane`; the other plane waits in
//! `Sim::other_plane` and the two are swapped when an event of the other
//! plane comes (a single plane pays nothing for this).
use super::faults::errors::Faults;
use super::link::Link;
use super::model::Edm;
use super::placement::Timeline;
use super::units::Unit;
use crate::edm::config::MemoryOrder;
use crate::edm::scheduler::{Iteration, Scheduler};
use crate::time::Ps;
use std::collections::VecDeque;

/// Every plane, as a set of plane ids (`Sim::on_planes`).
pub(super) const ALL_PLANES: u8 = 0b11;

pub(super) struct Plane {
    /// 0, or 1 for a dual switch's second plane (events name it).
    pub(super) id: u8,
    pub(super) uplinks: Vec<Link<Unit>>,
    pub(super) downlinks: Vec<Link<Unit>>,
    /// Until when each switch egress is sending a data unit.
    pub(super) egress_data_until: Vec<Ps>,
    /// Wire time of the data units granted into each egress that have not
    /// started there yet (kept only with egress feedback).
    pub(super) egress_granted_ps: Vec<Ps>,
    pub(super) sched: Scheduler,
    pub(super) scheduler_busy_until: Ps,
    pub(super) last_iteration_at: Option<Ps>,
    pub(super) deferred_tick: Option<Ps>,
    /// Iterations in a row that only retried refused requests (capped by
    /// `max_iterations`), and when the next such retry is due.
    pub(super) iterations_since_wake: u32,
    pub(super) retry_at: Option<Ps>,
    /// Scratch of `scheduler_tick`: the times it asks to look again.
    pub(super) tick_times: Vec<Ps>,
    /// Scratch: the last iteration's grants.
    pub(super) iteration: Iteration,
    /// When notifications become visible, in order (the delay is fixed),
    /// and whether a `NotifyTick` for the first is queued: one event per
    /// distinct time the scheduler is idle at, not one per notification.
    pub(super) notify_wakes: VecDeque<Ps>,
    pub(super) notify_tick_queued: bool,
    /// The messages in the scheduler, by the id it knows them by: (index,
    /// what the grant's units need). Ids are reused (`queued_free`), so these
    /// stay few and in cache where `msgs` (all messages) would miss.
    pub(super) queued: Vec<(u32, super::units::Msg)>,
    pub(super) queued_free: Vec<u32>,
    /// Lossy links: per scheduler id, the chunk it grants again (`NO_CHUNK`:
    /// a message's own notification).
    pub(super) queued_chunk: Vec<u32>,
    /// Zero-queue mode (`EdmConfig::zero_queue`; empty otherwise): what each
    /// uplink and switch egress has booked.
    pub(super) up_book: Vec<Timeline>,
    pub(super) down_book: Vec<Timeline>,
    /// When the data granted so far leaves its uplink, per (source,
    /// destination) pair.
    pub(super) pair_data_end: Vec<Ps>,
    /// Each host's /N/ and requests waiting for a gap, in order, with when
    /// each is ready. A `HostControl` look is queued exactly while the queue
    /// is not empty (see `host_controls`).
    pub(super) controls: Vec<VecDeque<(Ps, Unit)>>,
    /// The error draws and failures of this plane's links.
    pub(super) faults: Faults,
    /// Lossy links, per message: whether its requester has heard of a
    /// grant on this plane, and whether this plane's switch holds (or held)
    /// its notification.
    pub(super) heard: Vec<bool>,
    pub(super) at_switch: Vec<bool>,
    /// `data_recovery = "protocol"`, per message: when the switch is done
    /// with it (its last chunk's data passed; `Ps::MAX`: not yet).
    pub(super) done_at: Vec<Ps>,
    /// Dual switch, or a switch that may drop demand, per message: the
    /// chunks this plane has granted (not counting grants again), which says
    /// which chunk of the message the next one is on both planes (and after
    /// its demand was dropped and sent again).
    pub(super) chunks_granted: Vec<u32>,
    /// Per host: the switch sees its port down (a count: failures may overlap).
    pub(super) port_seen_down: Vec<u32>,
    /// When the switch last failed (its timers set before then are void).
    pub(super) switch_failed_at: Option<Ps>,
}

impl Plane {
    pub(super) fn new(edm: &Edm, id: u8, messages: usize) -> Plane {
        let n = edm.fabric.nodes;
        let f = &edm.fabric;
        let zq = edm.cfg.zero_queue;
        let lossy = edm.cfg.faults.lossy();
        let per_message = |kept: bool| vec![false; if kept { messages } else { 0 }];
        // Each plane's links carry their own background frames.
        let stream = 2 * n as u64 * id as u64;
        Plane {
            id,
            uplinks: (0..n).map(|h| edm.link(stream + 2 * h as u64)).collect(),
            downlinks: (0..n)
                .map(|h| edm.link(stream + 2 * h as u64 + 1))
                .collect(),
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
                if edm.cfg.memory_order == MemoryOrder::Address {
                    s.without_pair_order();
                }
                if edm.cfg.pipelined_matching {
                    s.pipeline(f.scheduler_cycle_ps);
                }
                if zq {
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
            queued: Vec::new(),
            queued_free: Vec::new(),
            queued_chunk: Vec::new(),
            up_book: vec![edm.uplink_timeline(); if zq { n } else { 0 }],
            down_book: vec![edm.egress_timeline(); if zq { n } else { 0 }],
            pair_data_end: vec![0; if zq { n * n } else { 0 }],
            controls: vec![VecDeque::new(); if zq { n } else { 0 }],
            faults: Faults::new(&edm.cfg.faults, id, n),
            heard: per_message(lossy),
            at_switch: per_message(lossy),
            done_at: vec![
                Ps::MAX;
                if edm.cfg.faults.protocol_recovery() {
                    messages
                } else {
                    0
                }
            ],
            chunks_granted: vec![
                0;
                if Plane::chunks_named(edm) {
                    messages
                } else {
                    0
                }
            ],
            port_seen_down: vec![0; n],
            switch_failed_at: None,
        }
    }

    /// Whether a message's chunks are named by their place in it (the k-th
    /// grant of its demand, on either plane, and again after the demand
    /// was dropped, or a read's request re-sent after a lost response: the
    /// receiver keeps the first copy of each).
    pub(super) fn chunks_named(edm: &Edm) -> bool {
        edm.cfg.faults.dual_switch
            || edm.cfg.faults.drops_demand()
            || edm.cfg.faults.protocol_recovery()
    }
}
