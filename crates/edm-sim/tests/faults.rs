//! Faults (issue 25): read timeouts, bit errors on links and their recovery.
//! Every operation completes exactly once or is reported failed; every
//! write is acknowledged or reported failed, never lost unseen nor applied
//! twice (issue 40, docs/protocol.md §4b); bytes are conserved, no copy is
//! delivered twice, writes to one address stay in order. `data_recovery =
//! "ideal"` (the switch knows where data arrived) is the bound.
use edm_sim::config::FabricConfig;
use edm_sim::edm::config::{EdmConfig, MemoryOrder};
use edm_sim::edm::faults::{DataRecovery, Failure, FaultConfig};
use edm_sim::edm::Edm;
use edm_sim::engine::{Feed, Outcome, Protocol};
use edm_sim::workload::{assign_addresses, overlaps, MessageSpec, Op, OpenLoop, Roles, SizeCdf};

const NODES: usize = 8;

fn messages(load: f64, count: usize, seed: u64) -> Vec<MessageSpec> {
    let mut msgs = OpenLoop {
        nodes: NODES,
        roles: Roles::AllToAll,
        link_gbps: 100,
        load,
        write_ratio: 0.5,
        // Mostly one chunk, some several (chunk retries mid-message).
        sizes: SizeCdf::new(
            vec![(1.0, 0.0), (64.0, 0.7), (300.0, 0.9), (2000.0, 1.0)],
            8,
        )
        .unwrap(),
        messages: count,
        seed,
    }
    .generate();
    // A small address space: many writes of a pair overlap.
    assign_addresses(&mut msgs, 1 << 14, seed);
    msgs
}

/// EDM's rules with faults: with zero-queue booking (`zero_queue`) or
/// circuits that queue at the switch.
fn rules(faults: FaultConfig, zero_queue: bool) -> EdmConfig {
    EdmConfig {
        zero_queue,
        start_delay: zero_queue,
        faults,
        ..EdmConfig::edm_rules()
    }
}

fn lossy_rules(faults: FaultConfig) -> EdmConfig {
    rules(faults, false)
}

fn run(cfg: EdmConfig, msgs: &[MessageSpec]) -> Outcome {
    let fabric = FabricConfig {
        nodes: NODES,
        ..FabricConfig::default()
    };
    Edm::new(fabric, cfg).run(Feed::Open(msgs), &mut |_, _| {})
}

fn data_bytes(m: &MessageSpec) -> u64 {
    match m.op {
        Op::Rmw => edm_proto::spec::RMW_RESULT_BYTES as u64,
        _ => m.size as u64,
    }
}

#[test]
fn without_faults_no_read_times_out_and_nothing_is_retried() {
    let msgs = messages(0.7, 3000, 1);
    let faults = FaultConfig {
        read_timeout_ns: 100_000,
        ..FaultConfig::default()
    };
    for cfg in [
        EdmConfig {
            faults: faults.clone(),
            ..EdmConfig::edm_rules()
        },
        lossy_rules(faults),
    ] {
        let out = run(cfg, &msgs);
        assert!(out.records.iter().all(|r| r.complete_ps.is_some()));
        assert_eq!(out.totals.edm().faults, Default::default());
    }
}

#[test]
fn a_read_unanswered_in_time_finishes_with_a_null_response() {
    let msgs = messages(0.3, 500, 2);
    // Shorter than any read's round trip: every read and RMW times out,
    // every write completes, and the late responses are ignored.
    let out = run(
        EdmConfig {
            faults: FaultConfig {
                read_timeout_ns: 50,
                ..FaultConfig::default()
            },
            ..EdmConfig::edm_rules()
        },
        &msgs,
    );
    let reads = msgs.iter().filter(|m| m.op != Op::Write).count() as u64;
    assert!(reads > 100);
    let f = &out.totals.edm().faults;
    assert_eq!(f.timed_out, reads);
    assert!(f.late_data >= reads, "{f:?}");
    for (m, r) in msgs.iter().zip(&out.records) {
        assert_eq!(r.complete_ps.is_some(), m.op == Op::Write);
        assert_eq!(r.timed_out, m.op != Op::Write);
    }
}

#[test]
fn with_an_ideal_nack_bit_errors_lose_no_operation_duplicate_none_and_keep_write_order() {
    let msgs = messages(0.6, 4000, 3);
    // A retry timeout well past the round trip, and one shorter than many
    // (a chunk merely late is granted again: its second copy must be dropped).
    for (retry_timeout_ns, duplicates, zero_queue) in [
        (5_000, false, false),
        (100, true, false),
        (5_000, false, true),
        (100, true, true),
    ] {
        let faults = FaultConfig {
            ber: 1e-4,
            retry_timeout_ns,
            seed: 9,
            data_recovery: DataRecovery::Ideal,
            ..FaultConfig::default()
        };
        let out = run(rules(faults, zero_queue), &msgs);
        let f = &out.totals.edm().faults;
        // Something was hit, on every kind of unit, and recovered.
        assert!(f.control_corrupted > 20 && f.data_corrupted > 20, "{f:?}");
        assert!(
            f.chunk_retries >= f.data_corrupted && f.notify_retries > 0,
            "{f:?}"
        );
        assert_eq!(f.duplicate_data > 0, duplicates, "{f:?}");
        assert_eq!(f.undetected, 0);
        assert_eq!(f.timed_out, 0);
        // Every operation completed, each exactly once: its bytes once.
        assert!(out.records.iter().all(|r| r.complete_ps.is_some()));
        let expected: u64 = msgs.iter().map(data_bytes).sum();
        assert_eq!(out.totals.delivered_bytes, expected, "{f:?}");
        assert_writes_in_order(&msgs, &out);
    }
}

