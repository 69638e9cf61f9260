//! Memory messages and /N/ /G/: round trips and error detection through the RX demultiplexer.
mod common;

use common::*;
use edm_proto::control::{decode_control, encode_control, Control, ControlKind};
use edm_proto::message::{decode, encode, message_blocks, message_bytes, DecodeError};
use edm_proto::mux::{Event, RxError};
use edm_proto::pcs::encode_frame;
use edm_proto::spec::*;
use edm_proto::{Block, BlockClass, Kind};
use proptest::prelude::*;

fn delivered(events: &[Event]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, Event::Message(_) | Event::Control(_)))
        .count()
}

proptest! {
    #[test]
    fn any_message_round_trips(m in arb_message(600)) {
        let blocks = encode(&m);
        prop_assert_eq!(blocks.len(), message_blocks(m.kind, m.len));
        prop_assert_eq!(decode(&blocks), Ok(m.clone()));
        let (events, rx) = demux_all(&blocks);
        prop_assert_eq!(events, vec![Event::Message(m)]);
        prop_assert_eq!(rx.counters.messages_ok, 1);
    }

    #[test]
    fn block_count_is_the_layout_formula(kind in arb_kind(), len in any::<u16>()) {
        let rest = message_bytes(kind, len) - MS_BYTES as usize;
        let n_md = rest.saturating_sub(MT_TAIL_MAX as usize).div_ceil(MD_BYTES as usize);
        prop_assert_eq!(message_blocks(kind, len), n_md + 2);
    }

    #[test]
    fn any_control_round_trips(c in arb_control(), seq in any::<u8>()) {
        let b = encode_control(&c, seq).unwrap();
        prop_assert_eq!(decode_control(b, seq), Ok(c));
    }

    #[test]
    fn fillers_inside_a_message_are_transparent(m in arb_message(40), at in 1usize..4, control in arb_control()) {
        let mut line = encode(&m);
        let at = at.min(line.len() - 1);
        line.insert(at, Block::idle());
        line.insert(at, encode_control(&control, 0).unwrap());
        let (events, _) = demux_all(&line);
        prop_assert_eq!(events, vec![Event::Control(control), Event::Message(m)]);
    }
}

/// Runs `line` through a demultiplexer and checks that nothing memory-related
/// was delivered and that something was counted.
fn assert_detected(line: &[Block], what: &str) {
    let (events, rx) = demux_all(line);
    assert_eq!(delivered(&events), 0, "{what}: delivered {events:?}");
    let c = rx.counters;
    assert!(
        c.corrupted + c.unknown + c.bad_sync > 0,
        "{what}: not counted {c:?}"
    );
}

#[test]
fn every_single_bit_error_in_a_message_is_detected() {
    for m in sample_messages() {
        let blocks = encode(&m);
        for i in 0..blocks.len() {
            for bit in 0..BLOCK_BITS {
                let mut line = vec![Block::idle()];
                line.extend(&blocks);
                line.push(Block::idle());
                line[1 + i] = flip(line[1 + i], bit);
                assert_detected(
                    &line,
                    &format!("{} len {} block {i} bit {bit}", m.kind.name(), m.len),
                );
            }
        }
    }
}

#[test]
fn every_single_bit_error_in_a_message_inside_a_frame_is_detected() {
    let frame = encode_frame(&(0..99u8).collect::<Vec<_>>());
    for m in sample_messages() {
        let blocks = encode(&m);
        for i in 0..blocks.len() {
            for bit in 0..BLOCK_BITS {
                let mut corrupted = blocks.clone();
                corrupted[i] = flip(corrupted[i], bit);
                let line: Vec<Block> = frame[..5]
                    .iter()
                    .chain(&corrupted)
                    .chain(&frame[5..])
                    .copied()
                    .collect();
                assert_detected(
                    &line,
                    &format!("{} len {} block {i} bit {bit}", m.kind.name(), m.len),
                );
            }
        }
    }
}

#[test]
fn every_single_bit_error_in_a_notification_or_grant_is_detected() {
    for kind in ControlKind::ALL {
        let block = encode_control(
            &Control {
                kind,
                dst: 517,
                msg_id: 77,
                size: 4097,
            },
            0,
        )
        .unwrap();
        for bit in 0..BLOCK_BITS {
            assert_detected(&[flip(block, bit)], &format!("{kind:?} bit {bit}"));
        }
    }
}

