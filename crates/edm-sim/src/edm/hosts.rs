//! EDM's hosts: when a message may go (past fences and the memory-order
//! rule, `ordering.rs`; at most X active notifications per destination;
//! batched, `batching.rs`), its /N/ or request, and what a host does with
//! the grants and data it receives.
use super::model::Edm;
use super::plane::ALL_PLANES;
use super::sim::Sim;
use super::units::UnitKind;
use super::units::{Ev, Msg, Unit, NO_CHUNK};
use crate::time::Ps;
use crate::workload::Op;

impl Sim<'_> {
    /// Message `i` is issued: it goes unless a fence or the memory-order
    /// rule holds it back (`ordering.rs`).
    #[inline]
    pub(super) fn issue(&mut self, now: Ps, i: u32) {
        if self.ordering.issue(i, &self.msgs[i as usize]) {
            self.admit(now, i);
        }
    }

    /// Message `i` may go: it takes one of its pair's X notifications, or
    /// waits for one (or, with the write outcome, for its retry buffer).
    fn admit(&mut self, now: Ps, i: u32) {
        let m = Msg::of(&self.msgs[i as usize]);
        let pair = self.pair(m);
        if self.pending[pair].is_empty()
            && (self.active[pair] as u32) < self.edm.cfg.max_active_notifs
            && !self.retry_buffer_full(pair, m)
        {
            self.activate(now, i, m);
        } else {
            self.pending[pair].push_back((i, m));
        }
    }

    /// Whether pair `pair`'s next message `m` must wait for its requester's
    /// retry buffer (`faults/dedup.rs`; the protocol's recovery only).
    fn retry_buffer_full(&mut self, pair: usize, m: Msg) -> bool {
        self.protocol
            && self
                .outcomes
                .as_mut()
                .is_some_and(|o| o.must_wait(pair, m.op == Op::Rmw))
    }

    /// Pair `pair`'s waiting messages go, in order, while it has a free
    /// notification and room in its retry buffer.
    pub(super) fn admit_waiting(&mut self, now: Ps, pair: usize) {
        while (self.active[pair] as u32) < self.edm.cfg.max_active_notifs {
            let Some(&(next, m)) = self.pending[pair].front() else {
                return;
            };
            if self.retry_buffer_full(pair, m) {
                return;
            }
            self.pending[pair].pop_front();
            let m = self.batching.fold(&mut self.pending[pair], next, m);
            self.activate(now, next, m);
        }
    }

    /// Message or mega-message `i` (`m`) has finished at its requester: the
    /// messages that waited for its members may go.
    pub(super) fn finished(&mut self, now: Ps, i: u32, m: Msg) {
        if let Some(b) = self.batching.batch_of(i) {
            for k in 0..self.batching.members(b).len() {
                let member = self.batching.members(b)[k].0;
                self.finished_one(now, member, m);
            }
        } else {
            self.finished_one(now, i, m);
        }
    }

    /// Message `i` of pair `m` (its own, or its mega-message's: the same
    /// pair) has finished: the messages it held back go.
    fn finished_one(&mut self, now: Ps, i: u32, m: Msg) {
        for k in 0..self.ordering.finished(i, m, self.msgs) {
            let freed = self.ordering.freed(k);
            self.admit(now, freed);
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
            chunk: NO_CHUNK,
            plane: 0,
        };
        let at = now + self.edm.c(self.edm.cfg.steps.gen_req);
        if let Some(o) = self.outcomes.as_mut() {
            // It takes the pair's next id.
            o.activated(i, pair, m.op == Op::Rmw, &mut self.counters.faults);
        }
        // Mirrored on every plane (the dual switch): same message, same id;
        // not into a plane whose link its host sees down.
        let planes = self.mirror_planes(m.requester, now);
        if planes != ALL_PLANES {
            self.counters.faults.unmirrored += 1;
        }
        self.arm_timers(at, unit, planes);
        self.on_planes(planes, |sim| {
            let unit = Unit {
                plane: sim.plane.id,
                ..unit
            };
            sim.send_control(now, at, unit)
        });
    }

    /// Sends /N/ or request `unit` from its requester at `at`.
    /// (Decided at `now`; zero-queue mode: in the first gap from `at`.)
    pub(super) fn send_control(&mut self, now: Ps, at: Ps, unit: Unit) {
        let h = unit.spec.requester;
        if self.zq {
            let waiting = &mut self.plane.controls[h as usize];
            waiting.push_back((at, unit));
            if waiting.len() == 1 {
                self.host_controls(now, h);
            }
            return;
        }
        if unit.kind == UnitKind::Notify {
            if let Some(d) = self.plane.uplinks[h as usize].control_block_at(at) {
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
    pub(super) fn host_controls(&mut self, now: Ps, h: u16) {
        let block = self.edm.fabric.block_ps();
        let horizon = self.edm.booking_horizon();
        let hop = self.edm.fabric.hop_ps();
        while let Some(&(ready, unit)) = self.plane.controls[h as usize].front() {
            let len = unit.blocks as Ps * block;
            let book = &mut self.plane.up_book[h as usize];
            book.prune(now);
            let start = book.first_fit(ready.max(now), len, false);
            if start + len > now + horizon {
                self.q
                    .push(start + len - horizon, Ev::HostControl(self.plane.id, h));
                return;
            }
            book.book(start, len);
            self.counters.max_request_wait_ps =
                self.counters.max_request_wait_ps.max(start - ready);
            self.plane.uplinks[h as usize].account(now, start, unit.blocks);
            self.plane.controls[h as usize].pop_front();
            self.record(h, true, start, unit.blocks, &unit);
            self.q.push(start + hop, Ev::SwitchIn(h, unit));
        }
    }

    pub(super) fn deactivate(&mut self, now: Ps, m: Msg) {
        let pair = self.pair(m);
        self.active[pair] -= 1;
        self.admit_waiting(now, pair);
    }

    #[inline]
    pub(super) fn host_in(&mut self, now: Ps, h: u16, unit: Unit) {
        let m = unit.spec;
        match unit.kind {
            UnitKind::Grant => {
                // With lossy links a hit grant is dropped; a chunk's grant
                // repeated still sends its data, but a write stops being
                // active at the first copy of its last grant only.
                // (Zero-queue mode drew the grant's fate when it booked it.)
                let first_copy = if self.lossy && !self.zq {
                    match self.grant_arrives(h, now, &unit) {
                        Some(first) => first,
                        None => return,
                    }
                } else {
                    true
                };
                if !self.zq {
                    // (Zero-queue mode booked the data with the grant.)
                    if let Some(data) = self.data_sent(unit) {
                        self.q
                            .push(now + self.edm.grant_to_data(false), Ev::HostSend(h, data));
                    }
                }
                if m.op == Op::Write && unit.last && first_copy {
                    self.release(now, unit.msg, m);
                }
            }
            UnitKind::Data => {
                // (A write's data comes here only with the dual switch;
                // it stopped being active at its last /G/.)
                if self.data_arrives(now, unit) {
                    self.release(now, unit.msg, m);
                    // (A write finishes when acknowledged, `acknowledge`,
                    // or with the ideal NACK's bound when in memory.)
                    if m.op != Op::Write {
                        self.resolved(now, unit.msg, false);
                    }
                    if self.ordering.tracked() && (m.op != Op::Write || self.finish_on_arrival()) {
                        self.finished(now, unit.msg, m);
                    }
                }
            }
            UnitKind::Notify | UnitKind::Request | UnitKind::ForwardedRequest => {
                unreachable!("the switch does not send these to hosts as such")
            }
        }
    }

    /// Data unit `unit`'s last block reaches its destination at `at`; true
    /// if that completes its message.
    pub(super) fn data_arrives(&mut self, at: Ps, unit: Unit) -> bool {
        let i = unit.msg as usize;
        if self.recovery.tracks_ends() && !self.take_data(&unit) {
            let applied = self.recovery.applied_at(i);
            let retry = self.edm.cfg.faults.retry_timeout_ps();
            if unit.spec.op == Op::Write && applied != Ps::MAX && at >= applied + retry / 2 {
                // A copy of a write applied at least half a retry timeout
                // before (sent again for want of its /A/, not the other
                // plane's mirror copy): acknowledged again.
                self.acknowledge(at + self.edm.proc_data(unit.spec), &unit, false);
            }
            return false;
        }
        if unit.spec.op == Op::Write {
            // (A copy the receiver discarded is not written.)
            self.write_to_memory(at, &unit);
        }
        if unit.spec.count > 1 {
            let done = self.batch_data_arrives(at, unit);
            if done {
                let applied = at + self.edm.c(self.edm.cfg.steps.proc_write);
                self.acknowledge(applied, &unit, true);
            }
            return done;
        }
        // A denied write's data arrived but was dropped; a denied read's
        // empty response completes it.
        let denied = self.denied(unit.msg);
        if !denied {
            self.totals.delivered_bytes += unit.bytes as u64;
        }
        // A message in one chunk is complete without its running count.
        let whole = Edm::data_bytes(unit.spec);
        let done = (denied && unit.spec.op != Op::Write) || unit.bytes == whole || {
            self.delivered[i] += unit.bytes;
            self.delivered[i] == whole
        };
        if done {
            let complete = at + self.edm.proc_data(unit.spec);
            self.records.complete(unit.msg, complete);
            if unit.spec.op == Op::Write {
                self.acknowledge(complete, &unit, true);
            }
            self.recovery.completed(i);
        }
        done
    }

    /// [`Sim::data_arrives`] for a mega-message: each member completes when
    /// the data up to its end has arrived.
    fn batch_data_arrives(&mut self, at: Ps, unit: Unit) -> bool {
        let i = unit.msg as usize;
        self.delivered[i] += unit.bytes;
        let done_to = self.delivered[i];
        let done_at = at + self.edm.c(self.edm.cfg.steps.proc_write);
        for &(member, _) in self.batching.arrived(unit.msg, done_to) {
            // Its payload (the headers between members are not payload).
            self.totals.delivered_bytes += self.msgs[member as usize].size as u64;
            self.records.complete(member, done_at);
        }
        done_to == unit.spec.size
    }
}
