//! bellperson / Filecoin parameter files.
//!
//! `.vk`: alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1, delta_g2 as
//! uncompressed points, then a big-endian u32 count and that many
//! uncompressed G1 points (ic).
//! `.params`: the verifying key, then five vectors, each a big-endian u32
//! count followed by uncompressed points: h, l, a, b_g1 (G1) and b_g2 (G2).
//! G1 points are 96 bytes, G2 points 192 bytes (blst/zcash serialization).
//!
//! As in bellperson, verifying-key points are always checked (on the curve
//! and in the subgroup) while query points are checked only on request
//! (they are always checked to lie on the curve); the point at infinity is
//! rejected everywhere except in delta, which is rejected too (an identity
//! delta makes proofs forgeable). Query points are decoded with the curve
//! check only; their subgroup check, when asked for, is a
//! [`SubgroupChecker`]'s (the CPU's, or a GPU's), one section at a time.

use crate::points::Points;
use crate::subgroup::{CpuSubgroupChecker, SubgroupChecker};
use crate::{Error, Result};
use blstrs::{G1Affine, G2Affine};
use group::prime::PrimeCurveAffine;
use group::UncompressedEncoding;
use rayon::prelude::*;
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub const G1_UNCOMPRESSED: usize = 96;
pub const G2_UNCOMPRESSED: usize = 192;

/// Bytes of the fixed part of a verifying key (six points).
pub const VK_FIXED_BYTES: usize = 3 * G1_UNCOMPRESSED + 3 * G2_UNCOMPRESSED;

/// Points decoded per parallel work item: a few milliseconds of work
/// (2–3 µs a point unchecked, tens checked), so even a small section
/// spreads over many cores.
const DECODE_CHUNK: usize = 1 << 10;

/// Points encoded per parallel work item: large enough that rayon's
/// overhead vanishes, small enough to bound the staging buffers.
const CODEC_CHUNK: usize = 1 << 14;

fn format_err(path: &Path, what: impl Into<String>) -> Error {
    Error::Format {
        path: path.to_path_buf(),
        what: what.into(),
    }
}

fn io_err(path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

#[derive(Clone, Copy)]
enum Check {
    /// On the curve and in the subgroup.
    Full,
    /// On the curve only.
    Curve,
}

/// One uncompressed point of either group. `invalid` is the error for a
/// point that fails the check: `(checked fully, checked on the curve only)`.
fn decode_point<G>(
    bytes: &[u8],
    check: Check,
    invalid: (&'static str, &'static str),
) -> std::result::Result<G, &'static str>
where
    G: UncompressedEncoding + PrimeCurveAffine,
{
    let mut enc = G::Uncompressed::default();
    if bytes.len() != enc.as_ref().len() {
        return Err("short point");
    }
    enc.as_mut().copy_from_slice(bytes);
    let (p, err) = match check {
        Check::Full => (G::from_uncompressed(&enc), invalid.0),
        Check::Curve => (G::from_uncompressed_unchecked(&enc), invalid.1),
    };
    let p: G = Option::from(p).ok_or(err)?;
    if bool::from(p.is_identity()) {
        return Err("point at infinity");
    }
    Ok(p)
}

fn decode_g1(bytes: &[u8], check: Check) -> std::result::Result<G1Affine, &'static str> {
    decode_point(
        bytes,
        check,
        (
            "not a valid G1 point (off the curve, outside the subgroup, or a bad encoding)",
            "not a valid G1 point (off the curve or a bad encoding)",
        ),
    )
}

fn decode_g2(bytes: &[u8], check: Check) -> std::result::Result<G2Affine, &'static str> {
    decode_point(
        bytes,
        check,
        (
            "not a valid G2 point (off the curve, outside the subgroup, or a bad encoding)",
            "not a valid G2 point (off the curve or a bad encoding)",
        ),
    )
}

/// A cursor over file bytes that reports where a read fell short.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    path: &'a Path,
}

