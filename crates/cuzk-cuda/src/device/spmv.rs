//! The compiled constraint system's GPU half (kernels/spmv.cuh): a/b/c =
//! A·z, B·z, C·z over CSR matrices resident in VRAM, the density selection
//! of the A/B query scalars from the witness, and the 0/1 split of MSM
//! scalars, all from buffers already on the device (the witness goes up
//! once).
//!
//! Layout (cuzk-core's compiled system): z = inputs ++ aux as blstrs
//! Scalars (Montgomery limbs, the bytes [`CudaDevice::upload_scalars`]
//! copies); a matrix is `row_start: [u64; rows + 1]` (row_start[0] = 0;
//! narrowed to u32 on the device, where a matrix holds fewer than 2^32
//! entries),
//! `cols: [u32; nnz]` (index into z) and `coef: [u32; nnz]` (index into a
//! shared table of Scalars, table[0] = 1, table[1] = -1; the kernels add or
//! subtract for those two without a product).
//!
//! A child module of `device` so that it shares the device's private
//! allocation, launch and scan helpers instead of a second copy of them.

use blstrs::{G1Projective, G2Projective, Scalar};
use cudarc::driver::{CudaSlice, LaunchConfig};
use ff::Field;

use super::launch::{cfg1d, typed_kernels, DevPtr, Lookup};
use super::msm::{window_sum, Ids};
use super::{CudaDevice, DeviceGroup, DevicePoints, DeviceScalars, Group_, ScalarForm};
use crate::error::{CudaError, Result};
use crate::host::{self, FR_BYTES};

/// Rows with more entries than this go to `spmv_long` (kernels/spmv.cuh's
/// SPMV_LONG; the two must agree).
pub const SPMV_LONG: usize = 32;
/// Threads of one compaction tile (COMPACT_TILE).
const TILE: usize = 1024;
/// Longest vector (rows, z, scalars) the kernels index: element and tile
/// indices are u32, and the last tile's threads must not wrap.
const MAX_LEN: usize = u32::MAX as usize - 2 * TILE;

typed_kernels! {
    /// `spmv_products`: the short rows' products table[coef]·z[col].
    SpmvProducts["spmv_products"](
        pcol: DevPtr,
        pcoef: DevPtr,
        count: u32,
        table: DevPtr,
        z: DevPtr,
        prod: DevPtr,
    );
    /// `spmv_short`: one thread per row of at most [`SPMV_LONG`] entries.
    SpmvShort["spmv_short"](
        row_start: DevPtr,
        cols: DevPtr,
        coef: DevPtr,
        prow_start: DevPtr,
        prod: DevPtr,
        z: DevPtr,
        out: DevPtr,
        rows: u32,
    );
    /// `spmv_long`: one block of [`SPMV_LONG_BLOCK`] threads per long row.
    SpmvLong["spmv_long"](
        row_start: DevPtr,
        cols: DevPtr,
        coef: DevPtr,
        table: DevPtr,
        z: DevPtr,
        out: DevPtr,
        long_rows: DevPtr,
        count: u32,
    );
    /// `csr_narrow`: row starts as the host holds them (u64, from `base`)
    /// made the device's (u32, from 0).
    CsrNarrow["csr_narrow"](wide: DevPtr, out: DevPtr, n: u32, base: u64);
    /// `csr_check`: max col + 1, max coef + 1 and the count of bad rows.
    CsrCheck["csr_check"](
        row_start: DevPtr,
        rows: u32,
        cols: DevPtr,
        coef: DevPtr,
        nnz: u64,
        stats: DevPtr,
    );
    /// `csr_prod_count`: each short row's product entries.
    CsrProdCount["csr_prod_count"](row_start: DevPtr, rows: u32, coef: DevPtr, pcount: DevPtr);
    /// `csr_prod_write`: the short rows' product entries.
    CsrProdWrite["csr_prod_write"](
        row_start: DevPtr,
        rows: u32,
        cols: DevPtr,
        coef: DevPtr,
        prow_start: DevPtr,
        pcol: DevPtr,
        pcoef: DevPtr,
    );
    /// `csr_long_count`: each tile's long rows.
    CsrLongCount["csr_long_count"](row_start: DevPtr, rows: u32, tile_counts: DevPtr);
    /// `csr_long_write`: the long rows, in order.
    CsrLongWrite["csr_long_write"](row_start: DevPtr, rows: u32, tile_offsets: DevPtr, out: DevPtr);
    /// `select_count`: each tile's selected elements of z.
    SelectCount["select_count"](
        n: u32,
        num_inputs: u32,
        in_flags: DevPtr,
        aux_flags: DevPtr,
        tile_counts: DevPtr,
    );
    /// `select_write`: the selected elements of z, in order.
    SelectWrite["select_write"](
        z: DevPtr,
        n: u32,
        num_inputs: u32,
        in_flags: DevPtr,
        aux_flags: DevPtr,
        tile_offsets: DevPtr,
        out: DevPtr,
    );
    /// `split_count`: the ones mask, each tile's other scalars and the ones'
    /// total.
    SplitCount["split_count"](
        s: DevPtr,
        n: u32,
        ones: DevPtr,
        tile_counts: DevPtr,
        ones_total: DevPtr,
    );
    /// `split_write`: the other scalars and their ids, in order.
    SplitWrite["split_write"](
        s: DevPtr,
        n: u32,
        tile_offsets: DevPtr,
        rest_ids: DevPtr,
        rest: DevPtr,
    );
}

/// Threads per block of spmv_long (SPMV_LONG_BLOCK, its
/// `__launch_bounds__`; the kernel's loop strides by it).
const SPMV_LONG_BLOCK: u32 = 256;
/// Threads per block of spmv_products and spmv_short (their
/// `__launch_bounds__(256)`).
const SPMV_ROWS_BLOCK: u32 = 256;
/// Threads per block of csr_check (its grid strides, at most 65536
/// blocks), csr_narrow, csr_prod_count and csr_prod_write.
const CSR_BLOCK: u32 = 256;

pub(super) struct SpmvKernels {
    spmv_products: SpmvProducts,
    spmv_short: SpmvShort,
    spmv_long: SpmvLong,
    csr_narrow: CsrNarrow,
    csr_check: CsrCheck,
    csr_prod_count: CsrProdCount,
    csr_prod_write: CsrProdWrite,
    csr_long_count: CsrLongCount,
    csr_long_write: CsrLongWrite,
    select_count: SelectCount,
    select_write: SelectWrite,
    split_count: SplitCount,
    split_write: SplitWrite,
}

