//! Which Filecoin circuit a proof or a parameter file belongs to, and the
//! circuits themselves as filecoin-proofs builds them.
//!
//! A [`CircuitId`] is a registered proof of filecoin-proofs-api (the numbering
//! Lotus, Curio and the chain use). Its cache identifier, and so its parameter
//! file names, come from storage-proofs' own `CacheableParameters`, so they
//! match the production files by construction. Blank circuits (for parameter
//! generation) come from each `CompoundProof::blank_circuit`.

use crate::{Error, Fact, Readable, Result};
use cuzk_core::compiled::CompiledCircuit;
use cuzk_core::generator::{FixedBaseEngine, GenerationEvent, GenerationTimings};
use filecoin_proofs::constants::{
    SECTOR_SIZE_2_KIB, SECTOR_SIZE_32_GIB, SECTOR_SIZE_512_MIB, SECTOR_SIZE_64_GIB,
    SECTOR_SIZE_8_MIB,
};
use filecoin_proofs::{DefaultPieceHasher, DefaultTreeHasher, MerkleTreeTrait};
use filecoin_proofs_api::{RegisteredPoStProof, RegisteredSealProof, RegisteredUpdateProof};
use std::fmt;
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_porep::stacked::{StackedCompound, StackedDrg};
use storage_proofs_post::fallback::{FallbackPoSt, FallbackPoStCircuit, FallbackPoStCompound};
use storage_proofs_update::{
    EmptySectorUpdate, EmptySectorUpdateCircuit, EmptySectorUpdateCompound,
};

/// Runs `$f::<Tree>(args..)` with the merkle-tree shape (arity of base,
/// sub and top trees) that filecoin-proofs uses for a sector size.
macro_rules! with_tree_shape {
    ($sector_size:expr, $f:ident $(, $arg:expr)* $(,)?) => {{
        use $crate::circuits::shapes::*;
        match $sector_size {
            SECTOR_SIZE_2_KIB | SECTOR_SIZE_8_MIB | SECTOR_SIZE_512_MIB => {
                $f::<filecoin_proofs::SectorShapeBase>($($arg),*)
            }
            SECTOR_SIZE_4_KIB | SECTOR_SIZE_16_MIB | SECTOR_SIZE_1_GIB => {
                $f::<filecoin_proofs::SectorShapeSub2>($($arg),*)
            }
            SECTOR_SIZE_16_KIB | SECTOR_SIZE_32_GIB => {
                $f::<filecoin_proofs::SectorShapeSub8>($($arg),*)
            }
            SECTOR_SIZE_32_KIB | SECTOR_SIZE_64_GIB => {
                $f::<filecoin_proofs::SectorShapeTop2>($($arg),*)
            }
            other => Err($crate::Error::UnsupportedSectorSize(other)),
        }
    }};
}
pub(crate) use with_tree_shape;

pub(crate) mod shapes {
    pub use filecoin_proofs::constants::{
        SECTOR_SIZE_16_KIB, SECTOR_SIZE_16_MIB, SECTOR_SIZE_1_GIB, SECTOR_SIZE_2_KIB,
        SECTOR_SIZE_32_GIB, SECTOR_SIZE_32_KIB, SECTOR_SIZE_4_KIB, SECTOR_SIZE_512_MIB,
        SECTOR_SIZE_64_GIB, SECTOR_SIZE_8_MIB,
    };
}

/// The tree shapes filecoin-proofs uses all hash with Poseidon; the circuits
/// below rely on that (the C1 output's replica id is a Poseidon domain).
pub(crate) trait FilTree: 'static + MerkleTreeTrait<Hasher = DefaultTreeHasher> {}
impl<T: 'static + MerkleTreeTrait<Hasher = DefaultTreeHasher>> FilTree for T {}

/// The four kinds of Filecoin SNARK.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProofKind {
    /// PoRep commit phase 2 (seal proof).
    Porep,
    /// WinningPoSt (one partition, a few challenged sectors).
    WinningPost,
    /// WindowPoSt (every sector of a deadline, in partitions).
    WindowPost,
    /// Empty-sector update (SnapDeals).
    SnapDeals,
}

impl ProofKind {
    pub const ALL: [ProofKind; 4] = [
        ProofKind::Porep,
        ProofKind::WinningPost,
        ProofKind::WindowPost,
        ProofKind::SnapDeals,
    ];

