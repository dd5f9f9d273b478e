//! Host memory of a PoRep C2 request as the daemon holds a job: the C1
//! output decoded, and the request prepared (every partition's circuit
//! built, with its public inputs; `PreparedProof`), in live heap bytes
//! counted by this program's allocator (each the bytes its drop gives
//! back; the public inputs' are a copy's), on synthetic C1 outputs (no
//! sealed sector, no parameters). Prints a table, one row per sector size.
//!
//! ```text
//! cargo run --release -p cuzk-filecoin --example prepared_bytes [-- SIZE..]
//! ```
//! SIZE: 2KiB, 8MiB, 512MiB, 32GiB or 64GiB (default 2KiB and 32GiB).

use cuzk_filecoin::filecoin_proofs_api::RegisteredSealProof;
use cuzk_filecoin::partitions::PreparedProof;
use cuzk_filecoin::synth_c1::{self, SynthSpec};
use cuzk_filecoin::ProofRequest;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicI64, Ordering};

/// The system allocator, counting the bytes it has handed out and not
/// had back.
struct Counting;

static LIVE: AtomicI64 = AtomicI64::new(0);

// SAFETY: every call is passed on to the system allocator unchanged; the
// counter only records the sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as i64, Ordering::Relaxed);
        // SAFETY: the caller's contract for `alloc`, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as i64, Ordering::Relaxed);
        // SAFETY: `ptr` came from `System` with this layout (every
        // allocation of this program goes through `alloc` above).
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`; the caller's contract for `realloc`
        // otherwise.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_add(new_size as i64 - layout.size() as i64, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn live() -> i64 {
    LIVE.load(Ordering::Relaxed)
}

fn mb(b: i64) -> f64 {
    b as f64 / 1e6
}

fn proof_of(name: &str) -> Result<RegisteredSealProof, String> {
    use RegisteredSealProof::*;
    Ok(match name {
        "2KiB" => StackedDrg2KiBV1_1,
        "8MiB" => StackedDrg8MiBV1_1,
        "512MiB" => StackedDrg512MiBV1_1,
        "32GiB" => StackedDrg32GiBV1_1,
        "64GiB" => StackedDrg64GiBV1_1,
        other => return Err(format!("unknown sector size {other:?}")),
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut sizes: Vec<String> = std::env::args().skip(1).collect();
    if sizes.is_empty() {
        sizes = vec!["2KiB".into(), "32GiB".into()];
    }
    println!(
        "{:>7} {:>10} {:>10} {:>12} {:>12} {:>14} {:>14}",
        "sector",
        "partitions",
        "json MB",
        "decoded MB",
        "prepared MB",
        "per part. MB",
        "pub. inputs MB"
    );
    for name in &sizes {
        let rp = proof_of(name)?;
        let json = serde_json::to_vec(&synth_c1::synthesize(&SynthSpec::new(rp, 1))?.output)?;

        // Each measured as the bytes its drop gives back (what decoding
        // and preparing cache in statics, such as public parameters, is
        // not the job's).
        let req = ProofRequest::PoRepC2(Box::new(
            cuzk_filecoin::porep::decode_c1(&json, None)?.output,
        ));
        let prepared = PreparedProof::new(&req)?;
        let parts = prepared.partitions();
        let freed = |x: Box<dyn std::any::Any>| {
            let before = live();
            drop(x);
            before - live()
        };
        let inputs_bytes = freed(Box::new(prepared.public_inputs().to_vec()));
        let decoded = freed(Box::new(req));
        let prepared_bytes = freed(Box::new(prepared));
        println!(
            "{:>7} {:>10} {:>10.2} {:>12.2} {:>12.2} {:>14.2} {:>14.3}",
            name,
            parts,
            json.len() as f64 / 1e6,
            mb(decoded),
            mb(prepared_bytes),
            mb(prepared_bytes) / parts.max(1) as f64,
            mb(inputs_bytes),
        );
    }
    Ok(())
}
