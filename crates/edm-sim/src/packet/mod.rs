//! The packet-switched fabric the baselines run on (docs/simulator.md,
//! "Baselines"): hosts with one NIC uplink each, one output-queued layer-2
//! switch with finite per-egress buffers, ECN marking, drops, optional PFC,
//! and an input-queued credit mode for CXL. A baseline is a [`Transport`]: it
//! moves *flows* (the byte streams of requests, write data and responses)
//! between hosts; the fabric turns messages into flows and flows into
//! completions, so every baseline has the same message semantics as EDM.
pub mod cxl;
pub mod dcqcn;
pub mod fastpass;
pub mod ird;
pub mod window;

use crate::config::{FabricConfig, Ps};
use crate::engine::{self, utilisation, EventQueue, Outcome, Record, Simulation, Totals};
use crate::rng::Rng;
use crate::workload::{MessageSpec, Op};
use edm_proto::spec::*;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

/// What a packet is to the fabric: data is queued, dropped and marked;
/// control packets (ACKs, credits, CNPs, requests to an arbiter) too, except
/// that they are never the drop victim of a priority queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketKind {
    Data,
    Ack,
    Control,
    /// PFC PAUSE (aux 1) or RESUME (aux 0), made by the switch itself.
    Pause,
}

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub src: u16,
    pub dst: u16,
    pub kind: PacketKind,
    /// Bytes on the wire (frame, preamble and inter-frame gap, or one flit).
    pub wire: u32,
    /// Flow payload bytes carried.
    pub payload: u32,
    pub flow: u32,
    pub seq: u32,
    /// Switch priority (smaller first) where the queue discipline uses it.
    pub prio: u64,
    /// ECN congestion-experienced mark.
    pub ce: bool,
    /// Transport-specific field (ACK number, echoed mark, grant size ...).
    pub aux: u64,
    /// Second transport-specific field.
    pub aux2: u64,
}

impl Packet {
    pub fn new(src: u16, dst: u16, kind: PacketKind, wire: u32) -> Packet {
        Packet {
            src,
            dst,
            kind,
            wire,
            payload: 0,
            flow: u32::MAX,
            seq: 0,
            prio: 0,
            ce: false,
            aux: 0,
            aux2: 0,
        }
    }
}

/// The role of a flow in its message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowRole {
    /// RREQ / RMWREQ: requester to memory node; its arrival starts the response.
    Request,
    /// WREQ data: requester to memory node; its arrival completes the message.
    Write,
    /// RRES: memory node to requester; its arrival completes the message.
    Response,
}

#[derive(Clone, Copy, Debug)]
pub struct Flow {
    pub src: u16,
    pub dst: u16,
    /// Bytes the transport must deliver (memory header + data).
    pub bytes: u32,
    pub msg: u32,
    pub role: FlowRole,
    pub start_ps: Ps,
}

/// ECN marking at a switch egress, decided when a packet is enqueued.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ecn {
    Off,
    /// Mark when the queue holds more than `k` bytes (DCTCP).
    Step {
        k: u64,
    },
    /// RED: probability rising linearly from 0 at `kmin` to `pmax` at `kmax`,
    /// 1 above (DCQCN).
    Red {
        kmin: u64,
        kmax: u64,
        pmax: f64,
    },
}

/// How a switch egress orders its queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Discipline {
    /// First in, first out; tail drop.
    Fifo,
    /// Smallest `prio` first; when full, drop the largest-`prio` packet
    /// (pFabric).
    Priority,
}

/// Priority flow control per ingress port (IEEE 802.1Qbb, one class).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pfc {
    /// Bytes from one ingress held in the switch above which it is paused.
    pub xoff: u64,
    /// ... and below which it is resumed.
    pub xon: u64,
}