    /// The kind's name (`porep`, `winning-post`, `window-post`,
    /// `snap-deals`), which [`str::parse`] reads back.
    pub fn name(self) -> &'static str {
        match self {
            ProofKind::Porep => "porep",
            ProofKind::WinningPost => "winning-post",
            ProofKind::WindowPost => "window-post",
            ProofKind::SnapDeals => "snap-deals",
        }
    }
}

impl std::str::FromStr for ProofKind {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        ProofKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| Error::Unreadable {
                what: Readable::ProofKind,
                given: s.into(),
            })
    }
}

impl fmt::Display for ProofKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One Filecoin circuit, named by its registered proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CircuitId {
    PoRep(RegisteredSealProof),
    /// Winning or Window PoSt, as the registered proof says.
    PoSt(RegisteredPoStProof),
    SnapDeals(RegisteredUpdateProof),
}

impl fmt::Display for CircuitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CircuitId::PoRep(p) => write!(f, "{p:?}"),
            CircuitId::PoSt(p) => write!(f, "{p:?}"),
            CircuitId::SnapDeals(p) => write!(f, "Update{p:?}"),
        }
    }
}

/// Sector sizes that have registered proofs (and published parameters).
pub const REGISTERED_SECTOR_SIZES: [u64; 5] = [
    SECTOR_SIZE_2_KIB,
    SECTOR_SIZE_8_MIB,
    SECTOR_SIZE_512_MIB,
    SECTOR_SIZE_32_GIB,
    SECTOR_SIZE_64_GIB,
];

impl CircuitId {
    /// The registered proof that new sectors of this kind and size use today:
    /// PoRep `StackedDrg*V1_1`, WindowPoSt `*V1_2`, WinningPoSt and SnapDeals
    /// `*V1`. (PoRep V1 and V1_1 share one circuit and parameter file, as do
    /// WindowPoSt V1 and V1_2.)
    pub fn current(kind: ProofKind, sector_size: u64) -> Result<Self> {
        use RegisteredPoStProof as Post;
        use RegisteredSealProof as Seal;
        use RegisteredUpdateProof as Upd;
        let i = REGISTERED_SECTOR_SIZES
            .iter()
            .position(|&s| s == sector_size)
            .ok_or(Error::UnsupportedSectorSize(sector_size))?;
        Ok(match kind {
            ProofKind::Porep => CircuitId::PoRep(
                [
                    Seal::StackedDrg2KiBV1_1,
                    Seal::StackedDrg8MiBV1_1,
                    Seal::StackedDrg512MiBV1_1,
                    Seal::StackedDrg32GiBV1_1,
                    Seal::StackedDrg64GiBV1_1,
                ][i],
            ),
            ProofKind::WinningPost => CircuitId::PoSt(
                [
                    Post::StackedDrgWinning2KiBV1,
                    Post::StackedDrgWinning8MiBV1,
                    Post::StackedDrgWinning512MiBV1,
                    Post::StackedDrgWinning32GiBV1,
                    Post::StackedDrgWinning64GiBV1,
                ][i],
            ),
            ProofKind::WindowPost => CircuitId::PoSt(
                [
                    Post::StackedDrgWindow2KiBV1_2,
                    Post::StackedDrgWindow8MiBV1_2,
                    Post::StackedDrgWindow512MiBV1_2,
                    Post::StackedDrgWindow32GiBV1_2,
                    Post::StackedDrgWindow64GiBV1_2,
                ][i],
            ),
            ProofKind::SnapDeals => CircuitId::SnapDeals(
                [
                    Upd::StackedDrg2KiBV1,
                    Upd::StackedDrg8MiBV1,
                    Upd::StackedDrg512MiBV1,
                    Upd::StackedDrg32GiBV1,
                    Upd::StackedDrg64GiBV1,
                ][i],
            ),
        })
    }

    pub fn kind(&self) -> ProofKind {
        match self {
            CircuitId::PoRep(_) => ProofKind::Porep,
            CircuitId::PoSt(p) => match p.typ() {
                filecoin_proofs::PoStType::Winning => ProofKind::WinningPost,
                filecoin_proofs::PoStType::Window => ProofKind::WindowPost,
            },
            CircuitId::SnapDeals(_) => ProofKind::SnapDeals,
        }
    }

    pub fn sector_size(&self) -> u64 {
        u64::from(match self {
            CircuitId::PoRep(p) => p.sector_size(),
            CircuitId::PoSt(p) => p.sector_size(),
            CircuitId::SnapDeals(p) => p.sector_size(),
        })
    }

