//! Synthetic PoRep commit-phase-1 (C1) outputs: a valid
//! `SealCommitPhase1Output` for any sector size, built without sealing a
//! sector (no 32 GiB file, no layers, no trees in memory).
//!
//! The vanilla proofs of storage-proofs' stacked DRG open only a few nodes
//! of the sector: per challenge, one data leaf (comm_d), the columns of the
//! challenged node and of its 6 DRG and 8 expander parents (comm_c), and one
//! replica leaf (comm_r_last). Everything else only has to hash to the same
//! roots. So the trees here are sparse: the nodes on the opened paths are
//! computed, every sibling off those paths is a pseudo-random field element.
//! What the verifier (and the circuit) ties together is computed for real:
//! - each label of a challenged node, from its parents' labels by the real
//!   labeling function (DRG parents from the same layer, expander parents
//!   from the layer below), parents being challenged nodes themselves where
//!   they are;
//! - each column's Poseidon hash, the replica leaf `key + data`, every path
//!   up to its root, and comm_r = Poseidon(comm_c, comm_r_last);
//! - the challenges, by storage-proofs' own derivation from the replica id,
//!   the seed and the partition (interactive PoRep);
//! - the replica id, by storage-proofs' `generate_replica_id`.
//!
//! The replica id depends on comm_d and the challenges on the replica id, so
//! comm_d has to be known before anything is opened: the sector's data is a
//! block of [`DATA_PERIOD_LOG2`]-many random nodes repeated across the
//! sector (at 2 KiB the block is the whole sector), whose tree needs one
//! block tree and one hash per level above it.
//!
//! Everything random derives from one `u64` seed, so a synthetic C1 is
//! reproducible byte for byte. Only interactive PoRep (`StackedDrg*V1`,
//! `V1_1`) is supported: synthetic-PoRep and NI-PoRep challenges depend on
//! comm_r, which would depend on the challenges.
//!
//! This module does not prove anything; [`verify_vanilla`] runs
//! storage-proofs' own vanilla verifier (the sanity check filecoin-proofs'
//! `seal_commit_phase1` makes on real outputs).

use crate::circuits::{with_tree_shape, FilTree};
use crate::prover::guarded;
use crate::{Error, Fact, Result};
use blstrs::Scalar as Fr;
use ff::Field;
use filecoin_hashers::poseidon::{PoseidonDomain, PoseidonFunction, PoseidonHasher};
use filecoin_hashers::sha256::{Sha256Domain, Sha256Function, Sha256Hasher};
use filecoin_hashers::{Domain, HashFunction};
use filecoin_proofs::{SectorShape2KiB, SectorShape32GiB, SectorShape512MiB};
use filecoin_proofs::{SectorShape64GiB, SectorShape8MiB};
use filecoin_proofs_api::seal::{SealCommitPhase1Output, VanillaSealProof};
use filecoin_proofs_api::RegisteredSealProof;
use merkletree::hash::Algorithm;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;
use std::any::Any;
use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use storage_proofs_core::api_version::ApiFeature;
use storage_proofs_core::drgraph::Graph;
use storage_proofs_core::merkle::{MerkleProof, MerkleProofTrait, MerkleTreeTrait};
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_porep::stacked::{
    self, generate_replica_id, Column, ColumnProof, EncodingProof, LabelingProof,
    ReplicaColumnProof, StackedBucketGraph, StackedDrg, TOTAL_PARENTS,
};
use typenum::Unsigned;

/// log2 of the data block that repeats across the sector (in 32-byte
/// nodes): 2^10 nodes = 32 KiB, enough that neighbouring challenges see
/// different data, small enough to hash in a millisecond.
pub const DATA_PERIOD_LOG2: u32 = 10;

/// What to synthesize.
#[derive(Clone, Debug)]
pub struct SynthSpec {
    pub registered_proof: RegisteredSealProof,
    /// Every random choice (data, labels off the checked ones, siblings off
    /// the paths, ticket, challenge seed) derives from it.
    pub seed: u64,
    pub prover_id: [u8; 32],
    pub sector_id: u64,
}

