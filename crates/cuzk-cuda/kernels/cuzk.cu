// The production translation unit build.rs compiles into the embedded
// fatbin: field and curve arithmetic, NTT, MSM, fixed-base multiplication,
// the compiled constraint system's kernels and the exclusive scan used by
// the MSM's counting sort, and the expansion of a witness sent up packed
// by 0/1 (zpack.cuh). The arithmetic kernels of the tests and
// benchmarks are in tests.cu, a fatbin of their own.
#include "field.cuh"
#include "curve.cuh"
#include "ntt.cuh"
#include "msm.cuh"
#include "zero_one.cuh"
#include "fixed.cuh"
#include "spmv.cuh"
#include "scan.cuh"
#include "subgroup.cuh"
#include "zpack.cuh"
