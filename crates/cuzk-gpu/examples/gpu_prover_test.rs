//! GPU checks and benchmarks of the CUDA prover backend, run on the GPU
//! machine from `scripts/gpu-prover-test.sh` (no cargo there).
//!
//!   gpu_prover_test [--bench LOGS] [--partitions LIST] [--caps-mib LIST] [--reps N]
//!                   [--bench-only] [--json-out PATH] [--paramgen cpu|gpu]
//!                   [--paramgen-cpu-max LOG] [--cpu-ref-max LOG] [--no-pageable]
//!                   [--distinct K] [--concurrent-cap-mib MIB] [--compiled-bench LOGS]
//!                   [--device-only] [--compiled-batch N]
//!
//! Checks (always): cuzk-core's conformance check; a GPU proof verified by
//! bellperson and cuzk (and a wrong input rejected); every staging plan
//! forced in turn and chosen by a VRAM cap, against the CPU backend, with
//! the driver pool's high-water mark held to the cap; the fault hook at
//! every allocation of a proof (error and panic), with device memory back
//! at its level and the next proof right; two workers on one device; one
//! pinned mirror shared by two backends streaming the same parameters; GPUs
//! opened by a selection of ordinals; two
//! parameter sets resident at once, and LRU eviction under a cap; three
//! workers proving porep-like 2^18/2^20/2^22 at once under a 1 GiB cap
//! (`--concurrent-cap-mib`), every partition waiting for its memory
//! instead of failing and every proof verifying; z through the compiled
//! path's upload and back, packed by 0/1 and raw, equal to what went up;
//! the compiled path (a/b/c, selections and splits on the device, z
//! packed and raw) against the CPU's full synthesis, with the matrices
//! resident and streamed in row blocks, its host fallback, and a fault at
//! each of its allocations. The last line is `N passed, M failed`.
//!
//! `--compiled-bench 20,27` times one porep-like partition by the compiled
//! path on the device (matrices resident, z sent as configured, raw by
//! default, then the other way, packed by 0/1; then matrices streamed in
//! row blocks) and by the host path
//! from the same witness; each line gives z's bytes and the bytes sent.
//! With `--device-only` only the two device-path runs (resident matrices,
//! z raw and packed): a quicker run for comparing settings such as
//! `CUZK_COPY_THREADS` across processes. `--compiled-batch 10` then also
//! times 10 partitions (z prepared) as one GPU worker proves them, in
//! turn, and as two do, half each at once on the backend's two slots.
//!
//! Parameter generation: the GPU fixed-base engine's parameters equal the
//! CPU generator's byte for byte (porep-like 2^10 and 2^16, same toxic
//! waste).
//!
//! `--bench 20,22` generates the parameters on the GPU (`--paramgen cpu`
//! for the CPU; the CPU also runs, for comparison, up to
//! `--paramgen-cpu-max`, default 20), then times porep-like partitions (1 and each count of
//! `--partitions`, default 1,10) with one and two workers, and the CPU
//! backend on one partition for the speed-up; `--caps-mib` proves one
//! partition under each VRAM cap (the issue's 16/8/4 GiB at 2^26, scaled
//! down with the size) and checks the result and the pool's high-water mark.
//! Up to `--cpu-ref-max` (default 22) results are compared with the CPU
//! backend's; above it (the CPU would take minutes) the first GPU result is
//! made a proof that must verify, and becomes the reference for the rest.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bellperson::groth16 as bp;
use blstrs::{Bls12, Scalar};
use cuzk_core::circuits::PorepLikeCircuit;
use cuzk_core::compiled::{compile, CompiledCircuit, Witness};
use cuzk_core::generator::{
    generate_parameters_with, generate_random_parameters, CpuFixedBase, FixedBaseEngine,
    GenerationTimings, ToxicWaste,
};
use cuzk_core::prover::{
    assemble_proof, create_proof_batch, CpuBackend, MsmResults, ProofRandomness, ProverBackend,
};
use cuzk_core::synthesis::synthesize_batch;
use cuzk_core::testing::LayoutCircuit;
use cuzk_core::verifier::{prepare_verifying_key, verify_proof};
use cuzk_core::zero_one::ZeroOneForm;
use cuzk_core::{Parameters, Proof, ProvingAssignment};
use cuzk_gpu::plan::{self, Footprint, PartitionSizes};
use cuzk_gpu::{
    select_backend_with, BackendChoice, BaseStaging, BudgetConfig, CompiledPlacement, CudaBackend,
    GpuConfig, GpuFixedBase, HStaging, PartitionReport, StagingPlan, H_PARTS,
};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde_json::{json, Value};

const MIB: u64 = 1 << 20;
/// Free memory after a failed proof may differ from before by this much:
/// the driver grows a context's kernel-stack and printf areas lazily, which
/// no allocation of ours causes. The run prints the largest difference seen.
const FREE_TOLERANCE: u64 = 4 * MIB;

struct Tally {
    passed: usize,
    failed: usize,
}

impl Tally {
    fn check(&mut self, name: &str, r: Result<(), String>) {
        match r {
            Ok(()) => {
                self.passed += 1;
                println!("ok   {name}");
            }
            Err(e) => {
                self.failed += 1;
                println!("FAIL {name}: {e}");
            }
        }
    }
}

fn params_for(log: u32) -> Parameters {
    let mut rng = ChaCha20Rng::seed_from_u64(u64::from(log));
    generate_random_parameters(PorepLikeCircuit::new(log, 0), &mut rng).expect("parameters")
}

fn param_bytes(p: &Parameters) -> Vec<u8> {
    let mut v = Vec::new();
    p.write(&mut v).expect("writing to memory");
    v
}

fn gen_params(
    log: u32,
    engine: &dyn FixedBaseEngine,
) -> Result<(Parameters, GenerationTimings), String> {
    let mut rng = ChaCha20Rng::seed_from_u64(u64::from(log));
    let w = ToxicWaste::random(&mut rng);
    generate_parameters_with(PorepLikeCircuit::new(log, 0), &w, engine).map_err(|e| e.to_string())
}

fn gen_line(log: u32, t: &GenerationTimings) -> String {
    format!(
        "paramgen 2^{log} on {}: total {:.2} s = synthesis {:.2} + scalars {:.2} + G1 {:.2} ({} points) + G2 {:.2} ({} points)",
        t.engine,
        t.total.as_secs_f64(),
        t.synthesis.as_secs_f64(),
        t.scalars.as_secs_f64(),
        t.g1.as_secs_f64(),
        t.g1_points,
        t.g2.as_secs_f64(),
        t.g2_points
    )
}

fn gen_json(log: u32, t: &GenerationTimings) -> Value {
    json!({"paramgen": {"log": log, "engine": t.engine, "total_s": t.total.as_secs_f64(),
        "synthesis_s": t.synthesis.as_secs_f64(), "scalars_s": t.scalars.as_secs_f64(),
        "g1_s": t.g1.as_secs_f64(), "g1_points": t.g1_points,
        "g2_s": t.g2.as_secs_f64(), "g2_points": t.g2_points}})
}

/// GPU parameters equal the CPU generator's, byte for byte.
fn paramgen_equal(engine: &GpuFixedBase, log: u32, out: &mut Vec<Value>) -> Result<(), String> {
    let (gpu, tg) = gen_params(log, engine)?;
    let (cpu, tc) = gen_params(log, &CpuFixedBase)?;
    println!("{}", gen_line(log, &tg));
    println!("{}", gen_line(log, &tc));
    out.push(gen_json(log, &tg));
    out.push(gen_json(log, &tc));
    if param_bytes(&gpu) != param_bytes(&cpu) {
        return Err(format!("2^{log}: GPU parameters differ from the CPU's"));
    }
    Ok(())
}

/// A proof from `msm` verifies under cuzk's verifier, and not with a wrong
/// public input.
fn verifies(params: &Parameters, pa: &ProvingAssignment, msm: &MsmResults) -> Result<(), String> {
    let mut rng = ChaCha20Rng::seed_from_u64(99);
    let proof = assemble_proof(params, msm, &ProofRandomness::random(&mut rng));
    let pvk = prepare_verifying_key(&params.vk);
    let inputs = pa.public_inputs().to_vec();
    if !verify_proof(&pvk, &proof, &inputs).map_err(|e| e.to_string())? {
        return Err("the GPU proof does not verify".into());
    }
    let mut wrong = inputs;
    wrong[0] += Scalar::from(1u64);
    if verify_proof(&pvk, &proof, &wrong).map_err(|e| e.to_string())? {
        return Err("the GPU proof verifies with a wrong input".into());
    }
    Ok(())
}

fn assignments(log: u32, seeds: std::ops::Range<u64>) -> Vec<ProvingAssignment> {
    synthesize_batch(seeds.map(|s| PorepLikeCircuit::new(log, s)).collect()).expect("synthesis")
}

fn sizes_of(params: &Parameters, pa: &ProvingAssignment) -> PartitionSizes {
    PartitionSizes {
        domain: 1 << cuzk_core::domain::log_domain_size(pa.a.len()),
        a: params.a.len(),
        b: params.b_g1.len(),
        l: params.l.len(),
        h: params.h.len(),
    }
}

fn same(got: &[MsmResults], want: &[MsmResults]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{} results for {}", got.len(), want.len()));
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let fields = [
            ("a_g1", g.a_g1 == w.a_g1),
            ("b_g1", g.b_g1 == w.b_g1),
            ("b_g2", g.b_g2 == w.b_g2),
            ("l", g.l == w.l),
            ("h", g.h == w.h),
        ];
        for (f, ok) in fields {
            if !ok {
                return Err(format!("circuit {i}: {f} differs from the CPU backend's"));
            }
        }
    }
    Ok(())
}

fn open(config: GpuConfig) -> Result<CudaBackend, String> {
    CudaBackend::open(config).map_err(|e| format!("open: {e}"))
}

fn compute(
    b: &CudaBackend,
    p: &Parameters,
    a: &[ProvingAssignment],
) -> Result<Vec<MsmResults>, String> {
    b.compute(p, a).map(|r| r.0).map_err(|e| e.to_string())
}

fn bellperson_check() -> Result<(), String> {
    let circuit = PorepLikeCircuit::new(10, 3);
    let inputs = circuit.public_inputs();
    let mut rng = ChaCha20Rng::seed_from_u64(99);
    let bp_params = bp::generate_random_parameters::<Bls12, _, _>(circuit.clone(), &mut rng)
        .map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    bp_params.write(&mut bytes).map_err(|e| e.to_string())?;
    let params = Parameters::read_bytes(&bytes, std::path::Path::new("<bellperson>"), true)
        .map_err(|e| e.to_string())?;
    let gpu = open(GpuConfig::default())?;
    let (proofs, _) =
        create_proof_batch(&gpu, vec![circuit], &params, &mut rng).map_err(|e| e.to_string())?;
    let to_bp = |p: &Proof| bp::Proof::<Bls12>::read(&p.to_bytes()[..]).map_err(|e| e.to_string());
    let bp_pvk = bp::prepare_verifying_key(&bp_params.vk);
    if !bp::verify_proof(&bp_pvk, &to_bp(&proofs[0])?, &inputs).map_err(|e| e.to_string())? {
        return Err("bellperson rejects the GPU proof".into());
    }
    let pvk = prepare_verifying_key(&params.vk);
    if !verify_proof(&pvk, &proofs[0], &inputs).map_err(|e| e.to_string())? {
        return Err("cuzk rejects the GPU proof".into());
    }
    let mut wrong = inputs.clone();
    wrong[0] += Scalar::from(1u64);
    if bp::verify_proof(&bp_pvk, &to_bp(&proofs[0])?, &wrong).map_err(|e| e.to_string())? {
        return Err("bellperson accepts the GPU proof with a wrong input".into());
    }
    Ok(())
}

