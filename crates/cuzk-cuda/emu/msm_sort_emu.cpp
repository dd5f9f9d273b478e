// The MSM's shared-memory sort (kernels/msm_sort.cuh) run on the CPU
// (cuda_emu.h) with the launches src/device/msm.rs makes (`sort_shared`),
// for tests/emu_msm_sort.rs. The exclusive scan between the passes, a
// kernel of its own on the GPU (scan.cuh, checked there), is done here on
// the host.
//
// Input, little-endian u32 words unless said: n, c, W, mont, lg_low, parts,
// tiles, block, place_stage, bucket_stage, buckets_smem, ngroups, then
// (w0, w1, place_smem) per group, has_ids; n scalars of 32 bytes; n ids if
// has_ids. The shared-memory sizes are host::MsmSortPlan's for `block`
// threads.
// Output: count (W·2^(c-1) words), off (W·2^(c-1) + 1 words), then the
// sorted list (off's last word of them), written over the keys.
#include "cuda_emu.h"
#include "emu_main.h"
#include "../kernels/msm_sort.cuh"

int main() {
    return emu_main("msm_sort_emu", [] {
        const uint32_t n = rd32(), c = rd32(), W = rd32(), mont = rd32(), lg_low = rd32(),
                       parts = rd32(), tiles = rd32(), block = rd32(), place_stage = rd32(),
                       bucket_stage = rd32(), buckets_smem = rd32(), ngroups = rd32();
        struct Group {
            uint32_t w0, w1, place_smem;
        };
        std::vector<Group> groups(ngroups);
        for (auto& g : groups) {
            g.w0 = rd32();
            g.w1 = rd32();
            g.place_smem = rd32();
        }
        const uint32_t has_ids = rd32();
        std::vector<Fr> scalars(n ? n : 1);
        rd_bytes(scalars.data(), (size_t)32 * n, "short scalars");
        std::vector<uint32_t> ids(n ? n : 1);
        if (has_ids) rd_bytes(ids.data(), (size_t)4 * n, "short ids");
        const uint32_t* idp = has_ids ? ids.data() : nullptr;

        const size_t slots = (size_t)W * parts, hist_len = slots * tiles;
        const size_t s = (size_t)W << (c - 1);
        std::vector<uint32_t> tile_hist(hist_len), part_off(hist_len + 1);
        std::vector<uint32_t> keys((size_t)W * n + 1);
        emu_launch(tiles, block, 4 * slots, [&] {
            msm_sort_digits(scalars.data(), n, mont, c, W, lg_low, parts, tiles, keys.data(),
                            tile_hist.data());
        });
        uint32_t run = 0;
        for (size_t i = 0; i < hist_len; i++) {
            part_off[i] = run;
            run += tile_hist[i];
        }
        part_off[hist_len] = run;

        // The sorted list written over the keys, as src/device/msm.rs does.
        std::vector<uint32_t> count(s, 0xdeadbeefu), off(s + 1, 0xdeadbeefu);
        uint32_t* sorted = keys.data();
        uint32_t most = 0;
        for (auto g : groups) most = std::max(most, g.w1 - g.w0);
        std::vector<uint2> tmp((size_t)most * n + 1);
        for (auto [w0, w1, place_smem] : groups) {
            const size_t group_slots = (size_t)(w1 - w0) * parts;
            emu_launch(tiles, block, place_smem, [&] {
                msm_sort_place(keys.data(), idp, n, w0, w1, lg_low, parts, tiles, part_off.data(),
                               tmp.data(), place_stage);
            });
            emu_launch((uint32_t)group_slots, block, buckets_smem, [&] {
                msm_sort_buckets(tmp.data(), part_off.data(), tiles, lg_low, w0 * parts,
                                 W * parts, count.data(), off.data(), sorted, bucket_stage);
            });
        }
        fwrite(count.data(), 4, s, stdout);
        fwrite(off.data(), 4, s + 1, stdout);
        fwrite(sorted, 4, run, stdout);
    });
}
