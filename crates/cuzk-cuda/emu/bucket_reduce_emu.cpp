// The MSM's per-window bucket reduction (kernels/msm.cuh) run on the CPU
// (cuda_emu.h) for tests/emu_bucket_reduce.rs, which compares each
// window's sum with blstrs' sum over its buckets of (b + 1) S_b: the split
// form as src/device/msm.rs launches it (msm_bucket_reduce_* or, with
// pairs, msm_bucket_pairs_*, writing acc_g and T_g; msm_group_sums_*;
// msm_window_join_*) and the one-lane form with each group's double-and-
// add. The folds of a window's items (msm_fold_*, unchanged, checked on
// the GPU) are plain sums here.
//
// Input, little-endian u32 words unless said: group (1: G1, 2: G2), W,
// lgB, lgG, lgH, pairs; W 2^lgB counts (0 or 1); W 2^lgB affine points
// (blst's layout), bucket s = w 2^lgB + b holding digit b + 1.
// Output: the W window sums of the split form, then (without pairs) the W
// of the one-lane form with the double-and-add, XYZZ.
#include "cuda_emu.h"
#include "emu_main.h"
#include "../kernels/msm.cuh"

template <class F>
Xyzz<F> plain_sum(const std::vector<Xyzz<F>>& v, size_t lo, size_t len) {
    Xyzz<F> s = Xyzz<F>::inf();
    for (size_t i = lo; i < lo + len; i++) s = s.add(v[i]);
    return s;
}

template <class F>
void write(const std::vector<Xyzz<F>>& v) {
    if (!v.empty() && fwrite(v.data(), sizeof(Xyzz<F>), v.size(), stdout) != v.size())
        throw std::runtime_error("short write");
}

// The launch of `threads` threads in blocks of at most `block` that divide
// it (the emulator's shuffles need every lane of a warp, where the GPU's
// pairs shuffle under their own two-lane masks).
template <class K>
void launch(uint32_t threads, uint32_t block, K body) {
    if (threads == 0) return;
    while (threads % block) block /= 2;
    emu_launch(threads / block, block, 0, body);
}

template <class F>
void run(uint32_t W, uint32_t lgB, uint32_t lgG, uint32_t lgH, bool pairs) {
    const uint32_t B = 1u << lgB, G = 1u << lgG, H = 1u << lgH;
    const size_t S = (size_t)W * B;
    std::vector<uint32_t> count(S), off(S);
    rd_bytes(count.data(), 4 * S, "short counts");
    std::vector<Affine<F>> pts(S);
    rd_bytes(pts.data(), sizeof(Affine<F>) * S, "short points");
    std::vector<Xyzz<F>> items(S);
    for (size_t s = 0; s < S; s++) {
        items[s] = Xyzz<F>::from_affine(pts[s]);
        off[s] = (uint32_t)s;
    }
    // The split form.
    std::vector<Xyzz<F>> accs((size_t)W * G), tsums((size_t)W * G), weighted((size_t)W * H);
    const uint32_t lanes = (W << lgG) << (pairs ? 1 : 0);
    launch(lanes, pairs ? 32 : 1, [&] {
        if (pairs)
            bucket_reduce_pairs<F>(items.data(), count.data(), off.data(), W, B, lgG, accs.data(),
                                   tsums.data());
        else
            bucket_reduce<F>(items.data(), count.data(), off.data(), W, B, lgG, accs.data(),
                             tsums.data());
    });
    launch(W << lgH, 1, [&] { group_sums<F>(tsums.data(), W, lgG, lgH, weighted.data()); });
    std::vector<Xyzz<F>> a(W), u(W), sums(W);
    for (uint32_t w = 0; w < W; w++) {
        a[w] = plain_sum(accs, (size_t)w * G, G);
        u[w] = plain_sum(weighted, (size_t)w * H, H);
    }
    launch(W, 1, [&] { window_join<F>(a.data(), u.data(), W, B >> lgG, sums.data()); });
    write(sums);
    if (pairs) return;
    // The one-lane form with each group's double-and-add.
    std::vector<Xyzz<F>> parts((size_t)W * G), whole(W);
    launch(W << lgG, 1, [&] {
        bucket_reduce<F>(items.data(), count.data(), off.data(), W, B, lgG, parts.data(), nullptr);
    });
    for (uint32_t w = 0; w < W; w++) whole[w] = plain_sum(parts, (size_t)w * G, G);
    write(whole);
}

int main() {
    return emu_main("bucket_reduce_emu", [] {
        const uint32_t group = rd32(), W = rd32(), lgB = rd32(), lgG = rd32(), lgH = rd32(),
                       pairs = rd32();
        if (lgG > lgB || lgH > lgG) throw std::runtime_error("need lgH <= lgG <= lgB");
        if (group == 1) run<Fq>(W, lgB, lgG, lgH, pairs != 0);
        else if (group == 2) run<Fq2>(W, lgB, lgG, lgH, pairs != 0);
        else throw std::runtime_error("group: 1 (G1) or 2 (G2)");
    });
}
