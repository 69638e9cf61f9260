//! Control-block integrity (docs/protocol.md §5a, issue 25): the CRC-8 of an
//! /N/ or /G/ starts from its link's control sequence number, so no error of
//! 1 to 3 bits, sync-header flips included, makes a receiver act on a control
//! block it was not sent; lost control blocks are counted.
mod common;

use common::*;
use edm_proto::control::{encode_control, Control, ControlKind, ControlTx};
use edm_proto::message::encode;
use edm_proto::mux::{Event, RxDemux};
use edm_proto::pcs::encode_frame;
use edm_proto::{Block, Message};

fn grant(msg_id: u8) -> Control {
    Control {
        kind: ControlKind::Grant,
        dst: 9,
        msg_id,
        size: 64,
    }
}

fn controls(events: &[Event]) -> Vec<Control> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Control(c) => Some(*c),
            _ => None,
        })
        .collect()
}

/// Every mask of 1, 2 or 3 bits over a 66-bit block: (sync mask, payload mask).
fn masks_up_to_3_bits() -> Vec<(u8, u64)> {
    let bit = |i: u32| -> (u8, u64) {
        if i < 2 {
            (1 << i, 0)
        } else {
            (0, 1 << (i - 2))
        }
    };
    let or = |a: (u8, u64), b: (u8, u64)| (a.0 | b.0, a.1 | b.1);
    let mut out = vec![];
    for a in 0..66 {
        out.push(bit(a));
        for b in a + 1..66 {
            out.push(or(bit(a), bit(b)));
            for c in b + 1..66 {
                out.push(or(or(bit(a), bit(b)), bit(c)));
            }
        }
    }
    assert_eq!(out.len(), 66 + 2145 + 45760);
    out
}

fn hit(b: Block, (sync, payload): (u8, u64)) -> Block {
    Block {
        sync: b.sync ^ sync,
        payload: b.payload ^ payload,
    }
}

/// A receiver that has accepted `n` control blocks of its link.
fn receiver_after(n: u32) -> (RxDemux, ControlTx) {
    let (mut rx, mut tx) = (RxDemux::new(), ControlTx::default());
    for i in 0..n {
        let events = rx.push(tx.encode(&grant(i as u8)).unwrap());
        assert_eq!(controls(&events).len(), 1);
    }
    (rx, tx)
}

#[test]
fn a_grant_whose_sync_header_flips_inside_a_frame_is_counted_and_the_frame_survives() {
    // Issue 25: the flipped /G/ was absorbed into the frame around it, which
    // the receiver then reported as fine, and the grant was lost uncounted.
    let bytes: Vec<u8> = (0..203u32).map(|i| (i * 7) as u8).collect();
    let frame = encode_frame(&bytes);
    for at in 1..frame.len() {
        let (mut rx, mut tx) = receiver_after(3);
        let mut line = frame[..at].to_vec();
        let g = tx.encode(&grant(3)).unwrap();
        line.push(Block {
            sync: g.sync ^ 0b11,
            ..g
        });
        line.extend(&frame[at..]);
        let events: Vec<Event> = line.iter().flat_map(|&b| rx.push(b)).collect();
        assert!(controls(&events).is_empty(), "at {at}");
        let c = rx.counters;
        assert_eq!(
            (c.control_in_data, c.frames_ok, c.frames_bad),
            (1, 1, 0),
            "at {at}"
        );
        // The sequence shows the loss: the next grant is out of sequence, the
        // one after resynchronises (rejected too), the third is accepted; the
        // three numbers are counted missed.
        for i in [4, 5] {
            assert!(controls(&rx.push(tx.encode(&grant(i)).unwrap())).is_empty());
        }
        let after = rx.push(tx.encode(&grant(6)).unwrap());
        assert_eq!(controls(&after), vec![grant(6)]);
        assert_eq!((rx.counters.control_missed, rx.counters.corrupted), (3, 2));
    }
}

#[test]
fn a_grant_whose_sync_header_flips_inside_a_message_is_counted_and_the_message_survives() {
    let m = sample_messages().swap_remove(6);
    let blocks = encode(&m);
    for at in 1..blocks.len() {
        let (mut rx, mut tx) = receiver_after(1);
        let g = tx.encode(&grant(1)).unwrap();
        let mut line = blocks[..at].to_vec();
        line.push(Block {
            sync: g.sync ^ 0b11,
            ..g
        });
        line.extend(&blocks[at..]);
        let events: Vec<Event> = line.iter().flat_map(|&b| rx.push(b)).collect();
        assert_eq!(events.last(), Some(&Event::Message(m.clone())), "at {at}");
        assert_eq!(rx.counters.control_in_data, 1);
    }
}

