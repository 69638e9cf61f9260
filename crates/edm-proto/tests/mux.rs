//! The TX multiplexer and RX demultiplexer together.
mod common;

use common::*;
use edm_proto::control::encode_control;
use edm_proto::mux::{tx_mux, Event, Policy, RxError};
use edm_proto::pcs::{encode_frame, gap_blocks_after};
use edm_proto::spec::*;
use edm_proto::Block;
use proptest::collection::vec;
use proptest::prelude::*;

fn arb_frame() -> impl Strategy<Value = Vec<u8>> {
    vec(
        any::<u8>(),
        ETH_MIN_FRAME_BYTES as usize..=ETH_MAX_FRAME_BYTES as usize,
    )
}

fn arb_policy() -> impl Strategy<Value = Policy> {
    prop_oneof![Just(Policy::Fair), Just(Policy::Strict)]
}

/// Arrival slots: non-decreasing, starting anywhere in 0..200.
fn with_times<T: std::fmt::Debug + Clone>(items: Vec<T>, gaps: Vec<u64>) -> Vec<(u64, T)> {
    let mut t = 0;
    items
        .into_iter()
        .zip(gaps.into_iter().chain(std::iter::repeat(0)))
        .map(|(x, g)| {
            t += g;
            (t, x)
        })
        .collect()
}

/// The standard line: each frame once it has arrived and the gap has passed, idles otherwise.
fn standard_line(frames: &[(u64, Vec<u8>)]) -> Vec<Block> {
    let mut line = Vec::new();
    let mut earliest = 0u64;
    for (at, bytes) in frames {
        while (line.len() as u64) < earliest.max(*at) {
            line.push(Block::idle());
        }
        let blocks = encode_frame(bytes);
        line.extend(&blocks);
        earliest = line.len() as u64 + gap_blocks_after(*blocks.last().unwrap()) as u64;
    }
    line
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn any_interleaving_round_trips(
        frames in vec(arb_frame(), 0..4),
        frame_gaps in vec(0u64..200, 0..4),
        units in vec(arb_unit(300), 0..12),
        unit_gaps in vec(0u64..60, 0..12),
        policy in arb_policy(),
    ) {
        let frames = with_times(frames, frame_gaps);
        let units = with_times(units, unit_gaps);
        let frame_blocks: Vec<(u64, Vec<Block>)> = frames.iter().map(|(t, f)| (*t, encode_frame(f))).collect();
        // The multiplexer sends units in order, so they are numbered in order.
        let mut tx = edm_proto::control::ControlTx::default();
        let unit_blocks: Vec<(u64, Vec<Block>)> = units.iter().map(|(t, u)| (*t, u.blocks(&mut tx))).collect();
        let line = tx_mux(&frame_blocks, &unit_blocks, policy);
        let (events, rx) = demux_all(&line);
        let mut got_units = vec![];
        let mut got_frames = vec![];
        for e in events {
            match e {
                Event::Message(m) => got_units.push(Unit::Message(m)),
                Event::Control(c) => got_units.push(Unit::Control(c)),
                Event::Frame { blocks, bytes } => {
                    prop_assert_eq!(&blocks, &encode_frame(&bytes), "rebuilt as consecutive blocks");
                    got_frames.push(bytes);
                }
                Event::Error(e) => prop_assert!(false, "error {:?}", e),
            }
        }
        prop_assert_eq!(got_units, units.into_iter().map(|(_, u)| u).collect::<Vec<_>>());
        prop_assert_eq!(got_frames, frames.iter().map(|(_, f)| f.clone()).collect::<Vec<_>>());
        prop_assert_eq!(rx.counters.frames_ok as usize, frames.len());
    }

    #[test]
    fn without_memory_traffic_the_line_is_the_standard_encoding(
        frames in vec(arb_frame(), 0..5),
        gaps in vec(0u64..300, 0..5),
        policy in arb_policy(),
    ) {
        let frames = with_times(frames, gaps);
        let frame_blocks: Vec<(u64, Vec<Block>)> = frames.iter().map(|(t, f)| (*t, encode_frame(f))).collect();
        prop_assert_eq!(tx_mux(&frame_blocks, &[], policy), standard_line(&frames));
    }
}

#[test]
fn a_frame_preempted_at_every_block_position_still_decodes() {
    let bytes: Vec<u8> = (0..203u32).map(|i| (i * 7) as u8).collect();
    let frame = encode_frame(&bytes);
    let message = sample_messages().swap_remove(4);
    let grant = encode_control(
        &edm_proto::Control {
            kind: edm_proto::ControlKind::Grant,
            dst: 9,
            msg_id: 1,
            size: 64,
        },
        0,
    )
    .unwrap();
    for at in 1..frame.len() {
        let mut line = frame[..at].to_vec();
        line.extend(edm_proto::message::encode(&message));
        line.push(grant);
        line.extend(&frame[at..]);
        let (events, rx) = demux_all(&line);
        assert_eq!(events.len(), 3, "at {at}: {events:?}");
        assert_eq!(events[0], Event::Message(message.clone()));
        assert!(matches!(events[1], Event::Control(_)));
        assert_eq!(
            events[2],
            Event::Frame {
                blocks: frame.clone(),
                bytes: bytes.clone()
            }
        );
        assert_eq!(
            (
                rx.counters.frames_ok,
                rx.counters.messages_ok,
                rx.counters.grants_ok
            ),
            (1, 1, 1)
        );
    }
}