impl SynthSpec {
    /// Miner 1000's prover id (as `cuzk prove --miner-id 1000` spells it),
    /// sector 1.
    pub fn new(registered_proof: RegisteredSealProof, seed: u64) -> Self {
        SynthSpec {
            registered_proof,
            seed,
            prover_id: crate::ids::prover_id_from_miner(1000),
            sector_id: 1,
        }
    }
}

/// A synthetic C1 output and what `verify_seal` needs besides it.
#[derive(Clone, Debug)]
pub struct SynthC1 {
    pub output: SealCommitPhase1Output,
    pub prover_id: [u8; 32],
    pub sector_id: u64,
    pub stats: SynthStats,
}

/// How much was opened and computed.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct SynthStats {
    pub partitions: usize,
    pub challenges: usize,
    /// Distinct columns opened (challenges and their parents).
    pub columns: usize,
    /// Labels computed by the labeling function (all others are random).
    pub labels_computed: usize,
    pub elapsed_ms: f64,
}

/// Build a synthetic C1 output.
pub fn synthesize(spec: &SynthSpec) -> Result<SynthC1> {
    let size = u64::from(spec.registered_proof.sector_size());
    with_tree_shape!(size, synthesize_typed, spec)
}

/// storage-proofs' vanilla verifier on a C1 output (the check
/// filecoin-proofs' `seal_commit_phase1` makes before returning one), with
/// the replica id checked against `prover_id` and `sector_id` as
/// `verify_seal` derives it, and the data and replica trees' paths hashed
/// up to their roots (which `seal_commit_phase1` checks while proving and
/// the verifier does not). `Ok(false)` when the proofs do not verify.
pub fn verify_vanilla(
    c1: &SealCommitPhase1Output,
    prover_id: &[u8; 32],
    sector_id: u64,
) -> Result<bool> {
    let size = u64::from(c1.registered_proof.sector_size());
    with_tree_shape!(size, verify_typed, c1, prover_id, sector_id)
}

/// Random values by name: a 32-byte key and, per use, a tag and two
/// indices hashed into a ChaCha seed. A sibling asked for twice (building
/// the tree, then writing a path) is the same value.
#[derive(Clone, Copy)]
struct Prf {
    key: [u8; 32],
}

/// What a random value is for (the PRF's domain separation).
#[derive(Clone, Copy)]
#[repr(u8)]
enum Tag {
    Ticket = 1,
    Seed = 2,
    Data = 3,
    Label = 4,
    TreeC = 5,
    TreeR = 6,
}

impl Prf {
    fn new(seed: u64) -> Self {
        let mut msg = b"cuzk synthetic C1 v1".to_vec();
        msg.extend_from_slice(&seed.to_le_bytes());
        Prf {
            key: sha256_fr32(&msg),
        }
    }

    fn rng(&self, tag: Tag, a: u64, b: u64) -> ChaCha20Rng {
        let mut msg = Vec::with_capacity(49);
        msg.extend_from_slice(&self.key);
        msg.push(tag as u8);
        msg.extend_from_slice(&a.to_le_bytes());
        msg.extend_from_slice(&b.to_le_bytes());
        ChaCha20Rng::from_seed(sha256_fr32(&msg))
    }

    fn fr(&self, tag: Tag, a: u64, b: u64) -> Fr {
        Fr::random(self.rng(tag, a, b))
    }

    /// 32 random bytes that are a field element (as the chain's ticket and
    /// seed randomness are).
    fn field_bytes(&self, tag: Tag) -> [u8; 32] {
        let mut out = [0u8; 32];
        self.rng(tag, 0, 0).fill_bytes(&mut out);
        out[31] &= 0x3f;
        out
    }
}

/// SHA-256 with the top two bits cleared (a field element's bytes), as
/// filecoin-hashers' `Sha256Function::hash` and storage-proofs'
/// `bytes_into_fr_repr_safe` make it.
fn sha256_fr32(data: &[u8]) -> [u8; 32] {
    bytes32(&<Sha256Function as HashFunction<Sha256Domain>>::hash(data))
}

