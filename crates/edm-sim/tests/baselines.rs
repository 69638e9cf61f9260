//! The six packet baselines: invariants every one must keep, closed-form
//! unloaded latencies (Table 1), and the behaviour each is known for.
use edm_proto::spec::*;
use edm_sim::baselines::*;
use edm_sim::config::FabricConfig;
use edm_sim::engine::{Feed, Outcome, Protocol};
use edm_sim::packet::cxl::Cxl;
use edm_sim::packet::dcqcn::Dcqcn;
use edm_sim::packet::ird::Ird;
use edm_sim::packet::window::WindowTransport;
use edm_sim::packet::*;
use edm_sim::schema::RunConfig;
use edm_sim::time::Ps;
use edm_sim::workload::{MessageSpec, Op, OpenLoop, Roles, SizeCdf};

fn fabric(nodes: usize) -> FabricConfig {
    FabricConfig {
        nodes,
        ..FabricConfig::default()
    }
}

fn msg(op: Op, requester: u16, memory: u16, size: u32, issue_ps: Ps) -> MessageSpec {
    MessageSpec {
        op,
        requester,
        memory,
        size,
        issue_ps,
        ..Default::default()
    }
}

fn run_named(name: &str, f: &FabricConfig, msgs: &[MessageSpec]) -> Outcome {
    baseline(name, f)
        .unwrap()
        .run(Feed::Open(msgs), &mut |_, _| {})
}

/// When the run's last message completed.
fn last_completion_ps(out: &Outcome) -> Ps {
    out.records
        .iter()
        .map(|r| r.complete_ps.unwrap())
        .max()
        .unwrap()
}

fn mixed_workload(nodes: usize, load: f64, messages: usize, seed: u64) -> Vec<MessageSpec> {
    OpenLoop {
        nodes,
        roles: Roles::AllToAll,
        link_gbps: 100,
        load,
        write_ratio: 0.5,
        // Sizes that are not multiples of 8 or of any MSS, up to several packets.
        sizes: SizeCdf::new(
            vec![(1.0, 0.0), (64.0, 0.6), (700.0, 0.9), (5001.0, 1.0)],
            1,
        )
        .unwrap(),
        messages,
        seed,
    }
    .generate()
}

#[test]
fn every_baseline_completes_every_message_conserves_bytes_and_is_deterministic() {
    let f = fabric(16);
    let mut msgs = mixed_workload(16, 0.6, 3000, 5);
    msgs.push(msg(Op::Rmw, 3, 4, 8, msgs.last().unwrap().issue_ps + 1));
    let data: u64 = msgs.iter().map(|m| if m.op == Op::Rmw { RMW_RESULT_BYTES } else { m.size } as u64).sum();
    for name in BASELINES {
        let a = run_named(name, &f, &msgs);
        for (i, (r, m)) in a.records.iter().zip(&msgs).enumerate() {
            let done = r
                .complete_ps
                .unwrap_or_else(|| panic!("{name}: message {i} never completed"));
            assert!(
                done - m.issue_ps >= r.alone_ps,
                "{name}: message {i} faster than alone"
            );
        }
        assert_eq!(a.totals.delivered_bytes, data, "{name}: bytes delivered");
        let b = run_named(name, &f, &msgs);
        let ca: Vec<_> = a.records.iter().map(|r| r.complete_ps).collect();
        let cb: Vec<_> = b.records.iter().map(|r| r.complete_ps).collect();
        assert_eq!(ca, cb, "{name}: same input, same result");
    }
}

/// Unloaded latency on a store-and-forward packet fabric: the fixed path plus
/// two serializations per packet (uplink and switch egress).
fn one_packet_ps(f: &FabricConfig, cfg: &PacketConfig, payload: u32) -> Ps {
    let byte = f.block_ps() / 8;
    let link = 2 * f.phy_ps + f.prop_ps;
    let path =
        2 * (cfg.host_stack_ps + cfg.host_nic_ps + link) + cfg.switch_in_ps + cfg.switch_out_ps;
    path + 2 * cfg.framing.wire(payload) as Ps * byte
}

