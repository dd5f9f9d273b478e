//! Witnesses of a compiled circuit proved on the device: z = (inputs, aux)
//! goes up once, a/b/c = A·z, B·z, C·z come from the compiled system's
//! matrices resident in VRAM straight into the H step, and the A/B query
//! selections and the 0/1 splits of the MSM scalars are made on the device
//! from the same z (cuzk-cuda's spmv kernels). Nothing of the partition is
//! prepared on the host.
//!
//! The path needs the parameters resident and H all on the device; the
//! compiled systems' matrices stay resident across partitions (several
//! kinds' at once when they fit; an unused one is evicted, least recently
//! used first, when another needs its room or a partition waiting for
//! memory does). A system that cannot stay resident (it does not fit the
//! card beside its parameters and a partition's working set, as on an 80
//! GB card at 2^27, or
//! [`GpuConfig::keep_compiled_resident`](crate::GpuConfig) is off) goes up
//! for each partition in row blocks of at most
//! [`GpuConfig::compiled_block_bytes`](crate::GpuConfig), each block copied
//! through the pinned staging ring into the same staging buffers and its
//! products written at its rows before the next block's copy starts. A
//! partition for which none of that fits proves by the host path: its
//! witness assigned on the CPU's cores, then the staging plans of
//! [`CudaBackend::prove_partition`].

use super::*;
use cuzk_core::compiled::{CompiledCircuit, SparseMatrix, Witness};
use cuzk_cuda::{CsrStaging, DeviceCsr, DeviceDensity, DeviceScalars, DeviceSplit, SPMV_LONG};
use std::ops::Range;

use crate::upload::{DeviceDst, Form, StagedForm};
use cuzk_core::zero_one::ZeroOneForm;

/// Which of [`CudaBackend::copy_up`]'s sources go packed by 0/1: the
/// first `parts`, each as its 0/1 form where `forms` gives one (as made,
/// or already written into pinned memory), else packed on the way when
/// `on_the_way`; the default sends all raw.
#[derive(Clone, Copy, Default)]
struct ZPacking<'a> {
    parts: usize,
    forms: &'a [Option<Form<'a>>],
    on_the_way: bool,
}

/// `form` where it matches `aux` (the witness's 0/1 form made on the
/// synthesis side); one that does not (aux changed after it was made) is
/// left out with a warning, and z is packed as it goes up instead.
fn checked_form<'a>(form: Option<&'a ZeroOneForm>, aux: &[Scalar]) -> Option<&'a ZeroOneForm> {
    let form = form?;
    if form.matches(aux) {
        Some(form)
    } else {
        eprintln!(
            "cuzk: a witness's 0/1 form does not match its aux vector ({} elements against \
             {}): packing it on the way up instead",
            form.len(),
            aux.len()
        );
        None
    }
}

/// Which compiled system a resident one is: a system reopened (another
/// mapping) or recompiled goes up again.
#[derive(Clone, Debug, PartialEq, Eq)]
struct CompiledKey {
    id: String,
    inputs: usize,
    aux: usize,
    rows: usize,
    nnz: [usize; 3],
    table: usize,
    /// Where the A matrix's columns lie in host memory.
    addr: usize,
}

impl CompiledKey {
    fn of(cc: &CompiledCircuit) -> Self {
        CompiledKey {
            id: cc.circuit_id.clone(),
            inputs: cc.num_inputs(),
            aux: cc.num_aux(),
            rows: cc.num_constraints(),
            nnz: [cc.a.nnz(), cc.b.nnz(), cc.c.nnz()],
            table: cc.coefficients().len(),
            addr: cc.a.cols().as_ptr() as usize,
        }
    }
}

/// What a partition's upload phase copied: whether through pinned memory,
/// how many bytes, and how long the copies took until the device had them.
struct UploadStats {
    pinned: bool,
    bytes: u64,
    /// Bytes sent over the link (less than `bytes` where z went packed).
    sent: u64,
    copy_ms: f64,
    /// The wait for the device's stream before z's allocation, and the
    /// allocation.
    wait_ms: f64,
    alloc_ms: f64,
}

/// Host bytes and the device range they are copied to.
type CopyUp<'c> = (&'c [u8], DeviceDst);

/// The parts of a compiled system besides its matrices that a partition
/// reads on the device: the coefficient table and the query densities.
struct CompiledAux {
    table: DeviceScalars,
    a_aux: DeviceDensity,
    b_input: DeviceDensity,
    b_aux: DeviceDensity,
}

impl CompiledAux {
    fn upload(dev: &CudaDevice, cc: &CompiledCircuit) -> Result<Self> {
        Ok(CompiledAux {
            table: dev.upload_scalars(cc.coefficients())?,
            a_aux: dev.upload_density(cc.a_aux_density().as_slice())?,
            b_input: dev.upload_density(cc.b_input_density().as_slice())?,
            b_aux: dev.upload_density(cc.b_aux_density().as_slice())?,
        })
    }

    /// Room for `cc`'s table and densities on the device, uninitialised,
    /// with the copies that fill it (host bytes, device destination) for
    /// [`CudaBackend::copy_up`].
    fn alloc<'c>(dev: &CudaDevice, cc: &'c CompiledCircuit) -> Result<(Self, Vec<CopyUp<'c>>)> {
        let aux = CompiledAux {
            table: dev.alloc_scalars(cc.coefficients().len())?,
            a_aux: dev.alloc_density(cc.a_aux_density().len())?,
            b_input: dev.alloc_density(cc.b_input_density().len())?,
            b_aux: dev.alloc_density(cc.b_aux_density().len())?,
        };
        let dst = |ptr: u64, src: &[u8]| DeviceDst {
            ptr,
            len: src.len(),
        };
        let table = scalars_as_bytes(cc.coefficients());
        let mut copies = vec![(table, dst(dev.scalars_address(&aux.table), table))];
        for (d, bits) in [
            (&aux.a_aux, cc.a_aux_density()),
            (&aux.b_input, cc.b_input_density()),
            (&aux.b_aux, cc.b_aux_density()),
        ] {
            let src = cuzk_cuda::host::bools_as_bytes(bits.as_slice());
            copies.push((src, dst(dev.density_address(d), src)));
        }
        Ok((aux, copies))
    }

    /// Device bytes [`Self::upload`] allocates for `cc`.
    fn bytes_for(cc: &CompiledCircuit) -> u64 {
        cc.coefficients().len().max(1) as u64 * plan::FR
            + (cc.a_aux_density().len() + cc.b_input_density().len() + cc.b_aux_density().len())
                .max(1) as u64
    }

    fn device_bytes(&self) -> u64 {
        self.table.len().max(1) as u64 * plan::FR
            + (self.a_aux.device_bytes() + self.b_input.device_bytes() + self.b_aux.device_bytes())
                as u64
    }
}

/// A compiled system resident on the device.
pub(super) struct DeviceCompiled {
    key: CompiledKey,
    mats: [DeviceCsr; 3],
    aux: CompiledAux,
    /// Held for its drop: the budget's bytes for the buffers above.
    reservation: Reservation,
}

/// A run of whole rows of one matrix sent up as one block.
#[derive(Clone, Debug, PartialEq, Eq)]
struct RowBlock {
    rows: Range<usize>,
    /// Entries in the rows.
    nnz: usize,
    /// The rows' entries that [`DeviceCsr`] keeps a product for.
    products: usize,
}

impl RowBlock {
    /// Device bytes the block holds while its products are made: the
    /// matrix block as cuzk-cuda states it (made from the staging
    /// buffers), the transient of checking it, and the products'
    /// temporary.
    fn device_bytes(&self) -> u64 {
        let rows = self.rows.len();
        (DeviceCsr::staged_bytes_for(rows, self.nnz, self.products)
            + DeviceCsr::build_scratch_bytes(rows)
            + self.products * cuzk_cuda::host::FR_BYTES) as u64
    }
}

/// Rows counted together when a matrix is cut into blocks (a block is a
/// run of whole groups unless one group alone is larger than a block).
const BLOCK_GROUP_ROWS: usize = 1024;