fn bytes32(d: &impl AsRef<[u8]>) -> [u8; 32] {
    let mut out = [0u8; 32];
    out.copy_from_slice(d.as_ref());
    out
}

fn hash_nodes<D: Domain, A: Algorithm<D> + Default>(children: &[D], height: usize) -> D {
    A::default().multi_node(children, height)
}

/// The data tree (binary, SHA-256) of a sector whose data is one random
/// block repeated: level `h` holds the distinct nodes of that level, which
/// repeat with period `len` (one node at and above the block's root).
struct DataTree {
    levels: Vec<Vec<Sha256Domain>>,
}

impl DataTree {
    fn new(prf: &Prf, nodes: usize) -> Result<Self> {
        let height = log2_exact(nodes, 2)?;
        let block = 1usize << height.min(DATA_PERIOD_LOG2 as usize);
        let mut levels = vec![(0..block as u64)
            .map(|i| Sha256Domain::from(prf.fr(Tag::Data, i, 0)))
            .collect::<Vec<_>>()];
        for h in 0..height {
            let prev = &levels[h];
            let next = if prev.len() > 1 {
                prev.chunks(2)
                    .map(|pair| hash_nodes::<_, Sha256Function>(pair, h))
                    .collect()
            } else {
                vec![hash_nodes::<_, Sha256Function>(&[prev[0], prev[0]], h)]
            };
            levels.push(next);
        }
        Ok(DataTree { levels })
    }

    fn node(&self, level: usize, index: u64) -> Sha256Domain {
        let l = &self.levels[level];
        l[(index % l.len() as u64) as usize]
    }

    fn root(&self) -> Sha256Domain {
        self.levels[self.levels.len() - 1][0]
    }

    fn proof(&self, leaf: u64) -> MerkleProof<Sha256Hasher, typenum::U2> {
        let path = (0..self.levels.len() - 1)
            .map(|h| {
                let i = leaf >> h;
                (vec![self.node(h, i ^ 1)], (i & 1) as usize)
            })
            .collect();
        MerkleProof::from_parts(self.node(0, leaf), self.root(), path)
    }
}

/// log_base(n), when n is an exact power of base.
fn log2_exact(n: usize, base: usize) -> Result<usize> {
    let (mut m, mut h) = (n, 0);
    while m > 1 && m % base == 0 {
        m /= base;
        h += 1;
    }
    if m != 1 {
        return Err(Error::internal(format!(
            "{n} nodes is not a power of the tree arity {base}"
        )));
    }
    Ok(h)
}

/// A Poseidon tree of the sector's shape (base arity, then the sub- and
/// top-tree levels, as `MerkleProof` lays out its path) known only on the
/// paths of its opened leaves; every other node is random.
struct SparseTree {
    prf: Prf,
    tag: Tag,
    arities: Vec<usize>,
    /// Per level (leaves first), the nodes on opened paths.
    levels: Vec<HashMap<u64, PoseidonDomain>>,
}

impl SparseTree {
    fn new<Tree: FilTree>(
        nodes: usize,
        prf: Prf,
        tag: Tag,
        leaves: HashMap<u64, PoseidonDomain>,
    ) -> Result<Self> {
        let base = Tree::Arity::to_usize();
        let sub = Tree::SubTreeArity::to_usize();
        let top = Tree::TopTreeArity::to_usize();
        let base_leaves = nodes / sub.max(1) / top.max(1);
        // (arity, height as the verifier numbers it: each of the base,
        // sub and top paths counts from 0)
        let mut arities: Vec<(usize, usize)> = (0..log2_exact(base_leaves, base)?)
            .map(|h| (base, h))
            .collect();
        if sub > 0 {
            arities.push((sub, 0));
        }
        if top > 0 {
            arities.push((top, 0));
        }
        let mut tree = SparseTree {
            prf,
            tag,
            arities: arities.iter().map(|&(a, _)| a).collect(),
            levels: vec![leaves],
        };
        for (level, &(arity, height)) in arities.iter().enumerate() {
            let parents: BTreeSet<u64> = tree.levels[level]
                .keys()
                .map(|i| i / arity as u64)
                .collect();
            let next: HashMap<u64, PoseidonDomain> = parents
                .into_par_iter()
                .map(|p| {
                    let children: Vec<PoseidonDomain> = (0..arity as u64)
                        .map(|j| tree.node(level, p * arity as u64 + j))
                        .collect();
                    (p, hash_nodes::<_, PoseidonFunction>(&children, height))
                })
                .collect();
            tree.levels.push(next);
        }
        Ok(tree)
    }

