//! EDM's zero-queue mode: the booked timeline of each link direction and
//! where a circuit (its grant, its data on the uplink and at the egress) goes.
use super::model::Edm;
use crate::time::Ps;
use edm_proto::message::{message_blocks, Kind};
use edm_proto::spec::*;

/// The booked transmissions of one link direction, in time order (EDM's
/// zero-queue mode, where every unit's start is fixed ahead: the switch
/// knows its egress schedule, a host its granted data). So that control
/// units find room between data units, a data unit may be followed by a
/// guard kept free of other data: `unit_guard` after every data unit, and
/// `run_guard` after one that ends a run of back-to-back data (gaps shorter
/// than `run_guard`) at least `max_run` long.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    /// Booked units from `head` on, sorted by start, not overlapping on the
    /// wire (unless `overlaps` > 0); those before `head` have ended. A plain
    /// vector searched as one slice: a link's timeline holds a handful of
    /// units, and is searched several times per grant, where a deque's
    /// two-part binary search cost a sixth of a run (perf, hadoop at 512 nodes).
    booked: Vec<Booking>,
    head: usize,
    unit_guard: Ps,
    run_guard: Ps,
    max_run: Ps,
    /// The run of back-to-back data the last data unit booked at the end
    /// belongs to.
    run_start: Ps,
    run_end: Ps,
    /// The latest `guard_end` ever booked: a search from then on finds
    /// nothing in its way (most searches on a link that is not busy).
    latest_guard_end: Ps,
    /// Bookings that overlapped another on the wire: the rules must keep this 0.
    pub overlaps: u64,
}

/// How many ended units a timeline keeps before dropping them.
const PRUNE_BATCH: usize = 32;

#[derive(Clone, Copy, Debug)]
struct Booking {
    start: Ps,
    end: Ps,
    /// Until when no other data may start (`end` for a control unit).
    guard_end: Ps,
    data: bool,
}

impl Timeline {
    pub fn new(unit_guard: Ps, run_guard: Ps, max_run: Ps) -> Self {
        Timeline {
            unit_guard,
            run_guard,
            max_run,
            ..Default::default()
        }
    }

    /// Forgets what has ended, guards included, by `now` (from the front).
    #[inline]
    pub fn prune(&mut self, now: Ps) {
        let live = &self.booked[self.head..];
        self.head += live.iter().take_while(|b| b.guard_end <= now).count();
        // Drops the ended units once they are most of the vector (amortised O(1)).
        if self.head >= PRUNE_BATCH && 2 * self.head >= self.booked.len() {
            self.booked.drain(..self.head);
            self.head = 0;
        }
    }

    /// The units not yet pruned, by start.
    #[inline(always)]
    fn live(&self) -> &[Booking] {
        &self.booked[self.head..]
    }

    /// The earliest start from `from` on of a unit of `len` ps: a control
    /// unit needs [start, start + len) free of other units (it may use the
    /// guards); a data unit (`data`) also needs it free of guards, and its
    /// own `unit_guard` free of other data.
    #[inline(always)]
    pub fn first_fit(&self, from: Ps, len: Ps, data: bool) -> Ps {
        if from >= self.latest_guard_end {
            // Every unit and guard has ended by `from` (the search would
            // step over each): decided where it is called, with no call.
            return from;
        }
        self.search_fit(from, len, data)
    }

    /// [`Timeline::first_fit`] where a unit or guard may still be in the way.
    #[inline(never)]
    fn search_fit(&self, from: Ps, len: Ps, data: bool) -> Ps {
        let own_guard = if data { self.unit_guard } else { 0 };
        // Ends are in order (units do not overlap); a guard reaches at most
        // the longer guard past its unit's end.
        let reach = self.unit_guard.max(self.run_guard);
        let booked = self.live();
        let mut first = booked.partition_point(|b| b.end <= from);
        while first > 0 && booked[first - 1].end + reach > from {
            first -= 1;
        }
        let mut t = from;
        for b in &booked[first..] {
            if b.start >= t + len + own_guard {
                break;
            }
            let need = if b.data { len + own_guard } else { len };
            let busy_until = if data { b.guard_end } else { b.end };
            if t + need <= b.start || busy_until <= t {
                continue;
            }
            t = busy_until;
        }
        t
    }

    /// Books a control unit at [start, start + len); false (and counted) if
    /// it overlaps a unit on the wire.
    #[inline]
    pub fn book(&mut self, start: Ps, len: Ps) -> bool {
        self.insert(Booking {
            start,
            end: start + len,
            guard_end: start + len,
            data: false,
        })
    }

