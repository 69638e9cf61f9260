//! Fabrics, configurations and workloads the EDM tests (edm.rs, edm_rules.rs,
//! ideal_srpt.rs, scale.rs) share.
#![allow(dead_code)] // each test file uses some of them
use edm_proto::spec::*;
use edm_sim::config::FabricConfig;
use edm_sim::edm::config::EdmConfig;
use edm_sim::edm::Edm;
use edm_sim::engine::{Feed, Outcome, Protocol};
use edm_sim::time::Ps;
use edm_sim::workload::{MessageSpec, Op, OpenLoop, Roles, SizeCdf};

pub fn fabric(nodes: usize, gbps: u32) -> FabricConfig {
    FabricConfig {
        nodes,
        link_gbps: gbps,
        ..FabricConfig::default()
    }
}

pub fn run(fabric: FabricConfig, cfg: EdmConfig, msgs: &[MessageSpec]) -> Outcome {
    Edm::new(fabric, cfg).run(Feed::Open(msgs), &mut |_, _| {})
}

/// A write of `size` bytes from `requester` to `memory`, issued at `issue_ps`.
pub fn write(requester: u16, memory: u16, size: u32, issue_ps: Ps) -> MessageSpec {
    MessageSpec {
        op: Op::Write,
        requester,
        memory,
        size,
        issue_ps,
        ..Default::default()
    }
}

/// Mean over messages of latency / latency alone (every message completed).
pub fn mean_slowdown(msgs: &[MessageSpec], out: &Outcome) -> f64 {
    let s: f64 = msgs
        .iter()
        .zip(&out.records)
        .map(|(m, r)| (r.complete_ps.unwrap() - m.issue_ps) as f64 / r.alone_ps as f64)
        .sum();
    s / msgs.len() as f64
}

pub fn one(op: Op, size: u32) -> MessageSpec {
    MessageSpec {
        op,
        requester: 0,
        memory: 1,
        size,
        issue_ps: 1000,
        ..Default::default()
    }
}

pub fn workload(
    nodes: usize,
    load: f64,
    write_ratio: f64,
    sizes: SizeCdf,
    messages: usize,
    seed: u64,
) -> Vec<MessageSpec> {
    OpenLoop {
        nodes,
        roles: Roles::AllToAll,
        link_gbps: 100,
        load,
        write_ratio,
        sizes,
        messages,
        seed,
    }
    .generate()
}

/// The data bytes a workload moves (an RMW returns `RMW_RESULT_BYTES`).
pub fn data_bytes(msgs: &[MessageSpec]) -> u64 {
    msgs.iter()
        .map(|m| if m.op == Op::Rmw { RMW_RESULT_BYTES } else { m.size } as u64)
        .sum()
}

/// Every message completed and every data byte arrived.
pub fn assert_complete_and_conserved(name: &str, msgs: &[MessageSpec], out: &Outcome) {
    assert!(
        out.records.iter().all(|r| r.complete_ps.is_some()),
        "{name}: all complete"
    );
    assert_eq!(
        out.totals.delivered_bytes,
        data_bytes(msgs),
        "{name}: bytes conserved"
    );
}

pub fn heavy_sizes() -> SizeCdf {
    // Mostly small, some multi-chunk, sizes not multiples of 8.
    SizeCdf::new(vec![(1.0, 0.0), (8.0, 0.6), (77.0, 0.9), (531.0, 1.0)], 13).unwrap()
}

/// Back-to-back writes of `size` bytes along each (requester, memory) pair.
pub fn streams(pairs: &[(u16, u16)], size: u32, per_pair: u32) -> Vec<MessageSpec> {
    let mut msgs: Vec<MessageSpec> = (0..per_pair)
        .flat_map(|i| {
            pairs.iter().map(move |&(requester, memory)| MessageSpec {
                op: Op::Write,
                requester,
                memory,
                size,
                issue_ps: i as Ps,
                ..Default::default()
            })
        })
        .collect();
    msgs.sort_by_key(|m| m.issue_ps);
    msgs
}

pub fn zero_queue() -> EdmConfig {
    EdmConfig {
        zero_queue: true,
        ..EdmConfig::default()
    }
}
