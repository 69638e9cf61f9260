//! Wire cost of small memory operations in EDM versus Ethernet frames (for the README).
use crate::message::{message_blocks, Kind};
use crate::pcs::{encode_frame, gap_blocks_after};
use crate::spec::*;

/// The example sizes: an 8-byte-address read and a 64-byte write.
const EXAMPLE_WRITE_BYTES: u16 = 64;

/// One comparison row.
#[derive(Clone, Debug, PartialEq)]
pub struct OverheadRow {
    pub operation: &'static str,
    pub edm_blocks: usize,
    /// `edm_blocks` x BLOCK_BITS.
    pub edm_bits: u64,
    /// The frame: max(ETH_MIN_FRAME_BYTES, header + data + FCS).
    pub ethernet_frame_bytes: u32,
    /// Frame + preamble/SFD + minimum inter-frame gap.
    pub ethernet_wire_bytes: u32,
    /// `ethernet_wire_bytes` in 64b/66b line bits (x 8 x 66/64).
    pub ethernet_bits: f64,
    /// Whole blocks the frame and its gap occupy with /S/ in lane 0 (as this codec sends it).
    pub ethernet_blocks: usize,
    /// `ethernet_bits / edm_bits`.
    pub ratio: f64,
}

fn row(operation: &'static str, edm_blocks: usize, frame_payload_bytes: u32) -> OverheadRow {
    let frame = (ETH_HEADER_BYTES + frame_payload_bytes + ETH_FCS_BYTES).max(ETH_MIN_FRAME_BYTES);
    let wire = frame + ETH_PREAMBLE_BYTES + ETH_IFG_BYTES;
    let ethernet_bits = (wire * 8) as f64 * BLOCK_BITS as f64 / PAYLOAD_BITS as f64;
    let frame_blocks = encode_frame(&vec![0; frame as usize]);
    let ethernet_blocks =
        frame_blocks.len() + gap_blocks_after(*frame_blocks.last().expect("non-empty"));
    let edm_bits = edm_blocks as u64 * BLOCK_BITS as u64;
    OverheadRow {
        operation,
        edm_blocks,
        edm_bits,
        ethernet_frame_bytes: frame,
        ethernet_wire_bytes: wire,
        ethernet_bits,
        ethernet_blocks,
        ratio: ethernet_bits / edm_bits as f64,
    }
}

/// EDM versus Ethernet for an RREQ (8-byte address; any read length, in a
/// minimum frame) and a 64-byte WREQ (the data in a frame with only MAC
/// header and FCS around it).
pub fn overhead_table() -> Vec<OverheadRow> {
    vec![
        row(
            "RREQ (8 B address)",
            message_blocks(Kind::Rreq, EXAMPLE_WRITE_BYTES),
            RREQ_EXT_BYTES,
        ),
        row(
            "WREQ (64 B data)",
            message_blocks(Kind::Wreq, EXAMPLE_WRITE_BYTES),
            EXAMPLE_WRITE_BYTES as u32,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_readme_numbers() {
        let t = overhead_table();
        assert_eq!((t[0].edm_blocks, t[0].edm_bits), (3, 198));
        assert_eq!((t[0].ethernet_wire_bytes, t[0].ethernet_bits), (84, 693.0));
        assert_eq!(t[0].ratio, 3.5);
        assert_eq!((t[1].edm_blocks, t[1].edm_bits), (11, 726));
        assert_eq!((t[1].ethernet_frame_bytes, t[1].ethernet_bits), (82, 841.5));
        assert_eq!(t[1].ethernet_blocks, 13);
    }
}
