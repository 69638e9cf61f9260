//! RoCEv2 with PFC and DCQCN (Zhu et al., SIGCOMM 2015): a lossless fabric
//! (the switch pauses an ingress whose buffered bytes pass Xoff) and a
//! rate-based sender per queue pair (one QP per host pair and direction).
//! The switch marks ECN with RED; a receiver returns at most one CNP per QP
//! per `cnp_interval`; the sender cuts its rate by alpha/2 on a CNP and
//! recovers by fast recovery, additive and hyper increase driven by a timer
//! and a byte counter. DCQCN's timers are evaluated lazily (exactly, at the
//! next use) rather than as events. Without drops there is no retransmission;
//! the receiver acknowledges each flow's last packet (RC transport's ACK).
use super::*;
use std::collections::{HashMap, VecDeque};

#[derive(Clone, Debug)]
pub struct DcqcnConfig {
    pub net: PacketConfig,
    /// alpha gain g.
    pub g: f64,
    /// alpha decay period without CNPs (K in the paper, "55 us").
    pub alpha_period_ps: Ps,
    /// Rate-increase timer period (T).
    pub increase_period_ps: Ps,
    /// Rate-increase byte counter (B).
    pub increase_bytes: u64,
    /// Fast-recovery steps (F).
    pub fast_recovery_steps: u32,
    /// Additive and hyper increase (bits per second).
    pub rai_bps: f64,
    pub rhai_bps: f64,
    /// Smallest rate (bits per second).
    pub min_rate_bps: f64,
    /// Shortest gap between CNPs for one QP at a receiver (N).
    pub cnp_interval_ps: Ps,
}

#[derive(Debug)]
struct Qp {
    src: u16,
    dst: u16,
    /// (flow, payload, last) of packets waiting to be sent.
    queue: VecDeque<(u32, u32, bool)>,
    rc: f64,
    rt: f64,
    alpha: f64,
    alpha_at: Ps,
    increase_at: Ps,
    bytes_since: u64,
    timer_stage: u32,
    byte_stage: u32,
    next_send: Ps,
    in_ready: bool,
    // Receiver side.
    last_cnp: Option<Ps>,
}

pub struct Dcqcn {
    pub cfg: DcqcnConfig,
    line_bps: f64,
    qps: Vec<Qp>,
    pair_qp: HashMap<(u16, u16), u32>,
    control: Vec<VecDeque<Packet>>,
    ready: Vec<VecDeque<u32>>,
    timer_at: Vec<Option<Ps>>,
    pub cnps: u64,
}

impl Dcqcn {
    pub fn new(cfg: DcqcnConfig, link_gbps: u32) -> Self {
        Dcqcn {
            cfg,
            line_bps: link_gbps as f64 * 1e9,
            qps: Vec::new(),
            pair_qp: HashMap::new(),
            control: Vec::new(),
            ready: Vec::new(),
            timer_at: Vec::new(),
            cnps: 0,
        }
    }

    /// Applies the alpha-decay and rate-increase timers that expired by `now`.
    fn advance(&mut self, q: u32, now: Ps) {
        let c = &self.cfg;
        let line = self.line_bps;
        let qp = &mut self.qps[q as usize];
        if now > qp.alpha_at {
            let periods = (now - qp.alpha_at) / c.alpha_period_ps;
            if periods > 0 {
                qp.alpha *= (1.0 - c.g).powi(periods.min(10_000) as i32);
                qp.alpha_at += periods * c.alpha_period_ps;
            }
        }
        if now > qp.increase_at {
            let periods = (now - qp.increase_at) / c.increase_period_ps;
            for _ in 0..periods.min(64) {
                qp.timer_stage += 1;
                increase(qp, c, line);
            }
            qp.increase_at += periods * c.increase_period_ps;
        }
        while qp.bytes_since >= c.increase_bytes {
            qp.bytes_since -= c.increase_bytes;
            qp.byte_stage += 1;
            increase(qp, c, line);
        }
    }

    fn make_ready(&mut self, net: &mut Net, now: Ps, q: u32) {
        let qp = &mut self.qps[q as usize];
        if !qp.in_ready && !qp.queue.is_empty() {
            qp.in_ready = true;
            self.ready[qp.src as usize].push_back(q);
            net.kick(now, qp.src);
        }
    }
}

fn increase(qp: &mut Qp, c: &DcqcnConfig, line: f64) {
    let f = c.fast_recovery_steps;
    let (hi, lo) = (
        qp.timer_stage.max(qp.byte_stage),
        qp.timer_stage.min(qp.byte_stage),
    );
    if hi > f {
        qp.rt += if lo > f { c.rhai_bps } else { c.rai_bps };
        qp.rt = qp.rt.min(line);
    }
    qp.rc = ((qp.rt + qp.rc) / 2.0).min(line);
}

