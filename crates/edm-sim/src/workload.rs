//! Workloads: the messages a run issues. Generators are seeded and exact; a
//! trace can also be given message by message (see `edm.sim.trace` in Python).
use crate::rng::Rng;
use crate::time::Ps;

/// The applications' message-size CDFs, shipped in `crates/edm-sim/workloads/`
/// (provenance: `PROVENANCE.md` there) and compiled in: the one copy both
/// languages read (Python through `edm._core.app_cdf_text`).
pub const APP_CDFS: &[(&str, &str)] = &[
    ("hadoop", include_str!("../workloads/CDF_hadoop.txt")),
    ("spark", include_str!("../workloads/CDF_spark.txt")),
    ("sparksql", include_str!("../workloads/CDF_sparksql.txt")),
    ("graphlab", include_str!("../workloads/CDF_graphlab.txt")),
    ("memcached", include_str!("../workloads/CDF_memcached.txt")),
];

/// An application's size-CDF file as shipped (None: not an application).
pub fn app_cdf_text(app: &str) -> Option<&'static str> {
    APP_CDFS
        .iter()
        .find(|(name, _)| *name == app)
        .map(|(_, text)| *text)
}

/// What a message does. Sizes are the bytes written (WREQ) or read (RREQ); an
/// RMW reads and writes one 64-bit word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Op {
    #[default]
    Read,
    Write,
    Rmw,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Rmw => "rmw",
        }
    }
}

/// One message of a workload.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct MessageSpec {
    pub op: Op,
    /// The compute node that issues it.
    pub requester: u16,
    /// The memory node it addresses.
    pub memory: u16,
    /// Payload bytes (written, or read; 8 for RMW).
    pub size: u32,
    pub issue_ps: Ps,
    /// First byte it reads or writes at its memory node (EDM's memory-order
    /// rule orders only overlapping messages; [`assign_addresses`] draws
    /// them for workloads that give none).
    pub addr: u64,
    /// A fence: this message, and every later one of its requester, waits
    /// until every earlier message of the requester has finished.
    pub fence: bool,
}

impl MessageSpec {
    /// The bytes it touches at its memory node, `[addr, addr + len)` (an RMW
    /// its 8-byte word).
    pub fn range(&self) -> (u64, u64) {
        let len = if self.op == Op::Rmw {
            8
        } else {
            self.size as u64
        };
        (self.addr, self.addr + len)
    }
}

/// Draws every message's address uniformly from the 64-byte-aligned places in
/// `[0, space_bytes)` where it fits (a message larger than the space starts
/// at 0). From its own stream of `seed`, so the workload's other fields (and
/// the results of protocols that ignore addresses) do not depend on it.
pub fn assign_addresses(msgs: &mut [MessageSpec], space_bytes: u64, seed: u64) {
    let mut rng = Rng::new(seed ^ 0xADD2_E55E_5EED_0001);
    for m in msgs {
        let (lo, hi) = m.range();
        let slots = space_bytes.saturating_sub(hi - lo) / 64 + 1;
        m.addr = rng.below(slots) * 64;
    }
}

/// Checks messages given from outside (a trace, an application): distinct
/// nodes below `nodes`, positive sizes, sorted by issue time.
pub fn check_messages(msgs: &[MessageSpec], nodes: usize) -> Result<(), String> {
    for (i, m) in msgs.iter().enumerate() {
        if m.requester as usize >= nodes || m.memory as usize >= nodes || m.requester == m.memory {
            return Err(format!(
                "message {i}: requester {} and memory {} must be distinct nodes below {nodes}",
                m.requester, m.memory
            ));
        }
        if m.size == 0 {
            return Err(format!("message {i}: size must be positive"));
        }
        if i > 0 && m.issue_ps < msgs[i - 1].issue_ps {
            return Err(format!("message {i}: not sorted by issue time"));
        }
    }
    Ok(())
}

/// Whether two ranges `[lo, hi)` share a byte.
pub fn overlaps(a: (u64, u64), b: (u64, u64)) -> bool {
    a.0 < b.1 && b.0 < a.1
}

/// Which nodes issue requests and which serve them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Roles {
    /// Every node is both (the paper's all-to-all).
    AllToAll,
    /// The last `memory` nodes are memory nodes; the others compute nodes.
    Split { memory: usize },
}

/// A message-size distribution: the artifact's CDF points `(size, cumulative
/// probability)`, sizes in `unit` bytes, linearly interpolated and rounded to
/// whole units (a single point of probability 1 is a fixed size).
#[derive(Clone, Debug)]
pub struct SizeCdf {
    points: Vec<(f64, f64)>,
    unit: u32,
}

impl SizeCdf {
    pub fn new(points: Vec<(f64, f64)>, unit: u32) -> Result<Self, String> {
        if points.is_empty() {
            return Err("size CDF has no points".into());
        }
        for w in points.windows(2) {
            if w[1].0 < w[0].0 || w[1].1 < w[0].1 {
                return Err(format!(
                    "size CDF is not non-decreasing at {:?} -> {:?}",
                    w[0], w[1]
                ));
            }
        }
        if points.iter().any(|&(s, _)| s < 1.0) {
            return Err("size CDF has a size below one unit".into());
        }
        Ok(SizeCdf { points, unit })
    }

