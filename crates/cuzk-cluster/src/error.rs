//! The crate's one error type, and the classification of database errors
//! into "the connection is gone, reconnect and retry", "a concurrent
//! transaction won, run it again" and "a real error, report it".

use crate::queue::JobId;
use std::time::Duration;
use tokio_postgres::error::SqlState;

/// Why the database could not be used within the client's retry window.
#[derive(Debug, thiserror::Error)]
pub enum Unavailable {
    #[error("cannot connect: {0}")]
    Connect(#[source] tokio_postgres::Error),
    #[error("connection lost: {0}")]
    Lost(#[source] tokio_postgres::Error),
    #[error("no answer within {0:?}")]
    TimedOut(Duration),
}

#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("invalid database url: {0}")]
    InvalidUrl(#[source] tokio_postgres::Error),
    #[error("invalid cluster configuration: {0}")]
    InvalidConfig(&'static str),
    /// The database was down or unreachable for the whole retry window
    /// (`ClusterConfig::reconnect_for`); the caller keeps serving what it
    /// holds and tries again later.
    #[error("database {target} unavailable during {op} (retried for {waited:?}): {cause}")]
    Unavailable {
        target: String,
        op: &'static str,
        waited: Duration,
        #[source]
        cause: Unavailable,
    },
    /// Concurrent transactions kept conflicting (serialization failures or
    /// deadlocks) past the retry window.
    #[error("database contended during {op}: still conflicting after {tries} tries")]
    Contended { op: &'static str, tries: u32 },
    /// Any other error the database returned: a bug or a schema mismatch,
    /// not a transient state.
    #[error("database error during {op}: {source}")]
    Database {
        op: &'static str,
        #[source]
        source: tokio_postgres::Error,
    },
    #[error("the database's schema is at version {found}; this build knows up to {known} (a newer cuzk migrated it)")]
    SchemaTooNew { found: i32, known: i32 },
    #[error("request id {0:?} was already used for a different kind or input")]
    RequestIdConflict(String),
    #[error("request id is {0} bytes; at most 128 allowed")]
    RequestIdTooLong(usize),
    #[error("invalid job: {0}")]
    InvalidJob(&'static str),
    #[error("no job {0}")]
    UnknownJob(JobId),
    /// The job has ended and its inline input was dropped with it.
    #[error("job {0} has ended; its input is no longer kept")]
    InputDropped(JobId),
    /// A row whose contents this build cannot interpret (an unknown state,
    /// a negative count): refused rather than acted on.
    #[error("bad row in {table} ({key}): {problem}")]
    BadRow {
        table: &'static str,
        key: String,
        problem: String,
    },
}

/// What to do about an error from one attempt of an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ErrorClass {
    /// The connection is unusable: drop it, reconnect, run the operation
    /// again.
    Connection,
    /// A concurrent transaction won (PostgreSQL's deadlock detector, or a
    /// serialization failure, which YugabyteDB reports for conflicting
    /// writes under snapshot isolation): run the transaction again.
    Conflict,
    /// Report it.
    Fatal,
}

pub(crate) fn classify(e: &tokio_postgres::Error) -> ErrorClass {
    if e.is_closed() {
        return ErrorClass::Connection;
    }
    let Some(code) = e.code() else {
        // No SQLSTATE: an I/O or protocol error on the socket.
        return ErrorClass::Connection;
    };
    if *code == SqlState::T_R_SERIALIZATION_FAILURE
        || *code == SqlState::T_R_DEADLOCK_DETECTED
        // Two daemons creating the same table at once: CREATE ... IF NOT
        // EXISTS is not atomic against a concurrent creator in PostgreSQL,
        // and the loser sees the winner's type or catalog row. Run again,
        // it finds the table. (Only DDL raises these; the queue's
        // statements never do.)
        || *code == SqlState::DUPLICATE_OBJECT
        || *code == SqlState::DUPLICATE_TABLE
        || (*code == SqlState::UNIQUE_VIOLATION && is_catalog_race(e))
    {
        return ErrorClass::Conflict;
    }
    // Class 08 (connection exception) and 57P0x (the server shutting down,
    // crashed or still starting): the server went away under us.
    let c = code.code();
    if c.starts_with("08")
        || *code == SqlState::ADMIN_SHUTDOWN
        || *code == SqlState::CRASH_SHUTDOWN
        || *code == SqlState::CANNOT_CONNECT_NOW
    {
        return ErrorClass::Connection;
    }
    ErrorClass::Fatal
}

/// A unique violation in a system catalog's index (`pg_type_typname_nsp_index`
/// and the like), which is what losing a concurrent CREATE looks like.
fn is_catalog_race(e: &tokio_postgres::Error) -> bool {
    e.as_db_error().is_some_and(|d| {
        d.constraint().is_some_and(|c| c.starts_with("pg_")) || d.message().contains("\"pg_")
    })
}

/// An error from one attempt: the database's, or the operation's own
/// verdict (which is final and never retried).
#[derive(Debug)]
pub(crate) enum OpError {
    Pg(tokio_postgres::Error),
    Domain(ClusterError),
}

impl From<tokio_postgres::Error> for OpError {
    fn from(e: tokio_postgres::Error) -> Self {
        OpError::Pg(e)
    }
}

impl From<ClusterError> for OpError {
    fn from(e: ClusterError) -> Self {
        OpError::Domain(e)
    }
}

pub(crate) fn bad_row(table: &'static str, key: impl ToString, problem: impl ToString) -> OpError {
    OpError::Domain(ClusterError::BadRow {
        table,
        key: key.to_string(),
        problem: problem.to_string(),
    })
}
