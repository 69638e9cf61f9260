//! An ideal fabric: no queueing anywhere, every message takes a latency fixed
//! in advance. The yardstick of closed-loop applications ([`super::closed_loop`]):
//! either each message's latency alone under a real protocol (what that
//! protocol would give without contention), or an explicit latency and
//! bandwidth (Gao et al.'s injected delay, §3.1: latency + bytes / bandwidth).
use super::{run, EventQueue, Feed, Outcome, Progress, Protocol, Record, Simulation, Totals};
use crate::time::Ps;
use crate::workload::MessageSpec;

/// What each message takes on the ideal fabric.
pub enum IdealLatency {
    /// Its latency alone under this protocol.
    Unloaded(Box<dyn Protocol>),
    /// `latency_ps` plus its payload at `gbps` (0: no serialization).
    Fixed { latency_ps: Ps, gbps: f64 },
}

pub struct IdealFabric {
    pub latency: IdealLatency,
}

impl IdealFabric {
    pub fn new(latency: IdealLatency) -> Self {
        IdealFabric { latency }
    }

    fn run_with(&self, feed: Feed, progress: Progress) -> Outcome {
        let messages = feed.messages();
        let mut sim = IdealSim {
            q: EventQueue::default(),
            latency: messages.iter().map(|m| self.alone_ps(m)).collect(),
            messages,
            completions: Vec::with_capacity(messages.len()),
            delivered_bytes: 0,
        };
        let end = run(&mut sim, feed, progress);
        let mut records: Vec<Record> = sim
            .latency
            .iter()
            .map(|&alone_ps| Record {
                alone_ps,
                ..Record::default()
            })
            .collect();
        for &(i, at) in &sim.completions {
            records[i as usize].complete_ps = Some(at);
        }
        Outcome {
            records,
            totals: Totals {
                events: end.events,
                end_ps: end.end_ps,
                delivered_bytes: sim.delivered_bytes,
                ..Totals::default()
            },
        }
    }
}

/// Payload bytes a message carries: written or read, an RMW its word.
fn payload_bytes(m: &MessageSpec) -> u64 {
    let (lo, hi) = m.range();
    hi - lo
}

impl Protocol for IdealFabric {
    fn run(&mut self, feed: Feed, progress: Progress) -> Outcome {
        self.run_with(feed, progress)
    }

    fn alone_ps(&self, m: &MessageSpec) -> Ps {
        match &self.latency {
            IdealLatency::Unloaded(protocol) => protocol.alone_ps(m),
            IdealLatency::Fixed { latency_ps, gbps } => {
                let wire = if *gbps > 0.0 {
                    (payload_bytes(m) as f64 * 8000.0 / gbps).round() as Ps
                } else {
                    0
                };
                latency_ps + wire
            }
        }
    }

    fn name(&self) -> &'static str {
        "ideal"
    }
}

#[derive(Clone, Copy, Debug)]
enum Ev {
    Issue(u32),
    Done(u32),
}

struct IdealSim<'a> {
    q: EventQueue<Ev>,
    latency: Vec<Ps>,
    messages: &'a [MessageSpec],
    completions: Vec<(u32, Ps)>,
    delivered_bytes: u64,
}

impl Simulation for IdealSim<'_> {
    type Event = Ev;

    fn queue(&mut self) -> &mut EventQueue<Ev> {
        &mut self.q
    }

    fn issue_event(i: u32) -> Ev {
        Ev::Issue(i)
    }

    fn handle(&mut self, now: Ps, event: Ev) -> bool {
        match event {
            Ev::Issue(i) => self.q.push(now + self.latency[i as usize], Ev::Done(i)),
            Ev::Done(i) => {
                self.completions.push((i, now));
                self.delivered_bytes += payload_bytes(&self.messages[i as usize]);
            }
        }
        true
    }

    fn completed(&self) -> u64 {
        self.completions.len() as u64
    }

    fn completion_log(&self) -> &[(u32, Ps)] {
        &self.completions
    }
}
