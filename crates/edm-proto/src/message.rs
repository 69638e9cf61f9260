//! Memory messages: the header, the byte string M, and its /MS/ /MD/* /MT/ blocks.
use crate::block::Block;
use crate::crc::crc32c;
use crate::spec::*;
use std::fmt;

/// The four message kinds (the header's `kind` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Rreq,
    Wreq,
    Rmwreq,
    Rres,
}

impl Kind {
    /// Every kind, in header-code order.
    pub const ALL: [Kind; 4] = [Kind::Rreq, Kind::Wreq, Kind::Rmwreq, Kind::Rres];

    /// The header code (KIND_*).
    pub const fn code(self) -> u8 {
        match self {
            Kind::Rreq => KIND_RREQ,
            Kind::Wreq => KIND_WREQ,
            Kind::Rmwreq => KIND_RMWREQ,
            Kind::Rres => KIND_RRES,
        }
    }

    /// The kind with header code `code`, if any.
    pub fn from_code(code: u8) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.code() == code)
    }

    /// "RREQ", "WREQ", "RMWREQ" or "RRES".
    pub const fn name(self) -> &'static str {
        match self {
            Kind::Rreq => "RREQ",
            Kind::Wreq => "WREQ",
            Kind::Rmwreq => "RMWREQ",
            Kind::Rres => "RRES",
        }
    }

    /// The kind named "RREQ", "WREQ", "RMWREQ" or "RRES".
    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Bytes between the header and the payload.
    pub const fn ext_bytes(self) -> usize {
        (match self {
            Kind::Rreq => RREQ_EXT_BYTES,
            Kind::Wreq => WREQ_EXT_BYTES,
            Kind::Rmwreq => RMW_EXT_BYTES,
            Kind::Rres => RRES_EXT_BYTES,
        }) as usize
    }

    /// Whether `len` counts payload bytes carried in the message (WREQ, RRES)
    /// rather than bytes to read or operand size (RREQ, RMWREQ).
    pub const fn carries_payload(self) -> bool {
        matches!(self, Kind::Wreq | Kind::Rres)
    }
}

/// One memory message (one unit on the wire). Fields a kind does not use
/// must be zero (`addr` for RRES; `arg0`, `arg1` except for RMWREQ; `data`
/// for RREQ and RMWREQ).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Message {
    pub kind: Kind,
    pub src: u16,
    pub dst: u16,
    pub msg_id: u8,
    /// RREQ: bytes to read; WREQ/RRES: `data.len()`; RMWREQ: RMW_OPERAND_BYTES.
    pub len: u16,
    pub addr: u64,
    pub seq: u16,
    pub last: bool,
    /// RMWREQ: RMW_* opcode; RRES: STATUS_*.
    pub op: u8,
    pub arg0: u64,
    pub arg1: u64,
    pub data: Vec<u8>,
}

/// Why a [`Message`] cannot be encoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EncodeError {
    /// A header field does not fit its width.
    FieldTooWide {
        field: &'static str,
        value: u64,
        width: u32,
    },
    /// `len` disagrees with the kind (RMWREQ) or with `data.len()`.
    BadLength {
        kind: Kind,
        len: u16,
        data_len: usize,
    },
    /// A field this kind does not carry is not zero.
    UnusedFieldSet { kind: Kind, field: &'static str },
}