impl SpmvKernels {
    pub(super) fn load(f: &Lookup<'_>) -> Result<Self> {
        Ok(SpmvKernels {
            spmv_products: SpmvProducts::load(f)?,
            spmv_short: SpmvShort::load(f)?,
            spmv_long: SpmvLong::load(f)?,
            csr_narrow: CsrNarrow::load(f)?,
            csr_check: CsrCheck::load(f)?,
            csr_prod_count: CsrProdCount::load(f)?,
            csr_prod_write: CsrProdWrite::load(f)?,
            csr_long_count: CsrLongCount::load(f)?,
            csr_long_write: CsrLongWrite::load(f)?,
            select_count: SelectCount::load(f)?,
            select_write: SelectWrite::load(f)?,
            split_count: SplitCount::load(f)?,
            split_write: SplitWrite::load(f)?,
        })
    }
}

/// One sparse matrix (A, B or C, or a block of its rows) resident in
/// device memory, checked once when made: row_start non-decreasing from 0
/// to nnz, and the largest column and coefficient index known, so every
/// product is checked against its z and table before it launches.
pub struct DeviceCsr {
    rows: usize,
    nnz: usize,
    /// Narrowed from the host's u64 (a matrix on the device has fewer
    /// than 2^32 entries: [`CudaDevice::csr_from_device`] refuses more).
    row_start: CudaSlice<u32>,
    cols: CudaSlice<u32>,
    coef: CudaSlice<u32>,
    /// Rows longer than [`SPMV_LONG`], increasing.
    long_rows: CudaSlice<u32>,
    long_count: usize,
    /// The short rows' entries with a table coefficient (index >= 2), in
    /// row order: row r's are prow_start[r]..prow_start[r + 1] of pcol /
    /// pcoef. Their products are made by one thread each before the rows
    /// are summed (kernels/spmv.cuh says why).
    prow_start: CudaSlice<u32>,
    pcol: CudaSlice<u32>,
    pcoef: CudaSlice<u32>,
    products: usize,
    /// One past the largest column index (0 with no entries): z must hold
    /// at least this many scalars.
    z_needed: usize,
    /// One past the largest coefficient index: the table's least length.
    table_needed: usize,
}

/// Device buffers that blocks of matrix rows are copied into one after
/// another ([`CudaDevice::csr_staging`]): row starts (as the host holds
/// them, u64, and the device's u32 they are narrowed into), columns and
/// coefficient indices, each with room for the largest block. A block
/// copied in becomes a [`DeviceCsr`] by [`CudaDevice::csr_from_staging`],
/// and gives the buffers back by [`DeviceCsr::into_staging`] once its
/// products are enqueued.
pub struct CsrStaging {
    wide: CudaSlice<u64>,
    row_start: CudaSlice<u32>,
    cols: CudaSlice<u32>,
    coef: CudaSlice<u32>,
}

/// The staging's u64 row starts while a block made from them is in use
/// (its products enqueued): given back with the block by
/// [`DeviceCsr::into_staging`].
pub struct CsrWide(CudaSlice<u64>);

/// Where a block's three arrays go: device address and capacity in bytes
/// of the row starts, the columns and the coefficient indices.
#[derive(Clone, Copy, Debug)]
pub struct CsrStagingDsts {
    pub row_start: (u64, usize),
    pub cols: (u64, usize),
    pub coef: (u64, usize),
}

impl CsrStaging {
    /// Bytes [`CudaDevice::csr_staging`] allocates for blocks of up to
    /// `rows` rows and `nnz` entries.
    pub fn bytes_for(rows: usize, nnz: usize) -> usize {
        (rows + 1) * (8 + 4) + nnz.max(1) * 8
    }
}

impl DeviceCsr {
    /// The row-start, column and coefficient buffers back, for the next
    /// block ([`CudaDevice::csr_from_staging`]); the rest of the matrix is
    /// freed in stream order, after the products already enqueued.
    pub fn into_staging(self, wide: CsrWide) -> CsrStaging {
        CsrStaging {
            wide: wide.0,
            row_start: self.row_start,
            cols: self.cols,
            coef: self.coef,
        }
    }

    pub fn rows(&self) -> usize {
        self.rows
    }
    pub fn nnz(&self) -> usize {
        self.nnz
    }
    /// Rows summed by a block each (more than [`SPMV_LONG`] entries).
    pub fn long_rows(&self) -> usize {
        self.long_count
    }
    /// Entries of short rows with a table coefficient: each product call
    /// holds a temporary of this many Scalars ([`Self::product_bytes`]).
    pub fn products(&self) -> usize {
        self.products
    }
    /// Device bytes one [`CudaDevice::spmv_device`] call allocates (and
    /// frees when the stream reaches it): the short rows' products.
    pub fn product_bytes(&self) -> usize {
        self.products * FR_BYTES
    }
    /// The least z length a product with this matrix accepts.
    pub fn z_needed(&self) -> usize {
        self.z_needed
    }
    /// The least coefficient-table length a product accepts.
    pub fn table_needed(&self) -> usize {
        self.table_needed
    }
    /// Device bytes this matrix holds (its buffers, as allocated).
    pub fn device_bytes(&self) -> usize {
        self.row_start.len() * 4
            + self.cols.len() * 4
            + self.coef.len() * 4
            + self.long_rows.len() * 4
            + self.prow_start.len() * 4
            + self.pcol.len() * 4
            + self.pcoef.len() * 4
    }
    /// Upper bound of [`Self::device_bytes`] for a matrix of `rows` rows
    /// and `nnz` entries of which `products` are in short rows with a
    /// table coefficient, before making it: row_start, cols and coef, the
    /// long-row list (at most nnz / (SPMV_LONG + 1) rows), prow_start and
    /// the product entries (col and coef each).
    pub fn bytes_for(rows: usize, nnz: usize, products: usize) -> usize {
        (rows + 1) * 4
            + nnz.max(1) * 8
            + (nnz / (SPMV_LONG + 1)).max(1) * 4
            + (rows + 1) * 4
            + products.max(1) * 8
    }
    /// Transient device bytes while a matrix of `rows` rows is made (the
    /// check's counters, the per-row product counts with their scan, and
    /// the long-row compaction's tile counts and offsets), freed before
    /// [`CudaDevice::upload_csr`] returns.
    pub fn build_scratch_bytes(rows: usize) -> usize {
        16 + 4 * rows.max(1) + compact_scratch_bytes(rows) + compact_scratch_bytes(rows)
    }
    /// Transient device bytes of [`CudaDevice::upload_csr`] for `rows`
    /// rows: [`Self::build_scratch_bytes`], and the host's u64 row starts,
    /// copied up and narrowed before the matrix is made.
    pub fn upload_scratch_bytes(rows: usize) -> usize {
        Self::build_scratch_bytes(rows) + (rows + 1) * 8
    }
    /// [`Self::bytes_for`] for a block made from [`CsrStaging`] by
    /// [`CudaDevice::csr_from_staging`]: the block, and the staging's u64
    /// row starts its own were narrowed from (held until
    /// [`Self::into_staging`]).
    pub fn staged_bytes_for(rows: usize, nnz: usize, products: usize) -> usize {
        Self::bytes_for(rows, nnz, products) + (rows + 1) * 8
    }
}

