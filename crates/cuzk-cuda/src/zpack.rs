//! The layout of a witness piece sent up "packed by 0/1" and a model of
//! the kernel that expands it (`expand_z` in kernels/zpack.cuh), so that
//! the host side that writes it (cuzk-gpu's upload) is tested against the
//! same rules on machines without a GPU.
//!
//! A piece of `n` Montgomery scalars packs into a header of three `u32`
//! words per group of [`GROUP`] elements, (nonzero mask, big mask, offset),
//! where bit `i` of a mask stands for element `GROUP * g + i`, "big" means
//! neither 0 nor the Montgomery one, and offset counts the piece's big
//! elements before the group; then, from [`data_offset`], the big elements'
//! 32 bytes in order. Words are little-endian (the device's order).

use blstrs::Scalar;
use ff::Field;

use crate::host::{scalars_as_bytes, FR_BYTES};

/// Elements per group: one bit of a `u32` mask each.
pub const GROUP: usize = 32;
/// Header words per group: nonzero mask, big mask, offset.
pub const HEADER_WORDS: usize = 3;
/// The data's alignment within a packed piece: the kernel reads it as
/// `u64`s, and whole elements start on 32 bytes as in z itself.
pub const DATA_ALIGN: usize = 32;

/// Groups of a piece of `n` elements (the last one may be partial).
pub fn groups(n: usize) -> usize {
    n.div_ceil(GROUP)
}

/// Byte offset of the big elements' data in a packed piece of `n`
/// elements: the header, rounded up to [`DATA_ALIGN`].
pub fn data_offset(n: usize) -> usize {
    (groups(n) * HEADER_WORDS * 4).next_multiple_of(DATA_ALIGN)
}

/// Bytes of a packed piece of `n` elements, `big` of them big.
pub fn packed_bytes(n: usize, big: usize) -> usize {
    data_offset(n) + big * FR_BYTES
}

/// The Montgomery one's bytes as z holds them (R mod r).
pub fn one_bytes() -> [u8; FR_BYTES] {
    let mut out = [0u8; FR_BYTES];
    out.copy_from_slice(scalars_as_bytes(&[Scalar::ONE]));
    out
}

/// Why a packed piece cannot be expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExpandError {
    /// The piece is shorter than its header or than the data it names.
    Short { need: usize, have: usize },
}

/// What `expand_z` writes for a packed piece of `n` elements: z's `n * 32`
/// bytes. The kernel's rules, one element at a time (tests only: the
/// device does this).
pub fn expand(packed: &[u8], n: usize) -> Result<Vec<u8>, ExpandError> {
    let data = data_offset(n);
    if packed.len() < data {
        return Err(ExpandError::Short {
            need: data,
            have: packed.len(),
        });
    }
    let word = |i: usize| {
        let b = &packed[4 * i..4 * i + 4];
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    };
    let one = one_bytes();
    let mut z = vec![0u8; n * FR_BYTES];
    for (e, out) in z.chunks_exact_mut(FR_BYTES).enumerate() {
        let (g, bit) = (e / GROUP, 1u32 << (e % GROUP));
        let h = HEADER_WORDS * g;
        let (nonzero, big, offset) = (word(h), word(h + 1), word(h + 2));
        if nonzero & bit == 0 {
            continue;
        }
        if big & bit == 0 {
            out.copy_from_slice(&one);
            continue;
        }
        let idx = offset as usize + (big & (bit - 1)).count_ones() as usize;
        let at = data + idx * FR_BYTES;
        let value = packed.get(at..at + FR_BYTES).ok_or(ExpandError::Short {
            need: at + FR_BYTES,
            have: packed.len(),
        })?;
        out.copy_from_slice(value);
    }
    Ok(z)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_sizes() {
        assert_eq!(data_offset(0), 0);
        assert_eq!(data_offset(1), 32);
        assert_eq!(data_offset(32), 32);
        // 3 groups: 36 header bytes, rounded to 64.
        assert_eq!(data_offset(65), 64);
        assert_eq!(packed_bytes(65, 2), 128);
    }

    #[test]
    fn one_is_r_mod_r() {
        // The kernel's constant (FrParams::one in field.cuh), low limb first.
        let want: [u32; 8] = [
            0xfffffffe, 0x00000001, 0x00034802, 0x5884b7fa, 0xecbc4ff5, 0x998c4fef, 0xacc5056f,
            0x1824b159,
        ];
        let got: Vec<u32> = one_bytes()
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_header_naming_missing_data_is_an_error() {
        // One element, marked big, no data after the header.
        let mut packed = vec![0u8; data_offset(1)];
        packed[0..4].copy_from_slice(&1u32.to_le_bytes());
        packed[4..8].copy_from_slice(&1u32.to_le_bytes());
        assert!(matches!(expand(&packed, 1), Err(ExpandError::Short { .. })));
        assert!(matches!(expand(&[], 1), Err(ExpandError::Short { .. })));
    }
}