    fn node(&self, level: usize, index: u64) -> PoseidonDomain {
        match self.levels[level].get(&index) {
            Some(d) => *d,
            None => PoseidonDomain::from(self.prf.fr(self.tag, level as u64, index)),
        }
    }

    fn root(&self) -> PoseidonDomain {
        self.node(self.levels.len() - 1, 0)
    }

    fn proof<Tree: FilTree>(&self, leaf: u64) -> TreeProof<Tree> {
        let mut i = leaf;
        let path = self
            .arities
            .iter()
            .enumerate()
            .map(|(level, &a)| {
                let (group, pos) = (i / a as u64, (i % a as u64) as usize);
                let siblings = (0..a as u64)
                    .filter(|&j| j != pos as u64)
                    .map(|j| self.node(level, group * a as u64 + j))
                    .collect();
                i = group;
                (siblings, pos)
            })
            .collect();
        MerkleProof::from_parts(self.node(0, leaf), self.root(), path)
    }
}

type TreeProof<Tree> = MerkleProof<
    PoseidonHasher,
    <Tree as MerkleTreeTrait>::Arity,
    <Tree as MerkleTreeTrait>::SubTreeArity,
    <Tree as MerkleTreeTrait>::TopTreeArity,
>;

/// The labels of the sector's layers, computed where the proofs check them
/// (the challenged nodes, every layer) and random everywhere else.
struct Labels<'g> {
    graph: &'g StackedBucketGraph<PoseidonHasher>,
    replica_id: PoseidonDomain,
    challenged: HashSet<u32>,
    prf: Prf,
    computed: HashMap<(u32, usize), PoseidonDomain>,
}

impl Labels<'_> {
    fn label(&mut self, node: u32, layer: usize) -> Result<PoseidonDomain> {
        if !self.challenged.contains(&node) {
            return Ok(PoseidonDomain::from(self.prf.fr(
                Tag::Label,
                layer as u64,
                node as u64,
            )));
        }
        if let Some(l) = self.computed.get(&(node, layer)) {
            return Ok(*l);
        }
        // Recursion ends: a label depends on labels of smaller nodes in its
        // layer (DRG parents) and on the layer below (expander parents).
        let parents = self.parent_labels(node, layer)?;
        let label = create_label(&self.replica_id, layer, node, &parents);
        self.computed.insert((node, layer), label);
        Ok(label)
    }

    /// The labeling function's input at `layer`: the DRG parents' labels in
    /// `layer`, then (above layer 1) the expander parents' labels in
    /// `layer - 1`, repeated to `TOTAL_PARENTS`, as `LabelingProof` holds
    /// them.
    fn parent_labels(&mut self, node: u32, layer: usize) -> Result<Vec<PoseidonDomain>> {
        let graph = self.graph;
        let base_degree = graph.base_graph().degree();
        let mut parents = vec![0u32; graph.degree()];
        guarded("stacked DRG parents", || {
            graph.parents(node as usize, &mut parents)
        })?;
        let mut data = Vec::with_capacity(graph.degree());
        for &p in &parents[..base_degree] {
            if p >= node {
                return Err(Error::internal(format!(
                    "node {node}: DRG parent {p} is not an earlier node"
                )));
            }
            data.push(self.label(p, layer)?);
        }
        if layer > 1 {
            for &p in &parents[base_degree..] {
                data.push(self.label(p, layer - 1)?);
            }
        }
        Ok(data.iter().cycle().take(TOTAL_PARENTS).copied().collect())
    }

    fn column(&mut self, node: u32, layers: usize) -> Result<Vec<PoseidonDomain>> {
        (1..=layers).map(|l| self.label(node, l)).collect()
    }
}