/// Every operation completed, and writes to one address in issue order.
fn assert_writes_in_order(msgs: &[MessageSpec], out: &Outcome) {
    assert!(out.records.iter().all(|r| r.complete_ps.is_some()));
    for (i, a) in msgs.iter().enumerate().filter(|(_, m)| m.op != Op::Read) {
        for (j, b) in msgs.iter().enumerate().skip(i + 1).take(400) {
            let same_pair = (a.requester, a.memory) == (b.requester, b.memory);
            if same_pair && b.op != Op::Read && overlaps(a.range(), b.range()) {
                let (ta, tb) = (out.records[i].complete_ps, out.records[j].complete_ps);
                assert!(ta < tb, "write {i} after {j}");
            }
        }
    }
}

#[test]
fn the_error_draws_follow_the_seed() {
    let msgs = messages(0.5, 1000, 4);
    let with_seed = |seed| {
        let out = run(
            lossy_rules(FaultConfig {
                ber: 3e-5,
                seed,
                ..FaultConfig::default()
            }),
            &msgs,
        );
        let times: Vec<_> = out.records.iter().map(|r| r.complete_ps).collect();
        (times, out.totals.edm().faults.clone())
    };
    assert_eq!(with_seed(1), with_seed(1));
    assert_ne!(with_seed(1).0, with_seed(2).0);
}

#[test]
fn lossy_rules_refuse_what_recovery_does_not_model() {
    use edm_sim::schema::{RunConfig, Value};
    let given = |extra: &[(&str, Value)]| {
        let mut v = vec![("ber".to_string(), Value::Float(1e-6))];
        v.extend(extra.iter().map(|(k, x)| (k.to_string(), x.clone())));
        RunConfig::resolve(&v)
    };
    let ok = given(&[]).unwrap();
    assert_eq!(ok.edm.memory_order, MemoryOrder::Address);
    assert_eq!(ok.edm.faults.seed, ok.seed);
    let err = given(&[("protocol", Value::Text("edm-paper".into()))]).unwrap_err();
    assert_eq!(err.field, Some("ber"));
    assert!(err.why.contains("memory_order"), "{err}");
    let err = given(&[("batch_bytes", Value::Int(512))]).unwrap_err();
    assert!(err.why.contains("batching"), "{err}");
}

fn failing(failures: &str, dual_switch: bool) -> FaultConfig {
    FaultConfig {
        failures: Failure::parse_list(failures).unwrap(),
        dual_switch,
        retry_timeout_ns: 2_000,
        give_up_ns: 200_000,
        ..FaultConfig::default()
    }
}

/// Every message completed once (its bytes once), or is reported failed
/// (some of its chunks may have arrived), or is a write reported lost;
/// returns how many completed and how many failed (lost ones: the
/// counters).
fn accounted(msgs: &[MessageSpec], out: &Outcome) -> (u64, u64) {
    let f = &out.totals.edm().faults;
    // (A write reported failed counts as failed even if its data got there.)
    let done = out
        .records
        .iter()
        .filter(|r| r.complete_ps.is_some() && !r.timed_out)
        .count() as u64;
    let failed = out.records.iter().filter(|r| r.timed_out).count() as u64;
    let lost = out.records.iter().filter(|r| r.lost).count() as u64;
    assert_eq!(done + failed + lost, msgs.len() as u64, "{f:?}");
    assert_eq!(failed, f.failed + f.timed_out, "{f:?}");
    assert_eq!(lost, f.writes_lost, "{f:?}");
    assert!(
        msgs.iter()
            .zip(&out.records)
            .all(|(m, r)| !r.lost || (m.op == Op::Write && !r.timed_out && r.complete_ps.is_none())),
        "{f:?}"
    );
    let bytes = |done: bool| -> u64 {
        msgs.iter()
            .zip(&out.records)
            .filter(|(_, r)| (r.complete_ps.is_some() && !r.timed_out) == done)
            .map(|(m, _)| data_bytes(m))
            .sum()
    };
    let delivered = out.totals.delivered_bytes;
    assert!(
        delivered >= bytes(true) && delivered <= bytes(true) + bytes(false),
        "{f:?}"
    );
    if failed == 0 && lost == 0 {
        assert_eq!(delivered, bytes(true), "{f:?}");
    }
    (done, failed)
}

#[test]
fn a_link_or_switch_down_and_back_loses_no_write() {
    let msgs = messages(0.5, 4000, 5);
    let end = msgs.last().unwrap().issue_ps / 1000;
    // A switch that comes back starts empty: its hosts send it their
    // demand again. Nothing is lost, with the ideal NACK (the labelled
    // bound) and with the protocol's recovery: a write whose data went
    // into the dead link (after the switch, or before it and then dropped
    // with the port's demand) gets no /A/ and is sent again.
    for target in ["link:2", "switch"] {
        let events = format!("{target}@{}-{}", end / 4, end / 2);
        for zero_queue in [false, true] {
            let ideal = FaultConfig {
                data_recovery: DataRecovery::Ideal,
                ..failing(&events, false)
            };
            let out = run(rules(ideal, zero_queue), &msgs);
            let f = &out.totals.edm().faults;
            assert!(f.link_down_drops > 0 && f.demand_dropped > 0, "{f:?}");
            assert_eq!(accounted(&msgs, &out), (msgs.len() as u64, 0), "{f:?}");
            // The protocol: every write sent into it is sent again and
            // acknowledged; nothing lost.
            let out = run(rules(failing(&events, false), zero_queue), &msgs);
            let f = &out.totals.edm().faults;
            let (done, failed) = accounted(&msgs, &out);
            assert_eq!(
                (done, failed, f.writes_lost),
                (msgs.len() as u64, 0, 0),
                "{f:?}"
            );
        }
    }
}