/// Device bytes of one compaction's scratch over `n` elements: tile counts,
/// their scan (with the scan's own block sums) and the total.
pub fn compact_scratch_bytes(n: usize) -> usize {
    let tiles = n.div_ceil(TILE).max(1);
    // counts + offsets (tiles + 1) + scan's recursion (~2 × tiles / 1024 + small).
    4 * (tiles + (tiles + 1) + 2 * (tiles.div_ceil(1024) + 2) + 8)
}

/// Per-variable flags (a density) resident in device memory: byte i
/// nonzero = variable i selected. cuzk-core's `Density` is a `Vec<bool>`,
/// whose bytes are exactly these flags.
pub struct DeviceDensity {
    len: usize,
    buf: CudaSlice<u8>,
}

impl DeviceDensity {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Device bytes held (one per variable).
    pub fn device_bytes(&self) -> usize {
        self.buf.len()
    }
}

/// The 0/1 split of scalars on the device, in host::split_zero_one's
/// layout: `ones` bit i % 32 of word i / 32 set where s_i = 1; the other
/// non-zero scalars and their positions, in increasing order.
pub struct DeviceSplit {
    pub len: usize,
    pub ones_count: usize,
    pub zeros_count: usize,
    /// n.div_ceil(32) mask words (bits past `len` clear).
    pub ones: CudaSlice<u32>,
    /// rest_count positions (the buffer holds at least one element).
    pub rest_ids: CudaSlice<u32>,
    pub rest_scalars: DeviceScalars,
}

impl DeviceSplit {
    pub fn rest_count(&self) -> usize {
        self.rest_scalars.len
    }
    /// Device bytes held: the mask, the positions and the scalars.
    pub fn device_bytes(&self) -> usize {
        self.ones.len() * 4 + self.rest_ids.len() * 4 + self.rest_scalars.buf.len()
    }
    /// Upper bound of the bytes a split of `n` scalars of which `rest` are
    /// neither 0 nor 1 holds, plus its transient scratch (counts, offsets,
    /// the ones total).
    pub fn bytes_for(n: usize, rest: usize) -> usize {
        n.div_ceil(32).max(1) * 4 + rest.max(1) * (4 + FR_BYTES) + compact_scratch_bytes(n) + 4
    }
}

impl CudaDevice {
    // ------------------------------------------------------ matrices

    /// Makes a matrix resident from host slices (any host memory; pinned
    /// or registered memory copies at full link speed).
    pub fn upload_csr(&self, row_start: &[u64], cols: &[u32], coef: &[u32]) -> Result<DeviceCsr> {
        let kernel = "upload_csr";
        if row_start.is_empty() {
            return Err(self.bad(
                kernel,
                0,
                "row_start is empty (it holds rows + 1 entries)".into(),
            ));
        }
        let rows = row_start.len() - 1;
        if cols.len() != coef.len() {
            return Err(self.bad(
                kernel,
                rows,
                format!("{} cols but {} coefficients", cols.len(), coef.len()),
            ));
        }
        if row_start[0] != 0 || row_start[rows] != cols.len() as u64 {
            return Err(self.bad(
                kernel,
                rows,
                format!(
                    "row_start runs {}..{}, not 0..{} (the entries)",
                    row_start[0],
                    row_start[rows],
                    cols.len()
                ),
            ));
        }
        if rows.max(cols.len()) > MAX_LEN {
            // Row starts and the product list's offsets are u32 on the
            // device; a larger matrix goes up in row blocks. (Refused
            // before anything is copied.)
            return Err(CudaError::Unsupported {
                kernel,
                size: rows.max(cols.len()),
                limit: MAX_LEN,
                device: self.label.clone(),
            });
        }
        // The starts go up as the host holds them and are narrowed here
        // (the u64 copy freed in stream order).
        let wide = self.upload(kernel, row_start)?;
        let rs: CudaSlice<u32> = self.alloc(kernel, rows + 1)?;
        self.narrow_row_starts(&wide, &rs, rows + 1, 0)?;
        drop(wide);
        let c = self.upload(kernel, cols)?;
        let k = self.upload(kernel, coef)?;
        self.csr_from_device(rows, rs, c, k)
    }

    /// out[..n] = wide[..n] - base as u32 (`csr_narrow`; a value out of
    /// range saturates, which [`Self::csr_from_device`]'s check finds).
    fn narrow_row_starts(
        &self,
        wide: &CudaSlice<u64>,
        out: &CudaSlice<u32>,
        n: usize,
        base: u64,
    ) -> Result<()> {
        let kernel = "csr_narrow";
        if n > MAX_LEN + 1 || wide.len() < n || out.len() < n {
            return Err(self.bad(
                kernel,
                n,
                format!("{n} row starts from {} into {}", wide.len(), out.len()),
            ));
        }
        self.spmv.csr_narrow.launch(
            self,
            kernel,
            n,
            cfg1d(n, CSR_BLOCK),
            self.p(wide),
            self.p(out),
            n as u32,
            base,
        )
    }

    /// Buffers for blocks of at most `rows` rows and `nnz` entries, to be
    /// filled by copies to [`Self::csr_staging_dsts`]' addresses.
    pub fn csr_staging(&self, rows: usize, nnz: usize) -> Result<CsrStaging> {
        let kernel = "csr_staging";
        Ok(CsrStaging {
            wide: self.alloc(kernel, rows + 1)?,
            row_start: self.alloc(kernel, rows + 1)?,
            cols: self.alloc(kernel, nnz.max(1))?,
            coef: self.alloc(kernel, nnz.max(1))?,
        })
    }

    /// The device addresses and capacities of `s`' buffers.
    pub fn csr_staging_dsts(&self, s: &CsrStaging) -> CsrStagingDsts {
        CsrStagingDsts {
            row_start: (self.p(&s.wide), s.wide.len() * 8),
            cols: (self.p(&s.cols), s.cols.len() * 4),
            coef: (self.p(&s.coef), s.coef.len() * 4),
        }
    }

    /// The block of `rows` rows copied into `s` as a matrix: its rows + 1
    /// row starts as they are in the whole matrix, the first being `base`
    /// (narrowed to start from 0 here, on the device), and its entries
    /// from the start of the columns and coefficients; then
    /// [`Self::csr_from_device`] over the staging buffers. The copies must
    /// have completed or be ordered before this device's stream. The
    /// staging's u64 starts come back beside the block, for
    /// [`DeviceCsr::into_staging`].
    pub fn csr_from_staging(
        &self,
        s: CsrStaging,
        rows: usize,
        base: u64,
    ) -> Result<(DeviceCsr, CsrWide)> {
        let kernel = "csr_from_staging";
        if rows > MAX_LEN || s.wide.len() < rows + 1 || s.row_start.len() < rows + 1 {
            return Err(self.bad(
                kernel,
                rows,
                format!(
                    "{} rows for staging of {} row starts",
                    rows,
                    s.row_start.len().min(s.wide.len())
                ),
            ));
        }
        self.narrow_row_starts(&s.wide, &s.row_start, rows + 1, base)?;
        let csr = self.csr_from_device(rows, s.row_start, s.cols, s.coef)?;
        Ok((csr, CsrWide(s.wide)))
    }

