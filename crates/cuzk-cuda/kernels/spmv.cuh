// The compiled constraint system on the GPU: a/b/c = A·z, B·z, C·z by a
// sparse matrix-vector product, the density selection of the A/B query
// scalars, and the 0/1 split of MSM scalars.
//
// Matrices are CSR over `rows` rows: row_start (u32 on the device, rows +
// 1 entries, row_start[0] = 0: a matrix on the device has fewer than 2^32
// entries, and its host form's u64 starts are narrowed by csr_narrow),
// cols (u32 index into z) and coef (u32 index into a coefficient table
// of Fr, table[0] = 1 and table[1] = -1). Row r's value is
// sum over k in row_start[r]..row_start[r+1] of table[coef[k]] * z[cols[k]];
// coefficient 0 is a plain addition and 1 a subtraction, with no product.
// The host (src/spmv.rs) checks once, when a matrix is made resident, that
// row_start is non-decreasing and every col and coef index is in bounds of
// the z and table the product is asked for, so the kernels read only inside
// their buffers.
//
// Rows are mostly short (1 to 20 entries): spmv_short gives a row to a
// thread and only adds and subtracts; the short rows' table products are
// made first by spmv_products, one per thread, from a list of them built
// once per matrix (csr_prod_*). Rows longer than SPMV_LONG would hold a
// whole warp back (and a row of 10^6 entries one thread for ~0.1 s), so
// spmv_short skips them and spmv_long sums each, products included, with a
// block of 256 threads; the list of long rows is made on the GPU once per
// matrix (csr_long_*).
//
// Stream compaction (density selection, the split's "other" scalars, the
// long rows) is two passes over tiles of 1024 elements, one block per tile:
// *_count writes each tile's count, the host scans the counts with the
// scan_block / scan_add kernels of cuzk.cu, and *_write recomputes each
// element's flag and places it at its tile's offset plus its rank in the
// tile (warp ballots, then a scan of the 32 warp counts). Output order is
// input order.
#pragma once
#include "field.cuh"

#define SPMV_LONG 32
#define SPMV_LONG_BLOCK 256
#define COMPACT_TILE 1024

// acc + table[co] * z[col], with the ±1 fast paths.
DEV Fr spmv_term(const Fr& acc, const Fr* __restrict__ z, const Fr* __restrict__ table,
                 uint32_t col, uint32_t co) {
    Fr v = ldg_fr(z + col);
    if (co == 0) return acc + v;
    if (co == 1) return acc - v;
    return acc + ldg_fr(table + co) * v;
}

// The table products of the short rows, one per thread, all lanes busy:
// prod[j] = table[pcoef[j]] * z[pcol[j]]. In spmv_short a product inside
// its row's loop would stall the warp: with ~10% of entries products, almost
// every step of a warp's loop has a lane that needs one, so the warp pays a
// product per entry of its longest row (~7x the products it needs).
extern "C" __global__ void __launch_bounds__(256)
    spmv_products(const uint32_t* __restrict__ pcol, const uint32_t* __restrict__ pcoef,
                  uint32_t count, const Fr* __restrict__ table, const Fr* __restrict__ z,
                  Fr* __restrict__ prod) {
    uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= count) return;
    st_fr(prod + j, ldg_fr(table + __ldg(pcoef + j)) * ldg_fr(z + __ldg(pcol + j)));
}

// out[r] for every row of at most SPMV_LONG entries, one thread per row:
// the ±1 entries added or subtracted here, the others' products (made by
// spmv_products, prow_start[r]..prow_start[r+1] of prod) added.
extern "C" __global__ void __launch_bounds__(256)
    spmv_short(const uint32_t* __restrict__ row_start, const uint32_t* __restrict__ cols,
               const uint32_t* __restrict__ coef, const uint32_t* __restrict__ prow_start,
               const Fr* __restrict__ prod, const Fr* __restrict__ z, Fr* __restrict__ out,
               uint32_t rows) {
    uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    uint32_t s = row_start[r], e = row_start[r + 1];
    if (e - s > SPMV_LONG) return;  // spmv_long's row
    Fr acc = Fr::zero();
    for (uint32_t k = s; k < e; k++) {
        uint32_t co = __ldg(coef + k);
        if (co >= 2) continue;  // in prod
        Fr v = ldg_fr(z + __ldg(cols + k));
        acc = co ? acc - v : acc + v;
    }
    for (uint32_t j = prow_start[r], pe = prow_start[r + 1]; j < pe; j++) acc = acc + ldg_fr(prod + j);
    st_fr(out + r, acc);
}

