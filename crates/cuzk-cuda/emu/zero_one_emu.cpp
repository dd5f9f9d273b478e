// The 0/1 path's kernels (kernels/zero_one.cuh: mask_popcount,
// sum_selected, pair_sums) run on the CPU (cuda_emu.h) as
// src/device/zero_one.rs launches them, for
// tests/emu_zero_one.rs. The exclusive scan between them, a kernel of its
// own on the GPU (scan.cuh, checked there), is done here on the host.
//
// Input, little-endian u32 words unless said: group (1: G1, 2: G2),
// paired (0 or 1), n, nthreads; n affine points (blst's layout); with
// paired, n / 2 pair sums; then ceil(n / 32) mask words.
// Output: the nthreads partial sums (XYZZ).
// With paired = 2 (pair_sums_* instead): group, 2, n, then the n points;
// output the n / 2 pair sums (XYZZ).
#include "cuda_emu.h"
#include "emu_main.h"
#include "../kernels/zero_one.cuh"

template <class F>
void run_pair_sums(uint32_t n) {
    const uint32_t npairs = n / 2, block = 32;
    std::vector<Affine<F>> points(n + 1);
    std::vector<Xyzz<F>> out(npairs + 1);
    rd_bytes(points.data(), sizeof(Affine<F>) * n, "short points");
    emu_launch((npairs + block - 1) / block, block, 0,
               [&] { pair_sums<F>(points.data(), npairs, out.data()); });
    if (fwrite(out.data(), sizeof(Xyzz<F>), npairs, stdout) != npairs)
        throw std::runtime_error("short write");
}

template <class F>
void run(uint32_t paired, uint32_t n, uint32_t nthreads) {
    const uint32_t n_words = (n + 31) / 32, npairs = paired ? n / 2 : 0;
    std::vector<Affine<F>> points(n + 1), pairs(npairs + 1);
    std::vector<uint32_t> mask(n_words + 1), counts(n_words + 1), prefix(n_words + 1);
    std::vector<Xyzz<F>> out(nthreads + 1);
    rd_bytes(points.data(), sizeof(Affine<F>) * n, "short points");
    rd_bytes(pairs.data(), sizeof(Affine<F>) * npairs, "short pair sums");
    rd_bytes(mask.data(), 4 * (size_t)n_words, "short mask");
    const uint32_t block = 32;
    emu_launch((n_words + block - 1) / block, block, 0,
               [&] { mask_popcount(mask.data(), n_words, paired, counts.data()); });
    prefix[0] = 0;
    for (uint32_t w = 0; w < n_words; w++) prefix[w + 1] = prefix[w] + counts[w];
    emu_launch((nthreads + block - 1) / block, block, 0, [&] {
        sum_selected<F>(points.data(), paired ? pairs.data() : nullptr, mask.data(),
                        prefix.data(), n_words, out.data(), nthreads);
    });
    if (fwrite(out.data(), sizeof(Xyzz<F>), nthreads, stdout) != nthreads)
        throw std::runtime_error("short write");
}

int main() {
    return emu_main("zero_one_emu", [] {
        const uint32_t group = rd32(), paired = rd32(), n = rd32();
        if (paired == 2) {
            if (group == 1) run_pair_sums<Fq>(n);
            else if (group == 2) run_pair_sums<Fq2>(n);
            else throw std::runtime_error("group: 1 (G1) or 2 (G2)");
            return;
        }
        const uint32_t nthreads = rd32();
        if (nthreads == 0) throw std::runtime_error("nthreads: at least 1");
        if (group == 1) run<Fq>(paired, n, nthreads);
        else if (group == 2) run<Fq2>(paired, n, nthreads);
        else throw std::runtime_error("group: 1 (G1) or 2 (G2)");
    });
}
