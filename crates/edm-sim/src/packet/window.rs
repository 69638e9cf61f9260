//! Window-based reliable transports over the packet fabric: DCTCP, and
//! pFabric on a DCTCP-like transport. Packet-granular sequence numbers,
//! cumulative ACKs (optionally one per `ack_every` packets), receivers that
//! keep out-of-order packets, fast retransmit on three duplicate ACKs and
//! go-back-N on a retransmission timeout.
//!
//! DCTCP runs one persistent connection per (requester, memory node) pair
//! and direction, as an RDMA-like memory system would: messages are appended
//! to its stream, so the window and alpha carry over between messages.
//! pFabric gives every flow its own connection (priority is per flow).
use super::*;
use std::collections::{BTreeSet, HashMap, VecDeque};

/// Which window law.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WindowLaw {
    /// DCTCP: slow start and congestion avoidance; once per window, cut by
    /// alpha/2 if any ACK echoed a mark; alpha <- (1-g) alpha + g F.
    Dctcp { g: f64 },
    /// pFabric: a fixed window (about one BDP); after a timeout, restart
    /// from one packet in slow start up to the fixed window.
    Fixed,
}

#[derive(Clone, Debug)]
pub struct WindowConfig {
    pub net: PacketConfig,
    pub law: WindowLaw,
    /// Initial (and, for pFabric, largest) window in packets.
    pub init_cwnd: f64,
    pub max_cwnd: f64,
    pub rto_ps: Ps,
    /// ACK every this many in-order packets (1: every packet). The last
    /// packet of a flow, a packet out of order and a change of the ECN mark
    /// are always acknowledged at once.
    pub ack_every: u32,
    /// One connection per flow (pFabric) instead of per host pair.
    pub per_flow: bool,
    /// Switch priority = remaining bytes of the flow (pFabric).
    pub srpt_priority: bool,
}

#[derive(Clone, Copy, Debug)]
struct Seg {
    flow: u32,
    payload: u32,
    last: bool,
    /// Bytes of the flow left from this packet on (pFabric priority).
    remaining: u32,
}

#[derive(Debug)]
struct Conn {
    src: u16,
    dst: u16,
    segs: Vec<Seg>,
    snd_una: u32,
    snd_nxt: u32,
    retx: Option<u32>,
    cwnd: f64,
    ssthresh: f64,
    alpha: f64,
    win_end: u32,
    acked_in_win: u32,
    marked_in_win: u32,
    dupacks: u32,
    rto_gen: u32,
    rto_armed: bool,
    in_ready: bool,
    // Receiver side.
    rcv_nxt: u32,
    ooo: BTreeSet<u32>,
    unacked: u32,
    last_ce: bool,
}

pub struct WindowTransport {
    name: &'static str,
    pub cfg: WindowConfig,
    conns: Vec<Conn>,
    pair_conn: HashMap<(u16, u16), u32>,
    /// Connection of each flow.
    flow_conn: Vec<u32>,
    acks: Vec<VecDeque<Packet>>,
    ready: Vec<VecDeque<u32>>,
}

impl WindowTransport {
    pub fn new(name: &'static str, cfg: WindowConfig) -> Self {
        WindowTransport {
            name,
            cfg,
            conns: Vec::new(),
            pair_conn: HashMap::new(),
            flow_conn: Vec::new(),
            acks: Vec::new(),
            ready: Vec::new(),
        }
    }

    fn new_conn(&mut self, src: u16, dst: u16) -> u32 {
        self.conns.push(Conn {
            src,
            dst,
            segs: Vec::new(),
            snd_una: 0,
            snd_nxt: 0,
            retx: None,
            cwnd: self.cfg.init_cwnd,
            ssthresh: f64::INFINITY,
            alpha: 1.0,
            win_end: 0,
            acked_in_win: 0,
            marked_in_win: 0,
            dupacks: 0,
            rto_gen: 0,
            rto_armed: false,
            in_ready: false,
            rcv_nxt: 0,
            ooo: BTreeSet::new(),
            unacked: 0,
            last_ce: false,
        });
        (self.conns.len() - 1) as u32
    }

    fn can_send(&self, c: u32) -> bool {
        let c = &self.conns[c as usize];
        c.retx.is_some()
            || ((c.snd_nxt as usize) < c.segs.len()
                && ((c.snd_nxt - c.snd_una) as f64) < c.cwnd.floor().max(1.0))
    }

    fn make_ready(&mut self, now: Ps, net: &mut Net, c: u32) {
        if !self.conns[c as usize].in_ready && self.can_send(c) {
            self.conns[c as usize].in_ready = true;
            let src = self.conns[c as usize].src;
            self.ready[src as usize].push_back(c);
            net.kick(now, src);
        }
    }

