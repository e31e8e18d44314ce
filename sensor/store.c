/*
 * store.c - the SQLite writer of store.h.
 *
 * One connection, opened here and (with the writer thread) used only by that
 * thread until store_close() joins it. Every statement is prepared once at
 * open from the stmt_defs table and used bind -> step -> reset +
 * clear_bindings (the multi-row event INSERT skips the clear: all of its
 * parameters are bound again before each step, from buffers the store
 * owns; clearing its EVENT_GROUP * EVENT_COLS values was ~2% of the
 * writer). Rows go into one transaction (BEGIN IMMEDIATE ... COMMIT)
 * until batch_rows rows or batch_ms of packet time have gone by (in bulk
 * mode at least BULK_SPAN_MS: a replay runs through packet time a hundred
 * times faster than the clock, and commits, each with its share of WAL
 * checkpoints and their fsyncs, every second of packet time cost it ~5%).
 *
 * Every write is first packed into a record (struct qrec: fixed fields, then
 * the strings back to back, each NUL-terminated), the same form in both
 * writer modes. With the writer thread the record is written straight into a
 * single-producer single-consumer byte ring (sensor/ring.h; the store's
 * policy for it is in queue_reserve, queue_commit and writer_main), so
 * store_event() costs a memcpy of the row's text and no allocation; the
 * writer binds alerts and stats in place with SQLITE_STATIC, which is safe
 * because the ring slot is only released after sqlite3_reset() and
 * sqlite3_clear_bindings(), and copies each event into its family's stage
 * (stage_event). Inline, the record is built in a scratch buffer allocated
 * at open and written at once.
 *
 * Events go to one table per family (store_kind_family), numbered by the
 * writer from max(id) at each BEGIN; the threaded writer writes a family's
 * events EVENT_GROUP at a time with one multi-row INSERT (stage_write).
 *
 * An event record carries its two addresses raw (qrec.ipv, then src and dst
 * as the first EV_ADDR_BYTES of text, before the strings) and the writer
 * renders them: formatting them was ~70% of store_event()'s instructions on
 * the packet thread, and the writer has time to spare. They are rendered
 * into s->addr_buf, one slot per row of a multi-row INSERT, which outlives
 * the step just as the staged record does; both writer modes render the
 * same way, so the rows are the same.
 *
 * Errors: every SQLite return code is checked. A failed row or commit is
 * counted (stats.errors; the rows of a batch lost in a failed commit count
 * one each), its message ("path: what: sqlite message") kept for
 * store_last_error(), the first one logged; store_flush() and store_close()
 * return -1 when errors happened.
 *
 * Retention (cfg.retain_us, `watch --retain`): each commit first deletes,
 * in its transaction, the events outside the window behind the newest event
 * written (expire(), SQL_EXPIRE_FMT), so readers never see half of it and a
 * crash loses it with the batch.
 *
 * Migrations: schema_migrations[] (schema/NNN_*.sql, embedded at build time)
 * are applied in order, all in one BEGIN IMMEDIATE transaction that first
 * reads the version again and checks the tables (migrate()), each with
 * PRAGMA user_version = N; so processes opening one database at once see
 * it before or after another's migration, never half-way.
 */
#include "store.h"

#include <pthread.h>
#include <inttypes.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "../analyzers/module.h"
#include "log.h"
#include "pkt.h"
#include "ring.h"
#include "schema.h"
#include "sync.h"
#include "text.h"

#define DEFAULT_BATCH_ROWS 50000u
#define DEFAULT_BATCH_MS 1000u
#define DEFAULT_BUSY_MS 5000u
#define DEFAULT_QUEUE_KIB 8192u
#define MIN_QUEUE_KIB 256u
#define BULK_SPAN_MS 60000u  /* bulk mode: a batch spans up to 60 s of packet time */
#define BULK_CACHE_KIB 16384 /* 16 MiB page cache in bulk mode (32 MiB was no faster) */
/* The page size of a database this store creates. 16 KiB pages hold four
 * times the rows of SQLite's 4 KiB default, so a replay's writer splits,
 * logs and checkpoints a quarter as many pages: ~5% less wall time for the
 * benchmark capture (8 KiB: ~4%; 64 KiB: slower). A database that exists
 * keeps the page size it has. */
#define NEW_PAGE_SIZE 16384

enum qop { OP_PAD = 0, OP_EVENT, OP_STAT, OP_ALERT, OP_FLUSH, OP_STOP };

/* Strings of each op, in order. An event's addresses are not strings of the
 * record but raw bytes ahead of them (EV_ADDR_BYTES). */
enum { EV_NAME, EV_INFO, EV_NSTR };
#define EV_ADDR_BYTES 32 /* src[16], dst[16] as in struct pkt */
#define ADDR_TEXT_MAX 64 /* a rendered address, NUL included (INET6_ADDRSTRLEN is 46) */
enum { ST_NAME, ST_NSTR };
enum { AL_CLASS, AL_OUTCOME, AL_SRC, AL_DST, AL_SUBJECT, AL_RULE, AL_SUMMARY, AL_EVIDENCE,
       AL_NSTR };
#define QREC_MAX_STR 8
#define EVENT_COLS 15  /* parameters of one events row (SQL_EVENT_TUPLE) */
/* Rows of a multi-row INSERT (threaded writer): 64 took ~3% less CPU and
 * ~4% less wall time for a replay than 16, once both cores were busy. */
#define EVENT_GROUP 64
#define PUBLISH_BYTES 16384u /* bulk mode: events handed to the writer at a time */
#define STR_NULL UINT32_MAX

/*
 * One queued write. Records are 8-byte aligned and never wrap in the ring.
 * text holds the strings back to back; an OP_EVENT record has instead
 *   text[0..15]  source address, text[16..31] destination address (raw, as
 *                struct pkt has them; read only when ipv is 4 or 6)
 *   text[32..]   the strings EV_NAME, EV_INFO
 */
struct qrec {
	uint32_t len; /* bytes of the record, a multiple of 8 */
	uint8_t op;   /* enum qop */
	uint8_t nstr;
	uint8_t ipv;  /* OP_EVENT: 4 or 6, 0: no addresses (stored as "") */
	uint8_t pad_;
	int64_t v[8]; /* op-specific integers */
	double d;
	uint32_t slen[QREC_MAX_STR]; /* STR_NULL for a NULL string */
	char text[];                 /* see above */
};
_Static_assert(offsetof(struct qrec, len) == offsetof(struct ring_hdr, len) &&
		       offsetof(struct qrec, op) == offsetof(struct ring_hdr, tag) &&
		       offsetof(struct qrec, v) >= sizeof(struct ring_hdr) && OP_PAD == 0,
	       "a record starts with ring.h's header, op among its tag's bytes: the ring's "
	       "pads are OP_PAD");

/* The largest event record. */
#define QREC_EVENT_MAX                                                           \
	((sizeof(struct qrec) + EV_ADDR_BYTES + (STORE_NAME_MAX + 1) + (STORE_INFO_MAX + 1) + 7) & \
	 ~(size_t)7)
/* The largest record: an alert with every string at its cap. */
#define QREC_MAX                                                                 \
	((sizeof(struct qrec) + 6 * (STORE_NAME_MAX + 1) + 2 * (STORE_INFO_MAX + 1) + 7) & \
	 ~(size_t)7)
_Static_assert(EV_ADDR_BYTES + (STORE_NAME_MAX + 1) + (STORE_INFO_MAX + 1) <=
		       6 * (STORE_NAME_MAX + 1) + 2 * (STORE_INFO_MAX + 1),
	       "an event record fits in QREC_MAX");

struct store {
	sqlite3 *db;
	char *path;
	struct store_config cfg;
	int threaded;

	/* statements, prepared at open from stmt_defs */
	sqlite3_stmt *st_begin, *st_commit, *st_rollback, *st_stat, *st_alert, *st_max_id;
	sqlite3_stmt *st_alert_max_id;
	sqlite3_stmt *st_event[STORE_FAM_COUNT];       /* one row into each family's table */
	sqlite3_stmt *st_event_group[STORE_FAM_COUNT]; /* EVENT_GROUP rows (threaded) */
	sqlite3_stmt *st_expire[STORE_FAM_COUNT];      /* retention (cfg.retain_us) */

	/* writer side (the writer thread, or the caller inline) */
	int in_txn;
	uint64_t span_us;    /* a batch spans at most this much packet time */
	uint64_t batch_ts0;  /* packet time of the batch's first event */
	uint64_t pend_rows;  /* events + alerts + stats in the open batch */
	uint64_t pend_events, pend_alerts, pend_stats;
	/* a run of failed writes (set_err, txn_commit): whether one is going
	 * on, n_errors before it, when it began and was last logged
	 * (CLOCK_MONOTONIC seconds) */
	int failing;
	uint64_t fail_errors0;
	double fail_since, fail_logged_at;
	int64_t next_event_id; /* in a transaction: the id of the next event */
	uint64_t newest_ts;    /* retention's "now": see expire() */
	uint64_t batch_newest; /* packet time of the open batch's newest event */
	uint64_t expired_ts;   /* newest_ts at the last expiry */
	int expire_more;       /* the last expiry deleted rows: look again */
	uint64_t pend_expired; /* events deleted in the open batch */
	/* threaded writer: each family's events of the open batch not yet
	 * written, copied out of the ring until EVENT_GROUP of them make one
	 * multi-row INSERT (or the batch ends) */
	struct stage {
		unsigned n;
		size_t used;          /* bytes of buf */
		int64_t id[EVENT_GROUP];
		uint32_t off[EVENT_GROUP];
		unsigned char *buf;   /* EVENT_GROUP records of at most QREC_EVENT_MAX */
	} stage[STORE_FAM_COUNT];
	uint64_t staged;          /* events in all stages */
	/* an event's addresses rendered for binding: one pair per row of the
	 * multi-row INSERT, bound SQLITE_STATIC, so they live until the step */
	char addr_buf[EVENT_GROUP][2][ADDR_TEXT_MAX];

