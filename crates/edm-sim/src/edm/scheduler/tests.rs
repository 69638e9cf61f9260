//! The scheduler's invariants: every iteration a matching, priorities,
//! pair order, pipelining, and circuits that never overlap at a port.
use super::*;

fn sched(ports: usize, priority: Priority) -> Scheduler {
    Scheduler::new(ports, priority, 256, 3 * 2560, 640)
}

#[test]
fn every_iteration_is_a_matching_and_maximal_when_run_to_quiescence() {
    let mut rng = crate::rng::Rng::new(5);
    for trial in 0..50 {
        let n = 8;
        let mut s = sched(
            n,
            [Priority::Srpt, Priority::Fcfs, Priority::Las][trial % 3],
        );
        for m in 0..40u32 {
            let src = rng.below(n as u64) as u16;
            let dst = ((src as u64 + 1 + rng.below(n as u64 - 1)) % n as u64) as u16;
            s.notify(0, src, dst, m, 1 + rng.below(2000) as u32, Kind::Wreq, 0);
        }
        // Iterate at one instant (ports stay busy): grants accumulate into a matching.
        let mut used_src = vec![false; n];
        let mut used_dst = vec![false; n];
        loop {
            let it = s.iterate(0);
            for g in &it.grants {
                assert!(
                    !used_src[g.src as usize] && !used_dst[g.dst as usize],
                    "not a matching"
                );
                used_src[g.src as usize] = true;
                used_dst[g.dst as usize] = true;
            }
            if it.grants.is_empty() {
                break;
            }
        }
        // Maximal: no waiting entry has both ends free.
        for e in s.live() {
            assert!(
                used_dst[e.dst as usize] || used_src[e.src as usize],
                "not maximal"
            );
        }
    }
}

#[test]
fn priority_hold_leaves_a_destination_idle_for_a_much_shorter_message() {
    // Destination 0: a long message from free source 1, a short one from
    // source 2, which is busy sending to 3.
    let setup = |hold| {
        let mut s = sched(4, Priority::Srpt);
        s.hold_for_shorter(hold);
        s.notify(0, 2, 3, 1, 5000, Kind::Wreq, 0);
        assert_eq!(s.iterate(0).grants.len(), 1); // 2 -> 3 busy now
        s.notify(0, 1, 0, 2, 5000, Kind::Wreq, 0);
        s.notify(0, 2, 0, 3, 64, Kind::Wreq, 0);
        s
    };
    let g = setup(0).iterate(1).grants;
    assert_eq!(
        g.iter().map(|g| g.msg).collect::<Vec<_>>(),
        vec![2],
        "paper: start the long one"
    );
    let mut s = setup(2);
    assert!(s.iterate(1).grants.is_empty(), "hold: wait for source 2");
    let later = s.next_change_after(1).unwrap();
    let g = s.iterate(later).grants;
    assert!(g.iter().any(|g| g.msg == 3), "then the short one: {g:?}");
}

#[test]
fn srpt_prefers_short_messages_but_keeps_pair_order() {
    let mut s = sched(4, Priority::Srpt);
    s.notify(0, 1, 0, 10, 5000, Kind::Wreq, 0); // pair (1,0) oldest, long
    s.notify(0, 1, 0, 11, 64, Kind::Wreq, 0); // same pair, short: must wait
    s.notify(0, 2, 0, 12, 1000, Kind::Wreq, 0);
    let g = s.iterate(0).grants;
    assert_eq!((g[0].src, g[0].msg), (2, 12), "SRPT across pairs");
    let mut s = sched(4, Priority::Srpt);
    s.notify(0, 1, 0, 10, 5000, Kind::Wreq, 0);
    s.notify(0, 1, 0, 11, 64, Kind::Wreq, 0);
    assert_eq!(s.iterate(0).grants[0].msg, 10, "per-pair order");
}

#[test]
fn fcfs_serves_in_arrival_order_and_chunks_then_releases() {
    let mut s = sched(3, Priority::Fcfs);
    s.notify(0, 1, 0, 1, 600, Kind::Wreq, 0);
    s.notify(0, 2, 0, 2, 64, Kind::Wreq, 0);
    let order: Vec<_> = all_grants(&mut s)
        .iter()
        .map(|g| (g.msg, g.bytes))
        .collect();
    assert_eq!(order, vec![(1, 256), (1, 256), (1, 88), (2, 64)]);
}

