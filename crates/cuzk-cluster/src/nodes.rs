//! Node heartbeats: what each daemon says about itself (kinds it proves and
//! holds resident, free VRAM, its queue) and when it last said it, for
//! `cuzk status --cluster` and for placement. The node is the one owner of
//! these facts; the row is its latest report, never edited by others.
//!
//! Liveness is decided by leases, not by heartbeats: a node whose heartbeat
//! is stale but whose leases are renewed is still working.

use crate::client::{db_op, ClusterClient};
use crate::error::{ClusterError, OpError};
use std::time::Duration;

/// One heartbeat's contents.
#[derive(Clone, Debug, Default)]
pub struct NodeReport {
    pub kinds_supported: Vec<String>,
    pub kinds_resident: Vec<String>,
    pub free_vram_bytes: u64,
    /// Partitions claimed here and not yet reported.
    pub queue_len: u32,
    /// Partitions it holds at most (the daemon's `max_claimed`); 0: not
    /// said. Placement leaves a young partition to a node holding its kind
    /// resident only while that node holds fewer leases than this.
    pub capacity: u32,
    /// Running count of partitions this node has proved.
    pub partitions_proved: u64,
    /// Where operators and clients reach it (its gRPC address), free text.
    pub address: String,
    /// How often it sends this report: a reader judges it dead by its own
    /// interval ([`NodeRecord::alive`]).
    pub heartbeat_interval: Duration,
}

#[derive(Clone, Debug)]
pub struct NodeRecord {
    pub node_id: String,
    pub report: NodeReport,
    /// Since its last heartbeat, by the database's clock.
    pub last_seen_ago: Duration,
    pub up_for: Duration,
    /// Leases it holds now (from the partitions, not from its report).
    pub leases: u64,
}

/// Heartbeats a node may miss before status calls it dead.
pub const MISSED_HEARTBEATS: u32 = 3;

impl NodeRecord {
    /// Whether it reported within [`MISSED_HEARTBEATS`] of its own
    /// intervals (at least a second, for a node that never said). For
    /// operators: the queue decides by leases, not by this.
    pub fn alive(&self) -> bool {
        let every = self.report.heartbeat_interval.max(Duration::from_secs(1));
        self.last_seen_ago <= every * MISSED_HEARTBEATS
    }
}

impl ClusterClient {
    pub async fn heartbeat(&self, r: &NodeReport) -> Result<(), ClusterError> {
        let node = self.node_id().to_owned();
        let vram = i64::try_from(r.free_vram_bytes).unwrap_or(i64::MAX);
        let queue = i32::try_from(r.queue_len).unwrap_or(i32::MAX);
        let proved = i64::try_from(r.partitions_proved).unwrap_or(i64::MAX);
        let every = i32::try_from(r.heartbeat_interval.as_millis()).unwrap_or(i32::MAX);
        let capacity = i32::try_from(r.capacity).unwrap_or(i32::MAX);
        let address: String = r.address.chars().take(256).collect();
        db_op!(self, "heartbeat", |c| {
            c.execute(
                "INSERT INTO cuzk_nodes (node_id, kinds_supported, kinds_resident, free_vram_bytes, \
                   queue_len, partitions_proved, address, heartbeat_ms, capacity) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
                 ON CONFLICT (node_id) DO UPDATE SET kinds_supported = EXCLUDED.kinds_supported, \
                   kinds_resident = EXCLUDED.kinds_resident, \
                   free_vram_bytes = EXCLUDED.free_vram_bytes, queue_len = EXCLUDED.queue_len, \
                   partitions_proved = EXCLUDED.partitions_proved, address = EXCLUDED.address, \
                   heartbeat_ms = EXCLUDED.heartbeat_ms, capacity = EXCLUDED.capacity, \
                   last_seen = now()",
                &[
                    &node,
                    &r.kinds_supported,
                    &r.kinds_resident,
                    &vram,
                    &queue,
                    &proved,
                    &address,
                    &every,
                    &capacity,
                ],
            )
            .await?;
            Ok::<_, OpError>(())
        })
    }

    /// Every node that has sent a heartbeat, by name.
    pub async fn nodes(&self) -> Result<Vec<NodeRecord>, ClusterError> {
        db_op!(self, "nodes", |c| {
            let rows = c
                .query(
                    "SELECT n.node_id, n.kinds_supported, n.kinds_resident, n.free_vram_bytes, \
                       n.queue_len, n.partitions_proved, \
                       EXTRACT(EPOCH FROM (now() - n.last_seen))::float8, \
                       EXTRACT(EPOCH FROM (now() - n.started_at))::float8, \
                       (SELECT count(*) FROM cuzk_partitions p \
                          WHERE p.state = 'leased' AND p.lease_node = n.node_id), \
                       n.address, n.heartbeat_ms, n.capacity \
                     FROM cuzk_nodes n ORDER BY n.node_id",
                    &[],
                )
                .await?;
            let secs =
                |s: f64| Duration::from_secs_f64(if s.is_finite() { s.max(0.0) } else { 0.0 });
            Ok::<_, OpError>(
                rows.iter()
                    .map(|r| NodeRecord {
                        node_id: r.get(0),
                        report: NodeReport {
                            kinds_supported: r.get(1),
                            kinds_resident: r.get(2),
                            free_vram_bytes: r.get::<_, i64>(3).max(0) as u64,
                            queue_len: r.get::<_, i32>(4).max(0) as u32,
                            partitions_proved: r.get::<_, i64>(5).max(0) as u64,
                            address: r.get(9),
                            heartbeat_interval: Duration::from_millis(
                                r.get::<_, i32>(10).max(0) as u64
                            ),
                            capacity: r.get::<_, i32>(11).max(0) as u32,
                        },
                        last_seen_ago: secs(r.get(6)),
                        up_for: secs(r.get(7)),
                        leases: r.get::<_, i64>(8).max(0) as u64,
                    })
                    .collect(),
            )
        })
    }

    /// Forget nodes silent for longer than `older_than` (they hold no
    /// leases by then: theirs expired and were reaped).
    pub async fn forget_nodes(&self, older_than: Duration) -> Result<u64, ClusterError> {
        let age = older_than.as_secs_f64();
        db_op!(self, "forget nodes", |c| {
            let n = c
                .execute(
                    "DELETE FROM cuzk_nodes WHERE last_seen < now() - $1::float8 * interval '1 second'",
                    &[&age],
                )
                .await?;
            Ok::<_, OpError>(n)
        })
    }
}
