//! The residency table of one device: which parameter sets are resident
//! in its VRAM, how many bytes each holds, when each was last used and
//! whether a partition in flight is using it. Pure bookkeeping (no CUDA),
//! so the eviction policy is unit-tested without a GPU; the backend keeps
//! one table per device beside the device's [`crate::VramBudget`], whose
//! persistent reservations back the entries' bytes.
//!
//! Entries are keyed by a parameter id: the daemon's `params_id`, or an id
//! the backend derives from the parameters' identity for other callers.
//! A partition using a set holds a clone of the entry's `Arc`: that clone
//! is the pin. An entry whose `Arc` is held only by the table is unused
//! and may be evicted, least recently used first; a pinned entry never is
//! (removing it by id takes it out of the table, and its memory comes back
//! when the last partition using it drops its clone).

use std::sync::Arc;
use std::time::{Duration, Instant};

/// One resident set, as listed by [`ResidencyTable::list`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ResidentInfo {
    pub id: String,
    /// Device bytes the set holds (its five point vectors).
    pub bytes: u64,
    /// Partitions in flight using it now.
    pub in_use: usize,
    /// Time since it was last made resident or used.
    #[serde(serialize_with = "millis")]
    pub idle: Duration,
}

fn millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_millis() as u64)
}

#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum ResidencyError {
    /// The set can never be resident: it is larger than the whole budget
    /// (or the cap on resident parameters).
    #[error(
        "parameters {id} need {bytes} bytes of VRAM; the device's {limit_name} is {limit} bytes"
    )]
    TooLarge {
        id: String,
        bytes: u64,
        limit: u64,
        limit_name: &'static str,
    },
    /// Not now: even with every unused set evicted there is not room.
    #[error(
        "{needed} bytes of VRAM needed for {id}: {available} free, {evictable} more in unused \
         resident parameters, {pinned} in parameters partitions are using"
    )]
    NoRoomNow {
        id: String,
        needed: u64,
        available: u64,
        evictable: u64,
        pinned: u64,
    },
}

struct Entry<T> {
    id: String,
    bytes: u64,
    value: Arc<T>,
    /// LRU clock at the last use (larger is more recent).
    tick: u64,
    used_at: Instant,
}

impl<T> Entry<T> {
    fn in_use(&self) -> usize {
        Arc::strong_count(&self.value) - 1
    }
}

/// Resident parameter sets of one device (see the module docs).
pub struct ResidencyTable<T> {
    entries: Vec<Entry<T>>,
    clock: u64,
    /// Most bytes all resident sets may hold together (`[params]
    /// vram_budget`); None: only the device's budget limits them.
    cap: Option<u64>,
}

impl<T> Default for ResidencyTable<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> ResidencyTable<T> {
    pub fn new() -> Self {
        ResidencyTable {
            entries: Vec::new(),
            clock: 0,
            cap: None,
        }
    }

    pub fn set_cap(&mut self, cap: Option<u64>) {
        self.cap = cap;
    }
    pub fn cap(&self) -> Option<u64> {
        self.cap
    }

    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    fn find(&self, id: &str) -> Option<usize> {
        self.entries.iter().position(|e| e.id == id)
    }

    /// The set `id`, pinned by the returned clone, and marked used now.
    pub fn get(&mut self, id: &str) -> Option<Arc<T>> {
        let i = self.find(id)?;
        let tick = self.tick();
        let e = &mut self.entries[i];
        e.tick = tick;
        e.used_at = Instant::now();
        Some(e.value.clone())
    }

    /// The set `id` without marking it used.
    pub fn peek(&self, id: &str) -> Option<&Arc<T>> {
        self.find(id).map(|i| &self.entries[i].value)
    }

    pub fn contains(&self, id: &str) -> bool {
        self.find(id).is_some()
    }

    /// Adds `id` (replacing an entry of that id, which is returned), as
    /// the most recently used.
    pub fn insert(&mut self, id: &str, bytes: u64, value: Arc<T>) -> Option<Arc<T>> {
        let old = self.remove(id);
        let tick = self.tick();
        self.entries.push(Entry {
            id: id.to_owned(),
            bytes,
            value,
            tick,
            used_at: Instant::now(),
        });
        old
    }