    fn arm_rto(&mut self, net: &mut Net, now: Ps, c: u32) {
        let conn = &mut self.conns[c as usize];
        conn.rto_gen = conn.rto_gen.wrapping_add(1);
        conn.rto_armed = true;
        net.timer(
            now + self.cfg.rto_ps,
            conn.src,
            ((c as u64) << 32) | conn.rto_gen as u64,
        );
    }

    fn data_packet(&mut self, net: &mut Net, now: Ps, c: u32) -> Packet {
        let framing = self.cfg.net.framing;
        let conn = &mut self.conns[c as usize];
        let seq = match conn.retx.take() {
            Some(s) => {
                net.stats.retransmissions += 1;
                s
            }
            None => {
                conn.snd_nxt += 1;
                conn.snd_nxt - 1
            }
        };
        let s = conn.segs[seq as usize];
        let mut p = Packet::new(
            conn.src,
            conn.dst,
            PacketKind::Data,
            framing.wire(s.payload),
        );
        p.payload = s.payload;
        p.flow = c;
        p.seq = seq;
        p.aux2 = s.flow as u64;
        p.prio = if self.cfg.srpt_priority {
            s.remaining as u64
        } else {
            0
        };
        if !conn.rto_armed {
            self.arm_rto(net, now, c);
        }
        p
    }

    fn receive_data(&mut self, net: &mut Net, now: Ps, p: Packet) {
        let c = p.flow;
        let conn = &mut self.conns[c as usize];
        let in_order = p.seq == conn.rcv_nxt;
        if p.seq >= conn.rcv_nxt {
            conn.ooo.insert(p.seq);
        }
        let mut flow_ends = Vec::new();
        while conn.ooo.first() == Some(&conn.rcv_nxt) {
            conn.ooo.pop_first();
            let s = conn.segs[conn.rcv_nxt as usize];
            if s.last {
                flow_ends.push(s.flow);
            }
            conn.rcv_nxt += 1;
        }
        conn.unacked += 1;
        let immediate = !in_order
            || !flow_ends.is_empty()
            || p.ce != conn.last_ce
            || conn.unacked >= self.cfg.ack_every;
        if immediate {
            conn.unacked = 0;
            conn.last_ce = p.ce;
            let mut ack = Packet::new(
                conn.dst,
                conn.src,
                PacketKind::Ack,
                self.cfg.net.framing.wire(0),
            );
            ack.flow = c;
            ack.aux = conn.rcv_nxt as u64;
            ack.ce = false;
            ack.aux2 = p.ce as u64;
            let h = conn.dst;
            self.acks[h as usize].push_back(ack);
            net.kick(now, h);
        }
        for f in flow_ends {
            net.flow_received(now, f);
        }
    }

    fn receive_ack(&mut self, net: &mut Net, now: Ps, p: Packet) {
        let c = p.flow;
        let law = self.cfg.law;
        let max_cwnd = self.cfg.max_cwnd;
        let conn = &mut self.conns[c as usize];
        let ack = p.aux as u32;
        let echoed = p.aux2 == 1;
        if ack > conn.snd_una {
            let newly = ack - conn.snd_una;
            conn.snd_una = ack;
            conn.snd_nxt = conn.snd_nxt.max(ack);
            if conn.retx.is_some_and(|r| r < ack) {
                conn.retx = None;
            }
            conn.dupacks = 0;
            conn.acked_in_win += newly;
            if echoed {
                conn.marked_in_win += newly;
            }
            if conn.cwnd < conn.ssthresh {
                conn.cwnd += newly as f64;
            } else if let WindowLaw::Dctcp { .. } = law {
                conn.cwnd += newly as f64 / conn.cwnd;
            }
            conn.cwnd = conn.cwnd.min(max_cwnd);
            if let WindowLaw::Dctcp { g } = law {
                if conn.snd_una >= conn.win_end {
                    let f = conn.marked_in_win as f64 / conn.acked_in_win.max(1) as f64;
                    conn.alpha = (1.0 - g) * conn.alpha + g * f;
                    if conn.marked_in_win > 0 {
                        conn.cwnd = (conn.cwnd * (1.0 - conn.alpha / 2.0)).max(1.0);
                        conn.ssthresh = conn.cwnd;
                    }
                    conn.acked_in_win = 0;
                    conn.marked_in_win = 0;
                    conn.win_end = conn.snd_nxt;
                }
            }
            if conn.snd_una >= conn.snd_nxt {
                conn.rto_armed = false;
                conn.rto_gen = conn.rto_gen.wrapping_add(1);
            } else {
                self.arm_rto(net, now, c);
            }
        } else if ack == conn.snd_una && conn.snd_nxt > conn.snd_una {
            conn.dupacks += 1;
            if conn.dupacks == 3 {
                conn.retx = Some(conn.snd_una);
                if let WindowLaw::Dctcp { .. } = law {
                    conn.ssthresh = (conn.cwnd / 2.0).max(1.0);
                    conn.cwnd = conn.ssthresh;
                }
            }
        }
        self.make_ready(now, net, c);
    }
}