#[test]
fn unloaded_latency_is_table_1_plus_serialization() {
    let f = fabric(4);
    let write = msg(Op::Write, 0, 1, 64, 0);
    let read = msg(Op::Read, 0, 1, 64, 0);
    let (wreq, rreq, rres) = (
        request_bytes(&write),
        request_bytes(&read),
        response_bytes(&read),
    );
    let tcp = dctcp_config(&f, &BaselineParams::default()).net;
    let roce = dcqcn_config(&f, &BaselineParams::default()).net;
    let raw = pfabric_config(&f, &BaselineParams::default()).net;
    // The fixed path of each stack is Table 1's total write fabric latency.
    let ser = |cfg: &PacketConfig, p| 2 * cfg.framing.wire(p) as Ps * (f.block_ps() / 8);
    assert_eq!(one_packet_ps(&f, &tcp, wreq) - ser(&tcp, wreq), 1_889_840);
    assert_eq!(one_packet_ps(&f, &roce, wreq) - ser(&roce, wreq), 1_017_840);
    assert_eq!(one_packet_ps(&f, &raw, wreq) - ser(&raw, wreq), 557_440);
    for (name, cfg) in [("dctcp", &tcp), ("pfabric", &raw), ("pfc_dcqcn", &roce)] {
        let p = baseline(name, &f).unwrap();
        assert_eq!(
            p.alone_ps(&write),
            one_packet_ps(&f, cfg, wreq),
            "{name} write"
        );
        // The memory node acknowledges the request before the response goes
        // out (no piggybacking): one ACK frame on its uplink.
        let ack_ps = cfg.framing.wire(0) as Ps * (f.block_ps() / 8);
        assert_eq!(
            p.alone_ps(&read),
            one_packet_ps(&f, cfg, rreq) + ack_ps + one_packet_ps(&f, cfg, rres),
            "{name} read"
        );
    }
    // IRD: the write's receiver grants at once; the credit crosses the fabric first.
    let ird = ird_config(&f, &BaselineParams::default()).net;
    let p = baseline("ird", &f).unwrap();
    assert_eq!(
        p.alone_ps(&write),
        one_packet_ps(&f, &ird, 0) + one_packet_ps(&f, &ird, wreq)
    );
    // Fastpass: request to the arbiter, allocation back, then the data.
    let fp = fastpass_config(&f).net;
    let p = baseline("fastpass", &f).unwrap();
    assert_eq!(
        p.alone_ps(&write),
        2 * one_packet_ps(&f, &fp, 0) + one_packet_ps(&f, &fp, wreq)
    );
    // CXL: flits, cut into 64-byte payloads; the last flit ends the write.
    let cxl = cxl_config(&f, &BaselineParams::default()).net;
    let flits = wreq.div_ceil(CXL_FLIT_PAYLOAD_BYTES) as Ps;
    let flit_ps = CXL_FLIT_BYTES as Ps * (f.block_ps() / 8);
    let p = baseline("cxl", &f).unwrap();
    assert_eq!(
        p.alone_ps(&write),
        one_packet_ps(&f, &cxl, 0) + (flits - 1) * flit_ps
    );
}

/// `senders` hosts each write `count` messages of `size` bytes to host 0 at time 0.
fn incast(senders: u16, count: usize, size: u32) -> Vec<MessageSpec> {
    let mut msgs = Vec::new();
    for i in 0..count {
        for s in 1..=senders {
            msgs.push(msg(Op::Write, s, 0, size, i as Ps));
        }
    }
    msgs
}

#[test]
fn dctcp_keeps_the_queue_near_k_at_line_rate_under_long_flows() {
    let f = fabric(9);
    let cfg = dctcp_config(&f, &BaselineParams::default());
    let Ecn::Step { k } = cfg.net.ecn else {
        panic!()
    };
    let msgs = incast(8, 200, 60_000);
    let mut p = PacketProtocol::new(f.clone(), move || {
        WindowTransport::new("dctcp", cfg.clone())
    });
    let out = p.run(Feed::Open(&msgs), &mut |_, _| {});
    let bytes: u64 = msgs.iter().map(|m| m.size as u64).sum();
    let span = last_completion_ps(&out);
    let gbps = bytes as f64 * 8.0 / span as f64 * 1e3;
    assert!(gbps > 85.0, "goodput {gbps:.1} Gbps");
    assert!(out.totals.packet().ecn_marks > 0);
    let mean_q = out.totals.packet().mean_queue_bytes_busiest;
    assert!(
        mean_q > 0.5 * k as f64 && mean_q < 4.0 * k as f64,
        "mean queue {mean_q:.0} B vs K = {k} B"
    );
    assert_eq!(
        out.totals.packet().drops,
        0,
        "DCTCP keeps the queue far below the buffer"
    );
}

#[test]
fn pfc_never_drops_and_pauses_under_incast() {
    let f = fabric(33);
    let cfg = dcqcn_config(&f, &BaselineParams::default());
    let pfc = cfg.net.pfc.unwrap();
    let msgs = incast(32, 20, 20_000);
    let gbps = f.link_gbps;
    let mut p = PacketProtocol::new(f.clone(), move || Dcqcn::new(cfg.clone(), gbps));
    let out = p.run(Feed::Open(&msgs), &mut |_, _| {});
    assert!(out.records.iter().all(|r| r.complete_ps.is_some()));
    assert_eq!(out.totals.packet().drops, 0);
    assert!(out.totals.packet().pauses > 0, "incast must trigger PAUSE");
    assert!(out.totals.packet().ecn_marks > 0);
    // The headroom above Xoff absorbs what is in flight when PAUSE is sent.
    assert!(
        out.totals.packet().max_ingress_bytes < pfc.xoff + 20_000,
        "{}",
        out.totals.packet().max_ingress_bytes
    );
}

