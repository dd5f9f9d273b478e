//! A partition's host preparation (the host path, when a/b/c are formed on
//! the CPU): the A and B query scalars selected by density and the 0/1
//! splits of L, A and B, on the CPU's cores beside the device's H step.

use blstrs::Scalar;
use cuzk_core::ProvingAssignment;
use cuzk_cuda::ZeroOneSplit;

use crate::split::split_zero_one_into;

/// The host preparation of a partition: the scalars of the A and B
/// queries (density-selected) and the 0/1 splits of L, A and B. Kept in
/// the backend's pool between partitions and refilled in place: at 2^27
/// these vectors hold about 8 GB, and writing freshly mapped memory costs
/// several times more than writing memory already in place (page faults;
/// `host_prep_bench --reuse`).
#[derive(Default)]
pub(super) struct HostPrep {
    pub(super) a_scalars: Vec<Scalar>,
    pub(super) b_scalars: Vec<Scalar>,
    pub(super) l_split: ZeroOneSplit,
    pub(super) a_split: ZeroOneSplit,
    pub(super) b_split: ZeroOneSplit,
}

/// Fills `p` for `pa` on the CPU's cores.
pub(super) fn host_prep(pa: &ProvingAssignment, p: &mut HostPrep) {
    let HostPrep {
        a_scalars,
        b_scalars,
        l_split,
        a_split,
        b_split,
    } = p;
    // The selections (parallel inside) and the L split side by side.
    rayon::join(
        || {
            rayon::join(
                || pa.a_query_scalars_into(a_scalars),
                || pa.b_query_scalars_into(b_scalars),
            )
        },
        || split_zero_one_into(&pa.aux_assignment, l_split),
    );
    rayon::join(
        || split_zero_one_into(a_scalars, a_split),
        || split_zero_one_into(b_scalars, b_split),
    );
}
