//! What the hosts and the switch do about faults: the timers and
//! idempotent retries, read timeouts and give-up, failed links, and the
//! receivers that keep a chunk's first copy, from either plane of a dual
//! switch.
use super::Fate;
use crate::edm::faults::chunks::NOT_KEPT;
use crate::edm::model::Edm;
use crate::edm::scheduler::Grant;
use crate::edm::sim::Sim;
use crate::edm::units::UnitKind;
use crate::edm::units::{Ev, Msg, Unit, NO_CHUNK};
use crate::time::Ps;
use crate::workload::Op;

impl Sim<'_> {
    /// The timers of a message whose /N/ or request its host sends at `at`:
    /// the retry of an ungranted notification, a read's timeout.
    /// (A retry per plane of `planes`, the others once per message.)
    pub(in crate::edm) fn arm_timers(&mut self, at: Ps, unit: Unit, planes: u8) {
        if self.lossy {
            let check = at + self.edm.cfg.faults.retry_timeout_ps();
            self.on_planes(planes, |sim| {
                let unit = Unit {
                    plane: sim.plane.id,
                    ..unit
                };
                sim.q.push(check, Ev::NotifyCheck(unit))
            });
            let give_up = self.edm.cfg.faults.give_up_ns * 1000;
            if give_up > 0 {
                // Not before now: a message activated after its deadline
                // (it waited behind X active ones) gives up at once, in
                // time order (an event in the past would turn time back).
                let issued = self.msgs[unit.msg as usize].issue_ps;
                self.q
                    .push((issued + give_up).max(at), Ev::GiveUp(unit.msg));
            }
        }
        if self.read_timeout > 0 && unit.spec.op != Op::Write {
            self.q
                .push(at + self.read_timeout, Ev::ReadTimeout(unit.msg));
        }
    }

    /// An /N/ or request reaches the switch: false if it was hit (dropped)
    /// or the switch already holds its message (a retry: ignored, so the
    /// demand is counted once).
    pub(in crate::edm) fn notification_accepted(&mut self, now: Ps, unit: Unit) -> bool {
        if !self.crosses(unit.spec.requester, now, unit.blocks, true) {
            return false;
        }
        if self.refuses(unit.spec) {
            // A port of its path is seen down: refused, as if lost.
            self.counters.faults.demand_dropped += 1;
            return false;
        }
        let i = unit.msg as usize;
        // (With the protocol's recovery the switch is done with a message
        // once its last chunk's data passed: a request re-sent then is new.)
        let done = self.protocol && self.plane.done_at[i] <= now;
        if done {
            self.forget(unit.msg);
        }
        let seen = &mut self.plane.at_switch[i];
        if *seen {
            self.counters.faults.duplicate_notifications += 1;
            return false;
        }
        *seen = true;
        if let Some(t) = self.plane.done_at.get_mut(i) {
            *t = Ps::MAX;
        }
        true
    }

    /// One link's errors on a unit: false if its receiver drops it.
    pub(in crate::edm) fn crosses(
        &mut self,
        host: u16,
        at: Ps,
        blocks: u32,
        control: bool,
    ) -> bool {
        let fate = self.cross_link(host, at, blocks, control);
        self.count(fate, control)
    }

    /// The fate of a unit crossing host `host`'s link at `at`; the switch
    /// learns of a link the BER monitor disables.
    pub(in crate::edm) fn cross_link(
        &mut self,
        host: u16,
        at: Ps,
        blocks: u32,
        control: bool,
    ) -> Fate {
        let fate = self.plane.faults.cross_link(host, at, blocks, control);
        if let Some((h, at)) = self.plane.faults.newly_disabled.take() {
            self.link_disabled(h, at);
        }
        fate
    }

    /// Counts a unit's fate: false if it is lost.
    fn count(&mut self, fate: Fate, control: bool) -> bool {
        let counters = &mut self.counters.faults;
        match fate {
            Fate::Intact => true,
            Fate::LinkDown => {
                counters.link_down_drops += 1;
                false
            }
            Fate::Dropped => {
                if control {
                    counters.control_corrupted += 1;
                } else {
                    counters.data_corrupted += 1;
                }
                false
            }
            Fate::Undetected => {
                counters.undetected += 1;
                true
            }
        }
    }

    /// A forwarded request (down to the memory node) or a data unit (up to
    /// the switch, down to its destination) arrives: false if a link's
    /// errors made its receiver drop it.
    /// `to` is the host it is going down to, `at` when.
    pub(in crate::edm) fn arrives_intact(&mut self, to: u16, at: Ps, unit: &Unit) -> bool {
        match unit.kind {
            UnitKind::Data => {
                // A unit hit on the uplink is dropped at its receiver as
                // well (the switch forwards cut-through): one draw per link;
                // the worse fate counts.
                let (src, _) = Edm::data_path(unit.spec);
                let up = self.cross_link(src, at, unit.blocks, false);
                let down = self.cross_link(to, at, unit.blocks, false);
                let worst = [Fate::LinkDown, Fate::Dropped, Fate::Undetected]
                    .into_iter()
                    .find(|f| up == *f || down == *f)
                    .unwrap_or(Fate::Intact);
                let intact = self.count(worst, false);
                if self.protocol && up != Fate::LinkDown {
                    // It reached the switch (a unit hit on the uplink is
                    // forwarded cut-through all the same).
                    self.passed_switch(at, unit, intact);
                }
                intact
            }
            _ => self.crosses(to, at, unit.blocks, true),
        }
    }

    /// `data_recovery = "protocol"`: a copy of a chunk's data reached the
    /// switch (its egress sends it on, `at` its last block at the
    /// receiver). The switch is done with the chunk's grants so far, and
    /// with its message after its last chunk: a request re-sent later is
    /// new demand. If the receiver dropped it, the switch cannot tell: a
    /// write's requester sends it again for want of its /A/, a read's
    /// asks for the response again.
    fn passed_switch(&mut self, at: Ps, unit: &Unit, intact: bool) {
        let plane = unit.plane as usize;
        let i = unit.msg as usize;
        self.chunks[unit.chunk as usize].passed[plane] = at;
        // (A late copy of an earlier demand's last chunk does not end the
        // one being granted. Zero-queue mode draws a unit's fate when it
        // books it: the switch is done when the data has passed.)
        if self.chunks[unit.chunk as usize].last {
            self.switch_done(i, at);
        }
        if intact {
            return;
        }
        if unit.spec.op == Op::Write {
            self.counters.faults.write_data_dropped += 1;
        } else {
            self.counters.faults.response_data_dropped += 1;
        }
    }

    /// `data_recovery = "protocol"`: the switch is done with message `i`
    /// at `at` (its last chunk passed, or its timer found it delivered),
    /// unless it is granting a later demand for it: a late copy of an
    /// earlier demand's last chunk does not end that one.
    fn switch_done(&mut self, i: usize, at: Ps) {
        if self.plane.chunks_granted[i] as usize == self.chunks.named_count(i) {
            self.plane.done_at[i] = self.plane.done_at[i].min(at);
        }
    }

    /// `data_recovery = "protocol"`: write data `unit` leaves its host, its
    /// last block at `end`: its retry timer counts from its last data.
    /// (Posted: the write finishes for the memory-order rule and fences
    /// when acknowledged, `acknowledge`.)
    pub(in crate::edm) fn write_sent(&mut self, end: Ps, unit: &Unit) {
        if unit.spec.op != Op::Write {
            return;
        }
        let i = unit.msg as usize;
        let chunk = &mut self.chunks[unit.chunk as usize];
        let first = !std::mem::replace(&mut chunk.sent, true);
        self.recovery.data_sent(i, end, first, unit.bytes);
    }

    /// `data_recovery = "protocol"`: write `i`'s host has sent all its data.
    pub(in crate::edm) fn host_sent_all(&self, i: u32) -> bool {
        let spec = &self.msgs[i as usize];
        self.protocol
            && spec.op == Op::Write
            && self.recovery.sent_bytes(i as usize) == Edm::data_bytes(Msg::of(spec))
    }

    /// A /G/ reaches its source: None if dropped, else whether it is the
    /// first copy of its chunk's grant there.
    pub(in crate::edm) fn grant_arrives(&mut self, to: u16, at: Ps, unit: &Unit) -> Option<bool> {
        if !self.crosses(to, at, unit.blocks, true) {
            return None;
        }
        if unit.kind == UnitKind::Grant {
            // (A forwarded request reaches the memory node, not the requester.)
            self.plane.heard[unit.msg as usize] = true;
        }
        let plane = self.plane.id as usize;
        let chunk = &mut self.chunks[unit.chunk as usize];
        let first = !chunk.grant_heard[plane];
        chunk.grant_heard[plane] = true;
        if !first {
            self.counters.faults.duplicate_grants += 1;
        }
        Some(first)
    }

    /// Whether a data unit arriving at its destination is taken: not for a
    /// message that ended (timed out), not a second copy of a chunk (from
    /// this plane: a retry; from the other: the dual switch's mirror).
    pub(in crate::edm) fn take_data(&mut self, unit: &Unit) -> bool {
        let i = unit.msg as usize;
        if self.lossy {
            self.plane.heard[i] = true;
        }
        if unit.spec.op == Op::Write && self.protocol && self.window_refuses_data(unit) {
            // Behind its source's window at the memory node: stale.
            return false;
        }
        let kept_from = self.chunks.get(unit.chunk as usize).map(|c| c.kept_from);
        let mirrored = kept_from.is_some_and(|p| p != NOT_KEPT && p != unit.plane);
        let counters = &mut self.counters.faults;
        if mirrored {
            counters.mirror_copies_discarded += 1;
            return false;
        }
        // (A protocol write's copy is the duplicate record's to judge.)
        if self.recovery.ended(i) && !(self.protocol && unit.spec.op == Op::Write) {
            counters.late_data += 1;
            return false;
        }
        if self.lossy {
            if kept_from != Some(NOT_KEPT) {
                counters.duplicate_data += 1;
                return false;
            }
            self.chunks[unit.chunk as usize].kept_from = unit.plane;
        }
        true
    }

    /// The chunk grant `g` grants, with its `last` flag: a new chunk, or the
    /// one its notification grants again (then `last` only if no copy of
    /// that chunk's last grant reached the source yet).
    /// With the dual switch a plane's k-th chunk of a message is the other
    /// plane's k-th (same demand, same chunk size): one chunk, one id.
    pub(in crate::edm) fn grant_chunk(&mut self, g: &Grant) -> (u32, bool) {
        let again = self.plane.queued_chunk[g.msg as usize];
        if again != NO_CHUNK {
            let c = self.chunks[again as usize];
            return (again, c.last && !c.grant_heard[self.plane.id as usize]);
        }
        let i = self.plane.queued[g.msg as usize].0 as usize;
        let k = self.chunks.named().then(|| {
            self.plane.chunks_granted[i] += 1;
            self.plane.chunks_granted[i] as usize - 1
        });
        (self.chunks.granted(i, k, g.last), g.last)
    }

    /// The requester's retry timer: an /N/ or request not granted yet is
    /// sent again (the switch ignores it if it holds the message already).
    /// Where a switch may drop demand it looks until the message ends and
    /// re-sends it whenever it heard nothing of it on this plane since it
    /// last looked (the switch may have dropped it after granting some);
    /// so does a read's or RMW's with the protocol's recovery (a response
    /// dropped after the switch is asked for again). A write whose host
    /// has sent all its data is done for it then.
    pub(in crate::edm) fn notify_check(&mut self, now: Ps, unit: Unit) -> bool {
        let i = unit.msg as usize;
        if self.protocol {
            if let Some(sent) = self.write_retry(now, unit) {
                return sent;
            }
        }
        if self.recovery.ended(i) || self.host_sent_all(unit.msg) {
            return false;
        }
        let check = now + self.edm.cfg.faults.retry_timeout_ps();
        if self.plane.heard[i] {
            // (A write's timer runs on until it is acknowledged, a read's
            // until answered: `write_retry` re-sends a write sent whole.)
            let asks_again = self.protocol;
            if self.edm.cfg.faults.drops_demand() || asks_again {
                self.plane.heard[i] = false;
                self.q.push(check, Ev::NotifyCheck(unit));
            }
            return false;
        }
        if self.mirror_planes(unit.spec.requester, now) & 1 << self.plane.id == 0 {
            // Its host sees this plane's link down (the other carries the
            // message): not sent into it, looked at again while unfinished.
            self.q.push(check, Ev::NotifyCheck(unit));
            return false;
        }
        self.counters.faults.notify_retries += 1;
        // Generated again, as a new one is (so the uplink's control blocks
        // stay in time order behind those of messages issued just before).
        let at = now + self.edm.c(self.edm.cfg.steps.gen_req);
        self.send_control(now, at, unit);
        self.q.push(check, Ev::NotifyCheck(unit));
        true
    }

    /// The switch's timer on a grant: if no copy of its chunk arrived
    /// intact (the grant, the forwarded request or the data was hit), the
    /// circuit is given up and the chunk's demand queued again, same
    /// message, same chunk. With the protocol's recovery the switch sees
    /// only its ingress: not if a copy of the data reached it since the
    /// grant (dropped after it or not).
    pub(in crate::edm) fn chunk_check(&mut self, now: Ps, grant: Unit) -> bool {
        let i = grant.msg as usize;
        // (A copy from either plane: the dual switch's planes stop at once.)
        if self.chunks[grant.chunk as usize].delivered() || self.recovery.ended(i) {
            if self.protocol && self.chunks[grant.chunk as usize].last {
                // Nothing more of the message to grant: done with it.
                self.switch_done(i, now);
            }
            return false;
        }
        let set = now - self.edm.cfg.faults.retry_timeout_ps();
        if self.protocol && self.chunks[grant.chunk as usize].passed[self.plane.id as usize] >= set
        {
            return false;
        }
        if self.timer_void(now, set) {
            // Its switch is down, or failed since: the timer went with it.
            return false;
        }
        let m: Msg = grant.spec;
        if self.refuses(m) {
            // A port of its path is seen down: the switch drops the chunk
            // (its requester sends the message again).
            self.counters.faults.demand_dropped += 1;
            self.forget(grant.msg);
            return false;
        }
        self.counters.faults.chunk_retries += 1;
        let id = self.enqueue_chunk(grant.msg, m, grant.chunk);
        let visible = now + self.edm.notification_delay(false);
        let (src, dst) = Edm::data_path(m);
        let first_extra = if m.op == Op::Write {
            0
        } else {
            self.edm.first_response_extra(m)
        };
        self.plane.sched.notify(
            visible,
            src,
            dst,
            id,
            grant.bytes,
            Edm::data_kind(m),
            first_extra,
        );
        self.wake_on_notification(visible);
        true
    }

    /// A read's or RMW's timeout: unless answered, it finishes with a NULL
    /// response (later data for it is ignored).
    pub(in crate::edm) fn read_timeout(&mut self, now: Ps, i: u32) -> bool {
        self.end_unanswered(now, i, false)
    }

    /// A message not completed (a write: not acknowledged) `give_up_ns`
    /// after its issue is reported failed and no longer retried.
    pub(in crate::edm) fn give_up(&mut self, now: Ps, i: u32) -> bool {
        if self.protocol && self.msgs[i as usize].op == Op::Write {
            return self.write_fails(now, i);
        }
        self.end_unanswered(now, i, true)
    }

    fn end_unanswered(&mut self, now: Ps, i: u32, give_up: bool) -> bool {
        if !self.recovery.end(i as usize) {
            return false;
        }
        if give_up {
            self.records[i as usize].timed_out = true;
            self.counters.faults.failed += 1;
        } else {
            self.records[i as usize].timed_out = true;
            self.counters.faults.timed_out += 1;
        }
        let m = Msg::of(&self.msgs[i as usize]);
        self.release(now, i, m);
        if self.ordering.tracked() {
            self.finished(now, i, m);
        }
        self.resolved(now, i, false);
        true
    }

    /// Message `i` stops being active at its pair (once: a write's last
    /// grant may come twice, a timeout may follow it).
    pub(in crate::edm) fn release(&mut self, now: Ps, i: u32, m: Msg) {
        if self.recovery.release(i as usize) {
            self.deactivate(now, m);
        }
    }
}
