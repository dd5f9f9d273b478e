//! The subgroup check of parameter points behind its seam
//! (`cuzk_core::subgroup`): the CPU checker refuses a file with one query
//! point moved out of the subgroup, naming the section, the index and the
//! offset, and accepts the good file; the loader hands every section to the
//! checker it is given (a test double here, a GPU's in a daemon) and turns
//! the index it reports into the same error.

mod common;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective};
use common::TempDir;
use cuzk_core::params::{
    MappedParameters, Parameters, Section, VerifyingKey, G1_UNCOMPRESSED, G2_UNCOMPRESSED,
};
use cuzk_core::subgroup::{CpuSubgroupChecker, SubgroupChecker};
use cuzk_core::Error;
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::path::Path;
use std::sync::{Arc, Mutex};

const LENS: [(Section, usize); 5] = [
    (Section::H, 9),
    (Section::L, 7),
    (Section::A, 5),
    (Section::BG1, 6),
    (Section::BG2, 4),
];

fn g1s(rng: &mut ChaCha20Rng, n: usize) -> Arc<Vec<G1Affine>> {
    Arc::new(
        (0..n)
            .map(|_| G1Projective::random(&mut *rng).to_affine())
            .collect(),
    )
}

/// Parameters of random subgroup points (their shape is all the loader
/// looks at).
fn params(rng: &mut ChaCha20Rng) -> Parameters {
    let g1 = G1Affine::generator();
    let g2 = G2Affine::generator();
    Parameters {
        vk: VerifyingKey {
            alpha_g1: g1,
            beta_g1: g1,
            beta_g2: g2,
            gamma_g2: g2,
            delta_g1: g1,
            delta_g2: g2,
            ic: vec![g1; 2],
        },
        h: g1s(rng, LENS[0].1).into(),
        l: g1s(rng, LENS[1].1).into(),
        a: g1s(rng, LENS[2].1).into(),
        b_g1: g1s(rng, LENS[3].1).into(),
        b_g2: Arc::new(
            (0..LENS[4].1)
                .map(|_| G2Projective::random(&mut *rng).to_affine())
                .collect::<Vec<_>>(),
        )
        .into(),
    }
}

fn encode(p: &Parameters) -> Vec<u8> {
    let mut v = Vec::new();
    p.write(&mut v).unwrap();
    v
}

/// A point on the curve outside the subgroup, uncompressed: a random x
/// decompressed without the subgroup check (the cofactors are large, so
/// such a point is almost never in the subgroup; checked).
fn outside(rng: &mut ChaCha20Rng, g2: bool) -> Vec<u8> {
    loop {
        if g2 {
            let mut x = [0u8; 96];
            rng.fill_bytes(&mut x);
            x[0] = 0x80 | (x[0] & 0x0f); // compressed, x.c1 below p
            x[48] &= 0x0f; // x.c0 below p
            if let Some(p) = Option::<G2Affine>::from(G2Affine::from_compressed_unchecked(&x)) {
                if !bool::from(p.is_torsion_free()) && bool::from(p.is_on_curve()) {
                    return p.to_uncompressed().to_vec();
                }
            }
        } else {
            let mut x = [0u8; 48];
            rng.fill_bytes(&mut x);
            x[0] = 0x80 | (x[0] & 0x0f);
            if let Some(p) = Option::<G1Affine>::from(G1Affine::from_compressed_unchecked(&x)) {
                if !bool::from(p.is_torsion_free()) && bool::from(p.is_on_curve()) {
                    return p.to_uncompressed().to_vec();
                }
            }
        }
    }
}

/// The file offset of point `index` of `section` in `bytes`.
fn offset_of(bytes: &[u8], section: Section, index: usize) -> u64 {
    let (vk, _) = VerifyingKey::read_bytes(bytes, Path::new("mem"), true).unwrap();
    let mut at = vk.encoded_len() as u64;
    for (s, len) in LENS {
        at += 4;
        if s == section {
            return at + (index * s.point_size()) as u64;
        }
        at += (len * s.point_size()) as u64;
    }
    unreachable!()
}

fn format_error(r: Result<impl std::fmt::Debug, Error>, path: &Path) -> String {
    match r {
        Err(Error::Format { path: p, what }) => {
            assert_eq!(p, path);
            what
        }
        other => panic!("expected a Format error, got {other:?}"),
    }
}

