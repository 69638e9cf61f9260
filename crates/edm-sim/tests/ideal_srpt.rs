//! `ideal-srpt` (pFabric's Ideal, src/ideal_srpt.rs): its closed form, the
//! invariants of a matching, and that EDM never beats it.
mod common;

use common::{assert_complete_and_conserved, mean_slowdown, workload, write};
use edm_proto::message::{message_blocks, Kind};
use edm_sim::config::FabricConfig;
use edm_sim::edm::config::StepCycles;
use edm_sim::engine::{Feed, Outcome, Protocol};
use edm_sim::ideal_srpt::{IdealSrpt, Service};
use edm_sim::schema::{RunConfig, Value};
use edm_sim::time::Ps;
use edm_sim::workload::{MessageSpec, Op, SizeCdf};

fn fabric(nodes: usize) -> FabricConfig {
    FabricConfig {
        nodes,
        ..FabricConfig::default()
    }
}

/// A write's wire time from the protocol's framing: 256-byte data units.
fn wire(f: &FabricConfig, size: u32) -> Ps {
    let unit = |len: u32| message_blocks(Kind::Wreq, len as u16) as Ps;
    let blocks = (size / 256) as Ps * unit(256)
        + if size.is_multiple_of(256) {
            0
        } else {
            unit(size % 256)
        };
    blocks * f.block_ps()
}

/// A write's data path after its last bit leaves: two hops, the switch's
/// forwarding and the memory node's write, less the block `wire` counted.
fn path(f: &FabricConfig) -> Ps {
    let s = StepCycles::default();
    2 * f.hop_ps() + f.cycles(s.sw_forward + s.proc_write) - f.block_ps()
}

fn done(out: &Outcome) -> Vec<Ps> {
    out.records.iter().map(|r| r.complete_ps.unwrap()).collect()
}

#[test]
fn two_messages_on_one_port_shorter_first_then_the_sum() {
    let f = fabric(4);
    let (short, long) = (64, 5000);
    let (ws, wl, p) = (wire(&f, short), wire(&f, long), path(&f));
    let mut ideal = IdealSrpt::new(f.clone());
    // Same source and destination, issued together (the longer first in the list).
    let out = ideal.run(
        Feed::Open(&[write(0, 1, long, 0), write(0, 1, short, 0)]),
        &mut |_, _| {},
    );
    assert_eq!(done(&out), vec![ws + wl + p, ws + p]);
    assert_eq!(
        out.records[1].alone_ps,
        ws + p,
        "alone: size / rate + propagation"
    );
    // Only the destination shared; the shorter arrives mid-way and preempts.
    let t = wl / 3;
    let out = ideal.run(
        Feed::Open(&[write(0, 1, long, 0), write(2, 1, short, t)]),
        &mut |_, _| {},
    );
    assert_eq!(done(&out), vec![wl + ws + p, t + ws + p]);
    // No port shared: both as if alone.
    let out = ideal.run(
        Feed::Open(&[write(0, 1, long, 0), write(2, 3, short, 0)]),
        &mut |_, _| {},
    );
    assert_eq!(done(&out), vec![wl + p, ws + p]);
    // A read's data comes from the memory node: it shares the write's source.
    let read = MessageSpec {
        op: Op::Read,
        requester: 2,
        memory: 0,
        size: short,
        issue_ps: 0,
        ..Default::default()
    };
    let out = ideal.run(
        Feed::Open(&[write(0, 1, long, 0), read.clone()]),
        &mut |_, _| {},
    );
    let (rs, rp) = (ideal.wire_ps(&read), ideal.path_ps(&read));
    assert_eq!(done(&out), vec![rs + wl + p, rs + rp]);
}

fn mixed(nodes: usize, load: f64, messages: usize, seed: u64) -> Vec<MessageSpec> {
    let sizes = SizeCdf::new(
        vec![(1.0, 0.0), (64.0, 0.6), (700.0, 0.9), (20001.0, 1.0)],
        1,
    )
    .unwrap();
    let mut msgs = workload(nodes, load, 0.5, sizes, messages, seed);
    for m in msgs.iter_mut().step_by(11) {
        (m.op, m.size) = (Op::Rmw, 8);
    }
    msgs
}