// The short rows' product entries, gathered once per matrix: pcount[r] =
// entries of row r with a table coefficient (0 for long rows, whose block
// does its own products); after a scan of pcount into prow_start,
// csr_prod_write copies each row's (col, coef) pairs to its range.
extern "C" __global__ void csr_prod_count(const uint32_t* __restrict__ row_start, uint32_t rows,
                                          const uint32_t* __restrict__ coef, uint32_t* pcount) {
    uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    uint32_t s = row_start[r], e = row_start[r + 1];
    uint32_t c = 0;
    if (e - s <= SPMV_LONG)
        for (uint32_t k = s; k < e; k++) c += coef[k] >= 2;
    pcount[r] = c;
}
extern "C" __global__ void csr_prod_write(const uint32_t* __restrict__ row_start, uint32_t rows,
                                          const uint32_t* __restrict__ cols,
                                          const uint32_t* __restrict__ coef,
                                          const uint32_t* __restrict__ prow_start,
                                          uint32_t* __restrict__ pcol, uint32_t* __restrict__ pcoef) {
    uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    uint32_t s = row_start[r], e = row_start[r + 1];
    if (e - s > SPMV_LONG) return;
    uint32_t j = prow_start[r];
    for (uint32_t k = s; k < e; k++) {
        uint32_t co = coef[k];
        if (co >= 2) {
            pcol[j] = cols[k];
            pcoef[j] = co;
            j++;
        }
    }
}

// out[long_rows[b]] for block b: the block's threads stride over the row and
// their partial sums are added by warp shuffles, then across the 8 warps.
extern "C" __global__ void __launch_bounds__(SPMV_LONG_BLOCK)
    spmv_long(const uint32_t* __restrict__ row_start, const uint32_t* __restrict__ cols,
              const uint32_t* __restrict__ coef, const Fr* __restrict__ table,
              const Fr* __restrict__ z, Fr* __restrict__ out,
              const uint32_t* __restrict__ long_rows, uint32_t count) {
    __shared__ Fr part[SPMV_LONG_BLOCK / 32];
    if (blockIdx.x >= count) return;  // whole block: no barrier is skipped by part of it
    uint32_t r = long_rows[blockIdx.x];
    uint32_t s = row_start[r], e = row_start[r + 1];
    Fr acc = Fr::zero();
    // k stays below e + SPMV_LONG_BLOCK < 2^32 (e < 2^32 - 2048).
    for (uint32_t k = s + threadIdx.x; k < e; k += SPMV_LONG_BLOCK)
        acc = spmv_term(acc, z, table, __ldg(cols + k), __ldg(coef + k));
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        Fr other;
#pragma unroll
        for (int i = 0; i < 8; i++) other.v[i] = __shfl_down_sync(0xffffffffu, acc.v[i], o);
        acc = acc + other;
    }
    uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) part[warp] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        Fr sum = part[0];
#pragma unroll
        for (int w = 1; w < SPMV_LONG_BLOCK / 32; w++) sum = sum + part[w];
        st_fr(out + r, sum);
    }
}

// ------------------------------------------------- matrix row blocks
// out[i] = wide[i] - base for i < n, as u32: a matrix's row starts as the
// host holds them (u64; a row block's as they are in the whole matrix,
// its first being base) made the device's (u32, from 0). A value out of
// u32's range (or below base) saturates to 2^32 - 1: the row after it then
// ends before it starts (the last start is the entries' count, below
// 2^32 - 1), which csr_check counts as bad.
extern "C" __global__ void csr_narrow(const uint64_t* __restrict__ wide, uint32_t* __restrict__ out,
                                      uint32_t n, uint64_t base) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint64_t v = wide[i];
    out[i] = (v < base || v - base > 0xffffffffull) ? 0xffffffffu : (uint32_t)(v - base);
}