/// Every plan forced in turn on a porep-like 2^12 batch of 2.
fn forced_plans(t: &mut Tally) {
    let log = 12;
    let params = params_for(log);
    let batch = assignments(log, 0..2);
    let (want, _) = CpuBackend.compute(&params, &batch).expect("cpu");
    for h in [HStaging::AllResident, HStaging::OneAtATime, HStaging::Host] {
        for bases in [
            BaseStaging::Resident,
            BaseStaging::PerMsm,
            // Odd chunk sizes: the last chunk of each MSM is partial, and
            // the chunks' 0/1 splits are recomputed (not word-aligned).
            BaseStaging::Chunked {
                g1_points: 1000,
                g2_points: 333,
                h_points: 777,
            },
            // Word-aligned chunks (splits cut out of the MSM's), and H's
            // coefficients read back to the host before the H MSM.
            BaseStaging::Chunked {
                g1_points: 1024,
                g2_points: 512,
                h_points: 0,
            },
        ] {
            let p = StagingPlan { h, bases };
            let r = (|| {
                let gpu = open(GpuConfig {
                    force_plan: Some(p),
                    ..GpuConfig::default()
                })?;
                same(&compute(&gpu, &params, &batch)?, &want)?;
                // Twice: the second call finds resident bases (if any).
                same(&compute(&gpu, &params, &batch)?, &want)?;
                let reports = gpu.take_reports();
                if reports.len() != 4 || reports.iter().any(|r| r.plan != p) {
                    return Err(format!(
                        "reports {:?}",
                        reports.iter().map(|r| r.plan).collect::<Vec<_>>()
                    ));
                }
                if gpu.budget().reserved()
                    != if bases == BaseStaging::Resident {
                        sizes_of(&params, &batch[0]).params_bytes()
                    } else {
                        0
                    }
                {
                    return Err(format!("{} bytes still reserved", gpu.budget().reserved()));
                }
                Ok(())
            })();
            t.check(
                &format!("forced plan {h:?}/{bases:?}, porep-like 2^{log} x2"),
                r,
            );
        }
    }
}

/// Parameters left in their mapped file (`Parameters::mapped`): uploaded
/// resident a piece at a time (pieces of 1 MiB, 10922 G1 or 5461 G2
/// points, and of 96 KiB + 1 byte, 1024 or 512: every section ends inside
/// a piece), or read decoded per MSM by the host plans;
/// every result equal to the CPU backend's on the decoded parameters, the
/// device path of a compiled witness too, and nothing left reserved but
/// the resident set.
fn mapped_params(t: &mut Tally) {
    let log = 14;
    let params = params_for(log);
    let batch = assignments(log, 3..5);
    let (want, _) = CpuBackend.compute(&params, &batch).expect("cpu");
    let path = std::env::temp_dir().join(format!("cuzk-gpu-mapped-{}.params", std::process::id()));
    let written = params.write_file(&path).map_err(|e| e.to_string());
    let file = written.and_then(|()| {
        cuzk_core::MappedParameters::open(&path)
            .map(Arc::new)
            .map_err(|e| e.to_string())
    });
    let mapped = file.and_then(|f| Parameters::mapped(f).map_err(|e| e.to_string()));
    for (piece, plan) in [
        (1usize << 20, None),
        ((96 << 10) + 1, None),
        (
            1 << 20,
            Some(StagingPlan {
                h: HStaging::AllResident,
                bases: BaseStaging::PerMsm,
            }),
        ),
        (
            1 << 20,
            Some(StagingPlan {
                h: HStaging::OneAtATime,
                bases: BaseStaging::Chunked {
                    g1_points: 1000,
                    g2_points: 333,
                    h_points: 777,
                },
            }),
        ),
    ] {
        let r = (|| {
            let mapped = mapped.clone()?;
            if !mapped.is_mapped() {
                return Err("not mapped".into());
            }
            let gpu = open(GpuConfig {
                file_piece_bytes: piece,
                force_plan: plan,
                ..GpuConfig::default()
            })?;
            same(&compute(&gpu, &mapped, &batch)?, &want)?;
            same(&compute(&gpu, &mapped, &batch)?, &want)?;
            if plan.is_none() {
                if gpu.parameter_uploads() != 1 {
                    return Err(format!("{} uploads", gpu.parameter_uploads()));
                }
                let circuits: Vec<_> = (3..5).map(|s| PorepLikeCircuit::new(log, s)).collect();
                let (cc, w) = compiled_of(&circuits, "porep-like")?;
                same(&compute_compiled(&gpu, &mapped, &cc, &w)?, &want)?;
            }
            let resident = if plan.is_none() {
                sizes_of(&params, &batch[0]).params_bytes()
            } else {
                0
            };
            if plan.is_some() && gpu.budget().reserved() != resident {
                return Err(format!("{} bytes still reserved", gpu.budget().reserved()));
            }
            Ok(())
        })();
        t.check(
            &format!(
                "parameters from a mapped file, {piece}-byte pieces, plan {:?}, porep-like 2^{log} x2",
                plan.map(|p| (p.h, p.bases))
            ),
            r,
        );
    }
    let _ = std::fs::remove_file(&path);
}

/// Caps chosen so that the budget itself picks each tier, at 2^14; the
/// pool's measured high-water mark must stay within each cap.
fn capped_plans(t: &mut Tally, out: &mut Vec<Value>) {
    let log = 14;
    let params = params_for(log);
    let batch = assignments(log, 5..7);
    let (want, _) = CpuBackend.compute(&params, &batch).expect("cpu");
    let s = sizes_of(&params, &batch[0]);
    let resident = s.params_bytes() + s.h_bytes(HStaging::AllResident).max(s.max_msm_scratch());
    let per_msm = s.h_bytes(HStaging::AllResident).max(s.max_msm_with_bases());
    let chunk = plan::msm_scratch(4096, true) + 4096 * plan::G2_POINT;
    let min_chunk = plan::msm_scratch(plan::MIN_CHUNK_POINTS, true)
        + plan::MIN_CHUNK_POINTS as u64 * plan::G2_POINT
        + MIB;
    for cap in [resident, per_msm, chunk, min_chunk] {
        let r = (|| {
            let expect = plan::plan(&s, cap, 0).map_err(|e| e.to_string())?;
            let gpu = open(GpuConfig {
                budget: BudgetConfig {
                    vram_limit: Some(cap),
                    ..BudgetConfig::default()
                },
                ..GpuConfig::default()
            })?;
            same(&compute(&gpu, &params, &batch)?, &want)?;
            let reports = gpu.take_reports();
            for r in &reports {
                out.push(json!({"check": "cap", "log": log, "cap": cap, "report": r}));
                if r.plan != expect {
                    return Err(format!("plan {:?}, expected {expect:?}", r.plan));
                }
                if r.pool_high > cap {
                    return Err(format!(
                        "pool high-water mark {} MiB above the {} MiB cap ({:?}, {} MiB reserved at peak)",
                        r.pool_high / MIB, cap / MIB, r.plan, r.peak_reserved / MIB
                    ));
                }
            }
            println!(
                "     cap {} MiB: {:?}, peak reserved {} MiB, pool high {} MiB",
                cap / MIB,
                expect,
                reports.iter().map(|r| r.peak_reserved).max().unwrap_or(0) / MIB,
                reports.iter().map(|r| r.pool_high).max().unwrap_or(0) / MIB
            );
            Ok(())
        })();
        t.check(
            &format!(
                "cap {} MiB picks its plan, porep-like 2^{log} x2",
                cap / MIB
            ),
            r,
        );
    }
}

/// The fault hook at each allocation of a proof, as an error and as a panic.
fn faults(t: &mut Tally) {
    let log = 10;
    let params = params_for(log);
    let batch = assignments(log, 20..22);
    let (want, _) = CpuBackend.compute(&params, &batch).expect("cpu");
    for plan in [
        None,
        Some(StagingPlan {
            h: HStaging::OneAtATime,
            bases: BaseStaging::Chunked {
                g1_points: 300,
                g2_points: 200,
                h_points: 0,
            },
        }),
    ] {
        for panic in [false, true] {
            let r = (|| {
                let gpu = open(GpuConfig {
                    force_plan: plan,
                    ..GpuConfig::default()
                })?;
                // A first fault before anything is resident.
                let free0 = gpu.measure_free().map_err(|e| e.to_string())?;
                if panic {
                    gpu.budget().panic_nth_reservation(Some(1))
                } else {
                    gpu.budget().fail_nth_reservation(Some(1))
                }
                if compute(&gpu, &params, &batch).is_ok() {
                    return Err("first proof succeeded despite the fault".into());
                }
                let free1 = gpu.measure_free().map_err(|e| e.to_string())?;
                if free1.abs_diff(free0) > FREE_TOLERANCE {
                    return Err(format!(
                        "free memory {free0} before, {free1} after the first fault"
                    ));
                }
                // One good proof (parameters become resident, if the plan
                // keeps them), then count the allocations of a steady one.
                same(&compute(&gpu, &params, &batch)?, &want)?;
                let r0 = gpu.budget().requests();
                same(&compute(&gpu, &params, &batch)?, &want)?;
                let k = gpu.budget().requests() - r0;
                let free_ok = gpu.measure_free().map_err(|e| e.to_string())?;
                let reserved_ok = gpu.budget().reserved();
                let mut worst = free1.abs_diff(free0);
                for n in 1..=k {
                    if panic {
                        gpu.budget().panic_nth_reservation(Some(n))
                    } else {
                        gpu.budget().fail_nth_reservation(Some(n))
                    }
                    match compute(&gpu, &params, &batch) {
                        Ok(_) => return Err(format!("allocation {n} of {k}: no error")),
                        Err(e) if !(e.contains("injected")) => {
                            return Err(format!("allocation {n}: unexpected error {e}"))
                        }
                        Err(_) => {}
                    }
                    let free = gpu.measure_free().map_err(|e| e.to_string())?;
                    worst = worst.max(free.abs_diff(free_ok));
                    if free.abs_diff(free_ok) > FREE_TOLERANCE
                        || gpu.budget().reserved() != reserved_ok
                    {
                        return Err(format!(
                            "allocation {n} of {k}: free {free} (was {free_ok}), reserved {} (was {reserved_ok})",
                            gpu.budget().reserved()
                        ));
                    }
                    same(&compute(&gpu, &params, &batch)?, &want)
                        .map_err(|e| format!("proof after fault {n}: {e}"))?;
                }
                println!("     {k} allocations per proof, each failed once; free memory moved by at most {worst} bytes");
                Ok(())
            })();
            let kind = if panic { "panic" } else { "error" };
            t.check(
                &format!("fault ({kind}) at every allocation, plan {plan:?}"),
                r,
            );
        }
    }
}

fn two_workers(t: &mut Tally) {
    let log = 12;
    let params = Arc::new(params_for(log));
    let r = (|| {
        let gpu = Arc::new(open(GpuConfig::default())?);
        // A set whose B vectors differ in length is refused by name before
        // anything is reserved or uploaded (the reservation's count takes
        // them equal).
        let uneven = {
            let mut p = (*params).clone();
            let b_g2 = params.b_g2.read().map_err(|e| e.to_string())?;
            p.b_g2 = b_g2[1..].to_vec().into();
            gpu.make_resident(&p)
        };
        match uneven {
            Err(e) if e.to_string().contains("b_g2") && gpu.budget().reserved() == 0 => {}
            other => {
                return Err(format!(
                    "uneven B vectors: {:?}, {} bytes reserved",
                    other.map_err(|e| e.to_string()),
                    gpu.budget().reserved()
                ))
            }
        }
        // The parameters go up ahead of the first proof (a scheduler's
        // parameter tier); the workers then find them resident.
        let bytes = gpu.make_resident(&params).map_err(|e| e.to_string())?;
        if bytes == 0 || gpu.budget().reserved() != bytes {
            return Err(format!(
                "make_resident: {bytes} bytes, {} reserved",
                gpu.budget().reserved()
            ));
        }
        let results = std::thread::scope(|s| {
            let hs: Vec<_> = (0..2u64)
                .map(|w| {
                    let (gpu, params) = (gpu.clone(), params.clone());
                    s.spawn(move || {
                        let batch = assignments(log, 40 + 3 * w..43 + 3 * w);
                        let (want, _) = CpuBackend.compute(&params, &batch).expect("cpu");
                        same(&compute(&gpu, &params, &batch)?, &want)
                    })
                })
                .collect();
            hs.into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err("worker panicked".into())))
                .collect::<Vec<_>>()
        });
        results.into_iter().collect::<Result<Vec<_>, _>>()?;
        let reports = gpu.take_reports();
        if reports.len() != 6
            || reports
                .iter()
                .any(|r| r.plan.bases != BaseStaging::Resident)
        {
            return Err(format!(
                "plans {:?}",
                reports.iter().map(|r| r.plan).collect::<Vec<_>>()
            ));
        }
        if gpu.budget().reserved() != bytes || gpu.budget().transient() != 0 {
            return Err(format!(
                "{} bytes reserved ({} transient) after the workers, {bytes} resident",
                gpu.budget().reserved(),
                gpu.budget().transient()
            ));
        }
        Ok(())
    })();
    t.check(
        "two workers share one device, porep-like 2^12 x3 each (uneven B vectors refused first)",
        r,
    );
}