    /// Makes a matrix from buffers the caller filled on this device's
    /// context (e.g. [`Self::csr_from_staging`]'s narrowed blocks):
    /// `row_start` holds at least rows + 1 u32 starts, `cols` and `coef` at
    /// least row_start[rows]. The buffers' writes must have completed or be
    /// ordered before this device's stream. Checks the matrix on the GPU
    /// (one read of it) and builds its long-row list.
    pub fn csr_from_device(
        &self,
        rows: usize,
        row_start: CudaSlice<u32>,
        cols: CudaSlice<u32>,
        coef: CudaSlice<u32>,
    ) -> Result<DeviceCsr> {
        let kernel = "csr_from_device";
        if rows > MAX_LEN {
            return Err(CudaError::Unsupported {
                kernel,
                size: rows,
                limit: MAX_LEN,
                device: self.label.clone(),
            });
        }
        if row_start.len() < rows + 1 {
            return Err(self.bad(
                kernel,
                rows,
                format!(
                    "row_start holds {} entries, rows + 1 needed",
                    row_start.len()
                ),
            ));
        }
        let mut ends = [0u32; 1];
        let mut first = [0u32; 1];
        self.stream
            .memcpy_dtoh(&row_start.slice(rows..rows + 1), &mut ends)
            .map_err(|e| self.err("copy to host", kernel, rows, e))?;
        self.stream
            .memcpy_dtoh(&row_start.slice(0..1), &mut first)
            .map_err(|e| self.err("copy to host", kernel, rows, e))?;
        let nnz = ends[0] as usize;
        if nnz > MAX_LEN {
            // The product list's offsets are u32 (the scan's width); a
            // larger matrix goes up in row blocks.
            return Err(CudaError::Unsupported {
                kernel,
                size: nnz,
                limit: MAX_LEN,
                device: self.label.clone(),
            });
        }
        if first[0] != 0 {
            return Err(self.bad(kernel, rows, format!("row_start[0] = {}, not 0", first[0])));
        }
        if cols.len() < nnz || coef.len() < nnz {
            return Err(self.bad(
                kernel,
                rows,
                format!(
                    "row_start[rows] = {nnz} entries, but cols hold {} and coef {}",
                    cols.len(),
                    coef.len()
                ),
            ));
        }
        // Checks: max col + 1, max coef + 1, bad rows / indices.
        let stats: CudaSlice<u32> = self.zeros(kernel, 4)?;
        let work = rows.max(nnz);
        let blocks = work.div_ceil(CSR_BLOCK as usize).clamp(1, 65_536);
        self.spmv.csr_check.launch(
            self,
            "csr_check",
            work,
            LaunchConfig {
                grid_dim: (blocks as u32, 1, 1),
                block_dim: (CSR_BLOCK, 1, 1),
                shared_mem_bytes: 0,
            },
            self.p(&row_start),
            rows as u32,
            self.p(&cols),
            self.p(&coef),
            nnz as u64,
            self.p(&stats),
        )?;
        let st = self.download(kernel, &stats, 3)?;
        if st[2] != 0 {
            return Err(self.bad(
                kernel,
                rows,
                format!(
                    "{} rows end before they start or entries hold index 2^32 - 1",
                    st[2]
                ),
            ));
        }
        // The short rows' product entries: counts, their scan, the copy.
        let pcount: CudaSlice<u32> = self.alloc("csr_prod_count", rows)?;
        let prow_start: CudaSlice<u32> = self.alloc("csr_prod_count", rows + 1)?;
        let products = if rows == 0 {
            0
        } else {
            self.spmv.csr_prod_count.launch(
                self,
                "csr_prod_count",
                rows,
                cfg1d(rows, CSR_BLOCK),
                self.p(&row_start),
                rows as u32,
                self.p(&coef),
                self.p(&pcount),
            )?;
            self.scan(&pcount, &prow_start, rows)?;
            let mut total = [0u32; 1];
            self.stream
                .memcpy_dtoh(&prow_start.slice(rows..rows + 1), &mut total)
                .map_err(|e| self.err("copy to host", "csr_prod_count", rows, e))?;
            total[0] as usize
        };
        drop(pcount);
        let pcol: CudaSlice<u32> = self.alloc("csr_prod_write", products)?;
        let pcoef: CudaSlice<u32> = self.alloc("csr_prod_write", products)?;
        if products > 0 {
            self.spmv.csr_prod_write.launch(
                self,
                "csr_prod_write",
                rows,
                cfg1d(rows, CSR_BLOCK),
                self.p(&row_start),
                rows as u32,
                self.p(&cols),
                self.p(&coef),
                self.p(&prow_start),
                self.p(&pcol),
                self.p(&pcoef),
            )?;
        }
        // The long rows, in order.
        let (long_rows, long_count) = self.compact(
            "csr_long",
            rows,
            |counts, tiles| {
                self.spmv.csr_long_count.launch(
                    self,
                    "csr_long_count",
                    rows,
                    tile_cfg(tiles),
                    self.p(&row_start),
                    rows as u32,
                    self.p(counts),
                )
            },
            |offsets, tiles, total| {
                let out: CudaSlice<u32> = self.alloc("csr_long_write", total)?;
                self.spmv.csr_long_write.launch(
                    self,
                    "csr_long_write",
                    rows,
                    tile_cfg(tiles),
                    self.p(&row_start),
                    rows as u32,
                    self.p(offsets),
                    self.p(&out),
                )?;
                Ok(out)
            },
        )?;
        Ok(DeviceCsr {
            rows,
            nnz,
            row_start,
            cols,
            coef,
            long_rows,
            long_count,
            prow_start,
            pcol,
            pcoef,
            products,
            z_needed: st[0] as usize,
            table_needed: st[1] as usize,
        })
    }