/// storage-proofs' labeling function (`LabelingProof::create_label`, whose
/// `verify` checks each label made here): SHA-256 of the replica id, the
/// layer, the node and the parents' labels, top two bits cleared.
fn create_label(
    replica_id: &PoseidonDomain,
    layer: usize,
    node: u32,
    parents: &[PoseidonDomain],
) -> PoseidonDomain {
    let mut buf = Vec::with_capacity(64 + 32 * parents.len());
    buf.extend_from_slice(replica_id.as_ref());
    buf.extend_from_slice(&(layer as u32).to_be_bytes());
    buf.extend_from_slice(&u64::from(node).to_be_bytes());
    buf.resize(64, 0);
    for p in parents {
        buf.extend_from_slice(p.as_ref());
    }
    PoseidonDomain::from(sha256_fr32(&buf))
}

/// The PoRep configuration, refusing the kinds whose challenges depend on
/// comm_r.
fn interactive_config(rp: RegisteredSealProof) -> Result<filecoin_proofs::PoRepConfig> {
    let config = rp.as_v1_config();
    if config.feature_enabled(ApiFeature::SyntheticPoRep)
        || config.feature_enabled(ApiFeature::NonInteractivePoRep)
    {
        return Err(Error::Unsupported {
            proof: format!("{rp:?}"),
            feature: crate::Feature::SyntheticC1OfNonInteractive,
        });
    }
    Ok(config)
}

fn public_params<Tree: FilTree>(
    config: &filecoin_proofs::PoRepConfig,
) -> Result<stacked::PublicParams<Tree>> {
    guarded("stacked DRG public parameters", || {
        let setup = filecoin_proofs::parameters::setup_params(config)?;
        StackedDrg::<Tree, Sha256Hasher>::setup(&setup)
    })
}

