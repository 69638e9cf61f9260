//! Fastpass (Perry et al., SIGCOMM 2014) as the paper idealises it: a central
//! arbiter on its own switch port and link computes allocations in zero
//! time. Every flow costs a request packet to the arbiter and an allocation
//! packet back; the arbiter reserves the flow's wire time on the source
//! uplink and the destination downlink at the earliest time both are free
//! (and no earlier than the allocation can reach the source), so scheduled
//! data does not queue. Like Fastpass's per-timeslot matching in request
//! order, a later request may take an earlier gap that an earlier request
//! could not use (reservations are intervals, holes are filled). What
//! remains is the control round trip and the arbiter link's bandwidth.
//! Idealisation beyond Fastpass: reservations are exact wire times, not MTU
//! timeslots (kinder to small messages).
use super::*;
use std::collections::{BTreeMap, VecDeque};

#[derive(Clone, Debug)]
pub struct FastpassConfig {
    pub net: PacketConfig,
}

pub struct Fastpass {
    pub cfg: FastpassConfig,
    arbiter: u16,
    /// Reserved intervals (start -> end) per source uplink and destination downlink.
    src_busy: Vec<BTreeMap<Ps, Ps>>,
    dst_busy: Vec<BTreeMap<Ps, Ps>>,
    control: Vec<VecDeque<Packet>>,
    /// Per host: data packets whose reserved start has come.
    data: Vec<VecDeque<Packet>>,
    /// Allocations waiting for their start time: (start, flow).
    pending: Vec<VecDeque<(Ps, u32)>>,
    pub allocations: u64,
}

impl Fastpass {
    pub fn new(cfg: FastpassConfig) -> Self {
        Fastpass {
            cfg,
            arbiter: 0,
            src_busy: Vec::new(),
            dst_busy: Vec::new(),
            control: Vec::new(),
            data: Vec::new(),
            pending: Vec::new(),
            allocations: 0,
        }
    }

    fn flow_wire_ps(&self, net: &Net, bytes: u32) -> Ps {
        let framing = self.cfg.net.framing;
        (0..framing.packets(bytes))
            .map(|i| net.wire_ps(framing.wire(framing.payload(bytes, i))))
            .sum()
    }

    fn release(&mut self, net: &mut Net, now: Ps, h: u16) {
        let framing = self.cfg.net.framing;
        while self.pending[h as usize]
            .front()
            .is_some_and(|&(at, _)| at <= now)
        {
            let (_, flow) = self.pending[h as usize].pop_front().unwrap();
            let f = net.flows[flow as usize];
            self.data[h as usize].extend(flow_packets(framing, flow, &f));
        }
        if let Some(&(at, _)) = self.pending[h as usize].front() {
            net.timer(at, h, 0);
        }
        net.kick(now, h);
    }
}

/// The end of a reserved interval overlapping [start, start + dur), if any.
fn conflict(busy: &BTreeMap<Ps, Ps>, start: Ps, dur: Ps) -> Option<Ps> {
    // Intervals never overlap, so only the last one starting before the end can.
    busy.range(..start + dur)
        .next_back()
        .and_then(|(_, &end)| (end > start).then_some(end))
}

/// Forgets reservations that ended before `now`.
fn prune(busy: &mut BTreeMap<Ps, Ps>, now: Ps) {
    while busy.first_key_value().is_some_and(|(_, &end)| end < now) {
        busy.pop_first();
    }
}

impl Transport for Fastpass {
    fn name(&self) -> &'static str {
        "fastpass"
    }

    fn packet_config(&self) -> &PacketConfig {
        &self.cfg.net
    }

    fn reset(&mut self, ports: usize) {
        self.arbiter = (ports - 1) as u16;
        self.src_busy = (0..ports).map(|_| BTreeMap::new()).collect();
        self.dst_busy = (0..ports).map(|_| BTreeMap::new()).collect();
        self.control = (0..ports).map(|_| VecDeque::new()).collect();
        self.data = (0..ports).map(|_| VecDeque::new()).collect();
        self.pending = (0..ports).map(|_| VecDeque::new()).collect();
        self.allocations = 0;
    }

    fn on_flow(&mut self, net: &mut Net, now: Ps, flow: u32) {
        let f = net.flows[flow as usize];
        let mut req = Packet::new(
            f.src,
            self.arbiter,
            PacketKind::Control,
            self.cfg.net.framing.wire(0),
        );
        req.flow = flow;
        self.control[f.src as usize].push_back(req);
        net.kick(now, f.src);
    }

    fn next_packet(&mut self, _net: &mut Net, _now: Ps, h: u16) -> Option<Packet> {
        self.control[h as usize]
            .pop_front()
            .or_else(|| self.data[h as usize].pop_front())
    }

    fn on_packet(&mut self, net: &mut Net, now: Ps, h: u16, p: Packet) {
        match p.kind {
            PacketKind::Control if h == self.arbiter => {
                // Allocate: the earliest start at which the allocation has
                // reached the source and both its uplink and the
                // destination's downlink are free.
                let f = net.flows[p.flow as usize];
                let alloc_wire = self.cfg.net.framing.wire(0);
                let reach = now
                    + net.packet_ps(alloc_wire)
                    + self.control[h as usize].len() as Ps * net.wire_ps(alloc_wire);
                let dur = self.flow_wire_ps(net, f.bytes);
                let (src, dst) = (
                    &mut self.src_busy[f.src as usize],
                    &mut self.dst_busy[f.dst as usize],
                );
                prune(src, now);
                prune(dst, now);
                let mut start = reach;
                loop {
                    let s_end = conflict(src, start, dur);
                    let d_end = conflict(dst, start, dur);
                    match s_end.max(d_end) {
                        Some(end) => start = end,
                        None => break,
                    }
                }
                src.insert(start, start + dur);
                dst.insert(start, start + dur);
                let mut alloc = Packet::new(h, f.src, PacketKind::Control, alloc_wire);
                alloc.flow = p.flow;
                alloc.aux = start;
                self.control[h as usize].push_back(alloc);
                self.allocations += 1;
                net.kick(now, h);
            }
            PacketKind::Control => {
                // An allocation: send at its start.
                let start = p.aux;
                let q = &mut self.pending[h as usize];
                let pos = q.partition_point(|&(at, _)| at <= start);
                q.insert(pos, (start, p.flow));
                self.release(net, now, h);
            }
            PacketKind::Data if ends_flow(&p, &net.flows[p.flow as usize]) => {
                net.flow_received(now, p.flow);
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, net: &mut Net, now: Ps, h: u16, _token: u64) {
        self.release(net, now, h);
    }
}
