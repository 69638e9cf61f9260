//! Background Ethernet traffic (IP, storage) sharing a link with memory
//! traffic (§3.2.3). Frames arrive as a Poisson process at a given load and are
//! sent first come, first served whenever the link carries no memory block.
//! Memory traffic has priority: with EDM's intra-frame preemption a memory unit
//! (or /N/, /G/) waits only for the frame block on the wire to end; without it
//! (a plain Ethernet priority queue) it waits for the whole frame in progress.
//!
//! Frames do not generate events: their service is computed lazily, gap by gap,
//! between the memory transmissions the link reports ([`FrameStream::memory_busy`]),
//! so they cost nothing when off and little when on.
use crate::config::FabricConfig;
use crate::rng::Rng;
use crate::time::Ps;
use std::collections::VecDeque;

/// Wire bytes a frame adds besides its own bytes: preamble + SFD (8) and the
/// minimum inter-frame gap (12).
pub const FRAME_OVERHEAD_BYTES: u32 = 20;

#[derive(Clone, Debug, PartialEq)]
pub struct BackgroundConfig {
    /// Fraction of each link direction's rate offered as frames (0: off).
    pub load: f64,
    /// Frame size (bytes, 64..=9216).
    pub frame_bytes: u32,
    /// EDM's block-level preemption of frames (true) or none (false).
    pub preemption: bool,
    pub seed: u64,
}

impl Default for BackgroundConfig {
    fn default() -> Self {
        BackgroundConfig {
            load: 0.0,
            frame_bytes: 1500,
            preemption: true,
            seed: 1,
        }
    }
}

impl BackgroundConfig {
    pub fn enabled(&self) -> bool {
        self.load > 0.0
    }

    pub fn validate(&self) -> Result<(), String> {
        if !(0.0..1.0).contains(&self.load) {
            return Err(format!("background_load: {} is not in [0, 1)", self.load));
        }
        if !(64..=9216).contains(&self.frame_bytes) {
            return Err(format!(
                "background_frame_bytes: {} is not in 64..=9216",
                self.frame_bytes
            ));
        }
        Ok(())
    }

    /// Blocks one frame occupies on the wire (its bytes, preamble and gap in
    /// 8-byte blocks, rounded up).
    pub fn frame_blocks(&self) -> u32 {
        (self.frame_bytes + FRAME_OVERHEAD_BYTES).div_ceil(8)
    }
}

/// What the frames of a set of links went through.
#[derive(Clone, Debug, Default)]
pub struct FrameStats {
    pub frames: u64,
    /// Per frame: time from arrival to its last block sent, minus its own
    /// serialization (waiting for other frames and for memory traffic).
    pub delays_ps: Vec<Ps>,
    /// Memory transmissions that had to wait for a frame, and the total and
    /// longest of those waits.
    pub memory_waits: u64,
    pub memory_wait_total_ps: Ps,
    pub memory_wait_max_ps: Ps,
}

impl FrameStats {
    pub fn merge(&mut self, other: &FrameStats) {
        self.frames += other.frames;
        self.delays_ps.extend_from_slice(&other.delays_ps);
        self.memory_waits += other.memory_waits;
        self.memory_wait_total_ps += other.memory_wait_total_ps;
        self.memory_wait_max_ps = self.memory_wait_max_ps.max(other.memory_wait_max_ps);
    }
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    arrival: Ps,
    remaining_ps: Ps,
}

/// The frames of one link direction.
#[derive(Clone, Debug)]
pub struct FrameStream {
    rng: Rng,
    mean_gap_ps: f64,
    frame_ps: Ps,
    block_ps: Ps,
    preemption: bool,
    next_arrival: Ps,
    backlog: VecDeque<Frame>,
    /// Frame service has been computed up to here.
    cursor: Ps,
    /// Where the current run of frame blocks started (blocks are aligned to it).
    phase: Ps,
    /// Memory transmissions not yet passed by `cursor`, in time order.
    memory: VecDeque<(Ps, Ps)>,
    pub stats: FrameStats,
}