/// `m`'s rows cut into blocks of at most `max_bytes` device bytes each
/// ([`RowBlock::device_bytes`]), in order, covering every row; a single
/// row larger than that is a block alone.
fn row_blocks(row_start: &[u64], coefs: &[u32], max_bytes: u64) -> Vec<RowBlock> {
    let rows = row_start.len().saturating_sub(1);
    let stats = |r: Range<usize>| -> RowBlock {
        let nnz = (row_start[r.end] - row_start[r.start]) as usize;
        let products = r
            .clone()
            .map(|i| {
                let (lo, hi) = (row_start[i] as usize, row_start[i + 1] as usize);
                if hi - lo > SPMV_LONG {
                    0
                } else {
                    coefs[lo..hi].iter().filter(|&&c| c >= 2).count()
                }
            })
            .sum();
        RowBlock {
            rows: r,
            nnz,
            products,
        }
    };
    let groups: Vec<RowBlock> = (0..rows.div_ceil(BLOCK_GROUP_ROWS))
        .into_par_iter()
        .map(|g| stats(g * BLOCK_GROUP_ROWS..((g + 1) * BLOCK_GROUP_ROWS).min(rows)))
        .collect();
    let mut blocks: Vec<RowBlock> = Vec::new();
    let mut open: Option<RowBlock> = None;
    let push = |unit: RowBlock, open: &mut Option<RowBlock>, blocks: &mut Vec<RowBlock>| match open
        .take()
    {
        None => *open = Some(unit),
        Some(o) => {
            let joined = RowBlock {
                rows: o.rows.start..unit.rows.end,
                nnz: o.nnz + unit.nnz,
                products: o.products + unit.products,
            };
            if joined.device_bytes() <= max_bytes {
                *open = Some(joined);
            } else {
                blocks.push(o);
                *open = Some(unit);
            }
        }
    };
    for g in groups {
        if g.device_bytes() <= max_bytes || g.rows.len() == 1 {
            push(g, &mut open, &mut blocks);
        } else {
            for r in g.rows.clone() {
                push(stats(r..r + 1), &mut open, &mut blocks);
            }
        }
    }
    blocks.extend(open);
    blocks
}

/// A compiled system whose matrices go up in row blocks for each
/// partition.
struct StreamedCompiled {
    blocks: [Vec<RowBlock>; 3],
    /// The most rows and the most entries of any block: the staging
    /// buffers every block is copied into hold that many.
    max_rows: usize,
    max_nnz: usize,
    /// Device bytes while blocks are streamed: the staging buffers, and
    /// the most any block makes beside them (its long-row list and product
    /// entries, the transient of checking it, the products' temporary).
    block_bytes: u64,
}

impl StreamedCompiled {
    fn plan(cc: &CompiledCircuit, max_bytes: u64) -> Self {
        let plan = |m: &SparseMatrix| row_blocks(m.row_start(), m.coefs(), max_bytes);
        let blocks = [plan(&cc.a), plan(&cc.b), plan(&cc.c)];
        let all = || blocks.iter().flatten();
        let max_rows = all().map(|b| b.rows.len()).max().unwrap_or(0);
        let max_nnz = all().map(|b| b.nnz).max().unwrap_or(0);
        let beside = all()
            .map(|b| b.device_bytes() - CsrStaging::bytes_for(b.rows.len(), b.nnz) as u64)
            .max()
            .unwrap_or(0);
        StreamedCompiled {
            max_rows,
            max_nnz,
            block_bytes: CsrStaging::bytes_for(max_rows, max_nnz) as u64 + beside,
            blocks,
        }
    }

    fn count(&self) -> usize {
        self.blocks.iter().map(Vec::len).sum()
    }
}

/// Compiled systems whose plans the backend keeps (a few kinds at most
/// run on one card).
const MAX_SYSTEM_PLANS: usize = 8;

/// What the backend keeps of a compiled system it has proved: one pass
/// over its matrices (10 GB at 2^27), made at its first partition.
pub(super) struct SystemPlans {
    key: CompiledKey,
    shape: ResidentShape,
    streamed: StreamedCompiled,
}

/// Where a partition's matrices come from.
enum Matrices {
    Resident(Arc<DeviceCompiled>),
    /// Sent up in blocks, with the table and densities uploaded for the
    /// partition (within its grant).
    Streamed(Arc<SystemPlans>),
}

impl DeviceCompiled {
    /// The largest temporary one product allocates.
    fn max_product_bytes(&self) -> u64 {
        self.mats
            .iter()
            .map(|m| m.product_bytes() as u64)
            .max()
            .unwrap_or(0)
    }
    pub(super) fn bytes(&self) -> u64 {
        self.reservation.bytes()
    }
}

/// Entries of `m`'s short rows with a table coefficient: the products
/// [`DeviceCsr`] keeps (the tests' reference for [`row_blocks`]' counts).
#[cfg(test)]
fn product_count(row_start: &[u64], coefs: &[u32]) -> usize {
    row_start
        .par_windows(2)
        .map(|w| {
            let (lo, hi) = (w[0] as usize, w[1] as usize);
            if hi - lo > SPMV_LONG {
                0
            } else {
                coefs[lo..hi].iter().filter(|&&c| c >= 2).count()
            }
        })
        .sum()
}

/// What a compiled system holds on the device when resident, counted
/// from its host form before any of it goes up (cuzk-cuda's statements of
/// what it allocates).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ResidentShape {
    /// The three matrices, the table and the three densities.
    bytes: u64,
    /// The largest transient its upload holds besides.
    scratch: u64,
    /// The largest temporary one matrix's product allocates
    /// ([`DeviceCsr::product_bytes`]).
    max_product: u64,
}

impl ResidentShape {
    /// What the system holds once resident (at most).
    pub(super) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// What its upload holds besides, until it is done.
    pub(super) fn scratch(&self) -> u64 {
        self.scratch
    }

    /// From the row-block plan's product counts (its blocks cover every
    /// row of each matrix once), so that the matrices' coefficients are
    /// read once for both.
    fn of(cc: &CompiledCircuit, streamed: &StreamedCompiled) -> Self {
        let mut bytes = 0u64;
        let mut max_product = 0u64;
        for (m, blocks) in [&cc.a, &cc.b, &cc.c].into_iter().zip(&streamed.blocks) {
            let products: usize = blocks.iter().map(|b| b.products).sum();
            bytes += DeviceCsr::bytes_for(m.rows(), m.nnz(), products) as u64;
            max_product = max_product.max(products as u64 * plan::FR);
        }
        bytes += CompiledAux::bytes_for(cc);
        let scratch = DeviceCsr::upload_scratch_bytes(cc.num_constraints()) as u64;
        ResidentShape {
            bytes,
            scratch,
            max_product,
        }
    }
}

/// Where a compiled partition's matrices come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompiledPlacement {
    /// Resident on the device across partitions (a/b/c in milliseconds).
    Resident,
    /// Sent up in row blocks for each partition: the system and the
    /// parameters do not fit the card together, the parameters and the
    /// partition's working set do.
    Streamed,
    /// Neither fits beside resident parameters (or the configuration
    /// keeps them off the device): a/b/c on the host, the staging plans of
    /// [`CudaBackend::prove_partition`].
    Host,
}

/// Why a compiled system's partitions go where they go: the card's
/// capacity against what each placement needs ([`CudaBackend::compiled_fit`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompiledFit {
    pub placement: CompiledPlacement,
    /// The budget's capacity (free memory at open less the margin, or the
    /// configured limit).
    pub capacity: u64,
    /// The parameters resident.
    pub params_bytes: u64,
    /// The compiled system resident.
    pub system_bytes: u64,
    /// A partition's working set with the system resident, and with its
    /// matrices streamed (their table and densities and one row block's
    /// buffers included), with the H MSM in each of [`H_PARTS`] parts.
    pub working_resident: [u64; 3],
    pub working_streamed: [u64; 3],
    /// Parts the H MSM runs in (one of [`H_PARTS`]): more than one where
    /// only its smaller scratch lets the placement fit, and at least
    /// [`DEFAULT_H_PARTS_MIN`] above [`H_PARTS_MIN_ABOVE`] scalars.
    pub h_parts: usize,
}

/// Parts the H MSM may run in, fewest first: each part sorts and sums its
/// own range of the coefficients against its range of the bases (its
/// scratch a part's, [`plan::msm_scratch`]), at the cost of one more
/// bucket reduction a part (~10 ms at 2^26 points).
pub const H_PARTS: [usize; 3] = [1, 2, 4];

