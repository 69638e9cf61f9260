//! Rack memory pools (Puri): the DRAM model at memory nodes under every
//! protocol family, and the memory manager's placement feeding it.
use edm_sim::engine::Feed;
use edm_sim::memory::dram::lines;
use edm_sim::schema::{RunConfig, Value};
use edm_sim::workload::{MessageSpec, Op};

fn config(protocol: &str, extra: &[(&str, Value)]) -> RunConfig {
    let mut given: Vec<(String, Value)> = vec![
        ("protocol".into(), Value::Text(protocol.into())),
        ("nodes".into(), Value::Int(12)),
        ("memory_nodes".into(), Value::Int(3)),
        ("load".into(), Value::Float(0.1)),
        ("messages".into(), Value::Int(3000)),
        ("workload".into(), Value::Text("micro".into())),
        ("dram_channels".into(), Value::Int(1)),
        ("placement".into(), Value::Text("smart-idle".into())),
        ("seed".into(), Value::Int(4)),
    ];
    given.extend(extra.iter().map(|(k, v)| (k.to_string(), v.clone())));
    RunConfig::resolve(&given).unwrap()
}

/// The run's generated workload, placed, with every tenth message an RMW.
fn workload(c: &RunConfig) -> Vec<MessageSpec> {
    let mut msgs = c.open_loop(None).unwrap().generate();
    for m in msgs.iter_mut().step_by(10) {
        (m.op, m.size) = (Op::Rmw, 8);
    }
    edm_sim::workload::assign_addresses(&mut msgs, c.address_space_bytes, c.seed);
    c.place(&mut msgs);
    msgs
}

/// DRAM lines the messages touch: a read's response or a write's data, an RMW's word twice.
fn lines_touched(msgs: &[MessageSpec]) -> u64 {
    msgs.iter()
        .map(|m| {
            let n = lines(m.addr, m.range().1 - m.addr).count() as u64;
            if m.op == Op::Rmw {
                2 * n
            } else {
                n
            }
        })
        .sum()
}

#[test]
fn every_protocol_completes_everything_through_the_dram_and_conserves_bytes() {
    for protocol in ["edm", "edm-paper", "pfabric", "dctcp"] {
        let c = config(protocol, &[]);
        let msgs = workload(&c);
        let out = c.model().run(Feed::Open(&msgs), &mut |_, _| {});
        assert!(
            out.records.iter().all(|r| r.complete_ps.is_some()),
            "{protocol}"
        );
        let bytes: u64 = msgs.iter().map(|m| m.size as u64).sum();
        assert_eq!(out.totals.delivered_bytes, bytes, "{protocol}");
        let mem = &out.totals.memory;
        assert_eq!(
            mem.lines(),
            lines_touched(&msgs),
            "{protocol}: every line once"
        );
        assert!(mem.wait_mean_ps() > 0.0, "{protocol}: some line waited");
        assert_eq!(mem.late_responses, 0, "{protocol}");
        if protocol == "edm" {
            assert_eq!(
                out.totals.edm().switch_data_conflicts,
                0,
                "zero-queue rules kept"
            );
        }
    }
}

#[test]
fn a_read_alone_costs_what_a_fixed_memory_of_the_idle_drams_latency_costs() {
    for protocol in ["edm", "edm-paper", "pfabric"] {
        // The same memory at a fixed 30 ns (a baseline's response may then
        // overlap the request's acknowledgement: not simply 30 ns more).
        let fixed = config(
            protocol,
            &[
                ("dram_channels", Value::Int(0)),
                ("dram_ps", Value::Int(30_000)),
            ],
        );
        let with = config(protocol, &[]);
        let read = MessageSpec {
            op: Op::Read,
            requester: 0,
            memory: 11,
            size: 64,
            issue_ps: 1000,
            ..Default::default()
        };
        let idle = with.fabric.dram.unloaded_ps();
        assert_eq!(idle, 30_000, "DDR4-3200AA: tRCD + tCL + burst");
        assert_eq!(with.alone_ps(&read), fixed.alone_ps(&read), "{protocol}");
        let out = with
            .model()
            .run(Feed::Open(std::slice::from_ref(&read)), &mut |_, _| {});
        let latency = out.records[0].complete_ps.unwrap() - read.issue_ps;
        assert_eq!(latency, with.alone_ps(&read), "{protocol}");
        assert_eq!(out.totals.memory.wait_max_ps, 0, "{protocol}");
    }
}

#[test]
fn runs_with_the_dram_are_deterministic_and_slower_banks_wait_longer() {
    let c = config("edm", &[]);
    let msgs = workload(&c);
    let run = |c: &RunConfig| c.model().run(Feed::Open(&msgs), &mut |_, _| {});
    let (a, b) = (run(&c), run(&c));
    let times =
        |o: &edm_sim::engine::Outcome| o.records.iter().map(|r| r.complete_ps).collect::<Vec<_>>();
    assert_eq!(times(&a), times(&b));
    assert_eq!(a.totals.memory.wait_sum_ps, b.totals.memory.wait_sum_ps);
    // Two banks instead of 16: the same accesses queue longer.
    let few = config("edm", &[("dram_banks", Value::Int(2))]);
    let slow = run(&few);
    assert!(slow.totals.memory.wait_mean_ps() > 2.0 * a.totals.memory.wait_mean_ps());
    assert_eq!(slow.totals.memory.late_responses, 0);
}