/// `GpuDevices::open` with a selection: every GPU listed in reverse order
/// (the daemon's device 0 is the last card, named by its ordinal where
/// they differ), an empty list (none: the CPU), an ordinal past the last
/// (refused, naming it).
fn device_selection(t: &mut Tally) {
    use cuzk_core::accel::DeviceBackend;
    let r = (|| {
        let count = cuzk_gpu::device_count().map_err(|e| e.to_string())?;
        let reversed: Vec<usize> = (0..count).rev().collect();
        let gpus = cuzk_gpu::GpuDevices::open(GpuConfig::default(), Some(&reversed))
            .map_err(|e| e.to_string())?
            .ok_or("no GPUs opened")?;
        let ords: Vec<usize> = gpus.backends().iter().map(|b| b.device_ordinal()).collect();
        if ords != reversed {
            return Err(format!("opened ordinals {ords:?}, asked for {reversed:?}"));
        }
        let infos = gpus.devices();
        if infos.len() != count {
            return Err(format!("{} devices reported of {count}", infos.len()));
        }
        for (i, info) in infos.iter().enumerate() {
            let named = info.name.contains(&format!("(CUDA {})", reversed[i]));
            if named != (reversed[i] != i) {
                return Err(format!(
                    "device {i} (CUDA {}) is named {:?}",
                    reversed[i], info.name
                ));
            }
        }
        drop(gpus);
        if cuzk_gpu::GpuDevices::open(GpuConfig::default(), Some(&[]))
            .map_err(|e| e.to_string())?
            .is_some()
        {
            return Err("an empty selection opened GPUs".into());
        }
        match cuzk_gpu::GpuDevices::open(GpuConfig::default(), Some(&[0, count])) {
            Err(e)
                if e.to_string()
                    .contains(&format!("GPU {count} does not exist")) =>
            {
                Ok(())
            }
            Err(e) => Err(format!("past the last GPU: {e}")),
            Ok(_) => Err(format!("GPU {count} of {count} opened")),
        }
    })();
    t.check(
        "GPU selection by ordinal (reversed, empty, one past the last)",
        r,
    );
}

/// Whether the driver holds `bytes` page-locked (cuMemHostGetFlags
/// answers for registered and pinned host memory only).
fn page_locked(bytes: &[u8]) -> Result<bool, String> {
    use cudarc::driver::sys;
    let ctx = cudarc::driver::CudaContext::new(0).map_err(|e| e.to_string())?;
    ctx.bind_to_thread().map_err(|e| e.to_string())?;
    let mut flags = 0u32;
    // SAFETY: a query of the driver's table of host allocations; it reads
    // neither the bytes nor anything the pointer names.
    let r = unsafe { sys::cuMemHostGetFlags(&mut flags, bytes.as_ptr() as *mut std::ffi::c_void) };
    Ok(r == sys::CUresult::CUDA_SUCCESS)
}

/// Two backends (as two GPUs' would be; here both on GPU 0) streaming the
/// same parameters use one pinned mirror, page-locked once: the second
/// finds the first's, either proves alone once the other is gone, and the
/// pages are unlocked when the last one lets the mirror go.
fn shared_mirror(t: &mut Tally) {
    let log = 12;
    let params = params_for(log);
    let r = (|| {
        let h = params
            .h
            .in_memory()
            .ok_or("the parameters are not in memory")?;
        let h_bytes = cuzk_cuda::host::g1_as_bytes(h);
        let before = cuzk_gpu::live_mirrors();
        if page_locked(h_bytes)? {
            return Err("H's points are page-locked before any mirror".into());
        }
        let config = GpuConfig {
            force_plan: Some(StagingPlan {
                h: HStaging::OneAtATime,
                bases: BaseStaging::PerMsm,
            }),
            ..GpuConfig::default()
        };
        let a = open(config)?;
        let b = open(config)?;
        let batch = assignments(log, 60..62);
        let (want, _) = CpuBackend.compute(&params, &batch).expect("cpu");
        same(&compute(&a, &params, &batch)?, &want)?;
        let locked = page_locked(h_bytes)?;
        same(&compute(&b, &params, &batch)?, &want)?;
        if cuzk_gpu::live_mirrors() != before + 1 {
            return Err(format!(
                "{} mirrors alive after two backends proved, {before} before",
                cuzk_gpu::live_mirrors()
            ));
        }
        drop(a);
        same(&compute(&b, &params, &batch)?, &want)?;
        if locked && !page_locked(h_bytes)? {
            return Err("the pages were unlocked while the other backend used them".into());
        }
        drop(b);
        if cuzk_gpu::live_mirrors() != before {
            return Err(format!(
                "{} mirrors alive after both backends went",
                cuzk_gpu::live_mirrors()
            ));
        }
        if page_locked(h_bytes)? {
            return Err("H's points still page-locked after both backends went".into());
        }
        if !locked {
            eprintln!(
                "shared mirror: the points were copied into pinned buffers (registration refused)"
            );
        }
        Ok(())
    })();
    t.check(
        "two backends streaming one parameter set share one pinned mirror, unlocked after the last",
        r,
    );
}

/// Two parameter sets resident at once when they fit (no re-upload when
/// the kinds alternate), and the least recently used one evicted when a
/// cap leaves room for one only; every result equal to the CPU's.
fn two_sets_resident(t: &mut Tally) {
    let (la, lb) = (14, 16);
    let (pa, pb) = (params_for(la), params_for(lb));
    let (ba, bb) = (assignments(la, 60..61), assignments(lb, 61..62));
    let (wa, _) = CpuBackend.compute(&pa, &ba).expect("cpu");
    let (wb, _) = CpuBackend.compute(&pb, &bb).expect("cpu");
    let r = (|| {
        let gpu = open(GpuConfig::default())?;
        for (p, b, w) in [
            (&pa, &ba, &wa),
            (&pb, &bb, &wb),
            (&pa, &ba, &wa),
            (&pb, &bb, &wb),
        ] {
            same(&compute(&gpu, p, b)?, w)?;
        }
        let res = gpu.resident();
        let bytes_a = sizes_of(&pa, &ba[0]).params_bytes();
        let bytes_b = sizes_of(&pb, &bb[0]).params_bytes();
        if res.len() != 2 || gpu.parameter_uploads() != 2 {
            return Err(format!(
                "{} uploads, resident {res:?}",
                gpu.parameter_uploads()
            ));
        }
        if gpu.budget().reserved() != bytes_a + bytes_b || gpu.budget().transient() != 0 {
            return Err(format!(
                "{} reserved ({} transient), {} resident",
                gpu.budget().reserved(),
                gpu.budget().transient(),
                bytes_a + bytes_b
            ));
        }
        // Evict by id: the other stays.
        if !gpu.evict_resident(&res[1].id) || gpu.resident().len() != 1 {
            return Err(format!("evict {}: {:?}", res[1].id, gpu.resident()));
        }
        println!(
            "     2^{la} and 2^{lb} resident together ({} + {} MiB), 2 uploads for 4 proofs",
            bytes_a / MIB,
            bytes_b / MIB
        );
        Ok(())
    })();
    t.check(
        &format!("two parameter sets resident at once (2^{la}, 2^{lb})"),
        r,
    );
    let r = (|| {
        // A cap with room for the larger set (2^16) and its working set
        // but not for both sets beside either working set: proving 2^16,
        // 2^15, 2^16 evicts the least recently used set each time.
        let (lx, ly) = (16, 15);
        let (px, py) = (pb.clone(), params_for(ly));
        let (bx, by) = (bb.clone(), assignments(ly, 62..63));
        let (wx, wy) = (wb.clone(), CpuBackend.compute(&py, &by).expect("cpu").0);
        let work = |p: &Parameters, b: &ProvingAssignment| {
            let s = sizes_of(p, b);
            (
                s.params_bytes(),
                s.h_bytes(HStaging::AllResident).max(s.max_msm_scratch()),
            )
        };
        let ((sx, kx), (sy, ky)) = (work(&px, &bx[0]), work(&py, &by[0]));
        let cap = (sx + kx).max(sy + ky);
        // Where the working set dominates (on the H200 the MSM scratch is
        // larger than both sets), a VRAM cap that fits one working set
        // fits both sets too; the cap on resident bytes (the daemon's
        // `[params] vram_budget`) then bounds residency to one set.
        let resident_cap = (cap >= sx + sy + kx.min(ky)).then_some(sx.max(sy));
        let gpu = open(GpuConfig {
            budget: BudgetConfig {
                vram_limit: Some(cap),
                ..BudgetConfig::default()
            },
            ..GpuConfig::default()
        })?;
        gpu.set_resident_cap(resident_cap);
        for (p, b, w) in [(&px, &bx, &wx), (&py, &by, &wy), (&px, &bx, &wx)] {
            same(&compute(&gpu, p, b)?, w)?;
        }
        let res = gpu.resident();
        if gpu.budget().peak() > cap {
            return Err(format!("peak {} above the cap {cap}", gpu.budget().peak()));
        }
        if res.len() != 1 || res[0].bytes != sx || gpu.parameter_uploads() != 3 {
            return Err(format!(
                "{} uploads, resident {res:?} (cap {cap}; 2^{lx} holds {sx}, 2^{ly} {sy})",
                gpu.parameter_uploads()
            ));
        }
        Ok(())
    })();
    t.check(
        "a cap with room for one set: the least recently used is evicted",
        r,
    );
}

/// Three workers under a 1 GiB cap prove porep-like 2^18, 2^20 and 2^22
/// partitions at once: every partition waits for its working set instead
/// of failing (the failure of issue 11), and every proof verifies.
fn concurrent_under_cap(t: &mut Tally, cap_mib: u64) {
    let logs = [22u32, 18, 20];
    let r = (|| {
        let engine = GpuFixedBase::open(0).map_err(|e| e.to_string())?;
        let params: Vec<Arc<Parameters>> = logs
            .iter()
            .map(|&l| gen_params(l, &engine).map(|(p, _)| Arc::new(p)))
            .collect::<Result<_, _>>()?;
        drop(engine);
        let cap = cap_mib * MIB;
        let gpu = Arc::new(open(GpuConfig {
            workers_per_device: 3,
            budget: BudgetConfig {
                vram_limit: Some(cap),
                ..BudgetConfig::default()
            },
            ..GpuConfig::default()
        })?);
        // Worker w proves four partitions, the kinds in turn from w on:
        // each worker meets each kind, and the three run different kinds
        // at once.
        let results = std::thread::scope(|s| {
            let hs: Vec<_> = (0..3usize)
                .map(|w| {
                    let (gpu, params) = (gpu.clone(), params.clone());
                    s.spawn(move || -> Result<usize, String> {
                        let mut done = 0;
                        for k in 0..4usize {
                            let i = (w + k) % logs.len();
                            let seed = 100 + (w * 4 + k) as u64;
                            let pa = assignments(logs[i], seed..seed + 1);
                            let msm = compute(&gpu, &params[i], &pa)
                                .map_err(|e| format!("worker {w}, 2^{}: {e}", logs[i]))?;
                            verifies(&params[i], &pa[0], &msm[0])
                                .map_err(|e| format!("worker {w}, 2^{}: {e}", logs[i]))?;
                            done += 1;
                        }
                        Ok(done)
                    })
                })
                .collect();
            hs.into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err("worker panicked".into())))
                .collect::<Vec<_>>()
        });
        let done: usize = results
            .into_iter()
            .collect::<Result<Vec<_>, _>>()?
            .iter()
            .sum();
        let b = gpu.budget();
        if done != 12 || b.peak() > cap || b.transient() != 0 || b.queued() != 0 {
            return Err(format!(
                "{done} of 12 proved; peak {} of {cap}, {} transient, {} queued",
                b.peak(),
                b.transient(),
                b.queued()
            ));
        }
        let reports = gpu.take_reports();
        let high = reports.iter().map(|r| r.pool_high).max().unwrap_or(0);
        println!(
            "     12 partitions (2^22, 2^20, 2^18) on 3 workers under {cap_mib} MiB: peak reserved {} MiB, \
             pool high {} MiB, {} parameter uploads, resident {:?}",
            b.peak() / MIB,
            high / MIB,
            gpu.parameter_uploads(),
            gpu.resident().iter().map(|r| &r.id).collect::<Vec<_>>()
        );
        if high > cap {
            return Err(format!("pool high-water mark {high} above the cap {cap}"));
        }
        Ok(())
    })();
    t.check(
        &format!("3 workers, {cap_mib} MiB cap, porep-like 2^18/2^20/2^22 at once: all prove"),
        r,
    );
}