/// The fewest parts an H MSM of more than [`H_PARTS_MIN_ABOVE`] scalars
/// runs in where one would fit too. Measured on an H100 80GB (2026-12-07,
/// call 95, the porep-like 2^27 partition, z prepared, one process): in
/// one part 1411.5 ms, in two 1401.3; the H MSM itself the same (724.5 /
/// 724.9 ms: the bucket reduction a part adds is paid back, perhaps by
/// each part's bases spanning 6.4 GB rather than 12.9), and a/b/c 25.6
/// against 17.4 ms after the one-part plan's larger scratch. Two parts
/// also leave 2 GB more of the card free. On the H200 the two are equal
/// within noise (BENCHMARKS.md run 54: one part 1379.2 ms, two 1377.0-1380.2,
/// msm h 694.5 against 699.2).
pub const DEFAULT_H_PARTS_MIN: usize = 2;

/// H MSMs of at most this many scalars take the fewest parts that fit:
/// below 2^27 no split has been measured to pay.
pub const H_PARTS_MIN_ABOVE: usize = 1 << 26;

/// The placement by capacity alone, and the H MSM's parts (an index into
/// [`H_PARTS`]; `working_*[i]` is the working set with `H_PARTS[i]` parts):
/// resident where the parameters, the system and a partition's working set
/// fit the card together, with the fewest parts that let them; else
/// streamed where the parameters and the streamed working set do; else the
/// host. What other kinds hold is not counted: it gives way (least
/// recently used first) to a partition that needs the room.
fn place_compiled(
    capacity: u64,
    params: u64,
    system: Option<u64>,
    working_resident: &[u64; 3],
    working_streamed: &[u64; 3],
) -> (CompiledPlacement, usize) {
    let fits = |need: u64| need <= capacity;
    if let Some(system) = system {
        if let Some(i) = working_resident
            .iter()
            .position(|&w| fits(params + system + w))
        {
            return (CompiledPlacement::Resident, i);
        }
    }
    match working_streamed.iter().position(|&w| fits(params + w)) {
        Some(i) => (CompiledPlacement::Streamed, i),
        None => (CompiledPlacement::Host, 0),
    }
}

/// The index into [`H_PARTS`] of the fewest parts that fit (`fits`) or,
/// for an H MSM of more than [`H_PARTS_MIN_ABOVE`] scalars, of at least
/// `min` parts where more: each more part's working set is no larger, so
/// what fitted still fits.
fn at_least_parts(fits: usize, h: usize, min: usize) -> usize {
    if h <= H_PARTS_MIN_ABOVE {
        return fits;
    }
    let want = H_PARTS
        .iter()
        .position(|&k| k >= min)
        .unwrap_or(H_PARTS.len() - 1);
    fits.max(want)
}

/// The most device bytes a compiled partition holds at once beside the
/// resident parameters and compiled system: z throughout, and the largest
/// of its steps (a/b/c with a product's temporary and the NTT tables; H's
/// coefficients with the H MSM's scratch; each query's selection, split
/// and MSM scratch; L's split and scratch), each by cuzk-cuda's own
/// statement of what it allocates. `pack_staging` is the device staging
/// buffer z's packed pieces go through while z goes up (0 when z goes
/// raw), beside z only. `dense` bounds the scalars of z that are neither 0
/// nor 1 (`usize::MAX` where unknown): the queries' and L's MSMs run over
/// those alone, their ones through the 0/1 sum. The H MSM runs in
/// `h_parts` parts.
pub(super) fn compiled_working_bytes(
    s: &PartitionSizes,
    z: usize,
    max_product: u64,
    pack_staging: u64,
    dense: usize,
    h_parts: usize,
) -> u64 {
    let n = s.domain;
    let fr = plan::FR;
    let z_bytes = z as u64 * fr;
    let h_step = h_step_bytes(n, max_product);
    let h_msm = n as u64 * fr + h_part_scratch(s.h, h_parts);
    let query = |m: usize, g2_too: bool| {
        CudaDevice::select_bytes(z, m) as u64 + split_step_bytes(m, dense, g2_too)
    };
    let l_step = split_step_bytes(s.l, dense, false);
    z_bytes
        + [
            pack_staging,
            h_step,
            h_msm,
            query(s.a, false),
            query(s.b, true),
            l_step,
        ]
        .into_iter()
        .max()
        .unwrap_or(0)
}

/// Device bytes of the step from a/b/c to H over a domain of `n`: a, b
/// and c, with the larger of what their products hold (`transient`: a
/// resident matrix's product temporary, or a streamed system's block
/// buffers, all freed in stream order when a/b/c are made) and the NTT's
/// twiddles and tables (made after them, by `h_device`).
fn h_step_bytes(n: usize, transient: u64) -> u64 {
    CudaDevice::abc_bytes(n) as u64
        + transient.max(cuzk_cuda::host::ntt_scratch_bytes(
            n.max(1).trailing_zeros(),
        ))
}

/// Device bytes of one part of the H MSM over `h` coefficients already on
/// the device in `parts` parts (no copy of the scalars in its scratch).
fn h_part_scratch(h: usize, parts: usize) -> u64 {
    let part = h.div_ceil(parts.max(1));
    plan::msm_scratch(part, false).saturating_sub(part as u64 * plan::FR)
}

/// Device bytes of an MSM step over `m` scalars by their device split, of
/// which at most `dense` are neither 0 nor 1: the split and the larger
/// scratch of its G1 MSM and, where `g2_too`, its G2 one (the two run one
/// after the other from the same split).
fn split_step_bytes(m: usize, dense: usize, g2_too: bool) -> u64 {
    let rest = m.min(dense);
    let scratch = plan::split_msm_scratch(m, rest, false).max(if g2_too {
        plan::split_msm_scratch(m, rest, true)
    } else {
        0
    });
    DeviceSplit::bytes_for(m, rest) as u64 + scratch
}

/// Scalars of a witness's z that are neither 0 nor 1, at most: every
/// input, and aux's big elements (its 0/1 form's count where the synthesis
/// side made one: the device expands z from that form; else counted here,
/// one read of aux).
fn dense_bound(w: &Witness, form: Option<&ZeroOneForm>) -> usize {
    let aux = match form {
        Some(f) => f.big().len(),
        None => w
            .aux
            .par_chunks(cuzk_core::zero_one::GROUP)
            .map(|g| cuzk_core::zero_one::group_masks(g).1.count_ones() as usize)
            .sum(),
    };
    w.inputs.len() + aux
}

impl CudaBackend {
    /// a, b, c = A·z, B·z, C·z from matrices sent up a row block at a
    /// time, every block into the same staging buffers, through the pinned
    /// staging ring (pageable copies where there is none) on the slot's
    /// stream. On the device a block's copy waits for the previous block's
    /// products, and its products wait for its copy.
    fn abc_streamed(
        &self,
        slot: &Slot,
        cc: &CompiledCircuit,
        sc: &StreamedCompiled,
        table: &DeviceScalars,
        z: &DeviceScalars,
        n: usize,
    ) -> Result<[CudaSlice<u8>; 3]> {
        use cuzk_cuda::host::{u32s_as_bytes, u64s_as_bytes};
        let dev = &slot.dev;
        let mut staging = Some(dev.csr_staging(sc.max_rows, sc.max_nnz)?);
        let mut outs = Vec::with_capacity(3);
        for (m, blocks) in [&cc.a, &cc.b, &cc.c].into_iter().zip(&sc.blocks) {
            let mut out = dev.abc_output(m.rows(), n)?;
            let starts = m.row_start();
            for block in blocks {
                let (first, end) = (block.rows.start, block.rows.end);
                // The row starts go up as they are; the device narrows them
                // to u32 from 0 (no pass over them on the host).
                let base = starts[first];
                let (lo, hi) = (base as usize, starts[end] as usize);
                let buffers = staging
                    .take()
                    .expect("the staging buffers come back after every block");
                let d = dev.csr_staging_dsts(&buffers);
                // The copy overwrites what the previous block's products
                // read: the slot's stream waits for them on the device.
                let read = dev.record_event()?;
                slot.stream
                    .wait(&read)
                    .map_err(|e| self.drv("stream wait (matrix block)", e))?;
                let srcs = [
                    u64s_as_bytes(&starts[first..=end]),
                    u32s_as_bytes(&m.cols()[lo..hi]),
                    u32s_as_bytes(&m.coefs()[lo..hi]),
                ];
                let dsts = [d.row_start, d.cols, d.coef].map(|(ptr, len)| DeviceDst { ptr, len });
                self.copy_up(
                    slot,
                    &srcs,
                    &dsts,
                    ZPacking::default(),
                    "copy to device (matrix block)",
                )?;
                let (csr, wide) = dev.csr_from_staging(buffers, block.rows.len(), base)?;
                dev.spmv_device(&csr, table, z, &mut out, first)?;
                staging = Some(csr.into_staging(wide));
            }
            outs.push(out);
        }
        let [a, b, c]: [CudaSlice<u8>; 3] = outs.try_into().unwrap_or_else(|_| unreachable!());
        Ok([a, b, c])
    }

