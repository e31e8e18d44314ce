-- 001: events, alerts and run statistics.
-- Times are microseconds since the epoch, taken from the packets.
-- Addresses are stored as text (inet_ntop form); names as escaped text.

CREATE TABLE events (
	id        INTEGER PRIMARY KEY,
	ts        INTEGER NOT NULL,          -- packet time, microseconds
	kind      INTEGER NOT NULL,          -- enum obs_kind (1 dns query, 2 dns response, ...)
	flow_id   INTEGER,                   -- flow of the run (not stable across runs)
	proto     INTEGER NOT NULL,          -- IPPROTO_*
	src_ip    TEXT NOT NULL,
	src_port  INTEGER NOT NULL,
	dst_ip    TEXT NOT NULL,
	dst_port  INTEGER NOT NULL,
	name      TEXT,                      -- qname / Host / SNI (escaped)
	type      INTEGER,                   -- qtype / ICMP type / TLS version / HTTP status
	code      INTEGER,                   -- DNS rcode / ICMP code
	size      INTEGER,
	flags     INTEGER NOT NULL DEFAULT 0, -- OBS_F_* (1 malformed, 2 truncated, 4 tcp)
	info      TEXT                       -- kind-specific detail (sensor/record.h encoding)
);
-- sensor/store.c (SQL_EVENTS_INDEX) re-creates this index at every open
-- and must keep the same text.
CREATE INDEX events_kind ON events(kind, id);

CREATE TABLE alerts (
	id        INTEGER PRIMARY KEY,
	class     TEXT NOT NULL,
	severity  INTEGER NOT NULL,          -- 1 info .. 5 critical
	first_ts  INTEGER NOT NULL,
	last_ts   INTEGER NOT NULL,
	count     INTEGER NOT NULL DEFAULT 1,
	outcome   TEXT NOT NULL DEFAULT 'unknown', -- blocked | answered | unknown
	proto     INTEGER,
	src_ip    TEXT,
	src_port  INTEGER,
	dst_ip    TEXT,
	dst_port  INTEGER,
	subject   TEXT,
	score     REAL,
	rule      TEXT,
	summary   TEXT,
	evidence  TEXT                       -- items separated by 0x1d (GS)
);
CREATE INDEX alerts_class ON alerts(class, id);

CREATE TABLE stats (
	name      TEXT PRIMARY KEY,
	value     INTEGER NOT NULL
);
