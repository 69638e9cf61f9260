//! Standard IEEE 802.3 Clause 49 64b/66b coding between XGMII words and blocks,
//! Ethernet frame encoding, the inter-frame gap, and the x^58+x^39+1 scrambler.
//!
//! An XGMII word here is one 8-lane transfer `(data, ctrl)`: lane i is data
//! bits [8i+7:8i], and ctrl bit i marks lane i as a control character.
use crate::block::Block;
use crate::spec::*;
use std::fmt;
use std::ops::Range;

/// An 8-lane XGMII transfer: (data, ctrl).
pub type XgmiiWord = (u64, u8);

/// Preamble bytes after /S/ and before the SFD (the /S/ itself replaces the first).
const PREAMBLE_DATA_LANES: usize = ETH_PREAMBLE_BYTES as usize - 2;
/// /T/ block types by the number of data bytes before the terminate (lane of /T/).
const TERMINATE_TYPES: [u8; 8] = [BT_T0, BT_T1, BT_T2, BT_T3, BT_T4, BT_T5, BT_T6, BT_T7];
const LANES: usize = 8;

/// Why words or blocks could not be coded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PcsError {
    /// No Clause 49 block encodes this XGMII word (the standard encoder sends
    /// an error block instead).
    Unencodable { data: u64, ctrl: u8 },
    /// The block at `index` is not a valid standard block (bad sync, unknown
    /// type, unsupported control code, or non-zero padding).
    InvalidBlock { index: usize, block: Block },
    /// A frame's blocks do not begin with /S/ (idles may precede it in lanes 0..3).
    FrameNoStart,
    /// The 7 bytes after /S/ are not the preamble and SFD.
    FrameBadPreamble,
    /// A control character other than /T/ inside the frame, at lane `lane` of the sequence.
    FrameControlInData { lane: usize },
    /// The blocks end before /T/.
    FrameNoTerminate,
    /// Blocks after the one holding /T/, or non-idle characters after /T/.
    FrameTrailing,
}

impl fmt::Display for PcsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PcsError::Unencodable { data, ctrl } => {
                write!(
                    f,
                    "XGMII word data=0x{data:016x} ctrl=0x{ctrl:02x} has no 64b/66b encoding"
                )
            }
            PcsError::InvalidBlock { index, block } => write!(
                f,
                "block {index} (sync {}, payload 0x{:016x}) is not a valid standard block",
                block.sync, block.payload
            ),
            PcsError::FrameNoStart => write!(f, "frame does not begin with /S/"),
            PcsError::FrameBadPreamble => write!(f, "frame preamble/SFD is wrong"),
            PcsError::FrameControlInData { lane } => {
                write!(f, "control character inside frame at lane {lane}")
            }
            PcsError::FrameNoTerminate => write!(f, "frame has no /T/"),
            PcsError::FrameTrailing => write!(f, "blocks or non-idle characters after /T/"),
        }
    }
}

impl std::error::Error for PcsError {}

const fn bits(p: u64, lsb: usize, width: usize) -> u64 {
    if width == 0 {
        return 0; // T7 has no padding, which would sit at bit 64
    }
    (p >> lsb) & ((1u64 << width) - 1)
}

/// The 7-bit block code of an XGMII control character (idle or error).
fn control_code(xgmii: u8) -> Option<u64> {
    match xgmii {
        XGMII_IDLE => Some(CTRL_IDLE as u64),
        XGMII_ERROR => Some(CTRL_ERROR as u64),
        _ => None,
    }
}

fn xgmii_control(code: u64) -> Option<u8> {
    match code as u8 {
        CTRL_IDLE => Some(XGMII_IDLE),
        CTRL_ERROR => Some(XGMII_ERROR),
        _ => None,
    }
}

fn ordered_set_code(xgmii: u8) -> Option<u64> {
    (xgmii == XGMII_SEQ).then_some(O_CODE_SEQ as u64)
}

