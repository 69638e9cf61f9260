//! The TX multiplexer (memory units preempt frames between blocks) and the RX
//! demultiplexer (extracts memory traffic, rebuilds frames as consecutive blocks).
use crate::block::{Block, BlockClass};
use crate::control::{Control, ControlKind, ControlRx};
use crate::message::{blocks_announced, decode, Message};
use crate::pcs::{decode_frame, gap_blocks_after};
use crate::spec::{ETH_MAX_FRAME_BYTES, ETH_PREAMBLE_BYTES, IDLE_PERIOD_BLOCKS};
use std::collections::VecDeque;

/// Blocks of the longest frame (ETH_MAX_FRAME_BYTES): its preamble and bytes,
/// and the /T/ block.
const MAX_FRAME_BLOCKS: u64 = (ETH_PREAMBLE_BYTES + ETH_MAX_FRAME_BYTES) as u64 / 8 + 1;
/// After this many blocks without an idle the multiplexer starts no unit or
/// frame until an idle has gone out (a unit in progress gets an idle filler at
/// once, a frame in progress finishes first), so every IDLE_PERIOD_BLOCKS
/// blocks hold an idle (docs/faults.md §1).
const PACE_AFTER_BLOCKS: u64 = IDLE_PERIOD_BLOCKS as u64 - 1 - MAX_FRAME_BLOCKS;

/// How the TX multiplexer shares the line when memory and frame blocks both wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Alternate: after a memory unit, one frame block goes before the next unit.
    Fair,
    /// Memory first whenever any memory unit is waiting.
    Strict,
}

impl Policy {
    /// "fair" or "strict".
    pub fn from_name(name: &str) -> Option<Policy> {
        match name {
            "fair" => Some(Policy::Fair),
            "strict" => Some(Policy::Strict),
            _ => None,
        }
    }
}

/// A streaming TX multiplexer: one output block per call of [`TxMux::next_block`].
/// A memory unit (a message's blocks, or one /N/ or /G/) is never split; a
/// frame may be preempted between any two blocks; a new frame starts only
/// after the inter-frame gap, whose slots memory units may use. At least one
/// block in every IDLE_PERIOD_BLOCKS is an idle, for the receiver's rate
/// matching (frames up to ETH_MAX_FRAME_BYTES).
#[derive(Clone, Debug)]
pub struct TxMux {
    policy: Policy,
    frames: VecDeque<Vec<Block>>,
    units: VecDeque<Vec<Block>>,
    /// Blocks of the head frame / head unit already sent.
    frame_sent: usize,
    unit_sent: usize,
    /// First slot in which a new frame may start (after the previous frame's gap).
    frame_start_slot: u64,
    slot: u64,
    /// The previous slot ended a memory unit (the fair policy then owes a frame block).
    unit_just_ended: bool,
    /// Blocks sent since the last idle.
    since_idle: u64,
}

impl TxMux {
    /// An empty multiplexer at slot 0.
    pub fn new(policy: Policy) -> Self {
        TxMux {
            policy,
            frames: VecDeque::new(),
            units: VecDeque::new(),
            frame_sent: 0,
            unit_sent: 0,
            frame_start_slot: 0,
            slot: 0,
            unit_just_ended: false,
            since_idle: 0,
        }
    }

    /// Queues a frame's blocks (from [`crate::pcs::encode_frame`]).
    pub fn push_frame(&mut self, blocks: Vec<Block>) {
        if !blocks.is_empty() {
            self.frames.push_back(blocks);
        }
    }

    /// Queues a memory unit: a message's blocks, or a single /N/ or /G/.
    pub fn push_unit(&mut self, blocks: Vec<Block>) {
        if !blocks.is_empty() {
            self.units.push_back(blocks);
        }
    }

    /// Nothing queued or in progress.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty() && self.units.is_empty()
    }

    /// The slot the next call fills (slots count from 0).
    pub fn slot(&self) -> u64 {
        self.slot
    }

    /// The block for the current slot (an idle block if nothing may go).
    pub fn next_block(&mut self) -> Block {
        let pace = self.since_idle >= PACE_AFTER_BLOCKS;
        if pace && (self.unit_sent > 0 || self.frame_sent == 0) {
            self.since_idle = 0;
            self.slot += 1;
            return Block::idle();
        }
        let frame_ready =
            !self.frames.is_empty() && (self.frame_sent > 0 || self.slot >= self.frame_start_slot);
        let unit_in_progress = self.unit_sent > 0;
        let take_unit = !pace
            && !self.units.is_empty()
            && (unit_in_progress
                || !frame_ready
                || self.policy == Policy::Strict
                || !self.unit_just_ended);
        self.unit_just_ended = false;
        let block = if take_unit {
            let unit = &self.units[0];
            let block = unit[self.unit_sent];
            self.unit_sent += 1;
            if self.unit_sent == unit.len() {
                self.units.pop_front();
                self.unit_sent = 0;
                self.unit_just_ended = true;
            }
            block
        } else if frame_ready {
            let frame = &self.frames[0];
            let block = frame[self.frame_sent];
            self.frame_sent += 1;
            if self.frame_sent == frame.len() {
                self.frames.pop_front();
                self.frame_sent = 0;
                self.frame_start_slot = self.slot + 1 + gap_blocks_after(block) as u64;
            }
            block
        } else {
            Block::idle()
        };
        self.since_idle = if block == Block::idle() {
            0
        } else {
            self.since_idle + 1
        };
        self.slot += 1;
        block
    }
}