fn synthesize_typed<Tree: FilTree>(spec: &SynthSpec) -> Result<SynthC1> {
    let start = Instant::now();
    let rp = spec.registered_proof;
    let config = interactive_config(rp)?;
    let size = u64::from(config.sector_size);
    let nodes = (size / 32) as usize;
    let pp = public_params::<Tree>(&config)?;
    let graph = &pp.graph;
    let layers = pp.num_layers;
    let partitions = usize::from(config.partitions);
    let prf = Prf::new(spec.seed);

    let ticket = prf.field_bytes(Tag::Ticket);
    let seed = prf.field_bytes(Tag::Seed);
    let data = DataTree::new(&prf, nodes)?;
    let comm_d = data.root();
    let replica_id = generate_replica_id::<PoseidonHasher, _>(
        &spec.prover_id,
        spec.sector_id,
        &ticket,
        comm_d,
        &config.porep_id,
    );
    let pub_inputs = stacked::PublicInputs::<PoseidonDomain, Sha256Domain> {
        replica_id,
        seed: Some(seed),
        tau: None,
        k: None,
    };
    let challenges: Vec<Vec<u32>> = (0..partitions)
        .map(|k| {
            guarded("PoRep challenges", || {
                Ok(pub_inputs.challenges(&pp.challenges, nodes, Some(k)))
            })
            .map(|c| c.into_iter().map(|c| c as u32).collect())
        })
        .collect::<Result<_>>()?;

    let mut labels = Labels {
        graph,
        replica_id,
        challenged: challenges.iter().flatten().copied().collect(),
        prf,
        computed: HashMap::new(),
    };
    let parents_of = |c: u32| -> Result<Vec<u32>> {
        let mut parents = vec![0u32; graph.degree()];
        guarded("stacked DRG parents", || {
            graph.parents(c as usize, &mut parents)
        })?;
        Ok(parents)
    };
    // Every column opened: the challenged nodes' and their parents'.
    let mut columns: BTreeMap<u32, Vec<PoseidonDomain>> = BTreeMap::new();
    for &c in challenges.iter().flatten() {
        for n in std::iter::once(c).chain(parents_of(c)?) {
            if let Entry::Vacant(e) = columns.entry(n) {
                e.insert(labels.column(n, layers)?);
            }
        }
    }
    let column_hashes: HashMap<u64, PoseidonDomain> = columns
        .par_iter()
        .map(|(&n, rows)| {
            let column = Column::<PoseidonHasher>::new(n, rows.clone())
                .map_err(|e| Error::filecoin("column", e))?;
            Ok((u64::from(n), PoseidonDomain::from(column.hash())))
        })
        .collect::<Result<_>>()?;
    let tree_c = SparseTree::new::<Tree>(nodes, prf, Tag::TreeC, column_hashes)?;

    // The replica's leaf at a challenge is its data encoded with the last
    // layer's label (the key): key + data in the field.
    let replica_leaves: HashMap<u64, PoseidonDomain> = labels
        .challenged
        .iter()
        .map(|&c| {
            let key: Fr = columns[&c][layers - 1].into();
            let d: Fr = data.node(0, u64::from(c)).into();
            (u64::from(c), PoseidonDomain::from(key + d))
        })
        .collect();
    let tree_r = SparseTree::new::<Tree>(nodes, prf, Tag::TreeR, replica_leaves)?;
    let comm_c = tree_c.root();
    let comm_r_last = tree_r.root();
    let comm_r = PoseidonFunction::hash2(&comm_c, &comm_r_last);

    let column_proof = |n: u32| -> Result<ColumnProof<TreeProof<Tree>>> {
        let column =
            Column::new(n, columns[&n].clone()).map_err(|e| Error::filecoin("column", e))?;
        ColumnProof::from_column(column, tree_c.proof::<Tree>(u64::from(n)))
            .map_err(|e| Error::filecoin("column proof", e))
    };
    let base_degree = graph.base_graph().degree();
    let mut vanilla: Vec<Vec<stacked::Proof<Tree, Sha256Hasher>>> = Vec::with_capacity(partitions);
    for partition in &challenges {
        let mut proofs = Vec::with_capacity(partition.len());
        for &c in partition {
            let parents = parents_of(c)?;
            let labeling_proofs = (1..=layers)
                .map(|l| {
                    Ok(LabelingProof::new(
                        l as u32,
                        u64::from(c),
                        labels.parent_labels(c, l)?,
                    ))
                })
                .collect::<Result<Vec<_>>>()?;
            let encoding_proof = EncodingProof::new(
                layers as u32,
                u64::from(c),
                labels.parent_labels(c, layers)?,
            );
            proofs.push(stacked::Proof {
                comm_d_proofs: data.proof(u64::from(c)),
                comm_r_last_proof: tree_r.proof::<Tree>(u64::from(c)),
                replica_column_proofs: ReplicaColumnProof {
                    c_x: column_proof(c)?,
                    drg_parents: parents[..base_degree]
                        .iter()
                        .map(|&p| column_proof(p))
                        .collect::<Result<_>>()?,
                    exp_parents: parents[base_degree..]
                        .iter()
                        .map(|&p| column_proof(p))
                        .collect::<Result<_>>()?,
                },
                labeling_proofs,
                encoding_proof,
            });
        }
        vanilla.push(proofs);
    }

    let stats = SynthStats {
        partitions,
        challenges: challenges.iter().map(Vec::len).sum(),
        columns: columns.len(),
        labels_computed: labels.computed.len(),
        elapsed_ms: start.elapsed().as_secs_f64() * 1e3,
    };
    Ok(SynthC1 {
        output: SealCommitPhase1Output {
            registered_proof: rp,
            vanilla_proofs: tagged::<Tree>(size, vanilla)?,
            comm_r: bytes32(&comm_r),
            comm_d: bytes32(&comm_d),
            replica_id,
            seed,
            ticket,
        },
        prover_id: spec.prover_id,
        sector_id: spec.sector_id,
        stats,
    })
}

type Vanilla<Tree> = Vec<Vec<filecoin_proofs::VanillaSealProof<Tree>>>;

