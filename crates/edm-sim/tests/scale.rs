//! Every protocol at the paper's scale (§2: a 51.2 Tb/s switch, 512 nodes at
//! 100 Gb/s): a small mixed run each completes every message, delivers every
//! byte and never beats a message's latency alone.
mod common;

use common::{assert_complete_and_conserved, workload};
use edm_sim::engine::Feed;
use edm_sim::schema::{RunConfig, Value, PROTOCOLS};
use edm_sim::workload::{Op, SizeCdf};

const NODES: usize = 512;

#[test]
fn every_protocol_runs_512_nodes_at_100_gbps() {
    // Sizes from one block to several chunks and MTUs, a tenth RMWs.
    let sizes = SizeCdf::new(
        vec![(1.0, 0.0), (64.0, 0.6), (1500.0, 0.9), (20_000.0, 1.0)],
        1,
    )
    .unwrap();
    let mut msgs = workload(NODES, 0.3, 0.5, sizes, 2_000, 43);
    for m in msgs.iter_mut().step_by(10) {
        (m.op, m.size) = (Op::Rmw, 8);
    }
    let top = msgs
        .iter()
        .map(|m| m.requester.max(m.memory))
        .max()
        .unwrap();
    assert!(
        top as usize >= NODES - 8,
        "the workload reaches the last ports ({top})"
    );
    for protocol in PROTOCOLS {
        let c = RunConfig::resolve(&[
            ("protocol".into(), Value::Text(protocol.to_string())),
            ("nodes".into(), Value::Int(NODES as i128)),
            ("link_gbps".into(), Value::Int(100)),
        ])
        .unwrap();
        let out = c.model().run(Feed::Open(&msgs), &mut |_, _| {});
        assert_complete_and_conserved(protocol, &msgs, &out);
        for (i, (m, r)) in msgs.iter().zip(&out.records).enumerate() {
            let latency = r.complete_ps.unwrap() - m.issue_ps;
            assert!(
                latency >= r.alone_ps,
                "{protocol}: message {i} faster than alone"
            );
        }
    }
}
