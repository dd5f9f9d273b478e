//! Parameter and verifying-key files: round trips, memory-mapped access,
//! and the errors a truncated or corrupt file must produce (each naming the
//! file and what is wrong).

mod common;

use blstrs::G1Affine;
use common::{MixedCircuit, TempDir};
use cuzk_core::generator::generate_random_parameters;
use cuzk_core::params::{
    MappedParameters, Parameters, Section, VerifyingKey, G1_UNCOMPRESSED, G2_UNCOMPRESSED,
    VK_FIXED_BYTES,
};
use cuzk_core::Error;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::path::Path;

fn params() -> Parameters {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    generate_random_parameters(MixedCircuit::new(3, 4, 30), &mut rng).unwrap()
}

fn encode(p: &Parameters) -> Vec<u8> {
    let mut v = Vec::new();
    p.write(&mut v).unwrap();
    v
}

/// The error is a Format error naming `path`, and its text contains `needle`.
fn assert_format(r: Result<impl std::fmt::Debug, Error>, path: &Path, needle: &str) {
    match r {
        Err(Error::Format { path: p, what }) => {
            assert_eq!(p, path);
            assert!(what.contains(needle), "{what:?} lacks {needle:?}");
            let shown = Error::Format { path: p, what }.to_string();
            assert!(shown.contains(&path.display().to_string()), "{shown}");
        }
        other => panic!("expected a Format error containing {needle:?}, got {other:?}"),
    }
}

#[test]
fn round_trip_and_mapped_sections() {
    let dir = TempDir::new("rt");
    let p = params();
    let bytes = encode(&p);
    let path = dir.file("ok.params", &bytes);
    let m = MappedParameters::open(&path).unwrap();
    assert_eq!(m.vk, p.vk);
    assert_eq!(m.layout.file_len, bytes.len() as u64);
    for (s, v) in [
        (Section::H, &p.h),
        (Section::L, &p.l),
        (Section::A, &p.a),
        (Section::BG1, &p.b_g1),
    ] {
        assert_eq!(m.len(s), v.len());
        assert_eq!(m.raw(s).len(), v.len() * G1_UNCOMPRESSED);
        let v = v.in_memory().unwrap();
        assert_eq!(&m.g1(s, 0..v.len(), true).unwrap(), v);
        let mid = v.len() / 2;
        assert_eq!(m.g1(s, mid..v.len(), false).unwrap(), v[mid..].to_vec());
        assert!(m.g1(s, 0..v.len() + 1, false).is_err());
    }
    assert_eq!(
        &m.g2(0..p.b_g2.len(), true).unwrap(),
        p.b_g2.in_memory().unwrap()
    );
    assert!(m.g1(Section::BG2, 0..1, true).is_err());
    let loaded = m.load(false).unwrap();
    assert_eq!(encode(&loaded), bytes);
    // write_file produces the same bytes.
    let path2 = dir.0.join("written.params");
    p.write_file(&path2).unwrap();
    assert_eq!(std::fs::read(&path2).unwrap(), bytes);
}

