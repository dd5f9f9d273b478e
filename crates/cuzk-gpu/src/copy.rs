//! Host copies into pinned staging memory, on a small thread pool of their
//! own. They sit on the GPU's critical path (a witness goes up through the
//! staging ring piece by piece), while the global rayon pool is usually
//! saturated by synthesis: a copy queued behind synthesis tasks waited
//! seconds per partition (a 32 GiB PoRep partition's 4.2 GB upload took
//! 2.4-9.9 s beside synthesis against 0.1 s alone, bench/filecoin-32g.md
//! run 2). Copies are memory-bound, so a few threads reach the memory's
//! bandwidth.

use rayon::prelude::*;
use std::sync::OnceLock;

/// Threads of the copy pool: enough for memory bandwidth, few enough not
/// to take cores from synthesis for long. Measured on the H200 machine (16
/// cores; bench/compiled-synthesis.md, call 26: porep-like 2^24, z's 537 MB
/// through the pinned ring): 4 threads 30.6 ms (17.5 GB/s), 8 24.7, **12
/// 16.2 (33 GB/s)**, 16 18.1; the streamed system's 914 MB 56.6 / 39.4 /
/// 25.4 / 27.3 ms. `CUZK_COPY_THREADS` (read once, at the first copy)
/// replaces it, for measuring the choice on other machines.
const COPY_THREADS: usize = 12;

/// The copy pool's thread count: `CUZK_COPY_THREADS` if it names a
/// positive number, else [`COPY_THREADS`], at most the machine's cores.
fn copy_threads() -> usize {
    let want = std::env::var("CUZK_COPY_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(COPY_THREADS);
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(want)
}
/// Bytes per task.
const PIECE: usize = 1 << 20;

fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(copy_threads())
            .thread_name(|i| format!("cuzk-copy-{i}"))
            .build()
            // Without it (threads refused) copies use the global pool, as
            // before.
            .ok()
    })
    .as_ref()
}

/// Runs `work` (rayon parallel iterators inside) on the copy pool, or on
/// the global pool where the copy pool could not be made.
pub(crate) fn on_copy_pool<R: Send>(work: impl FnOnce() -> R + Send) -> R {
    match pool() {
        Some(p) => p.install(work),
        None => work(),
    }
}

/// `dst.copy_from_slice(src)` in 1 MiB pieces on the copy pool.
///
/// # Panics
/// If the lengths differ, as `copy_from_slice` does.
pub(crate) fn parallel_copy(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "parallel_copy: lengths differ");
    on_copy_pool(|| {
        dst.par_chunks_mut(PIECE)
            .zip(src.par_chunks(PIECE))
            .for_each(|(d, s)| d.copy_from_slice(s))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_every_byte_at_every_size() {
        for n in [0usize, 1, 7, PIECE - 1, PIECE, PIECE + 13, 5 * PIECE + 3] {
            let src: Vec<u8> = (0..n).map(|i| (i * 31 + i / 251) as u8).collect();
            let mut dst = vec![0xA5u8; n];
            parallel_copy(&mut dst, &src);
            assert_eq!(dst, src, "size {n}");
        }
    }

    #[test]
    fn runs_while_the_global_pool_is_busy() {
        // Every global worker blocked until the copy has finished: the copy
        // must not need them.
        let threads = rayon::current_num_threads();
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let started = std::sync::Arc::new(std::sync::Barrier::new(threads + 1));
        for _ in 0..threads {
            let (done, started) = (done.clone(), started.clone());
            rayon::spawn(move || {
                started.wait();
                while !done.load(std::sync::atomic::Ordering::Acquire) {
                    std::thread::yield_now();
                }
            });
        }
        started.wait();
        let src = vec![3u8; 3 * PIECE + 1];
        let mut dst = vec![0u8; src.len()];
        parallel_copy(&mut dst, &src);
        done.store(true, std::sync::atomic::Ordering::Release);
        assert_eq!(dst, src);
    }
}
