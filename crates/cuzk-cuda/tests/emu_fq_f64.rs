//! The Fq products of kernels/field_f64.cuh (limb products on the FP64
//! pipe, Emmart–Weems) run on the CPU (emu/cuda_emu.h's exact `__fma_rz`,
//! emu/fq_f64_emu.cpp) against blstrs: random pairs, 0, 1, -1, raw values
//! at every 52-bit limb boundary, and pairs whose products land next to p
//! (the final subtraction taken or not). The GPU checks run the same
//! products on the device (`field/fq fp64 products`). Needs a C++20
//! compiler (`$CXX`, else `c++`).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use blstrs::Fp;
use cuzk_cuda::field_cases::{near_modulus_pairs, FQ_MODULUS};
use cuzk_cuda::host;
use ff::Field;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn emu_binary() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fq_f64_emu");
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let status = Command::new(&cxx)
        .args(["-std=c++20", "-O2", "-pthread", "-o"])
        .arg(&out)
        .arg(dir.join("emu/fq_f64_emu.cpp"))
        .status()
        .unwrap_or_else(|e| panic!("running {cxx} (set CXX to a C++20 compiler): {e}"));
    assert!(
        status.success(),
        "{cxx} failed to compile emu/fq_f64_emu.cpp"
    );
    out
}

/// [a * b, a^2] per pair, by the emulated kernels.
fn run(pairs: &[(Fp, Fp)]) -> Vec<[Fp; 2]> {
    let mut input = (pairs.len() as u32).to_le_bytes().to_vec();
    for (a, b) in pairs {
        input.extend(host::fp_raw_bytes(a));
        input.extend(host::fp_raw_bytes(b));
    }
    let mut child = Command::new(emu_binary())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("starting fq_f64_emu");
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "fq_f64_emu failed");
    assert_eq!(out.stdout.len(), 96 * pairs.len());
    out.stdout
        .chunks_exact(96)
        .map(|c| [host::fp_from_le(&c[..48]), host::fp_from_le(&c[48..])])
        .collect()
}

fn raw(limbs: &[u32]) -> Fp {
    let b: Vec<u8> = limbs.iter().flat_map(|w| w.to_le_bytes()).collect();
    host::fp_from_le(&b)
}

#[test]
fn fp64_products_match_blstrs() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xf64f64);
    let mut pairs: Vec<(Fp, Fp)> = (0..2000)
        .map(|_| (Fp::random(&mut rng), Fp::random(&mut rng)))
        .collect();
    // Raw values with one bit set at and beside each 52-bit limb boundary
    // (the split into limbs), and p - 2^k, against each other and randoms.
    let mut edges = vec![Fp::ZERO, Fp::ONE, -Fp::ONE, Fp::ONE.double()];
    for bit in [
        0usize, 31, 32, 51, 52, 53, 103, 104, 155, 156, 207, 208, 259, 260, 311, 312,
    ]
    .into_iter()
    .chain([363, 364, 380])
    {
        let mut l = [0u32; 12];
        l[bit / 32] = 1 << (bit % 32);
        edges.push(raw(&l));
        let mut m = FQ_MODULUS;
        // p - 2^bit (p's limbs are nonzero below every such bit but bit 380's
        // word, where p has room).
        let mut borrow = 1u64 << (bit % 32);
        for w in m.iter_mut().skip(bit / 32) {
            let (d, b) = w.overflowing_sub(borrow as u32);
            *w = d;
            borrow = b as u64;
        }
        edges.push(raw(&m));
    }
    for &a in &edges {
        for &b in &edges {
            pairs.push((a, b));
        }
        pairs.push((a, Fp::random(&mut rng)));
        pairs.push((Fp::random(&mut rng), a));
    }
    let (xs, ys) = near_modulus_pairs(&mut rng, &FQ_MODULUS, 24, raw);
    pairs.extend(xs.into_iter().zip(ys));

    let got = run(&pairs);
    for (i, ((a, b), [m, s])) in pairs.iter().zip(got).enumerate() {
        assert_eq!(m, a * b, "pair {i}: a * b (a {a:?}, b {b:?})");
        assert_eq!(s, a.square(), "pair {i}: a^2 (a {a:?})");
    }
}