	/* counters, written by the writer, read by the caller */
	_Atomic uint64_t n_events, n_alerts, n_stats, n_commits, n_errors, n_expired;
	/* counters of the caller side */
	uint64_t n_truncated, n_queue_waits, n_dropped; /* producer side only */
	uint64_t errors_reported; /* n_errors at the last flush */
	struct store_stats *snap;
	struct store_stats snap_mem;

	pthread_mutex_t err_lock; /* errmsg is written by the writer thread */
	char errmsg[512];
	char errcopy[512];

	/* alert ids (writer side, alert_row): the ids store_alert_id() hands
	 * out are this process's; the row each one went to, which another
	 * process writing the same database may have made differ, is kept as
	 * ranges (local lo..hi -> row local + delta), sorted and disjoint, at
	 * most AMAP_MAX of them; amap_log lists the ids first mapped in the
	 * open transaction, so that a lost transaction forgets them */
	struct amap {
		int64_t lo, hi, delta;
	} *amap;
	size_t amap_n, amap_cap;
	int64_t *amap_log;
	size_t amap_log_n, amap_log_cap;
	int64_t next_alert_row; /* in a transaction: the next new alert's row, 0: not read */

	/* caller-side state */
	int64_t next_alert_id;
	uint64_t flush_seq;
	unsigned char *scratch; /* inline mode: one record */

	/* the queue to the writer thread (threaded mode): the ring, and
	 * store_flush()'s wait for the writer to reach its OP_FLUSH */
	struct ring ring;
	pthread_mutex_t flush_lock;
	pthread_cond_t flushed;
	uint64_t flush_done; /* under flush_lock */
	pthread_t thread;
	int thread_started, locks_ready;

	/* the checkpointer (threaded mode): WAL checkpoints, and the fsyncs
	 * they carry, on a connection and a thread of their own */
	sqlite3 *ck_db;
	pthread_t ck_thread;
	int ck_started;
	pthread_mutex_t ck_lock;
	pthread_cond_t ck_cond, ck_idle;
	int ck_want, ck_stop, ck_running; /* under ck_lock */
	int ck_frames, ck_frames_max;     /* CKPT_BYTES, CKPT_BYTES_MAX in pages */
};

/*
 * Events go to one table per family (schema/002_event_tables.sql), each row
 * with an id of its own from one sequence over the four: at BEGIN the writer
 * reads max(id) across them (SQL_EVENT_MAX_ID; another process may have
 * written since) and numbers the batch's rows in the order they came. The
 * INSERTs are made at open from these parts: SQL_EVENT_HEAD, a table name,
 * SQL_EVENT_COLS, then one SQL_EVENT_TUPLE per row (EVENT_COLS parameters
 * each, numbered 1, 2, ... in order).
 */
static const char *const event_tables[STORE_FAM_COUNT] = {
	[STORE_FAM_DNS] = "events_dns",
	[STORE_FAM_HTTP] = "events_http",
	[STORE_FAM_TLS] = "events_tls",
	[STORE_FAM_ICMP] = "events_icmp",
};
static const char SQL_EVENT_HEAD[] = "INSERT INTO ";
static const char SQL_EVENT_COLS[] =
	"(id, ts, kind, flow_id, proto, src_ip, src_port, dst_ip, dst_port, "
	"name, type, code, size, flags, info) VALUES";
static const char SQL_EVENT_TUPLE[] = "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
static const char SQL_EVENT_MAX_ID[] =
	"SELECT max(coalesce((SELECT max(id) FROM events_dns), 0), "
	"coalesce((SELECT max(id) FROM events_http), 0), "
	"coalesce((SELECT max(id) FROM events_tls), 0), "
	"coalesce((SELECT max(id) FROM events_icmp), 0))";
/*
 * Retention, per table: delete the rows before the first one that is
 * recent (?1 <= ts <= ?3: within retain_us of the newest event, before it
 * or after it), or before the last row, or before the row ?2 ids past the
 * oldest, whichever comes first. Ids and packet time rise together (almost:
 * several interfaces interleave, a clock steps back), so the scan in id
 * order reads the rows it deletes and one more; a row older than one stored
 * before it waits until that one is old too. A row dated after the newest
 * event by more than retain_us (from a capture replayed into the same
 * database) is outside the window too, so it cannot pin the database's
 * size. The scalar subqueries do not depend on the row and run once.
 */
static const char SQL_EXPIRE_FMT[] =
	"DELETE FROM %s WHERE id < (SELECT id FROM %s WHERE (ts >= ?1 AND ts <= ?3) "
	"OR id >= (SELECT max(id) FROM %s) OR id >= (SELECT min(id) FROM %s) + ?2 "
	"ORDER BY id LIMIT 1)";
static const char SQL_STAT[] =
	"INSERT INTO stats(name, value) VALUES(?1, ?2) "
	"ON CONFLICT(name) DO UPDATE SET value = excluded.value";
/* An alert row, inserted or replaced; either way its seq becomes the next
 * in the table (schema/003_alert_seq.sql), found through alerts_seq. ?1 is
 * the row's id: a new alert's is past SQL_ALERT_MAX_ID read under this
 * transaction's write lock, so the INSERT never meets another process's
 * row; a later write of the same alert replaces the row it made
 * (alert_row). */
static const char SQL_ALERT[] =
	"INSERT INTO alerts(id, class, severity, first_ts, last_ts, count, outcome, proto, "
	"src_ip, src_port, dst_ip, dst_port, subject, score, rule, summary, evidence, seq) "
	"VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
	"(SELECT coalesce(max(seq), 0) + 1 FROM alerts)) "
	"ON CONFLICT(id) DO UPDATE SET class = excluded.class, severity = excluded.severity, "
	"first_ts = excluded.first_ts, last_ts = excluded.last_ts, count = excluded.count, "
	"outcome = excluded.outcome, proto = excluded.proto, src_ip = excluded.src_ip, "
	"src_port = excluded.src_port, dst_ip = excluded.dst_ip, dst_port = excluded.dst_port, "
	"subject = excluded.subject, score = excluded.score, rule = excluded.rule, "
	"summary = excluded.summary, evidence = excluded.evidence, seq = excluded.seq";

static const char SQL_ALERT_MAX_ID[] = "SELECT coalesce(max(id), 0) FROM alerts";

int store_schema_version(void)
{
	int n = 0;
	while (schema_migrations[n].sql)
		n++;
	return n;
}

int store_kind_family(int kind)
{
	switch (kind) {
	case OBS_DNS_QUERY:
	case OBS_DNS_ANSWER:
		return STORE_FAM_DNS;
	case OBS_HTTP_REQUEST:
	case OBS_HTTP_RESPONSE:
		return STORE_FAM_HTTP;
	case OBS_TLS_CLIENT_HELLO:
	case OBS_TLS_SERVER_HELLO:
		return STORE_FAM_TLS;
	case OBS_ICMP:
		return STORE_FAM_ICMP;
	default:
		return -1;
	}
}

/* ---- errors ---------------------------------------------------------- */

/*
 * A write failed (n rows lost, counted by the caller). The first failure of
 * a run of them is logged at once; while the run goes on (a full disk, say),
 * a line every cfg.fail_log_ms counts the rows lost so far; the first commit
 * that succeeds after it logs the end of the run and its total
 * (fail_recovered). So a watch that runs for months says each time its
 * storage failed and came back, with no flood of lines in between.
 */
#define DEFAULT_FAIL_LOG_MS 60000u

static void set_err(struct store *s, const char *what, uint64_t n)
{
	pthread_mutex_lock(&s->err_lock);
	snprintf(s->errmsg, sizeof(s->errmsg), "%s: %s: %s", s->path, what,
		 s->db ? sqlite3_errmsg(s->db) : "no connection");
	pthread_mutex_unlock(&s->err_lock);
	double now = sync_now();
	uint64_t errors = atomic_load_explicit(&s->n_errors, memory_order_relaxed);
	if (!s->failing) {
		s->failing = 1;
		s->fail_errors0 = errors - n;
		s->fail_since = s->fail_logged_at = now;
		log_err("store", "%s (rows are lost until a write succeeds; counted in "
				 "store.errors)", s->errmsg);
	} else if (now - s->fail_logged_at >= s->cfg.fail_log_ms / 1000.0) {
		s->fail_logged_at = now;
		log_err("store", "still failing after %.0f s, %" PRIu64 " rows lost; last: %s",
			now - s->fail_since, errors - s->fail_errors0, s->errmsg);
	}
}

/* A commit succeeded: a run of failures, if one was going on, is over. */
static void fail_recovered(struct store *s)
{
	if (!s->failing)
		return;
	s->failing = 0;
	log_info("store", "%s: writing again, after %.0f s of failed writes and %" PRIu64
			  " rows lost", s->path, sync_now() - s->fail_since,
		 atomic_load_explicit(&s->n_errors, memory_order_relaxed) - s->fail_errors0);
}

/* The writer failed n rows (or one commit). */
static void count_err(struct store *s, const char *what, uint64_t n)
{
	atomic_fetch_add_explicit(&s->n_errors, n, memory_order_relaxed);
	set_err(s, what, n);
}

const char *store_last_error(const struct store *s)
{
	if (!s)
		return "";
	struct store *m = (struct store *)s; /* only the lock and a copy buffer */
	pthread_mutex_lock(&m->err_lock);
	memcpy(m->errcopy, m->errmsg, sizeof(m->errcopy));
	pthread_mutex_unlock(&m->err_lock);
	return m->errcopy;
}

/* ---- statements and transactions (writer side) ---------------------- */

/* Step a statement that returns no row, then reset it, keeping its
 * bindings: for a statement whose every parameter is bound again before its
 * next step and whose SQLITE_STATIC buffers live as long as the store (the
 * multi-row event INSERT: the stage buffers and addr_buf). Returns the
 * step's result code (SQLITE_DONE on success). */