/// Why blocks do not decode to a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The first block is not an /MS/ (or there are no blocks).
    NotMessageStart,
    /// The header's kind is not one of the four.
    BadKind(u8),
    /// An RMWREQ header whose len is not RMW_OPERAND_BYTES.
    BadLength { kind: Kind, len: u16 },
    /// The block count differs from what the header's kind and len require.
    WrongBlockCount { expected: usize, found: usize },
    /// The block at `index` is not the /MD/ or /MT/ the layout requires.
    UnexpectedBlock { index: usize },
    /// Zero padding (in the last /MD/ or in /MT/) is not zero.
    NonZeroPadding { index: usize },
    /// The CRC-32C in /MT/ does not match the message.
    BadCrc { expected: u32, found: u32 },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::FieldTooWide {
                field,
                value,
                width,
            } => {
                write!(f, "{field} = {value} does not fit in {width} bits")
            }
            EncodeError::BadLength {
                kind,
                len,
                data_len,
            } => {
                write!(
                    f,
                    "{} with len {len} and {data_len} data bytes",
                    kind.name()
                )
            }
            EncodeError::UnusedFieldSet { kind, field } => {
                write!(f, "{} does not carry {field}; it must be zero", kind.name())
            }
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::NotMessageStart => write!(f, "first block is not /MS/"),
            DecodeError::BadKind(k) => write!(f, "unknown message kind {k}"),
            DecodeError::BadLength { kind, len } => write!(f, "{} with len {len}", kind.name()),
            DecodeError::WrongBlockCount { expected, found } => {
                write!(f, "expected {expected} blocks, found {found}")
            }
            DecodeError::UnexpectedBlock { index } => {
                write!(f, "unexpected block at index {index}")
            }
            DecodeError::NonZeroPadding { index } => write!(f, "non-zero padding in block {index}"),
            DecodeError::BadCrc { expected, found } => {
                write!(
                    f,
                    "CRC-32C mismatch: computed 0x{expected:08x}, received 0x{found:08x}"
                )
            }
        }
    }
}

impl std::error::Error for EncodeError {}
impl std::error::Error for DecodeError {}

/// Bytes of M for a message of this kind and header len.
pub const fn message_bytes(kind: Kind, len: u16) -> usize {
    let payload = if kind.carries_payload() {
        len as usize
    } else {
        0
    };
    HDR_BYTES as usize + kind.ext_bytes() + payload
}

/// How M's bytes after the /MS/ split: (number of /MD/ blocks, tail bytes in /MT/).
const fn layout(m_bytes: usize) -> (usize, usize) {
    let rest = m_bytes.saturating_sub(MS_BYTES as usize);
    let md = MD_BYTES as usize;
    let n_md = rest.saturating_sub(MT_TAIL_MAX as usize).div_ceil(md);
    let in_md = if rest < md * n_md { rest } else { md * n_md };
    (n_md, rest - in_md)
}

/// Blocks on the wire for a message of this kind and header len (its wire
/// time in block slots): /MS/ + /MD/s + /MT/.
pub const fn message_blocks(kind: Kind, len: u16) -> usize {
    layout(message_bytes(kind, len)).0 + 2
}

/// Places `value` in a header field, checking it fits.
fn field(value: u64, lsb: u32, width: u32, name: &'static str) -> Result<u64, EncodeError> {
    if value >> width != 0 {
        return Err(EncodeError::FieldTooWide {
            field: name,
            value,
            width,
        });
    }
    Ok(value << lsb)
}

/// Reads a header field.
const fn get(header: u64, lsb: u32, width: u32) -> u64 {
    (header >> lsb) & ((1u64 << width) - 1)
}

/// Highest address inside one address space, plus one (2^ADDR_ASID_LSB).
pub const SPACE_BYTES: u64 = 1u64 << ADDR_ASID_LSB;

/// A request's address word for byte `vaddr` of address space `asid`
/// (docs/protocol.md §3.4), or None if `vaddr` does not fit the space.
pub const fn space_address(asid: u16, vaddr: u64) -> Option<u64> {
    if vaddr >= SPACE_BYTES {
        return None;
    }
    Some(((asid as u64) << ADDR_ASID_LSB) | vaddr)
}

/// The (address space, address inside it) a request's address word names.
pub const fn split_space_address(addr: u64) -> (u16, u64) {
    (
        get(addr, ADDR_ASID_LSB, ADDR_ASID_W) as u16,
        addr & (SPACE_BYTES - 1),
    )
}

impl Message {
    /// A `kind` message from `src` to `dst`, every other field zero (`last`
    /// set): what the constructors below fill in.
    fn blank(kind: Kind, src: u16, dst: u16, msg_id: u8) -> Message {
        Message {
            kind,
            src,
            dst,
            msg_id,
            len: 0,
            addr: 0,
            seq: 0,
            last: true,
            op: 0,
            arg0: 0,
            arg1: 0,
            data: vec![],
        }
    }

    /// A read request for `len` bytes at `addr`.
    pub fn rreq(src: u16, dst: u16, msg_id: u8, addr: u64, len: u16) -> Message {
        Message {
            len,
            addr,
            ..Message::blank(Kind::Rreq, src, dst, msg_id)
        }
    }