/// How bytes are framed on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// Ethernet: `header` transport/network bytes per packet, at most `mss`
    /// payload bytes, minimum frame, preamble and inter-frame gap.
    Ethernet { header: u32, mss: u32 },
    /// Fixed flits of `bytes` on the wire carrying `payload` bytes (CXL).
    Flit { bytes: u32, payload: u32 },
}

impl Framing {
    /// Wire bytes of a packet carrying `payload` bytes (0: a control packet).
    pub fn wire(&self, payload: u32) -> u32 {
        match *self {
            Framing::Ethernet { header, .. } => {
                let frame =
                    (payload + header + ETH_HEADER_BYTES + ETH_FCS_BYTES).max(ETH_MIN_FRAME_BYTES);
                frame + ETH_PREAMBLE_BYTES + ETH_IFG_BYTES
            }
            Framing::Flit { bytes, .. } => bytes,
        }
    }

    pub fn mss(&self) -> u32 {
        match *self {
            Framing::Ethernet { mss, .. } => mss,
            Framing::Flit { payload, .. } => payload,
        }
    }

    /// Packets a flow of `bytes` is cut into.
    pub fn packets(&self, bytes: u32) -> u32 {
        bytes.div_ceil(self.mss()).max(1)
    }

    /// Payload of packet `seq` of a flow of `bytes`.
    pub fn payload(&self, bytes: u32, seq: u32) -> u32 {
        let mss = self.mss();
        (bytes - (seq * mss).min(bytes)).min(mss)
    }
}

/// The fabric a packet baseline runs on: latencies (Table 1), framing and
/// the switch's buffering policy. Defaults and sources: docs/simulator.md.
#[derive(Clone, Debug)]
pub struct PacketConfig {
    /// Transport stack, once at the sender and once at the receiver of every packet.
    pub host_stack_ps: Ps,
    /// MAC + PCS at a host, per packet at each end.
    pub host_nic_ps: Ps,
    /// From a packet's last bit at the switch to eligible at its egress (ingress
    /// MAC + PCS + forwarding pipeline), store and forward.
    pub switch_in_ps: Ps,
    /// Egress MAC + PCS.
    pub switch_out_ps: Ps,
    pub framing: Framing,
    /// Per egress port; 0 = unbounded.
    pub buffer_bytes: u64,
    pub ecn: Ecn,
    pub discipline: Discipline,
    pub pfc: Option<Pfc>,
    /// CXL: input-queued switch with this many flit credits per ingress port,
    /// returned hop by hop; no drops; each egress serves ingress heads round robin.
    pub credits: Option<u32>,
    /// Fastpass: one more switch port (index `nodes`) for the arbiter.
    pub arbiter_port: bool,
    /// Seed for the switch's random choices (RED marking).
    pub seed: u64,
}

