-- Version 2: what `cuzk status --cluster` shows of a node besides its
-- report: where to reach it, and how often it reports (so that a reader
-- tells a dead node from a slow one by the node's own interval, not its
-- own).
ALTER TABLE cuzk_nodes ADD COLUMN IF NOT EXISTS address TEXT NOT NULL DEFAULT '';
ALTER TABLE cuzk_nodes ADD COLUMN IF NOT EXISTS heartbeat_ms INT NOT NULL DEFAULT 0
    CHECK (heartbeat_ms >= 0);