    /// The device copy of `cc` if it is resident (marked most recently
    /// used).
    pub(super) fn held_compiled(&self, cc: &CompiledCircuit) -> Option<Arc<DeviceCompiled>> {
        let key = CompiledKey::of(cc);
        let mut held = relock(&self.compiled);
        let i = held.iter().position(|d| d.key == key)?;
        let d = held.remove(i);
        held.push(d.clone());
        Some(d)
    }

    /// Uploads `cc` and keeps it resident: from a partition's admission,
    /// which holds the planning lock and has found room for
    /// `shape.upload_bytes()` beside its grant (the unused systems, least
    /// recently used first, give way if the room went meanwhile).
    pub(super) fn upload_compiled(
        &self,
        slot: &Slot,
        cc: &CompiledCircuit,
        shape: ResidentShape,
    ) -> Result<Arc<DeviceCompiled>> {
        let key = CompiledKey::of(cc);
        let mut held = relock(&self.compiled);
        if let Some(d) = held.iter().find(|d| d.key == key) {
            return Ok(d.clone());
        }
        let ResidentShape { bytes, scratch, .. } = shape;
        let mut reservation = loop {
            match self
                .budget
                .reserve_persistent(bytes + scratch, "compiled constraint system")
            {
                Ok(r) => break r,
                Err(e) => {
                    let Some(i) = held.iter().position(|d| Arc::strong_count(d) == 1) else {
                        return Err(e.into());
                    };
                    drop(held.remove(i));
                    self.ctx
                        .synchronize()
                        .map_err(|e| self.drv("synchronize (compiled system evicted)", e))?;
                }
            }
        };
        let dev = &slot.dev;
        let upload = |m: &cuzk_core::compiled::SparseMatrix| {
            dev.upload_csr(m.row_start(), m.cols(), m.coefs())
        };
        let mats = [upload(&cc.a)?, upload(&cc.b)?, upload(&cc.c)?];
        let aux = CompiledAux::upload(dev, cc)?;
        dev.synchronize()?;
        let used = mats.iter().map(|m| m.device_bytes() as u64).sum::<u64>() + aux.device_bytes();
        reservation.shrink_to(used.min(bytes), "compiled constraint system");
        let d = Arc::new(DeviceCompiled {
            key,
            mats,
            aux,
            reservation,
        });
        held.push(d.clone());
        Ok(d)
    }

    /// Drops the least recently used compiled system no partition is
    /// using (a partition waiting for memory needs the room more); true if
    /// one went.
    pub(super) fn drop_unused_compiled(&self) -> bool {
        let mut held = relock(&self.compiled);
        match held.iter().position(|d| Arc::strong_count(d) == 1) {
            Some(i) => {
                drop(held.remove(i));
                let _ = self.ctx.synchronize();
                true
            }
            None => false,
        }
    }

    /// `cc`'s resident shape and row-block plan, made once per system
    /// (the last [`MAX_SYSTEM_PLANS`] kept).
    fn system_plans(&self, cc: &CompiledCircuit) -> Arc<SystemPlans> {
        let key = CompiledKey::of(cc);
        if let Some(p) = relock(&self.system_plans).iter().find(|p| p.key == key) {
            return p.clone();
        }
        let streamed = StreamedCompiled::plan(cc, self.config.compiled_block_bytes as u64);
        let made = Arc::new(SystemPlans {
            shape: ResidentShape::of(cc, &streamed),
            streamed,
            key,
        });
        let mut held = relock(&self.system_plans);
        if let Some(p) = held.iter().find(|p| p.key == made.key) {
            return p.clone();
        }
        if held.len() >= MAX_SYSTEM_PLANS {
            held.remove(0);
        }
        held.push(made.clone());
        made
    }

    /// Where `cc`'s partitions under `params` go on this card and why,
    /// with z's packed staging buffer counted when `pack_staging`.
    fn fit_compiled(
        &self,
        params: &Parameters,
        cc: &CompiledCircuit,
        pack_staging: u64,
        dense: usize,
    ) -> (CompiledFit, Arc<SystemPlans>) {
        let sizes = PartitionSizes {
            domain: 1usize << log_domain_size(cc.num_constraints()),
            ..PartitionSizes::of_params(params)
        };
        let z_len = cc.num_inputs() + cc.num_aux();
        let capacity = self.budget.capacity();
        let params_bytes = sizes.params_bytes();
        let plans = self.system_plans(cc);
        let shape = self.config.keep_compiled_resident.then_some(plans.shape);
        let working_resident = H_PARTS.map(|k| {
            shape.map_or(0, |sh| {
                compiled_working_bytes(&sizes, z_len, sh.max_product, pack_staging, dense, k)
            })
        });
        let working_streamed = H_PARTS.map(|k| {
            let block = plans.streamed.block_bytes;
            compiled_working_bytes(&sizes, z_len, block, pack_staging, dense, k)
                + CompiledAux::bytes_for(cc)
        });
        let params_fit_cap = relock(&self.resident)
            .cap()
            .is_none_or(|cap| params_bytes <= cap);
        let (placement, i) = if !self.config.keep_params_resident
            || self.config.force_plan.is_some()
            || !params_fit_cap
        {
            (CompiledPlacement::Host, 0)
        } else {
            place_compiled(
                capacity,
                params_bytes,
                shape.map(|sh| sh.bytes),
                &working_resident,
                &working_streamed,
            )
        };
        let i = at_least_parts(i, sizes.h, self.h_parts_min.load(Ordering::Relaxed));
        let fit = CompiledFit {
            placement,
            capacity,
            params_bytes,
            system_bytes: shape.map_or(0, |sh| sh.bytes),
            working_resident,
            working_streamed,
            h_parts: H_PARTS[i],
        };
        (fit, plans)
    }

    /// Where `cc`'s partitions under `params` go on this card, and the
    /// sizes that decide it (benchmarks, operators' reports): for any
    /// witness, or for `witness` (its scalars other than 0 and 1 bound the
    /// MSMs' scratch). A system whose matrices, parameters and working set
    /// do not fit together streams its matrices for each partition rather
    /// than leaving a/b/c to the host; the first call counts the system's
    /// matrices once.
    pub fn compiled_fit(
        &self,
        params: &Parameters,
        cc: &CompiledCircuit,
        witness: Option<&Witness>,
    ) -> CompiledFit {
        let staging = if self.packs_witness() || self.uses_zero_one_form() {
            crate::upload::PACK_STAGING_BYTES as u64
        } else {
            0
        };
        let dense = witness.map_or(usize::MAX, |w| {
            let form = self
                .uses_zero_one_form()
                .then(|| checked_form(w.aux_zero_one.as_ref(), &w.aux))
                .flatten();
            dense_bound(w, form)
        });
        self.fit_compiled(params, cc, staging, dense).0
    }

    /// Bytes of the compiled systems resident on the device, if any
    /// (status, tests).
    pub fn compiled_resident_bytes(&self) -> Option<u64> {
        let held = relock(&self.compiled);
        (!held.is_empty()).then(|| held.iter().map(|d| d.bytes()).sum())
    }

    /// Whether compiled partitions send z packed by 0/1
    /// ([`GpuConfig::pack_witness`](crate::GpuConfig), which sets it at
    /// open): benchmarks compare the two on one warm backend. Partitions
    /// already started keep what they read.
    pub fn set_pack_witness(&self, on: bool) {
        self.pack_witness.store(on, Ordering::Relaxed);
    }

