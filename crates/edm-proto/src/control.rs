//! /N/ (demand notification), /G/ (grant) and /A/ (write acknowledgement,
//! docs/protocol.md §4b, /N/'s layout): single control blocks with a
//! CRC-8 that starts from the link's control sequence number (docs/protocol.md
//! §5a): a block checks only as the control block its receiver expects next on
//! its link, so data bytes that copy a valid block, a replayed block or one
//! from another link do not, and a lost block shows as a gap in the numbers.
use crate::block::Block;
use crate::crc::{crc8, crc8_from, crc8_shift};
use crate::spec::*;
use std::fmt;

/// Which of the single-block control messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ControlKind {
    Notification,
    Grant,
    /// A memory node's acknowledgement: `dst` is the peer (the requester on
    /// the memory node's uplink, the memory node on the requester's
    /// downlink), `msg_id` the base id, `size` the map of ids applied (bit k:
    /// id base + k, modulo 2^NG_ID_W).
    Ack,
}

impl ControlKind {
    /// SUB_N, SUB_G or SUB_A.
    pub const fn subtype(self) -> u8 {
        match self {
            ControlKind::Notification => SUB_N,
            ControlKind::Grant => SUB_G,
            ControlKind::Ack => SUB_A,
        }
    }

    /// "N", "G" or "A".
    pub const fn name(self) -> &'static str {
        match self {
            ControlKind::Notification => "N",
            ControlKind::Grant => "G",
            ControlKind::Ack => "A",
        }
    }

    /// Every kind.
    pub const ALL: [ControlKind; 3] = [
        ControlKind::Notification,
        ControlKind::Grant,
        ControlKind::Ack,
    ];
}

/// An /N/ or /G/. /N/: `size` = message bytes to send to `dst`; /G/: the
/// receiver may now send `size` bytes of its message (`dst`, `msg_id`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Control {
    pub kind: ControlKind,
    pub dst: u16,
    pub msg_id: u8,
    pub size: u16,
}

/// Why a block is not a valid /N/ or /G/, or a [`Control`] cannot be encoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ControlError {
    /// Not a control block of type BT_EDM with subtype SUB_N, SUB_G or SUB_A.
    NotNotificationOrGrant,
    /// `dst` does not fit NG_DST_W bits.
    DstTooWide(u16),
    /// Payload bits between the size and the CRC are not zero.
    NonZeroReserved,
    BadCrc {
        expected: u8,
        found: u8,
    },
    /// The CRC-8 checks for sequence number `implied`, not the `expected` one:
    /// a corrupted block, or one out of sequence (after a lost control block).
    OutOfSequence {
        expected: u8,
        implied: u8,
    },
}

impl fmt::Display for ControlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ControlError::NotNotificationOrGrant => write!(f, "not an /N/, /G/ or /A/ block"),
            ControlError::DstTooWide(d) => write!(f, "dst = {d} does not fit in {NG_DST_W} bits"),
            ControlError::NonZeroReserved => write!(f, "reserved bits are not zero"),
            ControlError::BadCrc { expected, found } => {
                write!(
                    f,
                    "CRC-8 mismatch: computed 0x{expected:02x}, received 0x{found:02x}"
                )
            }
            ControlError::OutOfSequence { expected, implied } => write!(
                f,
                "CRC-8 checks for control block {implied} of the link, not the expected {expected} \
                 (corrupted, or out of sequence)"
            ),
        }
    }
}

impl std::error::Error for ControlError {}

const CRC_COVERED_BYTES: usize = (NG_CRC_LSB / 8) as usize;
const FIELDS_END: u32 = NG_SIZE_LSB + NG_SIZE_W;

/// The CRC-8 of the block with sequence number `seq`.
fn crc_of(payload: u64, seq: u8) -> u8 {
    crc8_from(seq, &payload.to_le_bytes()[..CRC_COVERED_BYTES])
}

/// The block for an /N/ or /G/, number `seq` of its link.
pub fn encode_control(c: &Control, seq: u8) -> Result<Block, ControlError> {
    if c.dst >> NG_DST_W != 0 {
        return Err(ControlError::DstTooWide(c.dst));
    }
    let fields = (c.dst as u64) << NG_DST_LSB
        | (c.msg_id as u64) << NG_ID_LSB
        | (c.size as u64) << NG_SIZE_LSB;
    let without_crc = Block::edm(c.kind.subtype(), fields).payload;
    Ok(Block::control(
        without_crc | (crc_of(without_crc, seq) as u64) << NG_CRC_LSB,
    ))
}

