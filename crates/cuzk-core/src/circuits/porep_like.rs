//! `porep-like`: a benchmark circuit family shaped like a Filecoin PoRep
//! partition, deterministic from (log_size, seed).

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar;

pub const DEFAULT_LOG_SIZE: u32 = 16;

#[derive(Clone, Debug)]
pub struct PorepLikeCircuit {
    pub log_size: u32,
    pub seed: u64,
}

impl PorepLikeCircuit {
    pub fn new(log_size: u32, seed: u64) -> Self {
        Self { log_size, seed }
    }
    /// The public inputs this circuit exposes (without the leading one).
    pub fn public_inputs(&self) -> Vec<Scalar> {
        todo!()
    }
}

impl Circuit<Scalar> for PorepLikeCircuit {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let _ = cs;
        todo!()
    }
}
