//! Clause 49 frames and the scrambler.
use edm_proto::pcs::*;
use edm_proto::spec::*;
use edm_proto::Block;
use proptest::collection::vec;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn frames_round_trip(frame in vec(any::<u8>(), ETH_MIN_FRAME_BYTES as usize..=ETH_MAX_FRAME_BYTES as usize)) {
        let blocks = encode_frame(&frame);
        prop_assert_eq!(blocks.len(), (frame.len() + ETH_PREAMBLE_BYTES as usize + 1).div_ceil(8));
        prop_assert!(blocks[1..blocks.len() - 1].iter().all(Block::is_data));
        let words = xgmii_decode(&blocks).unwrap();
        prop_assert_eq!(xgmii_encode(&words), Ok(blocks.clone()));
        prop_assert_eq!(decode_frame(&blocks), Ok(frame));
    }

    #[test]
    fn descramble_after_scramble_is_identity(state in any::<u64>(), payloads in vec(any::<u64>(), 1..50)) {
        let mut tx = Scrambler::new(state);
        let mut rx = Descrambler::new(state);
        for &p in &payloads {
            prop_assert_eq!(rx.descramble(tx.scramble(p)), p);
        }
    }

    #[test]
    fn descrambler_locks_after_58_bits(tx_state in any::<u64>(), rx_state in any::<u64>(), payloads in vec(any::<u64>(), 2..20)) {
        let mut tx = Scrambler::new(tx_state);
        let mut rx = Descrambler::new(rx_state);
        let locked_bits = !0u64 << SCRAMBLER_STATE_BITS;
        for (i, &p) in payloads.iter().enumerate() {
            let out = rx.descramble(tx.scramble(p));
            let mask = if i == 0 { locked_bits } else { !0 };
            prop_assert_eq!(out & mask, p & mask);
        }
    }
}

#[test]
fn scrambler_is_not_the_identity_and_defaults_to_all_ones() {
    assert_eq!(Scrambler::default(), Scrambler::new(u64::MAX));
    let mut s = Scrambler::default();
    // With all-ones state, x^39 and x^58 taps cancel for the first 39 bits.
    let first = s.scramble(0);
    assert_eq!(first & ((1 << 39) - 1), 0);
    assert_ne!(first, 0);
}

#[test]
fn a_wrong_descrambler_state_corrupts_only_the_first_58_bits() {
    let mut tx = Scrambler::default();
    let mut rx = Descrambler::new(0);
    let out = rx.descramble(tx.scramble(0));
    assert_ne!(out, 0);
    assert_eq!(out >> SCRAMBLER_STATE_BITS, 0);
}