/// Parameters left in their mapped file read as the decoded ones (whole,
/// by range, into a caller's buffer), refuse ranges past a section's end
/// and a section of the other group, write back the same bytes, and prove
/// the same proof on the CPU backend.
#[test]
fn mapped_parameters_read_as_decoded() {
    use cuzk_core::points::Points;
    use cuzk_core::prover::prove_assignments;
    use cuzk_core::synthesis::synthesize_batch;
    use cuzk_core::verifier::{prepare_verifying_key, verify_proof};
    use cuzk_core::CpuBackend;
    use std::sync::Arc;

    let dir = TempDir::new("mapped");
    let p = params();
    let bytes = encode(&p);
    let path = dir.file("m.params", &bytes);
    let file = Arc::new(MappedParameters::open(&path).unwrap());
    let m = Parameters::mapped(file.clone()).unwrap();
    assert!(m.is_mapped() && !p.is_mapped());
    assert!(m.h.in_memory().is_none() && m.h.file().is_some());
    assert_eq!(
        (m.h.len(), m.l.len(), m.a.len(), m.b_g1.len(), m.b_g2.len()),
        (p.h.len(), p.l.len(), p.a.len(), p.b_g1.len(), p.b_g2.len())
    );
    assert_eq!(
        (&m.h, &m.l, &m.a, &m.b_g1, &m.b_g2),
        (&p.h, &p.l, &p.a, &p.b_g1, &p.b_g2)
    );
    let n = p.a.len();
    let want = p.a.in_memory().unwrap();
    assert_eq!(&*m.a.read_range(1..n).unwrap(), &want[1..n]);
    let mut out = vec![G1Affine::default(); n - 2];
    m.a.decode_into(2, &mut out).unwrap();
    assert_eq!(&out[..], &want[2..]);
    assert!(m.a.read_range(0..n + 1).is_err());
    assert!(m.a.decode_into(3, &mut out).is_err());
    assert!(Points::<G1Affine>::mapped(file.clone(), Section::BG2).is_err());
    assert!(Points::<blstrs::G2Affine>::mapped(file.clone(), Section::H).is_err());
    // The key names the storage: the same file and section, not another.
    assert!(m
        .h
        .key()
        .holds(&Parameters::mapped(file.clone()).unwrap().h));
    assert!(!m.h.key().holds(&m.l));
    assert!(!m.h.key().holds(&p.h));
    assert_eq!(encode(&m), bytes);
    let decoded = m.to_decoded().unwrap();
    assert!(!decoded.is_mapped());
    assert_eq!(encode(&decoded), bytes);

    let circuits = vec![MixedCircuit::new(3, 4, 30)];
    let inputs = circuits[0].public_inputs();
    // The same randomness for both: the same proof bytes.
    let prove = |params: &Parameters| {
        let pas = synthesize_batch(circuits.clone()).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        prove_assignments(&CpuBackend, params, &pas, &mut rng)
            .unwrap()
            .0
    };
    let (from_file, from_memory) = (prove(&m), prove(&p));
    assert_eq!(from_file, from_memory);
    let pvk = prepare_verifying_key(&m.vk);
    assert!(verify_proof(&pvk, &from_file[0], &inputs).unwrap());
    let mut wrong = inputs.clone();
    wrong[0] += blstrs::Scalar::from(1u64);
    assert!(!verify_proof(&pvk, &from_file[0], &wrong).unwrap());
}

#[test]
fn truncated_files_name_the_file() {
    let dir = TempDir::new("trunc");
    let bytes = encode(&params());
    let vk_len = params().vk.encoded_len();
    for cut in [
        0usize,
        1,
        95,
        VK_FIXED_BYTES + 2,
        vk_len + 2,
        vk_len + 4 + 96 * 3 + 5,
        bytes.len() - 1,
    ] {
        let path = dir.file(&format!("cut{cut}.params"), &bytes[..cut]);
        assert_format(Parameters::read_file(&path, true), &path, "truncated");
        assert_format(
            MappedParameters::open(&path).map(|_| ()),
            &path,
            "truncated",
        );
    }
}

#[test]
fn corrupt_files_name_the_file() {
    let dir = TempDir::new("corrupt");
    let p = params();
    let bytes = encode(&p);

    // Trailing garbage.
    let mut long = bytes.clone();
    long.extend_from_slice(&[0u8; 7]);
    let path = dir.file("long.params", &long);
    assert_format(
        Parameters::read_file(&path, false),
        &path,
        "7 trailing bytes",
    );

    // A section count far beyond the file.
    let vk_len = p.vk.encoded_len();
    let mut huge = bytes.clone();
    huge[vk_len..vk_len + 4].copy_from_slice(&u32::MAX.to_be_bytes());
    let path = dir.file("huge.params", &huge);
    assert_format(Parameters::read_file(&path, false), &path, "section h");

    // A point off the curve in l (checked or not).
    let m = MappedParameters::open(&dir.file("ok.params", &bytes)).unwrap();
    let l_off = m.layout.sections[1].1 as usize;
    let mut bad = bytes.clone();
    bad[l_off + 2 * G1_UNCOMPRESSED + 50] ^= 0x40;
    let path = dir.file("offcurve.params", &bad);
    assert_format(Parameters::read_file(&path, false), &path, "l point 2");
    assert_format(Parameters::read_file(&path, true), &path, "l point 2");

    // The point at infinity in a.
    let a_off = m.layout.sections[2].1 as usize;
    let mut inf = bytes.clone();
    inf[a_off..a_off + G1_UNCOMPRESSED].fill(0);
    inf[a_off] = 0x40;
    let path = dir.file("inf.params", &inf);
    assert_format(Parameters::read_file(&path, false), &path, "infinity");

    // A G2 point off the curve in b_g2 (checked or not), named as G2.
    let g2_off = m.layout.sections[4].1 as usize;
    let mut bad2 = bytes.clone();
    bad2[g2_off + G2_UNCOMPRESSED + 100] ^= 0x40;
    let path = dir.file("offcurve-g2.params", &bad2);
    for checked in [false, true] {
        assert_format(Parameters::read_file(&path, checked), &path, "b_g2 point 1");
        assert_format(
            Parameters::read_file(&path, checked),
            &path,
            "not a valid G2 point",
        );
    }

    // A point on the curve but outside the subgroup: accepted unchecked,
    // rejected checked.
    let mut sub = bytes.clone();
    sub[l_off..l_off + G1_UNCOMPRESSED].copy_from_slice(&off_subgroup_point());
    let path = dir.file("subgroup.params", &sub);
    assert!(Parameters::read_file(&path, false).is_ok());
    assert_format(Parameters::read_file(&path, true), &path, "subgroup");

    // Deep in a long section (past the first parallel work item), the
    // index and offset are still the point's own.
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    let big =
        generate_random_parameters(cuzk_core::circuits::PorepLikeCircuit::new(12, 0), &mut rng)
            .unwrap();
    let big_bytes = encode(&big);
    let bm = MappedParameters::open(&dir.file("big.params", &big_bytes)).unwrap();
    let h_off = bm.layout.sections[0].1 as usize;
    let at = h_off + 3000 * G1_UNCOMPRESSED;
    let mut deep = big_bytes.clone();
    deep[at + 47] ^= 0x10;
    let path = dir.file("deep.params", &deep);
    assert_format(
        Parameters::read_file(&path, false),
        &path,
        &format!("h point 3000 at offset {at}"),
    );

    // A corrupt verifying key (alpha off the curve) fails even unchecked.
    let mut vk_bad = bytes.clone();
    vk_bad[40] ^= 0x01;
    let path = dir.file("vk.params", &vk_bad);
    assert_format(Parameters::read_file(&path, false), &path, "alpha_g1");

    // A missing file is an I/O error naming it.
    let missing = dir.0.join("missing.params");
    match Parameters::read_file(&missing, false) {
        Err(Error::Io { path, .. }) => assert_eq!(path, missing),
        other => panic!("{other:?}"),
    }
}