    /// Two-pass stream compaction over `n` elements in tiles of 1024:
    /// `count(counts, tiles)` writes each tile's count, the counts are
    /// scanned into offsets (offsets[tiles] = total, read back: one
    /// synchronisation), and `write(offsets, tiles, total)` places the
    /// selected elements. Returns what `write` made and the total.
    fn compact<T>(
        &self,
        kernel: &'static str,
        n: usize,
        count: impl FnOnce(&CudaSlice<u32>, usize) -> Result<()>,
        write: impl FnOnce(&CudaSlice<u32>, usize, usize) -> Result<T>,
    ) -> Result<(T, usize)> {
        let tiles = n.div_ceil(TILE).max(1);
        let counts: CudaSlice<u32> = self.alloc(kernel, tiles)?;
        count(&counts, tiles)?;
        let offsets: CudaSlice<u32> = self.alloc(kernel, tiles + 1)?;
        self.scan(&counts, &offsets, tiles)?;
        let mut total = [0u32; 1];
        self.stream
            .memcpy_dtoh(&offsets.slice(tiles..tiles + 1), &mut total)
            .map_err(|e| self.err("copy to host", kernel, n, e))?;
        let total = total[0] as usize;
        let out = write(&offsets, tiles, total)?;
        Ok((out, total))
    }

    // ------------------------------------------------------ products

    /// out[first_row + r] = (M·z)[r] for every row r of `m` (Montgomery
    /// Scalars, 32 bytes each); the rest of `out` is left as it is, so a
    /// caller streaming row blocks passes each block's first row. Allocates
    /// only the products' temporary, [`DeviceCsr::product_bytes`]. `z` and
    /// `table` must be in Montgomery form and long enough for the matrix's
    /// indices.
    pub fn spmv_device(
        &self,
        m: &DeviceCsr,
        table: &DeviceScalars,
        z: &DeviceScalars,
        out: &mut CudaSlice<u8>,
        first_row: usize,
    ) -> Result<()> {
        let kernel = "spmv";
        if z.form != ScalarForm::Montgomery || table.form != ScalarForm::Montgomery {
            return Err(self.bad(
                kernel,
                m.rows,
                "z and the table must be Montgomery Scalars".into(),
            ));
        }
        if z.len < m.z_needed {
            return Err(self.bad(
                kernel,
                m.rows,
                format!(
                    "z holds {} scalars, the matrix reads index {}",
                    z.len,
                    m.z_needed - 1
                ),
            ));
        }
        if table.len < m.table_needed {
            return Err(self.bad(
                kernel,
                m.rows,
                format!(
                    "the table holds {} coefficients, the matrix uses index {}",
                    table.len,
                    m.table_needed - 1
                ),
            ));
        }
        let end = first_row
            .checked_add(m.rows)
            .and_then(|e| e.checked_mul(FR_BYTES))
            .filter(|&e| e <= out.len());
        if end.is_none() {
            return Err(self.bad(
                kernel,
                m.rows,
                format!(
                    "rows {first_row}..{first_row}+{} past an output of {} bytes",
                    m.rows,
                    out.len()
                ),
            ));
        }
        if m.rows == 0 {
            return Ok(());
        }
        let out_ptr = self.p(out) + (first_row * FR_BYTES) as u64;
        // The short rows' products first, into a temporary freed (stream
        // ordered) when this returns.
        let prod: Option<CudaSlice<u8>> = if m.products > 0 {
            let prod: CudaSlice<u8> = self.alloc("spmv_products", m.products * FR_BYTES)?;
            self.spmv.spmv_products.launch(
                self,
                "spmv_products",
                m.products,
                cfg1d(m.products, SPMV_ROWS_BLOCK),
                self.p(&m.pcol),
                self.p(&m.pcoef),
                m.products as u32,
                self.p(&table.buf),
                self.p(&z.buf),
                self.p(&prod),
            )?;
            Some(prod)
        } else {
            None
        };
        // Null when there are no products: every row's range is empty.
        let prod_ptr = prod.as_ref().map_or(0u64, |p| self.p(p));
        self.spmv.spmv_short.launch(
            self,
            "spmv_short",
            m.rows,
            cfg1d(m.rows, SPMV_ROWS_BLOCK),
            self.p(&m.row_start),
            self.p(&m.cols),
            self.p(&m.coef),
            self.p(&m.prow_start),
            prod_ptr,
            self.p(&z.buf),
            out_ptr,
            m.rows as u32,
        )?;
        if m.long_count > 0 {
            let count = m.long_count as u32;
            self.spmv.spmv_long.launch(
                self,
                "spmv_long",
                m.long_count,
                LaunchConfig {
                    grid_dim: (count, 1, 1),
                    block_dim: (SPMV_LONG_BLOCK, 1, 1),
                    shared_mem_bytes: 0,
                },
                self.p(&m.row_start),
                self.p(&m.cols),
                self.p(&m.coef),
                self.p(&table.buf),
                self.p(&z.buf),
                out_ptr,
                self.p(&m.long_rows),
                count,
            )?;
        }
        drop(prod);
        Ok(())
    }

    /// a, b, c = A·z, B·z, C·z into three new buffers of `n` Scalars each
    /// (rows..n zero), ready for the H step's NTTs ([`Self::ntt_device`],
    /// [`Self::h_pointwise_device`]). Allocates [`Self::abc_bytes`]`(n)`
    /// and, one matrix at a time, its [`DeviceCsr::product_bytes`].
    pub fn abc_device(
        &self,
        mats: [&DeviceCsr; 3],
        table: &DeviceScalars,
        z: &DeviceScalars,
        n: usize,
    ) -> Result<[CudaSlice<u8>; 3]> {
        let mut outs = Vec::with_capacity(3);
        for m in mats {
            let mut out = self.abc_output(m.rows, n)?;
            self.spmv_device(m, table, z, &mut out, 0)?;
            outs.push(out);
        }
        let [a, b, c]: [CudaSlice<u8>; 3] = outs.try_into().unwrap_or_else(|_| unreachable!());
        Ok([a, b, c])
    }

    /// One of a, b, c: a new buffer of `n` Scalars whose rows..n are zero,
    /// for the products of a matrix of `rows` rows to fill
    /// ([`Self::spmv_device`], a row block at a time where the matrix is
    /// streamed). Allocates `n` Scalars.
    pub fn abc_output(&self, rows: usize, n: usize) -> Result<CudaSlice<u8>> {
        if rows > n {
            return Err(self.bad("abc", n, format!("{rows} rows for an output of {n}")));
        }
        let mut out: CudaSlice<u8> = self.alloc("abc", n * FR_BYTES)?;
        if rows < n {
            self.stream
                .memset_zeros(&mut out.slice_mut(rows * FR_BYTES..n * FR_BYTES))
                .map_err(|e| self.err("memset", "abc", n, e))?;
        }
        Ok(out)
    }

    /// Device bytes [`Self::abc_device`] allocates: three outputs of `n`
    /// Scalars (the product itself allocates nothing).
    pub fn abc_bytes(n: usize) -> usize {
        3 * n.max(1) * FR_BYTES
    }