/// Every grant of a scheduler iterated to the end, each iteration at the
/// next change (or a scheduler cycle on).
fn all_grants(s: &mut Scheduler) -> Vec<Grant> {
    let mut now = 0;
    let mut grants = Vec::new();
    while !s.is_empty() {
        grants.extend(s.iterate(now).grants);
        now = s
            .next_change_after(now)
            .unwrap_or(now + s.iteration_ps())
            .max(now + s.iteration_ps());
    }
    grants
}

#[test]
fn las_shares_a_destination_chunk_by_chunk_srpt_runs_one_to_the_end() {
    // Closed form: k equal messages of c chunks from k free sources to one
    // destination. LAS grants them in turn, grant i to source 1 + i mod k;
    // SRPT (and FCFS) sends the oldest whole, then the next.
    let (k, c) = (3u16, 4u32);
    let run = |priority| {
        let mut s = sched(k as usize + 1, priority);
        for src in 1..=k {
            s.notify(0, src, 0, src as u32, c * 256, Kind::Wreq, 0);
        }
        all_grants(&mut s)
            .iter()
            .map(|g| (g.src, g.bytes))
            .collect::<Vec<_>>()
    };
    let las: Vec<(u16, u32)> = (0..k as u32 * c)
        .map(|i| (1 + (i % k as u32) as u16, 256))
        .collect();
    let whole: Vec<(u16, u32)> = (0..k as u32 * c)
        .map(|i| (1 + (i / c) as u16, 256))
        .collect();
    assert_eq!(run(Priority::Las), las);
    assert_eq!(run(Priority::Srpt), whole);
    assert_eq!(run(Priority::Fcfs), whole);
}

#[test]
fn las_invariant_no_grant_to_a_message_ahead_of_a_waiting_one() {
    // Whenever LAS grants a chunk at a destination, no other message there
    // (each its pair's head, its source free) has attained fewer chunks.
    let mut rng = crate::rng::Rng::new(38);
    let mut s = sched(6, Priority::Las);
    let mut attained = std::collections::HashMap::new();
    for m in 0..5u32 {
        s.notify(
            0,
            1 + m as u16,
            0,
            m,
            256 * (1 + rng.below(6) as u32),
            Kind::Wreq,
            0,
        );
        attained.insert(m, 0u32);
    }
    for g in all_grants(&mut s) {
        let least = attained.values().min().copied().unwrap();
        assert_eq!(
            attained[&g.msg], least,
            "LAS granted message {} ahead of a less served one",
            g.msg
        );
        if g.last {
            attained.remove(&g.msg);
        } else {
            *attained.get_mut(&g.msg).unwrap() += 1;
        }
    }
    assert!(attained.is_empty(), "every message finished");
}

#[test]
fn priority_hold_of_one_still_grants_the_best_message() {
    // k = 1: the best entry itself passes "k times longer than the best";
    // it must not hold itself back (every run deadlocked).
    let mut s = sched(2, Priority::Srpt);
    s.hold_for_shorter(1);
    s.notify(0, 0, 1, 1, 64, Kind::Wreq, 0);
    assert_eq!(s.iterate(0).grants.len(), 1);
}

#[test]
fn a_pipelined_request_to_a_source_matched_in_flight_is_dropped_at_accept() {
    // Iteration 1 (t = 0) matches source 1 with destination 0. Iteration 2
    // starts a cycle later, before iteration 1 has marked source 1 busy:
    // destination 2 still requests source 1 and is refused at accept.
    let mut s = sched(3, Priority::Srpt);
    s.pipeline(2560);
    s.notify(0, 1, 0, 1, 5000, Kind::Wreq, 0);
    assert_eq!(s.iterate(0).grants.len(), 1);
    s.notify(0, 1, 2, 2, 64, Kind::Wreq, 0);
    let it = s.iterate(2560);
    assert!(it.grants.is_empty() && it.refused, "dropped at accept");
    // Once iteration 1 has ended, the request stage sees source 1 busy.
    let it = s.iterate(3 * 2560);
    assert!(it.grants.is_empty() && !it.refused);
}