    /// Sets the device pool's release threshold
    /// ([`CudaDevice::set_pool_keep`]): benchmarks compare the default
    /// with keeping everything on one warm backend (`None`: the default).
    pub fn set_pool_keep(&self, bytes: Option<u64>) -> Result<()> {
        self.acquire_slot().dev.set_pool_keep(bytes)?;
        Ok(())
    }

    /// Runs compiled partitions' H MSMs of more than [`H_PARTS_MIN_ABOVE`]
    /// scalars in at least `parts` parts (of [`H_PARTS`]; 1 leaves the
    /// fewest that fit; [`DEFAULT_H_PARTS_MIN`] by default) from now on;
    /// returns the setting before. For measuring the parts against each
    /// other on one warm backend: more parts never need more memory.
    pub fn set_h_parts_min(&self, parts: usize) -> usize {
        self.h_parts_min.swap(parts.max(1), Ordering::Relaxed)
    }

    /// Times the steps of every worker's H step from now on (or stops):
    /// [`CudaDevice::set_h_profile`]; [`Self::take_h_profiles`] collects.
    pub fn set_h_profile(&self, on: bool) {
        for s in &self.slots {
            relock(s).dev.set_h_profile(on);
        }
    }

    /// When every worker's MSMs split their bucket reduction in two levels
    /// from now on: [`CudaDevice::set_msm_bucket_split`]; returns the
    /// setting before (the first worker's). For measuring the forms in one
    /// process.
    pub fn set_msm_bucket_split(&self, when: cuzk_cuda::BucketSplit) -> cuzk_cuda::BucketSplit {
        let mut before = None;
        for s in &self.slots {
            let slot = relock(s);
            before.get_or_insert(slot.dev.msm_bucket_split());
            slot.dev.set_msm_bucket_split(when);
        }
        before.unwrap_or(when)
    }

    /// Every H step profiled since the last take, on any worker: (name,
    /// ms) in order.
    pub fn take_h_profiles(&self) -> Vec<cuzk_cuda::HSteps> {
        self.slots
            .iter()
            .flat_map(|s| relock(s).dev.take_h_profile())
            .collect()
    }

    /// Whether a partition starting now sends z packed: packing writes
    /// into the pinned ring's buffers, so it needs pinned staging.
    fn packs_witness(&self) -> bool {
        self.config.pinned_staging && self.pack_witness.load(Ordering::Relaxed)
    }

    /// Whether compiled partitions send a witness's 0/1 form where the
    /// synthesis side made it ([`GpuConfig::zero_one_form`](crate::GpuConfig),
    /// which sets it at open): benchmarks compare it with the other ways
    /// on one warm backend.
    pub fn set_zero_one_form(&self, on: bool) {
        self.zero_one_form.store(on, Ordering::Relaxed);
    }

    /// Whether a partition starting now sends a witness's 0/1 form (and so
    /// whether the synthesis side should make it): it goes through the
    /// pinned ring's buffers, so it needs pinned staging.
    pub(crate) fn uses_zero_one_form(&self) -> bool {
        self.config.pinned_staging && self.zero_one_form.load(Ordering::Relaxed)
    }

    /// Whether a compiled partition writes its witness's 0/1 form into
    /// pinned memory before it waits for the device (on by default), so
    /// that its upload on the device's turn is the copy engine's alone;
    /// off, the form is written into the ring's buffers as it goes up, as
    /// before (benchmarks compare the two on one warm backend).
    pub fn set_stage_form(&self, on: bool) {
        self.stage_form.store(on, Ordering::Relaxed);
    }

    /// Copies each `srcs[k]` to `dsts[k]` on the slot's stream, through the
    /// pinned staging ring (pageable copies where the host refuses
    /// page-locked memory or pinned staging is off), and makes the
    /// device's stream wait, on the device, for every copy. The first
    /// `packing.parts` sources are Montgomery scalars that may go packed
    /// by 0/1 ([`ZPacking`]; upload.rs), through a device staging buffer of
    /// [`PACK_STAGING_BYTES`](crate::upload::PACK_STAGING_BYTES) the caller
    /// has reserved; a form given is made on the synthesis side and checked
    /// against its source by the caller. Returns whether the copies went
    /// through pinned memory and the bytes sent; `op` names them in errors.
    fn copy_up(
        &self,
        slot: &Slot,
        srcs: &[&[u8]],
        dsts: &[DeviceDst],
        packing: ZPacking<'_>,
        op: &'static str,
    ) -> Result<(bool, u64)> {
        let ZPacking {
            parts: pack_parts,
            forms,
            on_the_way,
        } = packing;
        use crate::upload::{
            upload_all, Ring, Unpack, PACK_STAGING_BYTES, RING_SLOTS, RING_SLOT_BYTES,
        };
        let ring = if self.config.pinned_staging {
            Ring::take(&self.pinned, RING_SLOTS, RING_SLOT_BYTES)
        } else {
            None
        };
        let pinned = ring.is_some();
        // Packed pieces are written into the ring's buffers: without it,
        // everything goes raw.
        let staging = if pinned && pack_parts > 0 {
            Some(
                slot.dev
                    .alloc_scalars(PACK_STAGING_BYTES / cuzk_cuda::host::FR_BYTES)?,
            )
        } else {
            None
        };
        let expand = |packed: u64, n: usize, dst: u64| {
            // SAFETY: upload.rs calls this on the upload thread, with the
            // context bound, right after enqueuing on `slot.stream` the
            // copy of a packed piece of `n` elements (pack_piece's layout,
            // its header naming only data it wrote) into the staging
            // buffer at `packed`, and with `dst` the piece's place in a
            // destination of the caller's (n * 32 bytes inside it, as
            // upload_all asserts); the staging buffer lives until the
            // stream has synchronised below, the destination until the
            // caller's synchronisation.
            unsafe { slot.dev.expand_z_on(&slot.stream, packed, n, dst) }
        };
        let unpack = staging.as_ref().map(|s| Unpack {
            parts: pack_parts,
            forms,
            on_the_way,
            staging: DeviceDst {
                ptr: slot.dev.scalars_address(s),
                len: PACK_STAGING_BYTES,
            },
            expand: &expand,
        });
        let (tx, rx) = std::sync::mpsc::channel();
        let cancel = std::sync::atomic::AtomicBool::new(false);
        let up = upload_all(
            &slot.stream,
            ring,
            srcs,
            dsts,
            unpack.as_ref(),
            &cancel,
            &tx,
        );
        drop(tx);
        let mut arrived = 0;
        let mut result = Ok(());
        for r in rx {
            match r {
                Ok((_, ev)) => {
                    if let Err(e) = slot.dev.wait_event(&ev) {
                        result = Err(e.into());
                        break;
                    }
                    arrived += 1;
                }
                Err(e) => {
                    result = Err(self.upload_err(op, e));
                    break;
                }
            }
        }
        if staging.is_some() {
            // The staging buffer is freed on the device's stream: the
            // expansions that read it must be done first, failed or not.
            let synced = slot
                .stream
                .synchronize()
                .map_err(|e| self.drv("synchronize (z's packed staging)", e));
            result = result.and(synced);
        }
        drop(staging);
        result?;
        if arrived != srcs.len() {
            return Err(GpuError::Driver {
                op,
                device: self.label.clone(),
                source: format!("{arrived} of {} parts arrived", srcs.len()).into(),
            });
        }
        Ok((pinned, up.sent))
    }