#[test]
fn a_switch_lost_for_good_fails_what_it_carried_unless_a_second_plane_takes_over() {
    let msgs = messages(0.5, 4000, 6);
    let end = msgs.last().unwrap().issue_ps / 1000;
    let single = run(
        lossy_rules(failing(&format!("switch@{}", end / 2), false)),
        &msgs,
    );
    let (done, failed) = accounted(&msgs, &single);
    assert!(failed > msgs.len() as u64 / 3 && done > msgs.len() as u64 / 3);
    // Whichever plane fails, switch or a link, under both rule sets.
    for target in ["switch:0", "switch:1", "link:2:0", "link:5:1"] {
        let events = format!("{target}@{}", end / 2);
        for zero_queue in [false, true] {
            let dual = run(rules(failing(&events, true), zero_queue), &msgs);
            let f = &dual.totals.edm().faults;
            assert_eq!(accounted(&msgs, &dual), (msgs.len() as u64, 0), "{f:?}");
            assert!(f.link_down_drops > 0, "{target} {f:?}");
            // Both planes carried the messages issued before the failure.
            assert!(f.mirror_copies_discarded > msgs.len() as u64 / 3, "{f:?}");
        }
    }
}

/// Data units of the workload: its messages' chunks.
fn chunks(msgs: &[MessageSpec], chunk_bytes: u64) -> u64 {
    msgs.iter()
        .map(|m| data_bytes(m).div_ceil(chunk_bytes))
        .sum()
}

#[test]
fn without_faults_the_dual_switch_completes_each_message_as_one_plane_does() {
    // Two identical planes see the same demand at the same times: each
    // copy of each chunk arrives at the same time on both, the first is
    // kept, so every message completes when it does with one plane (one
    // whose links can fail, but never do in the run: the same rules for
    // finishing writes), and every chunk's second copy is discarded.
    let msgs = messages(0.5, 2000, 10);
    let never = format!("link:0@{}", msgs.last().unwrap().issue_ps);
    for zero_queue in [false, true] {
        let single = run(rules(failing(&never, false), zero_queue), &msgs);
        let dual = run(rules(failing(&never, true), zero_queue), &msgs);
        let f = &dual.totals.edm().faults;
        for (i, (a, b)) in single.records.iter().zip(&dual.records).enumerate() {
            assert_eq!(a.complete_ps, b.complete_ps, "message {i}");
            assert_eq!(a.acked_ps, b.acked_ps, "message {i}");
        }
        assert_eq!(accounted(&msgs, &dual), (msgs.len() as u64, 0), "{f:?}");
        let chunk_bytes = EdmConfig::edm_rules().chunk_bytes as u64;
        assert_eq!(
            f.mirror_copies_discarded,
            chunks(&msgs, chunk_bytes),
            "{f:?}"
        );
        assert_eq!((f.link_down_drops, f.duplicate_data), (0, 0), "{f:?}");
    }
}

/// Messages of `msgs` (with their records) for which `pick` holds.
fn count(msgs: &[MessageSpec], out: &Outcome, pick: impl Fn(&MessageSpec, u64) -> bool) -> u64 {
    msgs.iter()
        .zip(&out.records)
        .filter(|(m, r)| pick(m, r.complete_ps.unwrap_or(u64::MAX)))
        .count() as u64
}

#[test]
fn after_a_plane_fails_its_hosts_stop_sending_into_it_once_they_see_it_or_the_other_delivers() {
    // One-chunk messages and a retry timeout past every completion. A
    // requester that sees its link to the failed plane down (`link_detect_ns`
    // after the failure: every host for a switch, host H for H's link) sends
    // new messages on the other plane only (`unmirrored`). Every other
    // message's copy on the failed plane either arrives (one of its two
    // copies is then discarded), loses exactly one unit there (its /N/,
    // request, grant or data), or has its demand dropped by the switch (a
    // failed switch drops all it holds; a live one what goes to or from a
    // port it sees down, held or arriving: the copies of requesters that
    // cannot see a memory node's link, the RTL's `memory_link_cut`), and
    // nothing on that plane is sent again: the hosts learn of the other
    // plane's delivery. So the units into the down link are at most the
    // messages in flight at the failure or decided before it was seen.
    let mut msgs = messages(0.5, 3000, 11);
    for m in &mut msgs {
        m.size = 64;
    }
    let end = msgs.last().unwrap().issue_ps / 1000;
    let retry_timeout_ns = 50_000;
    for (target, failed_host) in [
        ("switch:0", None),
        ("switch:1", None),
        ("link:2:0", Some(2)),
        ("link:6:1", Some(6)),
    ] {
        let events = format!("{target}@{}", end / 3);
        let down = end / 3 * 1000;
        for (link_detect_ns, zero_queue) in [(100, false), (100, true), (0, false), (3_000, true)] {
            let faults = FaultConfig {
                retry_timeout_ns,
                link_detect_ns,
                ..failing(&events, true)
            };
            let seen = down + link_detect_ns * 1000;
            let out = run(rules(faults, zero_queue), &msgs);
            let f = &out.totals.edm().faults;
            let slowest = msgs
                .iter()
                .zip(&out.records)
                .map(|(m, r)| r.complete_ps.unwrap() - m.issue_ps)
                .max()
                .unwrap();
            assert!(slowest < retry_timeout_ns * 1000, "{slowest} ps");
            assert_eq!((f.notify_retries, f.chunk_retries), (0, 0), "{f:?}");
            assert_eq!(
                f.link_down_drops + f.mirror_copies_discarded + f.unmirrored + f.demand_dropped,
                msgs.len() as u64,
                "{target} {f:?}"
            );
            let sees = |m: &MessageSpec| failed_host.is_none_or(|h| m.requester == h);
            let unseen = |m: &MessageSpec| failed_host.is_some_and(|h| m.memory == h && !sees(m));
            // Left out: every message of a host that sees the failure issued
            // after it saw it, and none that ended before.
            let after = count(&msgs, &out, |m, _| sees(m) && m.issue_ps >= seen);
            let may = count(&msgs, &out, |m, done| sees(m) && done >= seen);
            assert!(
                after > 0 && after <= f.unmirrored && f.unmirrored <= may,
                "{target} {after} {may} {f:?}"
            );
            // Units go into the down link only for messages decided before
            // it was seen (by their requester, or for a link by the switch);
            // those and the later messages of requesters that cannot see it
            // each lost one unit there or had their demand dropped there.
            let touch = |m: &MessageSpec| sees(m) || unseen(m);
            let decided_before = count(&msgs, &out, |m, done| {
                done >= down && m.issue_ps < seen && touch(m)
            });
            let later_unseen = count(&msgs, &out, |m, _| unseen(m) && m.issue_ps >= seen);
            assert!(
                f.link_down_drops > 0 && f.link_down_drops <= decided_before,
                "{target} {decided_before} {f:?}"
            );
            let lost_or_dropped = f.link_down_drops + f.demand_dropped;
            let expected = decided_before + later_unseen;
            // Tight (the seed's runs: all but at most one).
            assert!(
                lost_or_dropped <= expected && lost_or_dropped + expected / 20 + 1 >= expected,
                "{target} {decided_before} {later_unseen} {f:?}"
            );
            assert_eq!(accounted(&msgs, &out), (msgs.len() as u64, 0), "{f:?}");
        }
    }
}