    /// The name Curio uses for a circuit's SRS (`porep-32g`, `wpost-32g`,
    /// `winning-32g`, `snap-32g`; `2k`, `8m`, `512m` for the small sizes).
    pub fn short_name(&self) -> String {
        let kind = match self.kind() {
            ProofKind::Porep => "porep",
            ProofKind::WinningPost => "winning",
            ProofKind::WindowPost => "wpost",
            ProofKind::SnapDeals => "snap",
        };
        format!("{kind}-{}", short_size(self.sector_size()))
    }

    /// Parse a Curio circuit name (see [`CircuitId::short_name`]).
    pub fn from_short_name(name: &str) -> Result<Self> {
        let bad = || Error::Unreadable {
            what: Readable::CircuitId,
            given: name.into(),
        };
        let (kind, size) = name.split_once('-').ok_or_else(bad)?;
        let kind = match kind {
            "porep" => ProofKind::Porep,
            "winning" => ProofKind::WinningPost,
            "wpost" => ProofKind::WindowPost,
            "snap" => ProofKind::SnapDeals,
            _ => return Err(bad()),
        };
        let size = REGISTERED_SECTOR_SIZES
            .iter()
            .copied()
            .find(|&s| short_size(s) == size)
            .ok_or_else(bad)?;
        CircuitId::current(kind, size)
    }

    /// log2 of a circuit's evaluation domain. Measured for 2 KiB (PoRep 22,
    /// WinningPoSt 17, WindowPoSt 15, SnapDeals 21: the generator's domain
    /// sizes); for the production sizes from their published constraint counts
    /// (PoRep and WindowPoSt 32/64 GiB about 130 M, SnapDeals 32/64 GiB about
    /// 81 M: 2^27; WinningPoSt 32/64 GiB about 3.5 M: 2^22). The 8 MiB and
    /// 512 MiB circuits are the 2 KiB ones with deeper trees, bounded above by
    /// the next size up.
    pub fn domain_log(&self) -> u32 {
        use shapes::*;
        let size = self.sector_size();
        let large = size >= SECTOR_SIZE_32_GIB;
        match self.kind() {
            ProofKind::Porep | ProofKind::WindowPost | ProofKind::SnapDeals if large => 27,
            ProofKind::WinningPost if large => 22,
            ProofKind::Porep => 23,
            ProofKind::SnapDeals => {
                if size == SECTOR_SIZE_2_KIB {
                    21
                } else {
                    24
                }
            }
            ProofKind::WinningPost => {
                if size == SECTOR_SIZE_2_KIB {
                    17
                } else {
                    20
                }
            }
            ProofKind::WindowPost => {
                if size == SECTOR_SIZE_2_KIB {
                    15
                } else {
                    18
                }
            }
        }
    }

    /// storage-proofs' cache identifier (`stacked-proof-of-replication-...`,
    /// `proof-of-spacetime-fallback-...`, `empty-sector-update-...`, each
    /// followed by a SHA-256 of the public parameters).
    pub fn cache_identifier(&self) -> Result<String> {
        let id = match self {
            CircuitId::PoRep(p) => p.circuit_identifier(),
            CircuitId::PoSt(p) => p.circuit_identifier(),
            // Not `RegisteredUpdateProof::circuit_identifier`: in
            // filecoin-proofs-api 19.1 it returns the PoRep circuit's
            // identifier (it goes through the PoRep config). filecoin-proofs
            // looks the update parameters up under EmptySectorUpdateCompound's.
            CircuitId::SnapDeals(p) => {
                return with_tree_shape!(u64::from(p.sector_size()), snap_identifier, *p)
            }
        };
        id.map_err(|e| Error::filecoin(format!("cache identifier of {self}"), e))
    }

    /// Random (insecure, test-only) parameters for this circuit, made by
    /// cuzk's generator from the circuit filecoin-proofs would use for
    /// parameter generation (its blank circuit).
    pub fn generate_parameters<R: rand_core::RngCore>(
        &self,
        rng: &mut R,
    ) -> Result<cuzk_core::Parameters> {
        self.generate_parameters_on(&cuzk_core::generator::CpuFixedBase, rng)
    }

