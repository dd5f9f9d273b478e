//! The device's resident parameter sets as the backend operates on them:
//! naming sets, making them resident ahead of a proof, listing, evicting
//! and capping them (the table itself is [`crate::residency`]'s).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use cuzk_core::Parameters;

use super::{bases::params_bytes, relock, CudaBackend, ResidentBases, WeakKey};
use crate::error::{GpuError, Result};
use crate::residency::{ResidencyTable, ResidentInfo};

impl CudaBackend {
    pub fn parameter_uploads(&self) -> u64 {
        self.uploads.load(Ordering::Relaxed)
    }

    /// The parameter sets resident now (most recently used first).
    pub fn resident(&self) -> Vec<ResidentInfo> {
        relock(&self.resident).list()
    }

    /// Whether the set `id` is resident.
    pub fn is_resident(&self, id: &str) -> bool {
        relock(&self.resident).contains(id)
    }

    /// Takes the set `id` out of the residency table; its VRAM returns to
    /// the budget once no partition in flight uses it. False when it was
    /// not resident.
    pub fn evict_resident(&self, id: &str) -> bool {
        let gone = relock(&self.resident).remove(id);
        let was = gone.is_some();
        drop(gone);
        self.budget.notify();
        was
    }

    /// Caps the bytes all resident sets hold together (`[params]
    /// vram_budget`), inside the device's budget; None: the budget only.
    pub fn set_resident_cap(&self, cap: Option<u64>) {
        relock(&self.resident).set_cap(cap);
    }

    /// Names `params` `id` for the residency table: when a partition makes
    /// them resident, they are listed (and evicted) under this id.
    pub fn name_parameters(&self, id: &str, params: &Parameters) {
        let mut names = relock(&self.names);
        names.retain(|(k, _)| !k.dead() && !k.holds(params));
        names.push((WeakKey::of(params), id.to_owned()));
    }

    /// The id of `params`: the name given to them, or one derived from
    /// their identity (the address of their H vector, which cannot be
    /// reused while a resident entry or a name refers to it weakly).
    pub(super) fn id_of(&self, params: &Parameters) -> String {
        let names = relock(&self.names);
        match names.iter().find(|(k, _)| k.holds(params)) {
            Some((_, id)) => id.clone(),
            None => format!("params@{:x}", params.h.key().addr()),
        }
    }

    /// Makes `params` resident ahead of the first proof (a scheduler's
    /// parameter tier); returns the device bytes they occupy.
    /// [`Self::make_resident_as`] under the id of `params`.
    pub fn make_resident(&self, params: &Parameters) -> Result<u64> {
        let id = self.id_of(params);
        self.make_resident_as(&id, params)
    }

    /// Makes `params` resident under `id` (and names them so), beside the
    /// sets already resident when they fit, else in place of unused ones
    /// (least recently used first). Never waits: while partitions wait for
    /// memory, while every worker is busy, or when what is free and unused
    /// does not make room, it fails, and the parameters go up when a
    /// partition's plan wants them. Fails with both sizes when they exceed
    /// the budget.
    pub fn make_resident_as(&self, id: &str, params: &Parameters) -> Result<u64> {
        let bytes = params_bytes(params)?;
        self.name_parameters(id, params);
        if let Some(r) = relock(&self.resident).get(id) {
            if r.holds(params) {
                return Ok(r.reservation.bytes());
            }
        }
        // The lock order of `prove_partition`: slot, planning, resident.
        // Every worker busy: not now (the next partition's plan uploads
        // them if it wants them resident).
        let no_room = |table: &ResidencyTable<ResidentBases>| GpuError::Residency {
            device: self.label.clone(),
            source: crate::residency::ResidencyError::NoRoomNow {
                id: id.to_owned(),
                needed: bytes,
                available: 0,
                evictable: table.evictable_bytes(Some(id)),
                pinned: table.pinned_bytes(Some(id)),
            },
        };
        let Some(slot) = self.try_acquire_slot() else {
            return Err(no_room(&relock(&self.resident)));
        };
        let _planning = relock(&self.planning);
        let mut table = relock(&self.resident);
        // Made resident by a partition before they were named: renamed.
        if let Some(other) = table.find_id(|b| b.holds(params)) {
            let (_, stale) = table.rename(&other, id);
            drop(stale);
        }
        if let Some(r) = table.get(id) {
            if r.holds(params) {
                return Ok(r.reservation.bytes());
            }
        }
        let victims = table
            .admit(id, bytes, self.budget.available(), self.budget.capacity())
            .map_err(|source| GpuError::Residency {
                device: self.label.clone(),
                source,
            })?;
        if self.budget.queued() > 0 {
            // Waiting partitions come first; the room is theirs.
            return Err(no_room(&table));
        }
        self.evict_locked(&mut table, &victims)?;
        // A stale entry of this id (other parameters) goes too.
        let stale = table.remove(id);
        drop(stale);
        // Readable while the upload runs (see `try_admit`).
        drop(table);
        let bases = self.upload_bases(&slot, params)?;
        let bytes = bases.reservation.bytes();
        relock(&self.resident).insert(id, bytes, Arc::new(bases));
        Ok(bytes)
    }

    /// Evicts `victims` from the table (unused sets: their memory returns
    /// as they drop) and waits for the frees, so the next allocation finds
    /// the memory.
    pub(super) fn evict_locked(
        &self,
        table: &mut ResidencyTable<ResidentBases>,
        victims: &[String],
    ) -> Result<()> {
        if victims.is_empty() {
            return Ok(());
        }
        for v in victims {
            drop(table.remove(v));
        }
        // The points were freed on the streams that uploaded them.
        self.ctx
            .synchronize()
            .map_err(|e| self.drv("synchronize (eviction)", e))
    }
}