#[test]
fn a_link_down_and_back_is_left_out_while_its_host_sees_it_down_then_mirrored_again() {
    use edm_sim::edm::UnitKind;
    let msgs = messages(0.5, 4000, 14);
    let end = msgs.last().unwrap().issue_ps / 1000;
    let (host, plane) = (3, 1);
    let (down, up) = (end / 4 * 1000, end / 2 * 1000);
    let events = format!("link:{host}:{plane}@{}-{}", down / 1000, up / 1000);
    let fabric = FabricConfig {
        nodes: NODES,
        ..FabricConfig::default()
    };
    for zero_queue in [false, true] {
        // A retry timeout shorter than many round trips: the host must not
        // re-send into the link while it sees it down either.
        let faults = FaultConfig {
            retry_timeout_ns: 300,
            ..failing(&events, true)
        };
        let detect = faults.link_detect_ps();
        let (out, trace) = Edm::new(fabric.clone(), rules(faults, zero_queue)).run_traced(&msgs);
        let f = &out.totals.edm().faults;
        assert_eq!(accounted(&msgs, &out), (msgs.len() as u64, 0), "{f:?}");
        let mine = |m: &MessageSpec| m.requester == host;
        let may = count(&msgs, &out, |m, done| {
            mine(m) && m.issue_ps < up + detect && done >= down + detect
        });
        assert!(f.unmirrored > 0 && f.unmirrored <= may, "{may} {f:?}");
        // The host's /N/ and requests on each plane, by message.
        let mut sent_on = vec![[false; 2]; msgs.len()];
        let mut latest_while_seen_down = 0;
        for t in &trace {
            if t.up && t.host == host && matches!(t.kind, UnitKind::Notify | UnitKind::Request) {
                sent_on[t.msg as usize][t.plane as usize] = true;
                if t.plane == plane && (down + detect..up + detect).contains(&t.start) {
                    latest_while_seen_down = latest_while_seen_down.max(t.start - down - detect);
                }
            }
        }
        // Into the down link only what was decided before the host saw it
        // (generated, and in zero-queue mode waiting for a gap): nothing,
        // not even a retry, decided later.
        let generated = fabric.cycles(EdmConfig::edm_rules().steps.gen_req);
        let waited = out.totals.edm().max_request_wait_ps;
        assert!(
            latest_while_seen_down <= generated + waited,
            "{latest_while_seen_down} ps"
        );
        let later: Vec<usize> = (0..msgs.len())
            .filter(|&i| mine(&msgs[i]) && msgs[i].issue_ps >= up + detect)
            .collect();
        assert!(later.len() > 100);
        assert!(later.iter().all(|&i| sent_on[i] == [true, true]));
        let left_out = (0..msgs.len())
            .filter(|&i| mine(&msgs[i]) && sent_on[i] == [plane == 1, plane == 0])
            .count() as u64;
        assert_eq!(left_out, f.unmirrored, "{f:?}");
    }
}

#[test]
fn with_an_ideal_nack_bit_errors_on_both_planes_lose_no_operation_nor_duplicate_one() {
    let msgs = messages(0.6, 3000, 12);
    for zero_queue in [false, true] {
        // A retry timeout shorter than many round trips: copies from both
        // planes and from retries race to every receiver.
        let faults = FaultConfig {
            ber: 1e-4,
            retry_timeout_ns: 100,
            dual_switch: true,
            seed: 13,
            data_recovery: DataRecovery::Ideal,
            ..FaultConfig::default()
        };
        let out = run(rules(faults, zero_queue), &msgs);
        let f = &out.totals.edm().faults;
        assert!(f.data_corrupted > 20 && f.control_corrupted > 20, "{f:?}");
        assert!(
            f.duplicate_data > 0 && f.mirror_copies_discarded > 0,
            "{f:?}"
        );
        assert_eq!((f.undetected, f.failed), (0, 0), "{f:?}");
        let expected: u64 = msgs.iter().map(data_bytes).sum();
        assert_eq!(out.totals.delivered_bytes, expected, "{f:?}");
        assert_writes_in_order(&msgs, &out);
    }
}