    /// [`CircuitId::generate_parameters`] with the fixed-base
    /// multiplications on `engine` (a GPU's, from cuzk-gpu); the same
    /// parameters for the same randomness.
    pub fn generate_parameters_on<R: rand_core::RngCore>(
        &self,
        engine: &dyn FixedBaseEngine,
        rng: &mut R,
    ) -> Result<cuzk_core::Parameters> {
        let mut sink = cuzk_core::params::ParamsCollector::new();
        self.generate_parameters_into(engine, rng, &mut sink, &|_| {})?;
        sink.finish().map_err(|e| {
            Error::from(cuzk_core::Error::Backend {
                backend: "parameter sink",
                source: Box::new(e),
            })
        })
    }

    /// [`CircuitId::generate_parameters_on`] handing each query to `sink` as
    /// it is computed (a `.params` file written as it goes: the 32 GiB
    /// PoRep's 47 GiB never held at once), with progress events. The
    /// blank circuit is synthesized for its constraints;
    /// [`CircuitId::generate_parameters_compiled_into`] reads them from the
    /// compiled system instead.
    pub fn generate_parameters_into<R: rand_core::RngCore>(
        &self,
        engine: &dyn FixedBaseEngine,
        rng: &mut R,
        sink: &mut dyn cuzk_core::params::ParamsSink,
        progress: &dyn Fn(&GenerationEvent),
    ) -> Result<cuzk_core::generator::GenerationTimings> {
        let to = ParamsTarget {
            engine,
            sink,
            progress,
        };
        match self.with_blank(BlankUse::Generate(to, rng))? {
            BlankOut::Generated(t) => Ok(t),
            BlankOut::Compiled(_) => Err(Error::internal(
                "the blank circuit was compiled where parameters were asked for",
            )),
        }
    }

    /// The constraint system of the circuit parameters are generated from
    /// (filecoin-proofs' blank circuit), compiled, under the circuit's
    /// cache identifier: the system proofs of this circuit are assigned
    /// with (`crate::compiled`), which has the same constraints.
    pub fn compile_blank(&self) -> Result<CompiledCircuit> {
        let id = self.cache_identifier()?;
        match self.with_blank(BlankUse::Compile(&id))? {
            BlankOut::Compiled(cc) => Ok(*cc),
            BlankOut::Generated(_) => Err(Error::internal(
                "the blank circuit gave parameters where its compiled system was asked for",
            )),
        }
    }

    /// [`CircuitId::generate_parameters_on`] from the circuit's compiled
    /// system (see [`CircuitId::generate_parameters_compiled_into`]).
    pub fn generate_parameters_compiled_on<R: rand_core::RngCore>(
        &self,
        compiled: &CompiledCircuit,
        engine: &dyn FixedBaseEngine,
        rng: &mut R,
    ) -> Result<cuzk_core::Parameters> {
        let mut sink = cuzk_core::params::ParamsCollector::new();
        self.generate_parameters_compiled_into(compiled, engine, rng, &mut sink, &|_| {})?;
        sink.finish().map_err(|e| {
            Error::from(cuzk_core::Error::Backend {
                backend: "parameter sink",
                source: Box::new(e),
            })
        })
    }

    /// [`CircuitId::generate_parameters_into`] from the circuit's compiled
    /// system (no synthesis; see
    /// `cuzk_core::generator::generate_parameters_compiled_into`): the
    /// same bytes for the same randomness. `compiled` must be this
    /// circuit's (its id, the cache identifier, is checked).
    pub fn generate_parameters_compiled_into<R: rand_core::RngCore>(
        &self,
        compiled: &CompiledCircuit,
        engine: &dyn FixedBaseEngine,
        rng: &mut R,
        sink: &mut dyn cuzk_core::params::ParamsSink,
        progress: &dyn Fn(&GenerationEvent),
    ) -> Result<GenerationTimings> {
        let id = self.cache_identifier()?;
        if compiled.circuit_id != id {
            return Err(Error::disagree(
                Fact::Circuit,
                "the parameters to generate",
                format!("{self} ({id})"),
                "the compiled system given",
                format!("{:?}", compiled.circuit_id),
            ));
        }
        let waste = cuzk_core::generator::ToxicWaste::random(rng);
        Ok(cuzk_core::generator::generate_parameters_compiled_into(
            compiled, &waste, engine, sink, progress,
        )?)
    }

    /// Build the blank circuit of this circuit's tree shape and use it.
    fn with_blank(&self, what: BlankUse<'_>) -> Result<BlankOut> {
        let size = self.sector_size();
        match *self {
            CircuitId::PoRep(p) => with_tree_shape!(size, porep_blank, p, what),
            CircuitId::PoSt(p) => with_tree_shape!(size, post_blank, p, what),
            CircuitId::SnapDeals(p) => with_tree_shape!(size, snap_blank, p, what),
        }
    }
}

