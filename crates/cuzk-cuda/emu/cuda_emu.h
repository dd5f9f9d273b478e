// A CPU stand-in for the parts of CUDA the kernels use, so that their
// sources compile as C++ and run on a machine without a GPU (the CI
// machines): each block runs as blockDim.x OS threads meeting at a real
// barrier for __syncthreads, blocks one after another, dynamic shared
// memory one buffer reused by each block. Arithmetic takes the portable
// paths of field.cuh (CUZK_EMU: no PTX). Slow, exact: for checking the
// kernels' index arithmetic and synchronisation against a reference at
// small sizes, not for timing.
#pragma once
#include <barrier>
#include <cstdint>
#include <cstring>
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
template <class T>
inline T __ldg(const T* p) {
    return *p;
}
inline uint32_t min(uint32_t a, uint32_t b) { return a < b ? a : b; }
// The threads of a block run at once: shared counters need real atomics.
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