    /// Chunk `seq` of a write of `data` at `addr`.
    pub fn wreq(
        src: u16,
        dst: u16,
        msg_id: u8,
        addr: u64,
        seq: u16,
        last: bool,
        data: Vec<u8>,
    ) -> Message {
        let len = data.len() as u16;
        Message {
            len,
            addr,
            seq,
            last,
            data,
            ..Message::blank(Kind::Wreq, src, dst, msg_id)
        }
    }

    /// An atomic read-modify-write (RMW_* `op`) of the 64-bit word at `addr`.
    pub fn rmwreq(
        src: u16,
        dst: u16,
        msg_id: u8,
        addr: u64,
        op: u8,
        arg0: u64,
        arg1: u64,
    ) -> Message {
        Message {
            len: RMW_OPERAND_BYTES as u16,
            addr,
            op,
            arg0,
            arg1,
            ..Message::blank(Kind::Rmwreq, src, dst, msg_id)
        }
    }

    /// Chunk `seq` of the response to request `msg_id`, with STATUS_* `status`.
    pub fn rres(
        src: u16,
        dst: u16,
        msg_id: u8,
        seq: u16,
        last: bool,
        status: u8,
        data: Vec<u8>,
    ) -> Message {
        let len = data.len() as u16;
        Message {
            len,
            seq,
            last,
            op: status,
            data,
            ..Message::blank(Kind::Rres, src, dst, msg_id)
        }
    }

    /// The 64-bit header, or why the fields do not fit it.
    pub fn header(&self) -> Result<u64, EncodeError> {
        Ok(
            field(self.kind.code() as u64, HDR_KIND_LSB, HDR_KIND_W, "kind")?
                | field(self.src as u64, HDR_SRC_LSB, HDR_SRC_W, "src")?
                | field(self.dst as u64, HDR_DST_LSB, HDR_DST_W, "dst")?
                | field(self.msg_id as u64, HDR_ID_LSB, HDR_ID_W, "msg_id")?
                | field(self.len as u64, HDR_LEN_LSB, HDR_LEN_W, "len")?
                | field(self.seq as u64, HDR_SEQ_LSB, HDR_SEQ_W, "seq")?
                | field(self.last as u64, HDR_LAST_LSB, 1, "last")?
                | field(self.op as u64, HDR_OP_LSB, HDR_OP_W, "op")?,
        )
    }

    /// Checks that the message can be encoded (the header fits, len matches
    /// the kind and data, unused fields are zero).
    pub fn validate(&self) -> Result<(), EncodeError> {
        self.header()?;
        let kind = self.kind;
        let expected_data = if kind.carries_payload() {
            self.len as usize
        } else {
            0
        };
        let len_ok = kind != Kind::Rmwreq || self.len as u32 == RMW_OPERAND_BYTES;
        if !len_ok || self.data.len() != expected_data {
            return Err(EncodeError::BadLength {
                kind,
                len: self.len,
                data_len: self.data.len(),
            });
        }
        let unused = [
            ("addr", kind == Kind::Rres && self.addr != 0),
            ("arg0", kind != Kind::Rmwreq && self.arg0 != 0),
            ("arg1", kind != Kind::Rmwreq && self.arg1 != 0),
        ];
        match unused.into_iter().find(|(_, set)| *set) {
            Some((field, _)) => Err(EncodeError::UnusedFieldSet { kind, field }),
            None => Ok(()),
        }
    }

    /// The byte string M = header || ext || payload. Panics if invalid (see [`Message::validate`]).
    pub fn to_bytes(&self) -> Vec<u8> {
        if let Err(e) = self.validate() {
            panic!("cannot encode message: {e}");
        }
        let mut m = Vec::with_capacity(message_bytes(self.kind, self.len));
        m.extend_from_slice(&self.header().expect("validated").to_le_bytes());
        if self.kind != Kind::Rres {
            m.extend_from_slice(&self.addr.to_le_bytes());
        }
        if self.kind == Kind::Rmwreq {
            m.extend_from_slice(&self.arg0.to_le_bytes());
            m.extend_from_slice(&self.arg1.to_le_bytes());
        }
        m.extend_from_slice(&self.data);
        m
    }