/// The line stream for frames and memory units that arrive at the given block
/// slots (`(arrival, blocks)`, each list served in order), until all are sent.
pub fn tx_mux(
    frames: &[(u64, Vec<Block>)],
    units: &[(u64, Vec<Block>)],
    policy: Policy,
) -> Vec<Block> {
    let mut mux = TxMux::new(policy);
    let (mut next_frame, mut next_unit) = (0, 0);
    let mut line = Vec::new();
    while next_frame < frames.len() || next_unit < units.len() || !mux.is_empty() {
        while next_frame < frames.len() && frames[next_frame].0 <= mux.slot() {
            mux.push_frame(frames[next_frame].1.clone());
            next_frame += 1;
        }
        while next_unit < units.len() && units[next_unit].0 <= mux.slot() {
            mux.push_unit(units[next_unit].1.clone());
            next_unit += 1;
        }
        line.push(mux.next_block());
    }
    line
}

/// A reception error, each with its own counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxError {
    /// A message or /N/ /G/ with a bad CRC or layout, or an aborted message.
    Corrupted,
    /// A control block of unknown type or EDM subtype (including /MST/).
    Unknown,
    /// Sync header 00 or 11.
    BadSync,
    /// A frame that could not be rebuilt or decoded (data without /S/, a
    /// non-frame block inside a frame, a bad /T/ ...).
    BadFrame,
    /// A data block whose payload is the /N/ or /G/ the link expects next: a
    /// control block whose sync header flipped (docs/protocol.md §5a). Never
    /// acted on; dropped like a filler.
    ControlInData,
}

impl RxError {
    /// The counter name: "corrupted", "unknown", "bad_sync" or "frames_bad".
    pub const fn name(self) -> &'static str {
        match self {
            RxError::Corrupted => "corrupted",
            RxError::Unknown => "unknown",
            RxError::BadSync => "bad_sync",
            RxError::BadFrame => "frames_bad",
            RxError::ControlInData => "control_in_data",
        }
    }
}

/// What the demultiplexer delivers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    Message(Message),
    /// An /N/ or a /G/.
    Control(Control),
    /// A frame rebuilt as consecutive blocks (/S/ .. /T/) and its bytes.
    Frame {
        blocks: Vec<Block>,
        bytes: Vec<u8>,
    },
    Error(RxError),
}

/// The receiver's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub messages_ok: u64,
    pub notifications_ok: u64,
    pub grants_ok: u64,
    pub acks_ok: u64,
    pub corrupted: u64,
    pub unknown: u64,
    pub bad_sync: u64,
    pub frames_ok: u64,
    pub frames_bad: u64,
    /// Control sequence numbers never accepted, counted when the receiver
    /// resynchronises: the link's /N/ /G/ blocks lost or rejected (each
    /// rejected one is also in `corrupted`).
    pub control_missed: u64,
    pub control_in_data: u64,
}

impl Counters {
    /// (name, value) of every counter.
    pub fn named(&self) -> [(&'static str, u64); 11] {
        [
            ("messages_ok", self.messages_ok),
            ("notifications_ok", self.notifications_ok),
            ("grants_ok", self.grants_ok),
            ("acks_ok", self.acks_ok),
            (RxError::Corrupted.name(), self.corrupted),
            (RxError::Unknown.name(), self.unknown),
            (RxError::BadSync.name(), self.bad_sync),
            ("frames_ok", self.frames_ok),
            (RxError::BadFrame.name(), self.frames_bad),
            ("control_missed", self.control_missed),
            (RxError::ControlInData.name(), self.control_in_data),
        ]
    }
}

/// The frame being rebuilt.
#[derive(Clone, Debug, PartialEq, Eq)]
enum FrameState {
    None,
    Open(Vec<Block>),
    /// A broken frame's remaining data blocks are dropped until its /T/ (counted once).
    Discarding,
}

/// The streaming RX demultiplexer: feed it the line one block at a time.
#[derive(Clone, Debug)]
pub struct RxDemux {
    /// The message in progress (from its /MS/) and the block count its header announces.
    message: Option<(Vec<Block>, usize)>,
    frame: FrameState,
    /// The link's control-block sequence (docs/protocol.md §5a).
    pub control_rx: ControlRx,
    /// Everything counted so far.
    pub counters: Counters,
}

impl Default for RxDemux {
    fn default() -> Self {
        RxDemux {
            message: None,
            frame: FrameState::None,
            control_rx: ControlRx::default(),
            counters: Counters::default(),
        }
    }
}

impl RxDemux {
    /// A receiver with no message or frame in progress and zero counters.
    pub fn new() -> Self {
        Self::default()
    }