impl FrameStream {
    /// The frames of link direction `stream` (an index unique per direction).
    pub fn new(cfg: &BackgroundConfig, fabric: &FabricConfig, stream: u64) -> Self {
        let block_ps = fabric.block_ps();
        let frame_ps = cfg.frame_blocks() as Ps * block_ps;
        let mut rng = Rng::fork(cfg.seed, 0xBAC6_0000 + stream);
        let mean_gap_ps = frame_ps as f64 / cfg.load;
        let next_arrival = rng.exponential(mean_gap_ps) as Ps;
        FrameStream {
            rng,
            mean_gap_ps,
            frame_ps,
            block_ps,
            preemption: cfg.preemption,
            next_arrival,
            backlog: VecDeque::new(),
            cursor: 0,
            phase: 0,
            memory: VecDeque::new(),
            stats: FrameStats::default(),
        }
    }

    fn admit_arrivals(&mut self) {
        while self.next_arrival <= self.cursor {
            if self.backlog.is_empty() {
                self.phase = self.next_arrival.max(self.phase);
            }
            self.backlog.push_back(Frame {
                arrival: self.next_arrival,
                remaining_ps: self.frame_ps,
            });
            self.next_arrival += (self.rng.exponential(self.mean_gap_ps) as Ps).max(1);
        }
    }

    /// Computes frame service up to `t`.
    pub fn advance(&mut self, t: Ps) {
        while self.cursor < t {
            if let Some(&(start, end)) = self.memory.front() {
                if start <= self.cursor {
                    self.memory.pop_front();
                    if end > self.cursor {
                        self.cursor = end.min(t.max(end));
                        self.admit_arrivals();
                        // Frames resume on a fresh block boundary after memory.
                        self.phase = self.cursor;
                    }
                    continue;
                }
            }
            let gap_end = self.memory.front().map_or(t, |&(s, _)| s.min(t));
            self.admit_arrivals();
            match self.backlog.front_mut() {
                None => {
                    if self.next_arrival >= gap_end {
                        self.cursor = gap_end;
                    } else {
                        self.cursor = self.next_arrival;
                    }
                }
                Some(f) => {
                    let finish = self.cursor + f.remaining_ps;
                    if finish <= gap_end {
                        let delay = finish - f.arrival - self.frame_ps;
                        self.stats.frames += 1;
                        self.stats.delays_ps.push(delay);
                        self.backlog.pop_front();
                        self.cursor = finish;
                        self.phase = finish;
                    } else {
                        // Memory cutting into a frame block (it starts off
                        // the frame's block grid, as zero-queue units may)
                        // costs the frame that block: it is sent again after.
                        let cut = self.memory.front().is_some_and(|&(s, _)| s == gap_end);
                        let lost = if cut && self.preemption {
                            (gap_end - self.phase) % self.block_ps
                        } else {
                            0
                        };
                        f.remaining_ps = f.remaining_ps + lost - (gap_end - self.cursor);
                        self.cursor = gap_end;
                    }
                }
            }
        }
    }

    /// How long a memory transmission wanting the link at `now` (the link has
    /// no memory block on it then) must wait for the frame on the wire.
    pub fn memory_wait(&mut self, now: Ps) -> Ps {
        self.advance(now);
        self.admit_arrivals();
        let wait = match self.backlog.front() {
            // A frame that has not sent a block yet yields at once.
            Some(f) if f.remaining_ps < self.frame_ps || (f.arrival < now && self.phase < now) => {
                if self.preemption {
                    let into = (now - self.phase) % self.block_ps;
                    if into == 0 {
                        0
                    } else {
                        self.block_ps - into
                    }
                } else {
                    f.remaining_ps
                }
            }
            _ => 0,
        };
        if wait > 0 {
            self.stats.memory_waits += 1;
            self.stats.memory_wait_total_ps += wait;
            self.stats.memory_wait_max_ps = self.stats.memory_wait_max_ps.max(wait);
        }
        wait
    }