impl<'a> Reader<'a> {
    fn take(&mut self, len: usize, what: &str) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(len).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(format_err(
                self.path,
                format!(
                    "truncated: {what} needs {len} bytes at offset {} but the file has {} bytes",
                    self.pos,
                    self.bytes.len()
                ),
            ));
        };
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u32(&mut self, what: &str) -> Result<usize> {
        let b = self.take(4, what)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
    }
    fn g1(&mut self, what: &str) -> Result<G1Affine> {
        let at = self.pos;
        let b = self.take(G1_UNCOMPRESSED, what)?;
        decode_g1(b, Check::Full)
            .map_err(|e| format_err(self.path, format!("{what} at offset {at}: {e}")))
    }
    fn g2(&mut self, what: &str) -> Result<G2Affine> {
        let at = self.pos;
        let b = self.take(G2_UNCOMPRESSED, what)?;
        decode_g2(b, Check::Full)
            .map_err(|e| format_err(self.path, format!("{what} at offset {at}: {e}")))
    }
}

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
    pub fn write<W: std::io::Write>(&self, mut w: W) -> std::io::Result<()> {
        w.write_all(&self.alpha_g1.to_uncompressed())?;
        w.write_all(&self.beta_g1.to_uncompressed())?;
        w.write_all(&self.beta_g2.to_uncompressed())?;
        w.write_all(&self.gamma_g2.to_uncompressed())?;
        w.write_all(&self.delta_g1.to_uncompressed())?;
        w.write_all(&self.delta_g2.to_uncompressed())?;
        write_len(&mut w, self.ic.len())?;
        write_g1s(&mut w, &self.ic)
    }
    /// The encoded length in bytes.
    pub fn encoded_len(&self) -> usize {
        VK_FIXED_BYTES + 4 + self.ic.len() * G1_UNCOMPRESSED
    }
    /// `checked`: verify that points are on the curve and in the subgroup.
    /// Returns the key and the number of bytes it took. (The fixed points
    /// are checked whatever `checked` says, as bellperson does; they are
    /// few.)
    pub fn read_bytes(bytes: &[u8], path: &Path, checked: bool) -> Result<(Self, usize)> {
        let mut r = Reader {
            bytes,
            pos: 0,
            path,
        };
        let alpha_g1 = r.g1("vk alpha_g1")?;
        let beta_g1 = r.g1("vk beta_g1")?;
        let beta_g2 = r.g2("vk beta_g2")?;
        let gamma_g2 = r.g2("vk gamma_g2")?;
        let delta_g1 = r.g1("vk delta_g1")?;
        let delta_g2 = r.g2("vk delta_g2")?;
        let count = r.u32("vk ic length")?;
        let start = r.pos;
        let raw = r.take(
            count.saturating_mul(G1_UNCOMPRESSED),
            &format!("vk ic ({count} points)"),
        )?;
        let check = if checked { Check::Full } else { Check::Curve };
        let ic = decode_g1_slice(
            raw,
            check,
            path,
            Span {
                section: "vk ic",
                first: 0,
                offset: start as u64,
            },
        )?;
        Ok((
            VerifyingKey {
                alpha_g1,
                beta_g1,
                beta_g2,
                gamma_g2,
                delta_g1,
                delta_g2,
                ic,
            },
            r.pos,
        ))
    }
    /// A `.vk` file: the key and nothing after it. Only the key's bytes are
    /// read, so a large file given by mistake (a `.params` file, which
    /// starts with its key) is refused without being read whole.
    pub fn read_file(path: &Path, checked: bool) -> Result<Self> {
        use std::io::Read;
        let mut file = open_regular(path, "verifying key")?;
        let file_len = file.metadata().map_err(|e| io_err(path, e))?.len();
        let head = (VK_FIXED_BYTES + 4) as u64;
        let mut bytes = Vec::new();
        (&mut file)
            .take(head)
            .read_to_end(&mut bytes)
            .map_err(|e| io_err(path, e))?;
        if bytes.len() as u64 == head {
            let count = u32::from_be_bytes(bytes[VK_FIXED_BYTES..].try_into().expect("4 bytes"));
            let ic_bytes = u64::from(count) * G1_UNCOMPRESSED as u64;
            (&mut file)
                .take(ic_bytes)
                .read_to_end(&mut bytes)
                .map_err(|e| io_err(path, e))?;
        }
        let (vk, used) = Self::read_bytes(&bytes, path, checked)?;
        if used as u64 != file_len {
            let trailing = file_len - used as u64;
            // Five section lengths would follow a key in a .params file.
            let hint = if trailing >= 5 * 4 {
                "; a .params file starts with its verifying key: pass the .vk file written beside it"
            } else {
                ""
            };
            return Err(format_err(
                path,
                format!(
                    "{trailing} trailing bytes after the verifying key (which ends at offset \
                     {used}){hint}"
                ),
            ));
        }
        Ok(vk)
    }
    pub fn write_file(&self, path: &Path) -> Result<()> {
        write_atomically(path, |w| self.write(w))
    }
}

fn write_len<W: Write>(w: &mut W, len: usize) -> std::io::Result<()> {
    let len = u32::try_from(len).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("vector of {len} points exceeds the format's u32 count"),
        )
    })?;
    w.write_all(&len.to_be_bytes())
}

/// Encode in parallel chunks, write in order.
fn write_points<W: Write, T: Sync, const N: usize>(
    w: &mut W,
    points: &[T],
    enc: impl Fn(&T) -> [u8; N] + Sync,
) -> std::io::Result<()> {
    for block in points.chunks(CODEC_CHUNK * 8) {
        let encoded: Vec<Vec<u8>> = block
            .par_chunks(CODEC_CHUNK / 4)
            .map(|c| c.iter().flat_map(&enc).collect())
            .collect();
        for e in encoded {
            w.write_all(&e)?;
        }
    }
    Ok(())
}

fn write_g1s<W: Write>(w: &mut W, points: &[G1Affine]) -> std::io::Result<()> {
    write_points(w, points, |p| p.to_uncompressed())
}

fn write_g2s<W: Write>(w: &mut W, points: &[G2Affine]) -> std::io::Result<()> {
    write_points(w, points, |p| p.to_uncompressed())
}