// ------------------------------------------------------- matrix checks
// stats[0] = max col + 1, stats[1] = max coef + 1 (0 when there are no
// entries), stats[2] = number of rows whose end is before their start.
// stats starts zeroed; grid-stride over max(rows, nnz).
extern "C" __global__ void csr_check(const uint32_t* __restrict__ row_start, uint32_t rows,
                                     const uint32_t* __restrict__ cols,
                                     const uint32_t* __restrict__ coef, uint64_t nnz,
                                     uint32_t* stats) {
    uint32_t max_col = 0, max_coef = 0, bad = 0;
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t k = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; k < nnz; k += stride) {
        uint32_t c = cols[k], co = coef[k];
        // c + 1 wraps for index 2^32 - 1, which no z or table reaches:
        // counted as bad instead.
        max_col = max(max_col, c + 1);
        max_coef = max(max_coef, co + 1);
        bad += (c == 0xffffffffu) + (co == 0xffffffffu);
    }
    for (uint64_t r = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; r < rows; r += stride)
        bad += row_start[r + 1] < row_start[r];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        max_col = max(max_col, __shfl_down_sync(0xffffffffu, max_col, o));
        max_coef = max(max_coef, __shfl_down_sync(0xffffffffu, max_coef, o));
        bad += __shfl_down_sync(0xffffffffu, bad, o);
    }
    if ((threadIdx.x & 31) == 0) {
        if (max_col) atomicMax(stats + 0, max_col);
        if (max_coef) atomicMax(stats + 1, max_coef);
        if (bad) atomicAdd(stats + 2, bad);
    }
}

// ------------------------------------------------- block compaction
// Rank of this thread's flag among the set flags of its block (blockDim =
// COMPACT_TILE); every thread of the block must call it.
DEV uint32_t block_rank(bool flag) {
    __shared__ uint32_t warp_off[32];
    uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    uint32_t ballot = __ballot_sync(0xffffffffu, flag);
    uint32_t rank = __popc(ballot & ((1u << lane) - 1));
    if (lane == 0) warp_off[warp] = __popc(ballot);
    __syncthreads();
    if (warp == 0) {
        uint32_t c = warp_off[lane];  // COMPACT_TILE / 32 = 32 warps
        uint32_t s = c;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            uint32_t y = __shfl_up_sync(0xffffffffu, s, o);
            if (lane >= o) s += y;
        }
        warp_off[lane] = s - c;  // exclusive
    }
    __syncthreads();
    return warp_off[warp] + rank;
}

// Rows longer than SPMV_LONG.
DEV bool csr_is_long(const uint32_t* row_start, uint32_t rows, uint32_t r) {
    return r < rows && row_start[r + 1] - row_start[r] > SPMV_LONG;
}
extern "C" __global__ void __launch_bounds__(COMPACT_TILE)
    csr_long_count(const uint32_t* __restrict__ row_start, uint32_t rows, uint32_t* tile_counts) {
    uint32_t r = blockIdx.x * COMPACT_TILE + threadIdx.x;
    uint32_t c = __syncthreads_count(csr_is_long(row_start, rows, r));
    if (threadIdx.x == 0) tile_counts[blockIdx.x] = c;
}
extern "C" __global__ void __launch_bounds__(COMPACT_TILE)
    csr_long_write(const uint32_t* __restrict__ row_start, uint32_t rows,
                   const uint32_t* __restrict__ tile_offsets, uint32_t* out) {
    uint32_t r = blockIdx.x * COMPACT_TILE + threadIdx.x;
    bool f = csr_is_long(row_start, rows, r);
    uint32_t at = tile_offsets[blockIdx.x] + block_rank(f);
    if (f) out[at] = r;
}