    /// The link sends memory blocks in [start, end): frames pause.
    pub fn memory_busy(&mut self, start: Ps, end: Ps) {
        match self.memory.back_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => self.memory.push_back((start, end)),
        }
    }

    /// [`FrameStream::memory_busy`] for a transmission fixed ahead, possibly
    /// before others already reported (EDM's zero-queue mode books units
    /// into gaps); never before the time frames have been computed to.
    pub fn memory_busy_ahead(&mut self, start: Ps, end: Ps) {
        debug_assert!(start >= self.cursor, "memory busy in the past");
        let at = self.memory.partition_point(|&(s, _)| s < start);
        self.memory.insert(at, (start, end));
    }

    /// Ends the stream at `t`: frames still queued then are not counted.
    pub fn finish(&mut self, t: Ps) {
        self.advance(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fabric() -> FabricConfig {
        FabricConfig::default()
    }

    #[test]
    fn frames_alone_wait_as_in_an_m_d_1_queue() {
        // Poisson arrivals, fixed service S at load rho: mean wait rho*S / (2(1-rho)).
        for load in [0.3, 0.7] {
            let cfg = BackgroundConfig {
                load,
                frame_bytes: 1500,
                ..Default::default()
            };
            let mut s = FrameStream::new(&cfg, &fabric(), 3);
            let service = s.frame_ps as f64;
            s.finish(20_000_000_000); // 20 ms
            let n = s.stats.frames as f64;
            let mean = s.stats.delays_ps.iter().sum::<Ps>() as f64 / n;
            let expect = load * service / (2.0 * (1.0 - load));
            assert!(
                (mean - expect).abs() < 0.08 * expect,
                "load {load}: mean wait {mean} ps, M/D/1 {expect} ps over {n} frames"
            );
            eprintln!("load {load}: mean wait {mean:.0} ps vs M/D/1 {expect:.0} ps, {n} frames");
            // The link carried the offered load.
            let carried = n * service / 2e10;
            assert!((carried - load).abs() < 0.02, "{carried}");
        }
    }

    #[test]
    fn preemption_bounds_the_memory_wait_by_one_block() {
        for (preemption, bound_blocks) in [(true, 1), (false, 9236 / 8 + 1)] {
            let cfg = BackgroundConfig {
                load: 0.9,
                frame_bytes: 9000,
                preemption,
                seed: 5,
            };
            let f = fabric();
            let block = f.block_ps();
            let mut s = FrameStream::new(&cfg, &f, 0);
            let mut max = 0;
            let mut t = 1_000_000;
            for _ in 0..2000 {
                let w = s.memory_wait(t);
                max = max.max(w);
                // A 10-block memory unit goes out after the wait.
                s.memory_busy(t + w, t + w + 10 * block);
                t += w + 10 * block + 37_000;
            }
            assert!(
                max <= bound_blocks * block,
                "wait {max} ps, preemption {preemption}"
            );
            if preemption {
                assert!(max > 0);
            } else {
                // Without preemption some unit waits for most of a jumbo frame.
                assert!(max > 500 * block, "{max}");
            }
        }
    }

    #[test]
    fn memory_traffic_delays_frames_but_loses_none() {
        let cfg = BackgroundConfig {
            load: 0.4,
            ..Default::default()
        };
        let f = fabric();
        let block = f.block_ps();
        let mut alone = FrameStream::new(&cfg, &f, 9);
        let mut shared = FrameStream::new(&cfg, &f, 9);
        let mut t = 0;
        while t < 1_000_000_000 {
            let w = shared.memory_wait(t);
            shared.memory_busy(t + w, t + w + 100 * block);
            t += w + 100 * block + 100 * block; // memory takes half the link
        }
        alone.finish(1_000_000_000);
        shared.finish(4_000_000_000); // long enough to drain the backlog
        let arrivals_1ms = alone.stats.frames;
        assert!(shared.stats.frames >= arrivals_1ms, "frames lost");
        let mean = |s: &FrameStream| {
            s.stats
                .delays_ps
                .iter()
                .take(arrivals_1ms as usize)
                .sum::<Ps>() as f64
                / arrivals_1ms as f64
        };
        assert!(mean(&shared) > 2.0 * mean(&alone));
    }
}