/// Opens a file that is to be read as `what`, refusing a directory (which
/// opens on Linux, then fails to map or read with an obscure error).
pub(crate) fn open_regular(path: &Path, what: &str) -> Result<std::fs::File> {
    let file = std::fs::File::open(path).map_err(|e| io_err(path, e))?;
    if file.metadata().map_err(|e| io_err(path, e))?.is_dir() {
        return Err(format_err(
            path,
            format!("is a directory, not a {what} file"),
        ));
    }
    Ok(file)
}

/// Write through a temporary file in the same directory and rename, so a
/// crash never leaves a truncated file under the final name.
pub(crate) fn write_atomically(
    path: &Path,
    f: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> Result<()> {
    let mut tmp_name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    tmp_name.push(format!(".tmp{}", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let result = (|| {
        let file = std::fs::File::create(&tmp)?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
        f(&mut w)?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io_err(path, e)
    })
}

/// Where a run of points lies: for error messages.
#[derive(Clone, Copy)]
struct Span<'a> {
    section: &'a str,
    /// Index of the run's first point within its section.
    first: usize,
    /// File offset of the run's first point.
    offset: u64,
}

fn decode_g1_slice(raw: &[u8], check: Check, path: &Path, span: Span) -> Result<Vec<G1Affine>> {
    decode_slice(raw, G1_UNCOMPRESSED, check, path, span, decode_g1)
}

fn decode_g2_slice(raw: &[u8], check: Check, path: &Path, span: Span) -> Result<Vec<G2Affine>> {
    decode_slice(raw, G2_UNCOMPRESSED, check, path, span, decode_g2)
}

/// Decode consecutive points in parallel; an error names the section, the
/// point's index and its file offset. The output is allocated once at its
/// final size and filled in place: a section of a large Filecoin file is
/// gigabytes, and collecting per-thread pieces would hold it twice.
fn decode_slice<T: Send + Sync + Copy + Default>(
    raw: &[u8],
    size: usize,
    check: Check,
    path: &Path,
    span: Span,
    dec: fn(&[u8], Check) -> std::result::Result<T, &'static str>,
) -> Result<Vec<T>> {
    let mut out = vec![T::default(); raw.len() / size];
    decode_slice_into(raw, &mut out, size, check, path, span, dec)?;
    Ok(out)
}

/// [`decode_slice`] into `out`, which holds exactly `raw.len() / size`
/// points (a caller's buffer: pinned staging, a run of a larger vector).
fn decode_slice_into<T: Send + Sync>(
    raw: &[u8],
    out: &mut [T],
    size: usize,
    check: Check,
    path: &Path,
    span: Span,
    dec: fn(&[u8], Check) -> std::result::Result<T, &'static str>,
) -> Result<()> {
    debug_assert_eq!(out.len() * size, raw.len());
    out.par_chunks_mut(DECODE_CHUNK)
        .zip(raw.par_chunks(DECODE_CHUNK * size))
        .enumerate()
        .try_for_each(|(c, (dst, src))| {
            for (j, (d, b)) in dst.iter_mut().zip(src.chunks_exact(size)).enumerate() {
                *d = dec(b, check).map_err(|e| {
                    let i = c * DECODE_CHUNK + j;
                    format_err(
                        path,
                        format!(
                            "{} point {} at offset {}: {e}",
                            span.section,
                            span.first + i,
                            span.offset + (i * size) as u64
                        ),
                    )
                })?;
            }
            Ok(())
        })
}

/// The subgroup check of a decoded run of points by `checker`: a point
/// outside is an error naming the file, the section, the point's index and
/// its file offset.
fn check_subgroup<T>(
    points: &[T],
    size: usize,
    checker: &dyn SubgroupChecker,
    first_outside: fn(&dyn SubgroupChecker, &[T]) -> Result<Option<usize>>,
    path: &Path,
    span: Span,
) -> Result<()> {
    match first_outside(checker, points)? {
        None => Ok(()),
        Some(i) => Err(format_err(
            path,
            format!(
                "{} point {} at offset {}: on the curve but not in the prime-order subgroup \
                 (checked by {})",
                span.section,
                span.first + i,
                span.offset + (i * size) as u64,
                checker.name()
            ),
        )),
    }
}

fn g1_outside(c: &dyn SubgroupChecker, p: &[G1Affine]) -> Result<Option<usize>> {
    c.first_outside_g1(p)
}

fn g2_outside(c: &dyn SubgroupChecker, p: &[G2Affine]) -> Result<Option<usize>> {
    c.first_outside_g2(p)
}

/// Decodes a run of G1 points (curve check) and, with a checker, checks
/// their subgroup.
fn decode_g1_run(
    raw: &[u8],
    checker: Option<&dyn SubgroupChecker>,
    path: &Path,
    span: Span,
) -> Result<Vec<G1Affine>> {
    let points = decode_g1_slice(raw, Check::Curve, path, span)?;
    if let Some(c) = checker {
        check_subgroup(&points, G1_UNCOMPRESSED, c, g1_outside, path, span)?;
    }
    Ok(points)
}

fn decode_g2_run(
    raw: &[u8],
    checker: Option<&dyn SubgroupChecker>,
    path: &Path,
    span: Span,
) -> Result<Vec<G2Affine>> {
    let points = decode_g2_slice(raw, Check::Curve, path, span)?;
    if let Some(c) = checker {
        check_subgroup(&points, G2_UNCOMPRESSED, c, g2_outside, path, span)?;
    }
    Ok(points)
}

/// The CPU checker when `checked`, else none.
fn cpu_if(checked: bool) -> Option<&'static dyn SubgroupChecker> {
    checked.then_some(&CpuSubgroupChecker as &dyn SubgroupChecker)
}

/// Groth16 parameters: the verifying key, decoded, and the five query
/// vectors, each decoded in host memory or left in a mapped file
/// ([`Points`]; [`Self::mapped`]).
#[derive(Clone, Debug)]
pub struct Parameters {
    pub vk: VerifyingKey,
    pub h: Points<G1Affine>,
    pub l: Points<G1Affine>,
    pub a: Points<G1Affine>,
    pub b_g1: Points<G1Affine>,
    pub b_g2: Points<G2Affine>,
}

/// Points written or copied per run when a section is streamed (96 MB of
/// G1).
const RUN_POINTS: usize = 1 << 20;

impl Parameters {
    /// The parameters of a mapped file with their points left in it: only
    /// the verifying key is decoded (when the file was opened); the query
    /// points are decoded as they are read, so a prover that uploads them
    /// to a device never holds them whole in host memory.
    pub fn mapped(file: Arc<MappedParameters>) -> Result<Self> {
        Ok(Parameters {
            vk: file.vk.clone(),
            h: Points::mapped(file.clone(), Section::H)?,
            l: Points::mapped(file.clone(), Section::L)?,
            a: Points::mapped(file.clone(), Section::A)?,
            b_g1: Points::mapped(file.clone(), Section::BG1)?,
            b_g2: Points::mapped(file, Section::BG2)?,
        })
    }
    /// Whether any query vector is read from a mapped file.
    pub fn is_mapped(&self) -> bool {
        self.h.file().is_some()
            || self.l.file().is_some()
            || self.a.file().is_some()
            || self.b_g1.file().is_some()
            || self.b_g2.file().is_some()
    }
    /// The same parameters with every vector decoded in host memory.
    pub fn to_decoded(&self) -> Result<Self> {
        Ok(Parameters {
            vk: self.vk.clone(),
            h: self.h.to_decoded()?,
            l: self.l.to_decoded()?,
            a: self.a.to_decoded()?,
            b_g1: self.b_g1.to_decoded()?,
            b_g2: self.b_g2.to_decoded()?,
        })
    }
    pub fn write<W: std::io::Write>(&self, w: W) -> std::io::Result<()> {
        let io = |e: Error| std::io::Error::other(e.to_string());
        let mut out = ParamsWriter::new(w, &self.vk)?;
        for (section, v) in [
            (Section::H, &self.h),
            (Section::L, &self.l),
            (Section::A, &self.a),
            (Section::BG1, &self.b_g1),
        ] {
            out.begin(section, v.len())?;
            for lo in (0..v.len()).step_by(RUN_POINTS) {
                let hi = (lo + RUN_POINTS).min(v.len());
                out.g1(&v.read_range(lo..hi).map_err(io)?)?;
            }
        }
        let v = &self.b_g2;
        out.begin(Section::BG2, v.len())?;
        for lo in (0..v.len()).step_by(RUN_POINTS) {
            let hi = (lo + RUN_POINTS).min(v.len());
            out.g2(&v.read_range(lo..hi).map_err(io)?)?;
        }
        out.finish().map(|_| ())
    }
    pub fn write_file(&self, path: &Path) -> Result<()> {
        write_atomically(path, |w| self.write(w))
    }
    /// Memory-map and decode the whole file (in parallel).
    pub fn read_file(path: &Path, checked: bool) -> Result<Self> {
        MappedParameters::open(path)?.load(checked)
    }
    /// Decode parameters held in memory; `path` only names them in errors.
    pub fn read_bytes(bytes: &[u8], path: &Path, checked: bool) -> Result<Self> {
        Self::read_bytes_with(bytes, path, cpu_if(checked))
    }
    /// [`Self::read_bytes`] with the query points' subgroup checked by
    /// `checker` (None: not checked).
    pub fn read_bytes_with(
        bytes: &[u8],
        path: &Path,
        checker: Option<&dyn SubgroupChecker>,
    ) -> Result<Self> {
        let (vk, layout) = parse_layout(bytes, path)?;
        load_from(bytes, &vk, &layout, path, checker)
    }
}

/// Where parameters go as they are made, in file order: the verifying
/// key, then each of h, l, a, b_g1 (G1) and b_g2 (G2) announced with its
/// length by [`ParamsSink::begin`] and then given in runs of points. A
/// generator that hands each run over as soon as it is computed never
/// holds a whole query (the 32 GiB PoRep's h alone is 12 GiB).
pub trait ParamsSink {
    fn vk(&mut self, vk: &VerifyingKey) -> std::io::Result<()>;
    fn begin(&mut self, section: Section, len: usize) -> std::io::Result<()>;
    fn g1(&mut self, points: &[G1Affine]) -> std::io::Result<()>;
    fn g2(&mut self, points: &[G2Affine]) -> std::io::Result<()>;
}

fn misuse(what: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, what)
}