impl Transport for Dcqcn {
    fn name(&self) -> &'static str {
        "pfc_dcqcn"
    }

    fn packet_config(&self) -> &PacketConfig {
        &self.cfg.net
    }

    fn reset(&mut self, ports: usize) {
        self.qps.clear();
        self.pair_qp.clear();
        self.control = (0..ports).map(|_| VecDeque::new()).collect();
        self.ready = (0..ports).map(|_| VecDeque::new()).collect();
        self.timer_at = vec![None; ports];
        self.cnps = 0;
    }

    fn on_flow(&mut self, net: &mut Net, now: Ps, flow: u32) {
        let f = net.flows[flow as usize];
        let q = match self.pair_qp.get(&(f.src, f.dst)) {
            Some(&q) => q,
            None => {
                self.qps.push(Qp {
                    src: f.src,
                    dst: f.dst,
                    queue: VecDeque::new(),
                    rc: self.line_bps,
                    rt: self.line_bps,
                    alpha: 1.0,
                    alpha_at: now,
                    increase_at: now,
                    bytes_since: 0,
                    timer_stage: 0,
                    byte_stage: 0,
                    next_send: 0,
                    in_ready: false,
                    last_cnp: None,
                });
                let q = (self.qps.len() - 1) as u32;
                self.pair_qp.insert((f.src, f.dst), q);
                q
            }
        };
        let framing = self.cfg.net.framing;
        let n = framing.packets(f.bytes);
        for i in 0..n {
            self.qps[q as usize]
                .queue
                .push_back((flow, framing.payload(f.bytes, i), i + 1 == n));
        }
        self.make_ready(net, now, q);
    }

    fn next_packet(&mut self, net: &mut Net, now: Ps, h: u16) -> Option<Packet> {
        if let Some(p) = self.control[h as usize].pop_front() {
            return Some(p);
        }
        // Round robin over QPs whose pacing allows a packet now.
        let mut earliest: Option<Ps> = None;
        for _ in 0..self.ready[h as usize].len() {
            let q = self.ready[h as usize].pop_front().unwrap();
            if self.qps[q as usize].queue.is_empty() {
                self.qps[q as usize].in_ready = false;
                continue;
            }
            if self.qps[q as usize].next_send > now {
                earliest = Some(earliest.map_or(self.qps[q as usize].next_send, |e: Ps| {
                    e.min(self.qps[q as usize].next_send)
                }));
                self.ready[h as usize].push_back(q);
                continue;
            }
            self.advance(q, now);
            let framing = self.cfg.net.framing;
            let qp = &mut self.qps[q as usize];
            let (flow, payload, last) = qp.queue.pop_front().unwrap();
            let mut p = Packet::new(qp.src, qp.dst, PacketKind::Data, framing.wire(payload));
            p.payload = payload;
            p.flow = q;
            p.aux = flow as u64;
            p.aux2 = last as u64;
            qp.bytes_since += p.wire as u64;
            let gap = (p.wire as f64 * 8.0 / qp.rc * 1e12).ceil() as Ps;
            qp.next_send = now + gap;
            if qp.queue.is_empty() {
                qp.in_ready = false;
            } else {
                self.ready[h as usize].push_back(q);
            }
            return Some(p);
        }
        if let Some(at) = earliest {
            if self.timer_at[h as usize].is_none_or(|t| t > at || t < now) {
                self.timer_at[h as usize] = Some(at);
                net.timer(at, h, 0);
            }
        }
        None
    }

    fn on_packet(&mut self, net: &mut Net, now: Ps, h: u16, p: Packet) {
        match p.kind {
            PacketKind::Data => {
                let q = p.flow;
                if p.ce {
                    let interval = self.cfg.cnp_interval_ps;
                    let qp = &mut self.qps[q as usize];
                    if qp.last_cnp.is_none_or(|t| now >= t + interval) {
                        qp.last_cnp = Some(now);
                        let mut cnp = Packet::new(
                            h,
                            p.src,
                            PacketKind::Control,
                            self.cfg.net.framing.wire(0),
                        );
                        cnp.flow = q;
                        self.control[h as usize].push_back(cnp);
                        self.cnps += 1;
                        net.kick(now, h);
                    }
                }
                if p.aux2 == 1 {
                    let mut ack =
                        Packet::new(h, p.src, PacketKind::Ack, self.cfg.net.framing.wire(0));
                    ack.flow = q;
                    self.control[h as usize].push_back(ack);
                    net.kick(now, h);
                    net.flow_received(now, p.aux as u32);
                }
            }
            PacketKind::Control => {
                // A CNP: cut the rate.
                let q = p.flow;
                self.advance(q, now);
                let g = self.cfg.g;
                let min_rate = self.cfg.min_rate_bps;
                let qp = &mut self.qps[q as usize];
                qp.rt = qp.rc;
                qp.rc = (qp.rc * (1.0 - qp.alpha / 2.0)).max(min_rate);
                qp.alpha = (1.0 - g) * qp.alpha + g;
                qp.alpha_at = now;
                qp.increase_at = now;
                qp.bytes_since = 0;
                qp.timer_stage = 0;
                qp.byte_stage = 0;
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, net: &mut Net, now: Ps, h: u16, _token: u64) {
        if self.timer_at[h as usize] == Some(now) {
            self.timer_at[h as usize] = None;
        }
        net.kick(now, h);
    }
}