/// A file the size of a large Filecoin parameter file (2^27 h points,
/// 12 GiB) opens by reading only its headers: the points lie in a sparse
/// hole that is never read. Decoding a slice of them then fails on the
/// first (all-zero) point with an error naming the section and offset.
#[test]
fn huge_file_opens_without_being_read() {
    use std::io::{Seek, SeekFrom, Write};
    let dir = TempDir::new("huge");
    let vk = params().vk;
    let path = dir.0.join("huge.params");
    let h_count: u64 = 1 << 27;
    {
        let mut f = std::fs::File::create(&path).unwrap();
        vk.write(&mut f).unwrap();
        f.write_all(&(h_count as u32).to_be_bytes()).unwrap();
        let h_end = vk.encoded_len() as u64 + 4 + h_count * G1_UNCOMPRESSED as u64;
        f.seek(SeekFrom::Start(h_end)).unwrap();
        f.write_all(&[0u8; 16]).unwrap(); // l, a, b_g1, b_g2: empty
    }
    let m = MappedParameters::open(&path).unwrap();
    assert_eq!(m.len(Section::H), h_count as usize);
    assert_eq!(m.len(Section::BG2), 0);
    assert_eq!(
        m.raw(Section::H).len() as u64,
        h_count * G1_UNCOMPRESSED as u64
    );
    let first = vk.encoded_len() + 4 + 10 * G1_UNCOMPRESSED;
    assert_format(
        m.g1(Section::H, 10..12, false),
        &path,
        &format!("h point 10 at offset {first}"),
    );
}

#[test]
fn vk_files() {
    let dir = TempDir::new("vk");
    let vk = params().vk;
    let path = dir.0.join("k.vk");
    vk.write_file(&path).unwrap();
    assert_eq!(VerifyingKey::read_file(&path, true).unwrap(), vk);
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes.len(), vk.encoded_len());
    let cut = dir.file("cut.vk", &bytes[..bytes.len() - 10]);
    assert_format(VerifyingKey::read_file(&cut, true), &cut, "truncated");
    let mut long = bytes.clone();
    long.push(0);
    let long = dir.file("long.vk", &long);
    assert_format(VerifyingKey::read_file(&long, true), &long, "trailing");
    // A cut inside the ic points is reported as such (only the key's bytes
    // are read).
    let in_ic = dir.file("in-ic.vk", &bytes[..VK_FIXED_BYTES + 4 + 50]);
    assert_format(VerifyingKey::read_file(&in_ic, true), &in_ic, "vk ic");
}

#[test]
fn mixed_up_files_are_named_for_what_they_are() {
    let dir = TempDir::new("mixup");
    let p = params();
    let params_path = dir.file("p.params", &encode(&p));
    let vk_path = dir.0.join("p.vk");
    p.vk.write_file(&vk_path).unwrap();

    // A .params file where a key is expected, and the other way round.
    assert_format(
        VerifyingKey::read_file(&params_path, true),
        &params_path,
        "a .params file starts with its verifying key",
    );
    assert_format(
        MappedParameters::open(&vk_path).map(|_| ()),
        &vk_path,
        "a .vk file?",
    );
    assert_format(
        Parameters::read_file(&vk_path, false),
        &vk_path,
        "a .vk file?",
    );

    // A directory: named as one, for both kinds of file.
    assert_format(
        MappedParameters::open(&dir.0).map(|_| ()),
        &dir.0,
        "is a directory",
    );
    assert_format(
        VerifyingKey::read_file(&dir.0, true),
        &dir.0,
        "is a directory",
    );
}