// ------------------------------------------------------------ compiled

/// A compiled system of `circuit`'s shape and the witnesses of `circuits`.
fn compiled_of<C: bellpepper_core::Circuit<Scalar> + Clone + Send>(
    circuits: &[C],
    id: &str,
) -> Result<(CompiledCircuit, Vec<Witness>), String> {
    let cc = compile(circuits[0].clone(), id).map_err(|e| e.to_string())?;
    let w = cc
        .witness_batch(circuits.to_vec())
        .map_err(|e| e.to_string())?;
    Ok((cc, w))
}

fn compute_compiled(
    b: &CudaBackend,
    p: &Parameters,
    cc: &CompiledCircuit,
    w: &[Witness],
) -> Result<Vec<MsmResults>, String> {
    b.compute_compiled(p, cc, w.to_vec())
        .map(|r| r.0)
        .map_err(|e| e.to_string())
}

/// How many of the last partitions formed a/b/c on the device.
fn on_device(b: &CudaBackend) -> (usize, usize) {
    let r = b.take_reports();
    (r.iter().filter(|r| r.abc_on_device).count(), r.len())
}

/// Of the `total` partitions proved since the last reports were taken,
/// `want` had a/b/c made on the device.
fn expect_on_device(b: &CudaBackend, want: usize, total: usize) -> Result<(), String> {
    match on_device(b) {
        got if got == (want, total) => Ok(()),
        (d, a) => Err(format!("{d} of {a} on the device")),
    }
}

/// The compiled path on the device against the CPU backend's full
/// synthesis: porep-like and a circuit with inputs in every matrix, table
/// coefficients and odd sizes; the host fallback when parameters may not
/// stay resident; a fault at every allocation of a compiled proof.
fn compiled_checks(t: &mut Tally) {
    for (log, seeds) in [(10u32, 40..43u64), (13, 43..45)] {
        let r = (|| {
            let params = params_for(log);
            let circuits: Vec<_> = seeds
                .clone()
                .map(|s| PorepLikeCircuit::new(log, s))
                .collect();
            let (cc, w) = compiled_of(&circuits, "porep-like")?;
            let (want, _) = CpuBackend
                .compute(&params, &synthesize_batch(circuits).expect("synthesis"))
                .map_err(|e| e.to_string())?;
            let gpu = open(GpuConfig {
                pack_witness: true,
                ..GpuConfig::default()
            })?;
            same(&compute_compiled(&gpu, &params, &cc, &w)?, &want)?;
            let reports = gpu.take_reports();
            let dev = reports.iter().filter(|r| r.abc_on_device).count();
            if dev != reports.len() {
                return Err(format!(
                    "{dev} of {} partitions formed a/b/c on the device",
                    reports.len()
                ));
            }
            // z went up packed (porep-like's is mostly 0 and 1)...
            if let Some(r) = reports
                .iter()
                .find(|r| r.upload_sent_bytes * 2 > r.upload_bytes)
            {
                return Err(format!(
                    "z packed: {} of {} bytes sent",
                    r.upload_sent_bytes, r.upload_bytes
                ));
            }
            // ...and raw, with packing off, proves the same.
            let raw = open(GpuConfig {
                pack_witness: false,
                ..GpuConfig::default()
            })?;
            same(&compute_compiled(&raw, &params, &cc, &w)?, &want)?;
            if let Some(r) = raw
                .take_reports()
                .iter()
                .find(|r| r.upload_sent_bytes != r.upload_bytes)
            {
                return Err(format!(
                    "z raw: {} of {} bytes sent",
                    r.upload_sent_bytes, r.upload_bytes
                ));
            }
            drop(raw);
            // Again, with the system resident: no second upload.
            let uploads = gpu.parameter_uploads();
            same(&compute_compiled(&gpu, &params, &cc, &w)?, &want)?;
            if gpu.parameter_uploads() != uploads || gpu.compiled_resident_bytes().is_none() {
                return Err("the second batch uploaded again".into());
            }
            // The proof from the device path verifies; a wrong input fails.
            let pa = cc.assign(w[0].clone()).map_err(|e| e.to_string())?;
            let got = compute_compiled(&gpu, &params, &cc, &w[..1])?;
            verifies(&params, &pa, &got[0])
        })();
        t.check(&format!("compiled on the device, porep-like 2^{log}"), r);
    }
    for (inputs, rows) in [(1usize, 3usize), (5, 3001), (37, 20_011)] {
        let r = (|| {
            let circuits: Vec<_> = (0..2)
                .map(|s| LayoutCircuit::new(inputs, rows, s))
                .collect();
            let mut rng = ChaCha20Rng::seed_from_u64(rows as u64);
            let params = generate_random_parameters(circuits[0].clone(), &mut rng)
                .map_err(|e| e.to_string())?;
            let (cc, w) = compiled_of(&circuits, "layout")?;
            let (want, _) = CpuBackend
                .compute(&params, &synthesize_batch(circuits).expect("synthesis"))
                .map_err(|e| e.to_string())?;
            let gpu = open(GpuConfig::default())?;
            same(&compute_compiled(&gpu, &params, &cc, &w)?, &want)?;
            expect_on_device(&gpu, 2, 2)
        })();
        t.check(
            &format!("compiled on the device, layout circuit {inputs} inputs x {rows} rows"),
            r,
        );
    }
    // Matrices sent up in row blocks: forced (small blocks, so that rows
    // of every kind land on block edges) and at the default block size.
    for (log, block) in [
        (10u32, 4096usize),
        (13, 64 << 10),
        (13, cuzk_gpu::COMPILED_BLOCK_BYTES),
    ] {
        let r = (|| {
            let params = params_for(log);
            let circuits: Vec<_> = (60..62).map(|s| PorepLikeCircuit::new(log, s)).collect();
            let (cc, w) = compiled_of(&circuits, "porep-like")?;
            let (want, _) = CpuBackend
                .compute(&params, &synthesize_batch(circuits).expect("synthesis"))
                .map_err(|e| e.to_string())?;
            let gpu = open(GpuConfig {
                keep_compiled_resident: false,
                compiled_block_bytes: block,
                ..GpuConfig::default()
            })?;
            same(&compute_compiled(&gpu, &params, &cc, &w)?, &want)?;
            let r = gpu.take_reports();
            let streamed: Vec<usize> = r
                .iter()
                .filter(|r| r.abc_on_device)
                .map(|r| r.abc_row_blocks)
                .collect();
            if streamed.len() != r.len() || streamed.contains(&0) {
                return Err(format!(
                    "{} of {} partitions on the device, row blocks {streamed:?}",
                    streamed.len(),
                    r.len()
                ));
            }
            if gpu.compiled_resident_bytes().is_some() {
                return Err("the system stayed resident".into());
            }
            println!("     {} row blocks per partition", streamed[0]);
            let pa = cc.assign(w[0].clone()).map_err(|e| e.to_string())?;
            let got = compute_compiled(&gpu, &params, &cc, &w[..1])?;
            verifies(&params, &pa, &got[0])
        })();
        t.check(
            &format!("compiled, matrices streamed in {block}-byte row blocks, porep-like 2^{log}"),
            r,
        );
    }
    for (inputs, rows) in [(1usize, 3usize), (37, 20_011)] {
        let r = (|| {
            let circuits: Vec<_> = (0..2)
                .map(|s| LayoutCircuit::new(inputs, rows, s))
                .collect();
            let mut rng = ChaCha20Rng::seed_from_u64(rows as u64 + 1);
            let params = generate_random_parameters(circuits[0].clone(), &mut rng)
                .map_err(|e| e.to_string())?;
            let (cc, w) = compiled_of(&circuits, "layout")?;
            let (want, _) = CpuBackend
                .compute(&params, &synthesize_batch(circuits).expect("synthesis"))
                .map_err(|e| e.to_string())?;
            let gpu = open(GpuConfig {
                keep_compiled_resident: false,
                compiled_block_bytes: 2048,
                ..GpuConfig::default()
            })?;
            same(&compute_compiled(&gpu, &params, &cc, &w)?, &want)?;
            expect_on_device(&gpu, 2, 2)
        })();
        t.check(
            &format!("compiled, matrices streamed, layout circuit {inputs} inputs x {rows} rows"),
            r,
        );
    }
    // A card too small for the system beside its parameters runs the H
    // MSM in parts, then streams the matrices (an 80 GB card at 2^27); one
    // too small for the streamed working set too leaves a/b/c to the host.
    {
        let log = 13;
        let params = params_for(log);
        let circuits: Vec<_> = (64..66).map(|s| PorepLikeCircuit::new(log, s)).collect();
        let (cc, w) = compiled_of(&circuits, "porep-like").expect("compile");
        let config = |cap: Option<u64>| GpuConfig {
            pack_witness: false,
            zero_one_form: false,
            budget: BudgetConfig {
                vram_limit: cap,
                ..BudgetConfig::default()
            },
            ..GpuConfig::default()
        };
        let r = (|| {
            // Both partitions the witness with more dense scalars, so that
            // one capacity places them the same way.
            let whole = open(config(None))?;
            let fits: Vec<_> = w
                .iter()
                .map(|x| whole.compiled_fit(&params, &cc, Some(x)))
                .collect();
            let k = (fits[1].working_streamed[0] > fits[0].working_streamed[0]) as usize;
            let (fit, w) = (fits[k], vec![w[k].clone(), w[k].clone()]);
            drop(whole);
            // The CPU's result for the same two partitions (circuit k twice).
            let (want, _) = CpuBackend
                .compute(
                    &params,
                    &synthesize_batch(vec![circuits[k].clone(), circuits[k].clone()])
                        .map_err(|e| e.to_string())?,
                )
                .map_err(|e| e.to_string())?;
            if (fit.placement, fit.h_parts) != (CompiledPlacement::Resident, 1) {
                return Err(format!("on the whole card: {fit:?}"));
            }
            let (p, sys) = (fit.params_bytes, fit.system_bytes);
            let (res, st) = (fit.working_resident, fit.working_streamed);
            if st[0] >= sys + res[0] {
                return Err(format!("streaming needs no less than residence: {fit:?}"));
            }
            // The rule, restated: resident with the fewest H parts that
            // fit, else streamed so, else the host.
            let expect = |cap: u64| {
                let fewest = |v: [u64; 3], beside: u64| {
                    v.iter()
                        .position(|&x| beside + x <= cap)
                        .map(|i| H_PARTS[i])
                };
                match (fewest(res, p + sys), fewest(st, p)) {
                    (Some(k), _) => (CompiledPlacement::Resident, k),
                    (None, Some(k)) => (CompiledPlacement::Streamed, k),
                    (None, None) => (CompiledPlacement::Host, 1),
                }
            };
            let last = H_PARTS.len() - 1;
            let caps = [
                p + sys + res[0] - 1,
                p + st[0],
                p + st[last],
                p + st[last] - 1,
            ];
            let cases: Vec<_> = caps
                .iter()
                .map(|&c| (c, expect(c).0, expect(c).1))
                .collect();
            for want in [CompiledPlacement::Streamed, CompiledPlacement::Host] {
                if !cases.iter().any(|c| c.1 == want) {
                    return Err(format!("no capacity tried gives {want:?}: {cases:?}"));
                }
            }
            for (cap, placement, parts) in cases {
                let gpu = open(config(Some(cap)))?;
                let got = gpu.compiled_fit(&params, &cc, Some(&w[0]));
                let parts_ok = placement == CompiledPlacement::Host || got.h_parts == parts;
                if got.placement != placement || !parts_ok {
                    return Err(format!(
                        "capacity {cap}: {:?} in {} parts, expected {placement:?} in {parts}",
                        got.placement, got.h_parts
                    ));
                }
                same(&compute_compiled(&gpu, &params, &cc, &w)?, &want)?;
                let reports = gpu.take_reports();
                let streamed = reports.iter().filter(|r| r.abc_row_blocks > 0).count();
                let dev = reports.iter().filter(|r| r.abc_on_device).count();
                let want_parts = if placement == CompiledPlacement::Host {
                    1
                } else {
                    parts
                };
                if let Some(r) = reports.iter().find(|r| r.h_msm_parts != want_parts) {
                    return Err(format!(
                        "capacity {cap} ({placement:?}): partition {} ran the H MSM in {} parts, {want_parts} planned",
                        r.index, r.h_msm_parts
                    ));
                }
                let want_counts = match placement {
                    CompiledPlacement::Resident => (2, 0),
                    CompiledPlacement::Streamed => (2, 2),
                    CompiledPlacement::Host => (0, 0),
                };
                if (dev, streamed) != want_counts || reports.len() != 2 {
                    return Err(format!(
                        "capacity {cap} ({placement:?}): {dev} of {} on the device, {streamed} streamed",
                        reports.len()
                    ));
                }
                let resident = gpu.compiled_resident_bytes().is_some();
                if resident != (placement == CompiledPlacement::Resident) {
                    return Err(format!(
                        "capacity {cap} ({placement:?}): system resident {resident}"
                    ));
                }
                println!(
                    "     capacity {cap}: {placement:?}, H MSM in {parts} part(s) (parameters {p} + system {sys}; working {res:?} resident, {st:?} streamed)"
                );
                let pa = cc.assign(w[0].clone()).map_err(|e| e.to_string())?;
                let got = compute_compiled(&gpu, &params, &cc, &w[..1])?;
                verifies(&params, &pa, &got[0])?;
            }
            // Two workers where one partition's working set fits beside the
            // resident system, not two: the second waits for memory on the
            // device path, none goes to the host.
            let cap = p + sys + res[0];
            let gpu = Arc::new(open(GpuConfig {
                workers_per_device: 2,
                ..config(Some(cap))
            })?);
            let runs: Vec<Result<Vec<MsmResults>, String>> = std::thread::scope(|s| {
                let hs: Vec<_> = (0..2)
                    .map(|_| {
                        let (gpu, params, cc, w) = (&gpu, &params, &cc, &w);
                        s.spawn(move || compute_compiled(gpu, params, cc, w))
                    })
                    .collect();
                hs.into_iter()
                    .map(|h| h.join().unwrap_or_else(|_| Err("worker panicked".into())))
                    .collect()
            });
            for got in runs {
                same(&got?, &want)?;
            }
            let reports = gpu.take_reports();
            let dev = reports.iter().filter(|r| r.abc_on_device).count();
            // The system goes up in the first admission and both workers
            // prove with it: none streams while the other waits.
            let streamed = reports.iter().filter(|r| r.abc_row_blocks > 0).count();
            let b = gpu.budget();
            if dev != 4
                || streamed != 0
                || reports.len() != 4
                || b.peak() > cap
                || b.queued() != 0
                || gpu.compiled_resident_bytes().is_none()
            {
                return Err(format!(
                    "two workers under {cap}: {dev} of {} on the device, {streamed} streamed, peak {}, {} queued, system resident {}",
                    reports.len(),
                    b.peak(),
                    b.queued(),
                    gpu.compiled_resident_bytes().is_some()
                ));
            }
            println!(
                "     two workers under {cap}: 4 of 4 on the device, peak reserved {}",
                b.peak()
            );
            Ok(())
        })();
        t.check(
            "compiled: the H MSM in parts, then the matrices streamed, where the system does not fit beside its parameters; the host below that; two workers wait on the device; porep-like 2^13",
            r,
        );
    }
    let log = 10;
    let params = params_for(log);
    let circuits: Vec<_> = (50..52).map(|s| PorepLikeCircuit::new(log, s)).collect();
    let (cc, w) = compiled_of(&circuits, "porep-like").expect("compile");
    let (want, _) = CpuBackend
        .compute(&params, &synthesize_batch(circuits).expect("synthesis"))
        .expect("cpu");
    t.check(
        "compiled: host fallback when parameters may not stay resident",
        (|| {
            let gpu = open(GpuConfig {
                keep_params_resident: false,
                ..GpuConfig::default()
            })?;
            same(&compute_compiled(&gpu, &params, &cc, &w)?, &want)?;
            expect_on_device(&gpu, 0, 2)
        })(),
    );
    for (panic, streamed) in [(false, false), (true, false), (false, true)] {
        let r = (|| {
            let gpu = open(GpuConfig {
                keep_compiled_resident: !streamed,
                compiled_block_bytes: 8192,
                ..GpuConfig::default()
            })?;
            same(&compute_compiled(&gpu, &params, &cc, &w)?, &want)?;
            let r0 = gpu.budget().requests();
            same(&compute_compiled(&gpu, &params, &cc, &w)?, &want)?;
            let k = gpu.budget().requests() - r0;
            let free_ok = gpu.measure_free().map_err(|e| e.to_string())?;
            let reserved_ok = gpu.budget().reserved();
            for n in 1..=k {
                if panic {
                    gpu.budget().panic_nth_reservation(Some(n))
                } else {
                    gpu.budget().fail_nth_reservation(Some(n))
                }
                match compute_compiled(&gpu, &params, &cc, &w) {
                    Ok(_) => return Err(format!("allocation {n} of {k}: no error")),
                    Err(e) if !e.contains("injected") => {
                        return Err(format!("allocation {n}: unexpected error {e}"))
                    }
                    Err(_) => {}
                }
                let free = gpu.measure_free().map_err(|e| e.to_string())?;
                if free.abs_diff(free_ok) > FREE_TOLERANCE || gpu.budget().reserved() != reserved_ok
                {
                    return Err(format!(
                        "allocation {n} of {k}: free {free} (was {free_ok}), reserved {} (was {reserved_ok})",
                        gpu.budget().reserved()
                    ));
                }
                same(&compute_compiled(&gpu, &params, &cc, &w)?, &want)
                    .map_err(|e| format!("proof after fault {n}: {e}"))?;
            }
            let (dev, all) = on_device(&gpu);
            println!("     {k} allocations per compiled batch, each failed once; {dev} of {all} partitions on the device");
            Ok(())
        })();
        let kind = if panic { "panic" } else { "error" };
        let mats = if streamed { ", matrices streamed" } else { "" };
        t.check(
            &format!("compiled{mats}: fault ({kind}) at every allocation"),
            r,
        );
    }
}