#[test]
fn the_ber_monitor_disables_a_noisy_link_and_the_second_plane_carries_on() {
    let msgs = messages(0.5, 3000, 7);
    // Host 2's plane-0 link is noisy from the start, the others clean.
    let with = |dual_switch, monitor_threshold| {
        let faults = FaultConfig {
            monitor_threshold,
            monitor_window_ns: 10_000,
            ..failing("link:2:0@0/1e-4", dual_switch)
        };
        let out = run(lossy_rules(faults), &msgs);
        let (_, failed) = accounted(&msgs, &out);
        let f = &out.totals.edm().faults;
        assert!(f.data_corrupted > 0, "{f:?}");
        // A dual-switch host sees its disabled link and leaves that plane out.
        assert_eq!(
            f.unmirrored > 0,
            dual_switch && f.links_disabled > 0,
            "{f:?}"
        );
        (f.links_disabled, failed)
    };
    // Without the monitor the retries get everything through the noise.
    assert_eq!(with(false, 0), (0, 0));
    // With it the link goes: its host's operations fail on one plane...
    let (disabled, failed) = with(false, 4);
    let touching = msgs
        .iter()
        .filter(|m| m.requester == 2 || m.memory == 2)
        .count() as u64;
    assert!(
        disabled == 1 && failed > 0 && failed <= touching,
        "{disabled} {failed}"
    );
    // ...and the other plane carries them with the dual switch.
    assert_eq!(with(true, 4), (1, 0));
}

#[test]
fn failure_events_are_read_or_refused_with_the_event_named() {
    let f = Failure::parse_list("switch@5, link:3:1@10-20, link:2@0/1e-4").unwrap();
    assert_eq!(f.len(), 3);
    assert_eq!((f[2].ber, f[0].ber), (Some(1e-4), None));
    assert_eq!(
        (f[1].host, f[1].plane, f[1].down_ns, f[1].up_ns),
        (Some(3), 1, 10, Some(20))
    );
    for bad in [
        "link:3@20-10",
        "router@5",
        "switch:2@5",
        "link:x@5",
        "switch",
    ] {
        let err = Failure::parse_list(bad).unwrap_err();
        assert!(err.contains(bad), "{err}");
    }
}

#[test]
fn failures_naming_what_the_fabric_has_not_are_refused() {
    use edm_sim::schema::{RunConfig, Value};
    let given = |failures: &str, dual: i128| {
        RunConfig::resolve(&[
            ("nodes".into(), Value::Int(8)),
            ("zero_queue".into(), Value::Int(0)),
            ("dual_switch".into(), Value::Int(dual)),
            ("failures".into(), Value::Text(failures.into())),
        ])
    };
    assert!(given("link:7:1@5", 1).is_ok());
    for (bad, dual) in [("link:8@5", 0), ("switch:1@5", 0), ("link:9:1@5", 1)] {
        let err = given(bad, dual).unwrap_err();
        assert_eq!(err.field, Some("failures"), "{err}");
    }
}

#[test]
fn a_failed_switch_and_a_port_seen_down_get_nothing_granted_after_they_are_seen() {
    use edm_sim::edm::UnitKind;
    let msgs = messages(0.5, 3000, 15);
    let end = msgs.last().unwrap().issue_ps / 1000;
    let down = end / 3 * 1000;
    let fabric = FabricConfig {
        nodes: NODES,
        ..FabricConfig::default()
    };
    for (target, dual, plane, port) in [
        ("switch:0", true, 0, None),
        ("link:4:1", true, 1, Some(4)),
        ("switch", false, 0, None),
        ("link:4", false, 0, Some(4)),
    ] {
        for zero_queue in [false, true] {
            // A retry timeout shorter than many round trips: a switch that
            // kept the demand or its timers would grant into the dead port
            // again and again.
            let faults = FaultConfig {
                retry_timeout_ns: 300,
                ..failing(&format!("{target}@{}", down / 1000), dual)
            };
            let seen = down + faults.link_detect_ps();
            let (out, trace) =
                Edm::new(fabric.clone(), rules(faults, zero_queue)).run_traced(&msgs);
            let f = &out.totals.edm().faults;
            let (done, failed) = accounted(&msgs, &out);
            assert!(
                f.demand_dropped > 0 && f.link_down_drops > 0,
                "{target} {f:?}"
            );
            // What the switch sends, and what hosts send on its grants, to
            // or from the dead port (for a switch: any), from 1 us after it
            // was seen: more than a circuit decided before takes to go out
            // (under 300 ns in these runs; one that kept its demand or its
            // timers sent units into it until the end, 7 to 270 us later).
            let late = trace
                .iter()
                .filter(|t| {
                    t.plane == plane
                        && matches!(
                            t.kind,
                            UnitKind::Grant | UnitKind::ForwardedRequest | UnitKind::Data
                        )
                        && port.is_none_or(|h| t.host == h)
                        && t.start >= seen + 1_000_000
                })
                .count();
            assert_eq!(late, 0, "{target} {f:?}");
            if dual {
                assert_eq!((done, failed), (msgs.len() as u64, 0), "{target} {f:?}");
            } else {
                // Lost, and reported: the messages through the dead port.
                let through =
                    |m: &MessageSpec| port.is_none_or(|h| m.requester == h || m.memory == h);
                // (And writes in memory whose /A/ the failure took: their
                // outcome unknown to their host, reported failed.)
                let ends_late = count(&msgs, &out, |m, done| through(m) && done > down);
                assert!(
                    failed > 0 && failed <= ends_late + f.writes_failed_applied,
                    "{target} {f:?}"
                );
            }
        }
    }
}

/// `msgs` with every third read made an RMW (of an 8-byte word).
fn with_rmws(mut msgs: Vec<MessageSpec>) -> Vec<MessageSpec> {
    for m in msgs.iter_mut().filter(|m| m.op == Op::Read).step_by(3) {
        m.op = Op::Rmw;
        m.size = 8;
    }
    msgs
}