/// Uncompressed encoding of a point on y² = x³ + 4 that is not in G1
/// (the cofactor is large, so a random curve point almost never is).
/// Decompressing without the subgroup check finds one.
fn off_subgroup_point() -> [u8; 96] {
    let mut rng = ChaCha20Rng::seed_from_u64(77);
    loop {
        let mut x = [0u8; 48];
        rng.fill_bytes(&mut x);
        x[0] = 0x80 | (x[0] & 0x0f); // compressed flag, x below p
        if let Some(p) = Option::<G1Affine>::from(G1Affine::from_compressed_unchecked(&x)) {
            if !bool::from(p.is_torsion_free()) {
                return p.to_uncompressed();
            }
        }
    }
}

/// Seeded random damage to a parameter file and its key: every
/// reader answers Ok or a typed error (never a panic), and whatever it
/// accepts encodes back to exactly the bytes it read (nothing is silently
/// repaired or misread).
#[test]
fn random_damage_is_refused_or_read_exactly() {
    let p = params();
    let good = encode(&p);
    let vk_len = p.vk.encoded_len();
    let path = Path::new("damaged.params");
    let mut rng = ChaCha20Rng::seed_from_u64(0xda3a6e);
    let (mut accepted, mut refused) = (0, 0);
    let m = MappedParameters::open(&TempDir::new("damage").file("g.params", &good)).unwrap();
    let (h_at, h_len) = (m.layout.sections[0].1 as usize, m.len(Section::H));
    for round in 0..500u32 {
        let mut bytes = good.clone();
        match round % 5 {
            // Two whole points of h swapped: a different, valid file.
            4 => {
                let i = h_at + (rng.next_u32() as usize % h_len) * G1_UNCOMPRESSED;
                let j = h_at + (rng.next_u32() as usize % h_len) * G1_UNCOMPRESSED;
                let pi: Vec<u8> = bytes[i..i + G1_UNCOMPRESSED].to_vec();
                bytes.copy_within(j..j + G1_UNCOMPRESSED, i);
                bytes[j..j + G1_UNCOMPRESSED].copy_from_slice(&pi);
            }
            // Overwrite 1..8 bytes anywhere.
            0 => {
                for _ in 0..1 + rng.next_u32() % 8 {
                    let i = rng.next_u32() as usize % bytes.len();
                    bytes[i] = rng.next_u32() as u8;
                }
            }
            // Cut anywhere.
            1 => bytes.truncate(rng.next_u32() as usize % bytes.len()),
            // A section length (or the ic count) replaced.
            2 => {
                let k = rng.next_u32() as usize % 6;
                let at = if k == 5 {
                    VK_FIXED_BYTES
                } else {
                    m.layout.sections[k].1 as usize - 4
                };
                let v = match rng.next_u32() % 3 {
                    0 => 0,
                    1 => u32::MAX,
                    _ => rng.next_u32() % 64,
                };
                bytes[at..at + 4].copy_from_slice(&v.to_be_bytes());
            }
            // Flip one bit in a point's flag byte (compression, infinity, sign).
            _ => {
                let i =
                    (rng.next_u32() as usize % (bytes.len() / G1_UNCOMPRESSED)) * G1_UNCOMPRESSED;
                bytes[i] ^= 0x80 >> (rng.next_u32() % 3);
            }
        }
        for checked in [false, true] {
            match Parameters::read_bytes(&bytes, path, checked) {
                Ok(read) => {
                    accepted += 1;
                    assert_eq!(encode(&read), bytes, "round {round}: accepted bytes differ");
                }
                Err(Error::Format { .. }) => refused += 1,
                Err(e) => panic!("round {round}: not a Format error: {e:?}"),
            }
        }
        let vk_bytes = &bytes[..vk_len.min(bytes.len())];
        if let Ok((vk, used)) = VerifyingKey::read_bytes(vk_bytes, path, true) {
            let mut back = Vec::new();
            vk.write(&mut back).unwrap();
            assert_eq!(back, vk_bytes[..used], "round {round}: key bytes differ");
        }
    }
    // Both outcomes happen (the swaps are accepted), so both paths are
    // exercised.
    assert!(
        accepted > 0 && refused > accepted,
        "{accepted} accepted, {refused} refused"
    );
}
