//! Faults (issue 25): read timeouts, bit errors on links and their recovery.
//! Every operation completes exactly once or is reported failed, bytes are
//! conserved, no copy is delivered twice, writes to one address stay in order.
use edm_sim::config::{EdmConfig, FabricConfig, MemoryOrder};
use edm_sim::edm::faults::FaultConfig;
use edm_sim::edm::Edm;
use edm_sim::engine::{Outcome, Protocol};
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

/// EDM's rules that faults are modelled with: circuits without zero-queue
/// booking, the address order rule.
fn lossy_rules(faults: FaultConfig) -> EdmConfig {
    EdmConfig {
        zero_queue: false,
        start_delay: false,
        faults,
        ..EdmConfig::edm_rules()
    }
}

fn run(cfg: EdmConfig, msgs: &[MessageSpec]) -> Outcome {
    let fabric = FabricConfig {
        nodes: NODES,
        ..FabricConfig::default()
    };
    Edm::new(fabric, cfg).run(msgs, &mut |_, _| {})
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
        assert_eq!(out.totals.edm.faults, Default::default());
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
    let f = &out.totals.edm.faults;
    assert_eq!(f.timed_out, reads);
    assert!(f.late_data >= reads, "{f:?}");
    for (m, r) in msgs.iter().zip(&out.records) {
        assert_eq!(r.complete_ps.is_some(), m.op == Op::Write);
        assert_eq!(r.timed_out, m.op != Op::Write);
    }
}

#[test]
fn bit_errors_lose_no_operation_duplicate_none_and_keep_write_order() {
    let msgs = messages(0.6, 4000, 3);
    // A retry timeout well past the round trip, and one shorter than many
    // (a chunk merely late is granted again: its second copy must be dropped).
    for (retry_timeout_ns, duplicates) in [(5_000, false), (100, true)] {
        let faults = FaultConfig {
            ber: 1e-4,
            retry_timeout_ns,
            seed: 9,
            ..FaultConfig::default()
        };
        let out = run(lossy_rules(faults), &msgs);
        let f = &out.totals.edm.faults;
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
        // Writes to one address complete in issue order.
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
        (times, out.totals.edm.faults)
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
    let err = given(&[]).unwrap_err();
    assert_eq!(err.field, Some("ber"));
    assert!(err.why.contains("zero_queue"), "{err}");
    let ok = given(&[("zero_queue", Value::Int(0))]).unwrap();
    assert_eq!(ok.edm.memory_order, MemoryOrder::Address);
    assert_eq!(ok.edm.faults.seed, ok.seed);
    let err = given(&[
        ("zero_queue", Value::Int(0)),
        ("batch_bytes", Value::Int(512)),
    ])
    .unwrap_err();
    assert!(err.why.contains("batching"), "{err}");
}
