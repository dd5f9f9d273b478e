//! Times the CPU prover's building blocks in isolation at one size: the
//! NTT, H, and G1/G2 MSMs over full-width and mostly-bit scalars.
//!
//! cargo run --release -p cuzk-core --example phases -- [log_size] [reps]

use cuzk_core::{domain, msm, G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::{Curve, Group};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::time::{Duration, Instant};

fn median<F: FnMut()>(reps: usize, mut f: F) -> Duration {
    f();
    let mut v: Vec<Duration> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let log: u32 = args.first().and_then(|a| a.parse().ok()).unwrap_or(16);
    let reps: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(3).max(1);
    let n = 1usize << log;
    let mut rng = ChaCha20Rng::seed_from_u64(0);
    let wide: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
    let bits: Vec<Scalar> = (0..n)
        .map(|_| match rng.gen_range(0..100) {
            0..=13 => Scalar::random(&mut rng),
            14..=56 => Scalar::ONE,
            _ => Scalar::ZERO,
        })
        .collect();
    // Distinct bases are costly to make; multiples of a few random points
    // behave the same for the MSM.
    let seeds: Vec<G1Projective> = (0..64).map(|_| G1Projective::random(&mut rng)).collect();
    let g1: Vec<G1Affine> = msm::batch_normalize_g1(
        &(0..n)
            .map(|i| seeds[i % 64] * Scalar::from(i as u64 + 1))
            .collect::<Vec<_>>(),
    );
    let seeds2: Vec<G2Projective> = (0..16).map(|_| G2Projective::random(&mut rng)).collect();
    let g2: Vec<G2Affine> = (0..n / 4)
        .map(|i| (seeds2[i % 16] * Scalar::from(i as u64 + 1)).to_affine())
        .collect();

    let mut v = wide.clone();
    let ntt = median(reps, || domain::fft(&mut v));
    let h = median(reps, || {
        domain::compute_h_from_slices(&wide, &bits, &wide).unwrap();
    });
    let msm_wide = median(reps, || {
        msm::msm_g1(&g1, &wide);
    });
    let msm_bits = median(reps, || {
        msm::msm_g1(&g1, &bits);
    });
    let msm_g2 = median(reps, || {
        msm::msm_g2(&g2, &bits[..n / 4]);
    });
    println!("2^{log}, {} threads", rayon::current_num_threads());
    for (name, d) in [
        ("fft", ntt),
        ("compute_h", h),
        ("msm_g1 wide", msm_wide),
        ("msm_g1 86% bits", msm_bits),
        ("msm_g2 n/4 86% bits", msm_g2),
    ] {
        println!("{name:<22} {:>10.1} ms", d.as_secs_f64() * 1e3);
    }
}