/// Every set of 2 and 3 bit positions among the 16 type and subtype bits.
fn two_and_three_bit_masks() -> Vec<u64> {
    let mut masks = vec![];
    for a in 0..16 {
        for b in a + 1..16 {
            masks.push(1 << a | 1 << b);
            for c in b + 1..16 {
                masks.push(1 << a | 1 << b | 1 << c);
            }
        }
    }
    assert_eq!(masks.len(), 120 + 560);
    masks
}

#[test]
fn every_2_and_3_bit_error_in_type_and_subtype_is_detected() {
    let control = encode_control(
        &Control {
            kind: ControlKind::Grant,
            dst: 1,
            msg_id: 2,
            size: 3,
        },
        0,
    )
    .unwrap();
    let notification = encode_control(
        &Control {
            kind: ControlKind::Notification,
            dst: 1,
            msg_id: 2,
            size: 3,
        },
        0,
    )
    .unwrap();
    for mask in two_and_three_bit_masks() {
        for single in [control, notification] {
            let bad = Block {
                payload: single.payload ^ mask,
                ..single
            };
            assert_eq!(bad.class(), BlockClass::Unknown, "mask {mask:04x}");
            assert_detected(&[bad], &format!("control mask {mask:04x}"));
        }
        for m in sample_messages() {
            let blocks = encode(&m);
            for i in [0, blocks.len() - 1] {
                let mut line = blocks.clone();
                line[i].payload ^= mask;
                assert_detected(
                    &line,
                    &format!("{} block {i} mask {mask:04x}", m.kind.name()),
                );
            }
        }
    }
}

#[test]
fn unknown_block_types_are_counted_never_delivered() {
    let unknown_types = (0..=255u8).filter(|t| *t != BT_EDM && !STANDARD_BLOCK_TYPES.contains(t));
    let unknown_subtypes =
        (0..=255u8).filter(|s| ![SUB_MS, SUB_MT, SUB_N, SUB_G, SUB_A].contains(s));
    let blocks: Vec<Block> = unknown_types
        .map(|t| Block::control(0xA5A5_A5A5_A5A5_A500 | t as u64))
        .chain(unknown_subtypes.map(|s| Block::edm(s, 0x1234_5678_9A00_0000)))
        .collect();
    assert!(blocks.iter().any(|b| b.is_edm(SUB_MST)));
    let (events, rx) = demux_all(&blocks);
    assert_eq!(events, vec![Event::Error(RxError::Unknown); blocks.len()]);
    assert_eq!(rx.counters.unknown, blocks.len() as u64);
}

#[test]
fn decode_errors_are_precise() {
    let m = edm_proto::Message::wreq(1, 2, 3, 4, 0, true, vec![9; 13]);
    let blocks = encode(&m);
    assert_eq!(decode(&blocks[1..]), Err(DecodeError::NotMessageStart));
    assert_eq!(decode(&[]), Err(DecodeError::NotMessageStart));
    assert_eq!(
        decode(&blocks[..3]),
        Err(DecodeError::WrongBlockCount {
            expected: 5,
            found: 3
        })
    );
    let mut swapped = blocks.clone();
    swapped[2] = Block::idle();
    assert_eq!(
        decode(&swapped),
        Err(DecodeError::UnexpectedBlock { index: 2 })
    );
    let mut bad_kind = blocks.clone();
    bad_kind[0].payload &= !(7 << 16);
    assert_eq!(decode(&bad_kind), Err(DecodeError::BadKind(0)));
    let mut bad_crc = blocks.clone();
    bad_crc[1].payload ^= 1 << 40;
    assert!(matches!(decode(&bad_crc), Err(DecodeError::BadCrc { .. })));
    // 13 data bytes: M = 29, rest = 23, 3 MDs carry 23 bytes, the last one 7 (1 byte padding).
    let mut bad_pad = blocks.clone();
    bad_pad[3].payload ^= 1 << 63;
    assert_eq!(
        decode(&bad_pad),
        Err(DecodeError::NonZeroPadding { index: 3 })
    );
    let rmw = encode(&edm_proto::Message::rmwreq(1, 2, 3, 4, RMW_FAA, 1, 0));
    let mut bad_len = rmw.clone();
    bad_len[0].payload ^= 1 << (16 + HDR_LEN_LSB);
    assert_eq!(
        decode(&bad_len),
        Err(DecodeError::BadLength {
            kind: Kind::Rmwreq,
            len: 9
        })
    );
}