#[test]
fn pfabric_drops_and_lets_short_messages_overtake_long_ones() {
    let f = fabric(17);
    // 16 long writes into host 0, then short writes from the same senders.
    let mut msgs = incast(16, 1, 200_000);
    for s in 1..=16u16 {
        msgs.push(msg(Op::Write, s, 0, 64, 2_000_000 + s as Ps));
    }
    let out = run_named("pfabric", &f, &msgs);
    let latency = |i: usize| (out.records[i].complete_ps.unwrap() - msgs[i].issue_ps) as f64;
    let short: f64 = (16..32).map(latency).sum::<f64>() / 16.0;
    let alone_short = out.records[16].alone_ps as f64;
    let long_done = (0..16)
        .map(|i| out.records[i].complete_ps.unwrap())
        .max()
        .unwrap();
    assert!(
        out.totals.packet().drops > 0,
        "a 2-BDP buffer must overflow under 16-way incast"
    );
    assert!(
        short < 3.0 * alone_short,
        "short writes {short:.0} ps vs alone {alone_short:.0} ps"
    );
    assert!(
        long_done > msgs[16].issue_ps + short as Ps,
        "short writes finished before the long ones"
    );
}

#[test]
fn cxl_never_drops_and_blocks_the_head_of_line_under_incast() {
    let f = fabric(10);
    // Host 1 writes to idle host 9 while it and 7 others write to host 0.
    let victim: Vec<MessageSpec> = (0..50)
        .map(|i| msg(Op::Write, 1, 9, 64, 500_000 + i * 200_000))
        .collect();
    let mut mixed = incast(8, 40, 4096);
    mixed.extend(victim.iter().cloned());
    mixed.sort_by_key(|m| m.issue_ps);
    let cfg = cxl_config(&f, &BaselineParams::default());
    let mut p = PacketProtocol::new(f.clone(), move || Cxl::new(cfg.clone()));
    let out = p.run(Feed::Open(&mixed), &mut |_, _| {});
    assert_eq!(out.totals.packet().drops, 0);
    let mean_victim = |out: &Outcome, msgs: &[MessageSpec]| {
        let v: Vec<f64> = msgs
            .iter()
            .zip(&out.records)
            .filter(|(m, _)| m.memory == 9)
            .map(|(m, r)| (r.complete_ps.unwrap() - m.issue_ps) as f64)
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let loaded = mean_victim(&out, &mixed);
    let alone = out.records[mixed.iter().position(|m| m.memory == 9).unwrap()].alone_ps as f64;
    assert!(
        loaded > 5.0 * alone,
        "victim latency {loaded:.0} ps vs alone {alone:.0} ps: no HOL blocking?"
    );
}

#[test]
fn ird_loses_throughput_when_two_receivers_grant_one_sender() {
    let f = fabric(4);
    // Sender 1 writes to receivers 2 and 3; sender 0 also writes to 3, but
    // its flow is longer, so receiver 3 grants sender 1 first (SRPT).
    let msgs = vec![
        msg(Op::Write, 1, 2, 400_000, 0),
        msg(Op::Write, 1, 3, 300_000, 0),
        msg(Op::Write, 0, 3, 600_000, 0),
    ];
    let cfg = ird_config(&f, &BaselineParams::default());
    let mut p = PacketProtocol::new(f.clone(), move || Ird::new(cfg.clone()));
    let out = p.run(Feed::Open(&msgs), &mut |_, _| {});
    let end = last_completion_ps(&out) as f64;
    // A central scheduler would finish by (400 + 300 kB at sender 1, and 600 + 300 kB at receiver 3):
    // 900 kB on receiver 3's link. IRD wastes receiver 3's grants while sender 1 serves both.
    let byte_ps = (f.block_ps() / 8) as f64;
    let ideal = 900_000.0 * byte_ps;
    assert!(
        end > 1.03 * ideal,
        "IRD finished in {end:.0} ps, the ideal is {ideal:.0} ps"
    );
}

#[test]
fn fastpass_is_limited_by_its_arbiter_link_when_messages_are_small_and_many() {
    let f = fabric(32);
    let small = OpenLoop {
        nodes: 32,
        roles: Roles::AllToAll,
        link_gbps: 100,
        load: 0.4,
        write_ratio: 1.0,
        sizes: SizeCdf::fixed(64),
        messages: 20_000,
        seed: 3,
    }
    .generate();
    let out = run_named("fastpass", &f, &small);
    // 32 hosts at 40% of 100G in 64-byte writes ask more requests per second
    // than the arbiter's 100G link can carry (one 84-byte request each).
    let span = last_completion_ps(&out) as f64;
    let issued_span = small.last().unwrap().issue_ps as f64;
    let request_ps = (ETH_MIN_FRAME_BYTES + ETH_PREAMBLE_BYTES + ETH_IFG_BYTES) as f64
        * (f.block_ps() / 8) as f64;
    assert!(
        span > 0.95 * small.len() as f64 * request_ps,
        "the arbiter link bounds the run"
    );
    assert!(
        span > 2.0 * issued_span,
        "offered faster than the arbiter can take: {span} vs {issued_span}"
    );
    // Large messages at the same load need few requests: no such limit.
    let large: Vec<MessageSpec> = small
        .iter()
        .map(|m| MessageSpec {
            size: 4096,
            issue_ps: m.issue_ps * 64,
            ..m.clone()
        })
        .collect();
    let out = run_named("fastpass", &f, &large[..2000]);
    let span = last_completion_ps(&out) as f64;
    let last = large[1999].issue_ps as f64;
    assert!(
        span < 1.2 * last + 1e6,
        "4 KiB writes: done at {span:.0} ps, last issued at {last:.0} ps"
    );
}

#[test]
fn parameter_overrides_reach_the_transports_and_bad_ones_are_refused() {
    let f = fabric(9);
    let msgs = incast(8, 40, 60_000);
    let run = |p: BaselineParams| {
        baseline_with("dctcp", &f, &p)
            .unwrap()
            .run(Feed::Open(&msgs), &mut |_, _| {})
            .totals
    };
    let default = run(BaselineParams::default());
    let Ecn::Step { k } = dctcp_config(&f, &BaselineParams::default()).net.ecn else {
        panic!()
    };
    // A four times higher K: the queue settles higher.
    let mean_queue = |p: BaselineParams| {
        let cfg = dctcp_config(&f, &p);
        let mut proto = PacketProtocol::new(f.clone(), move || {
            WindowTransport::new("dctcp", cfg.clone())
        });
        let out = proto.run(Feed::Open(&msgs), &mut |_, _| {});
        out.totals.packet().mean_queue_bytes_busiest
    };
    let (q, q_high) = (
        mean_queue(BaselineParams::default()),
        mean_queue(BaselineParams {
            dctcp_k_bytes: 4 * k,
            ..Default::default()
        }),
    );
    assert!(
        q_high > 2.0 * q,
        "mean queue {q_high:.0} B with K = {} B vs {q:.0} B with K = {k} B",
        4 * k
    );
    // A buffer of a few frames overflows under an 8-to-1 incast.
    assert_eq!(default.packet().drops, 0);
    let small = run(BaselineParams {
        switch_buffer_bytes: 6_000,
        ..Default::default()
    });
    assert!(small.packet().drops > 0 && small.packet().max_queue_bytes <= 6_000);
    let validate = RunConfig::validate_baselines;
    assert!(validate(&BaselineParams {
        dcqcn_kmin_bytes: 10,
        dcqcn_kmax_bytes: 5,
        ..Default::default()
    })
    .unwrap_err()
    .contains("dcqcn_kmin_bytes"));
    assert!(validate(&BaselineParams {
        pfc_xoff_bytes: 100,
        ..Default::default()
    })
    .is_err());
    assert!(validate(&BaselineParams::default()).is_ok());
}

#[test]
fn a_permutation_runs_every_pair_near_line_rate_without_congestion_signals() {
    // Host i writes to host (i + 1) mod 8: no receiver is shared, so every
    // protocol should run each pair near its framing-limited line rate with no
    // drops, pauses or marks. A model that shared capacity across pairs, or
    // signalled congestion where there is none, fails here.
    let n = 8u16;
    let f = fabric(n as usize);
    let msgs: Vec<MessageSpec> = (0..20)
        .flat_map(|k| (0..n).map(move |i| msg(Op::Write, i, (i + 1) % n, 60_000, k)))
        .collect();
    let per_host_bits = 20.0 * 60_000.0 * 8.0;
    for name in BASELINES {
        let out = run_named(name, &f, &msgs);
        let span = last_completion_ps(&out);
        let gbps = per_host_bits / span as f64 * 1e3;
        eprintln!("{name}: {gbps:.1} Gbps per pair");
        assert!(
            gbps > 80.0,
            "{name}: {gbps:.1} Gbps per pair in a permutation"
        );
        let t = &out.totals;
        assert_eq!(
            (t.packet().drops, t.packet().pauses, t.packet().timeouts),
            (0, 0, 0),
            "{name}: congestion signals"
        );
    }
}
