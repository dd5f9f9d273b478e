//! The parameter manager: where each circuit kind's Groth16 parameters live
//! and how much of each memory tier they take.
//!
//! Tiers, fastest first: resident in VRAM (per device, through the
//! [`DeviceBackend`]), decoded in pinned host RAM (what a prover reads),
//! memory-mapped, and on disk. The host tiers have budgets here; entries
//! no job uses are evicted least recently used first, and an entry in use
//! (reference count above zero) is never evicted. When every prover keeps
//! parameters resident on a GPU, nothing is decoded into host RAM: leases
//! hand out the mapped file's points ([`Parameters::mapped`]), which each
//! GPU decodes a piece at a time as it uploads them.
//!
//! The VRAM tier is the backend's: each device's prover keeps its own
//! residency table under the device's one VRAM budget (several sets at
//! once when they fit, unused ones evicted least recently used first when
//! a partition needs the room), so this manager keeps no account of VRAM.
//! It asks the backend what is resident ([`DeviceBackend::resident_params`])
//! for status, [`ParamManager::is_resident`] and eviction, and passes
//! `[params] vram_budget` on as the backend's cap on resident parameter
//! bytes per device. Files are resolved only inside the
//! configured directory, by ids that kinds supply and that are checked to
//! be plain file names; nothing a request carries becomes a path.
//!
//! Point checks (`[params] check_points`: every point in the subgroup;
//! decoded on every core with the on-curve check, then each section's
//! subgroup check on the GPUs where the backend has them,
//! [`DeviceBackend::subgroup_checker`], else on every core) are paid once
//! per file: a checked
//! file gets a record beside it, `<id>.params.checked`, keyed by its size,
//! modification time and a SHA-256 of its head, tail and sampled points
//! ([`check_record`]); a file whose record matches is loaded with the
//! on-curve check only, and a file changed since (or a missing or other
//! record) is checked again.

use crate::devices::DeviceBackend;
use crate::kinds::{CircuitKind, KindError};
use cuzk_core::params::{MappedParameters, Parameters, Section};
use cuzk_core::subgroup::{CpuSubgroupChecker, SubgroupChecker};
use cuzk_core::{G1Affine, G2Affine};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

#[derive(Debug, thiserror::Error)]
pub enum ParamsError {
    #[error("parameter id {0:?} is not a plain file name")]
    InvalidId(String),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} resolves outside the parameter directory {}", path.display(), dir.display())]
    OutsideDir { path: PathBuf, dir: PathBuf },
    #[error("parameters {id}: {source}")]
    Core {
        id: String,
        #[source]
        source: cuzk_core::Error,
    },
    #[error(transparent)]
    Kind(#[from] KindError),
    #[error("parameters {id} need {bytes} bytes in the {tier} tier; its budget is {budget}")]
    TooLarge {
        id: String,
        tier: &'static str,
        bytes: u64,
        budget: u64,
    },
    #[error("loading parameters {id} stopped unexpectedly")]
    LoaderFailed { id: String },
}