/// The kind of an /N/ or /G/ block whose reserved bits are zero (no CRC check).
fn layout(block: Block) -> Result<ControlKind, ControlError> {
    let kind = if block.is_edm(SUB_N) {
        ControlKind::Notification
    } else if block.is_edm(SUB_G) {
        ControlKind::Grant
    } else if block.is_edm(SUB_A) {
        ControlKind::Ack
    } else {
        return Err(ControlError::NotNotificationOrGrant);
    };
    if (block.payload >> FIELDS_END) & ((1 << (NG_CRC_LSB - FIELDS_END)) - 1) != 0 {
        return Err(ControlError::NonZeroReserved);
    }
    Ok(kind)
}

fn fields(kind: ControlKind, p: u64) -> Control {
    let field = |lsb: u32, w: u32| (p >> lsb) & ((1 << w) - 1);
    Control {
        kind,
        dst: field(NG_DST_LSB, NG_DST_W) as u16,
        msg_id: field(NG_ID_LSB, NG_ID_W) as u8,
        size: field(NG_SIZE_LSB, NG_SIZE_W) as u16,
    }
}

/// The sequence number for which the block's CRC-8 checks (one for every
/// block: the CRC's start value moves it by a shift, which
/// CTL_SEQ_INV_SHIFT more zero bits undo).
pub fn implied_seq(block: Block) -> u8 {
    let p = block.payload;
    let moved = (p >> NG_CRC_LSB) as u8 ^ crc8(&p.to_le_bytes()[..CRC_COVERED_BYTES]);
    crc8_shift(moved, CTL_SEQ_INV_SHIFT)
}

/// Decodes an /N/ or /G/ block that is number `seq` of its link, checking the
/// reserved bits and the CRC-8.
pub fn decode_control(block: Block, seq: u8) -> Result<Control, ControlError> {
    let kind = layout(block)?;
    let p = block.payload;
    let found = (p >> NG_CRC_LSB) as u8;
    let expected = crc_of(p, seq);
    if found != expected {
        return Err(ControlError::BadCrc { expected, found });
    }
    Ok(fields(kind, p))
}

impl Control {
    /// The /A/ a memory node sends `peer` (or the switch forwards, naming
    /// the memory node) saying which of the ids `base` .. `base` + 15 it applied.
    pub const fn ack(peer: u16, base: u8, applied: u16) -> Control {
        Control {
            kind: ControlKind::Ack,
            dst: peer,
            msg_id: base,
            size: applied,
        }
    }

    /// An /A/'s ids applied, in map order (empty for /N/ and /G/).
    pub fn acked_ids(&self) -> Vec<u8> {
        if self.kind != ControlKind::Ack {
            return Vec::new();
        }
        (0..ACK_MAP_W as u8)
            .filter(|k| self.size >> k & 1 != 0)
            .map(|k| self.msg_id.wrapping_add(k))
            .collect()
    }
}

/// A link's control-block sender: numbers its /N/, /G/ and /A/ blocks from 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ControlTx {
    /// The number of the next block.
    pub next: u8,
}

impl ControlTx {
    /// The next /N/ or /G/ block of the link (the number advances only on success).
    pub fn encode(&mut self, c: &Control) -> Result<Block, ControlError> {
        let block = encode_control(c, self.next)?;
        self.next = self.next.wrapping_add(1);
        Ok(block)
    }
}

/// A link's control-block receiver (docs/protocol.md §5a). It accepts only
/// the block numbered as it expects next, so no error of 1 to 3 bits is ever
/// accepted (the CRC-8's distance holds for one expected number). After a loss
/// every later block is out of sequence; the receiver resynchronises on two
/// consecutive rejected blocks whose numbers follow each other, rejecting the
/// second too and expecting the number after it: three numbers are missed
/// for one lost block, none is ever accepted on a guess.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ControlRx {
    /// The number of the block expected next.
    pub expected: u8,
    /// Numbers never accepted so far: lost blocks and rejected ones (counted
    /// when a resynchronisation skips them).
    pub missed: u64,
    /// The number the previous /N/ or /G/ implied, if it was rejected out of sequence.
    rejected: Option<u8>,
}

impl ControlRx {
    /// Checks the next /N/ or /G/ block received on the link.
    pub fn check(&mut self, block: Block) -> Result<Control, ControlError> {
        let kind = match layout(block) {
            Ok(kind) => kind,
            Err(e) => {
                self.rejected = None;
                return Err(e);
            }
        };
        let implied = implied_seq(block);
        if implied == self.expected {
            self.expected = implied.wrapping_add(1);
            self.rejected = None;
            return Ok(fields(kind, block.payload));
        }
        if self.rejected.map(|r| r.wrapping_add(1)) == Some(implied) {
            // Resynchronise: the numbers up to this one are missed.
            self.missed += implied.wrapping_sub(self.expected) as u64 + 1;
            self.expected = implied.wrapping_add(1);
            self.rejected = None;
        } else {
            self.rejected = Some(implied);
        }
        Err(ControlError::OutOfSequence {
            expected: self.expected,
            implied,
        })
    }

