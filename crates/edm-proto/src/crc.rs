//! The two checksums of the protocol, bitwise (no tables): hardware computes
//! them in parallel logic, and the golden model only needs to be obviously right.
use crate::spec::{CRC32C_POLY_REFLECTED, CRC8_POLY};

/// CRC-32C (Castagnoli): reflected, init and final xor all ones.
pub fn crc32c(bytes: &[u8]) -> u32 {
    let mut crc = u32::MAX;
    for &b in bytes {
        crc ^= b as u32;
        for _ in 0..8 {
            let lsb = crc & 1;
            crc = (crc >> 1) ^ (CRC32C_POLY_REFLECTED & lsb.wrapping_neg());
        }
    }
    !crc
}

/// CRC-8 (x^8+x^2+x+1): init 0, not reflected, each byte MSB first.
pub fn crc8(bytes: &[u8]) -> u8 {
    crc8_from(0, bytes)
}

/// The same CRC-8 with its register starting at `init`.
pub fn crc8_from(init: u8, bytes: &[u8]) -> u8 {
    let mut crc = init;
    for &b in bytes {
        crc = crc8_shift(crc ^ b, 8);
    }
    crc
}

/// A CRC-8 register after `bits` zero bits.
pub fn crc8_shift(mut crc: u8, bits: u32) -> u8 {
    for _ in 0..bits {
        crc = if crc & 0x80 != 0 {
            (crc << 1) ^ CRC8_POLY
        } else {
            crc << 1
        };
    }
    crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_values() {
        // The catalogue check values of CRC-32/ISCSI and CRC-8/SMBUS.
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc8(b"123456789"), 0xF4);
        assert_eq!(crc32c(b""), 0);
        // RFC 3720 B.4: 32 bytes of zeros, of ones.
        assert_eq!(crc32c(&[0u8; 32]), 0x8A91_36AA);
        assert_eq!(crc32c(&[0xFFu8; 32]), 0x62A8_AB43);
    }

    #[test]
    fn a_start_value_moves_the_crc8_by_a_shift_that_undoes() {
        // Linear: the start value adds its own shift; x has order 127, so
        // CTL_SEQ_INV_SHIFT more zero bits undo the 56 of seven bytes.
        use crate::spec::CTL_SEQ_INV_SHIFT;
        let bytes = [1, 2, 3, 4, 5, 6, 7];
        for s in 0..=255u8 {
            assert_eq!(crc8_from(s, &bytes), crc8(&bytes) ^ crc8_shift(s, 56));
            assert_eq!(crc8_shift(crc8_shift(s, 56), CTL_SEQ_INV_SHIFT), s);
        }
        assert_eq!(crc8_shift(1, 56 + CTL_SEQ_INV_SHIFT), 1);
        assert!((1..127).all(|k| crc8_shift(1, k) != 1), "order 127");
    }
}
