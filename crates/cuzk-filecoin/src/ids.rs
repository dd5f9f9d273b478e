//! Values as Lotus and Curio hand them over in text or numbers: 32-byte
//! values (randomness, prover ids, commitments) in hex, and a miner's
//! prover id from its actor id. Shared by every front end (the command
//! line, the daemon's job inputs, Curio's requests) and the synthetic C1.

use crate::{Error, Readable, Result};

/// 32 bytes from 64 hex digits (an optional 0x prefix allowed).
pub fn parse_hex32(s: &str, what: &str) -> Result<[u8; 32]> {
    let t = s.trim();
    let t = t.strip_prefix("0x").unwrap_or(t);
    let bad = || Error::Unreadable {
        what: Readable::Hex32 { field: what.into() },
        given: s.into(),
    };
    if t.len() != 64 || !t.is_ascii() {
        return Err(bad());
    }
    let mut out = [0u8; 32];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&t[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    Ok(out)
}

/// The prover id of a miner: its ID address's payload (the actor id as an
/// unsigned LEB128 varint), left-aligned in 32 bytes, as Lotus and Curio
/// derive it.
pub fn prover_id_from_miner(miner_id: u64) -> [u8; 32] {
    let mut out = [0u8; 32];
    let mut v = miner_id;
    let mut i = 0;
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out[i] = byte;
            return out;
        }
        out[i] = byte | 0x80;
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_and_prover_ids() {
        let h = "00".repeat(31) + "ff";
        assert_eq!(parse_hex32(&h, "x").unwrap()[31], 0xff);
        assert_eq!(parse_hex32(&format!("0x{h}"), "x").unwrap()[31], 0xff);
        assert!(parse_hex32(&h[2..], "x").is_err());
        assert!(parse_hex32(&("zz".to_string() + &h[2..]), "x").is_err());
        assert!(parse_hex32(&("é".to_string() + &h[3..]), "x").is_err());
        assert_eq!(prover_id_from_miner(0)[..2], [0, 0]);
        assert_eq!(prover_id_from_miner(127)[..2], [0x7f, 0]);
        assert_eq!(prover_id_from_miner(128)[..3], [0x80, 0x01, 0]);
        assert_eq!(prover_id_from_miner(1000)[..3], [0xe8, 0x07, 0]);
        assert_eq!(prover_id_from_miner(u64::MAX)[9], 0x01);
    }
}