/// One query point in each section in turn moved out of the subgroup:
/// the CPU checker refuses the file, naming the section, the index and the
/// offset; without the check the file loads (the point is on the curve);
/// the good file loads with the check.
#[test]
fn the_cpu_checker_refuses_a_point_outside_and_names_it() {
    let mut rng = ChaCha20Rng::seed_from_u64(17);
    let dir = TempDir::new("cpu");
    let p = params(&mut rng);
    let good = encode(&p);
    let path = dir.file("good.params", &good);
    assert!(Parameters::read_file(&path, true).is_ok());
    let m = MappedParameters::open(&path).unwrap();
    let loaded = m.load_with(Some(&CpuSubgroupChecker)).unwrap();
    assert_eq!(encode(&loaded), good);
    for (section, len) in LENS {
        let index = rng.gen_range(0..len);
        let off = offset_of(&good, section, index);
        let mut bad = good.clone();
        let point = outside(&mut rng, section == Section::BG2);
        bad[off as usize..off as usize + point.len()].copy_from_slice(&point);
        let path = dir.file(&format!("bad-{}.params", section.name()), &bad);
        let want = format!("{} point {index} at offset {off}", section.name());
        for what in [
            format_error(Parameters::read_file(&path, true), &path),
            format_error(
                MappedParameters::open(&path)
                    .unwrap()
                    .load_with(Some(&CpuSubgroupChecker)),
                &path,
            ),
        ] {
            assert!(what.contains(&want), "{what:?} lacks {want:?}");
            assert!(what.contains("subgroup") && what.contains("cpu"), "{what}");
        }
        // A range starting past the point names its index in the section.
        let m = MappedParameters::open(&path).unwrap();
        let what = if section == Section::BG2 {
            format_error(m.g2_with(index..len, Some(&CpuSubgroupChecker)), &path)
        } else {
            format_error(
                m.g1_with(section, index..len, Some(&CpuSubgroupChecker)),
                &path,
            )
        };
        assert!(what.contains(&want), "{what:?} lacks {want:?}");
        // On the curve: accepted without the subgroup check.
        assert!(Parameters::read_file(&path, false).is_ok());
        assert!(m.load_with(None).is_ok());
    }
}

/// What a test double saw, and what it answers.
struct Double {
    calls: Mutex<Vec<(bool, Vec<u8>)>>,
    /// (g2, index) to report as outside, on the call for that group whose
    /// points hold exactly `len` points.
    answer: Option<(bool, usize, usize)>,
    fail: bool,
}

impl Double {
    fn new(answer: Option<(bool, usize, usize)>, fail: bool) -> Self {
        Double {
            calls: Mutex::new(Vec::new()),
            answer,
            fail,
        }
    }
    fn reply(&self, g2: bool, len: usize) -> cuzk_core::Result<Option<usize>> {
        if self.fail {
            return Err(Error::InvalidParameters(
                "the test double's device failed".into(),
            ));
        }
        Ok(match self.answer {
            Some((g, l, i)) if g == g2 && l == len => Some(i),
            _ => None,
        })
    }
}

impl SubgroupChecker for Double {
    fn name(&self) -> String {
        "test-double".into()
    }
    fn first_outside_g1(&self, points: &[G1Affine]) -> cuzk_core::Result<Option<usize>> {
        let bytes = points.iter().flat_map(|p| p.to_uncompressed()).collect();
        self.calls.lock().unwrap().push((false, bytes));
        self.reply(false, points.len())
    }
    fn first_outside_g2(&self, points: &[G2Affine]) -> cuzk_core::Result<Option<usize>> {
        let bytes = points.iter().flat_map(|p| p.to_uncompressed()).collect();
        self.calls.lock().unwrap().push((true, bytes));
        self.reply(true, points.len())
    }
}

/// The loader gives the checker every section, decoded (each exactly
/// once, the points as in the file), reports an index it answers as the
/// CPU checker's would be, and passes a checker's own failure on as it is.
#[test]
fn the_loader_hands_every_section_to_its_checker() {
    let mut rng = ChaCha20Rng::seed_from_u64(23);
    let dir = TempDir::new("double");
    let p = params(&mut rng);
    let good = encode(&p);
    let path = dir.file("good.params", &good);
    let m = MappedParameters::open(&path).unwrap();

    let d = Double::new(None, false);
    let loaded = m.load_with(Some(&d)).unwrap();
    assert_eq!(encode(&loaded), good);
    let mut calls = d.calls.into_inner().unwrap();
    calls.sort();
    let mut want: Vec<(bool, Vec<u8>)> = LENS
        .iter()
        .map(|&(s, _)| {
            let raw = m.raw(s).to_vec();
            (s == Section::BG2, raw)
        })
        .collect();
    want.sort();
    assert_eq!(calls.len(), 5, "one call per section");
    assert!(
        calls == want,
        "the checker saw other points than the file's"
    );
    assert_eq!(
        G1_UNCOMPRESSED * LENS[0].1,
        m.raw(Section::H).len(),
        "sizes as announced"
    );
    assert_eq!(G2_UNCOMPRESSED * LENS[4].1, m.raw(Section::BG2).len());

    // An index the checker reports becomes the loader's error.
    for (section, len) in [(Section::A, LENS[2].1), (Section::BG2, LENS[4].1)] {
        let g2 = section == Section::BG2;
        let d = Double::new(Some((g2, len, 3)), false);
        let what = format_error(m.load_with(Some(&d)), &path);
        let want = format!(
            "{} point 3 at offset {}",
            section.name(),
            offset_of(&good, section, 3)
        );
        assert!(what.contains(&want), "{what:?} lacks {want:?}");
        assert!(what.contains("checked by test-double"), "{what}");
    }
    // A range: the reported index is relative to the range's start.
    let d = Double::new(Some((false, 5, 1)), false);
    let what = format_error(m.g1_with(Section::H, 4..9, Some(&d)), &path);
    assert!(what.contains("h point 5 at offset"), "{what}");

    // A checker that cannot check fails the load with its own error.
    let d = Double::new(None, true);
    match m.load_with(Some(&d)) {
        Err(Error::InvalidParameters(what)) => assert!(what.contains("test double")),
        other => panic!("expected the checker's error, got {other:?}"),
    }
    // No checker: nothing is asked.
    let d = Double::new(Some((false, 9, 0)), false);
    assert!(m.load_with(None).is_ok());
    assert!(d.calls.lock().unwrap().is_empty());
}