    /// M·z from host slices (uploads, multiplies, downloads; everything it
    /// allocates is freed when it returns).
    pub fn spmv(
        &self,
        row_start: &[u64],
        cols: &[u32],
        coef: &[u32],
        table: &[Scalar],
        z: &[Scalar],
    ) -> Result<Vec<Scalar>> {
        let m = self.upload_csr(row_start, cols, coef)?;
        let dt = self.upload_scalars(table)?;
        let dz = self.upload_scalars(z)?;
        let mut out: CudaSlice<u8> = self.alloc("spmv", m.rows * FR_BYTES)?;
        self.spmv_device(&m, &dt, &dz, &mut out, 0)?;
        let mut res = vec![Scalar::ZERO; m.rows];
        if m.rows > 0 {
            self.stream
                .memcpy_dtoh(
                    &out.slice(0..m.rows * FR_BYTES),
                    host::scalars_as_bytes_mut(&mut res),
                )
                .map_err(|e| self.err("copy to host", "spmv", m.rows, e))?;
        }
        Ok(res)
    }

    /// Resident scalars back to the host.
    pub fn download_scalars(&self, s: &DeviceScalars) -> Result<Vec<Scalar>> {
        let mut out = vec![Scalar::ZERO; s.len];
        if s.len > 0 {
            self.stream
                .memcpy_dtoh(
                    &s.buf.slice(0..s.len * FR_BYTES),
                    host::scalars_as_bytes_mut(&mut out),
                )
                .map_err(|e| self.err("copy to host", "download_scalars", s.len, e))?;
        }
        Ok(out)
    }

    /// z = inputs ++ aux in one new buffer of Montgomery Scalars, copied
    /// from the two host vectors where they lie (no host concatenation).
    pub fn upload_z(&self, inputs: &[Scalar], aux: &[Scalar]) -> Result<DeviceScalars> {
        let kernel = "upload_z";
        let len = inputs.len() + aux.len();
        let mut buf: CudaSlice<u8> = self.alloc(kernel, len * FR_BYTES)?;
        let mut at = 0;
        for part in [inputs, aux] {
            let bytes = host::scalars_as_bytes(part);
            if !bytes.is_empty() {
                self.stream
                    .memcpy_htod(bytes, &mut buf.slice_mut(at..at + bytes.len()))
                    .map_err(|e| self.err("copy to device", kernel, len, e))?;
            }
            at += bytes.len();
        }
        Ok(DeviceScalars {
            len,
            form: ScalarForm::Montgomery,
            buf,
        })
    }

    // ------------------------------------------------------ densities

    /// Uploads a density (`&[bool]`, one byte per variable).
    pub fn upload_density(&self, bits: &[bool]) -> Result<DeviceDensity> {
        Ok(DeviceDensity {
            len: bits.len(),
            buf: self.upload("upload_density", host::bools_as_bytes(bits))?,
        })
    }

    /// Room for a density of `len` flags, uninitialised, for a caller that
    /// fills it from another stream of this context (with
    /// [`Self::density_address`]) and makes this device's stream wait for
    /// that copy. The allocation has completed when this returns.
    pub fn alloc_density(&self, len: usize) -> Result<DeviceDensity> {
        let buf: CudaSlice<u8> = self.alloc("alloc_density", len)?;
        self.synchronize()?;
        Ok(DeviceDensity { len, buf })
    }

    /// The device address of `density`'s first byte, for copies into it.
    pub fn density_address(&self, density: &DeviceDensity) -> u64 {
        self.p(&density.buf)
    }

    /// The scalars of z = inputs ++ aux whose flag is set, in order, into a
    /// new buffer: input i is kept when `inputs` is None or its flag is
    /// set, aux j when `aux` is None or its flag is set. The A query is
    /// `select_device(z, num_inputs, None, Some(a_aux))`, the B query
    /// `select_device(z, num_inputs, Some(b_input), Some(b_aux))`
    /// (ProvingAssignment::a_query_scalars / b_query_scalars). One
    /// synchronisation (the count sizes the output); allocates
    /// [`Self::select_bytes`].
    pub fn select_device(
        &self,
        z: &DeviceScalars,
        num_inputs: usize,
        inputs: Option<&DeviceDensity>,
        aux: Option<&DeviceDensity>,
    ) -> Result<DeviceScalars> {
        let kernel = "select";
        let n = z.len;
        if z.form != ScalarForm::Montgomery {
            return Err(self.bad(kernel, n, "z must be Montgomery Scalars".into()));
        }
        if num_inputs > n {
            return Err(self.bad(kernel, n, format!("{num_inputs} inputs in a z of {n}")));
        }
        if n > MAX_LEN {
            return Err(CudaError::Unsupported {
                kernel,
                size: n,
                limit: MAX_LEN,
                device: self.label.clone(),
            });
        }
        if let Some(d) = inputs {
            if d.len != num_inputs {
                return Err(self.bad(
                    kernel,
                    n,
                    format!("input density of {} for {num_inputs} inputs", d.len),
                ));
            }
        }
        if let Some(d) = aux {
            if d.len != n - num_inputs {
                return Err(self.bad(
                    kernel,
                    n,
                    format!("aux density of {} for {} aux", d.len, n - num_inputs),
                ));
            }
        }
        let ip = inputs.map_or(0u64, |d| self.p(&d.buf));
        let ap = aux.map_or(0u64, |d| self.p(&d.buf));
        let (buf, total) = self.compact(
            kernel,
            n,
            |counts, tiles| {
                self.spmv.select_count.launch(
                    self,
                    "select_count",
                    n,
                    tile_cfg(tiles),
                    n as u32,
                    num_inputs as u32,
                    ip,
                    ap,
                    self.p(counts),
                )
            },
            |offsets, tiles, total| {
                let out: CudaSlice<u8> = self.alloc("select_write", total * FR_BYTES)?;
                self.spmv.select_write.launch(
                    self,
                    "select_write",
                    n,
                    tile_cfg(tiles),
                    self.p(&z.buf),
                    n as u32,
                    num_inputs as u32,
                    ip,
                    ap,
                    self.p(offsets),
                    self.p(&out),
                )?;
                Ok(out)
            },
        )?;
        Ok(DeviceScalars {
            len: total,
            form: ScalarForm::Montgomery,
            buf,
        })
    }

    /// Upper bound of the device bytes [`Self::select_device`] allocates
    /// over a z of `n` scalars selecting `selected`: the output and the
    /// compaction's scratch.
    pub fn select_bytes(n: usize, selected: usize) -> usize {
        selected.max(1) * FR_BYTES + compact_scratch_bytes(n)
    }

    /// [`Self::select_device`] from host slices, for checks and callers
    /// without resident data.
    pub fn select(
        &self,
        z: &[Scalar],
        num_inputs: usize,
        inputs: Option<&[bool]>,
        aux: Option<&[bool]>,
    ) -> Result<Vec<Scalar>> {
        let dz = self.upload_scalars(z)?;
        let di = inputs.map(|b| self.upload_density(b)).transpose()?;
        let da = aux.map(|b| self.upload_density(b)).transpose()?;
        let s = self.select_device(&dz, num_inputs, di.as_ref(), da.as_ref())?;
        self.download_scalars(&s)
    }

