//! The packet fabric's state: host uplinks (PFC pauses, CXL credits), the
//! output-queued switch (ECN, drops, priority queues, PFC accounting) and
//! CXL's input-queued credit mode. Transports act on it through [`Net`].
use super::response_bytes;
use super::{Discipline, Ecn, Flow, FlowRole, Packet, PacketConfig, PacketKind, PacketStats};
use crate::config::FabricConfig;
use crate::engine::{EventQueue, Record};
use crate::memory::protection::{Access, Protection};
use crate::memory::MemoryPools;
use crate::rng::Rng;
use crate::time::Ps;
use crate::workload::{MessageSpec, Op};
use edm_proto::spec::*;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

#[derive(Clone, Copy, Debug)]
pub(super) enum Ev {
    Issue(u32),
    /// A host's uplink may be able to send.
    Kick(u16),
    /// A packet's last bit reached the switch; `.1` the ingress port.
    AtSwitch(Packet, u16),
    EgressFree(u16),
    /// A packet delivered to its destination's transport.
    AtHost(Packet),
    Timer(u16, u64),
    /// A flow becomes ready at its source (a response after the DRAM access).
    FlowStart(u32),
    /// A CXL credit back at host `.0`.
    Credit(u16),
}

pub(super) enum Queue {
    Fifo(VecDeque<(Ps, Packet)>),
    Prio(BTreeMap<(u64, u64), (Ps, Packet)>),
}

pub(super) struct Egress {
    pub(super) queue: Queue,
    /// PFC frames wait here and go before any queued packet.
    pub(super) control: VecDeque<Packet>,
    pub(super) bytes: u64,
    pub(super) busy: bool,
    /// Integral of `bytes` over time up to `changed_at` (byte x ps).
    pub(super) byte_ps: u128,
    pub(super) changed_at: Ps,
    /// CXL: next ingress to look at (round robin).
    pub(super) rr: usize,
}

/// The fabric state a transport sees and acts on.
pub struct Net<'a> {
    pub fabric: &'a FabricConfig,
    pub cfg: &'a PacketConfig,
    pub msgs: &'a [MessageSpec],
    pub flows: Vec<Flow>,
    pub stats: PacketStats,
    /// Ports on the switch (hosts, plus the arbiter for Fastpass).
    pub ports: usize,
    pub(super) q: EventQueue<Ev>,
    pub(super) up_busy_until: Vec<Ps>,
    pub(super) up_busy_ps: Vec<Ps>,
    pub(super) down_busy_ps: Vec<Ps>,
    pub(super) kick_pending: Vec<bool>,
    pub(super) paused: Vec<bool>,
    pub(super) credits: Vec<u32>,
    pub(super) egress: Vec<Egress>,
    /// Bytes from each ingress in the switch, and whether it is paused (PFC).
    pub(super) ingress_bytes: Vec<u64>,
    pub(super) ingress_paused: Vec<bool>,
    /// CXL input queues, and per egress the ingress ports whose head is bound for it.
    pub(super) ingress_fifo: Vec<VecDeque<(Ps, Packet)>>,
    pub(super) heads_for: Vec<BTreeSet<u16>>,
    pub(super) records: Vec<Record>,
    pub(super) completed: u64,
    /// (message, time) of every completion, in order (a closed loop reads it).
    pub(super) completions: Vec<(u32, Ps)>,
    pub(super) delivered_bytes: u64,
    pub(super) max_queue_packets: usize,
    pub(super) max_wait_ps: Ps,
    pub(super) seq: u64,
    pub(super) rng: Rng,
    /// The memory nodes' DRAMs (`FabricConfig::dram`; None: fixed latency).
    pub(super) memory: Option<MemoryPools>,
    /// The memory nodes' protection (`FabricConfig::protection`; None: off),
    /// and per message whether its memory node denied it.
    pub(super) protection: Option<Protection>,
    pub(super) denied: Vec<bool>,
}