impl PacketConfig {
    /// Raw Ethernet: MAC + PHY only, layer-2 forwarding (Table 1).
    pub fn raw_ethernet() -> PacketConfig {
        PacketConfig {
            host_stack_ps: 0,
            host_nic_ps: ETH_MAC_PS + ETH_PCS_PS,
            switch_in_ps: ETH_MAC_PS + ETH_PCS_PS + L2_FORWARD_PS,
            switch_out_ps: ETH_MAC_PS + ETH_PCS_PS,
            framing: Framing::Ethernet {
                header: RAW_TRANSPORT_HEADER_BYTES,
                mss: ETH_MTU_PAYLOAD_BYTES - RAW_TRANSPORT_HEADER_BYTES,
            },
            buffer_bytes: 0,
            ecn: Ecn::Off,
            discipline: Discipline::Fifo,
            pfc: None,
            credits: None,
            arbiter_port: false,
            seed: 1,
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Ev {
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

enum Queue {
    Fifo(VecDeque<(Ps, Packet)>),
    Prio(BTreeMap<(u64, u64), (Ps, Packet)>),
}

struct Egress {
    queue: Queue,
    /// PFC frames wait here and go before any queued packet.
    control: VecDeque<Packet>,
    bytes: u64,
    busy: bool,
    /// Integral of `bytes` over time up to `changed_at` (byte x ps).
    byte_ps: u128,
    changed_at: Ps,
    /// CXL: next ingress to look at (round robin).
    rr: usize,
}

/// Counters every packet baseline reports.
#[derive(Clone, Debug, Default)]
pub struct PacketStats {
    pub drops: u64,
    pub ecn_marks: u64,
    pub pauses: u64,
    pub max_queue_bytes: u64,
    /// Most bytes from one ingress held in the switch (PFC accounting).
    pub max_ingress_bytes: u64,
    pub retransmissions: u64,
    pub timeouts: u64,
    /// Time-averaged bytes queued at the egress with the largest average.
    pub mean_queue_bytes_busiest: f64,
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
    q: EventQueue<Ev>,
    up_busy_until: Vec<Ps>,
    up_busy_ps: Vec<Ps>,
    down_busy_ps: Vec<Ps>,
    kick_pending: Vec<bool>,
    paused: Vec<bool>,
    credits: Vec<u32>,
    egress: Vec<Egress>,
    /// Bytes from each ingress in the switch, and whether it is paused (PFC).
    ingress_bytes: Vec<u64>,
    ingress_paused: Vec<bool>,
    /// CXL input queues, and per egress the ingress ports whose head is bound for it.
    ingress_fifo: Vec<VecDeque<(Ps, Packet)>>,
    heads_for: Vec<BTreeSet<u16>>,
    records: Vec<Record>,
    completed: u64,
    delivered_bytes: u64,
    max_queue_packets: usize,
    max_wait_ps: Ps,
    seq: u64,
    rng: Rng,
}

impl<'a> Net<'a> {
    fn new(fabric: &'a FabricConfig, cfg: &'a PacketConfig, msgs: &'a [MessageSpec]) -> Net<'a> {
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
            delivered_bytes: 0,
            max_queue_packets: 0,
            max_wait_ps: 0,
            seq: 0,
            rng: Rng::fork(cfg.seed, 0x5EED_0F_EC),
        }
    }

    /// Picoseconds per byte on a link.
    pub fn byte_ps(&self) -> Ps {
        self.fabric.block_ps() / 8
    }

    pub fn wire_ps(&self, wire_bytes: u32) -> Ps {
        wire_bytes as Ps * self.byte_ps()
    }

    /// PHY + propagation + PHY of one link, first bit to first bit.
    pub fn link_ps(&self) -> Ps {
        2 * self.fabric.phy_ps + self.fabric.prop_ps
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

    /// The transport delivered all of `flow`'s bytes, in order, at its destination.
    pub fn flow_received(&mut self, now: Ps, flow: u32) {
        let f = self.flows[flow as usize];
        match f.role {
            FlowRole::Request => {
                let m = &self.msgs[f.msg as usize];
                let bytes = response_bytes(m);
                let id =
                    self.add_flow(m.memory, m.requester, bytes, f.msg, FlowRole::Response, now);
                self.q.push(now + self.fabric.dram_ps, Ev::FlowStart(id));
            }
            FlowRole::Write | FlowRole::Response => {
                let m = &self.msgs[f.msg as usize];
                self.delivered_bytes += if m.op == Op::Rmw {
                    RMW_RESULT_BYTES
                } else {
                    m.size
                } as u64;
                let r = &mut self.records[f.msg as usize];
                debug_assert!(r.complete_ps.is_none(), "message {} completed twice", f.msg);
                r.complete_ps = Some(now);
                self.completed += 1;
            }
        }
    }

    fn add_flow(
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
    fn send(&mut self, now: Ps, h: u16, p: Packet) {
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

    fn enqueue(&mut self, now: Ps, p: Packet, ingress: u16) {
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
    fn account(&mut self, now: Ps, port: usize) {
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

    fn start_egress(&mut self, now: Ps, port: u16) {
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
    fn try_dispatch(&mut self, now: Ps, port: u16) {
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

    fn queue_occupancy_cxl(&self) -> usize {
        self.ingress_fifo.iter().map(|q| q.len()).max().unwrap_or(0)
    }
}

fn queue_len(q: &Queue) -> usize {
    match q {
        Queue::Fifo(q) => q.len(),
        Queue::Prio(q) => q.len(),
    }
}

/// Bytes of a message's request, write-data and response flows: the same
/// memory header EDM's messages carry (docs/protocol.md), over each transport.
pub fn request_bytes(m: &MessageSpec) -> u32 {
    match m.op {
        Op::Read => HDR_BYTES + RREQ_EXT_BYTES,
        Op::Write => HDR_BYTES + WREQ_EXT_BYTES + m.size,
        Op::Rmw => HDR_BYTES + RMW_EXT_BYTES,
    }
}

pub fn response_bytes(m: &MessageSpec) -> u32 {
    HDR_BYTES
        + RRES_EXT_BYTES
        + match m.op {
            Op::Rmw => RMW_RESULT_BYTES,
            _ => m.size,
        }
}

/// The data packets of `flow` (`f`), each with its byte offset in `aux`.
pub fn flow_packets(framing: Framing, flow: u32, f: &Flow) -> impl Iterator<Item = Packet> {
    let (src, dst, bytes) = (f.src, f.dst, f.bytes);
    (0..framing.packets(bytes)).map(move |i| {
        data_packet(
            framing,
            src,
            dst,
            flow,
            i * framing.mss(),
            framing.payload(bytes, i),
        )
    })
}

/// One data packet of `flow` carrying `payload` bytes from byte `offset`.
pub fn data_packet(
    framing: Framing,
    src: u16,
    dst: u16,
    flow: u32,
    offset: u32,
    payload: u32,
) -> Packet {
    let mut p = Packet::new(src, dst, PacketKind::Data, framing.wire(payload));
    p.payload = payload;
    p.flow = flow;
    p.aux = offset as u64;
    p
}

/// Whether `p` (made by [`data_packet`]) carries the last byte of its flow `f`.
pub fn ends_flow(p: &Packet, f: &Flow) -> bool {
    p.aux as u32 + p.payload == f.bytes
}

/// A baseline: how flows cross the packet fabric.
pub trait Transport {
    fn name(&self) -> &'static str;
    /// The packet fabric it runs on.
    fn packet_config(&self) -> &PacketConfig;
    /// Flow `flow` is ready at its source.
    fn on_flow(&mut self, net: &mut Net, now: Ps, flow: u32);
    /// Host `h`'s uplink is free: the packet to send now, if any. (A host
    /// paused by PFC or out of CXL credits is not asked.)
    fn next_packet(&mut self, net: &mut Net, now: Ps, h: u16) -> Option<Packet>;
    /// A packet reached host `h` (after its receive stack).
    fn on_packet(&mut self, net: &mut Net, now: Ps, h: u16, p: Packet);
    fn on_timer(&mut self, net: &mut Net, now: Ps, h: u16, token: u64);
    /// Fresh state for a new run.
    fn reset(&mut self, nodes: usize);
}

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
}

/// Runs a transport over a workload on the packet fabric.
pub fn simulate<T: Transport>(
    t: &mut T,
    fabric: &FabricConfig,
    msgs: &[MessageSpec],
    progress: &mut dyn FnMut(u64, u64),
) -> (Outcome, PacketStats) {
    let cfg = t.packet_config().clone();
    let net = Net::new(fabric, &cfg, msgs);
    t.reset(net.ports);
    let mut sim = PacketSim { net, transport: t };
    let run = engine::run(&mut sim, msgs, progress);
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
    let stats = net.stats.clone();
    (
        Outcome {
            records: net.records,
            totals,
        },
        stats,
    )
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
        let mut t = make();
        let (out, _) = simulate(&mut t, fabric, std::slice::from_ref(&alone), &mut |_, _| {});
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