/// Where generated parameters go: the engine, the sink, the progress.
struct ParamsTarget<'a> {
    engine: &'a dyn FixedBaseEngine,
    sink: &'a mut dyn cuzk_core::params::ParamsSink,
    progress: &'a dyn Fn(&GenerationEvent),
}

/// What a blank circuit is built for.
enum BlankUse<'a> {
    /// Parameters, drawing the toxic waste from the generator.
    Generate(ParamsTarget<'a>, &'a mut dyn rand_core::RngCore),
    /// Its compiled system, under this circuit id.
    Compile(&'a str),
}

enum BlankOut {
    Generated(GenerationTimings),
    Compiled(Box<CompiledCircuit>),
}

fn short_size(sector_size: u64) -> String {
    match sector_size {
        s if s >= 1 << 30 && s % (1 << 30) == 0 => format!("{}g", s >> 30),
        s if s >= 1 << 20 && s % (1 << 20) == 0 => format!("{}m", s >> 20),
        s if s >= 1 << 10 && s % (1 << 10) == 0 => format!("{}k", s >> 10),
        s => s.to_string(),
    }
}

/// Parse a sector size: `2KiB`, `8MiB`, `32GiB`, `2k`, `32g` or a byte count.
pub fn parse_sector_size(s: &str) -> Result<u64> {
    let bad = || Error::Unreadable {
        what: Readable::SectorSize,
        given: s.into(),
    };
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let n: u64 = t[..digits].parse().map_err(|_| bad())?;
    let shift = match t[digits..].trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" => 10,
        "m" | "mib" => 20,
        "g" | "gib" => 30,
        _ => return Err(bad()),
    };
    n.checked_mul(1 << shift).ok_or_else(bad)
}

