-- Version 1: the job queue, per-partition leases and results, failure
-- reasons, node heartbeats. Every statement is IF NOT EXISTS so that a
-- replay is harmless (YugabyteDB does not roll DDL back with the
-- transaction in every version).
--
-- Times are the database's clock (now()), never a node's, so nodes with
-- skewed clocks agree on lease expiry and age.

CREATE TABLE IF NOT EXISTS cuzk_jobs (
    id            BIGSERIAL PRIMARY KEY,
    -- Given by the caller or generated at submit. Several attempts may
    -- share one; cuzk_requests names the latest.
    request_id    TEXT NOT NULL,
    kind          TEXT NOT NULL,
    priority      SMALLINT NOT NULL CHECK (priority BETWEEN 0 AND 3),
    client        TEXT NOT NULL,
    -- The input itself, or a reference the nodes resolve (a path on shared
    -- storage): exactly one.
    input         BYTEA,
    input_ref     TEXT,
    partitions    INT NOT NULL CHECK (partitions BETWEEN 1 AND 100000),
    max_failures  INT NOT NULL CHECK (max_failures >= 1),
    state         TEXT NOT NULL
                  CHECK (state IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
    done_parts    INT NOT NULL DEFAULT 0 CHECK (done_parts >= 0),
    -- Assembled when the last partition's result arrives: the partitions'
    -- proofs and public inputs, in partition order.
    proof         BYTEA,
    public_inputs BYTEA,
    error         TEXT,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    started_at    TIMESTAMPTZ,
    finished_at   TIMESTAMPTZ,
    CHECK ((input IS NULL) <> (input_ref IS NULL))
);

-- Retention sweeps (purge_finished) walk finished jobs by age.
CREATE INDEX IF NOT EXISTS cuzk_jobs_finished
    ON cuzk_jobs (finished_at) WHERE finished_at IS NOT NULL;

-- Each request id's latest attempt (the daemon's rule: an unfinished or
-- completed attempt with the same input is that request; a failed or
-- cancelled one, or a completed one with another input, is replaced by a
-- new attempt). Its row lock serializes submits of one request id.
CREATE TABLE IF NOT EXISTS cuzk_requests (
    request_id TEXT PRIMARY KEY,
    job_id     BIGINT NOT NULL REFERENCES cuzk_jobs (id) ON DELETE CASCADE
);

CREATE TABLE IF NOT EXISTS cuzk_partitions (
    job_id           BIGINT NOT NULL REFERENCES cuzk_jobs (id) ON DELETE CASCADE,
    idx              INT NOT NULL CHECK (idx >= 0),
    -- kind, priority and created_at are the job's, fixed at submit and
    -- copied here so that the claim index covers the claim's order.
    kind             TEXT NOT NULL,
    priority         SMALLINT NOT NULL CHECK (priority BETWEEN 0 AND 3),
    created_at       TIMESTAMPTZ NOT NULL,
    state            TEXT NOT NULL
                     CHECK (state IN ('pending', 'leased', 'done', 'failed', 'cancelled')),
    -- Claims so far: the lease's fencing token. A result is accepted only
    -- from the node holding the lease under the current claim number.
    claims           INT NOT NULL DEFAULT 0 CHECK (claims >= 0),
    -- Errors and expired leases so far; max_failures of them fail the job.
    failures         INT NOT NULL DEFAULT 0 CHECK (failures >= 0),
    -- The holder while leased; the last holder (or the prover) after.
    lease_node       TEXT,
    lease_expires    TIMESTAMPTZ,
    first_claimed_at TIMESTAMPTZ,
    proof            BYTEA,
    public_inputs    BYTEA,
    synthesis_us     BIGINT,
    prove_us         BIGINT,
    done_at          TIMESTAMPTZ,
    PRIMARY KEY (job_id, idx)
);

-- The claim: pending partitions in priority order, then age.
CREATE INDEX IF NOT EXISTS cuzk_partitions_pending
    ON cuzk_partitions (priority DESC, created_at, job_id, idx) WHERE state = 'pending';
-- The reaper: leases by expiry.
CREATE INDEX IF NOT EXISTS cuzk_partitions_leased
    ON cuzk_partitions (lease_expires) WHERE state = 'leased';

CREATE TABLE IF NOT EXISTS cuzk_partition_failures (
    job_id  BIGINT NOT NULL REFERENCES cuzk_jobs (id) ON DELETE CASCADE,
    idx     INT NOT NULL,
    -- The claim that failed: one reason per claim.
    claim   INT NOT NULL,
    node    TEXT NOT NULL,
    -- 'reported': the node said it failed; 'expired': its lease ran out.
    source  TEXT NOT NULL CHECK (source IN ('reported', 'expired')),
    reason  TEXT NOT NULL,
    at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (job_id, idx, claim)
);

CREATE TABLE IF NOT EXISTS cuzk_nodes (
    node_id           TEXT PRIMARY KEY,
    kinds_supported   TEXT[] NOT NULL,
    kinds_resident    TEXT[] NOT NULL,
    free_vram_bytes   BIGINT NOT NULL,
    queue_len         INT NOT NULL,
    -- The node's own running count: throughput is its change between
    -- heartbeats.
    partitions_proved BIGINT NOT NULL,
    started_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_seen         TIMESTAMPTZ NOT NULL DEFAULT now()
);