/// z through the compiled path's upload and back, packed by 0/1 and raw:
/// equal to what went up, element for element, at sizes around a group
/// (32) and a ring piece (2^20 elements), for all-zero, all-one, random
/// (which goes raw even when packing is on) and mixed witnesses, and one
/// with a random piece between packed ones. Checks the bytes sent too.
fn packed_witness(t: &mut Tally) {
    use ff::Field;
    use rand::Rng;
    const PIECE: usize = 1 << 20; // upload::RING_SLOT_BYTES / 32
    let gpu = match open(GpuConfig::default()) {
        Ok(g) => g,
        Err(e) => return t.check("z packed: open", Err(e)),
    };
    let mut rng = ChaCha20Rng::seed_from_u64(2027);
    // n values: 0 with probability `zeros`, 1 with `ones`, else random.
    let mut draw = |n: usize, zeros: f64, ones: f64| -> Vec<Scalar> {
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(match rng.gen::<f64>() {
                u if u < zeros => Scalar::ZERO,
                u if u < zeros + ones => Scalar::ONE,
                _ => Scalar::random(&mut rng),
            });
        }
        out
    };
    // (name, aux, Some(true): packing must halve the bytes sent, Some(false):
    // it must send them raw, None: small, either).
    let mut cases: Vec<(String, Vec<Scalar>, Option<bool>)> = Vec::new();
    for n in [0usize, 1, 31, 32, 33, 1000, 2 * PIECE + 12_345] {
        let big = (n >= 1000).then_some(true);
        for (kind, zeros, ones, packs) in [
            ("mixed", 0.566, 0.294, big),
            ("all zero", 1.0, 0.0, big),
            ("all one", 0.0, 1.0, big),
            ("random", 0.0, 0.0, Some(false)),
        ] {
            cases.push((format!("{kind}, {n} aux"), draw(n, zeros, ones), packs));
        }
    }
    let mut aux = draw(PIECE, 0.566, 0.294);
    aux.extend(draw(PIECE, 0.0, 0.0));
    aux.extend(draw(PIECE, 0.566, 0.294));
    aux.extend(draw(PIECE / 2 + 7, 0.566, 0.294));
    cases.push(("mixed pieces, the second random".into(), aux, Some(true)));
    for (name, aux, packs) in &cases {
        let inputs = [Scalar::ONE, Scalar::from(7u64)];
        let raw_bytes = 32 * (inputs.len() + aux.len()) as u64;
        // The aux vector's 0/1 form as the synthesis side makes it (None
        // where it does not pay), and a stale one (of another vector of the
        // same length), which the upload must refuse and pack instead.
        let form = ZeroOneForm::of(aux);
        let mut other = aux.clone();
        if let Some(e) = other.last_mut() {
            *e = if *e == Scalar::ZERO {
                Scalar::ONE
            } else {
                Scalar::ZERO
            };
        }
        let stale = ZeroOneForm::of(&other);
        // (how, pack on the way, the form given, whether it goes packed,
        // the form written into pinned memory first): a form goes up as it
        // is whether or not packing on the way is on, staged or through
        // the ring; a stale one is refused (staged or not), and the vector
        // packed on the way.
        for (how, pack, form, packed, stage) in [
            ("packed", true, None, true, false),
            ("prepared", false, form.as_ref(), true, false),
            ("prepared, staged", false, form.as_ref(), true, true),
            ("stale form", true, stale.as_ref(), true, false),
            ("stale form, staged", true, stale.as_ref(), true, true),
            (
                "stale form, no packing",
                false,
                stale.as_ref(),
                false,
                false,
            ),
            ("raw", false, None, false, false),
        ] {
            // A form that was not made (it does not pay) has nothing to send.
            if (how.starts_with("prepared") || how.starts_with("stale")) && form.is_none() {
                continue;
            }
            let r = gpu
                .witness_round_trip(&inputs, aux, form, pack, stage)
                .map_err(|e| e.to_string())
                .and_then(|(z, sent)| {
                    let want = inputs.iter().chain(aux.iter());
                    if let Some(i) = z.iter().zip(want).position(|(a, b)| a != b) {
                        return Err(format!("element {i} differs"));
                    }
                    if z.len() != inputs.len() + aux.len() {
                        return Err(format!("{} elements back", z.len()));
                    }
                    let ok = match (packed, packs) {
                        (false, _) | (true, Some(false)) => sent == raw_bytes,
                        (true, Some(true)) => sent * 2 < raw_bytes,
                        (true, None) => sent <= raw_bytes + 64,
                    };
                    if !ok {
                        return Err(format!("{sent} bytes sent of {raw_bytes}"));
                    }
                    Ok(())
                });
            t.check(&format!("z {how} through the upload and back: {name}"), r);
        }
    }
}