    // ------------------------------------------------------ 0/1 split

    /// The 0/1 split of resident Montgomery scalars on the GPU (the layout
    /// of [`host::split_zero_one`]): two passes over the scalars and one
    /// synchronisation (the count of the others sizes their buffers).
    /// Allocates at most [`DeviceSplit::bytes_for`].
    pub fn split_zero_one_device(&self, scalars: &DeviceScalars) -> Result<DeviceSplit> {
        self.split_zero_one_range(scalars, 0, scalars.len)
    }

    /// [`Self::split_zero_one_device`] of `scalars[first..first + len]`
    /// (the aux part of z for the L MSM: no copy of it is made). Positions
    /// in the split count from `first`.
    pub fn split_zero_one_range(
        &self,
        scalars: &DeviceScalars,
        first: usize,
        len: usize,
    ) -> Result<DeviceSplit> {
        let kernel = "split_zero_one";
        let n = len;
        if scalars.form != ScalarForm::Montgomery {
            return Err(self.bad(kernel, n, "the split reads Montgomery Scalars".into()));
        }
        if first.checked_add(len).is_none_or(|e| e > scalars.len) {
            return Err(self.bad(
                kernel,
                n,
                format!("scalars {first}..{first}+{len} of {}", scalars.len),
            ));
        }
        if n > MAX_LEN {
            return Err(CudaError::Unsupported {
                kernel,
                size: n,
                limit: MAX_LEN,
                device: self.label.clone(),
            });
        }
        let words = n.div_ceil(32);
        let ones: CudaSlice<u32> = self.alloc(kernel, words)?;
        let ones_total: CudaSlice<u32> = self.zeros(kernel, 1)?;
        let sp = self.p(&scalars.buf) + (first * FR_BYTES) as u64;
        let ((rest_ids, rest), rest_count) = self.compact(
            kernel,
            n,
            |counts, tiles| {
                self.spmv.split_count.launch(
                    self,
                    "split_count",
                    n,
                    tile_cfg(tiles),
                    sp,
                    n as u32,
                    self.p(&ones),
                    self.p(counts),
                    self.p(&ones_total),
                )
            },
            |offsets, tiles, total| {
                let ids: CudaSlice<u32> = self.alloc("split_write", total)?;
                let rest: CudaSlice<u8> = self.alloc("split_write", total * FR_BYTES)?;
                self.spmv.split_write.launch(
                    self,
                    "split_write",
                    n,
                    tile_cfg(tiles),
                    sp,
                    n as u32,
                    self.p(offsets),
                    self.p(&ids),
                    self.p(&rest),
                )?;
                Ok((ids, rest))
            },
        )?;
        let ones_count = self.download(kernel, &ones_total, 1)?[0] as usize;
        Ok(DeviceSplit {
            len: n,
            ones_count,
            zeros_count: n - ones_count - rest_count,
            ones,
            rest_ids,
            rest_scalars: DeviceScalars {
                len: rest_count,
                form: ScalarForm::Montgomery,
                buf: rest,
            },
        })
    }

    /// A device split brought to the host (the same value
    /// [`host::split_zero_one`] computes).
    pub fn split_to_host(&self, s: &DeviceSplit) -> Result<host::ZeroOneSplit> {
        let kernel = "split_to_host";
        let rest = s.rest_count();
        let mut rest_scalars = vec![Scalar::ZERO; rest];
        if rest > 0 {
            self.stream
                .memcpy_dtoh(
                    &s.rest_scalars.buf.slice(0..rest * FR_BYTES),
                    host::scalars_as_bytes_mut(&mut rest_scalars),
                )
                .map_err(|e| self.err("copy to host", kernel, rest, e))?;
        }
        Ok(host::ZeroOneSplit {
            ones: self.download(kernel, &s.ones, s.len.div_ceil(32))?,
            ones_count: s.ones_count,
            zeros_count: s.zeros_count,
            rest_ids: self.download(kernel, &s.rest_ids, rest)?,
            rest_scalars,
        })
    }
}

impl CudaDevice {
    // ------------------------------------------ MSM by the device split

    /// sum s_i P_i from a [`DeviceSplit`] of the s_i (made by
    /// [`Self::split_zero_one_device`]): the ones through the 0/1 path over
    /// the device mask, the rest through an indexed MSM over the device
    /// positions; nothing goes through the host. The split must be of as
    /// many scalars as there are points.
    pub fn msm_g1_split_device(
        &self,
        points: &DevicePoints,
        split: &DeviceSplit,
    ) -> Result<G1Projective> {
        self.msm_split_device(points, None, split, "msm_g1_split_device")
    }

    pub fn msm_g2_split_device(
        &self,
        points: &DevicePoints,
        split: &DeviceSplit,
    ) -> Result<G2Projective> {
        self.msm_split_device(points, None, split, "msm_g2_split_device")
    }

    /// [`Self::msm_g1_split_device`] with the points' pair sums (made by
    /// [`Self::pair_sums_device`]) for the 0/1 part
    /// ([`Self::sum_selected_g1_paired`]).
    pub fn msm_g1_split_device_paired(
        &self,
        points: &DevicePoints,
        pairs: &DevicePoints,
        split: &DeviceSplit,
    ) -> Result<G1Projective> {
        self.msm_split_device(points, Some(pairs), split, "msm_g1_split_device_paired")
    }

    pub fn msm_g2_split_device_paired(
        &self,
        points: &DevicePoints,
        pairs: &DevicePoints,
        split: &DeviceSplit,
    ) -> Result<G2Projective> {
        self.msm_split_device(points, Some(pairs), split, "msm_g2_split_device_paired")
    }

    fn msm_split_device<G: DeviceGroup>(
        &self,
        points: &DevicePoints,
        pairs: Option<&DevicePoints>,
        split: &DeviceSplit,
        kernel: &'static str,
    ) -> Result<G> {
        let (ones, (sums, c)) = self.split_sums(G::GROUP, points, pairs, split, kernel)?;
        Ok(G::from_xyzz(&ones) + window_sum::<G>(&sums, c))
    }
}

/// The ones' sum (XYZZ bytes) and the rest's window sums with their width.
type SplitSums = (Vec<u8>, (Vec<Vec<u8>>, u32));

