//! IRD, an idealised receiver-driven protocol (the paper's §4.3 baseline):
//! a receiver learns of every flow bound for it the moment the flow is ready
//! at its source (zero-time notification) and grants it one packet per
//! credit, in SRPT order. Credits are paced at the receiver's link rate (one
//! credit per data-packet time, ExpressPass's credit rate limiting), and a
//! flow may hold at most `max_outstanding` granted-but-unreceived bytes, so a
//! receiver moves on to its next flow when a sender is slow. A sender serves
//! the credits it receives one at a time, in arrival order: when several
//! receivers grant the same sender, they all get a share of its uplink and
//! their own links idle (the conflict the paper attributes to decentralised
//! schedulers). Requests (RREQ/RMWREQ) are sent unscheduled.
//! Deviation from ExpressPass: credits beyond a sender's rate are queued at
//! the sender rather than dropped at the switch; both waste the receiver's
//! grant, ours as delay.
use super::*;
use std::collections::VecDeque;

#[derive(Clone, Debug)]
pub struct IrdConfig {
    pub net: PacketConfig,
    pub max_outstanding: u32,
}

#[derive(Clone, Copy, Debug)]
struct Incoming {
    flow: u32,
    granted: u32,
    received: u32,
    bytes: u32,
}

pub struct Ird {
    pub cfg: IrdConfig,
    /// Per receiver: flows still to grant or receive.
    incoming: Vec<Vec<Incoming>>,
    next_credit_at: Vec<Ps>,
    timer_at: Vec<Option<Ps>>,
    /// Per host: credits and unscheduled packets to send, and data granted.
    control: Vec<VecDeque<Packet>>,
    granted: Vec<VecDeque<Packet>>,
    pub credits: u64,
}

impl Ird {
    pub fn new(cfg: IrdConfig) -> Self {
        Ird {
            cfg,
            incoming: Vec::new(),
            next_credit_at: Vec::new(),
            timer_at: Vec::new(),
            control: Vec::new(),
            granted: Vec::new(),
            credits: 0,
        }
    }

    /// Receiver `r` issues its next credit if its pacing allows.
    fn grant(&mut self, net: &mut Net, now: Ps, r: u16) {
        let ri = r as usize;
        if self.next_credit_at[ri] > now {
            if self.timer_at[ri].is_none_or(|t| t < now) {
                self.timer_at[ri] = Some(self.next_credit_at[ri]);
                net.timer(self.next_credit_at[ri], r, 0);
            }
            return;
        }
        let cap = self.cfg.max_outstanding;
        let mss = self.cfg.net.framing.mss();
        let best = self.incoming[ri]
            .iter()
            .enumerate()
            .filter(|(_, f)| f.granted < f.bytes && f.granted - f.received < cap)
            .min_by_key(|(_, f)| (f.bytes - f.granted, f.flow))
            .map(|(i, _)| i);
        let Some(i) = best else { return };
        let inc = &mut self.incoming[ri][i];
        let payload = (inc.bytes - inc.granted).min(mss);
        let offset = inc.granted;
        inc.granted += payload;
        let flow = inc.flow;
        let f = net.flows[flow as usize];
        let mut credit = Packet::new(r, f.src, PacketKind::Control, self.cfg.net.framing.wire(0));
        credit.flow = flow;
        credit.aux = offset as u64;
        credit.aux2 = payload as u64;
        self.control[ri].push_back(credit);
        self.credits += 1;
        net.kick(now, r);
        self.next_credit_at[ri] = now + net.wire_ps(self.cfg.net.framing.wire(payload));
        self.timer_at[ri] = Some(self.next_credit_at[ri]);
        net.timer(self.next_credit_at[ri], r, 0);
    }
}

impl Transport for Ird {
    fn name(&self) -> &'static str {
        "ird"
    }

    fn packet_config(&self) -> &PacketConfig {
        &self.cfg.net
    }

    fn reset(&mut self, ports: usize) {
        self.incoming = (0..ports).map(|_| Vec::new()).collect();
        self.next_credit_at = vec![0; ports];
        self.timer_at = vec![None; ports];
        self.control = (0..ports).map(|_| VecDeque::new()).collect();
        self.granted = (0..ports).map(|_| VecDeque::new()).collect();
        self.credits = 0;
    }

    fn on_flow(&mut self, net: &mut Net, now: Ps, flow: u32) {
        let f = net.flows[flow as usize];
        if f.role == FlowRole::Request {
            self.control[f.src as usize].extend(flow_packets(self.cfg.net.framing, flow, &f));
            net.kick(now, f.src);
            return;
        }
        // Zero-time notification: the receiver knows at once.
        self.incoming[f.dst as usize].push(Incoming {
            flow,
            granted: 0,
            received: 0,
            bytes: f.bytes,
        });
        self.grant(net, now, f.dst);
    }

    fn next_packet(&mut self, _net: &mut Net, _now: Ps, h: u16) -> Option<Packet> {
        self.control[h as usize]
            .pop_front()
            .or_else(|| self.granted[h as usize].pop_front())
    }

    fn on_packet(&mut self, net: &mut Net, now: Ps, h: u16, p: Packet) {
        match p.kind {
            PacketKind::Control => {
                // A credit: send the granted packet when the uplink gets to it.
                let f = net.flows[p.flow as usize];
                let d = data_packet(
                    self.cfg.net.framing,
                    f.src,
                    f.dst,
                    p.flow,
                    p.aux as u32,
                    p.aux2 as u32,
                );
                self.granted[h as usize].push_back(d);
                net.kick(now, h);
            }
            PacketKind::Data => {
                let f = net.flows[p.flow as usize];
                if f.role == FlowRole::Request {
                    // Unscheduled and single-path: in order; done at its last byte.
                    if ends_flow(&p, &f) {
                        net.flow_received(now, p.flow);
                    }
                    return;
                }
                let list = &mut self.incoming[h as usize];
                let i = list
                    .iter()
                    .position(|x| x.flow == p.flow)
                    .expect("data for a known flow");
                list[i].received += p.payload;
                if list[i].received == list[i].bytes {
                    list.swap_remove(i);
                    net.flow_received(now, p.flow);
                }
                self.grant(net, now, h);
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, net: &mut Net, now: Ps, h: u16, _token: u64) {
        if self.timer_at[h as usize] == Some(now) {
            self.timer_at[h as usize] = None;
            self.grant(net, now, h);
        }
    }
}
