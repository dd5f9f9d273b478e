//! The host path's five MSMs of a partition: where each reads its points
//! (the parameters, their pinned mirror, their resident copy:
//! [`QueryBases`]) and the phase each is timed as. H's coefficients come
//! from [`Worker::compute_h`]; the other scalars and their 0/1 splits from
//! the host preparation (prep.rs).

use super::*;

/// Where a partition's MSMs read each parameter vector: the parameters
/// (host points, decoded where a plan reads them on the host), their
/// pinned mirror (streamed plans) and their resident copy (resident plans).
pub(super) struct QueryBases<'a> {
    pub(super) params: &'a Parameters,
    pub(super) mirror: Option<&'a PinnedMirror>,
    pub(super) resident: Option<&'a ResidentBases>,
}

/// The G1 query vectors.
#[derive(Clone, Copy, Debug)]
pub(super) enum G1Query {
    H,
    L,
    A,
    BG1,
}

impl G1Query {
    fn phase(self) -> Phase {
        match self {
            G1Query::H => Phase::MsmH,
            G1Query::L => Phase::MsmL,
            G1Query::A => Phase::MsmA,
            G1Query::BG1 => Phase::MsmBG1,
        }
    }
}

impl<'a> QueryBases<'a> {
    /// The query's points, its mirror part and its resident copy.
    fn g1(
        &self,
        which: G1Query,
    ) -> (
        &'a Points<G1Affine>,
        Option<&'a MirrorPart>,
        Option<&'a DevicePoints>,
    ) {
        let p = self.params;
        match which {
            G1Query::H => (&p.h, self.mirror.map(|m| &m.h), self.resident.map(|b| &b.h)),
            G1Query::L => (&p.l, self.mirror.map(|m| &m.l), self.resident.map(|b| &b.l)),
            G1Query::A => (&p.a, self.mirror.map(|m| &m.a), self.resident.map(|b| &b.a)),
            G1Query::BG1 => (
                &p.b_g1,
                self.mirror.map(|m| &m.b_g1),
                self.resident.map(|b| &b.b_g1),
            ),
        }
    }
}

impl Worker<'_> {
    /// H's coefficients as the H MSM reads them: a streamed plan with no
    /// room for them beside the MSM's chunks reads them back to the host
    /// (the MSM then streams like the others); on the device only the
    /// first `sizes.h` stay reserved (the domain's last one is not read).
    pub(super) fn h_coeffs_for_msm<'w>(
        &'w self,
        h_coeffs: HCoeffs<'w>,
        plan: &StagingPlan,
        sizes: &PartitionSizes,
        t: &mut PhaseTimings,
    ) -> Result<HCoeffs<'w>> {
        Ok(match (h_coeffs, plan.bases) {
            (HCoeffs::Device { mut buf, _held }, BaseStaging::Chunked { h_points: 0, .. }) => {
                let clock = Instant::now();
                let v = self.read_back(&mut buf, sizes.domain)?;
                t.end(Phase::Readback, clock);
                drop((buf, _held));
                HCoeffs::Host(v)
            }
            (HCoeffs::Device { buf, mut _held }, _) => {
                _held.shrink_to(sizes.h as u64 * plan::FR, "H coefficients (for the H MSM)");
                HCoeffs::Device { buf, _held }
            }
            (h, _) => h,
        })
    }

    /// The H MSM (random scalars, no split) over the coefficients where
    /// they are, which it consumes.
    pub(super) fn msm_h(
        &self,
        q: &QueryBases<'_>,
        h_coeffs: HCoeffs<'_>,
        sizes: &PartitionSizes,
        plan: &StagingPlan,
        t: &mut PhaseTimings,
    ) -> Result<G1Projective> {
        let h = match &h_coeffs {
            HCoeffs::Host(v) => {
                let v = &v[..sizes.h.min(v.len())];
                return self.msm_query_split(q, G1Query::H, v, None, plan, t);
            }
            HCoeffs::Device { buf, _held } => {
                let clock = Instant::now();
                let (points, part, resident) = q.g1(G1Query::H);
                let host = bases::host_points(points, resident.is_some())?;
                let pinned = part.and_then(|m| m.bytes(g1_as_bytes(&host)));
                let sum = self.msm_h_on_device(
                    &host,
                    q.params.h.len(),
                    pinned,
                    resident,
                    buf,
                    _held,
                    sizes.h,
                    plan,
                    t,
                )?;
                t.end(Phase::MsmH, clock);
                sum
            }
        };
        drop(h_coeffs);
        Ok(h)
    }

    /// A G1 query's MSM with the host preparation's 0/1 split of its
    /// scalars, over its resident copy or pinned mirror where there is one
    /// (a host plan decodes a mapped vector for it); timed as its phase.
    pub(super) fn msm_query(
        &self,
        q: &QueryBases<'_>,
        which: G1Query,
        scalars: &[Scalar],
        split: &ZeroOneSplit,
        plan: &StagingPlan,
        t: &mut PhaseTimings,
    ) -> Result<G1Projective> {
        self.msm_query_split(q, which, scalars, Some(split), plan, t)
    }

    fn msm_query_split(
        &self,
        q: &QueryBases<'_>,
        which: G1Query,
        scalars: &[Scalar],
        split: Option<&ZeroOneSplit>,
        plan: &StagingPlan,
        t: &mut PhaseTimings,
    ) -> Result<G1Projective> {
        let clock = Instant::now();
        let (points, part, resident) = q.g1(which);
        let host = bases::host_points(points, resident.is_some())?;
        let pinned = part.and_then(|m| m.bytes(g1_as_bytes(&host)));
        let sum = self.msm_g1(&host, pinned, resident, scalars, split, plan, t)?;
        t.end(which.phase(), clock);
        Ok(sum)
    }

    /// The B query's MSM in G2, with the same 0/1 split as B in G1.
    pub(super) fn msm_b_g2(
        &self,
        q: &QueryBases<'_>,
        scalars: &[Scalar],
        split: &ZeroOneSplit,
        plan: &StagingPlan,
        t: &mut PhaseTimings,
    ) -> Result<G2Projective> {
        let clock = Instant::now();
        let resident = q.resident.map(|b| &b.b_g2);
        let host = bases::host_points(&q.params.b_g2, resident.is_some())?;
        let pinned = q.mirror.and_then(|m| m.b_g2.bytes(g2_as_bytes(&host)));
        let sum = self.msm_g2(&host, pinned, resident, scalars, split, plan, t)?;
        t.end(Phase::MsmBG2, clock);
        Ok(sum)
    }
}