/// filecoin-proofs-api's tagged form of `Tree`'s vanilla proofs.
fn tagged<Tree: FilTree>(size: u64, proofs: Vanilla<Tree>) -> Result<VanillaSealProof> {
    use crate::circuits::shapes::*;
    let any: Box<dyn Any> = Box::new(proofs);
    let wrong = |_| {
        Error::disagree(
            Fact::TreeShape,
            "the sector size",
            format!("{size} bytes"),
            "the vanilla proofs",
            "another",
        )
    };
    Ok(match size {
        SECTOR_SIZE_2_KIB => VanillaSealProof::StackedDrg2KiBV1(
            *any.downcast::<Vanilla<SectorShape2KiB>>().map_err(wrong)?,
        ),
        SECTOR_SIZE_8_MIB => VanillaSealProof::StackedDrg8MiBV1(
            *any.downcast::<Vanilla<SectorShape8MiB>>().map_err(wrong)?,
        ),
        SECTOR_SIZE_512_MIB => VanillaSealProof::StackedDrg512MiBV1(
            *any.downcast::<Vanilla<SectorShape512MiB>>()
                .map_err(wrong)?,
        ),
        SECTOR_SIZE_32_GIB => VanillaSealProof::StackedDrg32GiBV1(
            *any.downcast::<Vanilla<SectorShape32GiB>>().map_err(wrong)?,
        ),
        SECTOR_SIZE_64_GIB => VanillaSealProof::StackedDrg64GiBV1(
            *any.downcast::<Vanilla<SectorShape64GiB>>().map_err(wrong)?,
        ),
        other => return Err(Error::UnsupportedSectorSize(other)),
    })
}

/// `Tree`'s vanilla proofs inside filecoin-proofs-api's tagged form.
pub(crate) fn untagged<Tree: FilTree>(p: &VanillaSealProof) -> Result<&Vanilla<Tree>> {
    let any: &dyn Any = match p {
        VanillaSealProof::StackedDrg2KiBV1(p) => p,
        VanillaSealProof::StackedDrg8MiBV1(p) => p,
        VanillaSealProof::StackedDrg512MiBV1(p) => p,
        VanillaSealProof::StackedDrg32GiBV1(p) => p,
        VanillaSealProof::StackedDrg64GiBV1(p) => p,
    };
    any.downcast_ref::<Vanilla<Tree>>().ok_or_else(|| {
        Error::disagree(
            Fact::TreeShape,
            "the tree asked for",
            std::any::type_name::<Tree>(),
            "the vanilla proofs",
            "another",
        )
    })
}

fn verify_typed<Tree: FilTree>(
    c1: &SealCommitPhase1Output,
    prover_id: &[u8; 32],
    sector_id: u64,
) -> Result<bool> {
    let config = interactive_config(c1.registered_proof)?;
    let proofs = untagged::<Tree>(&c1.vanilla_proofs)?;
    if proofs.len() != usize::from(config.partitions) || proofs.iter().any(|p| p.is_empty()) {
        return Ok(false);
    }
    let comm_d =
        Sha256Domain::try_from_bytes(&c1.comm_d).map_err(|e| Error::invalid_value("comm_d", e))?;
    let comm_r = PoseidonDomain::try_from_bytes(&c1.comm_r)
        .map_err(|e| Error::invalid_value("comm_r", e))?;
    let replica_id = generate_replica_id::<PoseidonHasher, _>(
        prover_id,
        sector_id,
        &c1.ticket,
        comm_d,
        &config.porep_id,
    );
    if replica_id != c1.replica_id {
        return Ok(false);
    }
    let pp = public_params::<Tree>(&config)?;
    let pub_inputs = stacked::PublicInputs {
        replica_id,
        seed: Some(c1.seed),
        tau: Some(stacked::Tau { comm_d, comm_r }),
        k: None,
    };
    // The verifier compares the data and replica proofs' stated roots and
    // path indices but does not hash their paths (filecoin-proofs validates
    // them while proving, and the circuit hashes them): hash them here.
    let paths_hash_to_roots = proofs.iter().flatten().all(|p| {
        MerkleProofTrait::verify(&p.comm_d_proofs) && MerkleProofTrait::verify(&p.comm_r_last_proof)
    });
    if !paths_hash_to_roots {
        return Ok(false);
    }
    guarded("vanilla PoRep verification", || {
        StackedDrg::<Tree, Sha256Hasher>::verify_all_partitions(&pp, &pub_inputs, proofs)
    })
}

