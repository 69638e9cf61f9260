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
    let mut crc = 0u8;
    for &b in bytes {
        crc ^= b;
        for _ in 0..8 {
            crc = if crc & 0x80 != 0 {
                (crc << 1) ^ CRC8_POLY
            } else {
                crc << 1
            };
        }
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
}
