// A CPU stand-in for the parts of CUDA the kernels use, so that their
// sources compile as C++ and run on a machine without a GPU (the CI
// machines): each block runs as blockDim.x OS threads meeting at a real
// barrier for __syncthreads, blocks one after another, dynamic shared
// memory one buffer reused by each block. Arithmetic takes the portable
// paths of field.cuh (CUZK_EMU: no PTX), or, built by tests/common's
// `emu_binary_ptx`, field.cuh's PTX paths with each PTX instruction
// emulated (below). Slow, exact: for checking the
// kernels' index arithmetic and synchronisation against a reference at
// small sizes, not for timing.
#pragma once
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#define CUZK_EMU 1
#define __global__
#define __device__
#define __forceinline__ inline
#define __noinline__
#define __restrict__
#define __launch_bounds__(...)
#define __shared__

struct uint4 {
    uint32_t x, y, z, w;
};
struct uint2 {
    uint32_t x, y;
};
inline uint4 make_uint4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { return {a, b, c, d}; }

struct EmuDim {
    uint32_t x = 1, y = 1, z = 1;
};
inline thread_local EmuDim threadIdx;
inline EmuDim blockIdx, blockDim, gridDim;
inline std::barrier<>* emu_block_barrier = nullptr;

inline void __syncthreads() { emu_block_barrier->arrive_and_wait(); }
inline uint32_t __brev(uint32_t x) {
    uint32_t r = 0;
    for (int i = 0; i < 32; i++) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
inline int __ffs(uint32_t x) { return __builtin_ffs((int)x); }
inline int __clz(uint32_t x) { return x ? __builtin_clz(x) : 32; }
inline int __popc(uint32_t x) { return __builtin_popcount(x); }
template <class T>
inline T __ldg(const T* p) {
    return *p;
}
inline uint32_t min(uint32_t a, uint32_t b) { return a < b ? a : b; }
inline uint32_t max(uint32_t a, uint32_t b) { return a > b ? a : b; }
// The FP64 intrinsics of field_f64.cuh. __fma_rz is computed exactly in
// 128-bit integers and cut to 53 significant bits toward zero: exact for
// what that file passes (integers, |x y + z| < 2^126), and independent of
// the host's rounding mode; anything else is refused.
inline long long __double_as_longlong(double x) {
    long long r;
    std::memcpy(&r, &x, 8);
    return r;
}
inline double __longlong_as_double(long long x) {
    double r;
    std::memcpy(&r, &x, 8);
    return r;
}
inline double __dsub_rn(double x, double y) { return x - y; }
inline double __fma_rn(double x, double y, double z) { return std::fma(x, y, z); }
inline double __fma_rz(double x, double y, double z) {
    const double lim = 0x1p62;
    if (x != std::trunc(x) || y != std::trunc(y) || z != std::trunc(z) || std::fabs(x) >= lim ||
        std::fabs(y) >= lim || std::fabs(z) >= 0x1p125)
        throw "emu: __fma_rz outside the integers field_f64.cuh uses";
    __int128 v = (__int128)x * (__int128)y + (__int128)z;
    const bool neg = v < 0;
    unsigned __int128 m = neg ? -(unsigned __int128)v : (unsigned __int128)v;
    int bits = 0;
    for (unsigned __int128 t = m; t; t >>= 1) bits++;
    if (bits > 53) m = (m >> (bits - 53)) << (bits - 53);
    const double r = (double)m;  // exact: at most 53 significant bits
    return neg ? -r : r;
}
// The PTX integer instructions field.cuh's carry chains use, for the
// emulator built from the PTX form of field.cuh (tests/common's
// `emu_binary_ptx`: each inline-PTX statement rewritten as calls of these,
// operands copied in first and results written back last, as nvcc's own
// registers for asm operands would). CC.CF is per thread, as on the GPU:
// add/addc set it to the carry out, sub/subc to the borrow out (d = a -
// (b + CF)); instructions without .cc leave it as it is.
inline thread_local uint32_t emu_ptx_cf = 0;
inline uint32_t emu_ptx_add(uint32_t a, uint32_t b, bool cin, bool cout) {
    const uint64_t s = (uint64_t)a + b + (cin ? emu_ptx_cf : 0u);
    if (cout) emu_ptx_cf = (uint32_t)(s >> 32);
    return (uint32_t)s;
}
inline uint32_t emu_ptx_sub(uint32_t a, uint32_t b, bool cin, bool cout) {
    const uint64_t t = (uint64_t)b + (cin ? emu_ptx_cf : 0u);
    if (cout) emu_ptx_cf = (uint64_t)a < t ? 1u : 0u;
    return (uint32_t)((uint64_t)a - t);
}
// mul.lo/hi (c = 0, no carry) and mad.lo/hi, madc.lo/hi with or without .cc.
inline uint32_t emu_ptx_mad(bool hi, uint32_t a, uint32_t b, uint32_t c, bool cin, bool cout) {
    const uint64_t p = (uint64_t)a * b;
    return emu_ptx_add(hi ? (uint32_t)(p >> 32) : (uint32_t)p, c, cin, cout);
}

// Warp shuffles: each warp of the block (32 consecutive threads, the last
// one possibly fewer) exchanges values through a buffer between two
// meetings at its own barrier. Every lane of the warp must call (a full
// mask), as the kernels here do.
struct EmuWarp {
    std::barrier<>* bar;
    uint64_t buf[32];
};
inline std::vector<EmuWarp>* emu_warps = nullptr;
// Every lane posts `v`; each reads the value of lane `src` (a lane of its
// warp, below 32), or keeps its own where src is out of the warp's range.
template <class T>
inline T emu_shfl(T v, uint32_t src) {
    static_assert(sizeof(T) <= 8, "emu: shuffles of at most 8 bytes");
    EmuWarp& w = (*emu_warps)[threadIdx.x / 32];
    std::memcpy(&w.buf[threadIdx.x % 32], &v, sizeof(T));
    w.bar->arrive_and_wait();
    T r = v;
    if (src < 32) std::memcpy(&r, &w.buf[src], sizeof(T));
    w.bar->arrive_and_wait();
    return r;
}
template <class T>
inline T __shfl_up_sync(uint32_t, T v, uint32_t d) {
    const uint32_t lane = threadIdx.x % 32;
    return emu_shfl(v, lane >= d ? lane - d : 32);
}
template <class T>
inline T __shfl_sync(uint32_t, T v, uint32_t src) {
    return emu_shfl(v, src % 32);
}
template <class T>
inline T __shfl_xor_sync(uint32_t, T v, int lane_xor) {
    return emu_shfl(v, (threadIdx.x % 32 ^ (uint32_t)lane_xor) % 32);
}

// The largest of the warp's values (every lane of a full warp calls).
inline uint32_t __reduce_max_sync(uint32_t mask, uint32_t v) {
    uint32_t m = v;
    for (int k = 1; k < 32; k <<= 1) m = max(m, __shfl_xor_sync(mask, m, k));
    return m;
}

// The threads of a block run at once: shared counters need real atomics.
inline uint32_t atomicMax(uint32_t* p, uint32_t v) {
    uint32_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (old < v &&
           !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return old;
}
inline uint32_t atomicAdd(uint32_t* p, uint32_t v) {
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

// The dynamic shared memory every `extern __shared__ uint4 shm[];` names:
// 1 MiB, more than any kernel asks for (the launcher checks).
constexpr size_t EMU_SHM_BYTES = 1 << 20;
alignas(16) inline uint4 shm[EMU_SHM_BYTES / sizeof(uint4)];

// Runs `body` (a call of the kernel) for every thread of every block.
template <class F>
inline void emu_launch(uint32_t grid, uint32_t block, size_t smem, F body) {
    if (smem > EMU_SHM_BYTES) throw "emu: shared memory request too large";
    gridDim.x = grid;
    blockDim.x = block;
    for (uint32_t b = 0; b < grid; b++) {
        blockIdx.x = b;
        std::memset(shm, 0xA5, smem);  // stale data from another block shows
        std::barrier<> bar((std::ptrdiff_t)block);
        emu_block_barrier = &bar;
        std::vector<std::unique_ptr<std::barrier<>>> warp_bars;
        std::vector<EmuWarp> warps((block + 31) / 32);
        for (uint32_t k = 0; k < warps.size(); k++) {
            warp_bars.push_back(std::make_unique<std::barrier<>>(
                (std::ptrdiff_t)std::min<uint32_t>(32, block - 32 * k)));
            warps[k].bar = warp_bars.back().get();
        }
        emu_warps = &warps;
        std::vector<std::thread> threads;
        threads.reserve(block);
        for (uint32_t t = 0; t < block; t++)
            threads.emplace_back([t, &body] {
                threadIdx.x = t;
                body();
            });
        for (auto& th : threads) th.join();
    }
}