/// XGMII ctrl masks of the word shapes that have a control block.
const CTRL_LANE_0: u8 = 0x01;
const CTRL_LANES_0_TO_4: u8 = 0x1F;
const CTRL_LANES_0_AND_4: u8 = 0x11;
const CTRL_LANES_0_AND_4_TO_7: u8 = 0xF1;
const CTRL_ALL: u8 = 0xFF;
/// Field positions in control-block payloads (figure 49-7): the first 7-bit
/// code after the type byte; O0 after D1..D3; the lane-4 field (O4, the zero
/// nibble before S4, or the codes C4..C7).
const CODES_LSB: usize = 8;
const O0_LSB: usize = 32;
const LANE4_LSB: usize = 36;

/// /T/ in lane k: k data bytes (lane i in payload byte i+1), 7-k zero bits,
/// then the codes of lanes k+1..7 from this bit.
const fn terminate_codes_lsb(k: usize) -> usize {
    8 + 8 * k + (7 - k)
}

/// The control-block payload of a word with control lanes, if it has one.
fn control_payload(data: u64, ctrl: u8) -> Option<u64> {
    let lane = |i: usize| (data >> (8 * i)) as u8;
    let data_lanes =
        |lanes: Range<usize>| lanes.fold(0, |acc, i| acc | (lane(i) as u64) << (8 * i));
    // The 7-bit codes of control lanes `lanes`, the first at bit `lsb`.
    let codes = |lanes: Range<usize>, lsb: usize| {
        lanes.enumerate().try_fold(0, |acc, (n, i)| {
            Some(acc | control_code(lane(i))? << (lsb + 7 * n))
        })
    };
    let o_code = |i: usize, lsb: usize| ordered_set_code(lane(i)).map(|o| o << lsb);
    if let Some(k) = (0..LANES).find(|&k| ctrl == CTRL_ALL << k && lane(k) == XGMII_TERM) {
        return Some(
            TERMINATE_TYPES[k] as u64
                | data_lanes(0..k) << 8
                | codes(k + 1..LANES, terminate_codes_lsb(k))?,
        );
    }
    let payload = match (ctrl, lane(0), lane(4)) {
        (CTRL_ALL, _, _) => BT_C8 as u64 | codes(0..LANES, CODES_LSB)?,
        (CTRL_LANE_0, XGMII_START, _) => BT_S0 as u64 | data_lanes(1..LANES),
        (CTRL_LANES_0_TO_4, _, XGMII_START) => {
            BT_C4_S4 as u64 | codes(0..4, CODES_LSB)? | data_lanes(5..8)
        }
        (CTRL_LANES_0_TO_4, _, _) => {
            BT_C4_O4 as u64 | codes(0..4, CODES_LSB)? | o_code(4, LANE4_LSB)? | data_lanes(5..8)
        }
        (CTRL_LANES_0_AND_4, _, XGMII_START) => {
            BT_O0_S4 as u64 | data_lanes(1..4) | o_code(0, O0_LSB)? | data_lanes(5..8)
        }
        (CTRL_LANES_0_AND_4, _, _) => {
            BT_O0_O4 as u64
                | data_lanes(1..4)
                | o_code(0, O0_LSB)?
                | o_code(4, LANE4_LSB)?
                | data_lanes(5..8)
        }
        (CTRL_LANES_0_AND_4_TO_7, _, _) => {
            BT_O0_C4 as u64 | data_lanes(1..4) | o_code(0, O0_LSB)? | codes(4..8, LANE4_LSB)?
        }
        _ => return None,
    };
    Some(payload)
}

/// The two Clause 46 link faults a sequence ordered set reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkFault {
    Local,
    Remote,
}

impl LinkFault {
    /// Lanes 1..3 of its sequence ordered set (lane 1 in bits 7:0).
    pub const fn lanes(self) -> u32 {
        match self {
            LinkFault::Local => SEQ_LOCAL_FAULT,
            LinkFault::Remote => SEQ_REMOTE_FAULT,
        }
    }
}