impl<'a> Net<'a> {
    pub(super) fn new(
        fabric: &'a FabricConfig,
        cfg: &'a PacketConfig,
        msgs: &'a [MessageSpec],
    ) -> Net<'a> {
        let ports = fabric.nodes + usize::from(cfg.arbiter_port);
        let queue = || match cfg.discipline {
            Discipline::Fifo => Queue::Fifo(VecDeque::new()),
            Discipline::Priority => Queue::Prio(BTreeMap::new()),
        };
        Net {
            fabric,
            cfg,
            msgs,
            flows: Vec::with_capacity(msgs.len() * 2),
            stats: PacketStats::default(),
            ports,
            q: EventQueue::default(),
            up_busy_until: vec![0; ports],
            up_busy_ps: vec![0; ports],
            down_busy_ps: vec![0; ports],
            kick_pending: vec![false; ports],
            paused: vec![false; ports],
            credits: vec![cfg.credits.unwrap_or(0); ports],
            egress: (0..ports)
                .map(|_| Egress {
                    queue: queue(),
                    control: VecDeque::new(),
                    bytes: 0,
                    busy: false,
                    byte_ps: 0,
                    changed_at: 0,
                    rr: 0,
                })
                .collect(),
            ingress_bytes: vec![0; ports],
            ingress_paused: vec![false; ports],
            ingress_fifo: (0..ports).map(|_| VecDeque::new()).collect(),
            heads_for: (0..ports).map(|_| BTreeSet::new()).collect(),
            records: vec![Record::default(); msgs.len()],
            completed: 0,
            completions: Vec::with_capacity(msgs.len()),
            delivered_bytes: 0,
            max_queue_packets: 0,
            max_wait_ps: 0,
            seq: 0,
            rng: Rng::fork(cfg.seed, 0x5EED_0FEC),
            memory: MemoryPools::new(&fabric.dram, fabric.nodes, 8 * fabric.block_ps()),
            protection: Protection::new(&fabric.protection, fabric.nodes),
            denied: vec![
                false;
                if fabric.protection.enabled {
                    msgs.len()
                } else {
                    0
                }
            ],
        }
    }

    /// Picoseconds per byte on a link.
    pub fn byte_ps(&self) -> Ps {
        self.fabric.block_ps() / 8
    }

    pub fn wire_ps(&self, wire_bytes: u32) -> Ps {
        wire_bytes as Ps * self.byte_ps()
    }

    /// PHY + propagation (+ FEC) + PHY of one link, first bit to first bit.
    pub fn link_ps(&self) -> Ps {
        self.fabric.link_ps()
    }

    /// Fixed delay of a packet from host to host besides serialization.
    pub fn path_ps(&self) -> Ps {
        let c = self.cfg;
        2 * (c.host_stack_ps + c.host_nic_ps + self.link_ps()) + c.switch_in_ps + c.switch_out_ps
    }

    /// Unloaded time from handing a packet of `wire` bytes to the uplink to
    /// its delivery (store and forward: serialized twice).
    pub fn packet_ps(&self, wire: u32) -> Ps {
        self.path_ps() + 2 * self.wire_ps(wire)
    }

    /// Asks for host `h`'s uplink to be offered a packet now.
    pub fn kick(&mut self, now: Ps, h: u16) {
        if !self.kick_pending[h as usize] {
            self.kick_pending[h as usize] = true;
            self.q
                .push(now.max(self.up_busy_until[h as usize]), Ev::Kick(h));
        }
    }

    /// Calls the transport's `on_timer(h, token)` at `at`.
    pub fn timer(&mut self, at: Ps, h: u16, token: u64) {
        self.q.push(at, Ev::Timer(h, token));
    }

    /// The memory node's protection check of message `msg` (the address its
    /// DRAM sees, or None: denied, recorded for its response).
    fn check(&mut self, msg: u32) -> Option<u64> {
        let m = &self.msgs[msg as usize];
        match self.protection.as_mut().map(|p| p.check(m)) {
            None => Some(m.addr),
            Some(Access::Served(phys)) => Some(phys),
            Some(Access::Denied) => {
                self.denied[msg as usize] = true;
                None
            }
        }
    }

    /// The transport delivered all of `flow`'s bytes, in order, at its destination.
    pub fn flow_received(&mut self, now: Ps, flow: u32) {
        let f = self.flows[flow as usize];
        match f.role {
            FlowRole::Request => {
                let m = &self.msgs[f.msg as usize];
                // Translation (Clio) comes before the DRAM read, and decides
                // whether the request is served at all.
                let translated = self.fabric.translate.ps(m);
                let fixed = self.fabric.memory_ps();
                let (requester, memory_node, op) = (m.requester, m.memory, m.op);
                let served = self.check(f.msg);
                let bytes = match served {
                    Some(_) => response_bytes(&self.msgs[f.msg as usize]),
                    // Denied: an empty response (STATUS_DENIED).
                    None => HDR_BYTES + RRES_EXT_BYTES,
                };
                let id = self.add_flow(
                    memory_node,
                    requester,
                    bytes,
                    f.msg,
                    FlowRole::Response,
                    now,
                );
                let at = match (served, &mut self.memory) {
                    // Denied: answered without a memory access.
                    (None, _) => now + translated,
                    // The response starts once its data can stream from the DRAM.
                    (Some(addr), Some(memory)) => {
                        let data = bytes - (HDR_BYTES + RRES_EXT_BYTES);
                        let ready = memory.read(memory_node, now + translated, addr, data as u64);
                        if op == Op::Rmw {
                            memory.write(memory_node, ready, addr, data as u64);
                        }
                        memory.response_at(now + translated, fixed, ready)
                    }
                    (Some(_), None) => now + translated + fixed,
                };
                self.q.push(at, Ev::FlowStart(id));
            }
            FlowRole::Write | FlowRole::Response => {
                // A write is checked as its data arrives (a denied one is dropped).
                let msg = f.msg as usize;
                let served = if f.role == FlowRole::Write {
                    let served = self.check(f.msg);
                    if let (Some(addr), Some(memory)) = (served, &mut self.memory) {
                        // Posted: the write is complete on arrival; the DRAM queues it.
                        let m = &self.msgs[msg];
                        memory.write(m.memory, now, addr, m.size as u64);
                    }
                    served.is_some()
                } else {
                    !self.denied.get(msg).copied().unwrap_or(false)
                };
                let m = &self.msgs[msg];
                if served {
                    self.delivered_bytes += if m.op == Op::Rmw {
                        RMW_RESULT_BYTES
                    } else {
                        m.size
                    } as u64;
                }
                let r = &mut self.records[f.msg as usize];
                debug_assert!(r.complete_ps.is_none(), "message {} completed twice", f.msg);
                r.complete_ps = Some(now);
                self.completions.push((f.msg, now));
                self.completed += 1;
            }
        }
    }

    pub(super) fn add_flow(
        &mut self,
        src: u16,
        dst: u16,
        bytes: u32,
        msg: u32,
        role: FlowRole,
        at: Ps,
    ) -> u32 {
        self.flows.push(Flow {
            src,
            dst,
            bytes,
            msg,
            role,
            start_ps: at,
        });
        (self.flows.len() - 1) as u32
    }

    /// Bytes queued at switch egress `port` now.
    pub fn egress_bytes(&self, port: u16) -> u64 {
        self.egress[port as usize].bytes
    }

    /// The uplink of `h` starts `p` at `now` (it is free).
    pub(super) fn send(&mut self, now: Ps, h: u16, p: Packet) {
        let ser = self.wire_ps(p.wire);
        self.up_busy_until[h as usize] = now + ser;
        self.up_busy_ps[h as usize] += ser;
        if self.cfg.credits.is_some() {
            self.credits[h as usize] -= 1;
        }
        let c = self.cfg;
        let last_bit = now + c.host_stack_ps + c.host_nic_ps + self.link_ps() + ser;
        self.q.push(last_bit + c.switch_in_ps, Ev::AtSwitch(p, h));
        // Offer the next packet when this one is out.
        self.kick(now + ser, h);
    }

    pub(super) fn enqueue(&mut self, now: Ps, p: Packet, ingress: u16) {
        if self.cfg.credits.is_some() {
            let fifo = &mut self.ingress_fifo[ingress as usize];
            fifo.push_back((now, p));
            if fifo.len() == 1 {
                self.heads_for[p.dst as usize].insert(ingress);
            }
            self.try_dispatch(now, p.dst);
            return;
        }
        let port = p.dst as usize;
        let mut p = p;
        let bytes = self.egress[port].bytes;
        match self.cfg.ecn {
            Ecn::Off => {}
            Ecn::Step { k } => p.ce |= bytes > k,
            Ecn::Red { kmin, kmax, pmax } => {
                let prob = if bytes <= kmin {
                    0.0
                } else if bytes > kmax {
                    1.0
                } else {
                    pmax * (bytes - kmin) as f64 / (kmax - kmin) as f64
                };
                if prob > 0.0 && self.rng.uniform() < prob {
                    p.ce = true;
                }
            }
        }
        if p.ce && p.kind == PacketKind::Data {
            self.stats.ecn_marks += 1;
        }
        let limit = self.cfg.buffer_bytes;
        let lossless = self.cfg.pfc.is_some();
        if limit > 0 && !lossless && bytes + p.wire as u64 > limit {
            match &mut self.egress[port].queue {
                Queue::Fifo(_) => {
                    self.stats.drops += 1;
                    return;
                }
                Queue::Prio(q) => {
                    // Drop the lowest-priority packet: the newcomer or the worst queued.
                    let worst = q.last_key_value().map(|(k, _)| *k);
                    match worst {
                        Some(w) if w.0 > p.prio => {
                            let (_, (_, victim)) = q.pop_last().unwrap();
                            self.account(now, port);
                            self.egress[port].bytes -= victim.wire as u64;
                            self.release_ingress(now, victim.src, victim.wire);
                            self.stats.drops += 1;
                        }
                        _ => {
                            self.stats.drops += 1;
                            return;
                        }
                    }
                }
            }
        }
        self.seq += 1;
        self.account(now, port);
        let e = &mut self.egress[port];
        e.bytes += p.wire as u64;
        match &mut e.queue {
            Queue::Fifo(q) => q.push_back((now, p)),
            Queue::Prio(q) => {
                q.insert((p.prio, self.seq), (now, p));
            }
        }
        let (qbytes, qlen) = (e.bytes, queue_len(&e.queue));
        self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(qbytes);
        self.max_queue_packets = self.max_queue_packets.max(qlen);
        self.hold_ingress(now, ingress, p.wire);
        if !self.egress[port].busy {
            self.start_egress(now, p.dst);
        }
    }

    /// Accumulates egress `port`'s queue integral up to `now` (call before its bytes change).
    pub(super) fn account(&mut self, now: Ps, port: usize) {
        let e = &mut self.egress[port];
        e.byte_ps += e.bytes as u128 * (now - e.changed_at) as u128;
        e.changed_at = now;
    }

    /// PFC accounting: bytes from `ingress` now in the switch.
    fn hold_ingress(&mut self, now: Ps, ingress: u16, wire: u32) {
        let Some(pfc) = self.cfg.pfc else { return };
        let i = ingress as usize;
        if i >= self.fabric.nodes {
            return;
        }
        self.ingress_bytes[i] += wire as u64;
        self.stats.max_ingress_bytes = self.stats.max_ingress_bytes.max(self.ingress_bytes[i]);
        if !self.ingress_paused[i] && self.ingress_bytes[i] > pfc.xoff {
            self.ingress_paused[i] = true;
            self.stats.pauses += 1;
            self.send_pfc(now, ingress, true);
        }
    }

    fn release_ingress(&mut self, now: Ps, ingress: u16, wire: u32) {
        let Some(pfc) = self.cfg.pfc else { return };
        let i = ingress as usize;
        if i >= self.fabric.nodes {
            return;
        }
        self.ingress_bytes[i] -= wire as u64;
        if self.ingress_paused[i] && self.ingress_bytes[i] <= pfc.xon {
            self.ingress_paused[i] = false;
            self.send_pfc(now, ingress, false);
        }
    }

    fn send_pfc(&mut self, now: Ps, to: u16, pause: bool) {
        let mut p = Packet::new(
            to,
            to,
            PacketKind::Pause,
            ETH_MIN_FRAME_BYTES + ETH_PREAMBLE_BYTES + ETH_IFG_BYTES,
        );
        p.aux = pause as u64;
        self.egress[to as usize].control.push_back(p);
        if !self.egress[to as usize].busy {
            self.start_egress(now, to);
        }
    }

    pub(super) fn start_egress(&mut self, now: Ps, port: u16) {
        self.account(now, port as usize);
        let e = &mut self.egress[port as usize];
        let next = match e.control.pop_front() {
            Some(p) => Some((now, p)),
            None => match &mut e.queue {
                Queue::Fifo(q) => q.pop_front(),
                Queue::Prio(q) => q.pop_first().map(|(_, v)| v),
            },
        };
        let Some((queued_at, p)) = next else {
            e.busy = false;
            return;
        };
        e.busy = true;
        if p.kind != PacketKind::Pause {
            e.bytes -= p.wire as u64;
        }
        self.max_wait_ps = self.max_wait_ps.max(now - queued_at);
        if p.kind != PacketKind::Pause {
            self.release_ingress(now, p.src, p.wire);
        }
        self.transmit_down(now, port, p);
    }

    fn transmit_down(&mut self, now: Ps, port: u16, p: Packet) {
        let ser = self.wire_ps(p.wire);
        self.down_busy_ps[port as usize] += ser;
        let c = self.cfg;
        let last_bit = now + c.switch_out_ps + self.link_ps() + ser;
        let at = last_bit
            + c.host_nic_ps
            + if p.kind == PacketKind::Pause {
                0
            } else {
                c.host_stack_ps
            };
        self.q.push(at, Ev::AtHost(p));
        self.q.push(now + ser, Ev::EgressFree(port));
    }

    /// CXL: egress `port`, if idle, takes the next ingress head bound for it
    /// (round robin over ingress ports).
    pub(super) fn try_dispatch(&mut self, now: Ps, port: u16) {
        let e = &self.egress[port as usize];
        if e.busy {
            return;
        }
        let heads = &self.heads_for[port as usize];
        let Some(&i) = heads
            .range(e.rr as u16..)
            .next()
            .or_else(|| heads.iter().next())
        else {
            return;
        };
        self.heads_for[port as usize].remove(&i);
        let (queued_at, p) = self.ingress_fifo[i as usize].pop_front().expect("a head");
        debug_assert_eq!(p.dst, port);
        let e = &mut self.egress[port as usize];
        e.rr = (i as usize + 1) % self.ports;
        e.busy = true;
        self.max_wait_ps = self.max_wait_ps.max(now - queued_at);
        // The freed ingress slot's credit returns over the link.
        self.q
            .push(now + self.cfg.switch_out_ps + self.link_ps(), Ev::Credit(i));
        self.transmit_down(now, port, p);
        // The ingress's new head may be bound for an idle egress.
        if let Some(&(_, next)) = self.ingress_fifo[i as usize].front() {
            self.heads_for[next.dst as usize].insert(i);
            self.try_dispatch(now, next.dst);
        }
    }

    pub(super) fn queue_occupancy_cxl(&self) -> usize {
        self.ingress_fifo.iter().map(|q| q.len()).max().unwrap_or(0)
    }
}

fn queue_len(q: &Queue) -> usize {
    match q {
        Queue::Fifo(q) => q.len(),
        Queue::Prio(q) => q.len(),
    }
}
