//! Versioned schema migrations, safe when several daemons start at once.
//!
//! Each migration runs in one transaction that first inserts its row into
//! `cuzk_schema_version`. A second daemon migrating at the same moment
//! blocks on that row's primary key until the first commits, then finds the
//! row there (`ON CONFLICT DO NOTHING` inserts nothing) and skips the
//! migration; if the first rolls back, the second applies it. No advisory
//! locks and no `LOCK TABLE` (YugabyteDB has neither in every version): the
//! primary key is the lock. Migration SQL is also written `IF NOT EXISTS`,
//! so a replay on an engine whose DDL is not transactional is harmless.

use crate::client::{db_op, ClusterClient};
use crate::error::{ClusterError, OpError};

pub(crate) struct Migration {
    pub version: i32,
    pub name: &'static str,
    pub sql: &'static str,
}

/// In version order; a released migration is never edited, only followed.
pub(crate) const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "queue",
        sql: include_str!("../migrations/0001_queue.sql"),
    },
    Migration {
        version: 2,
        name: "node address",
        sql: include_str!("../migrations/0002_node_address.sql"),
    },
    Migration {
        version: 3,
        name: "input digest and drop, node capacity",
        sql: include_str!("../migrations/0003_digest_capacity.sql"),
    },
];

/// The schema version this build creates and understands.
pub const SCHEMA_VERSION: i32 = 3;

const CREATE_VERSION_TABLE: &str = "CREATE TABLE IF NOT EXISTS cuzk_schema_version (
    version    INT PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
)";

impl ClusterClient {
    /// Bring the schema to [`SCHEMA_VERSION`]; returns the versions this
    /// call applied (empty when another daemon had already). Refuses a
    /// database migrated past this build.
    pub async fn migrate(&self) -> Result<Vec<i32>, ClusterError> {
        // Concurrent creators of the same table can collide in the catalog
        // even with IF NOT EXISTS; db_op retries that as a conflict.
        db_op!(self, "create schema_version", |c| {
            c.batch_execute(CREATE_VERSION_TABLE).await?;
            Ok::<_, OpError>(())
        })?;
        let mut applied = Vec::new();
        for m in MIGRATIONS {
            let did = db_op!(self, "migrate", |c| {
                let tx = c.transaction().await?;
                let n = tx
                    .execute(
                        "INSERT INTO cuzk_schema_version (version, name) VALUES ($1, $2) \
                         ON CONFLICT (version) DO NOTHING",
                        &[&m.version, &m.name],
                    )
                    .await?;
                if n == 0 {
                    tx.rollback().await?;
                    Ok::<_, OpError>(false)
                } else {
                    tx.batch_execute(m.sql).await?;
                    tx.commit().await?;
                    Ok(true)
                }
            })?;
            if did {
                tracing::info!(
                    version = m.version,
                    name = m.name,
                    "applied cluster schema migration"
                );
                applied.push(m.version);
            }
        }
        let found = self.schema_version().await?;
        if found > SCHEMA_VERSION {
            return Err(ClusterError::SchemaTooNew {
                found,
                known: SCHEMA_VERSION,
            });
        }
        Ok(applied)
    }

    /// The highest applied migration (0 for an empty database).
    pub async fn schema_version(&self) -> Result<i32, ClusterError> {
        db_op!(self, "schema version", |c| {
            let exists: bool = c
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM information_schema.tables \
                     WHERE table_name = 'cuzk_schema_version' \
                     AND table_schema = current_schema())",
                    &[],
                )
                .await?
                .get(0);
            if !exists {
                return Ok::<_, OpError>(0);
            }
            let v: Option<i32> = c
                .query_one("SELECT max(version) FROM cuzk_schema_version", &[])
                .await?
                .get(0);
            Ok(v.unwrap_or(0))
        })
    }
}