    /// The id of the first entry whose value satisfies `pred`.
    pub fn find_id(&self, pred: impl Fn(&T) -> bool) -> Option<String> {
        self.entries
            .iter()
            .find(|e| pred(&e.value))
            .map(|e| e.id.clone())
    }

    /// Gives the entry `from` the id `to` (replacing an entry `to`, which
    /// is returned); false when there is no `from`.
    pub fn rename(&mut self, from: &str, to: &str) -> (bool, Option<Arc<T>>) {
        if from == to {
            return (self.contains(from), None);
        }
        let Some(i) = self.find(from) else {
            return (false, None);
        };
        let old = self.find(to).map(|j| self.entries.remove(j).value);
        let i = if old.is_some() {
            self.find(from).unwrap_or(i)
        } else {
            i
        };
        self.entries[i].id = to.to_owned();
        (true, old)
    }

    /// Takes `id` out of the table (its memory returns once no partition
    /// uses it).
    pub fn remove(&mut self, id: &str) -> Option<Arc<T>> {
        let i = self.find(id)?;
        Some(self.entries.remove(i).value)
    }

    /// Takes every entry out.
    pub fn clear(&mut self) -> Vec<Arc<T>> {
        self.entries.drain(..).map(|e| e.value).collect()
    }

    /// Bytes of every resident set.
    pub fn bytes(&self) -> u64 {
        self.entries.iter().map(|e| e.bytes).sum()
    }
    /// Bytes of `id` (0 when not resident).
    pub fn bytes_of(&self, id: &str) -> u64 {
        self.find(id).map_or(0, |i| self.entries[i].bytes)
    }
    /// Bytes of sets other than `except` that partitions are using.
    pub fn pinned_bytes(&self, except: Option<&str>) -> u64 {
        self.others(except)
            .filter(|e| e.in_use() > 0)
            .map(|e| e.bytes)
            .sum()
    }
    /// Bytes of sets other than `except` that no partition uses.
    pub fn evictable_bytes(&self, except: Option<&str>) -> u64 {
        self.others(except)
            .filter(|e| e.in_use() == 0)
            .map(|e| e.bytes)
            .sum()
    }