/// The order of a stream of sections: which section is open, how many of
/// its points are still due. Shared by the file writer and the collector
/// so that both refuse the same misuse.
#[derive(Debug, Default)]
struct SectionOrder {
    /// Sections begun so far (0..=5).
    begun: usize,
    /// Points the open section still expects.
    due: usize,
}

impl SectionOrder {
    fn begin(&mut self, section: Section, len: usize) -> std::io::Result<()> {
        let want = Section::ALL.get(self.begun).copied();
        if want != Some(section) {
            return Err(misuse(format!(
                "parameter section {} begun out of order (expected {})",
                section.name(),
                want.map_or("no further section", Section::name)
            )));
        }
        self.close_check()?;
        u32::try_from(len).map_err(|_| {
            misuse(format!(
                "section {} of {len} points exceeds the format's u32 count",
                section.name()
            ))
        })?;
        self.begun += 1;
        self.due = len;
        Ok(())
    }
    fn close_check(&self) -> std::io::Result<()> {
        if self.due != 0 {
            let open = Section::ALL[self.begun - 1];
            return Err(misuse(format!(
                "section {} ended {} points short",
                open.name(),
                self.due
            )));
        }
        Ok(())
    }
    fn points(&mut self, g2: bool, count: usize) -> std::io::Result<Section> {
        let Some(open) = self.begun.checked_sub(1).map(|i| Section::ALL[i]) else {
            return Err(misuse("points given before any section was begun".into()));
        };
        if (open == Section::BG2) != g2 {
            return Err(misuse(format!(
                "{} points given for section {}",
                if g2 { "G2" } else { "G1" },
                open.name()
            )));
        }
        if count > self.due {
            return Err(misuse(format!(
                "{count} points given for section {} which expects {} more",
                open.name(),
                self.due
            )));
        }
        self.due -= count;
        Ok(open)
    }
    fn finish(&self) -> std::io::Result<()> {
        if self.begun != Section::ALL.len() {
            return Err(misuse(format!(
                "parameters ended after {} of 5 sections",
                self.begun
            )));
        }
        self.close_check()
    }
}