/// porep-like 2^log, one partition: the compiled path (z up, a/b/c, H and
/// the MSMs from the device split) against the host path of the same
/// witness (a/b/c on the CPU's cores, host preparation, upload), each
/// `reps` times after a warm-up that makes everything resident.
fn compiled_bench(
    logs: &[u32],
    limits: &[Option<u64>],
    reps: usize,
    device_only: bool,
    batch: usize,
    out: &mut Vec<Value>,
    t: &mut Tally,
) {
    for &log in logs {
        let clock = Instant::now();
        let prep = std::thread::spawn(move || {
            let circuit = PorepLikeCircuit::new(log, 7);
            let c0 = Instant::now();
            let cc = compile(PorepLikeCircuit::new(log, 0), "porep-like").expect("compile");
            let compile_s = c0.elapsed().as_secs_f64();
            let c0 = Instant::now();
            let w = cc.witness_batch(vec![circuit]).expect("witness");
            let witness_s = c0.elapsed().as_secs_f64();
            (cc, w, compile_s, witness_s)
        });
        let engine = match GpuFixedBase::open(0) {
            Ok(e) => e,
            Err(e) => {
                t.check("paramgen engine open", Err(e.to_string()));
                return;
            }
        };
        let params = match gen_params(log, &engine) {
            Ok((p, tm)) => {
                println!("{}", gen_line(log, &tm));
                p
            }
            Err(e) => {
                t.check(&format!("compiled bench 2^{log}: parameters"), Err(e));
                return;
            }
        };
        drop(engine);
        let Ok((cc, w, compile_s, witness_s)) = prep.join() else {
            t.check(
                &format!("compiled bench 2^{log}: compile"),
                Err("panicked".into()),
            );
            return;
        };
        println!(
            "compiled bench 2^{log}: params, compile {compile_s:.1} s, witness {witness_s:.1} s ({:.1} s in all); matrices {:.2} GB",
            clock.elapsed().as_secs_f64(),
            cc.matrix_bytes() as f64 / 1e9
        );
        for &limit in limits {
            // A budget capped as a smaller card's (an 80 GB card's on an
            // H200), or the whole card.
            let tag = match limit {
                None => format!("2^{log}"),
                Some(l) => format!("2^{log} under {:.2} GB", l as f64 / 1e9),
            };
            let budgeted = |c: GpuConfig| GpuConfig {
                budget: BudgetConfig {
                    vram_limit: limit,
                    ..c.budget
                },
                ..c
            };
            let gpu = match open(budgeted(GpuConfig::default())) {
                Ok(g) => g,
                Err(e) => {
                    t.check("compiled bench open", Err(e));
                    return;
                }
            };
            let fit = gpu.compiled_fit(&params, &cc, Some(&w[0]));
            let bound = gpu.compiled_fit(&params, &cc, None);
            let gb = |b: u64| b as f64 / 1e9;
            for (what, f) in [("any witness", bound), ("this witness", fit)] {
                let gbs = |v: [u64; 3]| v.map(|b| format!("{:.2}", gb(b))).join(" / ");
                println!(
                    "compiled bench {tag}, {what}: {:?}, H MSM in {} part(s) (capacity {:.2} GB: parameters {:.2} + system {:.2}; working with the H MSM in 1 / 2 / 4 parts {} resident, {} streamed)",
                    f.placement,
                    f.h_parts,
                    gb(f.capacity),
                    gb(f.params_bytes),
                    gb(f.system_bytes),
                    gbs(f.working_resident),
                    gbs(f.working_streamed)
                );
            }
            let clock = Instant::now();
            let first = compute_compiled(&gpu, &params, &cc, &w);
            let warm = clock.elapsed();
            let pa = cc.assign(w[0].clone()).expect("assign");
            let first = match first {
                Ok(f) => f,
                Err(e) => {
                    t.check(&format!("compiled bench {tag}: first partition"), Err(e));
                    return;
                }
            };
            t.check(
                &format!(
                    "compiled bench {tag}: proof from the device path verifies, wrong input rejected"
                ),
                verifies(&params, &pa, &first[0]),
            );
            // A 2^27 assignment is ~17 GB of host memory.
            drop(pa);
            let (dev, _) = on_device(&gpu);
            let resident = gpu.compiled_resident_bytes().unwrap_or(0);
            // `reps` device-path runs as the backend is set now, each checked
            // against the first result: (times, reports).
            let timed_runs = |gpu: &CudaBackend, what: &str, w: &Vec<Witness>, t: &mut Tally| {
                let mut runs = Vec::new();
                let mut reports = Vec::new();
                for _ in 0..reps {
                    // The witness is cloned before the clock starts (a prover
                    // moves it in).
                    let batch = w.clone();
                    let clock = Instant::now();
                    let r = gpu
                        .compute_compiled(&params, &cc, batch)
                        .map(|r| r.0)
                        .map_err(|e| e.to_string());
                    runs.push(clock.elapsed());
                    t.check(
                        &format!("compiled bench {tag}: {what} the first result"),
                        r.and_then(|g| same(&g, &first)),
                    );
                    reports.extend(gpu.take_reports());
                }
                (runs, reports)
            };
            let mut device_runs = |what: &str, w: &Vec<Witness>| timed_runs(&gpu, what, w, t);
            let (runs, reports) = device_runs("device path equals", &w);
            // The same with z sent the other way (packed by 0/1 or raw, the
            // default's opposite), on the same warm backend.
            let other_packed = !GpuConfig::default().pack_witness;
            let other = if other_packed { "z packed" } else { "z raw" };
            gpu.set_pack_witness(other_packed);
            let (other_runs, other_reports) =
                device_runs(&format!("device path, {other}, equals"), &w);
            // z's 0/1 form made on the synthesis side (as the daemon's synthesis
            // workers do when the backend packs), then sent as it is.
            let mut prepared = w.clone();
            let clock = Instant::now();
            prepared.iter_mut().for_each(Witness::prepare_zero_one);
            let form_ms = ms(clock.elapsed());
            let formed = prepared.iter().all(|w| w.aux_zero_one.is_some());
            gpu.set_pack_witness(GpuConfig::default().pack_witness);
            gpu.set_zero_one_form(true);
            // One untimed first: its staged form's pinned buffer is made
            // (~150 ms), then kept for the next ones (calls 88 and 101:
            // 1553-1578 ms against 1378-1380 with the buffer kept).
            let _ = gpu.compute_compiled(&params, &cc, prepared.clone());
            let _ = gpu.take_reports();
            let (prep_runs, prep_reports) =
                device_runs("device path, z prepared, equals", &prepared);
            // The same with the device pool handing free memory back at each
            // synchronisation once a quarter of the card is reserved (the
            // default before 2026-12-04; resident parameters alone pass it),
            // then once more with H's steps timed.
            let total = gpu.memory_info().map(|(_, total, _)| total).unwrap_or(0);
            let quarter = gpu.set_pool_keep(Some(total / 4));
            if let Err(e) = &quarter {
                println!("compiled bench {tag}: the pool's threshold could not be set: {e}");
            }
            let (keep_runs, keep_reports) = if quarter.is_ok() {
                device_runs("device path, z prepared, pool keeps a quarter,", &prepared)
            } else {
                (Vec::new(), Vec::new())
            };
            let _ = gpu.set_pool_keep(None);
            gpu.set_h_profile(true);
            let _ = device_runs("device path, H profiled,", &prepared);
            let h_steps = gpu.take_h_profiles();
            gpu.set_h_profile(false);
            // (The MSMs' other sort is measured in a process of its own,
            // `CUZK_MSM_SORT=atomic`: the budget plans for the sort a device
            // opens with, and the atomic one holds 4 bytes an entry more.)
            // And with the bucket reduction never split (each group's
            // double-and-add).
            let split = gpu.set_msm_bucket_split(cuzk_cuda::BucketSplit::Never);
            let (tail_runs, tail_reports) = device_runs(
                "device path, z prepared, bucket reduction unsplit,",
                &prepared,
            );
            gpu.set_msm_bucket_split(split);
            // And with the H MSM in the other of one and two parts where
            // both fit (the default takes two for a 2^27 H: call 95).
            let other_parts = if fit.h_parts == 1 { 2 } else { 1 };
            let before = gpu.set_h_parts_min(other_parts);
            let (parts_runs, parts_reports) =
                if gpu.compiled_fit(&params, &cc, Some(&w[0])).h_parts == other_parts {
                    device_runs(
                        &format!("device path, z prepared, H MSM in {other_parts} part(s),"),
                        &prepared,
                    )
                } else {
                    (Vec::new(), Vec::new())
                };
            gpu.set_h_parts_min(before);
            // `batch` partitions (the prepared witness each), as one GPU worker
            // proves them (one caller, in turn) and as two do (two callers at
            // once, half each, on the backend's two slots): the daemon's ways.
            // Each worker is fed by a thread of its own that copies the next
            // witness (on every core) while the current one is proved (one
            // waiting, as a synthesis pipeline keeps them), so that no more than
            // a few 2^27 witnesses are in memory at once; the clock starts when
            // every worker holds its first. Call 51 cloned on one thread: 3.0 s
            // a partition with one worker, the copies' pace, not the GPU's.
            // The raw witness is not read again on the device-only path.
            let none = Vec::new();
            let w: &Vec<Witness> = if device_only { &none } else { &w };
            // Two workers once more with the 0/1 form written into the ring
            // as it goes up (inside the partition's turn on the device)
            // instead of into pinned memory before it (the default).
            let mut batches = Vec::new();
            for (workers, staged) in [(1usize, true), (1, false), (2, true), (2, false)]
                .into_iter()
                .filter(|_| batch > 0)
            {
                if GpuConfig::default().workers_per_device < workers {
                    println!(
                        "compiled bench {tag}: {workers} workers: the backend has fewer slots"
                    );
                    continue;
                }
                let per = batch.div_ceil(workers);
                let counts: Vec<usize> = (0..workers)
                    .map(|k| per.min(batch - (k * per).min(batch)))
                    .collect();
                gpu.set_stage_form(staged);
                let ready = std::sync::Barrier::new(workers + 1);
                let (wall, results) = std::thread::scope(|s| {
                    let handles: Vec<_> = counts
                        .iter()
                        .map(|&n| {
                            let (tx, rx) = std::sync::mpsc::sync_channel::<Witness>(1);
                            let one = &prepared[0];
                            s.spawn(move || {
                                for _ in 0..n {
                                    if tx.send(par_clone(one)).is_err() {
                                        break;
                                    }
                                }
                            });
                            let (gpu, params, cc, ready) = (&gpu, &params, &cc, &ready);
                            s.spawn(move || {
                                let mut next = rx.recv().ok();
                                ready.wait();
                                let mut got = Vec::new();
                                while let Some(w) = next.take() {
                                    let r = gpu
                                        .compute_compiled(params, cc, vec![w])
                                        .map(|r| r.0)
                                        .map_err(|e| e.to_string());
                                    got.push(r);
                                    next = rx.recv().ok();
                                }
                                got
                            })
                        })
                        .collect();
                    ready.wait();
                    let clock = Instant::now();
                    let results: Vec<Result<Vec<MsmResults>, String>> = handles
                        .into_iter()
                        .flat_map(|h| h.join().unwrap_or_else(|_| vec![Err("panicked".into())]))
                        .collect();
                    (clock.elapsed(), results)
                });
                let proved = results.len();
                t.check(
                    &format!(
                        "compiled bench {tag}: {batch} partitions by {workers} worker(s) equal the first result"
                    ),
                    if proved == batch {
                        results.into_iter().try_for_each(|r| {
                            r?.iter()
                                .try_for_each(|g| same(std::slice::from_ref(g), &first[..1]))
                        })
                    } else {
                        Err(format!("{proved} partitions proved"))
                    },
                );
                batches.push((workers, staged, wall, gpu.take_reports()));
            }
            gpu.set_stage_form(true);
            drop(prepared);
            gpu.set_zero_one_form(GpuConfig::default().zero_one_form);
            // The host path of the same witness, for comparison.
            let mut host_runs = Vec::new();
            let mut host_reports = Vec::new();
            let host_reps = if device_only { 0 } else { reps };
            for _ in 0..host_reps {
                let one = w[0].clone();
                let clock = Instant::now();
                let pa = cc.assign(one).expect("assign");
                let assign = clock.elapsed();
                let r = compute(&gpu, &params, std::slice::from_ref(&pa));
                host_runs.push(clock.elapsed());
                t.check(
                    &format!("compiled bench {tag}: host path equals the device path"),
                    r.and_then(|g| same(&g, &first)),
                );
                let mut rep = gpu.take_reports();
                if let Some(r) = rep.first_mut() {
                    r.timings.abc = assign;
                }
                host_reports.extend(rep);
            }
            // The same witness with the matrices sent up in row blocks (as when
            // the system does not fit beside the parameters), on a fresh
            // backend: the first one's copies go first.
            drop(gpu);
            let mut streamed_runs = Vec::new();
            let mut streamed_reports = Vec::new();
            if !device_only {
                match open(budgeted(GpuConfig {
                    keep_compiled_resident: false,
                    ..GpuConfig::default()
                })) {
                    Ok(gpu) => {
                        // Warm-up: the parameters go up.
                        let _ = compute_compiled(&gpu, &params, &cc, w);
                        let _ = gpu.take_reports();
                        (streamed_runs, streamed_reports) =
                            timed_runs(&gpu, "streamed matrices equal", w, t);
                    }
                    Err(e) => t.check("compiled bench open (streamed)", Err(e)),
                }
            }
            let med = median(runs.clone());
            let host_med = if host_runs.is_empty() {
                "not run".to_string()
            } else {
                format!("{:.1} ms", ms(median(host_runs.clone())))
            };
            let phase = |rs: &[PartitionReport], f: &dyn Fn(&PartitionReport) -> Duration| {
                ms(median(rs.iter().map(f).collect()))
            };
            let line = |name: &str, rs: &[PartitionReport]| {
                format!(
                    "{name}: abc {:.1} ms, upload {:.1} ms (wait {:.1}, z alloc {:.1}, copies {:.1} ms, {:.1} MB, {:.1} MB sent), H {:.1} ms, msm h {:.1} (in {} part(s)) / l {:.1} / a {:.1} / b1 {:.1} / b2 {:.1} ms, host prep {:.1} ms",
                    phase(rs, &|r| r.timings.abc),
                    phase(rs, &|r| r.timings.upload),
                    phase(rs, &|r| Duration::from_secs_f64(r.upload_wait_ms / 1e3)),
                    phase(rs, &|r| Duration::from_secs_f64(r.upload_alloc_ms / 1e3)),
                    median(rs.iter().map(|r| Duration::from_secs_f64(r.upload_copy_ms / 1e3)).collect::<Vec<_>>()).as_secs_f64() * 1e3,
                    rs.first().map_or(0.0, |r| r.upload_bytes as f64 / 1e6),
                    rs.first().map_or(0.0, |r| r.upload_sent_bytes as f64 / 1e6),
                    phase(rs, &|r| r.timings.h_ntt),
                    phase(rs, &|r| r.timings.msm_h),
                    rs.first().map_or(1, |r| r.h_msm_parts),
                    phase(rs, &|r| r.timings.msm_l),
                    phase(rs, &|r| r.timings.msm_a),
                    phase(rs, &|r| r.timings.msm_b_g1),
                    phase(rs, &|r| r.timings.msm_b_g2),
                    rs.iter().map(|r| r.host_prep_ms).sum::<f64>() / rs.len().max(1) as f64,
                )
            };
            println!(
                "compiled bench {tag}: device path {:.1} ms median (warm-up {:.1} ms, {dev} on the device; compiled system resident {:.2} GB), host path {host_med}",
                ms(med),
                ms(warm),
                resident as f64 / 1e9,
            );
            println!("  {}", line("device path", &reports));
            if !other_runs.is_empty() {
                println!(
                    "compiled bench {tag}: device path with {other} {:.1} ms median",
                    ms(median(other_runs.clone()))
                );
                println!("  {}", line(other, &other_reports));
            }
            println!(
                "compiled bench {tag}: device path with z prepared {:.1} ms median (0/1 form made in {form_ms:.1} ms on the synthesis side{})",
                ms(median(prep_runs.clone())),
                if formed { "" } else { "; it did not pay: z went raw" }
            );
            println!("  {}", line("z prepared", &prep_reports));
            if !keep_runs.is_empty() {
                println!(
                    "compiled bench {tag}: device path with z prepared, pool keeps a quarter {:.1} ms median",
                    ms(median(keep_runs.clone()))
                );
                println!("  {}", line("pool keeps a quarter", &keep_reports));
            }
            if !tail_runs.is_empty() {
                println!(
                    "compiled bench {tag}: device path with z prepared, bucket reduction unsplit {:.1} ms median",
                    ms(median(tail_runs.clone()))
                );
                println!("  {}", line("unsplit", &tail_reports));
            }
            if !parts_runs.is_empty() {
                println!(
                    "compiled bench {tag}: device path with z prepared, H MSM in {other_parts} part(s) {:.1} ms median",
                    ms(median(parts_runs.clone()))
                );
                println!(
                    "  {}",
                    line(&format!("H in {other_parts} part(s)"), &parts_reports)
                );
            }
            if let Some(first) = h_steps.first() {
                let steps: Vec<String> = (0..first.len())
                    .map(|i| {
                        let v: Vec<f64> = h_steps
                            .iter()
                            .filter_map(|p| p.get(i).map(|s| s.1))
                            .collect();
                        format!(
                            "{} {:.1}",
                            first[i].0,
                            v.iter().sum::<f64>() / v.len() as f64
                        )
                    })
                    .collect();
                println!(
                    "  H steps (mean of {} profiled partitions, ms): {}",
                    h_steps.len(),
                    steps.join(", ")
                );
            }
            if !host_reports.is_empty() {
                println!("  {}", line("host path", &host_reports));
            }
            if !streamed_runs.is_empty() {
                println!(
                    "compiled bench {tag}: streamed matrices {:.1} ms median, {} row blocks",
                    ms(median(streamed_runs.clone())),
                    streamed_reports.first().map_or(0, |r| r.abc_row_blocks)
                );
                println!("  {}", line("streamed", &streamed_reports));
            }
            for (workers, staged, wall, rs) in &batches {
                let how = if *staged {
                    "z's form staged ahead"
                } else {
                    "z's form written as it goes up"
                };
                println!(
                    "compiled bench {tag}: {batch} partitions, {workers} worker(s), {how}: {:.1} ms, {:.1} ms a partition",
                    ms(*wall),
                    ms(*wall) / batch as f64
                );
                println!("  {}", line(&format!("{workers} worker(s), medians"), rs));
            }
            out.push(json!({
                "compiled_bench": log,
                "vram_limit": limit,
                "batches": batches.iter().map(|(w, staged, wall, rs)| json!({
                    "partitions": batch,
                    "workers": w,
                    "z_form_staged": staged,
                    "wall_ms": ms(*wall),
                    "reports": rs,
                })).collect::<Vec<_>>(),
                "compile_s": compile_s,
                "witness_s": witness_s,
                "matrix_bytes": cc.matrix_bytes(),
                "resident_bytes": resident,
                "placement": format!("{:?}", fit.placement),
                "fit": {
                    "capacity": fit.capacity,
                    "params_bytes": fit.params_bytes,
                    "system_bytes": fit.system_bytes,
                    "working_resident": fit.working_resident,
                    "working_streamed": fit.working_streamed,
                    "h_parts": fit.h_parts,
                },
                "device_ms": runs.iter().map(|d| ms(*d)).collect::<Vec<_>>(),
                "host_ms": host_runs.iter().map(|d| ms(*d)).collect::<Vec<_>>(),
                "device_reports": reports,
                "z_other": other,
                "z_other_ms": other_runs.iter().map(|d| ms(*d)).collect::<Vec<_>>(),
                "z_other_reports": other_reports,
                "z_prepared_form_ms": form_ms,
                "z_prepared_ms": prep_runs.iter().map(|d| ms(*d)).collect::<Vec<_>>(),
                "z_prepared_reports": prep_reports,
                "pool_keep_quarter_ms": keep_runs.iter().map(|d| ms(*d)).collect::<Vec<_>>(),
                "pool_keep_quarter_reports": keep_reports,
                "h_other_parts": other_parts,
                "h_other_parts_ms": parts_runs.iter().map(|d| ms(*d)).collect::<Vec<_>>(),
                "h_other_parts_reports": parts_reports,
                "h_steps": h_steps,
                "host_reports": host_reports,
                "streamed_ms": streamed_runs.iter().map(|d| ms(*d)).collect::<Vec<_>>(),
                "streamed_reports": streamed_reports,
            }));
        }
    }
}

