//! Host-to-device copy rates from the kinds of host memory the CUDA backend
//! copies from, to find what bounds the streamed (capped) plans: at 2^27
//! under a 16 GiB cap the A and L MSMs moved 11 GB of points each in about
//! 1.04 s (~11 GB/s) from the page-locked parameter vectors, where
//! shared/GPU.md measured 55 GB/s from cuMemHostAlloc memory.
//!
//!     h2d_bench [GIB] [REPS] [--json]
//!
//! For a buffer of GIB GiB (default 4), each timed REPS times (default 3,
//! median reported) as one cuMemcpyHtoDAsync on a stream of its own:
//! - pageable: a Vec written by one thread;
//! - registered: the same Vec page-locked in place (cuMemHostRegister,
//!   portable, as the backend's parameter mirror does; registration timed);
//! - registered, filled by every core: a Vec first touched by all threads
//!   (as parameter generation writes the parameters), then registered;
//! - host-alloc: cuMemHostAlloc memory (the upload ring's kind);
//! - in 32 MiB pieces from registered memory, one copy per piece (the
//!   streamed plans copy a chunk at once; the ring copies 32 MiB pieces).
//!
//! Needs a GPU; prints GB/s per case.

use std::time::Instant;

use cudarc::driver::{result, CudaContext, CudaStream};
use cuzk_gpu::pinned::{pinned_copy, HostRegistration};
use rayon::prelude::*;
use serde_json::json;

fn copy_rate(
    stream: &std::sync::Arc<CudaStream>,
    dst: u64,
    src: &[u8],
    piece: usize,
    reps: usize,
) -> Result<f64, String> {
    let mut secs = Vec::with_capacity(reps);
    for _ in 0..reps {
        let clock = Instant::now();
        for (i, p) in src.chunks(piece).enumerate() {
            // SAFETY: `dst` is a device allocation of at least src.len()
            // bytes that outlives the synchronisation below; `src` stays
            // borrowed until then.
            unsafe { result::memcpy_htod_async(dst + (i * piece) as u64, p, stream.cu_stream()) }
                .map_err(|e| format!("copy: {e}"))?;
        }
        stream
            .synchronize()
            .map_err(|e| format!("synchronize: {e}"))?;
        secs.push(clock.elapsed().as_secs_f64());
    }
    secs.sort_by(f64::total_cmp);
    Ok(src.len() as f64 / secs[secs.len() / 2] / 1e9)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let json_out = args.iter().any(|a| a == "--json");
    let nums: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let gib = nums.first().copied().unwrap_or(4).max(1);
    let reps = nums.get(1).copied().unwrap_or(3).max(1);
    if let Err(e) = run(gib, reps, json_out) {
        eprintln!("h2d_bench: {e}");
        std::process::exit(1);
    }
}

fn run(gib: usize, reps: usize, json_out: bool) -> Result<(), String> {
    // SAFETY: only asks whether the driver library can be loaded.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err("no CUDA driver on this machine".into());
    }
    let bytes = gib << 30;
    let ctx = CudaContext::new(0).map_err(|e| format!("context: {e}"))?;
    let stream = ctx.new_stream().map_err(|e| format!("stream: {e}"))?;
    // SAFETY: written by the copies before anything reads it (nothing does).
    let dst = unsafe { stream.alloc::<u8>(bytes) }.map_err(|e| format!("alloc: {e}"))?;
    let (dst_ptr, _) = cudarc::driver::DevicePtr::device_ptr(&dst, &stream);
    let whole = usize::MAX;
    let mut rows = Vec::new();
    let mut report = |case: &str, gbs: f64, extra: serde_json::Value| {
        if !json_out {
            println!("{case:<44} {gbs:>7.1} GB/s {extra}");
        }
        rows.push(json!({"case": case, "gb_per_s": gbs, "extra": extra}));
    };

    let one_thread = vec![1u8; bytes];
    report(
        "pageable (one thread wrote it)",
        copy_rate(&stream, dst_ptr, &one_thread, whole, reps)?,
        json!({}),
    );
    let clock = Instant::now();
    let reg =
        HostRegistration::register(&ctx, &one_thread).map_err(|e| format!("register: {e}"))?;
    let reg_s = clock.elapsed().as_secs_f64();
    report(
        "registered in place (one thread wrote it)",
        copy_rate(&stream, dst_ptr, &one_thread, whole, reps)?,
        json!({"register_s": reg_s}),
    );
    report(
        "registered, 32 MiB pieces",
        copy_rate(&stream, dst_ptr, &one_thread, 32 << 20, reps)?,
        json!({}),
    );
    drop(reg);

    let pinned = pinned_copy(&ctx, &one_thread).map_err(|e| format!("cuMemHostAlloc: {e}"))?;
    drop(one_thread);
    let host = pinned
        .as_slice()
        .map_err(|e| format!("pinned slice: {e}"))?;
    report(
        "cuMemHostAlloc",
        copy_rate(&stream, dst_ptr, host, whole, reps)?,
        json!({}),
    );
    drop(pinned);

    let mut every_core: Vec<u8> = Vec::with_capacity(bytes);
    every_core
        .spare_capacity_mut()
        .par_chunks_mut(1 << 20)
        .for_each(|c| {
            for b in c {
                b.write(2);
            }
        });
    // SAFETY: every byte of the capacity was written just above.
    unsafe { every_core.set_len(bytes) };
    report(
        "pageable (every core wrote it)",
        copy_rate(&stream, dst_ptr, &every_core, whole, reps)?,
        json!({}),
    );
    let clock = Instant::now();
    let reg =
        HostRegistration::register(&ctx, &every_core).map_err(|e| format!("register: {e}"))?;
    let reg_s = clock.elapsed().as_secs_f64();
    report(
        "registered in place (every core wrote it)",
        copy_rate(&stream, dst_ptr, &every_core, whole, reps)?,
        json!({"register_s": reg_s}),
    );
    drop(reg);

    if json_out {
        println!("{}", json!({"gib": gib, "reps": reps, "rows": rows}));
    }
    Ok(())
}