#[test]
fn an_rmw_is_applied_once_whatever_copies_of_it_reach_its_memory_node() {
    let msgs = with_rmws(messages(0.5, 3000, 16));
    let rmws = msgs.iter().filter(|m| m.op == Op::Rmw).count() as u64;
    assert!(rmws > 200);
    let end = msgs.last().unwrap().issue_ps / 1000;
    for zero_queue in [false, true] {
        // Closed form: without faults both planes forward every RMW request;
        // each second copy is recognised and answered with the first's
        // result: every RMW applied exactly once.
        let out = run(rules(failing("", true), zero_queue), &msgs);
        let f = &out.totals.edm().faults;
        assert_eq!(
            (f.rmw_replayed, f.rmw_refused, f.rmw_applied_twice),
            (rmws, 0, 0),
            "{f:?}"
        );
        assert_eq!(accounted(&msgs, &out), (msgs.len() as u64, 0), "{f:?}");
        // Copies from retries (bit errors, a retry timeout shorter than many
        // round trips: responses hit or late) and from both planes, a plane
        // failing or a memory node's link cut and restored: some second
        // copies, none applied, no first copy refused. (A plane that lags
        // delivers second copies after newer RMWs of their pair: a record
        // of the last 4 results alone applied 6 of them again, in the link
        // cut with queued circuits.)
        // With the ideal NACK everything completes; with the protocol's
        // recovery requesters re-send requests whose response was dropped
        // and writes whose /A/ did not come (more copies, later): still
        // none applied twice, every operation accounted for.
        for (ber, failures, dual, recovery) in [
            (1e-4, String::new(), false, DataRecovery::Ideal),
            (1e-4, String::new(), true, DataRecovery::Ideal),
            (
                0.0,
                format!("switch:1@{}", end / 3),
                true,
                DataRecovery::Ideal,
            ),
            (
                0.0,
                format!("link:3:0@{}-{}", end / 4, end / 2),
                true,
                DataRecovery::Ideal,
            ),
            (
                0.0,
                format!("switch@{}-{}", end / 4, end / 2),
                false,
                DataRecovery::Ideal,
            ),
            // (One plane at 1e-4: 16 KB messages sent again whole starve
            // under SRPT past `give_up_ns`; docs/faults.md §4.)
            (3e-5, String::new(), false, DataRecovery::Protocol),
            (1e-4, String::new(), true, DataRecovery::Protocol),
            (
                0.0,
                format!("link:3:0@{}-{}", end / 4, end / 2),
                true,
                DataRecovery::Protocol,
            ),
        ] {
            // (Copies galore: 100 ns. The protocol's writes need a retry
            // timeout past their /A/'s round trip and scheduling wait.)
            let retry_timeout_ns = if recovery == DataRecovery::Ideal {
                100
            } else {
                3_000
            };
            let faults = FaultConfig {
                ber,
                retry_timeout_ns,
                seed: 17,
                data_recovery: recovery,
                ..failing(&failures, dual)
            };
            let out = run(rules(faults, zero_queue), &msgs);
            let f = &out.totals.edm().faults;
            assert!(f.rmw_replayed > 0, "{failures} {f:?}");
            assert_eq!(
                (f.rmw_applied_twice, f.rmw_first_copy_refused),
                (0, 0),
                "{failures} {f:?}"
            );
            let (done, failed) = accounted(&msgs, &out);
            if recovery == DataRecovery::Ideal {
                assert_eq!((done, failed), (msgs.len() as u64, 0), "{f:?}");
            } else {
                // The bounded record: DUP_RMW_RESULTS results per source.
                assert!(
                    f.rmw_results_kept_max <= edm_proto::spec::DUP_RMW_RESULTS as u64,
                    "{failures} {f:?}"
                );
                assert_eq!(f.rmw_result_gone, 0, "{failures} {f:?}");
                assert!(failed * 100 < msgs.len() as u64, "{failures} {f:?}");
            }
        }
    }
}

/// Every write has a definite outcome (docs/protocol.md §4b): acknowledged
/// (its data in memory, applied once) or reported failed; none lost unseen,
/// none left unresolved, none applied twice, no waiting message's copy
/// refused by the bounded duplicate record, no RMW result gone while asked.
/// Returns how many writes were acknowledged.
fn every_write_resolved(msgs: &[MessageSpec], out: &Outcome) -> u64 {
    let f = &out.totals.edm().faults;
    assert_eq!(
        (
            f.writes_lost,
            f.writes_unresolved,
            f.writes_applied_twice,
            f.writes_failed_applied,
            f.dup_first_copy_refused,
        ),
        (0, 0, 0, 0, 0),
        "{f:?}"
    );
    assert_eq!(
        (
            f.rmw_applied_twice,
            f.rmw_first_copy_refused,
            f.rmw_result_gone
        ),
        (0, 0, 0),
        "{f:?}"
    );
    let mut acked = 0;
    for (m, r) in msgs.iter().zip(&out.records) {
        if m.op != Op::Write {
            continue;
        }
        match (r.acked_ps, r.timed_out) {
            (Some(at), false) => {
                // Acknowledged after its data was in memory.
                let complete = r.complete_ps.expect("an acknowledged write is in memory");
                assert!(at > complete, "{m:?} {r:?}");
                acked += 1;
            }
            (None, true) => {}
            _ => panic!("write without one outcome: {m:?} {r:?} {f:?}"),
        }
    }
    assert_eq!(acked, f.writes_acked, "{f:?}");
    assert!(
        f.retry_buffer_max <= edm_proto::spec::RETRY_UNRESOLVED as u64,
        "{f:?}"
    );
    assert!(
        f.dup_span_max < edm_proto::spec::DUP_WINDOW_IDS as u64,
        "{f:?}"
    );
    acked
}