    /// Parses M (whose length the caller has checked against the header).
    fn from_bytes(m: &[u8]) -> Result<Message, DecodeError> {
        let word = |at: usize| u64::from_le_bytes(m[at..at + 8].try_into().expect("8 bytes"));
        let header = word(0);
        let code = get(header, HDR_KIND_LSB, HDR_KIND_W) as u8;
        let kind = Kind::from_code(code).ok_or(DecodeError::BadKind(code))?;
        let ext_at = HDR_BYTES as usize;
        let data_at = ext_at + kind.ext_bytes();
        let (addr, arg0, arg1) = match kind {
            Kind::Rres => (0, 0, 0),
            Kind::Rmwreq => (word(ext_at), word(ext_at + 8), word(ext_at + 16)),
            Kind::Rreq | Kind::Wreq => (word(ext_at), 0, 0),
        };
        Ok(Message {
            kind,
            src: get(header, HDR_SRC_LSB, HDR_SRC_W) as u16,
            dst: get(header, HDR_DST_LSB, HDR_DST_W) as u16,
            msg_id: get(header, HDR_ID_LSB, HDR_ID_W) as u8,
            len: get(header, HDR_LEN_LSB, HDR_LEN_W) as u16,
            addr,
            seq: get(header, HDR_SEQ_LSB, HDR_SEQ_W) as u16,
            last: get(header, HDR_LAST_LSB, 1) == 1,
            op: get(header, HDR_OP_LSB, HDR_OP_W) as u8,
            arg0,
            arg1,
            data: m[data_at..].to_vec(),
        })
    }
}

/// Little-endian u64 from up to 8 bytes.
fn le_word(bytes: &[u8]) -> u64 {
    bytes.iter().rev().fold(0, |w, &b| w << 8 | b as u64)
}

/// Kind and len from an /MS/ alone: they lie within its 6 message bytes
/// (spec test), so a receiver knows the whole layout from the first block.
fn announced(ms: Block) -> Result<(Kind, u16), DecodeError> {
    if !ms.is_edm(SUB_MS) {
        return Err(DecodeError::NotMessageStart);
    }
    let partial_header = ms.payload >> 16;
    let code = get(partial_header, HDR_KIND_LSB, HDR_KIND_W) as u8;
    let kind = Kind::from_code(code).ok_or(DecodeError::BadKind(code))?;
    let len = get(partial_header, HDR_LEN_LSB, HDR_LEN_W) as u16;
    if kind == Kind::Rmwreq && len as u32 != RMW_OPERAND_BYTES {
        return Err(DecodeError::BadLength { kind, len });
    }
    Ok((kind, len))
}

/// The number of blocks the message starting with this /MS/ takes, or why
/// its header is invalid.
pub fn blocks_announced(ms: Block) -> Result<usize, DecodeError> {
    announced(ms).map(|(kind, len)| message_blocks(kind, len))
}

/// The blocks of a message: /MS/, /MD/s, /MT/. Panics if the message is
/// invalid (see [`Message::validate`]).
pub fn encode(message: &Message) -> Vec<Block> {
    let m = message.to_bytes();
    let (n_md, tail) = layout(m.len());
    let ms = MS_BYTES as usize;
    let md = MD_BYTES as usize;
    let mut blocks = Vec::with_capacity(n_md + 2);
    blocks.push(Block::edm(SUB_MS, le_word(&m[..ms]) << 16));
    let md_end = m.len() - tail;
    blocks.extend(m[ms..md_end].chunks(md).map(|c| Block::data(le_word(c))));
    let tail_field = le_word(&m[md_end..]) << (8 * MT_TAIL_OFFSET);
    let crc_field = (crc32c(&m) as u64) << (8 * MT_CRC_OFFSET);
    blocks.push(Block::edm(SUB_MT, tail_field | crc_field));
    blocks
}