    /// The block, read as a control block, is the /N/ or /G/ expected next
    /// (no state changes): for a data block, the sign of a control block whose
    /// sync header flipped.
    pub fn is_expected(&self, block: Block) -> bool {
        layout(block).is_ok() && implied_seq(block) == self.expected
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ack_names_the_ids_of_its_map_across_wrap_around() {
        let a = Control::ack(5, 250, 0b1000_0000_0010_0001);
        assert_eq!(a.acked_ids(), vec![250, 255, 9]);
        let b = encode_control(&a, 7).unwrap();
        assert!(b.is_edm(SUB_A));
        assert_eq!(decode_control(b, 7), Ok(a));
        assert!(grant(1).acked_ids().is_empty());
        // A map in the reserved bits' place is refused, not read.
        let bad = Block::control(b.payload | 1 << (ACK_MAP_LSB + ACK_MAP_W));
        assert_eq!(decode_control(bad, 7), Err(ControlError::NonZeroReserved));
    }

    #[test]
    fn acks_share_the_links_numbering_with_notifications_and_grants() {
        let (mut tx, mut rx) = (ControlTx::default(), ControlRx::default());
        for i in 0..30u8 {
            let c = if i % 3 == 0 {
                Control::ack(2, i, 1)
            } else {
                grant(i)
            };
            assert_eq!(rx.check(tx.encode(&c).unwrap()), Ok(c));
        }
        // A lost /A/ shows as a gap like a lost /G/.
        let _lost = tx.encode(&Control::ack(2, 0, 1)).unwrap();
        assert!(rx.check(tx.encode(&grant(0)).unwrap()).is_err());
    }

    #[test]
    fn round_trip_and_every_single_bit_error_is_caught() {
        for kind in ControlKind::ALL {
            for seq in [0, 1, 0x80, 255] {
                let c = Control {
                    kind,
                    dst: 1023,
                    msg_id: 0xA5,
                    size: 0xBEEF,
                };
                let b = encode_control(&c, seq).unwrap();
                assert_eq!(decode_control(b, seq), Ok(c));
                assert_eq!(implied_seq(b), seq);
                assert!(decode_control(b, seq.wrapping_add(1)).is_err());
                for bit in 0..64 {
                    let bad = Block {
                        payload: b.payload ^ (1 << bit),
                        ..b
                    };
                    assert!(decode_control(bad, seq).is_err(), "bit {bit}");
                }
            }
        }
        let too_wide = Control {
            kind: ControlKind::Grant,
            dst: 1024,
            msg_id: 0,
            size: 0,
        };
        assert_eq!(
            encode_control(&too_wide, 0),
            Err(ControlError::DstTooWide(1024))
        );
    }

    fn grant(msg_id: u8) -> Control {
        Control {
            kind: ControlKind::Grant,
            dst: 3,
            msg_id,
            size: 64,
        }
    }

    #[test]
    fn the_receiver_follows_the_sequence_across_wrap_around() {
        let (mut tx, mut rx) = (ControlTx::default(), ControlRx::default());
        for i in 0..600u32 {
            let b = tx.encode(&grant(i as u8)).unwrap();
            assert_eq!(rx.check(b), Ok(grant(i as u8)));
        }
        assert_eq!((rx.expected, rx.missed), (tx.next, 0));
    }

    #[test]
    fn a_lost_block_costs_two_more_and_all_three_are_counted() {
        let (mut tx, mut rx) = (ControlTx::default(), ControlRx::default());
        rx.check(tx.encode(&grant(0)).unwrap()).unwrap();
        let _lost = tx.encode(&grant(1)).unwrap();
        let b2 = tx.encode(&grant(2)).unwrap();
        assert_eq!(
            rx.check(b2),
            Err(ControlError::OutOfSequence {
                expected: 1,
                implied: 2
            })
        );
        // The resynchronising block is rejected too: accepting it would make a
        // second number acceptable, which some 2-bit errors reach.
        assert!(rx.check(tx.encode(&grant(3)).unwrap()).is_err());
        assert_eq!((rx.expected, rx.missed), (4, 3));
        assert_eq!(rx.check(tx.encode(&grant(4)).unwrap()), Ok(grant(4)));
    }

    #[test]
    fn a_replayed_block_is_rejected_and_does_not_resync() {
        let (mut tx, mut rx) = (ControlTx::default(), ControlRx::default());
        let b0 = tx.encode(&grant(0)).unwrap();
        rx.check(b0).unwrap();
        assert!(rx.check(b0).is_err());
        assert!(rx.check(b0).is_err());
        assert!(rx.check(tx.encode(&grant(1)).unwrap()).is_ok());
        assert_eq!(rx.missed, 0);
    }
}