impl CudaDevice {
    fn split_sums(
        &self,
        group: Group_,
        points: &DevicePoints,
        pairs: Option<&DevicePoints>,
        split: &DeviceSplit,
        kernel: &'static str,
    ) -> Result<SplitSums> {
        if points.group != group {
            return Err(self.bad(kernel, split.len, "points of the other group".into()));
        }
        self.check_pairs(kernel, split.len, points, pairs)?;
        if points.len != split.len {
            return Err(self.bad(
                kernel,
                split.len,
                format!("a split of {} scalars for {} points", split.len, points.len),
            ));
        }
        let ones = self.sum_selected_at(group, points, pairs, self.p(&split.ones), kernel)?;
        let at = self.scalars_at(&split.rest_scalars);
        let ids = Ids::Device {
            ptr: self.p(&split.rest_ids),
            len: split.rest_count(),
        };
        let pts = self.points_at(points, 0);
        let rest = self.msm_windows(group, pts, at, Some(ids), None, kernel)?;
        Ok((ones, rest))
    }
}

/// One block of 1024 threads per tile.
fn tile_cfg(tiles: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (tiles as u32, 1, 1),
        block_dim: (TILE as u32, 1, 1),
        shared_mem_bytes: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::checks::{random_csr, ref_spmv, HostCsr, BENCH_SHAPE, CHECK_SHAPE};
    use rand::SeedableRng;

    /// The host's thresholds are the kernels' (one fact, two languages).
    #[test]
    fn constants_match_the_kernels() {
        let cuh = include_str!("../../kernels/spmv.cuh");
        assert!(cuh.contains(&format!("#define SPMV_LONG {SPMV_LONG}\n")));
        assert!(cuh.contains(&format!("#define COMPACT_TILE {TILE}\n")));
        assert!(cuh.contains(&format!("#define SPMV_LONG_BLOCK {SPMV_LONG_BLOCK}\n")));
    }

    /// The checks' generator gives well-formed matrices with every row
    /// class the kernels distinguish.
    #[test]
    fn check_matrices_are_well_formed_and_cover_every_row_class() {
        let seed: u64 = rand::random();
        let (rows, nz, t) = (20_000, 20_003, 40);
        let m = random_csr(rows, nz, t, CHECK_SHAPE, seed);
        assert_eq!(m.rows(), rows);
        assert_eq!(m.row_start[0], 0);
        assert_eq!(*m.row_start.last().unwrap() as usize, m.cols.len());
        assert_eq!(m.cols.len(), m.coef.len());
        assert!(m.row_start.windows(2).all(|w| w[0] <= w[1]), "seed {seed}");
        assert!(m.cols.iter().all(|&c| (c as usize) < nz), "seed {seed}");
        assert!(m.coef.iter().all(|&c| (c as usize) < t), "seed {seed}");
        let lens: Vec<usize> = m
            .row_start
            .windows(2)
            .map(|w| (w[1] - w[0]) as usize)
            .collect();
        for (what, hit) in [
            ("empty", lens.contains(&0)),
            ("at the threshold", lens.contains(&SPMV_LONG)),
            ("just past it", lens.contains(&(SPMV_LONG + 1))),
            ("over 100", lens.iter().any(|&l| l > 100)),
        ] {
            assert!(hit, "no {what} row (seed {seed})");
        }
        for c in 0..3u32 {
            let want = if c == 2 { "a table entry" } else { "±1" };
            assert!(
                m.coef.iter().any(|&k| k.min(2) == c),
                "no {want} coefficient"
            );
        }
        let b = random_csr(10_000, 10_000, 16, BENCH_SHAPE, seed);
        let per_row = b.cols.len() as f64 / 10_000.0;
        assert!(
            (3.5..4.1).contains(&per_row),
            "bench shape {per_row} entries per row"
        );
    }

    /// The reference product on a matrix worked by hand.
    #[test]
    fn reference_product_by_hand() {
        let t = [Scalar::ONE, -Scalar::ONE, Scalar::from(5u64)];
        let z = [Scalar::ONE, Scalar::from(3u64), Scalar::from(7u64)];
        let m = HostCsr {
            row_start: vec![0, 0, 3, 4],
            cols: vec![1, 2, 1, 0],
            coef: vec![0, 2, 1, 1],
        };
        // Row 1: 3 + 5·7 - 3 = 35; row 2: -1.
        assert_eq!(
            ref_spmv(&m, &t, &z),
            vec![Scalar::ZERO, Scalar::from(35u64), -Scalar::ONE]
        );
    }

    /// The kernels' plan (short rows: ±1 entries summed in the row, table
    /// entries' products made first into a list in row order; long rows
    /// whole), run on the CPU, equals the plain product: the GPU checks
    /// then test only the CUDA, not the plan.
    #[test]
    fn the_kernels_plan_equals_the_plain_product() {
        let seed: u64 = rand::random();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let t: Vec<Scalar> = (0..40).map(|_| Scalar::random(&mut rng)).collect();
        let mut t = t;
        t[0] = Scalar::ONE;
        t[1] = -Scalar::ONE;
        let nz = 3003;
        let z: Vec<Scalar> = (0..nz).map(|_| Scalar::random(&mut rng)).collect();
        let m = random_csr(3000, nz, t.len(), CHECK_SHAPE, seed);
        let rows = m.rows();
        let len = |r: usize| (m.row_start[r + 1] - m.row_start[r]) as usize;
        let range = |r: usize| m.row_start[r] as usize..m.row_start[r + 1] as usize;
        // csr_prod_count, the scan, csr_prod_write.
        let pcount: Vec<u32> = (0..rows)
            .map(|r| {
                if len(r) > SPMV_LONG {
                    0
                } else {
                    range(r).filter(|&k| m.coef[k] >= 2).count() as u32
                }
            })
            .collect();
        let mut prow_start = vec![0u32];
        for c in &pcount {
            prow_start.push(prow_start.last().unwrap() + c);
        }
        let (mut pcol, mut pcoef) = (Vec::new(), Vec::new());
        for r in (0..rows).filter(|&r| len(r) <= SPMV_LONG) {
            for k in range(r).filter(|&k| m.coef[k] >= 2) {
                pcol.push(m.cols[k]);
                pcoef.push(m.coef[k]);
            }
            assert_eq!(pcol.len(), prow_start[r + 1] as usize);
        }
        // spmv_products, spmv_short, spmv_long.
        let prod: Vec<Scalar> = pcol
            .iter()
            .zip(&pcoef)
            .map(|(&c, &k)| t[k as usize] * z[c as usize])
            .collect();
        let got: Vec<Scalar> = (0..rows)
            .map(|r| {
                if len(r) > SPMV_LONG {
                    return range(r).fold(Scalar::ZERO, |a, k| {
                        a + t[m.coef[k] as usize] * z[m.cols[k] as usize]
                    });
                }
                let mut acc = Scalar::ZERO;
                for k in range(r) {
                    match m.coef[k] {
                        0 => acc += z[m.cols[k] as usize],
                        1 => acc -= z[m.cols[k] as usize],
                        _ => {}
                    }
                }
                for p in &prod[prow_start[r] as usize..prow_start[r + 1] as usize] {
                    acc += p;
                }
                acc
            })
            .collect();
        assert_eq!(got, ref_spmv(&m, &t, &z), "seed {seed}");
    }
}