/// The XGMII word a reconciliation sublayer sends while it signals `fault`:
/// the fault sequence in both columns (lanes 0..3 and 4..7), an O0/O4 block.
pub const fn fault_word(fault: LinkFault) -> XgmiiWord {
    let column = XGMII_SEQ as u64 | (fault.lanes() as u64) << 8;
    (column | column << 32, CTRL_LANES_0_AND_4)
}

/// The fault sequence in column `c` (0: lanes 0..3, 1: lanes 4..7) of a
/// word, if that column is one: /Q/ in its first lane, data in the other three.
pub fn column_fault((data, ctrl): XgmiiWord, c: usize) -> Option<LinkFault> {
    let column = (data >> (32 * c)) as u32;
    if (ctrl >> (4 * c)) & 0xF != 0x1 || column as u8 != XGMII_SEQ {
        return None;
    }
    match column >> 8 {
        SEQ_LOCAL_FAULT => Some(LinkFault::Local),
        SEQ_REMOTE_FAULT => Some(LinkFault::Remote),
        _ => None,
    }
}

/// Encodes one XGMII word as a block.
pub fn encode_word((data, ctrl): XgmiiWord) -> Result<Block, PcsError> {
    if ctrl == 0 {
        return Ok(Block::data(data));
    }
    control_payload(data, ctrl)
        .map(Block::control)
        .ok_or(PcsError::Unencodable { data, ctrl })
}

/// Builds an XGMII word lane by lane.
#[derive(Default)]
struct WordBuilder {
    data: u64,
    ctrl: u8,
}

impl WordBuilder {
    fn data(&mut self, lane: usize, byte: u64) {
        self.data |= byte << (8 * lane);
    }

    fn control(&mut self, lane: usize, xgmii: u8) {
        self.data(lane, xgmii as u64);
        self.ctrl |= 1 << lane;
    }
}

/// Decodes one block to its XGMII word; `None` if it is not a valid standard block.
fn decode_one(block: Block) -> Option<XgmiiWord> {
    if block.is_data() {
        return Some((block.payload, 0));
    }
    if !block.is_control() {
        return None;
    }
    let p = block.payload;
    let mut w = WordBuilder::default();
    // Data lanes i in `lanes` from payload byte i (every format but /T/).
    let same_bytes =
        |w: &mut WordBuilder, lanes: Range<usize>| lanes.for_each(|i| w.data(i, bits(p, 8 * i, 8)));
    let codes = |w: &mut WordBuilder, lanes: Range<usize>, lsb: usize| {
        lanes.enumerate().try_for_each(|(n, i)| {
            w.control(i, xgmii_control(bits(p, lsb + 7 * n, 7))?);
            Some(())
        })
    };
    let ordered_set = |lsb: usize| (bits(p, lsb, 4) == O_CODE_SEQ as u64).then_some(XGMII_SEQ);
    let start_after_zero_nibble = || (bits(p, LANE4_LSB, 4) == 0).then_some(XGMII_START);
    match block.block_type() {
        BT_C8 => codes(&mut w, 0..LANES, CODES_LSB)?,
        BT_S0 => {
            w.control(0, XGMII_START);
            same_bytes(&mut w, 1..LANES);
        }
        BT_C4_S4 | BT_C4_O4 => {
            codes(&mut w, 0..4, CODES_LSB)?;
            let lane4 = if block.block_type() == BT_C4_S4 {
                start_after_zero_nibble()?
            } else {
                ordered_set(LANE4_LSB)?
            };
            w.control(4, lane4);
            same_bytes(&mut w, 5..8);
        }
        BT_O0_S4 | BT_O0_O4 => {
            w.control(0, ordered_set(O0_LSB)?);
            same_bytes(&mut w, 1..4);
            let lane4 = if block.block_type() == BT_O0_S4 {
                start_after_zero_nibble()?
            } else {
                ordered_set(LANE4_LSB)?
            };
            w.control(4, lane4);
            same_bytes(&mut w, 5..8);
        }
        BT_O0_C4 => {
            w.control(0, ordered_set(O0_LSB)?);
            same_bytes(&mut w, 1..4);
            codes(&mut w, 4..LANES, LANE4_LSB)?;
        }
        t => {
            let k = TERMINATE_TYPES.iter().position(|&bt| bt == t)?;
            (0..k).for_each(|i| w.data(i, bits(p, 8 * (i + 1), 8)));
            (bits(p, 8 + 8 * k, 7 - k) == 0).then_some(())?;
            w.control(k, XGMII_TERM);
            codes(&mut w, k + 1..LANES, terminate_codes_lsb(k))?;
        }
    }
    Some((w.data, w.ctrl))
}