    /// Processes one received block; returns what it completes or breaks.
    pub fn push(&mut self, block: Block) -> Vec<Event> {
        let mut events = Vec::new();
        let class = block.class();
        if class == BlockClass::Data && self.control_rx.is_expected(Block::control(block.payload)) {
            // A control block whose sync header flipped (or data imitating the
            // expected one): counted, never acted on, and dropped like a
            // filler, so the unit or frame it preempted stays whole.
            self.error(RxError::ControlInData, &mut events);
            return events;
        }
        if let Some((buffer, announced)) = &mut self.message {
            match class {
                // A data block beyond the announced /MD/s cannot be one: it aborts.
                BlockClass::Data if buffer.len() < *announced - 1 => {
                    buffer.push(block);
                    return events;
                }
                BlockClass::Idle => return events,
                BlockClass::Notification | BlockClass::Grant | BlockClass::Ack => {
                    self.control(block, &mut events);
                    return events;
                }
                BlockClass::MessageTerminate => {
                    buffer.push(block);
                    match decode(buffer) {
                        Ok(message) => {
                            self.counters.messages_ok += 1;
                            events.push(Event::Message(message));
                        }
                        Err(_) => self.error(RxError::Corrupted, &mut events),
                    }
                    self.message = None;
                    return events;
                }
                // Anything else aborts the message and is then processed normally.
                _ => {
                    self.message = None;
                    self.error(RxError::Corrupted, &mut events);
                }
            }
        }
        match class {
            BlockClass::BadSync => {
                self.error(RxError::BadSync, &mut events);
                if let FrameState::Open(_) = self.frame {
                    self.break_frame(&mut events);
                }
            }
            BlockClass::Data => match &mut self.frame {
                FrameState::Open(blocks) => blocks.push(block),
                FrameState::Discarding => {}
                FrameState::None => self.break_frame(&mut events),
            },
            BlockClass::MessageStart => match blocks_announced(block) {
                Ok(announced) => self.message = Some((vec![block], announced)),
                Err(_) => self.error(RxError::Corrupted, &mut events),
            },
            BlockClass::MessageTerminate => self.error(RxError::Corrupted, &mut events),
            BlockClass::Notification | BlockClass::Grant | BlockClass::Ack => {
                self.control(block, &mut events)
            }
            BlockClass::Unknown => self.error(RxError::Unknown, &mut events),
            // Not a frame block: it ends a frame in progress, broken.
            BlockClass::Idle | BlockClass::OtherStandard => {
                if let FrameState::Open(_) = self.frame {
                    self.error(RxError::BadFrame, &mut events);
                }
                self.frame = FrameState::None;
            }
            BlockClass::FrameStart => {
                if let FrameState::Open(_) = self.frame {
                    self.break_frame(&mut events);
                }
                self.frame = FrameState::Open(vec![block]);
            }
            BlockClass::FrameTerminate => {
                match std::mem::replace(&mut self.frame, FrameState::None) {
                    FrameState::Open(mut blocks) => {
                        blocks.push(block);
                        match decode_frame(&blocks) {
                            Ok(bytes) => {
                                self.counters.frames_ok += 1;
                                events.push(Event::Frame { blocks, bytes });
                            }
                            Err(_) => self.error(RxError::BadFrame, &mut events),
                        }
                    }
                    FrameState::Discarding => {}
                    FrameState::None => self.error(RxError::BadFrame, &mut events),
                }
            }
        }
        events
    }

    fn control(&mut self, block: Block, events: &mut Vec<Event>) {
        let checked = self.control_rx.check(block);
        self.counters.control_missed = self.control_rx.missed;
        match checked {
            Ok(control) => {
                match control.kind {
                    ControlKind::Notification => self.counters.notifications_ok += 1,
                    ControlKind::Grant => self.counters.grants_ok += 1,
                    ControlKind::Ack => self.counters.acks_ok += 1,
                }
                events.push(Event::Control(control));
            }
            Err(_) => self.error(RxError::Corrupted, events),
        }
    }

    /// Drops the frame in progress (or a stray frame block) and its remaining
    /// data blocks, counting it once.
    fn break_frame(&mut self, events: &mut Vec<Event>) {
        self.error(RxError::BadFrame, events);
        self.frame = FrameState::Discarding;
    }

    fn error(&mut self, error: RxError, events: &mut Vec<Event>) {
        let counter = match error {
            RxError::Corrupted => &mut self.counters.corrupted,
            RxError::Unknown => &mut self.counters.unknown,
            RxError::BadSync => &mut self.counters.bad_sync,
            RxError::BadFrame => &mut self.counters.frames_bad,
            RxError::ControlInData => &mut self.counters.control_in_data,
        };
        *counter += 1;
        events.push(Event::Error(error));
    }
}
