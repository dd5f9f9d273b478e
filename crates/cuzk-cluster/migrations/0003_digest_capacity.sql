-- Version 3: inputs by digest and dropped at the end, node capacity.
--
-- The inline input's SHA-256, so that a submit repeating a request id
-- compares 32 bytes instead of sending the input (tens of MB for a 32 GiB
-- PoRep's C1 output) to the database a second time. Rows from version 2
-- have none; submit hashes their input in the database (sha256(), in
-- PostgreSQL from 11 and in YugabyteDB's YSQL).
ALTER TABLE cuzk_jobs ADD COLUMN IF NOT EXISTS input_digest BYTEA;

-- How many partitions the node holds at most (its max_claimed), beside
-- queue_len: placement leaves a young partition to a node holding its kind
-- resident only while that node has room. 0: not reported (a version-2
-- node), taken as room.
ALTER TABLE cuzk_nodes ADD COLUMN IF NOT EXISTS capacity INT NOT NULL DEFAULT 0
    CHECK (capacity >= 0);

-- A job's inline input is dropped when the job ends (completed, failed or
-- cancelled): a 32 GiB PoRep's C1 output is about 67 MB, and kept for the
-- retention period (days) it would be most of the database. The digest
-- stays, so a repeated request id still compares. Version 1's CHECK
-- (exactly one of input, input_ref; PostgreSQL named it cuzk_jobs_check)
-- becomes: at most one, and exactly one while the job is unfinished.
ALTER TABLE cuzk_jobs DROP CONSTRAINT IF EXISTS cuzk_jobs_check;
ALTER TABLE cuzk_jobs DROP CONSTRAINT IF EXISTS cuzk_jobs_input;
ALTER TABLE cuzk_jobs ADD CONSTRAINT cuzk_jobs_input CHECK (
    (input IS NULL OR input_ref IS NULL)
    AND (state IN ('completed', 'failed', 'cancelled') OR (input IS NULL) <> (input_ref IS NULL))
);