static int step_keep(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);
	int rrc = sqlite3_reset(st);
	if (rc == SQLITE_ROW)
		rc = SQLITE_DONE;
	if (rc == SQLITE_DONE && rrc != SQLITE_OK)
		rc = rrc;
	return rc;
}

/* step_keep, then clear the bindings (which may point into a ring slot). */
static int step_done(sqlite3_stmt *st)
{
	int rc = step_keep(st);
	sqlite3_clear_bindings(st);
	return rc;
}

static void stage_clear(struct store *s)
{
	for (unsigned f = 0; f < STORE_FAM_COUNT; f++)
		s->stage[f].n = 0, s->stage[f].used = 0;
	s->staged = 0;
}

static void amap_undo(struct store *s);

/* A failed statement may have rolled the whole transaction back (FULL, IOERR,
 * NOMEM, BUSY in some cases): then the open batch is lost, the rows written
 * and the events still staged. */
static void check_txn_alive(struct store *s)
{
	if (s->in_txn && sqlite3_get_autocommit(s->db)) {
		atomic_fetch_add_explicit(&s->n_errors, s->pend_rows + s->staged,
					  memory_order_relaxed);
		s->in_txn = 0;
		s->pend_rows = s->pend_events = s->pend_alerts = s->pend_stats = 0;
		s->pend_expired = 0;
		stage_clear(s);
		amap_undo(s);
	}
}

/* ---- alert ids (writer side) ------------------------------------------ */

/*
 * An alert's id in this process (store_alert_id(): max(id) + 1 at open,
 * then counting up) is not its row's id: another process writing the same
 * database (a replay appended to a database a watch writes) may have taken
 * that id since. So the row of a new alert is numbered as events are: past
 * max(id) of the alerts read under the transaction's write lock
 * (next_alert_row), and the row each id went to is kept for the alert's
 * later writes (count, outcome, last hit). Alone on a database every id is
 * its row's, and the map is one range; each time another process's alerts
 * come in between, a new range starts. At most AMAP_MAX ranges are kept,
 * the oldest dropped first (an alert of a dropped range that is written
 * again would get a second row; that takes 65,536 runs of another
 * process's alerts while it stays open). A transaction that is lost
 * forgets the ids it mapped (amap_undo): their rows were never made.
 */
#define AMAP_MAX 65536u

/* The range holding id, or -1. */
static long amap_find(const struct store *s, int64_t id)
{
	size_t lo = 0, hi = s->amap_n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (id < s->amap[mid].lo)
			hi = mid;
		else if (id > s->amap[mid].hi)
			lo = mid + 1;
		else
			return (long)mid;
	}
	return -1;
}

/* Room for one more range at index at (moved up). Returns 0 or -1. */
static int amap_open(struct store *s, size_t at)
{
	if (s->amap_n == s->amap_cap) {
		size_t cap = s->amap_cap ? s->amap_cap * 2 : 16;
		struct amap *m = realloc(s->amap, cap * sizeof(*m));
		if (!m)
			return -1;
		s->amap = m;
		s->amap_cap = cap;
	}
	memmove(s->amap + at + 1, s->amap + at, (s->amap_n - at) * sizeof(*s->amap));
	s->amap_n++;
	return 0;
}

/* Map id (not mapped) to row. Returns 0 or -1 (out of memory). */
static int amap_add(struct store *s, int64_t id, int64_t row)
{
	const int64_t delta = row - id;
	size_t at = s->amap_n;

	if (s->amap_log_n == s->amap_log_cap) {
		size_t cap = s->amap_log_cap ? s->amap_log_cap * 2 : 64;
		int64_t *l = realloc(s->amap_log, cap * sizeof(*l));
		if (!l)
			return -1;
		s->amap_log = l;
		s->amap_log_cap = cap;
	}
	if (at && s->amap[at - 1].hi + 1 == id && s->amap[at - 1].delta == delta) {
		s->amap[at - 1].hi = id; /* the usual case: the next id */
	} else {
		if (s->amap_n >= AMAP_MAX) {
			memmove(s->amap, s->amap + 1, (s->amap_n - 1) * sizeof(*s->amap));
			s->amap_n--;
			at = s->amap_n;
		}
		/* an id below the last mapped one: one whose first write was
		 * lost with its transaction, written again */
		while (at && s->amap[at - 1].lo > id)
			at--;
		if (amap_open(s, at) < 0)
			return -1;
		s->amap[at] = (struct amap){id, id, delta};
	}
	s->amap_log[s->amap_log_n++] = id;
	return 0;
}

/* Forget id's row. */
static void amap_forget(struct store *s, int64_t id)
{
	long i = amap_find(s, id);

	if (i < 0)
		return;
	struct amap *m = &s->amap[i];
	if (m->lo == m->hi) {
		memmove(m, m + 1, (s->amap_n - (size_t)i - 1) * sizeof(*m));
		s->amap_n--;
	} else if (id == m->hi) {
		m->hi--;
	} else if (id == m->lo) {
		m->lo++;
	} else {
		struct amap upper = {id + 1, m->hi, m->delta};
		m->hi = id - 1;
		if (amap_open(s, (size_t)i + 1) == 0)
			s->amap[i + 1] = upper;
	}
}

/* The open transaction is lost: its new alerts made no rows. */
static void amap_undo(struct store *s)
{
	while (s->amap_log_n)
		amap_forget(s, s->amap_log[--s->amap_log_n]);
	s->next_alert_row = 0;
}

/* The row of alert id, in the open transaction, into *row: the row its
 * first write made, or for a new alert the next past max(id). Returns 0,
 * 1 for a new alert, or -1. */
static int alert_row(struct store *s, int64_t id, int64_t *row)
{
	long i = amap_find(s, id);

	if (i >= 0) {
		*row = id + s->amap[i].delta;
		return 0;
	}
	if (!s->next_alert_row) {
		int rc = sqlite3_step(s->st_alert_max_id);
		if (rc == SQLITE_ROW)
			s->next_alert_row = sqlite3_column_int64(s->st_alert_max_id, 0) + 1;
		if (sqlite3_reset(s->st_alert_max_id) != SQLITE_OK || rc != SQLITE_ROW) {
			s->next_alert_row = 0;
			return -1;
		}
	}
	if (amap_add(s, id, s->next_alert_row) < 0)
		return -1;
	*row = s->next_alert_row++;
	return 1;
}

/* The first write of alert id failed, its transaction going on: it made no
 * row (and the row id is given to the next new alert). */
static void alert_row_failed(struct store *s, int64_t id)
{
	if (!s->in_txn || !s->amap_log_n || s->amap_log[s->amap_log_n - 1] != id)
		return;
	s->amap_log_n--;
	amap_forget(s, id);
	s->next_alert_row--;
}

/* max(id) over the event tables, into *out. Returns 0 or -1. */
static int max_event_id(struct store *s, int64_t *out)
{
	int rc = sqlite3_step(s->st_max_id);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(s->st_max_id, 0);
	return sqlite3_reset(s->st_max_id) == SQLITE_OK && rc == SQLITE_ROW ? 0 : -1;
}

static int txn_begin(struct store *s, uint64_t ts)
{
	int64_t max_id = 0;

	if (s->in_txn)
		return 0;
	if (step_done(s->st_begin) != SQLITE_DONE)
		return -1;
	/* The write lock is held from here to COMMIT: no other writer can
	 * take these ids. */
	if (max_event_id(s, &max_id) < 0) {
		if (!sqlite3_get_autocommit(s->db))
			(void)step_done(s->st_rollback);
		return -1;
	}
	s->next_event_id = max_id + 1;
	s->next_alert_row = 0; /* read when the batch's first new alert comes */
	s->amap_log_n = 0;
	s->in_txn = 1;
	s->batch_ts0 = ts;
	s->batch_newest = 0;
	s->pend_rows = s->pend_events = s->pend_alerts = s->pend_stats = 0;
	return 0;
}

static void stage_write(struct store *s, unsigned f);

/*
 * Retention, in the open transaction: each table loses what is not within
 * retain_us of newest_ts (SQL_EXPIRE_FMT), once newest_ts has moved since
 * the last time. newest_ts is the newest packet time of any batch so far,
 * except that a batch whose newest event is more than retain_us older than
 * it sets it back: that is the clock stepping back (after a jump forward
 * that NTP undid, say), not a late packet, and the window follows the
 * clock, so the rows the jump stamped in the future go (as rows dated more
 * than retain_us after the newest) and retention goes on rather than
 * waiting for the clock to reach them. A pass that deleted rows is taken
 * up again at the next commit, even one with no events (the counters
 * written every second), until one finds nothing, so a backlog larger than
 * a pass's bound goes while the link is quiet too. A failed delete is
 * counted and logged; the batch goes on (or, when SQLite undid the
 * transaction, is counted lost).
 */
static void expire(struct store *s)
{
	const uint64_t d = s->cfg.retain_us, b = s->batch_newest;

	if (!d)
		return;
	if (b && (b > s->newest_ts || (s->newest_ts > d && b < s->newest_ts - d)))
		s->newest_ts = b;
	const uint64_t now = s->newest_ts;
	if (now < d || (now == s->expired_ts && !s->expire_more))
		return;
	s->expired_ts = now;
	s->expire_more = 0;
	/* ts is stored as a signed 64-bit integer: the window's end is
	 * clamped there */
	int64_t lo = now - d > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)(now - d);
	int64_t hi = now > (uint64_t)INT64_MAX - d ? INT64_MAX : (int64_t)(now + d);
	for (unsigned f = 0; f < STORE_FAM_COUNT && s->in_txn; f++) {
		sqlite3_stmt *st = s->st_expire[f];
		if (sqlite3_bind_int64(st, 1, lo) != SQLITE_OK ||
		    sqlite3_bind_int64(st, 2, STORE_EXPIRE_MAX) != SQLITE_OK ||
		    sqlite3_bind_int64(st, 3, hi) != SQLITE_OK) {
			sqlite3_clear_bindings(st);
			count_err(s, "expire events", 1);
			continue;
		}
		if (step_done(st) != SQLITE_DONE) {
			count_err(s, "expire events", 1);
			check_txn_alive(s);
			continue;
		}
		int64_t n = sqlite3_changes64(s->db);
		s->pend_expired += (uint64_t)n;
		/* Deleted something: the pass may have stopped at its bound (of
		 * ids: fewer rows than that when the tables interleave), so the
		 * next commit looks again, events or not, until a pass finds
		 * nothing (microseconds). */
		if (n > 0)
			s->expire_more = 1;
	}
}

