//! A packet baseline's run: the engine drives the fabric ([`Net`]) and the
//! transport through their events; and latencies alone, measured by
//! running a message alone.
use super::net::{Ev, Net};
use super::{request_bytes, FlowRole, PacketKind, Transport};
use crate::config::FabricConfig;
use crate::engine::{self, utilisation, EventQueue, Feed, Outcome, Progress, Simulation, Totals};
use crate::time::Ps;
use crate::workload::{MessageSpec, Op};
use std::cell::RefCell;
use std::collections::HashMap;

/// One run of a transport on the packet fabric, as the engine drives it.
struct PacketSim<'a, 't, T: Transport> {
    net: Net<'a>,
    transport: &'t mut T,
}

impl<T: Transport> Simulation for PacketSim<'_, '_, T> {
    type Event = Ev;

    #[inline(always)]
    fn queue(&mut self) -> &mut EventQueue<Ev> {
        &mut self.net.q
    }

    #[inline(always)]
    fn issue_event(i: u32) -> Ev {
        Ev::Issue(i)
    }

    #[inline(always)]
    fn handle(&mut self, now: Ps, ev: Ev) -> bool {
        let (net, t) = (&mut self.net, &mut *self.transport);
        match ev {
            Ev::Issue(i) => {
                let m = &net.msgs[i as usize];
                let role = if m.op == Op::Write {
                    FlowRole::Write
                } else {
                    FlowRole::Request
                };
                let id = net.add_flow(m.requester, m.memory, request_bytes(m), i, role, now);
                t.on_flow(net, now, id);
            }
            Ev::FlowStart(f) => {
                net.flows[f as usize].start_ps = now;
                t.on_flow(net, now, f);
            }
            Ev::Kick(h) => {
                let hi = h as usize;
                net.kick_pending[hi] = false;
                if net.up_busy_until[hi] > now {
                    net.kick(now, h);
                } else if !net.paused[hi] && (net.cfg.credits.is_none() || net.credits[hi] > 0) {
                    if let Some(p) = t.next_packet(net, now, h) {
                        net.send(now, h, p);
                    }
                }
            }
            Ev::AtSwitch(p, ingress) => net.enqueue(now, p, ingress),
            Ev::EgressFree(port) => {
                if net.cfg.credits.is_some() {
                    net.egress[port as usize].busy = false;
                    net.try_dispatch(now, port);
                } else {
                    net.start_egress(now, port);
                }
            }
            Ev::AtHost(p) => {
                if p.kind == PacketKind::Pause {
                    let h = p.dst as usize;
                    net.paused[h] = p.aux == 1;
                    if !net.paused[h] {
                        net.kick(now, p.dst);
                    }
                } else {
                    t.on_packet(net, now, p.dst, p);
                }
            }
            Ev::Timer(h, token) => {
                t.on_timer(net, now, h, token);
                // A timer that found nothing to do (a stale retransmission
                // timeout) does not extend the run.
                return false;
            }
            Ev::Credit(h) => {
                net.credits[h as usize] += 1;
                net.kick(now, h);
            }
        }
        true
    }

    fn completed(&self) -> u64 {
        self.net.completed
    }

    fn completion_log(&self) -> &[(u32, Ps)] {
        &self.net.completions
    }
}

/// Runs a transport over the messages `feed` issues on the packet fabric.
pub fn simulate<T: Transport>(
    t: &mut T,
    fabric: &FabricConfig,
    feed: Feed,
    progress: Progress,
) -> Outcome {
    let msgs = feed.messages();
    let cfg = t.packet_config().clone();
    let net = Net::new(fabric, &cfg, msgs);
    t.reset(net.ports);
    let mut sim = PacketSim { net, transport: t };
    let run = engine::run(&mut sim, feed, progress);
    let mut net = sim.net;
    let mut totals = Totals {
        events: run.events,
        end_ps: run.end_ps,
        ..Totals::default()
    };
    let end = totals.end_ps.max(1);
    let hosts = fabric.nodes;
    (totals.uplink_util_mean, totals.uplink_util_max) =
        utilisation(net.up_busy_ps[..hosts].iter().copied(), end);
    (totals.downlink_util_mean, totals.downlink_util_max) =
        utilisation(net.down_busy_ps[..hosts].iter().copied(), end);
    totals.max_switch_data_queue = if cfg.credits.is_some() {
        net.queue_occupancy_cxl()
    } else {
        net.max_queue_packets
    };
    totals.max_switch_data_wait_ps = net.max_wait_ps;
    totals.delivered_bytes = net.delivered_bytes;
    for port in 0..net.ports {
        net.account(end, port);
    }
    let busiest = net.egress.iter().map(|e| e.byte_ps).max().unwrap_or(0);
    net.stats.mean_queue_bytes_busiest = busiest as f64 / end as f64;
    totals.protocol = Some(Box::new(net.stats));
    if let Some(memory) = net.memory {
        totals.memory = memory.stats;
    }
    if let Some(protection) = net.protection {
        totals.protection = protection.stats;
    }
    Outcome {
        records: net.records,
        totals,
    }
}

/// A message's latency alone in the network under transport `t`, measured
/// by running it alone (cached per operation and size: the fabric is symmetric).
pub struct AloneCache {
    cache: RefCell<HashMap<(Op, u32), Ps>>,
}

impl Default for AloneCache {
    fn default() -> Self {
        AloneCache {
            cache: RefCell::new(HashMap::new()),
        }
    }
}

impl AloneCache {
    pub fn get<T: Transport>(
        &self,
        make: impl Fn() -> T,
        fabric: &FabricConfig,
        m: &MessageSpec,
    ) -> Ps {
        let key = (m.op, m.size);
        if let Some(&v) = self.cache.borrow().get(&key) {
            return v;
        }
        let alone = MessageSpec {
            op: m.op,
            requester: 0,
            memory: 1,
            size: m.size,
            issue_ps: 0,
            ..Default::default()
        };
        // A message alone is served: its memory node's protection is off.
        let served = FabricConfig {
            protection: Default::default(),
            ..fabric.clone()
        };
        let mut t = make();
        let out = simulate(
            &mut t,
            &served,
            Feed::Open(std::slice::from_ref(&alone)),
            &mut |_, _| {},
        );
        let v = out.records[0]
            .complete_ps
            .expect("a message alone always completes");
        self.cache.borrow_mut().insert(key, v);
        v
    }
}

/// Fills `alone_ps` of every record of a packet-baseline run.
pub fn fill_alone<T: Transport>(
    out: &mut Outcome,
    cache: &AloneCache,
    make: impl Fn() -> T,
    fabric: &FabricConfig,
    msgs: &[MessageSpec],
) {
    for (r, m) in out.records.iter_mut().zip(msgs) {
        r.alone_ps = cache.get(&make, fabric, m);
    }
}