/// Which source each output slot came from: 'U' unit, 'F' frame, '.' idle.
fn pattern(policy: Policy) -> String {
    let frame = encode_frame(&[0; 64]); // 10 blocks
    let grant = encode_control(
        &edm_proto::Control {
            kind: edm_proto::ControlKind::Grant,
            dst: 1,
            msg_id: 1,
            size: 8,
        },
        0,
    )
    .unwrap();
    let units: Vec<(u64, Vec<Block>)> = vec![(0, vec![grant]); 4];
    let line = tx_mux(&[(0, frame.clone())], &units, policy);
    line.iter()
        .map(|b| {
            if *b == grant {
                'U'
            } else if frame.contains(b) {
                'F'
            } else {
                '.'
            }
        })
        .collect()
}

#[test]
fn fair_alternates_and_strict_puts_memory_first() {
    assert_eq!(pattern(Policy::Fair), "UFUFUFUFFFFFFF");
    assert_eq!(pattern(Policy::Strict), "UUUUFFFFFFFFFF");
}

#[test]
fn memory_units_are_never_split_and_use_the_inter_frame_gap() {
    let frames: Vec<(u64, Vec<Block>)> =
        vec![(0, encode_frame(&[1; 64])), (0, encode_frame(&[2; 64]))];
    let message = edm_proto::message::encode(&sample_messages()[0]);
    // The message arrives as the first frame's /T/ goes out: it takes the gap slot.
    let line = tx_mux(&frames, &[(10, message.clone())], Policy::Fair);
    assert_eq!(&line[10..13], &message[..]);
    assert_eq!(line.len(), 10 + 3 + 10);
    let (events, rx) = demux_all(&line);
    assert!(events
        .iter()
        .all(|e| !matches!(e, Event::Error(RxError::BadFrame))));
    assert_eq!((rx.counters.frames_ok, rx.counters.messages_ok), (2, 1));
}

#[test]
fn the_receiver_follows_the_layout_announced_by_ms() {
    let message = sample_messages()[0].clone(); // RREQ: /MS/ /MD/ /MT/
    let blocks = edm_proto::message::encode(&message);
    // An extra data block where /MT/ is due aborts the message; it and /MT/ are then stray.
    let (events, rx) = demux_all(&[blocks[0], blocks[1], Block::data(7), blocks[2]]);
    assert_eq!(
        events,
        vec![
            Event::Error(RxError::Corrupted),
            Event::Error(RxError::BadFrame),
            Event::Error(RxError::Corrupted)
        ]
    );
    assert_eq!((rx.counters.corrupted, rx.counters.frames_bad), (2, 1));
    // An /MS/ with an invalid kind is counted at once.
    let mut bad_kind = blocks[0];
    bad_kind.payload &= !(((1 << HDR_KIND_W) - 1) << 16);
    assert_eq!(
        demux_all(&[bad_kind]).0,
        vec![Event::Error(RxError::Corrupted)]
    );
}

#[test]
fn broken_frames_are_counted_once() {
    let frame = encode_frame(&[5; 100]);
    // Data with no frame open, then the rest of that frame: one bad frame.
    let (events, rx) = demux_all(&frame[1..]);
    assert_eq!(events, vec![Event::Error(RxError::BadFrame)]);
    assert_eq!(rx.counters.frames_bad, 1);
    // An idle inside a frame breaks it; the next frame is fine.
    let mut line = frame[..4].to_vec();
    line.push(Block::idle());
    line.extend(&frame);
    let (events, rx) = demux_all(&line);
    assert_eq!(events.len(), 2);
    assert_eq!(events[0], Event::Error(RxError::BadFrame));
    assert_eq!((rx.counters.frames_bad, rx.counters.frames_ok), (1, 1));
}

/// The longest run of consecutive blocks that are not idle.
fn longest_run_without_idle(line: &[Block]) -> usize {
    line.split(|b| *b == Block::idle())
        .map(<[Block]>::len)
        .max()
        .unwrap_or(0)
}

#[test]
fn a_fully_loaded_line_keeps_an_idle_in_every_idle_period() {
    // Memory units waiting all the time, and jumbo frames back to back: EDM
    // would fill every gap; the rate-matching rule keeps one idle per period.
    let messages = sample_messages();
    let mut tx = edm_proto::control::ControlTx::default();
    let units: Vec<(u64, Vec<Block>)> = (0..3000)
        .map(|i| {
            let unit = if i % 3 == 0 {
                Unit::Control(edm_proto::Control {
                    kind: edm_proto::ControlKind::Grant,
                    dst: 3,
                    msg_id: i as u8,
                    size: 64,
                })
            } else {
                Unit::Message(messages[i % messages.len()].clone())
            };
            (0, unit.blocks(&mut tx))
        })
        .collect();
    let frames: Vec<(u64, Vec<Block>)> = (0..8u8)
        .map(|i| (0, encode_frame(&vec![i; ETH_MAX_FRAME_BYTES as usize])))
        .collect();
    for policy in [Policy::Fair, Policy::Strict] {
        let line = tx_mux(&frames, &units, policy);
        assert!(line.len() > 4 * IDLE_PERIOD_BLOCKS as usize);
        assert!(longest_run_without_idle(&line) < IDLE_PERIOD_BLOCKS as usize);
        let idles = line.iter().filter(|b| **b == Block::idle()).count();
        assert!(idles * 400 < line.len(), "{idles} idles in {}", line.len());
        let (events, rx) = demux_all(&line);
        assert!(events.iter().all(|e| !matches!(e, Event::Error(_))));
        assert_eq!(rx.counters.frames_ok, 8);
        assert_eq!(
            rx.counters.messages_ok + rx.counters.grants_ok,
            units.len() as u64
        );
    }
}