impl Transport for WindowTransport {
    fn name(&self) -> &'static str {
        self.name
    }

    fn packet_config(&self) -> &PacketConfig {
        &self.cfg.net
    }

    fn reset(&mut self, ports: usize) {
        self.conns.clear();
        self.pair_conn.clear();
        self.flow_conn.clear();
        self.acks = (0..ports).map(|_| VecDeque::new()).collect();
        self.ready = (0..ports).map(|_| VecDeque::new()).collect();
    }

    fn on_flow(&mut self, net: &mut Net, now: Ps, flow: u32) {
        let f = net.flows[flow as usize];
        let c = if self.cfg.per_flow {
            self.new_conn(f.src, f.dst)
        } else {
            match self.pair_conn.get(&(f.src, f.dst)) {
                Some(&c) => c,
                None => {
                    let c = self.new_conn(f.src, f.dst);
                    self.pair_conn.insert((f.src, f.dst), c);
                    c
                }
            }
        };
        if self.flow_conn.len() <= flow as usize {
            self.flow_conn.resize(flow as usize + 1, u32::MAX);
        }
        self.flow_conn[flow as usize] = c;
        let framing = self.cfg.net.framing;
        let n = framing.packets(f.bytes);
        let conn = &mut self.conns[c as usize];
        let mut remaining = f.bytes;
        for i in 0..n {
            let payload = framing.payload(f.bytes, i);
            conn.segs.push(Seg {
                flow,
                payload,
                last: i + 1 == n,
                remaining,
            });
            remaining -= payload;
        }
        self.make_ready(now, net, c);
    }

    fn next_packet(&mut self, net: &mut Net, now: Ps, h: u16) -> Option<Packet> {
        if let Some(a) = self.acks[h as usize].pop_front() {
            return Some(a);
        }
        if self.cfg.srpt_priority {
            // pFabric hosts also send the flow with the least remaining bytes first.
            // Filtered in place (order kept): no allocation per packet.
            let mut ready = std::mem::take(&mut self.ready[h as usize]);
            let mut best: Option<(u32, u32)> = None;
            ready.retain(|&c| {
                if !self.can_send(c) {
                    self.conns[c as usize].in_ready = false;
                    return false;
                }
                let conn = &self.conns[c as usize];
                let next = conn.retx.unwrap_or(conn.snd_nxt);
                let rem = conn.segs[next as usize].remaining;
                if best.is_none_or(|(_, r)| rem < r) {
                    best = Some((c, rem));
                }
                true
            });
            self.ready[h as usize] = ready;
            let (c, _) = best?;
            let p = self.data_packet(net, now, c);
            if !self.can_send(c) {
                self.conns[c as usize].in_ready = false;
                self.ready[h as usize].retain(|&x| x != c);
            }
            return Some(p);
        }
        while let Some(c) = self.ready[h as usize].pop_front() {
            if !self.can_send(c) {
                self.conns[c as usize].in_ready = false;
                continue;
            }
            let p = self.data_packet(net, now, c);
            if self.can_send(c) {
                self.ready[h as usize].push_back(c);
            } else {
                self.conns[c as usize].in_ready = false;
            }
            return Some(p);
        }
        None
    }

    fn on_packet(&mut self, net: &mut Net, now: Ps, _h: u16, p: Packet) {
        match p.kind {
            PacketKind::Data => self.receive_data(net, now, p),
            PacketKind::Ack => self.receive_ack(net, now, p),
            _ => {}
        }
    }

    fn on_timer(&mut self, net: &mut Net, now: Ps, _h: u16, token: u64) {
        let c = (token >> 32) as u32;
        let gen = token as u32;
        let law = self.cfg.law;
        let conn = &mut self.conns[c as usize];
        if !conn.rto_armed || conn.rto_gen != gen || conn.snd_una >= conn.snd_nxt {
            return;
        }
        net.stats.timeouts += 1;
        net.stats.retransmissions += (conn.snd_nxt - conn.snd_una) as u64;
        conn.ssthresh = match law {
            WindowLaw::Dctcp { .. } => (conn.cwnd / 2.0).max(2.0),
            WindowLaw::Fixed => self.cfg.max_cwnd,
        };
        conn.cwnd = 1.0;
        conn.snd_nxt = conn.snd_una;
        conn.retx = None;
        conn.dupacks = 0;
        conn.rto_armed = false;
        self.make_ready(now, net, c);
    }
}
