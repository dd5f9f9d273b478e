//! Page-locked (pinned) host memory: the ring buffers a/b/c go up through
//! (see `upload`) and the mirror of parameters that do not stay in VRAM.
//! Copies from it run at the link's full speed (55 GB/s measured on the
//! H200 against 8 GB/s from pageable memory, shared/GPU.md) and do not
//! hold the host thread.
//!
//! cuMemHostAlloc is slow (about 0.2 s for 4 GiB), so buffers are kept and
//! reused: a lease returns its buffer to the pool on drop, up to
//! `max_cached` bytes in all; beyond that it is freed.

use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaContext, DriverError, PinnedHostSlice};

pub struct PinnedPool {
    ctx: Arc<CudaContext>,
    free: Mutex<Vec<PinnedHostSlice<u8>>>,
    max_cached: usize,
}

/// A pinned buffer of at least `len` bytes, back to the pool on drop.
pub struct PinnedLease<'a> {
    buf: Option<PinnedHostSlice<u8>>,
    pool: &'a PinnedPool,
    len: usize,
}

impl PinnedPool {
    pub fn new(ctx: Arc<CudaContext>, max_cached: usize) -> Self {
        PinnedPool {
            ctx,
            free: Mutex::new(Vec::new()),
            max_cached,
        }
    }

    fn alloc(&self, len: usize) -> Result<PinnedHostSlice<u8>, DriverError> {
        // SAFETY: the memory is uninitialised; every lease writes the bytes
        // it hands out before they are read (see `PinnedLease::bytes_mut`'s
        // callers), and u8 has no invalid bit patterns.
        unsafe { self.ctx.alloc_pinned_with_flags::<u8>(len.max(1), 0) }
    }

    /// The smallest cached buffer that holds `len` bytes and is at most
    /// twice that, or a new one. (A ring's 32 MiB piece does not take a
    /// witness's staged 0/1 form's buffer of ~650 MB, which the next
    /// partition's form would then allocate again.) A failed allocation
    /// drops the cache and tries once more.
    pub fn take(&self, len: usize) -> Result<PinnedLease<'_>, DriverError> {
        let cached = {
            let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
            let best = free
                .iter()
                .enumerate()
                .filter(|(_, b)| b.len() >= len && b.len() / 2 <= len)
                .min_by_key(|(_, b)| b.len())
                .map(|(i, _)| i);
            best.map(|i| free.swap_remove(i))
        };
        let buf = match cached {
            Some(b) => b,
            None => match self.alloc(len) {
                Ok(b) => b,
                Err(_) => {
                    self.free.lock().unwrap_or_else(|p| p.into_inner()).clear();
                    self.alloc(len)?
                }
            },
        };
        Ok(PinnedLease {
            buf: Some(buf),
            pool: self,
            len,
        })
    }

    /// Bytes held in cached buffers.
    pub fn cached_bytes(&self) -> usize {
        self.free
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|b| b.len())
            .sum()
    }
}

impl PinnedLease<'_> {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn bytes(&self) -> Result<&[u8], DriverError> {
        let b = self.buf.as_ref().expect("present until drop");
        Ok(&b.as_slice()?[..self.len])
    }
    pub fn bytes_mut(&mut self) -> Result<&mut [u8], DriverError> {
        let len = self.len;
        let b = self.buf.as_mut().expect("present until drop");
        Ok(&mut b.as_mut_slice()?[..len])
    }
}

impl Drop for PinnedLease<'_> {
    fn drop(&mut self) {
        let Some(buf) = self.buf.take() else { return };
        let mut free = self.pool.free.lock().unwrap_or_else(|p| p.into_inner());
        let held: usize = free.iter().map(|b| b.len()).sum();
        if held + buf.len() <= self.pool.max_cached {
            free.push(buf);
        }
    }
}

/// A pinned copy of `src`, made by every core (1 MiB pieces), portable
/// to every context (another GPU's copies from it run at pinned speed
/// too). For the parameters' point vectors when they do not stay in VRAM
/// and cannot be page-locked where they lie: streamed chunks then go up
/// at the link's full speed.
pub fn pinned_copy(ctx: &Arc<CudaContext>, src: &[u8]) -> Result<PinnedHostSlice<u8>, DriverError> {
    // SAFETY: uninitialised pinned bytes, every one of which the copy
    // below writes before anything reads them; u8 has no invalid values.
    let mut buf = unsafe {
        ctx.alloc_pinned_with_flags::<u8>(
            src.len().max(1),
            cudarc::driver::sys::CU_MEMHOSTALLOC_PORTABLE,
        )
    }?;
    {
        let dst = buf.as_mut_slice()?;
        crate::copy::parallel_copy(&mut dst[..src.len()], src);
    }
    Ok(buf)
}

/// Host memory page-locked where it lies (cuMemHostRegister, portable to
/// every context), so that copies from it run at pinned speed without a
/// second copy of the data in memory. Unregistered on drop.
///
/// The registered bytes must stay allocated and in place for the life of
/// this value: its owner keeps the vector they belong to alive (see the
/// backend's `PinnedMirror`, which holds the parameters' `Arc`s).
pub struct HostRegistration {
    ctx: Arc<CudaContext>,
    ptr: usize,
    /// False where another registration of the same range (another
    /// device's backend) already existed: that one unregisters it.
    owned: bool,
}

impl HostRegistration {
    /// Registers `bytes`. Ok(None) for an empty slice.
    pub fn register(ctx: &Arc<CudaContext>, bytes: &[u8]) -> Result<Option<Self>, DriverError> {
        use cudarc::driver::sys;
        if bytes.is_empty() {
            return Ok(None);
        }
        ctx.bind_to_thread()?;
        // SAFETY: the range is a live allocation of `bytes.len()` bytes;
        // registration only page-locks it (the driver neither reads nor
        // writes it), and the caller keeps it alive until this value drops.
        let r = unsafe {
            sys::cuMemHostRegister_v2(
                bytes.as_ptr() as *mut std::ffi::c_void,
                bytes.len(),
                sys::CU_MEMHOSTREGISTER_PORTABLE,
            )
        };
        let owned = match r {
            sys::CUresult::CUDA_SUCCESS => true,
            sys::CUresult::CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED => false,
            other => return Err(DriverError(other)),
        };
        Ok(Some(HostRegistration {
            ctx: ctx.clone(),
            ptr: bytes.as_ptr() as usize,
            owned,
        }))
    }
}

impl Drop for HostRegistration {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        let _ = self.ctx.bind_to_thread();
        // SAFETY: `ptr` is the start of a range this value registered and
        // nobody else unregisters; copies from it have completed (the
        // backend synchronises its streams before a partition ends).
        let _ =
            unsafe { cudarc::driver::sys::cuMemHostUnregister(self.ptr as *mut std::ffi::c_void) };
    }
}

/// Bytes of host memory the kernel says are available (MemAvailable), if
/// it says.
pub fn host_memory_available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
