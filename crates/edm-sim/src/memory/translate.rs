//! Memory-node address translation (Clio, issue 24): a TLB in front of the
//! memory node's page table.
use crate::rng::Rng;
use crate::time::Ps;
use crate::workload::MessageSpec;

/// Memory-node address translation (Clio, docs/related.md): a TLB hit costs
/// `hit_ps`, a miss `miss_ps` (one page-table bucket read); each request hits
/// with probability `hit_rate`, drawn from `seed` and the request itself.
/// Off when both costs are 0.
#[derive(Clone, Debug)]
pub struct Translate {
    pub hit_ps: Ps,
    pub miss_ps: Ps,
    pub hit_rate: f64,
    pub seed: u64,
}

impl Default for Translate {
    fn default() -> Self {
        Translate {
            hit_ps: 0,
            miss_ps: 0,
            hit_rate: 1.0,
            seed: 0,
        }
    }
}

impl Translate {
    /// The translation time of request `m`: deterministic in (seed, m).
    pub fn ps(&self, m: &MessageSpec) -> Ps {
        if self.hit_ps == 0 && self.miss_ps == 0 {
            return 0;
        }
        let key = m.addr
            ^ (m.requester as u64) << 48
            ^ (m.memory as u64) << 32
            ^ m.issue_ps.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        if Rng::fork(self.seed, key).uniform() < self.hit_rate {
            self.hit_ps
        } else {
            self.miss_ps
        }
    }

    /// The longest a request's translation takes: what a schedule fixed in
    /// advance (EDM's switch) must plan for.
    pub fn bound_ps(&self) -> Ps {
        if self.hit_rate >= 1.0 {
            self.hit_ps
        } else {
            self.hit_ps.max(self.miss_ps)
        }
    }
}
