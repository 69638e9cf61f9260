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
    /// Key in its host's `SrptReady` while `in_ready` (pFabric only).
    ready_key: ReadyKey,
    /// Queued in its host's `srpt_stale` (pFabric only).
    stale: bool,
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
    /// Connections that may send, per host, in the order they became ready
    /// (round robin; DCTCP).
    ready: Vec<VecDeque<u32>>,
    /// The same for pFabric, indexed by its pick order.
    srpt_ready: Vec<SrptReady>,
    /// Per host: ready connections whose key or sendability may have
    /// changed since the host's last pick (an ACK or a timeout touched
    /// them); `next_packet` brings them up to date first.
    srpt_stale: Vec<Vec<u32>>,
}

/// (remaining bytes of the next segment, position in ready order).
type ReadyKey = (u32, u64);

/// One host's ready connections ordered as pFabric picks them: fewest
/// remaining bytes in the next segment first, then the earliest to become
/// ready. The same pick as scanning the ready list in order for the first
/// strict minimum, in O(log n) instead of O(n) per packet.
#[derive(Debug, Default)]
struct SrptReady {
    set: BTreeSet<(u32, u64, u32)>,
    next_pos: u64,
}

impl SrptReady {
    /// `c` joins at the back of the ready order.
    fn push_back(&mut self, c: u32, remaining: u32) -> ReadyKey {
        let key = (remaining, self.next_pos);
        self.next_pos += 1;
        self.set.insert((key.0, key.1, c));
        key
    }

    fn remove(&mut self, c: u32, key: ReadyKey) {
        let found = self.set.remove(&(key.0, key.1, c));
        debug_assert!(found, "connection {c} not in the ready index");
    }

    /// New remaining bytes for `c`; its place in the ready order stays.
    fn rekey(&mut self, c: u32, key: ReadyKey, remaining: u32) -> ReadyKey {
        self.remove(c, key);
        self.set.insert((remaining, key.1, c));
        (remaining, key.1)
    }

    fn first(&self) -> Option<u32> {
        self.set.first().map(|&(_, _, c)| c)
    }
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
            srpt_ready: Vec::new(),
            srpt_stale: Vec::new(),
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
            ready_key: (0, 0),
            stale: false,
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

    /// Bytes of the flow left from the connection's next packet on.
    fn next_remaining(&self, c: u32) -> u32 {
        let conn = &self.conns[c as usize];
        conn.segs[conn.retx.unwrap_or(conn.snd_nxt) as usize].remaining
    }

    fn make_ready(&mut self, now: Ps, net: &mut Net, c: u32) {
        if !self.conns[c as usize].in_ready && self.can_send(c) {
            self.conns[c as usize].in_ready = true;
            let src = self.conns[c as usize].src;
            if self.cfg.srpt_priority {
                let rem = self.next_remaining(c);
                self.conns[c as usize].ready_key = self.srpt_ready[src as usize].push_back(c, rem);
            } else {
                self.ready[src as usize].push_back(c);
            }
            net.kick(now, src);
        }
    }

    /// pFabric: `c`'s sender state changed; if it is ready, its key and
    /// sendability are checked at its host's next pick. (Checked then, not
    /// now: a connection that cannot send is dropped from the ready order
    /// only when its host next picks, as the scan this index replaced did.)
    fn touched(&mut self, c: u32) {
        let conn = &mut self.conns[c as usize];
        if self.cfg.srpt_priority && conn.in_ready && !conn.stale {
            conn.stale = true;
            self.srpt_stale[conn.src as usize].push(c);
        }
    }

    /// pFabric: `c` (ready) after a change: new key, or out of the ready
    /// order if it cannot send.
    fn refresh(&mut self, h: u16, c: u32) {
        let key = self.conns[c as usize].ready_key;
        if self.can_send(c) {
            let rem = self.next_remaining(c);
            self.conns[c as usize].ready_key = self.srpt_ready[h as usize].rekey(c, key, rem);
        } else {
            self.conns[c as usize].in_ready = false;
            self.srpt_ready[h as usize].remove(c, key);
        }
    }

    /// pFabric's pick: the ready connection whose next packet has the
    /// fewest remaining bytes, the earliest ready on ties.
    fn srpt_next(&mut self, net: &mut Net, now: Ps, h: u16) -> Option<Packet> {
        let mut stale = std::mem::take(&mut self.srpt_stale[h as usize]);
        for &c in &stale {
            self.conns[c as usize].stale = false;
            if self.conns[c as usize].in_ready {
                self.refresh(h, c);
            }
        }
        stale.clear();
        self.srpt_stale[h as usize] = stale;
        let c = self.srpt_ready[h as usize].first()?;
        debug_assert!(
            self.can_send(c) && self.conns[c as usize].ready_key.0 == self.next_remaining(c)
        );
        let p = self.data_packet(net, now, c);
        self.refresh(h, c);
        Some(p)
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
        self.touched(c);
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
        self.srpt_ready = (0..ports).map(|_| SrptReady::default()).collect();
        self.srpt_stale = (0..ports).map(|_| Vec::new()).collect();
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
        self.touched(c);
        self.make_ready(now, net, c);
    }