/// What `cuzk c1 synth` is asked for.
#[derive(Clone, Debug)]
pub struct C1SynthRequest {
    /// Sector size in bytes (2 KiB, 8 MiB, 512 MiB, 32 GiB, 64 GiB).
    pub sector_size: u64,
    /// Registered seal proof number (interactive PoRep only); None: the
    /// current one for the sector size.
    pub registered_proof: Option<u64>,
    /// Every random choice derives from it (same seed, same file).
    pub seed: u64,
    /// The miner's actor ID (the prover id is its ID-address payload).
    pub miner_id: u64,
    pub sector_id: u64,
    /// Where to write the C1 output (filecoin-proofs-api JSON, as Lotus
    /// hands it to filecoin-ffi).
    pub out: PathBuf,
    /// Skip storage-proofs' vanilla verifier on the result.
    pub no_check: bool,
}

/// What `cuzk c1 synth` made: the inputs `verify_seal` needs, in hex.
#[derive(Clone, Debug, serde::Serialize)]
pub struct C1SynthReport {
    pub out: PathBuf,
    pub registered_proof: String,
    pub sector_id: u64,
    pub prover_id: String,
    pub ticket: String,
    pub seed: String,
    pub comm_d: String,
    pub comm_r: String,
    pub bytes: u64,
    pub stats: SynthStats,
    /// The vanilla verifier's time (absent with --no-check).
    pub check_ms: Option<f64>,
}

/// Build a synthetic C1, check it with the vanilla verifier (unless told
/// not to) and write it.
pub fn c1_synth(args: &C1SynthRequest) -> Result<C1SynthReport> {
    let rp = match args.registered_proof {
        Some(v) => crate::porep::seal_proof_from_u64(v)?,
        None => crate::porep::current_seal_proof(args.sector_size)?,
    };
    if u64::from(rp.sector_size()) != args.sector_size {
        return Err(Error::disagree(
            Fact::SectorSize,
            "the sector size asked for",
            format!("{} bytes", args.sector_size),
            "the registered proof",
            format!("{rp:?}"),
        ));
    }
    let spec = SynthSpec {
        registered_proof: rp,
        seed: args.seed,
        prover_id: crate::ids::prover_id_from_miner(args.miner_id),
        sector_id: args.sector_id,
    };
    let c1 = synthesize(&spec)?;
    let check_ms = if args.no_check {
        None
    } else {
        let t = Instant::now();
        if !verify_vanilla(&c1.output, &c1.prover_id, c1.sector_id)? {
            return Err(Error::internal(
                "the synthetic C1 output does not pass the vanilla verifier",
            ));
        }
        Some(ms(t.elapsed()))
    };
    let file = std::fs::File::create(&args.out).map_err(|e| Error::io(&args.out, e))?;
    let mut w = std::io::BufWriter::new(file);
    serde_json::to_writer(&mut w, &c1.output).map_err(|e| Error::io(&args.out, e.into()))?;
    let file = w
        .into_inner()
        .map_err(|e| Error::io(&args.out, e.into_error()))?;
    file.sync_all().map_err(|e| Error::io(&args.out, e))?;
    let bytes = file.metadata().map_err(|e| Error::io(&args.out, e))?.len();
    let o = &c1.output;
    Ok(C1SynthReport {
        out: args.out.clone(),
        registered_proof: format!("{rp:?}"),
        sector_id: c1.sector_id,
        prover_id: hex(&c1.prover_id),
        ticket: hex(&o.ticket),
        seed: hex(&o.seed),
        comm_d: hex(&o.comm_d),
        comm_r: hex(&o.comm_r),
        bytes,
        stats: c1.stats,
        check_ms,
    })
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