#[test]
fn no_error_of_1_to_3_bits_in_a_control_block_is_accepted() {
    // Sync header included, at several link states, the receiver in step
    // with the sender (after a loss, until it resynchronises, a corrupted block
    // can land on the number it still expects: docs/protocol.md §5a).
    for n in [0, 1, 77, 255, 256] {
        for kind in ControlKind::ALL {
            let (rx0, mut tx) = receiver_after(n);
            let c = Control {
                kind,
                dst: 517,
                msg_id: 77,
                size: 4097,
            };
            let good = tx.encode(&c).unwrap();
            for mask in masks_up_to_3_bits() {
                let mut rx = rx0.clone();
                let events = rx.push(hit(good, mask));
                assert!(controls(&events).is_empty(), "n {n} {kind:?} mask {mask:?}");
            }
        }
    }
}

#[test]
fn data_holding_another_control_block_becomes_one_only_by_one_exact_3_bit_error() {
    // The attack of issue 25: a WREQ whose data holds, at a block boundary, the
    // 8 bytes of a valid /G/: of another link, an old one of this link, or one
    // computed for sequence number 0. The receiver has accepted 5 blocks. No
    // 1- or 2-bit error makes it a control block the receiver acts on; of the
    // 45 760 3-bit errors at most one does (both sync bits and the one payload
    // bit whose CRC-8 syndrome moves the image's number onto the expected one:
    // single-bit syndromes differ, so there is one such bit or none).
    let images = [
        encode_control(&grant(1), 0).unwrap(),
        encode_control(&grant(2), 4).unwrap(),
        encode_control(&grant(3), 200).unwrap(),
    ];
    let mut total = 0;
    for image in images {
        let mut m = sample_messages().swap_remove(14); // a WREQ with 67 data bytes
                                                       // Message byte 16 + k is data byte k; /MD/ j carries message bytes 6 + 8j ..
        m.data[6..14].copy_from_slice(&image.payload.to_le_bytes());
        let blocks = encode(&m);
        let at = blocks
            .iter()
            .position(|b| b.payload == image.payload)
            .expect("the image sits on a block boundary");
        let (rx0, _) = receiver_after(5);
        let mut acted = vec![];
        for mask in masks_up_to_3_bits() {
            let mut rx = rx0.clone();
            let mut line = blocks.clone();
            line[at] = hit(line[at], mask);
            let events: Vec<Event> = line.iter().flat_map(|&b| rx.push(b)).collect();
            if !controls(&events).is_empty() {
                acted.push(mask);
            }
        }
        assert!(acted.len() <= 1, "{acted:?}");
        assert!(
            acted.iter().all(|m| m.0 == 0b11 && m.1.count_ones() == 1),
            "{acted:?}"
        );
        total += acted.len();
    }
    assert!(
        total >= 1,
        "the 3-bit case exists: it is the documented limit"
    );
}

#[test]
fn data_holding_the_expected_control_block_is_the_one_in_256_case() {
    // The limit of an 8-bit check: a payload that holds exactly the block the
    // link expects next becomes it after a two-bit sync-header flip. Over the
    // 256 link states, a fixed image is accepted in exactly one.
    let image = encode_control(&grant(1), 0).unwrap();
    let mut accepted = 0;
    for n in 0..256 {
        let (mut rx, _) = receiver_after(n);
        let flipped = Block {
            sync: image.sync,
            payload: image.payload,
        };
        accepted += controls(&rx.push(flipped)).len();
    }
    assert_eq!(accepted, 1);
}

#[test]
fn a_message_unit_between_control_blocks_keeps_the_sequence() {
    // Messages and frames do not take sequence numbers.
    let (mut rx, mut tx) = receiver_after(2);
    let m: Message = sample_messages().swap_remove(0);
    for b in encode(&m) {
        rx.push(b);
    }
    for b in encode_frame(&[0x5A; 80]) {
        rx.push(b);
    }
    assert_eq!(
        controls(&rx.push(tx.encode(&grant(9)).unwrap())),
        vec![grant(9)]
    );
    assert_eq!(rx.counters.control_missed, 0);
}