/// Writes a `.params` stream section by section (the format is the one
/// [`Parameters::write`] produces, which goes through this writer). Each
/// section's length is written when it is begun and must then be met
/// exactly: a short or overlong section, or one out of order, is an
/// `InvalidInput` error, never a file that reads back differently.
pub struct ParamsWriter<W: Write> {
    w: W,
    order: SectionOrder,
}

impl<W: Write> ParamsWriter<W> {
    /// Writes the verifying key (ic included: it comes before the queries).
    pub fn new(mut w: W, vk: &VerifyingKey) -> std::io::Result<Self> {
        vk.write(&mut w)?;
        Ok(ParamsWriter {
            w,
            order: SectionOrder::default(),
        })
    }
    pub fn begin(&mut self, section: Section, len: usize) -> std::io::Result<()> {
        self.order.begin(section, len)?;
        write_len(&mut self.w, len)
    }
    pub fn g1(&mut self, points: &[G1Affine]) -> std::io::Result<()> {
        self.order.points(false, points.len())?;
        write_g1s(&mut self.w, points)
    }
    pub fn g2(&mut self, points: &[G2Affine]) -> std::io::Result<()> {
        self.order.points(true, points.len())?;
        write_g2s(&mut self.w, points)
    }
    /// Checks that all five sections are complete; returns the inner writer
    /// (not flushed).
    pub fn finish(self) -> std::io::Result<W> {
        self.order.finish()?;
        Ok(self.w)
    }
}

/// A [`ParamsSink`] that writes a `.params` file: the verifying key is the
/// first thing given, so the writer opens with it.
pub enum ParamsFileSink<W: Write> {
    /// Waiting for the verifying key.
    Start(Option<W>),
    Writing(ParamsWriter<W>),
}

impl<W: Write> ParamsFileSink<W> {
    pub fn new(w: W) -> Self {
        ParamsFileSink::Start(Some(w))
    }
    fn writer(&mut self) -> std::io::Result<&mut ParamsWriter<W>> {
        match self {
            ParamsFileSink::Writing(w) => Ok(w),
            ParamsFileSink::Start(_) => Err(misuse(
                "parameter sections given before the verifying key".into(),
            )),
        }
    }
    /// The inner writer once every section is complete.
    pub fn finish(self) -> std::io::Result<W> {
        match self {
            ParamsFileSink::Writing(w) => w.finish(),
            ParamsFileSink::Start(_) => Err(misuse("no verifying key was written".into())),
        }
    }
}

impl<W: Write> ParamsSink for ParamsFileSink<W> {
    fn vk(&mut self, vk: &VerifyingKey) -> std::io::Result<()> {
        match self {
            ParamsFileSink::Start(w) => {
                let w = w.take().ok_or_else(|| misuse("writer lost".into()))?;
                *self = ParamsFileSink::Writing(ParamsWriter::new(w, vk)?);
                Ok(())
            }
            ParamsFileSink::Writing(_) => Err(misuse("a second verifying key".into())),
        }
    }
    fn begin(&mut self, section: Section, len: usize) -> std::io::Result<()> {
        self.writer()?.begin(section, len)
    }
    fn g1(&mut self, points: &[G1Affine]) -> std::io::Result<()> {
        self.writer()?.g1(points)
    }
    fn g2(&mut self, points: &[G2Affine]) -> std::io::Result<()> {
        self.writer()?.g2(points)
    }
}