    /// Books a data unit at [start, start + len) (found by `first_fit` with
    /// `data`) with its guard.
    #[inline]
    pub fn book_data(&mut self, start: Ps, len: Ps) -> bool {
        let end = start + len;
        let mut guard = self.unit_guard;
        if start >= self.run_end {
            if start >= self.run_end + self.run_guard {
                self.run_start = start;
            }
            self.run_end = end + guard;
            if end - self.run_start >= self.max_run {
                guard = guard.max(self.run_guard);
                (self.run_start, self.run_end) = (end + guard, end + guard);
            }
        }
        self.insert(Booking {
            start,
            end,
            guard_end: end + guard,
            data: true,
        })
    }

    #[inline(always)]
    fn insert(&mut self, b: Booking) -> bool {
        // Most go after every unit booked, clear of the last: appended here
        // with no search and no call.
        if let Some(last) = self.booked.last() {
            if self.booked.len() > self.head && last.start < b.start && last.end <= b.start {
                self.latest_guard_end = self.latest_guard_end.max(b.guard_end);
                self.booked.push(b);
                return true;
            }
        }
        self.insert_searched(b)
    }

    /// [`Timeline::insert`] of a unit that may go before others or overlap one.
    #[inline(never)]
    fn insert_searched(&mut self, b: Booking) -> bool {
        self.latest_guard_end = self.latest_guard_end.max(b.guard_end);
        let live = self.live();
        let at = if live.last().is_none_or(|x| x.start < b.start) {
            live.len()
        } else {
            live.partition_point(|x| x.start < b.start)
        };
        let clash_before = at > 0 && live[at - 1].end > b.start;
        let clash_after = live.get(at).is_some_and(|x| x.start < b.end);
        self.booked.insert(self.head + at, b);
        let clash = clash_before || clash_after;
        self.overlaps += u64::from(clash);
        !clash
    }

    pub fn is_empty(&self) -> bool {
        self.live().is_empty()
    }
}

/// Zero-queue mode: where a circuit goes. Its grant (`control_len` long)
/// takes the first gap on the source's egress (`src_egress`) from `from` such
/// that its data (`wire` long), sent `to_data` after the grant starts, finds
/// the source's uplink free and no earlier than `not_before`, and, reaching
/// the destination's egress `to_egress` later, finds that free too. Returns
/// when the grant starts, and the data on the uplink and at the egress.
#[allow(clippy::too_many_arguments)]
pub(super) fn place_circuit(
    src_egress: &Timeline,
    uplink: &Timeline,
    egress: &Timeline,
    mut from: Ps,
    not_before: Ps,
    control_len: Ps,
    wire: Ps,
    to_data: Ps,
    to_egress: Ps,
    delay: Option<(Ps, Ps)>,
) -> (Ps, Ps, Ps) {
    if let Some(delay) = delay {
        return place_delayed_circuit(
            src_egress,
            uplink,
            egress,
            from,
            not_before,
            control_len,
            wire,
            to_data,
            to_egress,
            delay,
        );
    }
    loop {
        let at = src_egress.first_fit(from, control_len, false);
        let up = at + to_data;
        let up_free = uplink.first_fit(up.max(not_before), wire, true);
        if up_free > up {
            from = at + (up_free - up);
            continue;
        }
        let at_egress = up + to_egress;
        let egress_free = egress.first_fit(at_egress, wire, true);
        if egress_free > at_egress {
            from = at + (egress_free - at_egress);
            continue;
        }
        return (at, up, at_egress);
    }
}

/// [`place_circuit`] with a start delay in the grant (`delay` = (its unit,
/// the most it may be)): the data goes in the first slot free on the
/// source's uplink and at the destination's egress from when the grant could
/// first be sent; the grant then takes a gap on the source's egress at most
/// the largest delay before the latest it may go, a whole number of units
/// before it (the source waits that many units after `to_data`). Only when
/// no such gap exists does the data move later.
#[allow(clippy::too_many_arguments)]
fn place_delayed_circuit(
    src_egress: &Timeline,
    uplink: &Timeline,
    egress: &Timeline,
    from: Ps,
    not_before: Ps,
    control_len: Ps,
    wire: Ps,
    to_data: Ps,
    to_egress: Ps,
    (unit, max_delay): (Ps, Ps),
) -> (Ps, Ps, Ps) {
    let mut up = (from + to_data).max(not_before);
    loop {
        // The earliest data slot free on the uplink and at the egress.
        loop {
            let u = uplink.first_fit(up, wire, true);
            let e = egress.first_fit(u + to_egress, wire, true);
            if e == u + to_egress {
                up = u;
                break;
            }
            up = e - to_egress;
        }
        // A grant `k` units before the latest it may go, in a gap.
        let latest = up - to_data;
        let mut probe = latest.saturating_sub(max_delay).max(from);
        loop {
            let gap = src_egress.first_fit(probe, control_len, false);
            if gap > latest {
                // None early enough: the data follows the first gap.
                up = gap + to_data;
                break;
            }
            let at = latest - (latest - gap) / unit * unit;
            if src_egress.first_fit(at, control_len, false) == at {
                return (at, up, up + to_egress);
            }
            probe = gap + unit;
        }
    }
}

