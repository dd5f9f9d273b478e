//! Random Groth16 parameters for a circuit: insecure (the toxic waste is
//! known to this process), for development, tests and benchmarks only.

use crate::params::Parameters;
use crate::Result;
use blstrs::Scalar;
use rand_core::RngCore;

pub fn generate_random_parameters<C, R>(circuit: C, rng: &mut R) -> Result<Parameters>
where
    C: bellpepper_core::Circuit<Scalar>,
    R: RngCore,
{
    let _ = (circuit, rng);
    todo!()
}