    /// An application CDF file as shipped ([`app_cdf_text`]:
    /// lines of size in packets, an unused column, cumulative probability;
    /// blank lines and `#` comments skipped).
    pub fn from_text(text: &str, unit: u32) -> Result<Self, String> {
        let mut points = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let parts: Vec<&str> = line.split_whitespace().collect();
            if parts.is_empty() || parts[0].starts_with('#') {
                continue;
            }
            let num = |s: &str| {
                s.parse::<f64>()
                    .map_err(|e| format!("line {}: {s:?}: {e}", n + 1))
            };
            if parts.len() != 3 {
                return Err(format!("line {}: expected 3 columns", n + 1));
            }
            points.push((num(parts[0])?, num(parts[2])?));
        }
        SizeCdf::new(points, unit)
    }

    pub fn fixed(bytes: u32) -> Self {
        SizeCdf {
            points: vec![(1.0, 1.0)],
            unit: bytes,
        }
    }

    /// The `(size in units, cumulative probability)` points.
    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }

    fn top(&self) -> f64 {
        self.points.last().unwrap().1
    }

    /// A sample in bytes.
    pub fn sample(&self, rng: &mut Rng) -> u32 {
        let u = rng.uniform() * self.top();
        let mut prev = self.points[0];
        for &p in &self.points {
            if u <= p.1 {
                let span = p.1 - prev.1;
                let size = if span <= 0.0 {
                    p.0
                } else {
                    prev.0 + (p.0 - prev.0) * (u - prev.1) / span
                };
                return (size.round().max(1.0) as u32) * self.unit;
            }
            prev = p;
        }
        (self.points.last().unwrap().0.round() as u32) * self.unit
    }

    /// Mean bytes of the interpolated distribution (before rounding).
    pub fn mean_bytes(&self) -> f64 {
        let mut mean = self.points[0].0 * self.points[0].1;
        for w in self.points.windows(2) {
            mean += (w[0].0 + w[1].0) / 2.0 * (w[1].1 - w[0].1);
        }
        mean / self.top() * self.unit as f64
    }
}

/// An open-loop workload: Poisson arrivals at each compute node, each message
/// to a uniformly chosen memory node (so independent Poisson per pair).
#[derive(Clone, Debug)]
pub struct OpenLoop {
    pub nodes: usize,
    pub roles: Roles,
    pub link_gbps: u32,
    /// Fraction of each compute node's link rate carried by memory payload.
    pub load: f64,
    /// Probability that a message is a write (the rest are reads).
    pub write_ratio: f64,
    pub sizes: SizeCdf,
    pub messages: usize,
    pub seed: u64,
}

impl OpenLoop {
    /// Its parameters are checked by `crate::schema::RunConfig::validate_open_loop`.
    pub fn generate(&self) -> Vec<MessageSpec> {
        let (compute, memory): (Vec<u16>, Vec<u16>) = match self.roles {
            Roles::AllToAll => (
                (0..self.nodes as u16).collect(),
                (0..self.nodes as u16).collect(),
            ),
            Roles::Split { memory } => {
                let first_memory = (self.nodes - memory) as u16;
                (
                    (0..first_memory).collect(),
                    (first_memory..self.nodes as u16).collect(),
                )
            }
        };
        let bits_per_ps = self.link_gbps as f64 * 1e-3;
        let per_node_gap_ps = 8.0 * self.sizes.mean_bytes() / (self.load * bits_per_ps);
        let gap_ps = per_node_gap_ps / compute.len() as f64;
        let mut rng = Rng::new(self.seed);
        let mut now = 0.0f64;
        let mut out = Vec::with_capacity(self.messages);
        while out.len() < self.messages {
            now += rng.exponential(gap_ps);
            let requester = compute[rng.below(compute.len() as u64) as usize];
            let memory_node = loop {
                let m = memory[rng.below(memory.len() as u64) as usize];
                if m != requester {
                    break m;
                }
            };
            let op = if rng.uniform() < self.write_ratio {
                Op::Write
            } else {
                Op::Read
            };
            out.push(MessageSpec {
                op,
                requester,
                memory: memory_node,
                size: self.sizes.sample(&mut rng),
                issue_ps: now.round() as Ps,
                ..Default::default()
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdf_interpolates_rounds_and_has_the_right_mean() {
        let cdf = SizeCdf::new(vec![(4.0, 0.0), (4.0, 0.5), (8.0, 1.0)], 1460).unwrap();
        assert_eq!(cdf.mean_bytes(), (0.5 * 4.0 + 0.5 * 6.0) * 1460.0);
        let mut rng = Rng::new(3);
        let n = 200_000;
        let samples: Vec<u32> = (0..n).map(|_| cdf.sample(&mut rng)).collect();
        assert!(samples
            .iter()
            .all(|s| s % 1460 == 0 && (4 * 1460..=8 * 1460).contains(s)));
        let mean = samples.iter().map(|&s| s as f64).sum::<f64>() / n as f64;
        assert!((mean / cdf.mean_bytes() - 1.0).abs() < 0.01, "{mean}");
    }

    #[test]
    fn open_loop_load_matches_its_definition() {
        let w = OpenLoop {
            nodes: 16,
            roles: Roles::AllToAll,
            link_gbps: 100,
            load: 0.5,
            write_ratio: 0.5,
            sizes: SizeCdf::fixed(64),
            messages: 200_000,
            seed: 9,
        };
        let msgs = w.generate();
        let span = msgs.last().unwrap().issue_ps as f64;
        let offered_bits_per_ps =
            msgs.iter().map(|m| 8.0 * m.size as f64).sum::<f64>() / span / 16.0;
        assert!(
            (offered_bits_per_ps / 0.1 / 0.5 - 1.0).abs() < 0.02,
            "{offered_bits_per_ps}"
        );
        assert!(msgs.iter().all(|m| m.requester != m.memory));
        assert_eq!(msgs, w.generate(), "same seed, same workload");
    }
}
