//! One query vector of a parameter set (h, l, a, b_g1 or b_g2): decoded in
//! host memory, or left in its memory-mapped parameter file.
//!
//! A 32 GiB PoRep's parameters are 47 GB. A GPU that keeps them resident
//! reads each point once, to upload it; holding the decoded copy in host
//! memory for the whole run only to do that needs 47 GB of free RAM. A
//! set opened with [`crate::Parameters::mapped`] keeps its points in the
//! file, and readers decode what they need when they need it: the CUDA
//! backend a pinned buffer at a time as it uploads
//! ([`Points::decode_into`]), the CPU backend a whole vector for the
//! MSM that reads it ([`Points::read`]). The mapped file's pages are page
//! cache, which the kernel may drop and read again.
//!
//! Points read from a file get the curve check (as when a whole file is
//! decoded for proving); the subgroup check is the loader's
//! ([`crate::params::MappedParameters::load_with`]).

use crate::params::{MappedParameters, Section};
use crate::{Error, Result};
use blstrs::{G1Affine, G2Affine};
use std::any::Any;
use std::borrow::Cow;
use std::ops::Range;
use std::sync::{Arc, Weak};

/// A point type a parameter file holds: G1 (h, l, a, b_g1) or G2 (b_g2).
pub trait FilePoint: Copy + Default + Send + Sync + 'static {
    /// Whether `section` holds points of this group.
    fn holds(section: Section) -> bool;
    /// Decodes points `first..first + out.len()` of `section` into `out`.
    fn decode_into(
        file: &MappedParameters,
        section: Section,
        first: usize,
        out: &mut [Self],
    ) -> Result<()>;
}

impl FilePoint for G1Affine {
    fn holds(section: Section) -> bool {
        section != Section::BG2
    }
    fn decode_into(
        file: &MappedParameters,
        section: Section,
        first: usize,
        out: &mut [Self],
    ) -> Result<()> {
        file.g1_into(section, first, out)
    }
}

impl FilePoint for G2Affine {
    fn holds(section: Section) -> bool {
        section == Section::BG2
    }
    fn decode_into(
        file: &MappedParameters,
        _section: Section,
        first: usize,
        out: &mut [Self],
    ) -> Result<()> {
        file.g2_into(first, out)
    }
}

#[derive(Clone)]
enum Repr<T> {
    Decoded(Arc<Vec<T>>),
    Mapped {
        file: Arc<MappedParameters>,
        section: Section,
    },
}

/// One query vector's points (see the module docs).
#[derive(Clone)]
pub struct Points<T> {
    repr: Repr<T>,
    len: usize,
}

impl<T: FilePoint> Points<T> {
    /// Points decoded in host memory.
    pub fn decoded(v: Arc<Vec<T>>) -> Self {
        let len = v.len();
        Points {
            repr: Repr::Decoded(v),
            len,
        }
    }