#[test]
fn with_the_protocol_every_write_is_acknowledged_under_bit_errors() {
    // One switch and two, both rule sets, bit errors hitting /N/, /G/,
    // data and /A/: write data dropped after the switch is sent again for
    // want of its /A/ (same id) and applied once; every write ends
    // acknowledged; reads asked for again complete; bytes add up.
    let msgs = with_rmws(messages(0.6, 4000, 3));
    for zero_queue in [false, true] {
        for (ber, dual_switch) in [(3e-5, false), (1e-4, false), (1e-4, true)] {
            let faults = FaultConfig {
                ber,
                dual_switch,
                retry_timeout_ns: 5_000,
                seed: 9,
                ..FaultConfig::default()
            };
            assert_eq!(faults.data_recovery, DataRecovery::Protocol);
            let out = run(rules(faults, zero_queue), &msgs);
            let f = &out.totals.edm().faults;
            let (done, failed) = accounted(&msgs, &out);
            assert_eq!((f.undetected, failed), (0, 0), "{f:?}");
            assert_eq!(done, msgs.len() as u64, "{f:?}");
            let writes = msgs.iter().filter(|m| m.op == Op::Write).count() as u64;
            assert_eq!(every_write_resolved(&msgs, &out), writes, "{f:?}");
            // The mechanism was exercised: data and /A/ lost, writes re-sent.
            assert!(f.write_data_dropped > 5 && f.acks_lost > 0, "{ber} {f:?}");
            assert!(f.write_retries >= f.write_data_dropped.min(1), "{f:?}");
            if !dual_switch {
                // Each data unit dropped was after the switch.
                assert_eq!(
                    f.data_corrupted,
                    f.write_data_dropped + f.response_data_dropped,
                    "{f:?}"
                );
            }
        }
    }
}

#[test]
fn without_faults_an_acknowledgement_follows_its_write_in_closed_form() {
    // A write alone: its /A/ leaves its memory node `gen_req` after the
    // write is in memory and takes one block and one hop per link, the
    // switch's forwarding and the host's processing of a block.
    let cfg = EdmConfig::edm_rules();
    let fabric = FabricConfig {
        nodes: NODES,
        ..FabricConfig::default()
    };
    let cycles = |c: u32| fabric.cycles(c);
    let path = cycles(cfg.steps.gen_req)
        + 2 * (fabric.block_ps() + fabric.hop_ps())
        + cycles(cfg.steps.sw_forward + cfg.steps.proc_response);
    for size in [8, 64, 256, 4096] {
        let msgs = [MessageSpec {
            op: Op::Write,
            requester: 1,
            memory: 2,
            size,
            issue_ps: 1000,
            addr: 0,
            fence: false,
        }];
        let out = Edm::new(fabric.clone(), cfg.clone()).run(Feed::Open(&msgs), &mut |_, _| {});
        let r = &out.records[0];
        assert_eq!(r.acked_ps.unwrap() - r.complete_ps.unwrap(), path, "{size}");
        assert_eq!(out.totals.edm().acks_sent, 1);
    }
    // Loaded: /A/ blocks are at most one per ACK_GAP_BLOCKS of a memory
    // node's uplink (aggregated), every write acknowledged once.
    let msgs = messages(0.8, 4000, 5);
    let out = Edm::new(fabric.clone(), cfg).run(Feed::Open(&msgs), &mut |_, _| {});
    let writes: Vec<_> = msgs
        .iter()
        .zip(&out.records)
        .filter(|(m, _)| m.op == Op::Write)
        .collect();
    assert!(writes.iter().all(|(_, r)| r.acked_ps > r.complete_ps));
    let acks = out.totals.edm().acks_sent;
    let span = out.totals.end_ps / fabric.block_ps();
    assert!(acks <= NODES as u64 * (span / edm_proto::spec::ACK_GAP_BLOCKS as u64 + 1));
    assert!(
        acks < writes.len() as u64,
        "{acks} acks for {} writes",
        writes.len()
    );
}

#[test]
fn a_pair_writing_steadily_is_acknowledged_in_groups_in_closed_form() {
    // One pair, 64-byte writes every T = 40 blocks, nothing else: write k is
    // ready for its /A/ at r_k = r_0 + kT. The first /A/ leaves at r_0 (a
    // quiet node and pair); the second at the node's slot r_0 + G with the
    // writes ready by then (G/T = 2.4: two, so the pair is held); every later
    // one a pair slot H after the one before: L_j = r_0 + G + (j - 1)H, each
    // with the H/T = 12.8 writes ready in between (fewer than a full map).
    // Write k's /A/ is the first L_j at or after r_k.
    use edm_proto::spec::{ACK_GAP_BLOCKS, ACK_PAIR_GAP_BLOCKS};
    // (X raised so the requester's notifications do not bunch the writes.)
    let cfg = EdmConfig {
        max_active_notifs: 16,
        ..EdmConfig::edm_rules()
    };
    let fabric = FabricConfig {
        nodes: NODES,
        ..FabricConfig::default()
    };
    let block = fabric.block_ps();
    let (t, g, h) = (
        40 * block,
        ACK_GAP_BLOCKS as u64 * block,
        ACK_PAIR_GAP_BLOCKS as u64 * block,
    );
    let writes = 100u64;
    let msgs: Vec<_> = (0..writes)
        .map(|k| MessageSpec {
            op: Op::Write,
            requester: 1,
            memory: 2,
            size: 64,
            issue_ps: 1000 + k * t,
            addr: 64 * k,
            fence: false,
        })
        .collect();
    let out = Edm::new(fabric.clone(), cfg.clone()).run(Feed::Open(&msgs), &mut |_, _| {});
    let gen_req = fabric.cycles(cfg.steps.gen_req);
    let after_leave = 2 * (fabric.block_ps() + fabric.hop_ps())
        + fabric.cycles(cfg.steps.sw_forward + cfg.steps.proc_response);
    let ready: Vec<u64> = out
        .records
        .iter()
        .map(|r| r.complete_ps.unwrap() + gen_req)
        .collect();
    // The premise: the writes reach memory T apart.
    assert!(ready.windows(2).all(|w| w[1] - w[0] == t), "{ready:?}");
    let leave = |r: u64| {
        if r == ready[0] {
            return r;
        }
        let mut l = ready[0] + g;
        while l < r {
            l += h;
        }
        l
    };
    for (k, r) in out.records.iter().enumerate() {
        assert_eq!(
            r.acked_ps.unwrap(),
            leave(ready[k]) + after_leave,
            "write {k}"
        );
    }
    let span = ready[writes as usize - 1] - ready[0] - g;
    let expected = 2 + span.div_ceil(h);
    assert_eq!(out.totals.edm().acks_sent, expected);
    // A hundred writes in 10 /A/ where one per write left a node's slot
    // allowed it before (ACK_GAP_BLOCKS > T would have sent 100 / 2.4).
    assert!(expected * 8 < writes);
}