    fn others<'a>(&'a self, except: Option<&'a str>) -> impl Iterator<Item = &'a Entry<T>> + 'a {
        self.entries
            .iter()
            .filter(move |e| Some(e.id.as_str()) != except)
    }

    /// The unused sets other than `keep`, least recently used first, whose
    /// bytes together reach `shortfall`; None when all of them do not.
    pub fn victims(&self, shortfall: u64, keep: Option<&str>) -> Option<Vec<String>> {
        if shortfall == 0 {
            return Some(Vec::new());
        }
        let mut c: Vec<&Entry<T>> = self.others(keep).filter(|e| e.in_use() == 0).collect();
        c.sort_by_key(|e| e.tick);
        let mut freed = 0u64;
        let mut out = Vec::new();
        for e in c {
            if freed >= shortfall {
                break;
            }
            freed += e.bytes;
            out.push(e.id.clone());
        }
        (freed >= shortfall).then_some(out)
    }

    /// Evicts what [`victims`](Self::victims) names for `needed` bytes
    /// beside `available` free ones, returning the evicted values (their
    /// memory returns as they drop); evicts nothing and says why when
    /// even every unused set would not make room.
    pub fn make_room(
        &mut self,
        id: &str,
        needed: u64,
        available: u64,
        keep: Option<&str>,
    ) -> Result<Vec<(String, Arc<T>)>, ResidencyError> {
        let shortfall = needed.saturating_sub(available);
        match self.victims(shortfall, keep) {
            Some(v) => Ok(v
                .into_iter()
                .filter_map(|id| self.remove(&id).map(|x| (id, x)))
                .collect()),
            None => Err(ResidencyError::NoRoomNow {
                id: id.to_owned(),
                needed,
                available,
                evictable: self.evictable_bytes(keep),
                pinned: self.pinned_bytes(keep),
            }),
        }
    }

    /// Room for a new set `id` of `bytes` beside `available` free budget
    /// bytes (of `capacity` in all): the sets to evict for it (unused ones,
    /// least recently used first, and enough to stay under the cap), or
    /// why not. Nothing is evicted here; pass the ids to
    /// [`remove`](Self::remove).
    pub fn admit(
        &self,
        id: &str,
        bytes: u64,
        available: u64,
        capacity: u64,
    ) -> Result<Vec<String>, ResidencyError> {
        let too_large = |limit, limit_name| ResidencyError::TooLarge {
            id: id.to_owned(),
            bytes,
            limit,
            limit_name,
        };
        if bytes > capacity {
            return Err(too_large(capacity, "VRAM budget"));
        }
        if let Some(cap) = self.cap {
            if bytes > cap {
                return Err(too_large(
                    cap,
                    "cap on resident parameters ([params] vram_budget)",
                ));
            }
        }
        // What replacing an entry of the same id frees counts as free.
        let own = self.bytes_of(id);
        let budget_short = bytes.saturating_sub(available + own);
        let cap_short = self
            .cap
            .map_or(0, |cap| (self.bytes() - own + bytes).saturating_sub(cap));
        let shortfall = budget_short.max(cap_short);
        self.victims(shortfall, Some(id))
            .ok_or_else(|| ResidencyError::NoRoomNow {
                id: id.to_owned(),
                needed: bytes,
                available: available + own,
                evictable: self.evictable_bytes(Some(id)),
                pinned: self.pinned_bytes(Some(id)),
            })
    }

    /// Every resident set, most recently used first.
    pub fn list(&self) -> Vec<ResidentInfo> {
        let mut v: Vec<&Entry<T>> = self.entries.iter().collect();
        v.sort_by_key(|e| std::cmp::Reverse(e.tick));
        v.into_iter()
            .map(|e| ResidentInfo {
                id: e.id.clone(),
                bytes: e.bytes,
                in_use: e.in_use(),
                idle: e.used_at.elapsed(),
            })
            .collect()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    /// Admits `id` into `t` beside a budget of `capacity` of which
    /// `t.bytes()` is taken by resident sets, evicting what admit names.
    fn admit(
        t: &mut ResidencyTable<&'static str>,
        id: &'static str,
        bytes: u64,
        capacity: u64,
    ) -> Result<Vec<String>, ResidencyError> {
        let available = capacity - t.bytes();
        let victims = t.admit(id, bytes, available, capacity)?;
        for v in &victims {
            t.remove(v);
        }
        t.insert(id, bytes, Arc::new(id));
        assert!(t.bytes() <= capacity);
        Ok(victims)
    }

    fn ids(t: &ResidencyTable<&'static str>) -> Vec<String> {
        t.list().into_iter().map(|i| i.id).collect()
    }

    #[test]
    fn keeps_two_sets_when_they_fit() {
        let mut t = ResidencyTable::new();
        assert_eq!(admit(&mut t, "porep-22", 600 * MIB, GIB), Ok(vec![]));
        assert_eq!(admit(&mut t, "porep-20", 300 * MIB, GIB), Ok(vec![]));
        assert_eq!(ids(&t), ["porep-20", "porep-22"]);
        assert_eq!(t.bytes(), 900 * MIB);
        // Using one makes it the most recent; both stay.
        assert!(t.get("porep-22").is_some());
        assert_eq!(ids(&t), ["porep-22", "porep-20"]);
        assert_eq!(t.list()[0].in_use, 0, "the clone above was dropped");
    }

    const GIB: u64 = 1 << 30;

    #[test]
    fn evicts_the_least_recently_used_when_they_do_not_fit() {
        let mut t = ResidencyTable::new();
        admit(&mut t, "a", 400 * MIB, GIB).unwrap();
        admit(&mut t, "b", 400 * MIB, GIB).unwrap();
        // "a" used after "b": "b" is the least recently used.
        drop(t.get("a"));
        assert_eq!(admit(&mut t, "c", 400 * MIB, GIB), Ok(vec!["b".into()]));
        assert_eq!(ids(&t), ["c", "a"]);
        // Two must go for a large one; oldest first.
        assert_eq!(
            admit(&mut t, "d", 900 * MIB, GIB),
            Ok(vec!["a".into(), "c".into()])
        );
        assert_eq!(ids(&t), ["d"]);
        // Re-admitting an id replaces it (its own bytes count as free).
        assert_eq!(admit(&mut t, "d", GIB, GIB), Ok(vec![]));
        assert_eq!((t.len(), t.bytes()), (1, GIB));
    }

    #[test]
    fn never_evicts_a_set_in_use() {
        let mut t = ResidencyTable::new();
        admit(&mut t, "old", 500 * MIB, GIB).unwrap();
        admit(&mut t, "new", 400 * MIB, GIB).unwrap();
        // A partition proves with "old" (the least recently used).
        let pin = t.peek("old").unwrap().clone();
        assert_eq!(t.list().iter().find(|i| i.id == "old").unwrap().in_use, 1);
        assert_eq!(t.pinned_bytes(None), 500 * MIB);
        assert_eq!(t.evictable_bytes(None), 400 * MIB);
        // 300 MiB needed: "new" goes, not "old".
        assert_eq!(t.victims(300 * MIB, None), Some(vec!["new".into()]));
        // 600 MiB needed beside 124 free: only "new" could go, not enough.
        let e = t.admit("x", 600 * MIB, GIB - t.bytes(), GIB).unwrap_err();
        assert_eq!(
            e,
            ResidencyError::NoRoomNow {
                id: "x".into(),
                needed: 600 * MIB,
                available: GIB - 900 * MIB,
                evictable: 400 * MIB,
                pinned: 500 * MIB,
            }
        );
        // make_room evicts nothing when it cannot make enough room.
        assert!(t.make_room("x", 600 * MIB, 124 * MIB, None).is_err());
        assert_eq!(t.len(), 2);
        // Once the partition is done, "old" may go.
        drop(pin);
        let gone = t.make_room("x", 600 * MIB, 124 * MIB, None).unwrap();
        assert_eq!(
            gone.iter().map(|g| g.0.as_str()).collect::<Vec<_>>(),
            ["old"]
        );
        assert_eq!(ids(&t), ["new"]);
    }

    #[test]
    fn an_entry_can_be_renamed() {
        let mut t = ResidencyTable::new();
        t.insert("params@1", 10, Arc::new("x"));
        t.insert("kind", 20, Arc::new("stale"));
        assert_eq!(t.find_id(|v| *v == "x").as_deref(), Some("params@1"));
        let (ok, old) = t.rename("params@1", "kind");
        assert!(ok);
        assert_eq!(old.as_deref(), Some(&"stale"));
        assert_eq!(ids(&t), ["kind"]);
        assert_eq!(t.bytes(), 10);
        assert_eq!(t.rename("absent", "y"), (false, None));
    }

    #[test]
    fn a_set_larger_than_the_budget_is_refused_with_its_size() {
        let mut t = ResidencyTable::<&str>::new();
        let e = t
            .admit("porep-32g", 44 * GIB, 16 * GIB, 16 * GIB)
            .unwrap_err();
        assert_eq!(
            e,
            ResidencyError::TooLarge {
                id: "porep-32g".into(),
                bytes: 44 * GIB,
                limit: 16 * GIB,
                limit_name: "VRAM budget",
            }
        );
        let msg = e.to_string();
        assert!(msg.contains(&(44 * GIB).to_string()) && msg.contains(&(16 * GIB).to_string()));
        // The cap on resident parameters limits them below the budget.
        t.set_cap(Some(GIB));
        assert!(matches!(
            t.admit("mid", 2 * GIB, 16 * GIB, 16 * GIB),
            Err(ResidencyError::TooLarge { limit: GIB, .. })
        ));
        t.insert("a", 600 * MIB, Arc::new("a"));
        // Room in the budget, but the cap makes "a" go.
        assert_eq!(
            t.admit("b", 600 * MIB, 15 * GIB, 16 * GIB),
            Ok(vec!["a".to_string()])
        );
    }
}
