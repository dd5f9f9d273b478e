//! Stand-in used when the crate is built without the `cuda` feature: the
//! type exists so callers compile unchanged, and opening it says why not.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};

use crate::error::{CudaError, Result};
use crate::host::NttKind;

/// Never constructed in a build without the `cuda` feature.
pub struct CudaDevice {
    never: std::convert::Infallible,
}

impl CudaDevice {
    pub fn open(_ordinal: usize) -> Result<Self> {
        Err(CudaError::NotCompiled)
    }
    pub fn name(&self) -> &str {
        match self.never {}
    }
    pub fn ntt(&self, _values: &mut [Scalar], _kind: NttKind) -> Result<()> {
        match self.never {}
    }
    pub fn msm_g1(&self, _points: &[G1Affine], _scalars: &[Scalar]) -> Result<G1Projective> {
        match self.never {}
    }
    pub fn msm_g2(&self, _points: &[G2Affine], _scalars: &[Scalar]) -> Result<G2Projective> {
        match self.never {}
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn open_reports_not_compiled() {
        assert!(matches!(
            super::CudaDevice::open(0),
            Err(crate::CudaError::NotCompiled)
        ));
    }
}