static int txn_commit(struct store *s)
{
	if (!s->in_txn)
		return 0;
	for (unsigned f = 0; f < STORE_FAM_COUNT && s->in_txn; f++)
		if (s->stage[f].n)
			stage_write(s, f);
	if (!s->in_txn)
		return -1; /* lost on the way, and counted */
	expire(s);
	if (!s->in_txn)
		return -1;
	if (step_done(s->st_commit) != SQLITE_DONE) {
		/* The batch is lost: roll back what is left of it. */
		count_err(s, "commit", s->pend_rows ? s->pend_rows : 1);
		if (!sqlite3_get_autocommit(s->db) && step_done(s->st_rollback) != SQLITE_DONE)
			count_err(s, "rollback", 1);
		s->in_txn = 0;
		s->pend_rows = s->pend_events = s->pend_alerts = s->pend_stats = 0;
		s->pend_expired = 0;
		amap_undo(s);
		return -1;
	}
	s->in_txn = 0;
	s->amap_log_n = 0; /* the new alerts' rows are made */
	fail_recovered(s);
	atomic_fetch_add_explicit(&s->n_expired, s->pend_expired, memory_order_relaxed);
	s->pend_expired = 0;
	atomic_fetch_add_explicit(&s->n_events, s->pend_events, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->n_alerts, s->pend_alerts, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->n_stats, s->pend_stats, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->n_commits, 1, memory_order_relaxed);
	s->pend_rows = s->pend_events = s->pend_alerts = s->pend_stats = 0;
	return 0;
}

/* ---- records --------------------------------------------------------- */

/* Bind string i of r to parameter idx, in place (the record outlives the
 * step). */
static int bind_str(sqlite3_stmt *st, int idx, const struct qrec *r, const char **cursor,
		    unsigned i)
{
	if (r->slen[i] == STR_NULL)
		return sqlite3_bind_null(st, idx);
	const char *p = *cursor;
	*cursor += r->slen[i] + 1;
	return sqlite3_bind_text(st, idx, p, (int)r->slen[i], SQLITE_STATIC);
}

static int bind_opt_int(sqlite3_stmt *st, int idx, int64_t v, int null_if_zero)
{
	if (null_if_zero && v == 0)
		return sqlite3_bind_null(st, idx);
	return sqlite3_bind_int64(st, idx, v);
}

/* Render address a (ipv 4 or 6; anything else is stored as "") into buf, of
 * ADDR_TEXT_MAX bytes, and bind it in place: buf must outlive the step. */
static int bind_addr(sqlite3_stmt *st, int idx, int ipv, const char *a, char *buf)
{
	size_t n = 0;
	buf[0] = '\0';
	if (ipv == 4 || ipv == 6)
		n = text_addr(buf, ADDR_TEXT_MAX, ipv, (const uint8_t *)a);
	return sqlite3_bind_text(st, idx, buf, (int)n, SQLITE_STATIC);
}

/* Bind event r, numbered id, to parameters base+1 .. base+EVENT_COLS of st,
 * its addresses rendered into addr (a slot of s->addr_buf that outlives the
 * step). */
static int bind_event(sqlite3_stmt *st, int base, int64_t id, const struct qrec *r,
		      char (*addr)[ADDR_TEXT_MAX])
{
	const char *cur = r->text + EV_ADDR_BYTES;
	int brc = SQLITE_OK;

	brc |= sqlite3_bind_int64(st, ++base, id);                   /* id */
	brc |= sqlite3_bind_int64(st, base + 1, r->v[0]);            /* ts */
	brc |= sqlite3_bind_int(st, base + 2, (int)r->v[1]);         /* kind */
	brc |= bind_opt_int(st, base + 3, r->v[2], 1);               /* flow_id */
	brc |= sqlite3_bind_int(st, base + 4, (int)(r->v[3] & 0xff)); /* proto */
	brc |= bind_addr(st, base + 5, r->ipv, r->text, addr[0]);
	brc |= sqlite3_bind_int(st, base + 6, (int)(r->v[4] & 0xffff));
	brc |= bind_addr(st, base + 7, r->ipv, r->text + EV_ADDR_BYTES / 2, addr[1]);
	brc |= sqlite3_bind_int(st, base + 8, (int)((r->v[4] >> 16) & 0xffff));
	brc |= bind_str(st, base + 9, r, &cur, EV_NAME);
	brc |= sqlite3_bind_int(st, base + 10, (int)(r->v[5] & 0xffff));         /* type */
	brc |= sqlite3_bind_int(st, base + 11, (int)((r->v[5] >> 16) & 0xffff)); /* code */
	brc |= sqlite3_bind_int64(st, base + 12, r->v[6]);                         /* size */
	brc |= sqlite3_bind_int64(st, base + 13, r->v[7]);                         /* flags */
	brc |= bind_str(st, base + 14, r, &cur, EV_INFO);
	return brc;
}

/* After n rows of op went into the open batch: count them, and commit when
 * the batch is full or spans batch_ms of packet time (ts: the last row's,
 * 0 for rows without one). */
static void count_rows(struct store *s, uint8_t op, uint64_t n)
{
	s->pend_rows += n;
	if (op == OP_EVENT)
		s->pend_events += n;
	else if (op == OP_ALERT)
		s->pend_alerts += n;
	else
		s->pend_stats += n;
}

/* Is the open batch complete, its rows (written or staged) counted, after a
 * row of op with packet time ts? */
static int batch_full(const struct store *s, uint8_t op, uint64_t ts)
{
	return s->pend_rows + s->staged >= s->cfg.batch_rows ||
	       (op == OP_EVENT && ts > s->batch_ts0 && ts - s->batch_ts0 >= s->span_us);
}

static int batch_rows_done(struct store *s, uint8_t op, uint64_t n, uint64_t ts)
{
	count_rows(s, op, n);
	return batch_full(s, op, ts) ? txn_commit(s) : 0;
}

/* Write event r as row id of family f's table, in the open transaction.
 * Returns 0, or -1 when it failed (counted). */
static int write_event(struct store *s, unsigned f, int64_t id, const struct qrec *r)
{
	sqlite3_stmt *st = s->st_event[f];

	if (bind_event(st, 0, id, r, s->addr_buf[0]) != SQLITE_OK) {
		sqlite3_clear_bindings(st);
		count_err(s, "bind", 1);
		return -1;
	}
	if (step_done(st) != SQLITE_DONE) {
		count_err(s, "insert event", 1);
		check_txn_alive(s);
		return -1;
	}
	count_rows(s, OP_EVENT, 1);
	return 0;
}

/* The family of event record r, or -1 (counted) when it has none or is not
 * a record store_event() could have made. */
static int event_family(struct store *s, const struct qrec *r)
{
	int f = store_kind_family((int)r->v[1]);

	if (f < 0 || r->len > QREC_EVENT_MAX) {
		atomic_fetch_add_explicit(&s->n_errors, 1, memory_order_relaxed);
		pthread_mutex_lock(&s->err_lock);
		snprintf(s->errmsg, sizeof(s->errmsg), "%s: insert event: kind %lld has no table",
			 s->path, (long long)r->v[1]);
		pthread_mutex_unlock(&s->err_lock);
		return -1;
	}
	return f;
}

/* An event, one row at a time (the inline writer). */
static int apply_event(struct store *s, const struct qrec *r)
{
	uint64_t ts = (uint64_t)r->v[0];
	int f = event_family(s, r);

	if (f < 0)
		return -1;
	if (txn_begin(s, ts) < 0) {
		count_err(s, "begin", 1);
		return -1;
	}
	if (ts > s->batch_newest)
		s->batch_newest = ts;
	if (write_event(s, (unsigned)f, s->next_event_id++, r) < 0)
		return -1;
	return s->in_txn && batch_full(s, OP_EVENT, ts) ? txn_commit(s) : 0;
}

/*
 * The threaded writer stages each event (a copy: the ring slot is released
 * at once) with its id, and writes a family's stage with one multi-row
 * INSERT once it holds EVENT_GROUP events: one statement step instead of
 * EVENT_GROUP saves about a fifth of the writer's instructions per row. The
 * batch counts staged events, and its commit writes what is staged first,
 * row by row, so the batches and commits are those of writing row by row.
 */
static void stage_event(struct store *s, const struct qrec *r)
{
	uint64_t ts = (uint64_t)r->v[0];
	int f = event_family(s, r);

	if (f < 0)
		return;
	if (txn_begin(s, ts) < 0) {
		count_err(s, "begin", 1);
		return;
	}
	if (ts > s->batch_newest)
		s->batch_newest = ts;
	struct stage *g = &s->stage[f];
	g->id[g->n] = s->next_event_id++;
	g->off[g->n] = (uint32_t)g->used;
	memcpy(g->buf + g->used, r, r->len);
	g->used += r->len;
	g->n++;
	s->staged++;
	if (g->n == EVENT_GROUP)
		stage_write(s, (unsigned)f);
	if (s->in_txn && batch_full(s, OP_EVENT, ts))
		txn_commit(s);
}

/*
 * Write family f's staged events: all EVENT_GROUP with one statement, or
 * fewer, or after that statement failed (SQLite undid it), one by one,
 * each counted on its own. Should the transaction die on the way, what was
 * not written is counted lost.
 */
