//! EDM's switch: notifications into the scheduler, its iterations, and the
//! grants they issue; in zero-queue mode each grant's whole circuit is
//! booked at once (`placement.rs`).
use super::model::Edm;
use super::placement::place_circuit;
use super::sim::Sim;
use super::units::UnitKind;
use super::units::{Ev, Msg, Unit, NO_CHUNK};
use crate::edm::scheduler::Grant;
use crate::engine::prefetch;
use crate::time::Ps;
use crate::workload::Op;
use edm_proto::message::message_blocks;

/// Zero-queue booking with the DRAM model: most placements of a response's
/// circuit tried before one is taken (`late_responses` counts any that
/// still starts before its data is read; two tries settle every case seen).
const MEMORY_BOOKING_TRIES: u32 = 8;

impl Sim<'_> {
    /// The id the scheduler knows message `i` by (until its last grant).
    pub(super) fn enqueue(&mut self, i: u32, m: Msg) -> u32 {
        self.enqueue_chunk(i, m, NO_CHUNK)
    }

    /// [`Sim::enqueue`] of a notification that grants `chunk` again
    /// (`NO_CHUNK`: the message's own).
    pub(super) fn enqueue_chunk(&mut self, i: u32, m: Msg, chunk: u32) -> u32 {
        let id = match self.plane.queued_free.pop() {
            Some(id) => {
                self.plane.queued[id as usize] = (i, m);
                id
            }
            None => {
                self.plane.queued.push((i, m));
                (self.plane.queued.len() - 1) as u32
            }
        };
        if self.lossy {
            self.plane
                .queued_chunk
                .resize(self.plane.queued.len(), NO_CHUNK);
            self.plane.queued_chunk[id as usize] = chunk;
        }
        id
    }

    /// A notification turns visible at `at`: the scheduler looks then.
    #[inline]
    pub(super) fn wake_on_notification(&mut self, at: Ps) {
        self.plane.iterations_since_wake = 0;
        debug_assert!(self.plane.notify_wakes.back().is_none_or(|&b| b <= at));
        self.plane.notify_wakes.push_back(at);
        if !self.plane.notify_tick_queued {
            self.plane.notify_tick_queued = true;
            self.q.push(at, Ev::NotifyTick(self.plane.id));
        }
    }

    /// The scheduler's tick for the notifications visible at `now`. Those
    /// that turn visible while the iteration in flight runs would each only
    /// defer to its end: one tick there stands for all of them.
    #[inline]
    pub(super) fn notify_tick(&mut self, now: Ps) {
        self.plane.notify_tick_queued = false;
        while self.plane.notify_wakes.front().is_some_and(|&t| t <= now) {
            self.plane.notify_wakes.pop_front();
        }
        self.scheduler_tick(now);
        let busy_until = self.plane.scheduler_busy_until;
        let wakes = &mut self.plane.notify_wakes;
        if wakes.front().is_some_and(|&t| t < busy_until) {
            while wakes.front().is_some_and(|&t| t <= busy_until) {
                wakes.pop_front();
            }
            self.defer_tick(busy_until);
        }
        if let Some(&next) = self.plane.notify_wakes.front() {
            self.plane.notify_tick_queued = true;
            self.q.push(next, Ev::NotifyTick(self.plane.id));
        }
    }

    /// A tick when the iteration in flight ends (once per end).
    fn defer_tick(&mut self, at: Ps) {
        if self.plane.deferred_tick != Some(at) {
            self.plane.deferred_tick = Some(at);
            self.q.push(at, Ev::SchedulerTick(self.plane.id));
        }
    }

    pub(super) fn scheduler_tick(&mut self, now: Ps) {
        if now < self.plane.scheduler_busy_until {
            // An iteration is in flight: look again when it ends.
            self.defer_tick(self.plane.scheduler_busy_until);
            return;
        }
        if self.plane.last_iteration_at == Some(now) || self.plane.sched.is_empty() {
            return;
        }
        // Anything but a retry of refused requests is a change (a port
        // released, a notification visible): the count starts again.
        let max = self.edm.cfg.max_iterations;
        let since = self.plane.last_iteration_at.unwrap_or(0);
        if self.plane.retry_at != Some(now)
            || (max > 0
                && self.plane.iterations_since_wake >= max
                && self.plane.sched.released_between(since, now))
        {
            self.plane.iterations_since_wake = 0;
        }
        if max > 0 && self.plane.iterations_since_wake >= max {
            return;
        }
        self.plane.iterations_since_wake += 1;
        let mut it = std::mem::take(&mut self.plane.iteration);
        self.plane.sched.iterate_into(now, &mut it);
        self.counters.scheduler_grants += it.grants.len() as u64;
        self.plane.last_iteration_at = Some(now);
        let iteration = self.plane.sched.issue_interval_ps();
        self.plane.scheduler_busy_until = now + iteration;
        // The scheduler looks again when a granted port is released (or may
        // be used early by a read's first chunk), and at once if a request
        // was refused: one tick per distinct time (many grants share one).
        let mut ticks = std::mem::take(&mut self.plane.tick_times);
        ticks.clear();
        for g in &it.grants {
            prefetch(&self.plane.queued[g.msg as usize]);
        }
        for g in &it.grants {
            let release = if self.zq {
                self.book_grant(now, g)
            } else {
                self.issue_grant(g);
                g.release
            };
            let early = release.saturating_sub(self.plane.sched.lookahead_ps(g.src, g.dst));
            // Pipelined, its ports are masked while this iteration is in
            // flight: nothing can use them before it ends. (Otherwise the
            // next iteration cannot start before then anyway.)
            let masked = if self.edm.cfg.pipelined_matching {
                now + self.plane.sched.iteration_ps()
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
            self.plane.retry_at = Some(now + iteration);
        }
        if it.masked_until > now {
            ticks.push(it.masked_until);
        }
        ticks.sort_unstable();
        ticks.dedup();
        for &at in &ticks {
            self.q.push(at, Ev::SchedulerTick(self.plane.id));
        }
        self.plane.tick_times = ticks;
        self.plane.iteration = it;
    }

    /// The /G/ (or forwarded request, a read's first grant) grant `g` sends;
    /// the scheduler's id of its message is free again after its last grant.
    fn grant_unit(&mut self, g: &Grant) -> Unit {
        let (msg, m) = self.plane.queued[g.msg as usize];
        if g.last {
            self.plane.queued_free.push(g.msg);
        }
        let forwarded = g.first && m.op != Op::Write;
        let (chunk, last) = if self.lossy {
            self.grant_chunk(g)
        } else {
            (NO_CHUNK, g.last)
        };
        Unit {
            kind: if forwarded {
                UnitKind::ForwardedRequest
            } else {
                UnitKind::Grant
            },
            msg,
            spec: m,
            bytes: g.bytes,
            last,
            blocks: if forwarded { Edm::request_blocks(m) } else { 1 },
            chunk,
            plane: self.plane.id,
        }
    }

    /// Sends the grant's /G/ (or forwarded request).
    fn issue_grant(&mut self, g: &Grant) {
        let unit = self.grant_unit(g);
        let (m, forwarded) = (unit.spec, unit.kind == UnitKind::ForwardedRequest);
        if self.edm.cfg.egress_feedback {
            // Only the feedback needs what is granted into each egress.
            let data_blocks = message_blocks(Edm::data_kind(m), g.bytes as u16) as Ps;
            self.plane.egress_granted_ps[g.dst as usize] +=
                data_blocks * self.edm.fabric.block_ps();
        }
        let at = g.at + self.edm.c(self.edm.cfg.steps.sw_gen_grant);
        if self.lossy {
            let check = at + self.edm.cfg.faults.retry_timeout_ps();
            self.q.push(check, Ev::ChunkCheck(unit));
        }
        if !forwarded {
            let link = &mut self.plane.downlinks[g.src as usize];
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
        let generated = g.at + edm.c(edm.cfg.steps.sw_gen_grant);
        let (src, dst) = (g.src as usize, g.dst as usize);
        self.plane.down_book[src].prune(now);
        self.plane.down_book[dst].prune(now);
        self.plane.up_book[src].prune(now);
        // A pair's data goes in grant order (per-pair order; a later grant
        // could otherwise take an earlier gap).
        let pair = src * self.n + dst;
        let mut not_before = self.plane.pair_data_end[pair];
        // With the DRAM model a response's data cannot leave before its
        // memory node can stream it: the circuit moves until it fits the
        // DRAM (each try moves it later; two settle it, a few more are
        // allowed). Its request goes as early as it can (the memory node
        // starts the data once read, however long after: a start delay
        // without bound). Every circuit's ports are then released where it
        // would have gone without the DRAM's delays and the pair's data
        // before it (which they hold back): the booked timelines keep later
        // circuits clear of it, and they may use the ports meanwhile.
        let mut tries = 0;
        let delay = match edm.start_delay() {
            Some((unit, _)) if forwarded && self.memory.has_dram() => Some((unit, Ps::MAX / 4)),
            delay => delay,
        };
        let place = |sim: &Self, not_before: Ps, delay| {
            place_circuit(
                &sim.plane.down_book[src],
                &sim.plane.up_book[src],
                &sim.plane.down_book[dst],
                generated,
                not_before,
                control_len,
                wire,
                to_data,
                to_egress,
                delay,
            )
        };
        let undelayed_egress = self
            .memory
            .has_dram()
            .then(|| place(self, 0, edm.start_delay()).2);
        let (grant_at, data_up, data_egress) = loop {
            let placed = place(self, not_before, delay);
            if !forwarded || !self.memory.has_dram() {
                break placed;
            }
            let arrived = placed.0 + to_data - edm.grant_to_data(true);
            let ready = self.response_at(arrived, grant, true);
            if ready <= placed.1 || tries == MEMORY_BOOKING_TRIES {
                let ready = self.response_at(arrived, grant, false);
                if ready > placed.1 {
                    self.totals.memory.late_responses += 1;
                }
                break placed;
            }
            not_before = ready;
            tries += 1;
        };
        // What the source sends on the circuit (booked whole either way): a
        // denied read's memory node sends an empty response, then nothing.
        let sent = self.data_sent(grant);
        self.plane.pair_data_end[pair] = data_up + wire;
        // (A write finishes for the memory-order rule when acknowledged,
        // `acknowledge`; with the ideal NACK's bound when in memory.)
        self.plane.down_book[src].book(grant_at, control_len);
        self.plane.downlinks[src].account(now, grant_at, grant.blocks);
        self.record(g.src, false, grant_at, grant.blocks, &grant);
        let up_clear = self.plane.up_book[src].book_data(data_up, wire);
        debug_assert!(up_clear, "data overlaps on uplink {src}");
        if !self.plane.down_book[dst].book_data(data_egress, wire) {
            self.counters.switch_data_conflicts += 1;
        }
        let data = sent.unwrap_or(data);
        let arrives = data_egress + hop + data.blocks as Ps * block - block;
        if sent.is_some() {
            self.plane.uplinks[src].account(now, data_up, data.blocks);
            self.record(g.src, true, data_up, data.blocks, &data);
            self.plane.downlinks[dst].account(now, data_egress, data.blocks);
            self.record(g.dst, false, data_egress, data.blocks, &data);
            self.totals.end_ps = self.totals.end_ps.max(arrives);
        }
        // With lossy links the grant and the data draw their fates now (the
        // circuit stays booked either way) and the switch checks the chunk
        // later; a lost grant sends no data.
        let (grant_heard, data_intact) = if self.lossy {
            let check = generated + edm.cfg.faults.retry_timeout_ps();
            self.q.push(check, Ev::ChunkCheck(grant));
            match self.grant_arrives(g.src, grant_at + hop, &grant) {
                Some(first) => {
                    if forwarded {
                        self.request_reaches_memory(&grant);
                    }
                    if self.protocol && sent.is_some() {
                        self.write_sent(data_up + wire, &data);
                    }
                    (first, self.arrives_intact(g.dst, arrives, &data))
                }
                None => (false, false),
            }
        } else {
            (true, sent.is_some())
        };
        // When the source learns of its last grant (a write stops being
        // active) and when the data's last block arrives.
        if grant.last && m.op == Op::Write && grant_heard {
            self.q.push(grant_at + hop, Ev::HostIn(g.src, grant));
        }
        // (A denied read's empty response is its last. The dual switch's
        // copies race: which one is first is known only when they arrive.
        // With the protocol's recovery a read asked for again may be
        // completed by any chunk: each is waited for.)
        let waited_for = (g.last || self.denied(grant.msg) || self.protocol) && m.op != Op::Write;
        // (With lossy links a write's data too: its /A/ is decided at its
        // arrival, on one plane as on two.)
        if data_intact && (waited_for || self.lossy) {
            self.q.push(arrives, Ev::HostIn(g.dst, data));
        } else if data_intact {
            // Nothing waits on it at its destination (a write's memory node,
            // or a response chunk before the last): count it now.
            let done = self.data_arrives(arrives, data);
            if done && self.finish_on_arrival() && m.op == Op::Write {
                self.q.push(arrives, Ev::Finished(grant.msg, m));
            }
        }
        self.counters.max_grant_wait_ps = self.counters.max_grant_wait_ps.max(grant_at - generated);
        let release =
            edm.zero_queue_release(undelayed_egress.unwrap_or(data_egress) + wire, g.release);
        self.plane.sched.hold_src_until(g.src, release);
        self.plane.sched.hold_dst_until(g.dst, release);
        release
    }

    /// A data unit leaves egress `h` until `free`; the circuits already
    /// granted into `h` follow it, back to back at best, so the egress is
    /// busy until at least `free` plus their wire time, and the next circuit
    /// should be decided no earlier than that minus `circuit_lag` (for
    /// circuits on time that is the port's release already). If later, the
    /// release moves there and the scheduler looks again then.
    pub(super) fn egress_feedback(&mut self, now: Ps, h: u16, free: Ps) {
        let busy_until = free + self.plane.egress_granted_ps[h as usize];
        let release = busy_until.saturating_sub(self.edm.circuit_lag());
        if self.plane.sched.hold_dst_until(h, release) {
            let early = release.saturating_sub(self.plane.sched.dst_lookahead_ps(h));
            for at in [early, release] {
                if at > now {
                    self.q.push(at, Ev::SchedulerTick(self.plane.id));
                }
            }
        }
    }
}