    fn next_packet(&mut self, net: &mut Net, now: Ps, h: u16) -> Option<Packet> {
        if let Some(a) = self.acks[h as usize].pop_front() {
            return Some(a);
        }
        if self.cfg.srpt_priority {
            // pFabric hosts also send the flow with the least remaining bytes first.
            return self.srpt_next(net, now, h);
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
        self.touched(c);
        self.make_ready(now, net, c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::FabricConfig;
    use crate::rng::Rng;

    /// The pick the index replaced: the first strict minimum of the
    /// remaining bytes, scanning the ready order from the front.
    fn scan_pick(order: &VecDeque<u32>, remaining: &HashMap<u32, u32>) -> Option<u32> {
        let mut best: Option<(u32, u32)> = None;
        for &c in order {
            let r = remaining[&c];
            if best.is_none_or(|(_, b)| r < b) {
                best = Some((c, r));
            }
        }
        best.map(|(c, _)| c)
    }

    #[test]
    fn equal_remaining_bytes_go_to_the_earlier_ready() {
        let mut ready = SrptReady::default();
        // Connection ids in the opposite order to the ready order.
        let k7 = ready.push_back(7, 100);
        let k3 = ready.push_back(3, 100);
        assert_eq!(ready.first(), Some(7));
        // A new key keeps the place in the ready order.
        let k7 = ready.rekey(7, k7, 100);
        assert_eq!(ready.first(), Some(7));
        let k5 = ready.push_back(5, 99);
        assert_eq!(ready.first(), Some(5));
        ready.remove(5, k5);
        ready.remove(7, k7);
        assert_eq!(ready.first(), Some(3));
        // Back in the ready order: behind 3, though its id is lower.
        ready.push_back(1, 100);
        assert_eq!(ready.first(), Some(3));
        ready.remove(3, k3);
        assert_eq!(ready.first(), Some(1));
    }

    /// Random joins, key changes and removals, with many ties: after each,
    /// the index picks what a scan of the ready order picks.
    #[test]
    fn index_agrees_with_a_scan_of_the_ready_order() {
        let mut rng = Rng::new(43);
        let mut ready = SrptReady::default();
        let mut keys: HashMap<u32, ReadyKey> = HashMap::new();
        let mut order: VecDeque<u32> = VecDeque::new();
        let mut remaining: HashMap<u32, u32> = HashMap::new();
        let mut picks = 0;
        for _ in 0..20_000 {
            let c = rng.below(40) as u32;
            let rem = 1 + rng.below(6) as u32;
            match (keys.get(&c).copied(), rng.below(3)) {
                (None, _) => {
                    keys.insert(c, ready.push_back(c, rem));
                    order.push_back(c);
                    remaining.insert(c, rem);
                }
                (Some(k), 0) => {
                    ready.remove(c, k);
                    keys.remove(&c);
                    order.retain(|&x| x != c);
                }
                (Some(k), _) => {
                    keys.insert(c, ready.rekey(c, k, rem));
                    remaining.insert(c, rem);
                }
            }
            let want = scan_pick(&order, &remaining);
            assert_eq!(ready.first(), want, "ready order {order:?}");
            picks += usize::from(want.is_some());
        }
        assert!(picks > 10_000);
    }

    /// Two one-packet flows of one size from one host: the first to arrive
    /// goes first, whatever their connection ids.
    #[test]
    fn pfabric_sends_equal_flows_in_ready_order() {
        let fabric = FabricConfig {
            nodes: 4,
            ..FabricConfig::default()
        };
        // pFabric's shape (crate::baselines::pfabric_config, which this
        // module may not import: baselines sits above packet): a fixed
        // window, one connection per flow, SRPT at the hosts and the switch.
        let config = WindowConfig {
            net: PacketConfig {
                discipline: Discipline::Priority,
                ..PacketConfig::raw_ethernet()
            },
            law: WindowLaw::Fixed,
            init_cwnd: 8.0,
            max_cwnd: 8.0,
            rto_ps: 1_000_000,
            ack_every: 1,
            per_flow: true,
            srpt_priority: true,
        };
        let mut t = WindowTransport::new("pfabric", config);
        let cfg = t.cfg.net.clone();
        let mut net = Net::new(&fabric, &cfg, &[]);
        t.reset(net.ports);
        for (dst, msg) in [(2, 0), (1, 1), (3, 2)] {
            net.flows.push(Flow {
                src: 0,
                dst,
                bytes: if msg == 2 { 40 } else { 64 },
                msg,
                role: FlowRole::Write,
                start_ps: 0,
            });
        }
        t.on_flow(&mut net, 0, 0);
        t.on_flow(&mut net, 0, 1);
        let first = t.next_packet(&mut net, 0, 0).unwrap();
        assert_eq!(first.aux2, 0, "the earlier-ready flow first");
        // A shorter flow overtakes the one still waiting.
        t.on_flow(&mut net, 0, 2);
        let order: Vec<u64> = (0..2)
            .map(|_| t.next_packet(&mut net, 0, 0).unwrap().aux2)
            .collect();
        assert_eq!(order, [2, 1]);
        assert!(t.next_packet(&mut net, 0, 0).is_none());
    }
}
