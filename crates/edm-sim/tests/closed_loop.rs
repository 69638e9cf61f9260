//! Closed-loop applications (engine/closed_loop.rs) on every protocol and
//! on the ideal fabric (engine/ideal.rs): the run time in closed form on an
//! ideal fabric, Little's law, determinism, bytes conserved.
use edm_sim::engine::closed_loop::ClosedLoopRun;
use edm_sim::schema::{RunConfig, Value, PROTOCOLS};
use edm_sim::time::Ps;
use edm_sim::workload::MessageSpec;

fn config(pairs: &[(&str, Value)]) -> RunConfig {
    let given: Vec<(String, Value)> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    RunConfig::resolve(&given).unwrap_or_else(|e| panic!("{e}"))
}

fn int(i: i128) -> Value {
    Value::Int(i)
}
fn real(x: f64) -> Value {
    Value::Float(x)
}
fn text(s: &str) -> Value {
    Value::Text(s.into())
}

/// A rack whose every node runs `threads` threads of exponential compute
/// over `messages` micro messages of `bytes`, plus `more` fields.
fn rack(
    protocol: &str,
    nodes: i128,
    (messages, bytes): (i128, i128),
    (threads, compute_ns): (i128, f64),
    more: &[(&'static str, Value)],
) -> Vec<(&'static str, Value)> {
    let mut pairs = vec![
        ("protocol", text(protocol)),
        ("nodes", int(nodes)),
        ("messages", int(messages)),
        ("message_bytes", int(bytes)),
        ("closed_loop_threads", int(threads)),
        ("compute_ns", real(compute_ns)),
        ("compute_distribution", text("exponential")),
    ];
    pairs.extend_from_slice(more);
    pairs
}

/// A closed loop of `pairs` (micro messages, so no CDF file is read).
fn run(pairs: &[(&str, Value)]) -> (RunConfig, Vec<MessageSpec>, ClosedLoopRun) {
    let c = config(pairs);
    let msgs = c.open_loop(None).unwrap().generate();
    let out = c.run_closed_loop(&msgs, &mut |_, _| {});
    (c, msgs, out)
}

fn latency(out: &ClosedLoopRun, i: usize) -> Ps {
    out.outcome.records[i].complete_ps.expect("completed") - out.messages[i].issue_ps
}

/// Each thread's run time by hand: its messages' compute and latency.
fn slowest_thread(out: &ClosedLoopRun, per_message: impl Fn(usize) -> Ps) -> Ps {
    let mut busy = vec![0; out.report.threads];
    for i in 0..out.messages.len() {
        busy[out.thread_of[i]] += per_message(i);
    }
    busy.into_iter().max().unwrap()
}

#[test]
fn on_an_ideal_fabric_the_run_time_is_compute_plus_unloaded_latencies() {
    for protocol in ["edm", "pfabric"] {
        let ideal = [("ideal_fabric", text("unloaded"))];
        let (_, _, out) = run(&rack(protocol, 8, (600, 1000), (3, 700.0), &ideal));
        let r = &out.report;
        assert_eq!(r.ops, 600);
        assert_eq!(r.threads, 8 * 3);
        for i in 0..out.messages.len() {
            assert_eq!(
                latency(&out, i),
                out.outcome.records[i].alone_ps,
                "{protocol}: message {i}"
            );
        }
        // The closed form: the slowest thread's compute plus alone latencies.
        assert_eq!(r.run_time_ps, r.unloaded_run_time_ps, "{protocol}");
        assert_eq!(r.thread_time_ps, r.unloaded_thread_time_ps, "{protocol}");
        assert!(r.degradation_vs_unloaded().abs() < 1e-12);
    }
    // An explicit latency and bandwidth: 5 us + 1000 B at 40 Gb/s (200 ns).
    let (c, msgs, out) = run(&[
        ("nodes", int(4)),
        ("memory_nodes", int(1)),
        ("message_bytes", int(1000)),
        ("messages", int(90)),
        ("closed_loop_threads", int(2)),
        ("compute_ns", real(3000.0)),
        ("ideal_fabric", text("fixed")),
        ("ideal_latency_ns", real(5000.0)),
        ("ideal_gbps", real(40.0)),
    ]);
    assert_eq!(msgs.len(), 90);
    let per_op = 3_000_000 + 5_000_000 + 200_000;
    assert_eq!(out.report.run_time_ps, slowest_thread(&out, |_| per_op));
    assert_eq!(
        out.report.compute_only_run_time_ps,
        slowest_thread(&out, |_| 3_000_000)
    );
    // Every thread's time, summed: 90 operations of compute and delay.
    assert_eq!(out.report.thread_time_ps, 90 * per_op as u128);
    let degradation = out.report.degradation_vs_local();
    assert!((degradation - 5.2 / 3.0).abs() < 1e-9, "{degradation}");
    assert_eq!(c.closed_loop.threads, 2);
}

#[test]
fn one_thread_alone_on_a_real_fabric_runs_in_its_closed_form() {
    // One compute node, one thread: nothing to contend with, so EDM gives
    // each message its latency alone and the run time its closed form.
    let split = [("memory_nodes", int(1))];
    let (_, _, out) = run(&rack("edm", 2, (50, 4096), (1, 200.0), &split));
    let r = &out.report;
    assert_eq!(r.threads, 1);
    // Alone, but for the memory-order rule: a message overlapping an
    // earlier write starts when that write's acknowledgement (/A/) is in
    // (docs/protocol.md §4b); the closed form counts latencies alone.
    let mut waits = 0;
    for (i, m) in out.messages.iter().enumerate() {
        let acked = out.messages[..i]
            .iter()
            .zip(&out.outcome.records)
            .filter(|(w, _)| w.op == edm_sim::workload::Op::Write)
            .filter(|(w, _)| {
                w.memory == m.memory && edm_sim::workload::overlaps(w.range(), m.range())
            })
            .filter_map(|(_, rec)| rec.acked_ps)
            .max()
            .unwrap_or(0);
        let wait = acked.saturating_sub(m.issue_ps);
        assert_eq!(
            latency(&out, i),
            out.outcome.records[i].alone_ps + wait,
            "message {i}"
        );
        waits += wait;
    }
    assert_eq!(r.run_time_ps, r.unloaded_run_time_ps + waits);
    let by_hand = slowest_thread(&out, |i| {
        out.messages[i].issue_ps
            - if i == 0 {
                0
            } else {
                out.outcome.records[i - 1].complete_ps.unwrap()
            }
            + latency(&out, i)
    });
    assert_eq!(
        r.run_time_ps, by_hand,
        "issues follow completions by the compute time"
    );
    assert!(out
        .messages
        .iter()
        .zip(&out.messages[1..])
        .all(|(a, b)| b.issue_ps > a.issue_ps));
}

#[test]
fn littles_law_holds_on_the_measured_throughput() {
    for (protocol, threads, compute) in [("edm", 4, 400.0), ("dctcp", 2, 2000.0), ("edm", 1, 0.0)] {
        let split = [("memory_nodes", int(2))];
        let (_, _, out) = run(&rack(protocol, 8, (6000, 2048), (threads, compute), &split));
        let r = &out.report;
        assert_eq!(r.ops, 6000);
        let n = r.threads as f64;
        assert!(
            (r.little_threads / n - 1.0).abs() < 0.03,
            "{protocol}: X (R + Z) = {} for {n} threads",
            r.little_threads
        );
        // Contention: six nodes' threads share two memory nodes' links.
        assert!(r.degradation_vs_unloaded() > 0.0, "{protocol}: {r:?}");
    }
}

#[test]
fn closed_loops_are_deterministic_and_conserve_bytes_on_every_protocol() {
    for protocol in PROTOCOLS {
        let pairs = rack(protocol, 6, (300, 1500), (2, 500.0), &[("seed", int(5))]);
        let (_, msgs, a) = run(&pairs);
        let (_, _, b) = run(&pairs);
        assert_eq!(a.report, b.report, "{protocol}");
        assert_eq!(a.messages, b.messages, "{protocol}");
        let times = |o: &ClosedLoopRun| -> Vec<Option<Ps>> {
            o.outcome.records.iter().map(|r| r.complete_ps).collect()
        };
        assert_eq!(times(&a), times(&b), "{protocol}");
        assert_eq!(
            a.report.ops,
            msgs.len(),
            "{protocol}: every message completes"
        );
        assert_eq!(a.report.late_completions, 0, "{protocol}");
        let payload: u64 = msgs.iter().map(|m| m.size as u64).sum();
        assert_eq!(a.outcome.totals.delivered_bytes, payload, "{protocol}");
        // Sorted by issue time, and each thread's messages one after another.
        assert!(a
            .messages
            .windows(2)
            .all(|w| w[0].issue_ps <= w[1].issue_ps));
        let mut last_done = vec![0; a.report.threads];
        for i in 0..a.messages.len() {
            let t = a.thread_of[i];
            assert!(
                a.messages[i].issue_ps >= last_done[t],
                "{protocol}: message {i}"
            );
            last_done[t] = a.outcome.records[i].complete_ps.unwrap();
        }
        let (_, _, other) = run(&rack(
            protocol,
            6,
            (300, 1500),
            (2, 500.0),
            &[("seed", int(6))],
        ));
        assert_ne!(other.report.run_time_ps, a.report.run_time_ps, "{protocol}");
    }
}

#[test]
fn closed_loops_refuse_traces_and_faults() {
    let given = |pairs: &[(&str, Value)]| -> Vec<(String, Value)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    };
    let err = RunConfig::resolve(&given(&[
        ("closed_loop_threads", int(2)),
        ("read_timeout_ns", int(1000)),
    ]))
    .unwrap_err();
    assert_eq!(err.field, Some("closed_loop_threads"));
    let err = RunConfig::resolve(&given(&[("ideal_latency_ns", real(5.0))])).unwrap_err();
    assert_eq!(err.field, Some("ideal_latency_ns"));
}