/// A [`ParamsSink`] that keeps the parameters in memory.
#[derive(Default)]
pub struct ParamsCollector {
    vk: Option<VerifyingKey>,
    order: SectionOrder,
    g1: [Vec<G1Affine>; 4],
    b_g2: Vec<G2Affine>,
}

impl ParamsCollector {
    pub fn new() -> Self {
        Self::default()
    }
    /// The parameters, once the key and every section are complete.
    pub fn finish(self) -> std::io::Result<Parameters> {
        self.order.finish()?;
        let vk = self
            .vk
            .ok_or_else(|| misuse("no verifying key was given".into()))?;
        let [h, l, a, b_g1] = self.g1;
        Ok(Parameters {
            vk,
            h: h.into(),
            l: l.into(),
            a: a.into(),
            b_g1: b_g1.into(),
            b_g2: self.b_g2.into(),
        })
    }
}

impl ParamsSink for ParamsCollector {
    fn vk(&mut self, vk: &VerifyingKey) -> std::io::Result<()> {
        if self.vk.is_some() {
            return Err(misuse("a second verifying key".into()));
        }
        self.vk = Some(vk.clone());
        Ok(())
    }
    fn begin(&mut self, section: Section, len: usize) -> std::io::Result<()> {
        self.order.begin(section, len)?;
        match section {
            Section::BG2 => self.b_g2.reserve_exact(len),
            s => self.g1[s.index()].reserve_exact(len),
        }
        Ok(())
    }
    fn g1(&mut self, points: &[G1Affine]) -> std::io::Result<()> {
        let s = self.order.points(false, points.len())?;
        self.g1[s.index()].extend_from_slice(points);
        Ok(())
    }
    fn g2(&mut self, points: &[G2Affine]) -> std::io::Result<()> {
        self.order.points(true, points.len())?;
        self.b_g2.extend_from_slice(points);
        Ok(())
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

impl Section {
    pub const ALL: [Section; 5] = [
        Section::H,
        Section::L,
        Section::A,
        Section::BG1,
        Section::BG2,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Section::H => "h",
            Section::L => "l",
            Section::A => "a",
            Section::BG1 => "b_g1",
            Section::BG2 => "b_g2",
        }
    }
    pub fn point_size(self) -> usize {
        match self {
            Section::BG2 => G2_UNCOMPRESSED,
            _ => G1_UNCOMPRESSED,
        }
    }
    fn index(self) -> usize {
        match self {
            Section::H => 0,
            Section::L => 1,
            Section::A => 2,
            Section::BG1 => 3,
            Section::BG2 => 4,
        }
    }
}

/// Where each section lies in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamsLayout {
    /// Byte offset of the first point of each section, and its point count,
    /// in the order h, l, a, b_g1, b_g2.
    pub sections: [(Section, u64, usize); 5],
    pub file_len: u64,
}

fn parse_layout(bytes: &[u8], path: &Path) -> Result<(VerifyingKey, ParamsLayout)> {
    let (vk, vk_len) = VerifyingKey::read_bytes(bytes, path, true)?;
    if vk_len == bytes.len() {
        return Err(format_err(
            path,
            "truncated: it ends with its verifying key (a .vk file?); parameters follow the key",
        ));
    }
    let mut r = Reader {
        bytes,
        pos: vk_len,
        path,
    };
    let mut sections = [(Section::H, 0u64, 0usize); 5];
    for (slot, section) in sections.iter_mut().zip(Section::ALL) {
        let count = r.u32(&format!("the {} length", section.name()))?;
        let start = r.pos;
        r.take(
            count.saturating_mul(section.point_size()),
            &format!("section {} ({count} points)", section.name()),
        )?;
        *slot = (section, start as u64, count);
    }
    if r.pos != bytes.len() {
        return Err(format_err(
            path,
            format!(
                "{} trailing bytes after the b_g2 section (which ends at offset {})",
                bytes.len() - r.pos,
                r.pos
            ),
        ));
    }
    if bool::from(vk.delta_g1.is_identity()) || bool::from(vk.delta_g2.is_identity()) {
        return Err(format_err(path, "vk delta is the point at infinity"));
    }
    Ok((
        vk,
        ParamsLayout {
            sections,
            file_len: bytes.len() as u64,
        },
    ))
}

fn section_bytes<'a>(bytes: &'a [u8], layout: &ParamsLayout, section: Section) -> &'a [u8] {
    let (_, off, count) = layout.sections[section.index()];
    let start = off as usize;
    &bytes[start..start + count * section.point_size()]
}