#[test]
fn with_the_protocol_every_write_is_resolved_through_cuts_and_switch_failures() {
    // Link cuts and a switch down and back with one plane, a switch lost
    // for good with two: every write acknowledged (reported failed only
    // where no path is left: one plane's switch lost for good).
    let msgs = with_rmws(messages(0.5, 4000, 6));
    let end = msgs.last().unwrap().issue_ps / 1000;
    for zero_queue in [false, true] {
        for (events, dual) in [
            (format!("link:2@{}-{}", end / 4, end / 2), false),
            (format!("switch@{}-{}", end / 4, end / 2), false),
            (format!("link:3:0@{}-{}", end / 4, end / 2), true),
            (format!("switch:0@{}", end / 2), true),
            (format!("switch:1@{}", end / 3), true),
        ] {
            let out = run(rules(failing(&events, dual), zero_queue), &msgs);
            let f = &out.totals.edm().faults;
            let (done, failed) = accounted(&msgs, &out);
            assert_eq!((done, failed), (msgs.len() as u64, 0), "{events} {f:?}");
            every_write_resolved(&msgs, &out);
        }
        // One plane, its switch lost for good: what it carried fails,
        // reported, and no write is left without an outcome.
        let out = run(
            rules(failing(&format!("switch@{}", end / 2), false), zero_queue),
            &msgs,
        );
        let f = &out.totals.edm().faults;
        assert!(f.writes_failed > 0, "{f:?}");
        assert_eq!(
            (f.writes_lost, f.writes_unresolved, f.writes_applied_twice),
            (0, 0, 0),
            "{f:?}"
        );
    }
}

#[test]
fn retries_up_to_the_duplicate_windows_edge_apply_nothing_twice() {
    // A window of 4 ids and a retry buffer of 4 (the bound: buffer <=
    // window): at BER 1e-4 copies arrive up to 3 ids behind their source's
    // newest, the window's edge, and nothing is applied twice or refused.
    // A buffer of 12 over the same window (the bound broken) refuses
    // waiting writes' copies as stale: the bound is what holds it.
    let msgs = with_rmws(messages(0.7, 4000, 8));
    for zero_queue in [false, true] {
        let edge = |retry_unresolved| FaultConfig {
            ber: 1e-4,
            retry_timeout_ns: 3_000,
            seed: 12,
            dup_window: 4,
            retry_unresolved,
            ..FaultConfig::default()
        };
        let out = run(rules(edge(4), zero_queue), &msgs);
        let f = &out.totals.edm().faults;
        assert_eq!(f.dup_span_max, 3, "driven to the edge: {f:?}");
        assert_eq!(f.retry_buffer_max, 4, "{f:?}");
        assert_eq!(
            (f.writes_lost, f.writes_unresolved, f.writes_applied_twice),
            (0, 0, 0),
            "{f:?}"
        );
        assert_eq!(
            (
                f.dup_first_copy_refused,
                f.rmw_applied_twice,
                f.rmw_result_gone
            ),
            (0, 0, 0),
            "{f:?}"
        );
        assert!(f.write_retries > 20 && f.dup_stale_refused > 0, "{f:?}");
        let out = run(rules(edge(12), zero_queue), &msgs);
        let f = &out.totals.edm().faults;
        assert!(
            f.dup_first_copy_refused + f.rmw_first_copy_refused > 0,
            "{f:?}"
        );
    }
}

/// A write that finished when its data arrived (the ideal NACK's bound)
/// and whose /A/ was then lost ends again at its give-up: its finish counts
/// once (fences and the memory-order rule must not free what it held twice).
/// Past saturation, batched, fenced: this panicked before.
#[test]
fn a_write_finished_on_arrival_then_given_up_finishes_once() {
    let mut msgs = messages(1.1, 8000, 6);
    for (k, m) in msgs.iter_mut().enumerate() {
        m.fence = k % 7 == 3;
    }
    for dual_switch in [false, true] {
        let faults = FaultConfig {
            ber: if dual_switch { 0.0 } else { 1e-6 },
            dual_switch,
            data_recovery: DataRecovery::Ideal,
            read_timeout_ns: 200_000,
            give_up_ns: 2_000_000,
            seed: 9,
            ..FaultConfig::default()
        };
        let cfg = EdmConfig {
            batch_bytes: 512,
            ..rules(faults, true)
        };
        let out = run(cfg, &msgs);
        assert_eq!(out.records.len(), msgs.len());
        for r in &out.records {
            assert!(r.complete_ps.is_some() || r.timed_out, "{r:?}");
        }
    }
}
