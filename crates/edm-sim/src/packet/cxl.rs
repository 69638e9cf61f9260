//! CXL: link-level credit-based flow control, hop by hop, in 68-byte flits
//! (CXL 2.0 flit: 64 bytes of slots + protocol ID + CRC). The switch is input
//! queued: each ingress port buffers at most `credits` flits (a host sends a
//! flit only with a credit, returned when the flit leaves the ingress buffer),
//! each egress serves the heads of the ingress buffers bound for it round
//! robin. Nothing is dropped and there is no end-to-end congestion control,
//! so under incast the ingress buffers fill and a flit for an idle egress
//! waits behind one for the congested egress (head-of-line blocking).
//! Hosts send their flits in the order flows become ready. Simplification:
//! every flow uses whole flits (a 16-byte request takes one flit; real CXL
//! can pack up to four request slots into one flit).
use super::*;
use std::collections::VecDeque;

#[derive(Clone, Debug)]
pub struct CxlConfig {
    pub net: PacketConfig,
}

pub struct Cxl {
    pub cfg: CxlConfig,
    queue: Vec<VecDeque<Packet>>,
}

impl Cxl {
    pub fn new(cfg: CxlConfig) -> Self {
        Cxl {
            cfg,
            queue: Vec::new(),
        }
    }
}

impl Transport for Cxl {
    fn name(&self) -> &'static str {
        "cxl"
    }

    fn packet_config(&self) -> &PacketConfig {
        &self.cfg.net
    }

    fn reset(&mut self, ports: usize) {
        self.queue = (0..ports).map(|_| VecDeque::new()).collect();
    }

    fn on_flow(&mut self, net: &mut Net, now: Ps, flow: u32) {
        let f = net.flows[flow as usize];
        self.queue[f.src as usize].extend(flow_packets(self.cfg.net.framing, flow, &f));
        net.kick(now, f.src);
    }

    fn next_packet(&mut self, _net: &mut Net, _now: Ps, h: u16) -> Option<Packet> {
        self.queue[h as usize].pop_front()
    }

    fn on_packet(&mut self, net: &mut Net, now: Ps, _h: u16, p: Packet) {
        if ends_flow(&p, &net.flows[p.flow as usize]) {
            net.flow_received(now, p.flow);
        }
    }

    fn on_timer(&mut self, _net: &mut Net, _now: Ps, _h: u16, _token: u64) {}
}