#[test]
fn without_pair_order_a_later_entry_of_a_pair_may_go_first() {
    let mut s = sched(2, Priority::Srpt);
    s.without_pair_order();
    s.notify(0, 1, 0, 10, 5000, Kind::Wreq, 0);
    s.notify(0, 1, 0, 11, 64, Kind::Wreq, 0);
    assert_eq!(s.iterate(0).grants[0].msg, 11, "shortest first");
}

#[test]
fn a_port_whose_link_is_down_is_never_granted() {
    // Port 1 down: neither its queue (destination 1) nor its entries (source
    // 1) are granted; port 0 -> 2 still is; once up again, both are.
    let mut s = sched(3, Priority::Fcfs);
    s.notify(0, 0, 1, 1, 64, Kind::Wreq, 0);
    s.notify(0, 1, 2, 2, 64, Kind::Wreq, 0);
    s.notify(0, 0, 2, 3, 64, Kind::Wreq, 0);
    s.set_link_up(1, false);
    let msgs = |it: Iteration| it.grants.iter().map(|g| g.msg).collect::<Vec<_>>();
    assert_eq!(msgs(s.iterate(0)), vec![3]);
    assert!(
        s.iterate(100_000).grants.is_empty(),
        "only port 1's entries are left"
    );
    s.set_link_up(1, true);
    let mut got = msgs(s.iterate(200_000));
    got.sort();
    assert_eq!(got, vec![1, 2]);
}

#[test]
fn invisible_notifications_wait() {
    let mut s = sched(2, Priority::Fcfs);
    s.notify(100, 0, 1, 7, 8, Kind::Rres, 0);
    assert!(s.iterate(99).grants.is_empty());
    assert_eq!(s.next_change_after(99), Some(100));
    assert_eq!(s.iterate(100).grants.len(), 1);
}

#[test]
fn granted_circuits_never_overlap_at_a_port_over_time() {
    // Random notifications over time; every grant occupies its source and
    // destination for [at + extra, at + extra + wire): no two may overlap,
    // with the paper's PIM and with the priority hold option.
    // With EDM's own rules too: pipelined matching, no per-pair FIFO.
    for hold in [0, 1, 2] {
        for (pipelined, pair_fifo) in [(false, true), (true, true), (true, false)] {
            circuits_never_overlap(hold, pipelined, pair_fifo);
        }
    }
}

fn circuits_never_overlap(hold: u32, pipelined: bool, pair_fifo: bool) {
    let mut rng = crate::rng::Rng::new(21);
    let n = 6;
    let mut s = Scheduler::new(n, Priority::Srpt, 256, 3 * 2560, 640);
    s.hold_for_shorter(hold);
    if pipelined {
        s.pipeline(2560);
    }
    if !pair_fifo {
        s.without_pair_order();
    }
    let mut busy: Vec<Vec<(Ps, Ps)>> = vec![Vec::new(); 2 * n];
    let mut now = 0;
    let mut msg = 0;
    for _ in 0..3000 {
        if rng.below(3) == 0 {
            let src = rng.below(n as u64) as u16;
            let dst = ((src as u64 + 1 + rng.below(n as u64 - 1)) % n as u64) as u16;
            let extra = rng.below(2) * 3840;
            s.notify(
                now + 7680,
                src,
                dst,
                msg,
                1 + rng.below(900) as u32,
                Kind::Rres,
                extra,
            );
            msg += 1;
        }
        for g in s.iterate(now).grants {
            let start = g.release + s.iteration_ps() - s.wire_ps(Kind::Rres, g.bytes);
            let interval = (start, g.release + s.iteration_ps());
            for port in [g.src as usize, n + g.dst as usize] {
                if let Some(&(_, end)) = busy[port].last() {
                    assert!(
                        interval.0 >= end,
                        "port {port} overlaps: {interval:?} after {end}"
                    );
                }
                busy[port].push(interval);
            }
        }
        now += s.issue_interval_ps();
    }
    assert!(busy.iter().map(Vec::len).sum::<usize>() > 1000);
}