#[derive(Clone, Copy, Debug)]
pub struct TierBudgets {
    /// Cap on resident parameter bytes per device, enforced by the
    /// backend inside its device's VRAM budget (`u64::MAX`: no cap).
    pub vram: u64,
    pub pinned: u64,
    pub mapped: u64,
    pub disk: u64,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct ParamsStatus {
    pub id: String,
    pub tier: &'static str,
    pub bytes: u64,
    pub ref_count: u32,
    pub devices: Vec<u32>,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct TierUsage {
    pub tier: &'static str,
    pub used_bytes: u64,
    pub budget_bytes: u64,
}

struct Entry {
    file: PathBuf,
    file_bytes: u64,
    mapped: Option<Arc<MappedParameters>>,
    /// What leases hand out: decoded (counted in the pinned tier), or the
    /// mapped file's points when the GPUs upload from it (counted nowhere:
    /// page cache).
    pinned: Option<Arc<Parameters>>,
    pinned_bytes: u64,
    refs: u32,
    last_used: u64,
}

#[derive(Default)]
struct State {
    entries: HashMap<String, Entry>,
    /// Pinned bytes promised to loads in progress.
    pinned_reserved: u64,
    clock: u64,
}

pub struct ParamManager {
    dir: PathBuf,
    budgets: TierBudgets,
    check_points: bool,
    devices: Arc<dyn DeviceBackend>,
    /// Ids whose files the daemon can regenerate, so may delete.
    regenerable: HashSet<String>,
    state: Mutex<State>,
    released: Notify,
    load_locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// A job's hold on parameters (decoded, or left in their mapped file when
/// the GPUs keep them resident); while it lives the entry is not
/// evicted from any tier.
pub struct ParamsLease {
    mgr: Arc<ParamManager>,
    id: String,
    pub params: Arc<Parameters>,
    /// Time spent making the parameters available (zero when resident).
    pub load_time: Duration,
    /// Whether this lease's load checked every point's subgroup membership
    /// (false when resident, unchecked by configuration, or checked before
    /// by its record).
    pub points_checked: bool,
}

impl ParamsLease {
    pub fn id(&self) -> &str {
        &self.id
    }
}

impl Drop for ParamsLease {
    fn drop(&mut self) {
        let mut st = self.mgr.lock();
        st.clock += 1;
        let now = st.clock;
        if let Some(e) = st.entries.get_mut(&self.id) {
            e.refs = e.refs.saturating_sub(1);
            e.last_used = now;
        }
        drop(st);
        self.mgr.released.notify_waiters();
    }
}

/// Bytes the decoded parameters occupy in RAM.
pub fn decoded_bytes(m: &MappedParameters) -> u64 {
    let g1 = std::mem::size_of::<G1Affine>() as u64;
    let g2 = std::mem::size_of::<G2Affine>() as u64;
    let n = |s| m.len(s) as u64;
    (n(Section::H) + n(Section::L) + n(Section::A) + n(Section::BG1) + m.vk.ic.len() as u64) * g1
        + n(Section::BG2) * g2
}

/// Longest parameter id: file names are at most 255 bytes, and the id gets
/// an extension (`.params`, `.vk`); filecoin-proofs' names reach 145.
pub const MAX_ID_LEN: usize = 240;

pub fn check_id(id: &str) -> Result<(), ParamsError> {
    let ok = !id.is_empty()
        && id.len() <= MAX_ID_LEN
        && !id.starts_with('.')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(ParamsError::InvalidId(id.chars().take(64).collect()))
    }
}

impl ParamManager {
    /// `dir` is created if absent. `regenerable`: ids of kinds that can
    /// generate their parameters.
    pub fn new(
        dir: &Path,
        budgets: TierBudgets,
        check_points: bool,
        devices: Arc<dyn DeviceBackend>,
        regenerable: HashSet<String>,
    ) -> Result<Arc<Self>, ParamsError> {
        std::fs::create_dir_all(dir).map_err(|source| ParamsError::Io {
            path: dir.to_owned(),
            source,
        })?;
        let dir = dir.canonicalize().map_err(|source| ParamsError::Io {
            path: dir.to_owned(),
            source,
        })?;
        // One owner of VRAM: the backend's budget, with this as its cap on
        // resident parameters.
        devices.set_resident_cap((budgets.vram != u64::MAX).then_some(budgets.vram));
        Ok(Arc::new(Self {
            dir,
            budgets,
            check_points,
            devices,
            regenerable,
            state: Mutex::new(State::default()),
            released: Notify::new(),
            load_locks: Mutex::new(HashMap::new()),
        }))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The file holding `id`'s parameters, inside the parameter directory.
    pub fn path_of(&self, id: &str) -> Result<PathBuf, ParamsError> {
        check_id(id)?;
        Ok(self.dir.join(format!("{id}.params")))
    }

    /// The verifying key file beside `id`'s parameters (`<id>.vk`).
    pub fn vk_path_of(&self, id: &str) -> Result<PathBuf, ParamsError> {
        check_id(id)?;
        Ok(self.dir.join(format!("{id}.vk")))
    }

    /// The verifying key of `kind`'s parameters, encoded as a `.vk` file
    /// (bellperson's format), and its public input count, loading the
    /// parameters if needed.
    pub async fn verifying_key(
        self: &Arc<Self>,
        kind: &Arc<dyn CircuitKind>,
    ) -> Result<(Vec<u8>, u32), ParamsError> {
        let lease = self.acquire(kind).await?;
        let vk_path = self.vk_path_of(&lease.id)?;
        let mut bytes = Vec::with_capacity(lease.params.vk.encoded_len());
        lease
            .params
            .vk
            .write(&mut bytes)
            .map_err(|source| ParamsError::Io {
                path: vk_path,
                source,
            })?;
        let inputs = lease.params.vk.ic.len().saturating_sub(1) as u32;
        Ok((bytes, inputs))
    }

    fn try_lease(self: &Arc<Self>, id: &str) -> Option<ParamsLease> {
        let mut st = self.lock();
        st.clock += 1;
        let now = st.clock;
        let e = st.entries.get_mut(id)?;
        let params = e.pinned.clone()?;
        e.refs += 1;
        e.last_used = now;
        Some(ParamsLease {
            mgr: self.clone(),
            id: id.to_owned(),
            params,
            load_time: Duration::ZERO,
            points_checked: false,
        })
    }

    /// Parameters for `kind` (decoded, or mapped for GPUs that keep them
    /// resident), loading (or generating) them first if
    /// needed. Waits while the pinned tier is full of entries in use.
    pub async fn acquire(
        self: &Arc<Self>,
        kind: &Arc<dyn CircuitKind>,
    ) -> Result<ParamsLease, ParamsError> {
        let id = kind.params_id().to_owned();
        check_id(&id)?;
        if let Some(l) = self.try_lease(&id) {
            return Ok(l);
        }
        let start = Instant::now();
        let lock = {
            let mut locks = self.load_locks.lock().unwrap_or_else(|e| e.into_inner());
            locks.entry(id.clone()).or_default().clone()
        };
        let _loading = lock.lock().await;
        if let Some(mut l) = self.try_lease(&id) {
            l.load_time = start.elapsed();
            return Ok(l);
        }
        // File and map (blocking work).
        let mgr = self.clone();
        let k = kind.clone();
        let mapped = tokio::task::spawn_blocking(move || mgr.ensure_mapped(&k))
            .await
            .map_err(|_| ParamsError::LoaderFailed { id: id.clone() })??;
        // GPUs that keep parameters resident upload them from the mapped
        // file, decoding as they go: the lease then holds the mapping, and
        // the pinned tier nothing (a 32 GiB PoRep's 47 GB are never decoded
        // whole in host memory).
        let from_file = self.leases_mapped();
        let bytes = if from_file { 0 } else { decoded_bytes(&mapped) };
        self.reserve_pinned(&id, bytes).await?;
        let check_points = self.check_points;
        let m2 = mapped.clone();
        let devices = self.devices.clone();
        let loaded = tokio::task::spawn_blocking(move || {
            let record = check_record(&m2.path);
            let checked_before = record.as_ref().is_some_and(|r| {
                std::fs::read_to_string(record_path(&m2.path)).is_ok_and(|s| s.trim() == r)
            });
            let check = check_points && !checked_before;
            let t = Instant::now();
            // The GPUs' subgroup checker where the backend has one, else
            // every core's.
            let gpu = if check { devices.subgroup_checker() } else { None };
            let checker: Option<&dyn SubgroupChecker> = match (&gpu, check) {
                (Some(g), _) => Some(g.as_ref()),
                (None, true) => Some(&CpuSubgroupChecker),
                (None, false) => None,
            };
            if let Some(c) = checker {
                tracing::info!(path = %m2.path.display(), checker = %c.name(), "checking every point of the parameters (once per file)");
            }
            let p = if from_file {
                if let Some(c) = checker {
                    m2.check_points(c)?;
                }
                Parameters::mapped(m2.clone())?
            } else {
                m2.load_with(checker)?
            };
            if check {
                tracing::info!(path = %m2.path.display(), seconds = t.elapsed().as_secs_f64(), "points checked");
            }
            if check {
                // The record is a cache: a directory we cannot write to
                // means checking again next time, not a failure.
                if let Some(r) = &record {
                    let at = record_path(&m2.path);
                    if let Err(e) = std::fs::write(&at, format!("{r}\n")) {
                        tracing::warn!(path = %at.display(), error = %e, "could not record the point check");
                    }
                }
            }
            Ok::<_, cuzk_core::Error>((p, check))
        })
        .await;
        let mut st = self.lock();
        st.pinned_reserved -= bytes;
        let (params, points_checked) = match loaded {
            Ok(Ok((p, c))) => (Arc::new(p), c),
            Ok(Err(source)) => return Err(ParamsError::Core { id, source }),
            Err(_) => return Err(ParamsError::LoaderFailed { id }),
        };
        st.clock += 1;
        let now = st.clock;
        let e = st
            .entries
            .get_mut(&id)
            .ok_or_else(|| ParamsError::LoaderFailed { id: id.clone() })?;
        e.pinned = Some(params.clone());
        e.pinned_bytes = bytes;
        e.refs += 1;
        e.last_used = now;
        drop(st);
        Ok(ParamsLease {
            mgr: self.clone(),
            id,
            params,
            load_time: start.elapsed(),
            points_checked,
        })
    }

    /// Whether leases hand out parameters left in their mapped file
    /// (every prover keeps them resident on a GPU) rather than decoded.
    fn leases_mapped(&self) -> bool {
        self.devices.gpu_present() && self.devices.keeps_parameters_resident()
    }

    /// Make room for `bytes` in the pinned tier, evicting unused entries,
    /// waiting for entries in use to be released.
    async fn reserve_pinned(&self, id: &str, bytes: u64) -> Result<(), ParamsError> {
        if bytes > self.budgets.pinned {
            return Err(ParamsError::TooLarge {
                id: id.to_owned(),
                tier: "pinned",
                bytes,
                budget: self.budgets.pinned,
            });
        }
        loop {
            let notified = self.released.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut st = self.lock();
                let victims = {
                    let used: u64 = st.entries.values().map(|e| e.pinned_bytes).sum::<u64>()
                        + st.pinned_reserved;
                    lru_victims(
                        st.entries
                            .iter()
                            .filter(|(k, e)| e.pinned.is_some() && e.refs == 0 && k.as_str() != id)
                            .map(|(k, e)| (k.clone(), e.last_used, e.pinned_bytes)),
                        used,
                        bytes,
                        self.budgets.pinned,
                    )
                };
                if let Some(victims) = victims {
                    for v in victims {
                        if let Some(e) = st.entries.get_mut(&v) {
                            tracing::info!(params = %v, bytes = e.pinned_bytes, "evicting from pinned RAM");
                            e.pinned = None;
                            e.pinned_bytes = 0;
                            // The device copy is known by the host vectors'
                            // identity, which a reload does not keep.
                            self.drop_vram(&v);
                        }
                    }
                    st.pinned_reserved += bytes;
                    return Ok(());
                }
            }
            notified.await;
        }
    }

    /// Asks every device to free `id`; whether any held it.
    fn drop_vram(&self, id: &str) -> bool {
        if !self.devices.gpu_present() {
            return false;
        }
        let mut held = false;
        for d in 0..self.devices.device_count() {
            if self.devices.holds_params(d, id) {
                self.devices.release_params(d, id);
                held = true;
            }
        }
        held
    }

    /// Devices holding `id` now, as the backend says.
    fn vram_devices(&self, id: &str) -> Vec<u32> {
        if !self.devices.gpu_present() {
            return Vec::new();
        }
        (0..self.devices.device_count())
            .filter(|&d| self.devices.holds_params(d, id))
            .collect()
    }

    /// The entry's file exists (generated if allowed) and is mapped.
    fn ensure_mapped(
        &self,
        kind: &Arc<dyn CircuitKind>,
    ) -> Result<Arc<MappedParameters>, ParamsError> {
        let id = kind.params_id().to_owned();
        if let Some(m) = self.lock().entries.get(&id).and_then(|e| e.mapped.clone()) {
            return Ok(m);
        }
        let path = self.path_of(&id)?;
        if !path.exists() {
            let engine = self.devices.fixed_base_engine();
            let generated = match &engine {
                Some(e) => kind.generate_params_on(e.as_ref()),
                None => kind.generate_params(),
            };
            let params = match generated {
                Some(p) => p?,
                None => {
                    return Err(KindError::NoGenerator {
                        kind: kind.name().to_owned(),
                        file: format!("{id}.params"),
                        dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
                    }
                    .into())
                }
            };
            tracing::info!(
                params = %id,
                path = %path.display(),
                engine = %engine.as_ref().map_or_else(|| "cpu".to_string(), |e| e.name()),
                "generated random parameters"
            );
            let tmp = self
                .dir
                .join(format!(".{id}.params.tmp{}", std::process::id()));
            params
                .write_file(&tmp)
                .map_err(|source| ParamsError::Core {
                    id: id.clone(),
                    source,
                })?;
            std::fs::rename(&tmp, &path).map_err(|source| ParamsError::Io {
                path: path.clone(),
                source,
            })?;
            // The verifying key beside them, for `cuzk verify` (the
            // layout Filecoin's files have: `<id>.params`, `<id>.vk`).
            let vk_path = self.vk_path_of(&id)?;
            params
                .vk
                .write_file(&vk_path)
                .map_err(|source| ParamsError::Core {
                    id: id.clone(),
                    source,
                })?;
            // Points this process just computed need no subgroup check:
            // the file is recorded as checked, so its first load skips
            // them (a file changed later is checked again).
            if let Some(r) = check_record(&path) {
                let at = record_path(&path);
                if let Err(e) = std::fs::write(&at, format!("{r}\n")) {
                    tracing::warn!(path = %at.display(), error = %e, "could not record the generated file as checked");
                }
            }
        }
        let canonical = path.canonicalize().map_err(|source| ParamsError::Io {
            path: path.clone(),
            source,
        })?;
        if !canonical.starts_with(&self.dir) {
            return Err(ParamsError::OutsideDir {
                path,
                dir: self.dir.clone(),
            });
        }
        let file_bytes = std::fs::metadata(&canonical)
            .map_err(|source| ParamsError::Io {
                path: canonical.clone(),
                source,
            })?
            .len();
        if file_bytes > self.budgets.mapped {
            return Err(ParamsError::TooLarge {
                id,
                tier: "mapped",
                bytes: file_bytes,
                budget: self.budgets.mapped,
            });
        }
        let mapped =
            Arc::new(
                MappedParameters::open(&canonical).map_err(|source| ParamsError::Core {
                    id: id.clone(),
                    source,
                })?,
            );
        let mut st = self.lock();
        // Unmap unused entries until the new map fits; entries in use keep
        // theirs (then the tier runs over budget until they are released).
        let used: u64 = st
            .entries
            .values()
            .filter(|e| e.mapped.is_some())
            .map(|e| e.file_bytes)
            .sum();
        let victims = lru_victims(
            st.entries
                .iter()
                .filter(|(k, e)| e.mapped.is_some() && e.refs == 0 && **k != id)
                .map(|(k, e)| (k.clone(), e.last_used, e.file_bytes)),
            used,
            file_bytes,
            self.budgets.mapped,
        )
        .unwrap_or_default();
        for v in victims {
            if let Some(e) = st.entries.get_mut(&v) {
                e.mapped = None;
            }
        }
        st.clock += 1;
        let now = st.clock;
        let e = st.entries.entry(id.clone()).or_insert_with(|| Entry {
            file: canonical.clone(),
            file_bytes,
            mapped: None,
            pinned: None,
            pinned_bytes: 0,
            refs: 0,
            last_used: now,
        });
        e.file = canonical;
        e.file_bytes = file_bytes;
        e.mapped = Some(mapped.clone());
        drop(st);
        self.enforce_disk_budget(&id);
        Ok(mapped)
    }

    /// Delete least recently used regenerable files that no tier holds
    /// until the regenerable files fit the disk budget. `keep` is never
    /// deleted.
    fn enforce_disk_budget(&self, keep: &str) {
        let Ok(rd) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let mut files = Vec::new();
        for ent in rd.flatten() {
            let name = ent.file_name().to_string_lossy().into_owned();
            let Some(id) = name.strip_suffix(".params") else {
                continue;
            };
            if !self.regenerable.contains(id) {
                continue;
            }
            let len = ent.metadata().map(|m| m.len()).unwrap_or(0);
            files.push((id.to_owned(), len));
        }
        let mut st = self.lock();
        let used: u64 = files.iter().map(|f| f.1).sum();
        let candidates = files.into_iter().filter(|(id, _)| {
            id != keep
                && match st.entries.get(id) {
                    None => true,
                    Some(e) => {
                        e.refs == 0 && e.pinned.is_none() && self.vram_devices(id).is_empty()
                    }
                }
        });
        let lru: Vec<_> = candidates
            .map(|(id, len)| {
                let t = st.entries.get(&id).map_or(0, |e| e.last_used);
                (id, t, len)
            })
            .collect();
        // Best effort: files in use may keep the directory over budget, but
        // everything else goes, oldest first, until it fits.
        let mut lru = lru;
        lru.sort_by_key(|x| x.1);
        let mut used = used;
        let mut victims = Vec::new();
        for (id, _, len) in lru {
            if used <= self.budgets.disk {
                break;
            }
            used = used.saturating_sub(len);
            victims.push(id);
        }
        for v in victims {
            st.entries.remove(&v);
            let p = self.dir.join(format!("{v}.params"));
            let _ = std::fs::remove_file(record_path(&p));
            // Its key goes with it: regenerated parameters get another.
            let _ = std::fs::remove_file(self.dir.join(format!("{v}.vk")));
            match std::fs::remove_file(&p) {
                Ok(()) => {
                    tracing::info!(path = %p.display(), "deleted generated parameters (disk budget)")
                }
                Err(e) => {
                    tracing::warn!(path = %p.display(), error = %e, "could not delete generated parameters")
                }
            }
        }
    }

    /// Make `lease`'s parameters resident on `device` (GPU backends only).
    /// The backend makes room (evicting sets no partition uses, least
    /// recently used first) or refuses for now; a refusal is logged and the
    /// prover uploads them itself when its plan wants them, under the same
    /// id.
    pub fn ensure_resident(&self, lease: &ParamsLease, device: u32) {
        if !self.devices.gpu_present() || self.devices.holds_params(device, &lease.id) {
            return;
        }
        if let Err(e) = self.devices.upload_params(device, &lease.id, &lease.params) {
            tracing::debug!(params = %lease.id, device, error = %e, "parameters not made resident ahead of the proof")
        }
    }

    /// Whether `device` holds `id` in VRAM, as its backend says now.
    pub fn is_resident(&self, id: &str, device: u32) -> bool {
        self.devices.gpu_present() && self.devices.holds_params(device, id)
    }

    /// Drop `ids` from the memory tiers. Returns (evicted, busy).
    pub fn evict(&self, ids: &[String]) -> (Vec<String>, Vec<String>) {
        let mut st = self.lock();
        let (mut evicted, mut busy) = (Vec::new(), Vec::new());
        for id in ids {
            match st.entries.get_mut(id) {
                Some(e) if e.refs > 0 => busy.push(id.clone()),
                Some(e) => {
                    let held = e.pinned.is_some() || e.mapped.is_some();
                    e.pinned = None;
                    e.pinned_bytes = 0;
                    e.mapped = None;
                    if self.drop_vram(id) || held {
                        evicted.push(id.clone());
                    }
                }
                // Resident on a device without an entry here (the backend
                // may hold sets under ids of its own).
                None => {
                    if self.drop_vram(id) {
                        evicted.push(id.clone());
                    }
                }
            }
        }
        (evicted, busy)
    }

    pub fn status(&self) -> (Vec<ParamsStatus>, Vec<TierUsage>) {
        // What each device holds, from its backend (asked before the lock:
        // nothing here decides VRAM).
        let mut vram: BTreeMap<String, (u64, Vec<u32>)> = BTreeMap::new();
        if self.devices.gpu_present() {
            for d in 0..self.devices.device_count() {
                for r in self.devices.resident_params(d) {
                    let v = vram.entry(r.id).or_default();
                    v.0 += r.bytes;
                    v.1.push(d);
                }
            }
        }
        let st = self.lock();
        let mut list: Vec<ParamsStatus> = st
            .entries
            .iter()
            .map(|(id, e)| {
                let (tier, bytes, devices) = if let Some((b, d)) = vram.get(id) {
                    ("vram", *b, d.clone())
                } else if e.pinned.as_ref().is_some_and(|p| !p.is_mapped()) {
                    ("pinned", e.pinned_bytes, Vec::new())
                } else if e.mapped.is_some() {
                    ("mapped", e.file_bytes, Vec::new())
                } else {
                    ("disk", e.file_bytes, Vec::new())
                };
                ParamsStatus {
                    id: id.clone(),
                    tier,
                    bytes,
                    ref_count: e.refs,
                    devices,
                }
            })
            .collect();
        // Sets the backend holds under ids this manager has no entry for.
        for (id, (bytes, devices)) in &vram {
            if !st.entries.contains_key(id) {
                list.push(ParamsStatus {
                    id: id.clone(),
                    tier: "vram",
                    bytes: *bytes,
                    ref_count: 0,
                    devices: devices.clone(),
                });
            }
        }
        list.sort_by(|a, b| a.id.cmp(&b.id));
        let sum = |f: &dyn Fn(&Entry) -> u64| st.entries.values().map(f).sum::<u64>();
        let tiers = vec![
            TierUsage {
                tier: "vram",
                used_bytes: vram.values().map(|v| v.0).sum(),
                budget_bytes: self.budgets.vram,
            },
            TierUsage {
                tier: "pinned",
                used_bytes: sum(&|e| e.pinned_bytes) + st.pinned_reserved,
                budget_bytes: self.budgets.pinned,
            },
            TierUsage {
                tier: "mapped",
                used_bytes: sum(&|e| if e.mapped.is_some() { e.file_bytes } else { 0 }),
                budget_bytes: self.budgets.mapped,
            },
            TierUsage {
                tier: "disk",
                used_bytes: sum(&|e| {
                    if self.regenerable.contains(e.file_stem()) {
                        e.file_bytes
                    } else {
                        0
                    }
                }),
                budget_bytes: self.budgets.disk,
            },
        ];
        (list, tiers)
    }
}

impl Entry {
    fn file_stem(&self) -> &str {
        self.file
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".params"))
            .unwrap_or("")
    }
}

