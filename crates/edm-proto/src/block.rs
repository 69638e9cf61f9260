//! The 66-bit block: a 2-bit sync header and a 64-bit payload.
use crate::spec::*;

/// One 66-bit PCS block. `sync` holds the 2-bit header as a value (bit 0 is
/// sent first); payload byte k is bits [8k+7:8k], and for a control block
/// byte 0 is the block type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Block {
    pub sync: u8,
    pub payload: u64,
}

/// What a receiver sees in a block, by its sync header and type bytes alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockClass {
    /// Sync header 00 or 11.
    BadSync,
    /// A data block: /D/ of a frame or /MD/ of a memory message (by context).
    Data,
    /// /MS/: the first block of a memory message.
    MessageStart,
    /// /MT/: the last block of a memory message.
    MessageTerminate,
    /// /N/: demand notification.
    Notification,
    /// /G/: grant.
    Grant,
    /// /A/: write acknowledgement.
    Ack,
    /// The all-idle control block (the only filler allowed inside a message).
    Idle,
    /// A standard block that starts a frame (/S/ in lane 0 or 4).
    FrameStart,
    /// A standard /T/ block.
    FrameTerminate,
    /// Any other standard control block (ordered sets, non-idle C8 such as /E/).
    OtherStandard,
    /// Neither a standard type nor a known EDM subtype (includes the reserved /MST/).
    Unknown,
}

impl Block {
    /// A data block carrying `payload`.
    pub const fn data(payload: u64) -> Self {
        Block {
            sync: SYNC_DATA,
            payload,
        }
    }

    /// A control block; `payload` includes the block type in byte 0.
    pub const fn control(payload: u64) -> Self {
        Block {
            sync: SYNC_CTRL,
            payload,
        }
    }

    /// The all-idle control block (/I/ in all eight lanes).
    pub const fn idle() -> Self {
        Block::control(BT_C8 as u64)
    }

    /// An EDM control block: type BT_EDM, the given subtype, and `fields`
    /// already placed in payload bytes 2..7.
    pub const fn edm(subtype: u8, fields: u64) -> Self {
        Block::control(BT_EDM as u64 | (subtype as u64) << 8 | fields)
    }

    /// Payload bytes, byte 0 first.
    pub const fn bytes(&self) -> [u8; 8] {
        self.payload.to_le_bytes()
    }

    /// Payload byte `k` (0..8).
    pub const fn byte(&self, k: usize) -> u8 {
        (self.payload >> (8 * k)) as u8
    }

    /// Sync header SYNC_DATA (/D/ or /MD/).
    pub const fn is_data(&self) -> bool {
        self.sync == SYNC_DATA
    }

    /// Sync header SYNC_CTRL.
    pub const fn is_control(&self) -> bool {
        self.sync == SYNC_CTRL
    }

    /// Byte 0 of a control block.
    pub const fn block_type(&self) -> u8 {
        self.byte(0)
    }

    /// True for a control block of type BT_EDM with the given subtype.
    pub const fn is_edm(&self, subtype: u8) -> bool {
        self.is_control() && self.block_type() == BT_EDM && self.byte(1) == subtype
    }

    /// Classifies the block as the EDM receiver does before any context.
    pub fn class(&self) -> BlockClass {
        if self.is_data() {
            return BlockClass::Data;
        }
        if !self.is_control() {
            return BlockClass::BadSync;
        }
        match self.block_type() {
            BT_EDM => match self.byte(1) {
                SUB_MS => BlockClass::MessageStart,
                SUB_MT => BlockClass::MessageTerminate,
                SUB_N => BlockClass::Notification,
                SUB_G => BlockClass::Grant,
                SUB_A => BlockClass::Ack,
                _ => BlockClass::Unknown,
            },
            BT_C8 if *self == Block::idle() => BlockClass::Idle,
            BT_S0 | BT_C4_S4 | BT_O0_S4 => BlockClass::FrameStart,
            BT_T0 | BT_T1 | BT_T2 | BT_T3 | BT_T4 | BT_T5 | BT_T6 | BT_T7 => {
                BlockClass::FrameTerminate
            }
            t if STANDARD_BLOCK_TYPES.contains(&t) => BlockClass::OtherStandard,
            _ => BlockClass::Unknown,
        }
    }
}

impl From<(u8, u64)> for Block {
    fn from((sync, payload): (u8, u64)) -> Self {
        Block { sync, payload }
    }
}

impl From<Block> for (u8, u64) {
    fn from(b: Block) -> Self {
        (b.sync, b.payload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_access_is_little_endian() {
        let b = Block::data(0x0807_0605_0403_0201);
        assert_eq!(b.byte(0), 1);
        assert_eq!(b.byte(7), 8);
        assert_eq!(b.bytes(), [1, 2, 3, 4, 5, 6, 7, 8]);
    }

    #[test]
    fn classes() {
        assert_eq!(Block::idle().class(), BlockClass::Idle);
        assert_eq!(Block::edm(SUB_MS, 0).class(), BlockClass::MessageStart);
        assert_eq!(Block::edm(SUB_MST, 0).class(), BlockClass::Unknown);
        assert_eq!(
            Block::control(BT_T3 as u64).class(),
            BlockClass::FrameTerminate
        );
        assert_eq!(
            Block::control(BT_O0_C4 as u64).class(),
            BlockClass::OtherStandard
        );
        assert_eq!(Block::control(0x01).class(), BlockClass::Unknown);
        assert_eq!(
            Block {
                sync: 0,
                payload: 0
            }
            .class(),
            BlockClass::BadSync
        );
        assert_eq!(
            Block {
                sync: 3,
                payload: 0
            }
            .class(),
            BlockClass::BadSync
        );
    }
}
