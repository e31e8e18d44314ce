-- 003: a write sequence on alerts.
--
-- An alert row is written again as it grows (count, last_ts, outcome,
-- evidence), at most once a second of packet time. Every insert or update
-- sets seq to one more than the largest seq in the table (sensor/store.c,
-- SQL_ALERT), so `seq > N` lists the alerts written since a reader saw N,
-- each once and in its latest state, in the order they were written: how
-- `watch --eve` writes the alerts that changed (api/eve.c). Rows from before
-- this migration get seq = id.

ALTER TABLE alerts ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
UPDATE alerts SET seq = id;
CREATE INDEX alerts_seq ON alerts(seq);