static void stage_write(struct store *s, unsigned f)
{
	struct stage *g = &s->stage[f];
	sqlite3_stmt *st = s->st_event_group[f];
	unsigned n = g->n;
	int brc = SQLITE_OK;

	/* taken out of the stage (its bytes stay put until the next event) */
	g->n = 0;
	g->used = 0;
	s->staged -= n;
	if (n == EVENT_GROUP && st) {
		for (unsigned i = 0; i < n; i++)
			brc |= bind_event(st, (int)(i * EVENT_COLS), g->id[i],
					  (const struct qrec *)(g->buf + g->off[i]), s->addr_buf[i]);
		if (brc == SQLITE_OK && step_keep(st) == SQLITE_DONE) {
			count_rows(s, OP_EVENT, n);
			return;
		}
		if (brc != SQLITE_OK)
			sqlite3_clear_bindings(st);
		check_txn_alive(s);
	}
	for (unsigned i = 0; i < n; i++) {
		if (!s->in_txn) {
			atomic_fetch_add_explicit(&s->n_errors, n - i, memory_order_relaxed);
			return;
		}
		write_event(s, f, g->id[i], (const struct qrec *)(g->buf + g->off[i]));
	}
}

/* Write one record. Returns 0, or -1 when it failed (counted). */
static int apply(struct store *s, const struct qrec *r)
{
	sqlite3_stmt *st;
	const char *cur = r->text;
	const char *what;
	int brc = SQLITE_OK;
	uint64_t ts = 0;
	int new_alert = 0;

	switch (r->op) {
	case OP_EVENT:
		return apply_event(s, r);
	case OP_STAT:
		st = s->st_stat;
		what = "write stat";
		brc |= bind_str(st, 1, r, &cur, ST_NAME);
		brc |= sqlite3_bind_int64(st, 2, r->v[0]);
		break;
	case OP_ALERT: {
		int64_t row = 0;
		st = s->st_alert;
		what = "write alert";
		/* its row is found (or numbered) under the write lock */
		if (txn_begin(s, ts) < 0) {
			count_err(s, "begin", 1);
			return -1;
		}
		new_alert = alert_row(s, r->v[0], &row);
		if (new_alert < 0) {
			count_err(s, "alert id", 1);
			check_txn_alive(s);
			return -1;
		}
		brc |= sqlite3_bind_int64(st, 1, row);
		brc |= bind_str(st, 2, r, &cur, AL_CLASS);
		brc |= sqlite3_bind_int(st, 3, (int)r->v[1]);
		brc |= sqlite3_bind_int64(st, 4, r->v[2]);
		brc |= sqlite3_bind_int64(st, 5, r->v[3]);
		brc |= sqlite3_bind_int64(st, 6, r->v[4]);
		brc |= bind_str(st, 7, r, &cur, AL_OUTCOME);
		brc |= bind_opt_int(st, 8, r->v[5], 1);
		brc |= bind_str(st, 9, r, &cur, AL_SRC);
		brc |= bind_opt_int(st, 10, r->v[6], 0);
		brc |= bind_str(st, 11, r, &cur, AL_DST);
		brc |= bind_opt_int(st, 12, r->v[7], 0);
		brc |= bind_str(st, 13, r, &cur, AL_SUBJECT);
		brc |= sqlite3_bind_double(st, 14, r->d);
		brc |= bind_str(st, 15, r, &cur, AL_RULE);
		brc |= bind_str(st, 16, r, &cur, AL_SUMMARY);
		brc |= bind_str(st, 17, r, &cur, AL_EVIDENCE);
		break;
	}
	case OP_FLUSH:
		return txn_commit(s);
	default:
		return 0;
	}

	if (brc != SQLITE_OK) {
		sqlite3_clear_bindings(st);
		count_err(s, "bind", 1);
		if (new_alert)
			alert_row_failed(s, r->v[0]);
		return -1;
	}
	if (txn_begin(s, ts) < 0) {
		sqlite3_clear_bindings(st);
		count_err(s, "begin", 1);
		return -1;
	}
	if (step_done(st) != SQLITE_DONE) {
		count_err(s, what, 1);
		check_txn_alive(s);
		if (new_alert)
			alert_row_failed(s, r->v[0]);
		return -1;
	}
	return batch_rows_done(s, r->op, 1, ts);
}

/* ---- building records (caller side) --------------------------------- */

struct qstr {
	const char *p;
	size_t n; /* (size_t)-1 for NULL */
};

static size_t cap_len(struct store *s, const char *p, size_t n, size_t cap, int cut_at_rs)
{
	if (n <= cap)
		return n;
	s->n_truncated++;
	if (cut_at_rs) {
		/* Keep whole records of the record.h encoding where possible. */
		for (size_t i = cap; i > 0; i--)
			if (p[i - 1] == '\x1e')
				return i;
	}
	return cap;
}

static struct qstr qs(struct store *s, const char *p, size_t n, size_t cap, int cut_at_rs)
{
	struct qstr q = {p, (size_t)-1};
	if (p)
		q.n = cap_len(s, p, n, cap, cut_at_rs);
	return q;
}

static struct qstr qs_z(struct store *s, const char *p, size_t cap)
{
	return qs(s, p, p ? strlen(p) : 0, cap, 0);
}

/* Bytes of a record with `fixed` bytes of text ahead of strings str[n]. */
static size_t rec_size(size_t fixed, const struct qstr *str, unsigned n)
{
	size_t sz = sizeof(struct qrec) + fixed;
	for (unsigned i = 0; i < n; i++)
		if (str[i].n != (size_t)-1)
			sz += str[i].n + 1;
	return (sz + 7) & ~(size_t)7;
}

/* Copy strings str[n] into r's text after its first `fixed` bytes. */
static void rec_fill_str(struct qrec *r, size_t fixed, const struct qstr *str, unsigned n)
{
	char *p = r->text + fixed;
	r->nstr = (uint8_t)n;
	for (unsigned i = 0; i < n; i++) {
		if (str[i].n == (size_t)-1) {
			r->slen[i] = STR_NULL;
			continue;
		}
		r->slen[i] = (uint32_t)str[i].n;
		memcpy(p, str[i].p, str[i].n);
		p[str[i].n] = '\0';
		p += str[i].n + 1;
	}
	for (unsigned i = n; i < QREC_MAX_STR; i++)
		r->slen[i] = STR_NULL;
}

/* ---- the queue (threaded mode) ----------------------------------------- */

/* Room in the ring for a record of need bytes. When it is full (a replay;
 * `watch` drops instead, store_event), wait until a quarter of the ring is
 * free (not one slot, which would ping-pong the threads once per row),
 * looking every 100 ms. */
static struct qrec *queue_reserve(struct store *s, size_t need)
{
	struct qrec *r = ring_reserve(&s->ring, need);

	if (!r) {
		s->n_queue_waits++;
		while (!(r = ring_reserve(&s->ring, need)))
			ring_wait_room(&s->ring, need, 100);
	}
	return r;
}

static void queue_commit(struct store *s, const struct qrec *r)
{
	uint8_t op = r->op;

	ring_commit(&s->ring, r);
	/* In bulk mode (a replay) events are handed over PUBLISH_BYTES at a
	 * time: each store to head moves its cache line away from the writer
	 * that reads it, which cost more than a small event. Anything else,
	 * a full ring (queue_reserve) and flush or stop publish at once, so
	 * nothing waits there; a live capture publishes every record. */
	if (s->cfg.bulk && op == OP_EVENT && ring_unpublished(&s->ring) < PUBLISH_BYTES)
		return;
	ring_publish(&s->ring);
	/* Wake a sleeping writer only once an eighth of the ring is pending
	 * (or on flush/stop): waking it per row costs more than the row. A
	 * writer that is not woken still drains after batch_ms. */
	ring_wake_consumer(&s->ring, op == OP_FLUSH || op == OP_STOP ? 0 : s->ring.cap / 8);
}

/* the writer's: s->flush_lock guards the flushes */
#define FLUSH_CONDS(s) ((pthread_cond_t *const[]){&(s)->flushed})

/*
 * Checkpoints. SQLite's own policy checkpoints in the committing thread once
 * the WAL holds CKPT_BYTES of pages, and a checkpoint fsyncs the WAL and then
 * the database: a replay's writer spent about a fifth of its time waiting
 * there. In threaded mode a commit only wakes the checkpointer thread, which
 * runs PASSIVE checkpoints (they never block the writer) on a connection of
 * its own, with the same syncs. The WAL can start over only at a commit
 * whose transaction began with every frame checkpointed, which the writer,
 * beginning its next batch at once, never sees while the checkpointer
 * works; so once the WAL holds CKPT_BYTES_MAX of pages the writer waits for
 * the checkpointer's pass to end and checkpoints itself (only the frames
 * that pass did not reach), and its next transaction starts the WAL over.
 * The WAL stays under ~32 MiB plus about two batches.
 */
#define CKPT_BYTES (4000u * 1024u)     /* SQLite's default: 1000 pages of 4 KiB */
#define CKPT_BYTES_MAX (32u << 20)     /* 32 MiB */

static int wal_hook(void *arg, sqlite3 *db, const char *name, int frames)
{
	struct store *s = arg;

	if (frames >= s->ck_frames_max) {
		/* after the checkpointer's pass, which would make ours BUSY */
		pthread_mutex_lock(&s->ck_lock);
		while (s->ck_running)
			pthread_cond_wait(&s->ck_idle, &s->ck_lock);
		s->ck_want = 0;
		pthread_mutex_unlock(&s->ck_lock);
		(void)sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
	} else if (frames >= s->ck_frames) {
		pthread_mutex_lock(&s->ck_lock);
		if (!s->ck_want) {
			s->ck_want = 1;
			pthread_cond_signal(&s->ck_cond);
		}
		pthread_mutex_unlock(&s->ck_lock);
	}
	return SQLITE_OK;
}

