// The MSM's bucket accumulation (kernels/msm.cuh: msm_chunk_owner, then
// accumulate_affine as msm_accumulate_g1 / msm_accumulate_g2 run it) on the
// CPU (cuda_emu.h) for tests/emu_accumulate.rs, which compares each
// chunk's sum with blstrs'.
//
// Input, little-endian u32 words unless said: group (1: G1, 2: G2), S
// (segments), T (entries a chunk at most), with_order (0 or 1); S counts;
// P (points) and P affine points (blst's layout); the sum of the counts
// in entries (a point's index, bit 31 set to take it negated), segment by
// segment; with_order: the chunks in the order the threads take them (a
// permutation of 0 .. chunks).
// Output: each chunk's XYZZ sum, by chunk id.
#include "cuda_emu.h"
#include "emu_main.h"
#include "../kernels/msm.cuh"

template <class F>
void run(uint32_t S, uint32_t T, bool with_order) {
    std::vector<uint32_t> count(S), seg_off(S), chunk_off(S + 1);
    rd_bytes(count.data(), 4 * (size_t)S, "short counts");
    const uint32_t P = rd32();
    std::vector<Affine<F>> points(P + 1);
    rd_bytes(points.data(), sizeof(Affine<F>) * P, "short points");
    uint32_t total = 0, chunks = 0;
    for (uint32_t s = 0; s < S; s++) {
        seg_off[s] = total;
        chunk_off[s] = chunks;
        total += count[s];
        chunks += (count[s] + T - 1) / T;
    }
    chunk_off[S] = chunks;
    std::vector<uint32_t> sorted(total + 1), order(chunks + 1), owner(chunks + 1);
    rd_bytes(sorted.data(), 4 * (size_t)total, "short entries");
    for (uint32_t e = 0; e < total; e++)
        if ((sorted[e] & 0x7fffffffu) >= P) throw std::runtime_error("an entry past the points");
    if (with_order) rd_bytes(order.data(), 4 * (size_t)chunks, "short order");
    // Small blocks: each of a block's threads is an OS thread here.
    const uint32_t block = 4;
    emu_launch((S + block - 1) / block, block, 0,
               [&] { msm_chunk_owner(chunk_off.data(), S, owner.data()); });
    std::vector<Xyzz<F>> out(chunks + 1);
    emu_launch((chunks + block - 1) / block, block, 0, [&] {
        accumulate_affine<F>(points.data(), sorted.data(), count.data(), seg_off.data(),
                             chunk_off.data(), owner.data(), S, T,
                             with_order ? order.data() : nullptr, out.data());
    });
    if (chunks && fwrite(out.data(), sizeof(Xyzz<F>), chunks, stdout) != chunks)
        throw std::runtime_error("short write");
}

int main() {
    return emu_main("accumulate_emu", [] {
        const uint32_t group = rd32(), S = rd32(), T = rd32(), with_order = rd32();
        if (T == 0) throw std::runtime_error("T: at least 1");
        if (group == 1) run<Fq>(S, T, with_order != 0);
        else if (group == 2) run<Fq2>(S, T, with_order != 0);
        else throw std::runtime_error("group: 1 (G1) or 2 (G2)");
    });
}