    /// z = (inputs, aux) into a new device buffer through the pinned
    /// staging ring (pageable copies where the host refuses page-locked
    /// memory or pinned staging is off): the aux part as its 0/1 form
    /// `aux_form` where given (checked against `aux` by the caller; made,
    /// or written into pinned memory ahead, which the caller then keeps
    /// until this returns), else
    /// packed by 0/1 on the way when `pack` (either way the caller has
    /// reserved the staging buffer), on the slot's own stream,
    /// and with it, when `with` is given (a system whose matrices are
    /// streamed), that system's table and densities (raw); the device's
    /// stream waits for the last copy. Returns z, the table and densities
    /// if asked, and what the upload did.
    fn upload_witness(
        &self,
        slot: &Slot,
        inputs: &[Scalar],
        aux: &[Scalar],
        aux_form: Option<Form<'_>>,
        with: Option<&CompiledCircuit>,
        pack: bool,
    ) -> Result<(DeviceScalars, Option<CompiledAux>, UploadStats)> {
        // alloc_scalars waits for the device's stream; the wait for what
        // was already on it is timed apart from the allocation (inside a
        // partition the allocation took 6.7-10.3 ms at 2^27 while each
        // admission trimmed the pool, 0.0 ms since it does not:
        // 2026-12-04 calls 44 and 48).
        let clock = Instant::now();
        slot.dev.synchronize()?;
        let wait_ms = clock.elapsed().as_secs_f64() * 1e3;
        let clock = Instant::now();
        let z = slot.dev.alloc_scalars(inputs.len() + aux.len())?;
        let alloc_ms = clock.elapsed().as_secs_f64() * 1e3;
        let base = slot.dev.scalars_address(&z);
        let inputs = scalars_as_bytes(inputs);
        let aux = scalars_as_bytes(aux);
        let mut srcs = vec![inputs, aux];
        let mut dsts = vec![
            DeviceDst {
                ptr: base,
                len: inputs.len(),
            },
            DeviceDst {
                ptr: base + inputs.len() as u64,
                len: aux.len(),
            },
        ];
        let system = match with {
            Some(cc) => {
                let (system, copies) = CompiledAux::alloc(&slot.dev, cc)?;
                for (src, dst) in copies {
                    srcs.push(src);
                    dsts.push(dst);
                }
                Some(system)
            }
            None => None,
        };
        let op = if system.is_some() {
            "copy to device (z, the system's table and densities)"
        } else {
            "copy to device (z)"
        };
        let clock = Instant::now();
        // z's two parts (inputs, aux) may go packed.
        let forms = [None, aux_form];
        let packing = ZPacking {
            parts: if pack || aux_form.is_some() { 2 } else { 0 },
            forms: &forms,
            on_the_way: pack,
        };
        let copied = self.copy_up(slot, &srcs, &dsts, packing, op);
        // Until the copies are done the ring's buffers are busy and z is
        // incomplete: the partition's first kernels wait on the device. A
        // failed upload may have left copies in flight into z, which its
        // drop frees on another stream: they end first.
        let synced = slot
            .stream
            .synchronize()
            .map_err(|e| self.drv("synchronize (z)", e));
        let (pinned, sent) = copied?;
        synced?;
        let stats = UploadStats {
            pinned,
            bytes: srcs.iter().map(|s| s.len() as u64).sum(),
            sent,
            copy_ms: clock.elapsed().as_secs_f64() * 1e3,
            wait_ms,
            alloc_ms,
        };
        Ok((z, system, stats))
    }

    /// z = (inputs, aux) up as a compiled partition sends it (the aux part
    /// as `aux_form` where given and it matches `aux`, written into pinned
    /// memory first when `stage`, else packed by 0/1 on the way where that
    /// pays when `pack`, else raw), and back: z as the device holds it,
    /// and the bytes sent. For the GPU checks, which compare it with what
    /// went up; its device memory is not counted in the VRAM budget (a
    /// check holds nothing else).
    pub fn witness_round_trip(
        &self,
        inputs: &[Scalar],
        aux: &[Scalar],
        aux_form: Option<&ZeroOneForm>,
        pack: bool,
        stage: bool,
    ) -> Result<(Vec<Scalar>, u64)> {
        let slot = self.acquire_slot();
        let pinned = self.config.pinned_staging;
        let pack = pack && pinned;
        let form = pinned.then(|| checked_form(aux_form, aux)).flatten();
        let staged = form
            .filter(|_| stage)
            .and_then(|f| StagedForm::write(&self.pinned, f, crate::upload::PACK_STAGING_BYTES));
        let form = staged.as_ref().map(Form::Staged).or(form.map(Form::Made));
        let (z, _, stats) = self.upload_witness(&slot, inputs, aux, form, None, pack)?;
        slot.dev.synchronize()?;
        Ok((slot.dev.download_scalars(&z)?, stats.sent))
    }