static void *ckpt_main(void *arg)
{
	struct store *s = arg;

	sync_name_self("ew-ckpt");
	pthread_mutex_lock(&s->ck_lock);
	for (;;) {
		while (!s->ck_want && !s->ck_stop)
			pthread_cond_wait(&s->ck_cond, &s->ck_lock);
		if (s->ck_stop)
			break;
		s->ck_want = 0;
		s->ck_running = 1;
		pthread_mutex_unlock(&s->ck_lock);
		/* SQLITE_BUSY: another connection's checkpoint is running; the
		 * next commit asks again. */
		(void)sqlite3_wal_checkpoint_v2(s->ck_db, "main", SQLITE_CHECKPOINT_PASSIVE, NULL,
						NULL);
		pthread_mutex_lock(&s->ck_lock);
		s->ck_running = 0;
		pthread_cond_broadcast(&s->ck_idle);
	}
	pthread_mutex_unlock(&s->ck_lock);
	return NULL;
}

/* Start the checkpointer. Should anything fail, the writer keeps SQLite's
 * own checkpoints, as in inline mode. */
static void ckpt_start(struct store *s)
{
	/* the file the writer's connection has open (s->path may be a URI) */
	const char *file = sqlite3_db_filename(s->db, "main");

	if (!file || !*file ||
	    sqlite3_open_v2(file, &s->ck_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
		    SQLITE_OK ||
	    sqlite3_exec(s->ck_db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	pthread_cond_t *const cv[] = {&s->ck_cond, &s->ck_idle};
	if (sync_init(&s->ck_lock, cv, 2) < 0)
		goto fail;
	if (pthread_create(&s->ck_thread, NULL, ckpt_main, s) != 0) {
		sync_destroy(&s->ck_lock, cv, 2);
		goto fail;
	}
	s->ck_started = 1;
	sqlite3_wal_hook(s->db, wal_hook, s); /* in place of wal_autocheckpoint */
	return;
fail:
	log_warn("store", "%s: no checkpoint thread; the writer checkpoints", s->path);
	sqlite3_close(s->ck_db);
	s->ck_db = NULL;
}

/* Stop the checkpointer, once the writer has stopped. */
static void ckpt_stop(struct store *s)
{
	if (!s->ck_started)
		return;
	sqlite3_wal_autocheckpoint(s->db, s->ck_frames); /* SQLite's hook again */
	pthread_mutex_lock(&s->ck_lock);
	s->ck_stop = 1;
	pthread_cond_signal(&s->ck_cond);
	pthread_mutex_unlock(&s->ck_lock);
	pthread_join(s->ck_thread, NULL);
	sync_destroy(&s->ck_lock, (pthread_cond_t *const[]){&s->ck_cond, &s->ck_idle}, 2);
	s->ck_started = 0;
	sqlite3_close(s->ck_db);
	s->ck_db = NULL;
}

static void *writer_main(void *arg)
{
	struct store *s = arg;
	unsigned since_release = 0;

	sync_name_self("ew-writer");
	for (;;) {
		const struct qrec *r = ring_take(&s->ring);
		if (!r) {
			/* Empty: wait, and commit an open batch after batch_ms of
			 * idleness so a quiet link still gets its rows visible. */
			if (!ring_wait_data(&s->ring, s->cfg.batch_ms))
				txn_commit(s);
			continue;
		}
		uint8_t op = r->op;
		uint64_t seq = op == OP_FLUSH ? (uint64_t)r->v[0] : 0;
		if (op == OP_EVENT)
			stage_event(s, r);
		else if (op != OP_STOP)
			apply(s, r);
		ring_release(&s->ring, r);
		/* Hand space back in steps (ring_hand_back wakes a waiting
		 * producer only once the room it asked for is there). */
		if (++since_release >= 32 || ring_caught_up(&s->ring) || op == OP_FLUSH ||
		    op == OP_STOP) {
			since_release = 0;
			ring_hand_back(&s->ring);
		}
		if (op == OP_FLUSH) {
			pthread_mutex_lock(&s->flush_lock);
			s->flush_done = seq;
			pthread_cond_broadcast(&s->flushed);
			pthread_mutex_unlock(&s->flush_lock);
		} else if (op == OP_STOP) {
			return NULL;
		}
	}
}

/* Get room for a record of `need` bytes: in the ring, or the scratch. */
static struct qrec *rec_begin(struct store *s, size_t need)
{
	return s->threaded ? queue_reserve(s, need) : (struct qrec *)s->scratch;
}

/* Hand the record to the writer. Inline, returns apply()'s result. */
static int rec_commit(struct store *s, struct qrec *r)
{
	if (s->threaded) {
		queue_commit(s, r);
		return 0;
	}
	return apply(s, r);
}

static int put_simple(struct store *s, uint8_t op, int64_t v0)
{
	struct qrec *r = rec_begin(s, sizeof(struct qrec));
	memset(r, 0, sizeof(*r));
	r->len = sizeof(struct qrec);
	r->op = op;
	r->v[0] = v0;
	rec_fill_str(r, 0, NULL, 0);
	return rec_commit(s, r);
}

/* ---- public write API -------------------------------------------------- */

_Static_assert(EV_ADDR_BYTES == sizeof(((struct pkt *)0)->src) + sizeof(((struct pkt *)0)->dst),
	       "an event record holds both addresses of struct pkt");

int store_event(struct store *s, const struct obs *o, uint64_t flow_id)
{
	struct qstr str[EV_NSTR];
	const struct pkt *p;

	if (!s)
		return -1;
	if (!o) {
		atomic_fetch_add_explicit(&s->n_errors, 1, memory_order_relaxed);
		return -1;
	}
	p = o->pkt;
	str[EV_NAME] = qs(s, o->name, o->name ? (o->name_len ? o->name_len : strlen(o->name)) : 0,
			  STORE_NAME_MAX, 0);
	str[EV_INFO] = qs(s, o->info_len ? o->info : NULL, o->info_len, STORE_INFO_MAX, 1);

	size_t need = rec_size(EV_ADDR_BYTES, str, EV_NSTR);
	if (s->threaded && s->cfg.drop_when_full && !ring_fits(&s->ring, need)) {
		s->n_dropped++;         /* counted, reported in stats: never silent */
		ring_publish(&s->ring); /* (bulk mode) what is queued can drain */
		return -1;
	}
	struct qrec *r = rec_begin(s, need);
	r->len = (uint32_t)need;
	r->op = OP_EVENT;
	r->v[0] = p ? (int64_t)p->ts_us : 0;
	r->v[1] = (int64_t)o->kind;
	r->v[2] = (int64_t)flow_id;
	r->v[3] = p ? p->proto : 0;
	r->v[4] = p ? ((int64_t)p->sport | ((int64_t)p->dport << 16)) : 0;
	r->v[5] = (int64_t)o->type | ((int64_t)o->code << 16);
	r->v[6] = (int64_t)o->size;
	r->v[7] = (int64_t)o->flags;
	r->d = 0;
	/* The addresses go raw; the writer renders them (bind_addr). */
	r->ipv = 0;
	if (p && (p->ipv == 4 || p->ipv == 6)) {
		r->ipv = p->ipv;
		memcpy(r->text, p->src, sizeof(p->src));
		memcpy(r->text + sizeof(p->src), p->dst, sizeof(p->dst));
	}
	rec_fill_str(r, EV_ADDR_BYTES, str, EV_NSTR);
	return rec_commit(s, r);
}

int store_put_stat(struct store *s, const char *name, int64_t value)
{
	struct qstr str[ST_NSTR];
	if (!s)
		return -1;
	if (!name) {
		atomic_fetch_add_explicit(&s->n_errors, 1, memory_order_relaxed);
		return -1;
	}
	str[ST_NAME] = qs_z(s, name, STORE_NAME_MAX);
	size_t need = rec_size(0, str, ST_NSTR);
	struct qrec *r = rec_begin(s, need);
	r->len = (uint32_t)need;
	r->op = OP_STAT;
	r->v[0] = value;
	rec_fill_str(r, 0, str, ST_NSTR);
	return rec_commit(s, r);
}

int64_t store_alert_id(struct store *s)
{
	return s ? s->next_alert_id++ : 0;
}

int store_alert_upsert(struct store *s, const struct store_alert *a)
{
	struct qstr str[AL_NSTR];
	if (!s)
		return -1;
	if (!a || !a->class || a->id <= 0) {
		atomic_fetch_add_explicit(&s->n_errors, 1, memory_order_relaxed);
		return -1;
	}
	str[AL_CLASS] = qs_z(s, a->class, STORE_NAME_MAX);
	str[AL_OUTCOME] = qs_z(s, a->outcome ? a->outcome : "unknown", STORE_NAME_MAX);
	str[AL_SRC] = qs_z(s, a->src_ip, STORE_NAME_MAX);
	str[AL_DST] = qs_z(s, a->dst_ip, STORE_NAME_MAX);
	str[AL_SUBJECT] = qs_z(s, a->subject, STORE_NAME_MAX);
	str[AL_RULE] = qs_z(s, a->rule, STORE_NAME_MAX);
	str[AL_SUMMARY] = qs_z(s, a->summary, STORE_NAME_MAX);
	str[AL_EVIDENCE] = qs(s, a->evidence, a->evidence ? strlen(a->evidence) : 0,
			      STORE_INFO_MAX, 0);
	if (str[AL_EVIDENCE].p && str[AL_EVIDENCE].n < strlen(a->evidence)) {
		/* Keep whole evidence items. */
		size_t n = str[AL_EVIDENCE].n;
		while (n > 0 && a->evidence[n] != '\x1d')
			n--;
		str[AL_EVIDENCE].n = n;
	}
	size_t need = rec_size(0, str, AL_NSTR);
	struct qrec *r = rec_begin(s, need);
	r->len = (uint32_t)need;
	r->op = OP_ALERT;
	r->v[0] = a->id;
	r->v[1] = a->severity;
	r->v[2] = (int64_t)a->first_ts;
	r->v[3] = (int64_t)a->last_ts;
	r->v[4] = (int64_t)a->count;
	r->v[5] = a->proto;
	r->v[6] = a->src_port;
	r->v[7] = a->dst_port;
	r->d = a->score;
	rec_fill_str(r, 0, str, AL_NSTR);
	return rec_commit(s, r);
}

/* Report errors that happened since the previous report. */
static int errors_since_report(struct store *s)
{
	uint64_t e = atomic_load(&s->n_errors);
	int rc = e != s->errors_reported ? -1 : 0;
	s->errors_reported = e;
	return rc;
}

int store_flush(struct store *s)
{
	if (!s)
		return -1;
	if (!s->threaded) {
		txn_commit(s);
		return errors_since_report(s);
	}
	uint64_t seq = ++s->flush_seq;
	put_simple(s, OP_FLUSH, (int64_t)seq);
	pthread_mutex_lock(&s->flush_lock);
	while (s->flush_done < seq)
		pthread_cond_wait(&s->flushed, &s->flush_lock);
	pthread_mutex_unlock(&s->flush_lock);
	return errors_since_report(s);
}

const struct store_stats *store_get_stats(const struct store *s)
{
	if (!s)
		return NULL;
	struct store_stats *st = s->snap;
	st->events = atomic_load_explicit(&s->n_events, memory_order_relaxed);
	st->alerts = atomic_load_explicit(&s->n_alerts, memory_order_relaxed);
	st->stats = atomic_load_explicit(&s->n_stats, memory_order_relaxed);
	st->commits = atomic_load_explicit(&s->n_commits, memory_order_relaxed);
	st->errors = atomic_load_explicit(&s->n_errors, memory_order_relaxed);
	st->truncated = s->n_truncated;
	st->queue_waits = s->n_queue_waits;
	st->dropped = s->n_dropped;
	st->queue_bytes = s->threaded ? (uint64_t)ring_used(&s->ring) : 0;
	st->expired = atomic_load_explicit(&s->n_expired, memory_order_relaxed);
	return st;
}

/* ---- open and close --------------------------------------------------- */

/* Run one statement of fixed SQL text, ignoring rows. */
static int exec_sql(struct store *s, const char *sql)
{
	return sqlite3_exec(s->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

/* Run a one-value query; the value goes into *out (int) or txt (text). */
static int query_one(struct store *s, const char *sql, int64_t *out, char *txt, size_t txtlen)
{
	sqlite3_stmt *st = NULL;
	int rc = -1;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		goto out;
	int src = sqlite3_step(st);
	if (src == SQLITE_ROW) {
		if (out)
			*out = sqlite3_column_int64(st, 0);
		if (txt && txtlen) {
			const unsigned char *t = sqlite3_column_text(st, 0);
			snprintf(txt, txtlen, "%s", t ? (const char *)t : "");
		}
		rc = 0;
	} else if (src == SQLITE_DONE) {
		rc = 0;
	}
out:
	if (st && sqlite3_finalize(st) != SQLITE_OK)
		rc = -1;
	return rc;
}

#define FAIL(...)                                                                \
	do {                                                                     \
		snprintf(err, errlen, __VA_ARGS__);                              \
		goto fail;                                                       \
	} while (0)
#define DBMSG (s->db ? sqlite3_errmsg(s->db) : "out of memory")

/* Is the connection's last error one that waiting may clear (another
 * connection holds a lock SQLite did not wait for: switching the journal
 * mode, say, which does not call the busy handler)? */
static int busy_error(struct store *s)
{
	int e = sqlite3_errcode(s->db) & 0xff;
	return e == SQLITE_BUSY || e == SQLITE_LOCKED;
}

/* query_one, tried again while it fails busy, for up to the busy timeout. */
static int query_retry(struct store *s, const char *sql, int64_t *out, char *txt, size_t txtlen)
{
	const double until = sync_now() + s->cfg.busy_ms / 1000.0;
	long nap_us = 1000;

	for (;;) {
		if (query_one(s, sql, out, txt, txtlen) == 0)
			return 0;
		if (!busy_error(s) || sync_now() >= until)
			return -1;
		nanosleep(&(struct timespec){0, nap_us * 1000}, NULL);
		if (nap_us < 50000)
			nap_us *= 2;
	}
}

/* The schema's version and the tables in the database, read in one
 * transaction (so together: a migration makes its tables and sets the
 * version in one). Returns 0 or -1. */
static int schema_state(struct store *s, int64_t *version, int64_t *tables)
{
	int rc = query_one(s, "PRAGMA user_version", version, NULL, 0);
	if (rc == 0)
		rc = query_one(s, "SELECT count(*) FROM sqlite_master WHERE type = 'table'", tables,
			       NULL, 0);
	return rc;
}

/*
 * Check the schema and bring it up to date, atomically: under BEGIN
 * IMMEDIATE (the write lock, waited for within the busy timeout) the
 * version is read again, a database without our schema must still hold no
 * table, and every pending migration is applied, with PRAGMA user_version,
 * in that one transaction. So two processes opening one new (or old)
 * database at once see it before or after the other's migration, never
 * half-way: the second finds it done.
 */
static int migrate(struct store *s, char *err, size_t errlen)
{
	int64_t now = 0, tables = 0;

	if (exec_sql(s, "BEGIN IMMEDIATE") < 0)
		FAIL("%s: schema: begin: %s", s->path, DBMSG);
	if (schema_state(s, &now, &tables) < 0)
		FAIL("%s: not a database, or unreadable: %s", s->path, DBMSG);
	if (now == 0 && tables > 0)
		FAIL("%s: not an egresswatch database (it holds %lld other table%s and no "
		     "egresswatch schema); give a new file",
		     s->path, (long long)tables, tables == 1 ? "" : "s");
	if (now > store_schema_version())
		FAIL("%s: schema version %lld is newer than this egresswatch supports (%d); "
		     "use a newer egresswatch or another database",
		     s->path, (long long)now, store_schema_version());
	for (const struct schema_migration *m = schema_migrations; m->sql; m++) {
		char pragma[64];
		if (m->version <= now)
			continue;
		/* Say so when it updates an existing database: moving its rows
		 * can take a while (002: ~5 s for 1.4M events). */
		if (now > 0)
			log_info("store", "%s: updating the schema to version %d (%s)", s->path,
				 m->version, m->name);
		/* user_version takes no bound parameter; the text is built from
		 * our own table's version number, never from data. */
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", m->version);
		if (exec_sql(s, m->sql) < 0)
			FAIL("%s: migration %s: %s", s->path, m->name, DBMSG);
		if (exec_sql(s, pragma) < 0)
			FAIL("%s: migration %s: user_version: %s", s->path, m->name, DBMSG);
	}
	if (exec_sql(s, "COMMIT") < 0)
		FAIL("%s: schema: commit: %s", s->path, DBMSG);
	return 0;
fail:
	if (s->db && !sqlite3_get_autocommit(s->db))
		exec_sql(s, "ROLLBACK");
	return -1;
}

/* Prepare the INSERT of `rows` events into family f's table. */
static int prepare_event_insert(struct store *s, unsigned f, unsigned rows, sqlite3_stmt **st)
{
	char sql[sizeof(SQL_EVENT_HEAD) + 16 + sizeof(SQL_EVENT_COLS) +
		 EVENT_GROUP * sizeof(SQL_EVENT_TUPLE)];
	int n = snprintf(sql, sizeof(sql), "%s%s%s", SQL_EVENT_HEAD, event_tables[f],
			 SQL_EVENT_COLS);

	for (unsigned i = 0; i < rows && n > 0 && (size_t)n < sizeof(sql); i++)
		n += snprintf(sql + n, sizeof(sql) - (size_t)n, "%s%s", i ? "," : "",
			      SQL_EVENT_TUPLE);
	if (n <= 0 || (size_t)n >= sizeof(sql))
		return -1;
	return sqlite3_prepare_v3(s->db, sql, n, SQLITE_PREPARE_PERSISTENT, st, NULL) ==
			       SQLITE_OK
		       ? 0
		       : -1;
}

/* Finalize every prepared statement. Returns how many failed. */
static int finalize_all(struct store *s)
{
	sqlite3_stmt **sts[7 + 3 * STORE_FAM_COUNT] = {&s->st_begin, &s->st_commit,
							&s->st_rollback, &s->st_stat,
							&s->st_alert, &s->st_max_id,
							&s->st_alert_max_id};
	unsigned n = 7, bad = 0;

	for (unsigned f = 0; f < STORE_FAM_COUNT; f++) {
		sts[n++] = &s->st_event[f];
		sts[n++] = &s->st_event_group[f];
		sts[n++] = &s->st_expire[f];
	}
	for (unsigned i = 0; i < n; i++) {
		if (sqlite3_finalize(*sts[i]) != SQLITE_OK)
			bad++;
		*sts[i] = NULL;
	}
	return (int)bad;
}

static void free_stages(struct store *s)
{
	for (unsigned f = 0; f < STORE_FAM_COUNT; f++)
		free(s->stage[f].buf);
	free(s->amap);
	free(s->amap_log);
}

int store_open(struct store **out, const char *path, const struct store_config *cfg,
	       char *err, size_t errlen)
{
	struct store *s = NULL;
	int64_t version = 0;
	char mode[32];
	const int known = store_schema_version();

	if (!out || !path) {
		snprintf(err, errlen, "store_open: no database path");
		return -1;
	}
	*out = NULL;
	/* aligned, so that the ring's fields get cache lines of their own */
	s = aligned_alloc(alignof(struct store), sizeof(*s));
	if (s)
		memset(s, 0, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	if (pthread_mutex_init(&s->err_lock, NULL) != 0) {
		snprintf(err, errlen, "%s: out of memory", path);
		free(s);
		return -1;
	}
	s->path = strdup(path);
	if (!s->path)
		goto oom;
	s->snap = &s->snap_mem;
	s->next_alert_id = 1;
	if (cfg)
		s->cfg = *cfg;
	if (!s->cfg.batch_rows)
		s->cfg.batch_rows = DEFAULT_BATCH_ROWS;
	if (!s->cfg.batch_ms)
		s->cfg.batch_ms = DEFAULT_BATCH_MS;
	s->span_us = (uint64_t)s->cfg.batch_ms * 1000u;
	if (s->cfg.bulk && s->span_us < (uint64_t)BULK_SPAN_MS * 1000u)
		s->span_us = (uint64_t)BULK_SPAN_MS * 1000u;
	if (!s->cfg.busy_ms)
		s->cfg.busy_ms = DEFAULT_BUSY_MS;
	if (!s->cfg.fail_log_ms)
		s->cfg.fail_log_ms = DEFAULT_FAIL_LOG_MS;
	if (s->cfg.retain_us > STORE_RETAIN_MAX_US)
		s->cfg.retain_us = STORE_RETAIN_MAX_US;
	if (!s->cfg.queue_kib)
		s->cfg.queue_kib = DEFAULT_QUEUE_KIB;
	if (s->cfg.queue_kib < MIN_QUEUE_KIB)
		s->cfg.queue_kib = MIN_QUEUE_KIB;
	s->threaded = s->cfg.writer != STORE_WRITER_INLINE;

	/* SQLite's allocation statistics take a global mutex on every malloc
	 * (~7% of the insert cost); nothing here reads them. This only takes
	 * effect before SQLite is initialised (at the first open of the
	 * process) and returns SQLITE_MISUSE, harmlessly, after. */
	(void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	int rc = sqlite3_open_v2(path, &s->db,
				 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX |
					 SQLITE_OPEN_URI,
				 NULL);
	if (rc != SQLITE_OK)
		FAIL("%s: cannot open database: %s", path, DBMSG);
	if (sqlite3_db_readonly(s->db, "main") == 1)
		FAIL("%s: database is read-only", path);
	if (sqlite3_busy_timeout(s->db, (int)s->cfg.busy_ms) != SQLITE_OK)
		FAIL("%s: busy timeout: %s", path, DBMSG);
	/* A first look, without the write lock (migrate() looks again under
	 * it): the version and the tables of one moment. */
	int64_t tables = 0;
	if (exec_sql(s, "BEGIN") < 0 || schema_state(s, &version, &tables) < 0 ||
	    exec_sql(s, "COMMIT") < 0)
		FAIL("%s: not a database, or unreadable: %s", path, DBMSG);
	if (version > known)
		FAIL("%s: schema version %lld is newer than this egresswatch supports (%d); "
		     "use a newer egresswatch or another database",
		     path, (long long)version, known);
	if (version == 0) {
		/* Without our schema, the file must hold no table either: a
		 * database of something else given by mistake is not written
		 * into (not even switched to WAL). */
		char ps[40];
		if (tables > 0)
			FAIL("%s: not an egresswatch database (it holds %lld other table%s and no "
			     "egresswatch schema); give a new file", path, (long long)tables,
			     tables == 1 ? "" : "s");
		/* before the first page is written, which switching to WAL
		 * does (a no-op if another process wrote it meanwhile) */
		snprintf(ps, sizeof(ps), "PRAGMA page_size = %d", NEW_PAGE_SIZE);
		if (query_retry(s, ps, NULL, NULL, 0) < 0)
			FAIL("%s: page_size: %s", path, DBMSG);
	}
	/* Switching to WAL takes an exclusive lock without waiting (another
	 * process opening the same new database at once holds it a moment):
	 * tried again within the busy timeout. */
	if (query_retry(s, "PRAGMA journal_mode = WAL", NULL, mode, sizeof(mode)) < 0)
		FAIL("%s: journal_mode: %s", path, DBMSG);
	if (strcmp(mode, "wal") != 0)
		FAIL("%s: cannot switch to WAL (journal_mode is '%s')", path, mode);
	/* NORMAL in every mode: WAL syncs at each checkpoint, so the kernel
	 * writes the file back while the run goes on. synchronous=OFF for bulk
	 * loads was no faster: it left ~300 MB dirty for one long fdatasync at
	 * close, and a machine crash could lose the whole database. */
	if (exec_sql(s, "PRAGMA synchronous = NORMAL") < 0)
		FAIL("%s: synchronous: %s", path, DBMSG);
	int64_t page = 0;
	if (query_one(s, "PRAGMA page_size", &page, NULL, 0) < 0 || page < 512)
		FAIL("%s: page_size: %s", path, DBMSG);
	s->ck_frames = (int)(CKPT_BYTES / (uint64_t)page);
	s->ck_frames_max = (int)(CKPT_BYTES_MAX / (uint64_t)page);
	if (sqlite3_wal_autocheckpoint(s->db, s->ck_frames) != SQLITE_OK)
		FAIL("%s: wal_autocheckpoint: %s", path, DBMSG);
	if (s->cfg.bulk) {
		char cs[48];
		snprintf(cs, sizeof(cs), "PRAGMA cache_size = -%d", BULK_CACHE_KIB);
		if (exec_sql(s, cs) < 0)
			FAIL("%s: cache_size: %s", path, DBMSG);
	}
	if (exec_sql(s, "PRAGMA temp_store = MEMORY") < 0)
		FAIL("%s: temp_store: %s", path, DBMSG);
	if (version < known && migrate(s, err, errlen) < 0)
		goto fail;

	const struct {
		const char *sql;
		sqlite3_stmt **stmt;
	} stmt_defs[] = {
		{"BEGIN IMMEDIATE", &s->st_begin},
		{"COMMIT", &s->st_commit},
		{"ROLLBACK", &s->st_rollback},
		{SQL_STAT, &s->st_stat},
		{SQL_ALERT, &s->st_alert},
		{SQL_EVENT_MAX_ID, &s->st_max_id},
		{SQL_ALERT_MAX_ID, &s->st_alert_max_id},
	};
	for (size_t i = 0; i < sizeof(stmt_defs) / sizeof(stmt_defs[0]); i++)
		if (sqlite3_prepare_v3(s->db, stmt_defs[i].sql, -1, SQLITE_PREPARE_PERSISTENT,
				       stmt_defs[i].stmt, NULL) != SQLITE_OK)
			FAIL("%s: prepare \"%.40s...\": %s", path, stmt_defs[i].sql, DBMSG);
	for (unsigned f = 0; f < STORE_FAM_COUNT; f++) {
		if (prepare_event_insert(s, f, 1, &s->st_event[f]) < 0 ||
		    (s->threaded && prepare_event_insert(s, f, EVENT_GROUP, &s->st_event_group[f]) < 0))
			FAIL("%s: prepare insert into %s: %s", path, event_tables[f], DBMSG);
		if (s->threaded && !(s->stage[f].buf = malloc(EVENT_GROUP * QREC_EVENT_MAX)))
			goto oom;
		if (s->cfg.retain_us) {
			char sql[sizeof(SQL_EXPIRE_FMT) + 4 * 16];
			const char *t = event_tables[f];
			snprintf(sql, sizeof(sql), SQL_EXPIRE_FMT, t, t, t, t);
			if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT,
					       &s->st_expire[f], NULL) != SQLITE_OK)
				FAIL("%s: prepare delete from %s: %s", path, t, DBMSG);
		}
	}

	/* this process's alert ids start there, so that alone on the
	 * database each is its row's (alert_row) */
	int64_t max_id = 0;
	if (query_one(s, SQL_ALERT_MAX_ID, &max_id, NULL, 0) < 0)
		FAIL("%s: alerts: %s", path, DBMSG);
	s->next_alert_id = max_id + 1;

	if (s->threaded) {
		if (ring_init(&s->ring, (size_t)s->cfg.queue_kib * 1024u) < 0 ||
		    sync_init(&s->flush_lock, FLUSH_CONDS(s), 1) < 0)
			goto oom;
		s->locks_ready = 1;
		ckpt_start(s);
		rc = pthread_create(&s->thread, NULL, writer_main, s);
		if (rc != 0)
			FAIL("%s: writer thread: %s", path, strerror(rc));
		s->thread_started = 1;
	} else {
		s->scratch = malloc(QREC_MAX);
		if (!s->scratch)
			goto oom;
	}
	*out = s;
	return 0;

oom:
	snprintf(err, errlen, "%s: out of memory", path);
	goto fail;
fail:
	s->cfg.bulk = 0;
	if (s->thread_started) {
		put_simple(s, OP_STOP, 0);
		pthread_join(s->thread, NULL);
	}
	ckpt_stop(s);
	/* the error is already in err; close quietly */
	(void)finalize_all(s);
	sqlite3_close(s->db);
	if (s->locks_ready)
		sync_destroy(&s->flush_lock, FLUSH_CONDS(s), 1);
	ring_destroy(&s->ring);
	pthread_mutex_destroy(&s->err_lock);
	free_stages(s);
	free(s->scratch);
	free(s->path);
	free(s);
	return -1;
}

int store_close(struct store *s)
{
	int rc = 0;
	if (!s)
		return 0;
	if (s->thread_started) {
		put_simple(s, OP_STOP, 0);
		int jrc = pthread_join(s->thread, NULL);
		if (jrc != 0) {
			log_err("store", "%s: writer thread: %s", s->path, strerror(jrc));
			rc = -1;
		}
	}
	/* The writer has stopped: this thread owns the connection now. */
	if (txn_commit(s) < 0)
		rc = -1;
	ckpt_stop(s);

	if (finalize_all(s)) {
		set_err(s, "finalize", 0);
		rc = -1;
	}
	if (exec_sql(s, "PRAGMA wal_checkpoint(TRUNCATE)") < 0) {
		/* A reader may hold the WAL; not an error of the data. */
		log_warn("store", "%s: checkpoint: %s", s->path, sqlite3_errmsg(s->db));
	}
	if (sqlite3_close(s->db) != SQLITE_OK) {
		set_err(s, "close", 0);
		rc = -1;
	}
	s->db = NULL;
	uint64_t errors = atomic_load(&s->n_errors);
	if (errors) {
		log_err("store", "%" PRIu64 " rows could not be written in this run; last: %s",
			errors, s->errmsg);
		rc = -1;
	}
	if (s->locks_ready)
		sync_destroy(&s->flush_lock, FLUSH_CONDS(s), 1);
	ring_destroy(&s->ring);
	pthread_mutex_destroy(&s->err_lock);
	free_stages(s);
	free(s->scratch);
	free(s->path);
	free(s);
	return rc;
}
