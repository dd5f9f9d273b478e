//! bellperson / Filecoin parameter files.
//!
//! `.vk`: alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1, delta_g2 as
//! uncompressed points, then a big-endian u32 count and that many
//! uncompressed G1 points (ic).
//! `.params`: the verifying key, then five vectors, each a big-endian u32
//! count followed by uncompressed points: h, l, a, b_g1 (G1) and b_g2 (G2).
//! G1 points are 96 bytes, G2 points 192 bytes (blst/zcash serialization).

use crate::Result;
use blstrs::{G1Affine, G2Affine};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub const G1_UNCOMPRESSED: usize = 96;
pub const G2_UNCOMPRESSED: usize = 192;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyingKey {
    pub alpha_g1: G1Affine,
    pub beta_g1: G1Affine,
    pub beta_g2: G2Affine,
    pub gamma_g2: G2Affine,
    pub delta_g1: G1Affine,
    pub delta_g2: G2Affine,
    /// One point per input, the constant one first.
    pub ic: Vec<G1Affine>,
}

impl VerifyingKey {
    pub fn write<W: std::io::Write>(&self, w: W) -> std::io::Result<()> {
        let _ = w;
        todo!()
    }
    /// `checked`: verify that points are on the curve and in the subgroup.
    pub fn read_bytes(bytes: &[u8], path: &Path, checked: bool) -> Result<(Self, usize)> {
        let _ = (bytes, path, checked);
        todo!()
    }
    pub fn read_file(path: &Path, checked: bool) -> Result<Self> {
        let _ = (path, checked);
        todo!()
    }
    pub fn write_file(&self, path: &Path) -> Result<()> {
        let _ = path;
        todo!()
    }
}

/// Fully decoded parameters, in memory.
#[derive(Clone, Debug)]
pub struct Parameters {
    pub vk: VerifyingKey,
    pub h: Arc<Vec<G1Affine>>,
    pub l: Arc<Vec<G1Affine>>,
    pub a: Arc<Vec<G1Affine>>,
    pub b_g1: Arc<Vec<G1Affine>>,
    pub b_g2: Arc<Vec<G2Affine>>,
}

impl Parameters {
    pub fn write<W: std::io::Write>(&self, w: W) -> std::io::Result<()> {
        let _ = w;
        todo!()
    }
    pub fn write_file(&self, path: &Path) -> Result<()> {
        let _ = path;
        todo!()
    }
    /// Memory-map and decode the whole file (in parallel).
    pub fn read_file(path: &Path, checked: bool) -> Result<Self> {
        MappedParameters::open(path)?.load(checked)
    }
}

/// The five query vectors of a parameter file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Section {
    H,
    L,
    A,
    BG1,
    BG2,
}

/// Where each section lies in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamsLayout {
    /// Byte offset of the first point of each section, and its point count,
    /// in the order h, l, a, b_g1, b_g2.
    pub sections: [(Section, u64, usize); 5],
    pub file_len: u64,
}

/// A memory-mapped parameter file: opening reads only the verifying key and
/// the section headers; points are decoded on demand, in parallel.
pub struct MappedParameters {
    pub path: PathBuf,
    pub vk: VerifyingKey,
    pub layout: ParamsLayout,
    mmap: memmap2::Mmap,
}

impl MappedParameters {
    pub fn open(path: &Path) -> Result<Self> {
        let _ = path;
        todo!()
    }
    pub fn len(&self, section: Section) -> usize {
        let _ = section;
        todo!()
    }
    /// Decode a range of a G1 section (h, l, a or b_g1).
    pub fn g1(&self, section: Section, range: Range<usize>, checked: bool) -> Result<Vec<G1Affine>> {
        let _ = (section, range, checked, &self.mmap);
        todo!()
    }
    /// Decode a range of b_g2.
    pub fn g2(&self, range: Range<usize>, checked: bool) -> Result<Vec<G2Affine>> {
        let _ = (range, checked);
        todo!()
    }
    /// The raw bytes of a section (uncompressed points), for backends that
    /// decode on the device.
    pub fn raw(&self, section: Section) -> &[u8] {
        let _ = section;
        todo!()
    }
    pub fn load(&self, checked: bool) -> Result<Parameters> {
        let _ = checked;
        todo!()
    }
}