/// Decodes one block to its XGMII word.
pub fn decode_block(block: Block) -> Result<XgmiiWord, PcsError> {
    decode_one(block).ok_or(PcsError::InvalidBlock { index: 0, block })
}

/// Encodes a sequence of XGMII words (stateless per word).
pub fn xgmii_encode(words: &[XgmiiWord]) -> Result<Vec<Block>, PcsError> {
    words.iter().map(|&w| encode_word(w)).collect()
}

/// Decodes a sequence of blocks to XGMII words.
pub fn xgmii_decode(blocks: &[Block]) -> Result<Vec<XgmiiWord>, PcsError> {
    blocks
        .iter()
        .enumerate()
        .map(|(index, &block)| decode_one(block).ok_or(PcsError::InvalidBlock { index, block }))
        .collect()
}

/// The blocks of one Ethernet frame (`frame` = destination address .. FCS):
/// /S/ in lane 0, preamble and SFD, the bytes, /T/, idles to the block end.
pub fn encode_frame(frame: &[u8]) -> Vec<Block> {
    let mut lanes: Vec<(bool, u8)> = Vec::with_capacity(frame.len() + 2 * LANES);
    lanes.push((true, XGMII_START));
    lanes.extend(std::iter::repeat_n(
        (false, ETH_PREAMBLE_BYTE),
        PREAMBLE_DATA_LANES,
    ));
    lanes.push((false, ETH_SFD_BYTE));
    lanes.extend(frame.iter().map(|&b| (false, b)));
    lanes.push((true, XGMII_TERM));
    while !lanes.len().is_multiple_of(LANES) {
        lanes.push((true, XGMII_IDLE));
    }
    lanes
        .chunks(LANES)
        .map(|word| {
            let (data, ctrl) = word
                .iter()
                .enumerate()
                .fold((0u64, 0u8), |(d, c), (i, &(is_ctrl, b))| {
                    (d | (b as u64) << (8 * i), c | (is_ctrl as u8) << i)
                });
            encode_word((data, ctrl)).expect("a frame's words are always encodable")
        })
        .collect()
}