    /// One witness on the device path, or None (nothing done) when the
    /// path does not fit: the caller assigns it on the host instead.
    pub(super) fn prove_witness(
        &self,
        params: &Parameters,
        cc: &CompiledCircuit,
        w: &Witness,
        index: usize,
    ) -> Result<Option<(MsmResults, PartitionReport)>> {
        let start = Instant::now();
        let mut t = PhaseTimings::default();
        let log = log_domain_size(cc.num_constraints());
        let sizes = PartitionSizes {
            domain: 1usize << log,
            ..PartitionSizes::of_params(params)
        };
        let z_len = cc.num_inputs() + cc.num_aux();
        if !self.config.keep_params_resident || self.config.force_plan.is_some() {
            return Ok(None);
        }
        // z packed by 0/1 on the way, and the 0/1 form made on the
        // synthesis side (the settings read once: they may change
        // meanwhile).
        let pack = self.packs_witness();
        let form = self
            .uses_zero_one_form()
            .then(|| checked_form(w.aux_zero_one.as_ref(), &w.aux))
            .flatten();
        let pack_staging = if pack || form.is_some() {
            crate::upload::PACK_STAGING_BYTES as u64
        } else {
            0
        };
        // By the sizes alone first; where that leaves the card short, by
        // this witness's scalars other than 0 and 1 (the queries' and L's
        // MSMs run over those alone).
        let (mut fit, plans) = self.fit_compiled(params, cc, pack_staging, usize::MAX);
        let mut dense = usize::MAX;
        if fit.placement != CompiledPlacement::Resident {
            dense = dense_bound(w, form);
            fit = self.fit_compiled(params, cc, pack_staging, dense).0;
        }
        if fit.placement == CompiledPlacement::Host {
            return Ok(None);
        }
        let slot = self.acquire_slot();
        t.at(
            SpanOn::Caller {
                stream: Some(slot.index),
            },
            index,
        );
        // A system that fits beside its parameters stays resident; one that
        // does not (an 80 GB card at 2^27) is never made resident: its
        // matrices go up for each partition instead. A resident system not
        // up yet goes up in this partition's admission, in its turn.
        let resident = fit.placement == CompiledPlacement::Resident;
        let held_system = if resident {
            self.held_compiled(cc)
        } else {
            None
        };
        // The fit's parts: the resident working set's, or where it streams
        // the streamed one's.
        let h_parts = fit.h_parts;
        // The partition's working set and what it holds besides.
        let (working, held) = if resident {
            let (max_product, bytes) = held_system
                .as_ref()
                .map_or((plans.shape.max_product, plans.shape.bytes), |dc| {
                    (dc.max_product_bytes(), dc.bytes())
                });
            (
                compiled_working_bytes(&sizes, z_len, max_product, pack_staging, dense, h_parts),
                bytes,
            )
        } else {
            (
                compiled_working_bytes(
                    &sizes,
                    z_len,
                    plans.streamed.block_bytes,
                    pack_staging,
                    dense,
                    h_parts,
                ) + CompiledAux::bytes_for(cc),
                0,
            )
        };
        let params_fit_cap = relock(&self.resident)
            .cap()
            .is_none_or(|cap| sizes.params_bytes() <= cap);
        if !params_fit_cap || working + sizes.params_bytes() + held > self.budget.capacity() {
            return Ok(None);
        }
        // The 0/1 form written into pinned memory now, before the wait for
        // the device: the upload in the partition's turn is then the copy
        // engine's alone. Written into the ring as it went up, a busy host
        // (the next witness's synthesis or copy on every core) stretched
        // that upload from 22 to ~230 ms at 2^27, with the device idle and
        // the other worker's partition waiting for it (H100, 2026-12-07
        // call 100). The buffer stays until the partition ends (declared
        // before the admission, it goes back after it).
        let clock = Instant::now();
        let staged = form
            .filter(|_| self.stage_form.load(Ordering::Relaxed))
            .and_then(|f| StagedForm::write(&self.pinned, f, crate::upload::PACK_STAGING_BYTES));
        let form = staged.as_ref().map(Form::Staged).or(form.map(Form::Made));
        let stage_ms = staged
            .as_ref()
            .map_or(0.0, |_| clock.elapsed().as_secs_f64() * 1e3);
        let _in_flight = self.budget.enter_partition();
        let need = CompiledNeed {
            working,
            system: (resident && held_system.is_none()).then_some((cc, plans.shape)),
        };
        let admitted = self.admit(&slot, params, &sizes, index, Some(need), &mut t)?;
        let mats = if resident {
            Matrices::Resident(
                held_system
                    .or_else(|| admitted.compiled.clone())
                    .expect("a resident placement's admission returns its system"),
            )
        } else {
            Matrices::Streamed(plans)
        };
        let bases = admitted
            .bases
            .as_deref()
            .expect("a compiled admission keeps the parameters resident");
        let grant = admitted.grant.budget();
        let _ = self.pool_high_and_reset()?;
        let dev = &slot.dev;
        let _tables = ReleaseTables(dev);

        // z, once.
        let _z_held = grant.reserve(z_len as u64 * plan::FR, "z (the witness)")?;
        let clock = Instant::now();
        // A streamed system's table and densities go up with z, for this
        // partition.
        let streamed = matches!(mats, Matrices::Streamed(_));
        let _streamed_held = streamed
            .then(|| {
                grant.reserve(
                    CompiledAux::bytes_for(cc),
                    "compiled system's table and densities (matrices streamed)",
                )
            })
            .transpose()?;
        let staging_held = (pack_staging > 0)
            .then(|| grant.reserve(pack_staging, "z's packed staging buffer (upload)"))
            .transpose()?;
        let (z, streamed_aux, upload) =
            self.upload_witness(&slot, &w.inputs, &w.aux, form, streamed.then_some(cc), pack)?;
        drop(staging_held);
        let pinned = upload.pinned;
        let aux = match &mats {
            Matrices::Resident(dc) => &dc.aux,
            Matrices::Streamed(_) => streamed_aux
                .as_ref()
                .expect("upload_witness returns the table and densities it was given"),
        };
        t.end(Phase::Upload, clock);

        // a/b/c into the H step.
        let n = sizes.domain;
        let mut h_held = grant.reserve(
            h_step_bytes(
                n,
                match &mats {
                    Matrices::Resident(dc) => dc.max_product_bytes(),
                    Matrices::Streamed(sp) => sp.streamed.block_bytes,
                },
            ),
            "a, b, c (compiled) and the NTT tables",
        )?;
        let clock = Instant::now();
        let [mut a, mut b, mut c] = match &mats {
            Matrices::Resident(dc) => {
                let [ma, mb, mc] = &dc.mats;
                dev.abc_device([ma, mb, mc], &aux.table, &z, n)?
            }
            Matrices::Streamed(sp) => {
                self.abc_streamed(&slot, cc, &sp.streamed, &aux.table, &z, n)?
            }
        };
        dev.synchronize()?;
        t.end(Phase::Abc, clock);
        let clock = Instant::now();
        dev.h_device(&mut a, &mut b, &mut c, log)?;
        drop((b, c));
        dev.synchronize()?;
        dev.release_ntt_tables();
        t.end(Phase::HNtt, clock);
        h_held.shrink_to(n as u64 * plan::FR, "H coefficients (for the H MSM)");

        let clock = Instant::now();
        let h = {
            let m = sizes.h.min(n);
            let _scratch = grant.reserve(
                h_part_scratch(m, h_parts),
                "H MSM scratch (scalars on the device)",
            )?;
            if m == 0 {
                G1Projective::identity()
            } else if h_parts <= 1 {
                dev.msm_g1_scalars_on_device(&bases.h, &a, 0, m)?
            } else {
                // In parts, each within the part's scratch above.
                let part = m.div_ceil(h_parts);
                let mut acc = G1Projective::identity();
                for first in (0..m).step_by(part) {
                    acc += dev.msm_g1_range_on_device(&bases.h, &a, first, part.min(m - first))?;
                }
                acc
            }
        };
        drop(a);
        drop(h_held);
        t.end(Phase::MsmH, clock);

        // L over the aux part of z, in place.
        let clock = Instant::now();
        let l = {
            let m = cc.num_aux();
            let _step =
                grant.reserve(split_step_bytes(m, dense, false), "L split and MSM scratch")?;
            if m == 0 {
                G1Projective::identity()
            } else {
                let sp = dev.split_zero_one_range(&z, cc.num_inputs(), m)?;
                dev.msm_g1_split_device(&bases.l, &sp)?
            }
        };
        t.end(Phase::MsmL, clock);

        // The A query: every input, the A-dense aux.
        let clock = Instant::now();
        let a_g1 = {
            let m = sizes.a;
            let _step = grant.reserve(
                CudaDevice::select_bytes(z_len, m) as u64 + split_step_bytes(m, dense, false),
                "A query selection, split and MSM scratch",
            )?;
            let q = dev.select_device(&z, cc.num_inputs(), None, Some(&aux.a_aux))?;
            let sp = dev.split_zero_one_device(&q)?;
            drop(q);
            dev.msm_g1_split_device(&bases.a, &sp)?
        };
        t.end(Phase::MsmA, clock);

        // The B query, for G1 and G2 from one split.
        let clock = Instant::now();
        let m = sizes.b;
        let _step = grant.reserve(
            CudaDevice::select_bytes(z_len, m) as u64 + split_step_bytes(m, dense, true),
            "B query selection, split and MSM scratch",
        )?;
        let q = dev.select_device(&z, cc.num_inputs(), Some(&aux.b_input), Some(&aux.b_aux))?;
        let sp = dev.split_zero_one_device(&q)?;
        drop(q);
        drop(z);
        let b_g1 = dev.msm_g1_split_device(&bases.b_g1, &sp)?;
        t.end(Phase::MsmBG1, clock);
        let clock = Instant::now();
        let b_g2 = dev.msm_g2_split_device(&bases.b_g2, &sp)?;
        drop(sp);
        dev.synchronize()?;
        t.end(Phase::MsmBG2, clock);

        let pool_high = self.pool_high_and_reset()?;
        t.total = start.elapsed();
        let report = PartitionReport {
            index,
            plan: admitted.plan,
            timings: t,
            peak_reserved: bases.reservation.bytes() + held + grant.peak(),
            pool_high,
            host_prep_ms: stage_ms,
            pinned,
            prep_wait_ms: 0.0,
            abc_on_device: true,
            abc_row_blocks: match &mats {
                Matrices::Resident(_) => 0,
                Matrices::Streamed(sp) => sp.streamed.count(),
            },
            h_msm_parts: h_parts,
            upload_bytes: upload.bytes,
            upload_copy_ms: upload.copy_ms,
            upload_wait_ms: upload.wait_ms,
            upload_alloc_ms: upload.alloc_ms,
            upload_sent_bytes: upload.sent,
        };
        Ok(Some((
            MsmResults {
                a_g1,
                b_g1,
                b_g2,
                l,
                h,
            },
            report,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Resident where everything fits together; streamed where the system
    /// is what does not fit (the 2^27 porep-like partition on an 80 GB
    /// card: parameters 48 GB, system 13 GB, working set ~24 GB against
    /// ~84 GB); the host where even the streamed working set does not fit
    /// beside the parameters, or the system may not stay resident.
    #[test]
    fn placement_streams_a_system_that_does_not_fit_beside_its_parameters() {
        use CompiledPlacement::*;
        const GB: u64 = 1_000_000_000;
        let (params, system, working, streamed) = (48 * GB, 13 * GB, 24 * GB, 21 * GB);
        // The H MSM in parts takes 3 and then 1 GB off each working set.
        let res = [working, working - 3 * GB, working - 4 * GB];
        let st = [streamed, streamed - 3 * GB, streamed - 4 * GB];
        let place = |cap| place_compiled(cap, params, Some(system), &res, &st);
        assert_eq!(place(141 * GB), (Resident, 0));
        assert_eq!(place(params + system + working), (Resident, 0));
        assert_eq!(place(params + system + working - 1), (Resident, 1));
        assert_eq!(place(params + system + res[2]), (Resident, 2));
        assert_eq!(place(params + system + res[2] - 1), (Streamed, 0));
        assert_eq!(place(params + streamed), (Streamed, 0));
        assert_eq!(place(params + streamed - 1), (Streamed, 1));
        assert_eq!(place(params + st[2]), (Streamed, 2));
        assert_eq!(place(params + st[2] - 1), (Host, 0));
        assert_eq!(place(24 * GB), (Host, 0));
        // Not kept resident (the configuration): streamed where it fits.
        assert_eq!(
            place_compiled(141 * GB, params, None, &res, &st),
            (Streamed, 0)
        );
        assert_eq!(place_compiled(60 * GB, params, None, &res, &st), (Host, 0));
    }

    /// The working set covers z beside its largest step, and grows with
    /// each size that enters it.
    #[test]
    fn compiled_working_set_counts_z_and_the_largest_step() {
        let s = PartitionSizes {
            domain: 1 << 20,
            a: 900_000,
            b: 700_000,
            l: 999_000,
            h: (1 << 20) - 1,
        };
        let z = 1_000_000;
        let base = compiled_working_bytes(&s, z, 0, 0, usize::MAX, 1);
        // a/b/c alone are three domains of scalars.
        assert!(base >= z as u64 * plan::FR + 3 * (1 << 20) * plan::FR);
        assert!(compiled_working_bytes(&s, z + 1000, 0, 0, usize::MAX, 1) > base);
        assert!(compiled_working_bytes(&s, z, 1 << 30, 0, usize::MAX, 1) > base);
        let mut big_b = s;
        big_b.b = 4_000_000;
        assert!(compiled_working_bytes(&big_b, z, 0, 0, usize::MAX, 1) > base);
        // A dense bound no smaller than any query changes nothing.
        assert_eq!(compiled_working_bytes(&s, z, 0, 0, z, 1), base);
    }

    /// The porep-like 2^27 partition's sizes and its z's length.
    fn porep_like_2_27() -> (PartitionSizes, usize) {
        let n = 1usize << 27;
        let s = PartitionSizes {
            domain: n,
            a: n - 3_000_000,
            b: 33_550_118,
            l: n - 3_000_000,
            h: n - 1,
        };
        (s, n - 2_000_000)
    }

    /// The porep-like 2^27 partition (14% of z neither 0 nor 1): bounded by
    /// its dense scalars the queries' and L's steps fall below the H MSM's
    /// (2^27 dense coefficients), which bounds the working set from below.
    #[test]
    fn dense_bound_shrinks_the_split_steps_to_the_h_msm() {
        let (s, z) = porep_like_2_27();
        let n = s.domain;
        let any = compiled_working_bytes(&s, z, 0, 0, usize::MAX, 1);
        let porep = compiled_working_bytes(&s, z, 0, 0, z / 7, 1);
        let h_msm = z as u64 * plan::FR
            + n as u64 * plan::FR
            + plan::msm_scratch(s.h, false).saturating_sub(s.h as u64 * plan::FR);
        assert!(porep < any, "{porep} against {any}");
        assert!(porep >= h_msm);
        // Nothing dense: the 0/1 sums' scratch and the splits remain.
        assert!(compiled_working_bytes(&s, z, 0, 0, 0, 1) <= porep);
        // The H MSM in parts: less, down to the a/b/c step's floor.
        let halves = compiled_working_bytes(&s, z, 0, 0, z / 7, 2);
        assert!(halves < porep, "{halves} against {porep}");
        assert!(compiled_working_bytes(&s, z, 0, 0, z / 7, 4) <= halves);
        assert!(
            split_step_bytes(s.l, 0, false) >= cuzk_cuda::host::zero_one_scratch_bytes(s.l, false)
        );
    }

    /// The porep-like 2^27 partition on an 80 GB H100 (call 72's figures:
    /// capacity 83.72 GB, parameters 48.32, system 11.71) fits with its H
    /// MSM in one part: the shared-memory sort writes its list over its
    /// keys, so the MSM's peak is its accumulation (sorted list and chunk
    /// sums) and the one-part working set (24.48 GB with the list beside
    /// the keys, 0.77 GB over) fits. (The default then takes two parts all
    /// the same: [`DEFAULT_H_PARTS_MIN`].)
    #[test]
    fn porep_like_2_27_fits_an_h100_with_the_h_msm_in_one_part() {
        const GB: u64 = 1_000_000_000;
        let (s, z) = porep_like_2_27();
        let work = |parts| compiled_working_bytes(&s, z, 0, 0, z / 7, parts);
        let working = [work(1), work(2), work(4)];
        let (capacity, params, system) = (83_720_000_000, 48_320_000_000, 11_710_000_000);
        if cuzk_cuda::host::msm_shared_sort_from_env() {
            assert!(working[0] < 23 * GB, "{working:?}");
            let placed = place_compiled(capacity, params, Some(system), &working, &working);
            assert_eq!(placed, (CompiledPlacement::Resident, 0), "{working:?}");
        }
    }

    /// Large H MSMs take at least the parts asked for, never fewer than
    /// fit; small ones the fewest that fit.
    #[test]
    fn h_parts_at_least_the_minimum_for_a_large_h() {
        let big = H_PARTS_MIN_ABOVE + 1;
        assert_eq!(H_PARTS[at_least_parts(0, big, DEFAULT_H_PARTS_MIN)], 2);
        assert_eq!(at_least_parts(0, big, 1), 0);
        assert_eq!(at_least_parts(2, big, 2), 2);
        assert_eq!(H_PARTS[at_least_parts(0, big, 4)], 4);
        assert_eq!(at_least_parts(0, big, 9), H_PARTS.len() - 1);
        assert_eq!(at_least_parts(0, H_PARTS_MIN_ABOVE, 2), 0);
        assert_eq!(at_least_parts(1, 1000, 4), 1);
    }

    /// A matrix of `rows` rows with lengths and coefficients from a seed:
    /// mostly short rows, some long ones, empty ones, table coefficients.
    fn matrix(rows: usize, seed: u64) -> (Vec<u64>, Vec<u32>) {
        let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        let mut next = move || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) as usize
        };
        let mut starts = vec![0u64];
        let mut coefs = Vec::new();
        for _ in 0..rows {
            let len = match next() % 50 {
                0 => 0,
                1 => SPMV_LONG + 1 + next() % 100,
                _ => next() % 6,
            };
            coefs.extend((0..len).map(|_| (next() % 5) as u32));
            starts.push(coefs.len() as u64);
        }
        (starts, coefs)
    }

    /// Row blocks cover every row once, in order, each within the bound
    /// unless it is one row, with the entries and products of their rows.
    #[test]
    fn row_blocks_cover_the_rows_within_the_bound() {
        for (rows, seed) in [(0usize, 1u64), (1, 2), (7, 3), (1000, 4), (5000, 5)] {
            let (starts, coefs) = matrix(rows, seed);
            let whole = RowBlock {
                rows: 0..rows,
                nnz: coefs.len(),
                products: product_count(&starts, &coefs),
            };
            for max in [1u64, 200, 5_000, 100_000, whole.device_bytes(), u64::MAX] {
                let blocks = row_blocks(&starts, &coefs, max);
                let mut next = 0;
                for b in &blocks {
                    assert_eq!(b.rows.start, next, "rows {rows}, max {max}: a gap");
                    assert!(!b.rows.is_empty());
                    next = b.rows.end;
                    assert!(
                        b.device_bytes() <= max || b.rows.len() == 1,
                        "rows {rows}, max {max}: block {:?} holds {}",
                        b.rows,
                        b.device_bytes()
                    );
                    let s = &starts[b.rows.start..=b.rows.end];
                    let local: Vec<u64> = s.iter().map(|&r| r - s[0]).collect();
                    let (lo, hi) = (s[0] as usize, s[s.len() - 1] as usize);
                    assert_eq!(b.nnz, hi - lo);
                    assert_eq!(b.products, product_count(&local, &coefs[lo..hi]));
                }
                assert_eq!(next, rows, "rows {rows}, max {max}: not every row");
                if max >= whole.device_bytes() && rows > 0 {
                    assert_eq!(blocks, vec![whole.clone()], "rows {rows}: one block fits");
                }
                if max == 1 {
                    assert_eq!(blocks.len(), rows, "a bound below any row: one row each");
                }
            }
        }
    }

    /// Short rows' table entries are counted, long rows' and ±1's not.
    #[test]
    fn product_count_matches_the_kernels_rule() {
        // Row 0: 3 entries, two table coefficients; row 1: empty; row 2:
        // SPMV_LONG + 1 entries all table coefficients (a long row).
        let long = SPMV_LONG + 1;
        let mut coefs = vec![0, 5, 7];
        coefs.extend(std::iter::repeat_n(9, long));
        let row_start = vec![0, 3, 3, 3 + long as u64];
        assert_eq!(product_count(&row_start, &coefs), 2);
    }
}