    /// Section `section` of a mapped file, decoded only as it is read.
    pub fn mapped(file: Arc<MappedParameters>, section: Section) -> Result<Self> {
        if !T::holds(section) {
            return Err(Error::ShapeMismatch {
                index: 0,
                what: format!(
                    "{}: section {} holds points of the other group",
                    file.path.display(),
                    section.name()
                ),
            });
        }
        let len = file.len(section);
        Ok(Points {
            repr: Repr::Mapped { file, section },
            len,
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The points when they are decoded in host memory; None when they are
    /// in a mapped file.
    pub fn in_memory(&self) -> Option<&[T]> {
        match &self.repr {
            Repr::Decoded(v) => Some(v),
            Repr::Mapped { .. } => None,
        }
    }

    /// The file and section the points are read from, when mapped.
    pub fn file(&self) -> Option<(&Arc<MappedParameters>, Section)> {
        match &self.repr {
            Repr::Decoded(_) => None,
            Repr::Mapped { file, section } => Some((file, *section)),
        }
    }

    /// Every point: borrowed when decoded, decoded from the file now (in
    /// parallel) when mapped.
    pub fn read(&self) -> Result<Cow<'_, [T]>> {
        self.read_range(0..self.len)
    }

    /// Points `range`: borrowed when decoded, decoded from the file now
    /// when mapped.
    pub fn read_range(&self, range: Range<usize>) -> Result<Cow<'_, [T]>> {
        self.check(&range)?;
        match &self.repr {
            Repr::Decoded(v) => Ok(Cow::Borrowed(&v[range])),
            Repr::Mapped { file, section } => {
                let mut out = vec![T::default(); range.len()];
                T::decode_into(file, *section, range.start, &mut out)?;
                Ok(Cow::Owned(out))
            }
        }
    }

    /// Writes points `first..first + out.len()` into `out`: a copy when
    /// decoded, a parallel decode from the file when mapped.
    pub fn decode_into(&self, first: usize, out: &mut [T]) -> Result<()> {
        let range = first..first.saturating_add(out.len());
        self.check(&range)?;
        match &self.repr {
            Repr::Decoded(v) => {
                out.copy_from_slice(&v[range]);
                Ok(())
            }
            Repr::Mapped { file, section } => T::decode_into(file, *section, first, out),
        }
    }

    /// The same points decoded in host memory (a copy of the file's
    /// section when mapped; a shared handle when already decoded).
    pub fn to_decoded(&self) -> Result<Self> {
        match &self.repr {
            Repr::Decoded(_) => Ok(self.clone()),
            Repr::Mapped { .. } => Ok(Points::decoded(Arc::new(self.read()?.into_owned()))),
        }
    }

    fn check(&self, range: &Range<usize>) -> Result<()> {
        if range.start > range.end || range.end > self.len {
            return Err(Error::ShapeMismatch {
                index: 0,
                what: format!(
                    "points {}..{} of a vector of {}",
                    range.start, range.end, self.len
                ),
            });
        }
        Ok(())
    }

    /// A key naming these points' storage without keeping it alive.
    pub fn key(&self) -> PointsKey {
        match &self.repr {
            Repr::Decoded(v) => {
                let weak: Weak<dyn Any + Send + Sync> = Arc::downgrade(v) as _;
                PointsKey {
                    addr: Arc::as_ptr(v) as *const () as usize,
                    section: None,
                    weak,
                }
            }
            Repr::Mapped { file, section } => {
                let weak: Weak<dyn Any + Send + Sync> = Arc::downgrade(file) as _;
                PointsKey {
                    addr: Arc::as_ptr(file) as *const () as usize,
                    section: Some(*section),
                    weak,
                }
            }
        }
    }
}

impl<T: FilePoint> From<Vec<T>> for Points<T> {
    fn from(v: Vec<T>) -> Self {
        Points::decoded(Arc::new(v))
    }
}

impl<T: FilePoint> From<Arc<Vec<T>>> for Points<T> {
    fn from(v: Arc<Vec<T>>) -> Self {
        Points::decoded(v)
    }
}

/// Equal when they hold the same points (a mapped vector is decoded to
/// compare; one that fails to decode equals nothing).
impl<T: FilePoint + PartialEq> PartialEq for Points<T> {
    fn eq(&self, other: &Self) -> bool {
        if self.len != other.len {
            return false;
        }
        if self.key().holds(other) {
            return true;
        }
        match (self.read(), other.read()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
    }
}

impl<T> std::fmt::Debug for Points<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.repr {
            Repr::Decoded(_) => write!(f, "Points({} decoded)", self.len),
            Repr::Mapped { file, section } => write!(
                f,
                "Points({} of section {} of {})",
                self.len,
                section.name(),
                file.path.display()
            ),
        }
    }
}

/// Names a [`Points`]' storage (the decoded vector's allocation, or the
/// mapped file and section) by address, holding it only weakly: the
/// address cannot be reused while the key lives, and the key does not keep
/// the points in memory. A GPU's resident copy is keyed so.
#[derive(Clone)]
pub struct PointsKey {
    addr: usize,
    section: Option<Section>,
    weak: Weak<dyn Any + Send + Sync>,
}

impl PointsKey {
    /// Whether `p` is stored where this key points.
    pub fn holds<T: FilePoint>(&self, p: &Points<T>) -> bool {
        let other = p.key();
        self.addr == other.addr && self.section == other.section
    }
    /// Whether the storage is gone (every handle on it dropped).
    pub fn dead(&self) -> bool {
        self.weak.strong_count() == 0
    }
    /// The storage's address, for an id derived from it.
    pub fn addr(&self) -> usize {
        self.addr
    }
}

impl std::fmt::Debug for PointsKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PointsKey({:x}, {:?})", self.addr, self.section)
    }
}