/// The frame bytes carried by exactly one frame's consecutive blocks (/S/ .. /T/).
pub fn decode_frame(blocks: &[Block]) -> Result<Vec<u8>, PcsError> {
    let lanes: Vec<(bool, u8)> = xgmii_decode(blocks)?
        .into_iter()
        .flat_map(|(data, ctrl)| {
            (0..LANES).map(move |i| (ctrl >> i & 1 == 1, (data >> (8 * i)) as u8))
        })
        .collect();
    let start = lanes
        .iter()
        .position(|&l| l != (true, XGMII_IDLE))
        .ok_or(PcsError::FrameNoStart)?;
    if start >= LANES || lanes[start] != (true, XGMII_START) {
        return Err(PcsError::FrameNoStart);
    }
    let body = &lanes[start + 1..];
    let preamble_ok = body.len() > PREAMBLE_DATA_LANES
        && body[..PREAMBLE_DATA_LANES]
            .iter()
            .all(|&l| l == (false, ETH_PREAMBLE_BYTE))
        && body[PREAMBLE_DATA_LANES] == (false, ETH_SFD_BYTE);
    if !preamble_ok {
        return Err(PcsError::FrameBadPreamble);
    }
    let data_at = start + 1 + PREAMBLE_DATA_LANES + 1;
    let end = lanes[data_at..]
        .iter()
        .position(|&(c, _)| c)
        .map(|n| data_at + n)
        .ok_or(PcsError::FrameNoTerminate)?;
    if lanes[end] != (true, XGMII_TERM) {
        return Err(PcsError::FrameControlInData { lane: end });
    }
    if lanes.len() - end > LANES || lanes[end + 1..].iter().any(|&l| l != (true, XGMII_IDLE)) {
        return Err(PcsError::FrameTrailing);
    }
    Ok(lanes[data_at..end].iter().map(|&(_, b)| b).collect())
}

/// Whole idle blocks needed after a frame's /T/ block so that the gap to the
/// next /S/ (which starts in lane 0) is at least ETH_IFG_BYTES; 0 for other blocks.
pub fn gap_blocks_after(terminate: Block) -> usize {
    let Some(k) = TERMINATE_TYPES
        .iter()
        .position(|&t| terminate.is_control() && t == terminate.block_type())
    else {
        return 0;
    };
    let idles_in_block = LANES - 1 - k;
    (ETH_IFG_BYTES as usize)
        .saturating_sub(idles_in_block)
        .div_ceil(LANES)
}

/// Degree and inner tap of the scrambler polynomial x^58 + x^39 + 1.
pub const SCRAMBLER_STATE_BITS: u32 = 58;
const SCRAMBLER_TAP: u32 = 39;
const SCRAMBLER_MASK: u64 = (1 << SCRAMBLER_STATE_BITS) - 1;

/// One step of the shift register, shared by both directions: `state` bit i
/// is the scrambled bit sent i+1 bits ago.
fn feedback(state: u64) -> u64 {
    (state >> (SCRAMBLER_TAP - 1) ^ state >> (SCRAMBLER_STATE_BITS - 1)) & 1
}

/// The self-synchronizing transmit scrambler (payload only, bit 0 first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scrambler {
    /// The last 58 scrambled bits; bit i was sent i+1 bits ago.
    pub state: u64,
}

/// The receive descrambler; it locks to any sender after 58 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Descrambler {
    /// The last 58 received bits; bit i arrived i+1 bits ago.
    pub state: u64,
}

impl Default for Scrambler {
    fn default() -> Self {
        Scrambler {
            state: SCRAMBLER_MASK,
        }
    }
}

impl Default for Descrambler {
    fn default() -> Self {
        Descrambler {
            state: SCRAMBLER_MASK,
        }
    }
}

impl Scrambler {
    /// A scrambler with the given 58-bit state (higher bits ignored).
    pub fn new(state: u64) -> Self {
        Scrambler {
            state: state & SCRAMBLER_MASK,
        }
    }

    /// Scrambles one block payload (the sync header is never scrambled).
    pub fn scramble(&mut self, payload: u64) -> u64 {
        let mut out = 0;
        for i in 0..PAYLOAD_BITS {
            let bit = (payload >> i & 1) ^ feedback(self.state);
            self.state = (self.state << 1 | bit) & SCRAMBLER_MASK;
            out |= bit << i;
        }
        out
    }
}

impl Descrambler {
    /// A descrambler with the given 58-bit state (higher bits ignored).
    pub fn new(state: u64) -> Self {
        Descrambler {
            state: state & SCRAMBLER_MASK,
        }
    }

