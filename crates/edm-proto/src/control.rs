//! /N/ (demand notification) and /G/ (grant): single control blocks with a CRC-8.
use crate::block::Block;
use crate::crc::crc8;
use crate::spec::*;
use std::fmt;

/// Which of the two single-block control messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ControlKind {
    Notification,
    Grant,
}

impl ControlKind {
    /// SUB_N or SUB_G.
    pub const fn subtype(self) -> u8 {
        match self {
            ControlKind::Notification => SUB_N,
            ControlKind::Grant => SUB_G,
        }
    }

    /// "N" or "G".
    pub const fn name(self) -> &'static str {
        match self {
            ControlKind::Notification => "N",
            ControlKind::Grant => "G",
        }
    }
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
    /// Not a control block of type BT_EDM with subtype SUB_N or SUB_G.
    NotNotificationOrGrant,
    /// `dst` does not fit NG_DST_W bits.
    DstTooWide(u16),
    /// Payload bits between the size and the CRC are not zero.
    NonZeroReserved,
    BadCrc {
        expected: u8,
        found: u8,
    },
}

impl fmt::Display for ControlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ControlError::NotNotificationOrGrant => write!(f, "not an /N/ or /G/ block"),
            ControlError::DstTooWide(d) => write!(f, "dst = {d} does not fit in {NG_DST_W} bits"),
            ControlError::NonZeroReserved => write!(f, "reserved bits are not zero"),
            ControlError::BadCrc { expected, found } => {
                write!(
                    f,
                    "CRC-8 mismatch: computed 0x{expected:02x}, received 0x{found:02x}"
                )
            }
        }
    }
}

impl std::error::Error for ControlError {}

const CRC_COVERED_BYTES: usize = (NG_CRC_LSB / 8) as usize;
const FIELDS_END: u32 = NG_SIZE_LSB + NG_SIZE_W;

fn crc_of(payload: u64) -> u8 {
    crc8(&payload.to_le_bytes()[..CRC_COVERED_BYTES])
}

/// The block for an /N/ or /G/.
pub fn encode_control(c: &Control) -> Result<Block, ControlError> {
    if c.dst >> NG_DST_W != 0 {
        return Err(ControlError::DstTooWide(c.dst));
    }
    let fields = (c.dst as u64) << NG_DST_LSB
        | (c.msg_id as u64) << NG_ID_LSB
        | (c.size as u64) << NG_SIZE_LSB;
    let without_crc = Block::edm(c.kind.subtype(), fields).payload;
    Ok(Block::control(
        without_crc | (crc_of(without_crc) as u64) << NG_CRC_LSB,
    ))
}

/// Decodes an /N/ or /G/ block, checking the reserved bits and the CRC-8.
pub fn decode_control(block: Block) -> Result<Control, ControlError> {
    let kind = if block.is_edm(SUB_N) {
        ControlKind::Notification
    } else if block.is_edm(SUB_G) {
        ControlKind::Grant
    } else {
        return Err(ControlError::NotNotificationOrGrant);
    };
    let p = block.payload;
    if (p >> FIELDS_END) & ((1 << (NG_CRC_LSB - FIELDS_END)) - 1) != 0 {
        return Err(ControlError::NonZeroReserved);
    }
    let found = (p >> NG_CRC_LSB) as u8;
    let expected = crc_of(p);
    if found != expected {
        return Err(ControlError::BadCrc { expected, found });
    }
    let field = |lsb: u32, w: u32| (p >> lsb) & ((1 << w) - 1);
    Ok(Control {
        kind,
        dst: field(NG_DST_LSB, NG_DST_W) as u16,
        msg_id: field(NG_ID_LSB, NG_ID_W) as u8,
        size: field(NG_SIZE_LSB, NG_SIZE_W) as u16,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_every_single_bit_error_is_caught() {
        for kind in [ControlKind::Notification, ControlKind::Grant] {
            let c = Control {
                kind,
                dst: 1023,
                msg_id: 0xA5,
                size: 0xBEEF,
            };
            let b = encode_control(&c).unwrap();
            assert_eq!(decode_control(b), Ok(c));
            for bit in 0..64 {
                let bad = Block {
                    payload: b.payload ^ (1 << bit),
                    ..b
                };
                assert!(decode_control(bad).is_err(), "bit {bit}");
            }
        }
        let too_wide = Control {
            kind: ControlKind::Grant,
            dst: 1024,
            msg_id: 0,
            size: 0,
        };
        assert_eq!(
            encode_control(&too_wide),
            Err(ControlError::DstTooWide(1024))
        );
    }
}