fn load_from(
    bytes: &[u8],
    vk: &VerifyingKey,
    layout: &ParamsLayout,
    path: &Path,
    checker: Option<&dyn SubgroupChecker>,
) -> Result<Parameters> {
    // Sections decode in parallel; each is checked as soon as it is
    // decoded, so a GPU checker works on one while the cores decode the
    // next.
    let g1 = |s: Section| {
        let off = layout.sections[s.index()].1;
        decode_g1_run(
            section_bytes(bytes, layout, s),
            checker,
            path,
            Span {
                section: s.name(),
                first: 0,
                offset: off,
            },
        )
    };
    let (h, (l, (a, (b_g1, b_g2)))) = rayon::join(
        || g1(Section::H),
        || {
            rayon::join(
                || g1(Section::L),
                || {
                    rayon::join(
                        || g1(Section::A),
                        || {
                            rayon::join(
                                || g1(Section::BG1),
                                || {
                                    let s = Section::BG2;
                                    let off = layout.sections[s.index()].1;
                                    decode_g2_run(
                                        section_bytes(bytes, layout, s),
                                        checker,
                                        path,
                                        Span {
                                            section: s.name(),
                                            first: 0,
                                            offset: off,
                                        },
                                    )
                                },
                            )
                        },
                    )
                },
            )
        },
    );
    Ok(Parameters {
        vk: vk.clone(),
        h: h?.into(),
        l: l?.into(),
        a: a?.into(),
        b_g1: b_g1?.into(),
        b_g2: b_g2?.into(),
    })
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
        let file = open_regular(path, "parameter")?;
        #[allow(unsafe_code)]
        // SAFETY: the mapping is read-only and parameter files are never
        // modified in place (writers replace them by rename); were another
        // process to truncate the file while mapped, reads could fault,
        // which is the documented caveat of every file mapping.
        let mmap = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| io_err(path, e))?;
        let (vk, layout) = parse_layout(&mmap, path)?;
        Ok(MappedParameters {
            path: path.to_path_buf(),
            vk,
            layout,
            mmap,
        })
    }
    pub fn len(&self, section: Section) -> usize {
        self.layout.sections[section.index()].2
    }
    fn check_range(&self, section: Section, range: &Range<usize>) -> Result<()> {
        let len = self.len(section);
        if range.start > range.end || range.end > len {
            return Err(Error::ShapeMismatch {
                index: 0,
                what: format!(
                    "{}: range {}..{} of section {} which has {len} points",
                    self.path.display(),
                    range.start,
                    range.end,
                    section.name()
                ),
            });
        }
        Ok(())
    }
    /// Decode a range of a G1 section (h, l, a or b_g1); `checked`: with
    /// the subgroup checked on the CPU.
    pub fn g1(
        &self,
        section: Section,
        range: Range<usize>,
        checked: bool,
    ) -> Result<Vec<G1Affine>> {
        self.g1_with(section, range, cpu_if(checked))
    }
    /// [`Self::g1`] with the subgroup checked by `checker` (None: not
    /// checked).
    pub fn g1_with(
        &self,
        section: Section,
        range: Range<usize>,
        checker: Option<&dyn SubgroupChecker>,
    ) -> Result<Vec<G1Affine>> {
        let raw = self.run_bytes(section, false, &range)?;
        decode_g1_run(raw, checker, &self.path, self.span(section, range.start))
    }
    /// Decode a range of b_g2; `checked`: with the subgroup checked on the
    /// CPU.
    pub fn g2(&self, range: Range<usize>, checked: bool) -> Result<Vec<G2Affine>> {
        self.g2_with(range, cpu_if(checked))
    }
    /// [`Self::g2`] with the subgroup checked by `checker`.
    pub fn g2_with(
        &self,
        range: Range<usize>,
        checker: Option<&dyn SubgroupChecker>,
    ) -> Result<Vec<G2Affine>> {
        let raw = self.run_bytes(Section::BG2, true, &range)?;
        decode_g2_run(
            raw,
            checker,
            &self.path,
            self.span(Section::BG2, range.start),
        )
    }
    /// Decodes `out.len()` points of G1 section `section` from its point
    /// `first` into `out` (the curve check only, as parameters are proved
    /// with), in parallel: a backend streaming a section to a device
    /// decodes it a buffer at a time instead of holding it whole.
    pub fn g1_into(&self, section: Section, first: usize, out: &mut [G1Affine]) -> Result<()> {
        let range = first..first.saturating_add(out.len());
        let raw = self.run_bytes(section, false, &range)?;
        decode_slice_into(
            raw,
            out,
            G1_UNCOMPRESSED,
            Check::Curve,
            &self.path,
            self.span(section, first),
            decode_g1,
        )
    }
    /// [`Self::g1_into`] for b_g2.
    pub fn g2_into(&self, first: usize, out: &mut [G2Affine]) -> Result<()> {
        let range = first..first.saturating_add(out.len());
        let raw = self.run_bytes(Section::BG2, true, &range)?;
        decode_slice_into(
            raw,
            out,
            G2_UNCOMPRESSED,
            Check::Curve,
            &self.path,
            self.span(Section::BG2, first),
            decode_g2,
        )
    }
    /// The bytes of points `range` of `section`, checked to be of the
    /// group asked for and inside the section.
    fn run_bytes(&self, section: Section, g2: bool, range: &Range<usize>) -> Result<&[u8]> {
        if (section == Section::BG2) != g2 {
            return Err(Error::ShapeMismatch {
                index: 0,
                what: format!(
                    "{}: section {} is not a {} section",
                    self.path.display(),
                    section.name(),
                    if g2 { "G2" } else { "G1" }
                ),
            });
        }
        self.check_range(section, range)?;
        let size = section.point_size();
        Ok(&self.raw(section)[range.start * size..range.end * size])
    }
    fn span(&self, section: Section, first: usize) -> Span<'static> {
        Span {
            section: section.name(),
            first,
            offset: self.layout.sections[section.index()].1 + (first * section.point_size()) as u64,
        }
    }
    /// The raw bytes of a section (uncompressed points), for backends that
    /// decode on the device.
    pub fn raw(&self, section: Section) -> &[u8] {
        section_bytes(&self.mmap, &self.layout, section)
    }
    /// Decodes every point with the curve check and checks its subgroup
    /// with `checker`, a run at a time, keeping nothing: the check of a
    /// file whose points stay in it ([`Parameters::mapped`]) without
    /// holding it decoded.
    pub fn check_points(&self, checker: &dyn SubgroupChecker) -> Result<()> {
        for section in Section::ALL {
            let n = self.len(section);
            for lo in (0..n).step_by(RUN_POINTS) {
                let range = lo..(lo + RUN_POINTS).min(n);
                if section == Section::BG2 {
                    self.g2_with(range, Some(checker))?;
                } else {
                    self.g1_with(section, range, Some(checker))?;
                }
            }
        }
        Ok(())
    }
    /// Decode every section; `checked`: with the subgroup checked on the
    /// CPU.
    pub fn load(&self, checked: bool) -> Result<Parameters> {
        self.load_with(cpu_if(checked))
    }
    /// Decode every section, each checked by `checker` once decoded (None:
    /// the curve check only).
    pub fn load_with(&self, checker: Option<&dyn SubgroupChecker>) -> Result<Parameters> {
        load_from(&self.mmap, &self.vk, &self.layout, &self.path, checker)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vk() -> VerifyingKey {
        let g1 = G1Affine::generator();
        let g2 = G2Affine::generator();
        VerifyingKey {
            alpha_g1: g1,
            beta_g1: g1,
            beta_g2: g2,
            gamma_g2: g2,
            delta_g1: g1,
            delta_g2: g2,
            ic: vec![g1; 2],
        }
    }

    /// Sections out of order, short, overlong, of the wrong group or
    /// missing are refused by both sinks, never written as a file that
    /// reads back otherwise.
    #[test]
    fn the_writer_refuses_misuse() {
        let g1 = [G1Affine::generator(); 3];
        let g2 = [G2Affine::generator(); 2];
        type Step = fn(&mut dyn ParamsSink, &[G1Affine], &[G2Affine]) -> std::io::Result<()>;
        let cases: [(&str, Step); 6] = [
            ("out of order", |s, _, _| s.begin(Section::L, 1)),
            ("ended 1 points short", |s, p, _| {
                s.begin(Section::H, 3)?;
                s.g1(&p[..2])?;
                s.begin(Section::L, 0)
            }),
            ("expects 2 more", |s, p, _| {
                s.begin(Section::H, 2)?;
                s.g1(p)
            }),
            ("G2 points given for section h", |s, _, q| {
                s.begin(Section::H, 2)?;
                s.g2(q)
            }),
            ("before any section", |s, p, _| s.g1(p)),
            ("after 2 of 5 sections", |s, p, _| {
                s.begin(Section::H, 1)?;
                s.g1(&p[..1])?;
                s.begin(Section::L, 0)
            }),
        ];
        for (want, step) in cases {
            let mut file = ParamsFileSink::new(Vec::new());
            let mut mem = ParamsCollector::new();
            for sink in [&mut file as &mut dyn ParamsSink, &mut mem] {
                sink.vk(&vk()).unwrap();
                let r = step(sink, &g1, &g2);
                let msg = match r {
                    Err(e) => e.to_string(),
                    Ok(()) => String::new(),
                };
                if want.starts_with("after") {
                    assert!(msg.is_empty(), "{want}: {msg}");
                } else {
                    assert!(msg.contains(want), "{want}: {msg}");
                }
            }
            if want.starts_with("after") {
                let e = file.finish().unwrap_err().to_string();
                assert!(e.contains(want), "{e}");
                let e = mem.finish().unwrap_err().to_string();
                assert!(e.contains(want), "{e}");
            }
        }
        // Sections before the key: refused.
        let mut file = ParamsFileSink::new(Vec::new());
        assert!(file.begin(Section::H, 0).is_err());
        // A complete stream reads back as what was given.
        let mut file = ParamsFileSink::new(Vec::new());
        file.vk(&vk()).unwrap();
        for s in [Section::H, Section::L, Section::A, Section::BG1] {
            file.begin(s, 3).unwrap();
            file.g1(&g1[..1]).unwrap();
            file.g1(&g1[1..]).unwrap();
        }
        file.begin(Section::BG2, 2).unwrap();
        file.g2(&g2).unwrap();
        let bytes = file.finish().unwrap();
        let p = Parameters::read_bytes(&bytes, Path::new("t"), true).unwrap();
        assert_eq!((p.h.len(), p.b_g2.len(), p.vk), (3, 2, vk()));
    }
}