fn use_blank<C>(circuit: C, what: BlankUse<'_>) -> Result<BlankOut>
where
    C: bellpepper_core::Circuit<blstrs::Scalar>,
{
    match what {
        BlankUse::Generate(to, mut rng) => {
            let waste = cuzk_core::generator::ToxicWaste::random(&mut rng);
            Ok(BlankOut::Generated(
                cuzk_core::generator::generate_parameters_into(
                    circuit,
                    &waste,
                    to.engine,
                    to.sink,
                    to.progress,
                )?,
            ))
        }
        BlankUse::Compile(id) => Ok(BlankOut::Compiled(Box::new(cuzk_core::compiled::compile(
            circuit, id,
        )?))),
    }
}

fn porep_blank<Tree: FilTree>(p: RegisteredSealProof, what: BlankUse<'_>) -> Result<BlankOut> {
    let config = p.as_v1_config();
    let pp = filecoin_proofs::parameters::public_params::<Tree>(&config)
        .map_err(|e| Error::filecoin(format!("public parameters of {p:?}"), e))?;
    let circuit = <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<
        StackedDrg<'_, Tree, DefaultPieceHasher>,
        _,
    >>::blank_circuit(&pp);
    use_blank(circuit, what)
}

fn post_blank<Tree: FilTree>(p: RegisteredPoStProof, what: BlankUse<'_>) -> Result<BlankOut> {
    let config = p.as_v1_config();
    let pp = match config.typ {
        filecoin_proofs::PoStType::Winning => {
            filecoin_proofs::parameters::winning_post_public_params::<Tree>(&config)
        }
        filecoin_proofs::PoStType::Window => {
            filecoin_proofs::parameters::window_post_public_params::<Tree>(&config)
        }
    }
    .map_err(|e| Error::filecoin(format!("public parameters of {p:?}"), e))?;
    let circuit = <FallbackPoStCompound<Tree> as CompoundProof<
        FallbackPoSt<'_, Tree>,
        FallbackPoStCircuit<Tree>,
    >>::blank_circuit(&pp);
    use_blank(circuit, what)
}

fn snap_identifier<Tree: FilTree>(p: RegisteredUpdateProof) -> Result<String> {
    use storage_proofs_core::parameter_cache::CacheableParameters;
    let pp = storage_proofs_update::PublicParams::from_sector_size(u64::from(p.sector_size()));
    Ok(<EmptySectorUpdateCompound<Tree> as CacheableParameters<
        EmptySectorUpdateCircuit<Tree>,
        _,
    >>::cache_identifier(&pp))
}

fn snap_blank<Tree: FilTree>(p: RegisteredUpdateProof, what: BlankUse<'_>) -> Result<BlankOut> {
    let pp = storage_proofs_update::PublicParams::from_sector_size(u64::from(p.sector_size()));
    let circuit = <EmptySectorUpdateCompound<Tree> as CompoundProof<
        EmptySectorUpdate<Tree>,
        EmptySectorUpdateCircuit<Tree>,
    >>::blank_circuit(&pp);
    use_blank(circuit, what)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each kind has its own circuit, so its own parameter files.
    #[test]
    fn identifiers_name_the_right_circuit() {
        for size in REGISTERED_SECTOR_SIZES {
            let id = |k| {
                CircuitId::current(k, size)
                    .unwrap()
                    .cache_identifier()
                    .unwrap()
            };
            let (porep, win, window, snap) = (
                id(ProofKind::Porep),
                id(ProofKind::WinningPost),
                id(ProofKind::WindowPost),
                id(ProofKind::SnapDeals),
            );
            assert!(
                porep.starts_with("stacked-proof-of-replication-"),
                "{porep}"
            );
            assert!(win.starts_with("proof-of-spacetime-fallback-"), "{win}");
            assert!(
                window.starts_with("proof-of-spacetime-fallback-"),
                "{window}"
            );
            assert!(snap.starts_with("empty-sector-update-"), "{snap}");
            assert_ne!(win, window);
        }
        // PoRep V1 and V1_1 share one circuit; WindowPoSt V1 and V1_2 too.
        assert_eq!(
            CircuitId::PoRep(RegisteredSealProof::StackedDrg2KiBV1)
                .cache_identifier()
                .unwrap(),
            CircuitId::PoRep(RegisteredSealProof::StackedDrg2KiBV1_1)
                .cache_identifier()
                .unwrap()
        );
        assert_eq!(
            CircuitId::PoSt(RegisteredPoStProof::StackedDrgWindow2KiBV1)
                .cache_identifier()
                .unwrap(),
            CircuitId::PoSt(RegisteredPoStProof::StackedDrgWindow2KiBV1_2)
                .cache_identifier()
                .unwrap()
        );
    }

    #[test]
    fn kinds_and_synthesis_modes_parse_from_their_names() {
        for k in ProofKind::ALL {
            assert_eq!(k.name().parse::<ProofKind>().unwrap(), k);
        }
        assert!(
            matches!("winning".parse::<ProofKind>(), Err(Error::Unreadable { what: Readable::ProofKind, given }) if given == "winning")
        );
        for m in crate::SynthesisMode::ALL {
            assert_eq!(m.name().parse::<crate::SynthesisMode>().unwrap(), m);
        }
        assert!("Compiled".parse::<crate::SynthesisMode>().is_err());
    }

    #[test]
    fn sector_sizes_parse() {
        assert_eq!(parse_sector_size("2KiB").unwrap(), 2048);
        assert_eq!(parse_sector_size("2k").unwrap(), 2048);
        assert_eq!(parse_sector_size("32GiB").unwrap(), 32 << 30);
        assert_eq!(parse_sector_size("512MiB").unwrap(), 512 << 20);
        assert_eq!(parse_sector_size("2048").unwrap(), 2048);
        assert!(parse_sector_size("2XB").is_err());
        assert!(parse_sector_size("").is_err());
        assert!(parse_sector_size("99999999999999999999GiB").is_err());
    }

    #[test]
    fn short_names_round_trip() {
        for kind in [
            ProofKind::Porep,
            ProofKind::WinningPost,
            ProofKind::WindowPost,
            ProofKind::SnapDeals,
        ] {
            for size in REGISTERED_SECTOR_SIZES {
                let id = CircuitId::current(kind, size).unwrap();
                assert_eq!(id.kind(), kind);
                assert_eq!(id.sector_size(), size);
                assert_eq!(CircuitId::from_short_name(&id.short_name()).unwrap(), id);
            }
        }
        assert_eq!(
            CircuitId::current(ProofKind::WindowPost, 32 << 30)
                .unwrap()
                .short_name(),
            "wpost-32g"
        );
        assert!(CircuitId::from_short_name("porep-3g").is_err());
        assert!(CircuitId::from_short_name("porep").is_err());
        assert!(CircuitId::from_short_name("nope-2k").is_err());
        assert!(CircuitId::current(ProofKind::Porep, 4096).is_err());
    }
}