// Density selection over z = inputs ++ aux: element i < num_inputs is kept
// when in_flags is null or in_flags[i] != 0, element i >= num_inputs when
// aux_flags is null or aux_flags[i - num_inputs] != 0 (u8 per variable:
// cuzk-core's Density is a Vec<bool>, whose bytes are these flags).
DEV bool select_flag(uint32_t i, uint32_t n, uint32_t num_inputs, const uint8_t* in_flags,
                     const uint8_t* aux_flags) {
    if (i >= n) return false;
    if (i < num_inputs) return in_flags == nullptr || in_flags[i] != 0;
    return aux_flags == nullptr || aux_flags[i - num_inputs] != 0;
}
extern "C" __global__ void __launch_bounds__(COMPACT_TILE)
    select_count(uint32_t n, uint32_t num_inputs, const uint8_t* __restrict__ in_flags,
                 const uint8_t* __restrict__ aux_flags, uint32_t* tile_counts) {
    uint32_t i = blockIdx.x * COMPACT_TILE + threadIdx.x;
    uint32_t c = __syncthreads_count(select_flag(i, n, num_inputs, in_flags, aux_flags));
    if (threadIdx.x == 0) tile_counts[blockIdx.x] = c;
}
extern "C" __global__ void __launch_bounds__(COMPACT_TILE)
    select_write(const Fr* __restrict__ z, uint32_t n, uint32_t num_inputs,
                 const uint8_t* __restrict__ in_flags, const uint8_t* __restrict__ aux_flags,
                 const uint32_t* __restrict__ tile_offsets, Fr* __restrict__ out) {
    uint32_t i = blockIdx.x * COMPACT_TILE + threadIdx.x;
    bool f = select_flag(i, n, num_inputs, in_flags, aux_flags);
    uint32_t at = tile_offsets[blockIdx.x] + block_rank(f);
    if (f) st_fr(out + at, ldg_fr(z + i));
}

// The 0/1 split (host::split_zero_one's layout): ones[i / 32] bit i % 32
// set where s_i = 1; the other non-zero scalars' positions and values, in
// order. Montgomery form: 1 is R mod r, 0 is all-zero limbs.
DEV bool split_is_one(const Fr& s) { return s == Fr::one(); }
// split_count: the ones mask (one ballot per warp is one mask word: a tile
// is 32 whole words), each tile's count of "other" scalars, and the total
// of ones added into *ones_total (zeroed by the host).
extern "C" __global__ void __launch_bounds__(COMPACT_TILE)
    split_count(const Fr* __restrict__ s, uint32_t n, uint32_t* __restrict__ ones,
                uint32_t* __restrict__ tile_counts, uint32_t* ones_total) {
    uint32_t i = blockIdx.x * COMPACT_TILE + threadIdx.x;
    bool one = false, rest = false;
    if (i < n) {
        Fr v = ldg_fr(s + i);
        one = split_is_one(v);
        rest = !one && !v.is_zero();
    }
    uint32_t word = __ballot_sync(0xffffffffu, one);
    // The word's first element inside the vector: the word exists.
    if ((threadIdx.x & 31) == 0 && (i & ~31u) < n) ones[i >> 5] = word;
    uint32_t c = __syncthreads_count(rest);
    uint32_t o = __syncthreads_count(one);
    if (threadIdx.x == 0) {
        tile_counts[blockIdx.x] = c;
        if (o) atomicAdd(ones_total, o);
    }
}
extern "C" __global__ void __launch_bounds__(COMPACT_TILE)
    split_write(const Fr* __restrict__ s, uint32_t n, const uint32_t* __restrict__ tile_offsets,
                uint32_t* __restrict__ rest_ids, Fr* __restrict__ rest) {
    uint32_t i = blockIdx.x * COMPACT_TILE + threadIdx.x;
    Fr v = Fr::zero();
    bool f = false;
    if (i < n) {
        v = ldg_fr(s + i);
        f = !split_is_one(v) && !v.is_zero();
    }
    uint32_t at = tile_offsets[blockIdx.x] + block_rank(f);
    if (f) {
        rest_ids[at] = i;
        st_fr(rest + at, v);
    }
}