impl Edm {
    /// Zero-queue mode: a switch egress's timeline. After every data unit
    /// it keeps room for a /G/ or forwarded RREQ (3 blocks), and after every
    /// circuit lag of back-to-back data room for the longest forwarded
    /// request (an RMWREQ, 5 blocks), so a control unit waits about a data
    /// unit, and at most about a circuit lag, for its slot.
    pub(super) fn egress_timeline(&self) -> Timeline {
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
    pub(super) fn uplink_timeline(&self) -> Timeline {
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
    pub(super) fn circuit_delays(&self, control_blocks: u32, forwarded: bool) -> (Ps, Ps) {
        let hop = self.fabric.hop_ps();
        let to_data = hop
            + (control_blocks as Ps - 1) * self.fabric.block_ps()
            + self.grant_to_data(forwarded);
        (to_data, hop + self.c(self.cfg.steps.sw_forward))
    }

    /// Zero-queue mode: when a circuit's ports are released: when a circuit
    /// decided then would start right after its data leaves the egress at
    /// `data_end`, and never before the scheduler's `planned` release.
    pub(super) fn zero_queue_release(&self, data_end: Ps, planned: Ps) -> Ps {
        data_end.saturating_sub(self.circuit_lag()).max(planned)
    }

    /// Zero-queue mode: how far ahead of an instant every data unit booked on
    /// an uplink by a grant decided from then on starts (a host may fix a
    /// request's start up to this far ahead: no later grant can take it).
    pub(super) fn booking_horizon(&self) -> Ps {
        self.iteration_ps()
            + self.c(self.cfg.steps.sw_gen_grant)
            + self.fabric.hop_ps()
            + self.grant_to_data(false)
    }

    /// Zero-queue rules with start delays (`EdmConfig::start_delay`): the
    /// unit of a grant's start delay (one link block) and the largest one.
    pub(super) fn start_delay(&self) -> Option<(Ps, Ps)> {
        let block = self.fabric.block_ps();
        self.cfg
            .start_delay
            .then_some((block, ((1 << NG_DELAY_W) - 1) * block))
    }

    /// Zero-queue rules: how far before its release a port may be granted
    /// (`Scheduler::grant_early`): one circuit lag, or half of one with
    /// start delays, where a grant's slot no longer has to line up with its
    /// data (measured: docs/simulator.md, "EDM's rules").
    pub(super) fn early_grant_ps(&self) -> Ps {
        if let Some(early) = self.cfg.early_grant_ps {
            early
        } else if self.cfg.start_delay {
            self.circuit_lag() / 2
        } else {
            self.circuit_lag()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// `first_fit` by definition: the first `t` from `from` on at which no
    /// booked unit is in the way of [t, t + len) (data: nor its guard, and
    /// its own guard is free of other data), tried one ps at a time.
    fn first_fit_by_brute_force(
        booked: &[Booking],
        from: Ps,
        len: Ps,
        data: bool,
        unit_guard: Ps,
    ) -> Ps {
        let own_guard = if data { unit_guard } else { 0 };
        let in_the_way = |t: Ps, b: &Booking| {
            let need = if b.data { len + own_guard } else { len };
            let busy_until = if data { b.guard_end } else { b.end };
            t + need > b.start && busy_until > t
        };
        (from..)
            .find(|&t| !booked.iter().any(|b| in_the_way(t, b)))
            .unwrap()
    }

    /// Random timelines (units of random kinds and lengths, booked where
    /// `first_fit` puts them from random times, pruned as time goes on):
    /// every search agrees with the brute-force definition, nothing overlaps,
    /// and pruning changes no answer from the pruning time on.
    #[test]
    fn first_fit_matches_a_brute_force_search_on_random_timelines() {
        let mut rng = Rng::new(43);
        for case in 0..120 {
            let (unit_guard, run_guard) = (rng.below(6), rng.below(12));
            let max_run = 1 + rng.below(80);
            let mut t = Timeline::new(unit_guard, run_guard, max_run);
            let mut unpruned = t.clone();
            let mut now = 0;
            for _ in 0..100 {
                now += rng.below(8);
                if case % 2 == 0 {
                    t.prune(now);
                }
                let from = now + rng.below(60);
                let len = 1 + rng.below(30);
                let data = rng.below(3) > 0;
                let live: Vec<Booking> = t.live().to_vec();
                let want = first_fit_by_brute_force(&live, from, len, data, unit_guard);
                assert_eq!(
                    t.first_fit(from, len, data),
                    want,
                    "case {case}: {live:?} from {from} len {len} data {data}"
                );
                assert_eq!(
                    unpruned.first_fit(from, len, data),
                    want,
                    "pruning changed an answer"
                );
                if data {
                    assert!(t.book_data(want, len));
                    assert!(unpruned.book_data(want, len));
                } else {
                    assert!(t.book(want, len));
                    assert!(unpruned.book(want, len));
                }
            }
            assert_eq!(t.overlaps, 0);
        }
    }

    #[test]
    fn a_timeline_fits_units_into_gaps_and_counts_overlaps() {
        let mut t = Timeline::new(0, 0, Ps::MAX);
        assert!(t.book(100, 50)); // [100, 150)
        assert!(t.book(200, 10)); // [200, 210)
        assert_eq!(t.first_fit(0, 100, true), 0);
        assert_eq!(t.first_fit(0, 101, true), 210);
        assert_eq!(t.first_fit(0, 50, true), 0);
        assert_eq!(t.first_fit(120, 10, true), 150);
        assert_eq!(t.first_fit(150, 50, true), 150);
        assert_eq!(t.first_fit(150, 51, true), 210);
        assert_eq!(t.first_fit(205, 1, true), 210);
        assert!(t.book(150, 50), "a gap exactly filled");
        assert_eq!(t.overlaps, 0);
        assert!(!t.book(209, 5), "overlaps [200, 210)");
        assert!(!t.book(90, 11), "overlaps [100, 150)");
        assert_eq!(t.overlaps, 2);
        t.prune(215);
        assert!(t.is_empty());
    }

    #[test]
    fn a_timeline_keeps_a_guard_after_every_data_unit_wherever_it_goes() {
        let mut t = Timeline::new(10, 0, Ps::MAX);
        assert!(t.book_data(300, 50)); // [300, 350), guard to 360
        assert!(t.book_data(100, 50)); // placed before: [100, 150), guard to 160
                                       // A control unit may use a guard, data may not.
        assert_eq!(t.first_fit(140, 10, false), 150);
        assert_eq!(t.first_fit(140, 10, true), 160);
        // Data needs its own guard free of the next data unit: [160, 290) + 10 fits, + 11 not.
        assert_eq!(t.first_fit(160, 130, true), 160);
        assert_eq!(t.first_fit(160, 131, true), 360);
        // A control unit inside a guard does not hide the guard from data
        // searching from after the control unit.
        assert!(t.book(350, 5));
        assert_eq!(t.first_fit(356, 1, true), 360);
        assert_eq!(t.first_fit(356, 1, false), 356);
        assert_eq!(t.overlaps, 0);
    }

    #[test]
    fn a_timeline_keeps_a_run_guard_after_each_long_run_of_data() {
        // Run guards of 10 after runs of 100: data units of 30 back to back.
        let mut t = Timeline::new(0, 10, 100);
        let mut at = 0;
        let mut starts = Vec::new();
        for _ in 0..8 {
            at = t.first_fit(at, 30, true);
            starts.push(at);
            assert!(t.book_data(at, 30));
            at += 30;
        }
        // The fourth unit ends a run of 120: a guard follows it.
        assert_eq!(starts, vec![0, 30, 60, 90, 130, 160, 190, 220]);
        assert_eq!(t.first_fit(0, 10, false), 120);
        assert_eq!(t.first_fit(0, 11, false), 250);
        assert_eq!(t.first_fit(100, 5, true), 260);
        // A gap of at least the run guard starts a new run.
        assert!(t.book_data(300, 50));
        assert!(t.book_data(350, 40));
        assert_eq!(t.first_fit(390, 1, true), 390, "a run of 90");
        assert!(t.book_data(390, 10));
        assert_eq!(t.first_fit(400, 1, true), 410, "a run of 100");
        // With unit guards shorter than the run guard, runs go on across them.
        let mut t = Timeline::new(3, 10, 100);
        let mut at = 0;
        for _ in 0..5 {
            at = t.first_fit(at, 30, true);
            assert!(t.book_data(at, 30));
            at += 30;
        }
        // Units at 0, 33, 66, 99 (end 129: a run of 129 -> guard 10), then 139.
        assert_eq!(t.first_fit(129, 10, false), 129);
        assert_eq!(t.first_fit(129, 1, true), 172);
        assert_eq!(t.overlaps, 0);
    }
}