/// Least recently used candidates to drop so that `used + incoming` fits
/// `budget`; None when even dropping all of them is not enough.
/// Candidates are (id, last_used, bytes).
pub fn lru_victims(
    candidates: impl Iterator<Item = (String, u64, u64)>,
    used: u64,
    incoming: u64,
    budget: u64,
) -> Option<Vec<String>> {
    let mut c: Vec<_> = candidates.collect();
    c.sort_by_key(|x| x.1);
    let mut used = used;
    let mut out = Vec::new();
    for (id, _, bytes) in c {
        if used.saturating_add(incoming) <= budget {
            break;
        }
        used = used.saturating_sub(bytes);
        out.push(id);
    }
    (used.saturating_add(incoming) <= budget).then_some(out)
}

/// Where the point-check record of parameter file `path` is kept.
pub fn record_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(".checked");
    path.with_file_name(name)
}

/// The point-check record a parameter file would have now: its size, its
/// modification time and a SHA-256 of its first and last 64 KiB and of 256
/// windows of 4 KiB spread evenly over the points between (the header, the
/// verifying key and a sample of every section). None when the file
/// cannot be read. A file rewritten, truncated or replaced gets another
/// record (its time changes even where the sample does not).
pub fn check_record(path: &Path) -> Option<String> {
    use sha2::Digest;
    use std::os::unix::fs::FileExt;
    const EDGE: u64 = 64 << 10;
    const WINDOW: u64 = 4 << 10;
    const WINDOWS: u64 = 256;
    let f = std::fs::File::open(path).ok()?;
    let meta = f.metadata().ok()?;
    let size = meta.len();
    let mtime = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    let mut h = sha2::Sha256::new();
    let mut read = |at: u64, len: u64| -> Option<()> {
        let len = len.min(size.saturating_sub(at));
        let mut buf = vec![0u8; len as usize];
        f.read_exact_at(&mut buf, at).ok()?;
        h.update(&buf);
        Some(())
    };
    read(0, EDGE)?;
    let middle = size.saturating_sub(2 * EDGE);
    if middle > 0 {
        for i in 0..WINDOWS {
            read(EDGE + middle * i / WINDOWS, WINDOW.min(middle))?;
        }
    }
    read(size.saturating_sub(EDGE).max(EDGE.min(size)), EDGE)?;
    let digest: [u8; 32] = h.finalize().into();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    Some(format!(
        "cuzk points checked v1 size={size} mtime_ns={mtime} sample_sha256={hex}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_plain_file_names() {
        // The longest filecoin-proofs name (145 characters) must pass.
        let fil = format!("v28-{}", "x".repeat(141));
        for ok in [
            "porep-like-10",
            "a.b_c",
            "X1",
            fil.as_str(),
            &"y".repeat(MAX_ID_LEN),
        ] {
            check_id(ok).unwrap();
        }
        for bad in [
            "",
            "../etc/passwd",
            "/abs",
            "a/b",
            ".hidden",
            "a\0b",
            "a b",
            &"x".repeat(MAX_ID_LEN + 1),
        ] {
            assert!(check_id(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn lru_victims_picks_oldest_and_reports_impossible() {
        let c = || {
            vec![
                ("new".to_string(), 9, 40),
                ("old".to_string(), 1, 30),
                ("mid".to_string(), 5, 30),
            ]
            .into_iter()
        };
        assert_eq!(lru_victims(c(), 100, 0, 100), Some(vec![]));
        assert_eq!(lru_victims(c(), 100, 20, 100), Some(vec!["old".into()]));
        assert_eq!(
            lru_victims(c(), 100, 50, 100),
            Some(vec!["old".into(), "mid".into()])
        );
        assert_eq!(
            lru_victims(c(), 100, 100, 100),
            Some(vec!["old".into(), "mid".into(), "new".into()])
        );
        assert_eq!(lru_victims(c(), 120, 100, 100), None);
    }
}