    /// Descrambles one received block payload.
    pub fn descramble(&mut self, payload: u64) -> u64 {
        let mut out = 0;
        for i in 0..PAYLOAD_BITS {
            let bit = payload >> i & 1;
            out |= (bit ^ feedback(self.state)) << i;
            self.state = (self.state << 1 | bit) & SCRAMBLER_MASK;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(lanes: [(bool, u8); 8]) -> XgmiiWord {
        lanes
            .iter()
            .enumerate()
            .fold((0, 0), |(d, c), (i, &(is_c, b))| {
                (d | (b as u64) << (8 * i), c | (is_c as u8) << i)
            })
    }
    const I: (bool, u8) = (true, XGMII_IDLE);
    const E: (bool, u8) = (true, XGMII_ERROR);
    const S: (bool, u8) = (true, XGMII_START);
    const T: (bool, u8) = (true, XGMII_TERM);
    const Q: (bool, u8) = (true, XGMII_SEQ);
    const fn d(b: u8) -> (bool, u8) {
        (false, b)
    }

    #[test]
    fn known_blocks() {
        assert_eq!(encode_word(word([I; 8])), Ok(Block::idle()));
        // Error C8: every 7-bit code 0x1E.
        let e = encode_word(word([E; 8])).unwrap();
        assert_eq!(
            e.payload,
            (0..8).fold(BT_C8 as u64, |p, i| p | (CTRL_ERROR as u64) << (8 + 7 * i))
        );
        let s0 = encode_word(word([S, d(1), d(2), d(3), d(4), d(5), d(6), d(7)])).unwrap();
        assert_eq!(s0, Block::control(0x0706_0504_0302_0100 | BT_S0 as u64));
        // T3: three data bytes, 4 zero bits, then C4..C7 (idle = 0).
        let t3 = encode_word(word([d(0xA), d(0xB), d(0xC), T, I, I, I, I])).unwrap();
        assert_eq!(t3, Block::control(0x0C_0B_0A_00 | BT_T3 as u64));
        let t0 = encode_word(word([T, E, I, I, I, I, I, I])).unwrap();
        assert_eq!(t0.payload, BT_T0 as u64 | (CTRL_ERROR as u64) << 15);
    }

    #[test]
    fn every_block_format_round_trips() {
        let mut words = vec![
            word([I; 8]),
            word([E, I, E, I, E, I, E, I]),
            word([S, d(1), d(2), d(3), d(4), d(5), d(6), d(7)]),
            word([I, I, I, I, S, d(5), d(6), d(7)]),
            word([I, E, I, I, Q, d(5), d(6), d(7)]),
            word([Q, d(1), d(2), d(3), S, d(5), d(6), d(7)]),
            word([Q, d(1), d(2), d(3), Q, d(5), d(6), d(7)]),
            word([Q, d(1), d(2), d(3), I, I, E, I]),
            (0x0123_4567_89AB_CDEF, 0),
        ];
        for k in 0..8 {
            let mut lanes = [I; 8];
            for (i, lane) in lanes.iter_mut().enumerate().take(k) {
                *lane = d(0x10 + i as u8);
            }
            lanes[k] = T;
            words.push(word(lanes));
        }
        let blocks = xgmii_encode(&words).unwrap();
        let mut types: Vec<u8> = blocks
            .iter()
            .filter(|b| b.is_control())
            .map(|b| b.block_type())
            .collect();
        types.sort();
        types.dedup();
        assert_eq!(
            types.len(),
            STANDARD_BLOCK_TYPES.len(),
            "all 15 standard types are exercised"
        );
        assert_eq!(xgmii_decode(&blocks), Ok(words));
    }

    #[test]
    fn fault_sequences_are_ordered_set_blocks() {
        // Figure 49-7: O0/O4 (0x55) with D1..D3 in bytes 1..3, both O codes
        // 0 (sequence), D5..D7 in bytes 5..7.
        for (fault, lane3) in [(LinkFault::Local, 0x01u64), (LinkFault::Remote, 0x02)] {
            let word = fault_word(fault);
            let block = encode_word(word).unwrap();
            assert_eq!(
                block,
                Block::control(BT_O0_O4 as u64 | lane3 << 24 | lane3 << 56)
            );
            assert_eq!(decode_block(block), Ok(word));
            assert_eq!(column_fault(word, 0), Some(fault));
            assert_eq!(column_fault(word, 1), Some(fault));
        }
        // A fault column beside idles (0x4B, 0x2D) and before a start (0x66).
        let lf = [Q, d(0), d(0), d(1)];
        let w = word([lf[0], lf[1], lf[2], lf[3], I, I, I, I]);
        assert_eq!(encode_word(w).unwrap().block_type(), BT_O0_C4);
        assert_eq!(
            (column_fault(w, 0), column_fault(w, 1)),
            (Some(LinkFault::Local), None)
        );
        let w = word([I, I, I, I, Q, d(0), d(0), d(2)]);
        assert_eq!(encode_word(w).unwrap().block_type(), BT_C4_O4);
        assert_eq!(column_fault(w, 1), Some(LinkFault::Remote));
        let w = word([lf[0], lf[1], lf[2], lf[3], S, d(0x55), d(0x55), d(0x55)]);
        assert_eq!(encode_word(w).unwrap().block_type(), BT_O0_S4);
        // Other sequence data is an ordered set but no fault.
        assert_eq!(
            column_fault(word([Q, d(0), d(0), d(3), I, I, I, I]), 0),
            None
        );
    }

    #[test]
    fn invalid_input_is_reported() {
        assert!(matches!(
            encode_word(word([d(1), S, I, I, I, I, I, I])),
            Err(PcsError::Unencodable { .. })
        ));
        assert!(encode_word(word([T, d(1), I, I, I, I, I, I])).is_err());
        assert!(encode_word(word([(true, 0x5C), I, I, I, I, I, I, I])).is_err());
        assert!(decode_block(Block::edm(SUB_MS, 0)).is_err());
        assert!(decode_block(Block {
            sync: 0,
            payload: 0
        })
        .is_err());
        // Non-zero padding bits of T0.
        assert!(decode_block(Block::control(BT_T0 as u64 | 1 << 8)).is_err());
        // A 7-bit code that is neither idle nor error.
        assert!(decode_block(Block::control(BT_C8 as u64 | 0x2C << 8)).is_err());
    }

    #[test]
    fn frames_round_trip_for_every_terminate_lane() {
        for len in 60..=72 {
            let frame: Vec<u8> = (0..len as u8).collect();
            let blocks = encode_frame(&frame);
            assert_eq!(blocks.len(), (len + 8 + 1usize).div_ceil(8));
            assert_eq!(blocks[0].block_type(), BT_S0);
            assert_eq!(decode_frame(&blocks), Ok(frame));
        }
    }

    #[test]
    fn frame_starting_in_lane_4_decodes() {
        let words = [
            word([I, I, I, I, S, d(0x55), d(0x55), d(0x55)]),
            word([
                d(0x55),
                d(0x55),
                d(0x55),
                d(ETH_SFD_BYTE),
                d(1),
                d(2),
                d(3),
                d(4),
            ]),
            word([d(5), T, I, I, I, I, I, I]),
        ];
        assert_eq!(
            decode_frame(&xgmii_encode(&words).unwrap()),
            Ok(vec![1, 2, 3, 4, 5])
        );
    }

    #[test]
    fn gap_after_terminate() {
        // T7 leaves no idle in its block: 12 bytes = 2 blocks; T0 leaves 7: 1 block.
        assert_eq!(gap_blocks_after(Block::control(BT_T7 as u64)), 2);
        assert_eq!(gap_blocks_after(Block::control(BT_T0 as u64)), 1);
        assert_eq!(gap_blocks_after(Block::data(BT_T0 as u64)), 0);
    }
}