/// Decodes exactly one message's blocks (/MS/, /MD/s, /MT/, no fillers),
/// checking layout, padding and CRC.
pub fn decode(blocks: &[Block]) -> Result<Message, DecodeError> {
    let first = *blocks.first().ok_or(DecodeError::NotMessageStart)?;
    let (kind, len) = announced(first)?;
    let m_len = message_bytes(kind, len);
    let (n_md, tail) = layout(m_len);
    if blocks.len() != n_md + 2 {
        return Err(DecodeError::WrongBlockCount {
            expected: n_md + 2,
            found: blocks.len(),
        });
    }
    let mut m = Vec::with_capacity(m_len + MD_BYTES as usize);
    m.extend_from_slice(&first.bytes()[2..]);
    for (i, b) in blocks.iter().enumerate().take(n_md + 1).skip(1) {
        if !b.is_data() {
            return Err(DecodeError::UnexpectedBlock { index: i });
        }
        m.extend_from_slice(&b.bytes());
    }
    let mt_index = n_md + 1;
    let mt = blocks[mt_index];
    if !mt.is_edm(SUB_MT) {
        return Err(DecodeError::UnexpectedBlock { index: mt_index });
    }
    let in_md = m_len - tail;
    if m[in_md..].iter().any(|&b| b != 0) {
        return Err(DecodeError::NonZeroPadding { index: n_md });
    }
    m.truncate(in_md);
    let tail_at = MT_TAIL_OFFSET as usize;
    let mt_bytes = mt.bytes();
    m.extend_from_slice(&mt_bytes[tail_at..tail_at + tail]);
    if mt_bytes[tail_at + tail..MT_CRC_OFFSET as usize]
        .iter()
        .any(|&b| b != 0)
    {
        return Err(DecodeError::NonZeroPadding { index: mt_index });
    }
    let found = (mt.payload >> (8 * MT_CRC_OFFSET)) as u32;
    let expected = crc32c(&m);
    if found != expected {
        return Err(DecodeError::BadCrc { expected, found });
    }
    Message::from_bytes(&m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn space_address_puts_the_asid_in_the_top_bits() {
        let a = space_address(0xBEEF, 0x1234_5678).unwrap();
        assert_eq!(a, 0xBEEF_0000_1234_5678);
        assert_eq!(split_space_address(a), (0xBEEF, 0x1234_5678));
        assert_eq!(space_address(1, SPACE_BYTES), None);
        assert_eq!(split_space_address(u64::MAX), (u16::MAX, SPACE_BYTES - 1));
        // The id rides in the address word: a request's wire size does not change.
        let plain = encode(&Message::rreq(1, 2, 3, 0x40, 64));
        let spaced = encode(&Message::rreq(1, 2, 3, a, 64));
        assert_eq!(plain.len(), spaced.len());
    }

    #[test]
    fn block_counts_follow_the_design() {
        assert_eq!(message_blocks(Kind::Rreq, 64), 3);
        assert_eq!(message_blocks(Kind::Rmwreq, RMW_OPERAND_BYTES as u16), 5);
        assert_eq!(message_blocks(Kind::Rres, 0), 2);
        assert_eq!(message_blocks(Kind::Rres, 1), 3);
        // WREQ of 64 B: M = 80, rest = 74, 9 MDs carry 72, 2 tail bytes in /MT/.
        assert_eq!(message_blocks(Kind::Wreq, 64), 11);
        assert_eq!(layout(80), (9, 2));
        assert_eq!(layout(8 + 3), (1, 0));
    }

    #[test]
    fn rreq_round_trips_and_matches_layout() {
        let m = Message::rreq(5, 1023, 200, 0x1122_3344_5566_7788, 64);
        let blocks = encode(&m);
        assert_eq!(blocks.len(), 3);
        assert!(blocks[0].is_edm(SUB_MS) && blocks[1].is_data() && blocks[2].is_edm(SUB_MT));
        assert_eq!(decode(&blocks), Ok(m));
    }

    #[test]
    fn validation_names_the_problem() {
        let mut m = Message::rreq(1024, 0, 0, 0, 8);
        assert_eq!(
            m.validate(),
            Err(EncodeError::FieldTooWide {
                field: "src",
                value: 1024,
                width: 10
            })
        );
        m.src = 0;
        m.arg0 = 1;
        assert_eq!(
            m.validate(),
            Err(EncodeError::UnusedFieldSet {
                kind: Kind::Rreq,
                field: "arg0"
            })
        );
        let mut w = Message::wreq(0, 0, 0, 0, 0, true, vec![1, 2, 3]);
        w.len = 4;
        assert!(matches!(w.validate(), Err(EncodeError::BadLength { .. })));
    }
}