#[test]
fn one_message_per_port_bytes_conserved_every_message_completes() {
    let f = fabric(16);
    let msgs = mixed(16, 0.8, 3000, 7);
    let ideal = IdealSrpt::new(f.clone());
    let (out, services) = ideal.run_traced(&msgs);
    assert_complete_and_conserved("ideal-srpt", &msgs, &out);
    // Each port carries one message at a time.
    let mut by_port: Vec<Vec<&Service>> = vec![Vec::new(); 2 * f.nodes];
    for s in &services {
        let (src, dst) = IdealSrpt::ports(&msgs[s.message as usize]);
        by_port[src as usize].push(s);
        by_port[f.nodes + dst as usize].push(s);
    }
    for (port, list) in by_port.iter_mut().enumerate() {
        list.sort_by_key(|s| s.start_ps);
        for w in list.windows(2) {
            assert!(
                w[0].end_ps <= w[1].start_ps,
                "port {port}: {:?} overlaps {:?}",
                w[0],
                w[1]
            );
        }
    }
    // Each message is served exactly its wire time, never before its issue,
    // and completes its path after its last stretch.
    let mut served = vec![0; msgs.len()];
    let mut last_end = vec![0; msgs.len()];
    for s in &services {
        let i = s.message as usize;
        assert!(s.start_ps >= msgs[i].issue_ps, "{s:?} before its issue");
        served[i] += s.end_ps - s.start_ps;
        last_end[i] = last_end[i].max(s.end_ps);
    }
    for (i, m) in msgs.iter().enumerate() {
        assert_eq!(served[i], ideal.wire_ps(m), "message {i}: wire time");
        assert_eq!(
            out.records[i].complete_ps,
            Some(last_end[i] + ideal.path_ps(m)),
            "message {i}"
        );
        assert!(out.records[i].complete_ps.unwrap() - m.issue_ps >= out.records[i].alone_ps);
    }
    // Deterministic.
    let again = IdealSrpt::new(f).run(Feed::Open(&msgs), &mut |_, _| {});
    assert_eq!(done(&again), done(&out));
}

/// EDM with every control step, hop and scheduler cycle at (nearly) zero:
/// its data path is the ideal's, its scheduling is what differs.
fn no_control(protocol: &str, nodes: usize) -> RunConfig {
    let mut given: Vec<(String, Value)> = vec![
        ("protocol".into(), Value::Text(protocol.into())),
        ("nodes".into(), Value::Int(nodes as i128)),
        ("prop_ps".into(), Value::Int(0)),
        ("phy_ps".into(), Value::Int(0)),
        ("pcs_pass_cycles".into(), Value::Int(0)),
        ("scheduler_cycle_ps".into(), Value::Int(1)),
    ];
    if protocol != "ideal-srpt" {
        for step in [
            "gen_req_cycles",
            "sw_notify_cycles",
            "sw_request_extra_cycles",
            "sw_gen_grant_cycles",
            "grant_to_data_cycles",
            "rreq_extra_cycles",
        ] {
            given.push((step.into(), Value::Int(0)));
        }
    }
    RunConfig::resolve(&given).unwrap()
}

#[test]
fn edm_without_control_overhead_never_beats_the_ideal() {
    for (load, seed) in [(0.3, 1), (0.7, 2)] {
        let msgs = mixed(16, load, 2000, seed);
        let ideal = no_control("ideal-srpt", 16)
            .model()
            .run(Feed::Open(&msgs), &mut |_, _| {});
        let ideal_mean = mean_slowdown(&msgs, &ideal);
        for protocol in ["edm", "edm-paper"] {
            let out = no_control(protocol, 16)
                .model()
                .run(Feed::Open(&msgs), &mut |_, _| {});
            let edm_mean = mean_slowdown(&msgs, &out);
            eprintln!("load {load}: ideal {ideal_mean:.3}, {protocol} {edm_mean:.3}");
            assert!(
                ideal_mean <= edm_mean,
                "load {load}: ideal {ideal_mean} > {protocol} {edm_mean}"
            );
        }
    }
}