/// A copy of `w` made on every core: a 2^27 witness cloned on one thread
/// (4.3 GB of fresh pages) takes longer than a partition's proof.
fn par_clone(w: &Witness) -> Witness {
    use rayon::prelude::*;
    let mut aux = Vec::with_capacity(w.aux.len());
    aux.par_extend(w.aux.par_iter().copied());
    Witness {
        inputs: w.inputs.clone(),
        aux,
        aux_zero_one: w.aux_zero_one.clone(),
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

struct BenchOptions {
    parts: Vec<usize>,
    caps_mib: Vec<usize>,
    reps: usize,
    paramgen_gpu: bool,
    paramgen_cpu_max: u32,
    cpu_ref_max: u32,
    no_pageable: bool,
    distinct: usize,
}

fn bench(logs: &[u32], o: &BenchOptions, out: &mut Vec<Value>, t: &mut Tally) {
    let (parts, caps_mib, reps) = (&o.parts[..], &o.caps_mib[..], o.reps);
    for &log in logs {
        let gpu_engine = if o.paramgen_gpu {
            match GpuFixedBase::open(0) {
                Ok(e) => Some(e),
                Err(e) => {
                    t.check("paramgen engine open", Err(e.to_string()));
                    return;
                }
            }
        } else {
            None
        };
        let engine: &dyn FixedBaseEngine = match &gpu_engine {
            Some(e) => e,
            None => &CpuFixedBase,
        };
        // The partitions' synthesis (one thread per partition) runs beside
        // parameter generation (whose own synthesis is one thread too).
        // Distinct circuits synthesized: every partition count up to
        // --distinct; partition i proves circuit i mod distinct (the GPU's
        // work does not depend on the witness, and at 2^26+ ten syntheses
        // do not fit the host's memory or a call's time).
        let max_p = parts
            .iter()
            .copied()
            .max()
            .unwrap_or(1)
            .min(o.distinct.max(1));
        let clock = Instant::now();
        let synth = std::thread::spawn(move || {
            let all = assignments(log, 0..max_p as u64);
            println!(
                "bench 2^{log}: {max_p} partitions synthesized in {:.1} s (beside parameter generation)",
                clock.elapsed().as_secs_f64()
            );
            all
        });
        let params = match gen_params(log, engine) {
            Ok((p, tm)) => {
                println!("{}", gen_line(log, &tm));
                out.push(gen_json(log, &tm));
                Arc::new(p)
            }
            Err(e) => {
                t.check(&format!("bench 2^{log}: parameter generation"), Err(e));
                return;
            }
        };
        drop(gpu_engine);
        if o.paramgen_gpu && log <= o.paramgen_cpu_max {
            let r = gen_params(log, &CpuFixedBase).and_then(|(p, tm)| {
                println!("{}", gen_line(log, &tm));
                out.push(gen_json(log, &tm));
                if param_bytes(&p) == param_bytes(&params) {
                    Ok(())
                } else {
                    Err("differ".into())
                }
            });
            t.check(&format!("bench 2^{log}: GPU and CPU parameters equal"), r);
        }
        let gpu = Arc::new(match open(GpuConfig::default()) {
            Ok(g) => g,
            Err(e) => {
                t.check("bench open", Err(e));
                return;
            }
        });
        let all = match synth.join() {
            Ok(all) => all,
            Err(_) => {
                t.check(&format!("bench 2^{log}: synthesis"), Err("panicked".into()));
                return;
            }
        };
        // CPU on one partition: the reference result and the speed-up base
        // (up to --cpu-ref-max).
        let cpu_ref = log <= o.cpu_ref_max;
        let (cpu_want, cpu) = if cpu_ref {
            let clock = Instant::now();
            let (want, _) = CpuBackend.compute(&params, &all[..1]).expect("cpu");
            (Some(want), Some(clock.elapsed()))
        } else {
            (None, None)
        };
        // Warm-up: uploads the parameters (kept resident).
        let clock = Instant::now();
        let first = compute(&gpu, &params, &all[..1]);
        let warm = clock.elapsed();
        let want = match (first, cpu_want) {
            (Ok(g), Some(want)) => {
                t.check(
                    &format!("bench 2^{log}: GPU result equals the CPU's"),
                    same(&g, &want),
                );
                want
            }
            (Ok(g), None) => {
                let r = verifies(&params, &all[0], &g[0]);
                let ok = r.is_ok();
                t.check(
                    &format!("bench 2^{log}: GPU proof verifies, wrong input rejected"),
                    r,
                );
                if !ok {
                    return;
                }
                g
            }
            (Err(e), _) => {
                t.check(&format!("bench 2^{log}: first GPU partition"), Err(e));
                return;
            }
        };
        let cpu_ms = cpu.map(ms);
        gpu.take_reports();
        for &p in parts {
            // Two workers need two partitions to share.
            for workers in [1usize, 2].into_iter().filter(|&w| w <= p) {
                let mut walls = Vec::new();
                let mut reports: Vec<PartitionReport> = Vec::new();
                let mut ok = Ok(());
                for _ in 0..reps {
                    let order: Vec<usize> = (0..p).map(|i| i % all.len()).collect();
                    let clock = Instant::now();
                    let res: Vec<Result<Vec<MsmResults>, String>> = std::thread::scope(|s| {
                        let per = p.div_ceil(workers);
                        let hs: Vec<_> = order
                            .chunks(per)
                            .map(|chunk| {
                                let (gpu, params, all) = (gpu.clone(), params.clone(), &all);
                                s.spawn(move || {
                                    // One partition per call, as a daemon worker does.
                                    let mut v = Vec::new();
                                    for &i in chunk {
                                        v.extend(compute(
                                            &gpu,
                                            &params,
                                            std::slice::from_ref(&all[i]),
                                        )?);
                                    }
                                    Ok(v)
                                })
                            })
                            .collect();
                        hs.into_iter()
                            .map(|h| h.join().unwrap_or_else(|_| Err("panicked".into())))
                            .collect()
                    });
                    walls.push(clock.elapsed());
                    reports.extend(gpu.take_reports());
                    // Partition 0 (seed 0) is the reference's circuit.
                    match res.into_iter().collect::<Result<Vec<_>, String>>() {
                        Err(e) => ok = Err(e),
                        Ok(v) => {
                            if let Err(e) = same(&v[0][..1], &want[..1]) {
                                ok = Err(e);
                            }
                        }
                    }
                }
                t.check(
                    &format!("bench 2^{log} x{p}, {workers} worker(s): no error"),
                    ok,
                );
                let wall = median(walls);
                let per_circuit = wall / p as u32;
                let phase =
                    |f: fn(&PartitionReport) -> Duration| median(reports.iter().map(f).collect());
                println!(
                    "bench 2^{log} x{p} workers {workers}: wall {:.1} ms, {:.1} ms/circuit, CPU 1 circuit {:?} ms ({:?}x); \
                     per partition median: total {:.1}, upload {:.1}, h {:.1}, readback {:.1}, msm a {:.1} b_g1 {:.1} b_g2 {:.1} l {:.1} h {:.1}; plan {:?}; pool high {} MiB",
                    ms(wall), ms(per_circuit), cpu_ms.map(|c| c.round()),
                    cpu.map(|c| (c.as_secs_f64() / per_circuit.as_secs_f64() * 10.0).round() / 10.0),
                    ms(phase(|r| r.timings.total)), ms(phase(|r| r.timings.upload)), ms(phase(|r| r.timings.h_ntt)),
                    ms(phase(|r| r.timings.readback)), ms(phase(|r| r.timings.msm_a)), ms(phase(|r| r.timings.msm_b_g1)),
                    ms(phase(|r| r.timings.msm_b_g2)), ms(phase(|r| r.timings.msm_l)), ms(phase(|r| r.timings.msm_h)),
                    reports.first().map(|r| r.plan),
                    reports.iter().map(|r| r.pool_high).max().unwrap_or(0) / MIB,
                );
                out.push(json!({
                    "bench": {"log": log, "partitions": p, "workers": workers, "reps": reps, "pinned": true},
                    "wall_ms": ms(wall), "per_circuit_ms": ms(per_circuit),
                    "cpu_one_circuit_ms": cpu_ms, "warmup_ms": ms(warm),
                    "partitions": reports,
                }));
            }
        }
        // VRAM caps: one partition under each, against the CPU's result.
        // The pool's high-water mark is device-wide, so the uncapped
        // backend above (its resident parameters) must be gone first.
        drop(gpu);
        for &cap_mib in caps_mib {
            let cap = cap_mib as u64 * MIB;
            let r = (|| {
                let g = open(GpuConfig {
                    budget: BudgetConfig {
                        vram_limit: Some(cap),
                        ..BudgetConfig::default()
                    },
                    ..GpuConfig::default()
                })?;
                let mut walls = Vec::new();
                for _ in 0..reps.min(2) {
                    let clock = Instant::now();
                    same(&compute(&g, &params, &all[..1])?, &want)?;
                    walls.push(clock.elapsed());
                }
                let reports = g.take_reports();
                let high = reports.iter().map(|r| r.pool_high).max().unwrap_or(0);
                println!(
                    "bench 2^{log} x1 capped at {cap_mib} MiB: walls {:?} ms; plans {:?}; pool high {} MiB; peak reserved {} MiB",
                    walls.iter().map(|w| ms(*w).round()).collect::<Vec<_>>(),
                    reports.iter().map(|r| r.plan).collect::<Vec<_>>(),
                    high / MIB,
                    reports.iter().map(|r| r.peak_reserved).max().unwrap_or(0) / MIB,
                );
                out.push(json!({"bench": {"log": log, "cap_mib": cap_mib}, "walls_ms": walls.iter().map(|w| ms(*w)).collect::<Vec<_>>(), "partitions": reports}));
                if high > cap {
                    return Err(format!(
                        "pool high-water mark {} MiB above the cap",
                        high / MIB
                    ));
                }
                Ok(())
            })();
            t.check(
                &format!(
                    "bench 2^{log} capped at {cap_mib} MiB: right result, pool within the cap"
                ),
                r,
            );
        }
        // The same single partition staged from pageable memory.
        if parts.is_empty() || o.no_pageable {
            continue;
        }
        let pageable = match open(GpuConfig {
            pinned_staging: false,
            ..GpuConfig::default()
        }) {
            Ok(g) => g,
            Err(e) => {
                t.check("bench open (pageable)", Err(e));
                return;
            }
        };
        let _ = compute(&pageable, &params, &all[..1]);
        pageable.take_reports();
        for _ in 0..reps {
            let r = compute(&pageable, &params, &all[..1]).and_then(|g| same(&g, &want));
            if r.is_err() {
                t.check(&format!("bench 2^{log} pageable staging"), r);
                return;
            }
        }
        let reports = pageable.take_reports();
        let phase = |f: fn(&PartitionReport) -> Duration| median(reports.iter().map(f).collect());
        println!(
            "bench 2^{log} x1 pageable staging: per partition median total {:.1}, upload {:.1}, h {:.1}, readback {:.1}, msm h {:.1}",
            ms(phase(|r| r.timings.total)), ms(phase(|r| r.timings.upload)), ms(phase(|r| r.timings.h_ntt)),
            ms(phase(|r| r.timings.readback)), ms(phase(|r| r.timings.msm_h)),
        );
        out.push(json!({
            "bench": {"log": log, "partitions": 1, "workers": 1, "reps": reps, "pinned": false},
            "partitions": reports,
        }));
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let list = |s: String| {
        s.split(',')
            .filter_map(|x| x.trim().parse().ok())
            .collect::<Vec<usize>>()
    };
    let bench_logs: Vec<u32> = arg("--bench")
        .map(list)
        .unwrap_or_default()
        .into_iter()
        .map(|x| x as u32)
        .collect();
    // `--partitions 0`: no partition-count runs (caps only).
    let mut parts = arg("--partitions").map(list).unwrap_or_else(|| vec![1, 10]);
    parts.retain(|&p| p > 0);
    let caps = arg("--caps-mib").map(list).unwrap_or_default();
    let reps = arg("--reps")
        .and_then(|r| r.parse().ok())
        .unwrap_or(3usize)
        .max(1);
    let json_out = arg("--json-out");
    let skip_checks = args.iter().any(|a| a == "--bench-only");

    let mut t = Tally {
        passed: 0,
        failed: 0,
    };
    let mut out = Vec::new();
    match CudaBackend::open(GpuConfig::default()) {
        Ok(gpu) => {
            let b = gpu.budget();
            println!(
                "device {}: budget {} MiB (margin {} MiB)",
                b.device(),
                b.capacity() / MIB,
                b.config().safety_margin / MIB
            );
            // `gpu` stays open to the end: it holds the device's primary
            // context, which would otherwise be torn down and rebuilt for
            // every backend the checks open (it holds no device memory).
            if !skip_checks {
                t.check(
                    "conformance (cuzk_core::testing::check_backend)",
                    cuzk_core::testing::check_backend(&gpu).map_err(|e| e.to_string()),
                );
                gpu.evict_parameters();
                t.check(
                    "select_backend: cuda and auto pick the GPU",
                    (|| {
                        for choice in [BackendChoice::Cuda, BackendChoice::Auto] {
                            let sel = select_backend_with(choice, &GpuConfig::default())
                                .map_err(|e| e.to_string())?;
                            if sel.backend.name() != "cuda"
                                || sel.reports.is_none()
                                || sel.fallback_reason.is_some()
                            {
                                return Err(format!("{choice:?} chose {}", sel.backend.name()));
                            }
                        }
                        Ok(())
                    })(),
                );
                t.check(
                    "GPU proof verifies under bellperson and cuzk; wrong input rejected",
                    bellperson_check(),
                );
                match GpuFixedBase::open(0) {
                    Ok(engine) => {
                        for log in [10, 16] {
                            t.check(
                                &format!("paramgen 2^{log}: GPU parameters equal the CPU's"),
                                paramgen_equal(&engine, log, &mut out),
                            );
                        }
                    }
                    Err(e) => t.check("paramgen engine open", Err(e.to_string())),
                }
                forced_plans(&mut t);
                mapped_params(&mut t);
                capped_plans(&mut t, &mut out);
                faults(&mut t);
                two_workers(&mut t);
                shared_mirror(&mut t);
                device_selection(&mut t);
                two_sets_resident(&mut t);
                packed_witness(&mut t);
                compiled_checks(&mut t);
                concurrent_under_cap(
                    &mut t,
                    arg("--concurrent-cap-mib")
                        .and_then(|x| x.parse().ok())
                        .unwrap_or(1024),
                );
            }
            let compiled_logs: Vec<u32> = arg("--compiled-bench")
                .map(list)
                .unwrap_or_default()
                .into_iter()
                .map(|x| x as u32)
                .collect();
            if !compiled_logs.is_empty() {
                let device_only = args.iter().any(|a| a == "--device-only");
                let batch = arg("--compiled-batch")
                    .and_then(|x| x.parse().ok())
                    .unwrap_or(0);
                // `--vram-limits whole,83860000000`: each budget in turn on
                // one set of parameters (`whole`: the card's own).
                let limits: Vec<Option<u64>> = arg("--vram-limits")
                    .map(|x| x.split(',').map(|v| v.trim().parse().ok()).collect())
                    .unwrap_or_else(|| vec![None]);
                compiled_bench(
                    &compiled_logs,
                    &limits,
                    reps,
                    device_only,
                    batch,
                    &mut out,
                    &mut t,
                );
            }
            if !bench_logs.is_empty() {
                let o = BenchOptions {
                    parts,
                    caps_mib: caps,
                    reps,
                    paramgen_gpu: arg("--paramgen").as_deref() != Some("cpu"),
                    paramgen_cpu_max: arg("--paramgen-cpu-max")
                        .and_then(|x| x.parse().ok())
                        .unwrap_or(20),
                    cpu_ref_max: arg("--cpu-ref-max")
                        .and_then(|x| x.parse().ok())
                        .unwrap_or(22),
                    no_pageable: args.iter().any(|a| a == "--no-pageable"),
                    distinct: arg("--distinct")
                        .and_then(|x| x.parse().ok())
                        .unwrap_or(usize::MAX),
                };
                bench(&bench_logs, &o, &mut out, &mut t);
            }
        }
        Err(e) => t.check("open device 0", Err(e.to_string())),
    }
    if let Some(path) = json_out {
        let doc = json!({"results": out, "passed": t.passed, "failed": t.failed});
        if let Err(e) = std::fs::write(&path, serde_json::to_vec_pretty(&doc).unwrap_or_default()) {
            println!("could not write {path}: {e}");
        }
    }
    println!("{} passed, {} failed", t.passed, t.failed);
    std::process::exit(if t.failed == 0 { 0 } else { 1 });
}
