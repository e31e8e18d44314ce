/*
 * query.c - the read side of the database (query.h): a read-only connection,
 * filtered cursor paging over events and alerts, and the CLI printers.
 *
 * SQL text is never built from data: the event queries are two fixed
 * statements, and the alert query is assembled from fixed fragments chosen
 * by which filters are present; every value is a bound named parameter.
 * Events are stored one table per family (events_dns, events_http, events_tls,
 * events_icmp: schema/002_event_tables.sql). A page of one family is a range
 * of its table's primary key; a page of all events is the UNION ALL of the
 * four ranges, which SQLite merges in id order (no sort: test_store checks the
 * plans). Either costs O(limit) however large the tables are.
 */
#include "query.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "../analyzers/module.h"
#include "../sensor/store.h"
#include "../sensor/text.h"
#include "dns_json.h"
#include "event_json.h"

#define READ_BUSY_MS 2000

struct query {
	sqlite3 *db;
	char *path;
};

#define EVENT_COLS                                                               \
	"id, ts, kind, flow_id, proto, src_ip, src_port, dst_ip, dst_port, name, type, code, " \
	"size, flags, info"
/* a time range: [:from, :to) of packet time, bound to the whole range when
 * none is asked for (a scan, like a host; ids follow packet time within a
 * replay, so a page that starts near the range finds it soon) */
#define TIME_COND " AND ts >= :from AND ts < :to"
#define EVENTS_OF(table) "SELECT " EVENT_COLS " FROM " table " WHERE id > :since" TIME_COND
/* and with a host: the events to or from it (a scan; the tables are keyed by
 * id alone) */
/* :host is the address in its canonical form (query_canon_addr: an
 * IPv4-mapped IPv6 address as its IPv4 one), :hostm its IPv4-mapped IPv6
 * form when it is an IPv4 address (else :host again): an IPv6 packet that
 * carried it so is stored so */
#define HOST_COND                                                                        \
	" AND (src_ip = :host OR dst_ip = :host OR src_ip = :hostm OR dst_ip = :hostm)"
/* and with a name: the name itself or one under it, each with or without a
 * port after it (an HTTP Host header's), ASCII case ignored (LIKE's), a
 * trailing dot on the name (a Host or SNI sent so) ignored; the patterns
 * are made by name_patterns(). An address is under nothing and has no port
 * of that form: an IPv6 one (two colons or more: an ICMPv6 error's quoted
 * destination) matches itself alone, an IPv4 one (digits, dots, a port)
 * itself with or without a port, so 10.99.0.80 is not a name under 0.80. */
#define NAME_X "rtrim(replace(name, '.:', ':'), '.')"
#define NAME_COND                                                                        \
	" AND (" NAME_X " LIKE :n1 ESCAPE '\\' OR (name NOT GLOB '*:*:*' AND ("             \
	NAME_X " LIKE :n3 ESCAPE '\\' OR ((" NAME_X " LIKE :n2 ESCAPE '\\' OR " NAME_X      \
	" LIKE :n4 ESCAPE '\\') AND name GLOB '*[^0-9.:]*'))))"
#define EVENTS_OF_H(table) EVENTS_OF(table) HOST_COND
#define EVENTS_OF_N(table) EVENTS_OF(table) NAME_COND
#define EVENTS_OF_HN(table) EVENTS_OF(table) HOST_COND NAME_COND
#define ALL_OF(OF)                                                                       \
	OF("events_dns") " UNION ALL " OF("events_http") " UNION ALL " OF("events_tls")    \
		" UNION ALL " OF("events_icmp") " ORDER BY id LIMIT :limit"
/* [host + 2 * name][0]: every kind; by enum store_family + 1; :k1 and :k2
 * are the family's kinds (a row of another kind, which no build writes, is
 * only listed with every kind) */
#define FAMILY_OF(OF, table) OF(table) " AND kind IN (:k1, :k2) ORDER BY id LIMIT :limit"
#define EVENTS_ROW(OF)                                                                   \
	{ALL_OF(OF), FAMILY_OF(OF, "events_dns"), FAMILY_OF(OF, "events_http"),              \
	 FAMILY_OF(OF, "events_tls"), FAMILY_OF(OF, "events_icmp")}
static const char *const SQL_EVENTS[4][1 + STORE_FAM_COUNT] = {
	EVENTS_ROW(EVENTS_OF), EVENTS_ROW(EVENTS_OF_H), EVENTS_ROW(EVENTS_OF_N),
	EVENTS_ROW(EVENTS_OF_HN),
};
/* Schema 1 (one events table, its events_kind index), which a read-only
 * connection cannot migrate: read until a writer opens the database. They
 * also read a newer schema, through its `events` view (slowly), should the
 * database be migrated between the version check and the query.
 * [host][kind given]. */
#define V1_ALL(COND)                                                                     \
	"SELECT " EVENT_COLS " FROM events WHERE id > :since" TIME_COND COND                \
	" ORDER BY id LIMIT :limit"
#define V1_KIND(COND)                                                                    \
	"SELECT " EVENT_COLS " FROM events WHERE kind = :k1 AND id > :since" TIME_COND COND \
	" UNION ALL "                                                                      \
	"SELECT " EVENT_COLS " FROM events WHERE kind = :k2 AND id > :since" TIME_COND COND \
	" ORDER BY id LIMIT :limit"
static const char *const SQL_EVENTS_V1[4][2] = {
	{V1_ALL(""), V1_KIND("")},
	{V1_ALL(HOST_COND), V1_KIND(HOST_COND)},
	{V1_ALL(NAME_COND), V1_KIND(NAME_COND)},
	{V1_ALL(HOST_COND NAME_COND), V1_KIND(HOST_COND NAME_COND)},
};

#define ALERT_COLS                                                               \
	"id, class, severity, first_ts, last_ts, count, outcome, proto, src_ip, src_port, " \
	"dst_ip, dst_port, subject, score, rule, summary, evidence"
static const char SQL_ALERTS_BASE[] = "SELECT " ALERT_COLS " FROM alerts WHERE id > :since";
static const char SQL_ALERTS_CLASS[] = " AND class = :class";
static const char SQL_ALERTS_SEV[] = " AND severity >= :sev";
static const char SQL_ALERTS_SRC[] = " AND src_ip = :src";
/* an alert is in a time range when its first and last hits straddle any of it */
static const char SQL_ALERTS_TIME[] = " AND last_ts >= :from AND first_ts < :to";
static const char SQL_ALERTS_TAIL[] = " ORDER BY id LIMIT :limit";
static const char SQL_ALERT_ONE[] = "SELECT " ALERT_COLS " FROM alerts WHERE id = :id";
/* by write sequence (alert_filter.by_seq): schema 3 has one; before it, ids
 * stand in */
static const char SQL_ALERTS_SEQ_BASE[] =
	"SELECT " ALERT_COLS ", seq FROM alerts WHERE seq > :since";
static const char SQL_ALERTS_SEQ_TAIL[] = " ORDER BY seq LIMIT :limit";
static const char SQL_ALERTS_SEQ_BASE_V2[] =
	"SELECT " ALERT_COLS ", id AS seq FROM alerts WHERE id > :since";
#define ALERT_COL_SEQ 17
static const char SQL_ALERT_MAX_SEQ[] = "SELECT coalesce(max(seq), 0) FROM alerts";
static const char SQL_EVENT_MAX_ID_V2[] =
	"SELECT max(coalesce((SELECT max(id) FROM events_dns), 0), "
	"coalesce((SELECT max(id) FROM events_http), 0), "
	"coalesce((SELECT max(id) FROM events_tls), 0), "
	"coalesce((SELECT max(id) FROM events_icmp), 0))";

static const struct {
	const char *name;
	int lo, hi;
} kind_families[] = {
	{"dns", OBS_DNS_QUERY, OBS_DNS_ANSWER},
	{"http", OBS_HTTP_REQUEST, OBS_HTTP_RESPONSE},
	{"tls", OBS_TLS_CLIENT_HELLO, OBS_TLS_SERVER_HELLO},
	{"icmp", OBS_ICMP, OBS_ICMP},
};

int query_kind_range(const char *kind, int *lo, int *hi)
{
	for (size_t i = 0; kind && i < sizeof(kind_families) / sizeof(kind_families[0]); i++)
		if (strcmp(kind, kind_families[i].name) == 0) {
			*lo = kind_families[i].lo;
			*hi = kind_families[i].hi;
			return 0;
		}
	return -1;
}

int query_severity_level(const char *s)
{
	if (!s)
		return -1;
	for (int i = 1; i <= 5; i++)
		if (strcmp(s, event_severity_name(i)) == 0)
			return i;
	if (s[0] >= '1' && s[0] <= '5' && s[1] == '\0')
		return s[0] - '0';
	return -1;
}

/* ---- open and close -------------------------------------------------- */

static int one_int(sqlite3 *db, const char *sql, int64_t *out)
{
	sqlite3_stmt *st = NULL;
	int rc = -1;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		goto out;
	if (sqlite3_step(st) == SQLITE_ROW) {
		*out = sqlite3_column_int64(st, 0);
		rc = 0;
	}
out:
	if (sqlite3_finalize(st) != SQLITE_OK)
		rc = -1;
	return rc;
}

/* Open db_path read-only into *db and read its schema version; with
 * immutable, as the URI file:PATH?immutable=1 (SQLite then takes no lock
 * and wants no -shm: for a file nothing writes). Returns SQLITE_OK or the
 * failing call's extended result code (*db open either way, or NULL). */
static int open_version(const char *db_path, int immutable, sqlite3 **db, int64_t *version)
{
	char uri[3 * 4096 + 32];
	const char *name = db_path;
	int flags = SQLITE_OPEN_READONLY;

	*db = NULL;
	if (immutable) {
		/* the path percent-encoded, but for the characters a URI path
		 * keeps as they are */
		static const char keep[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					   "0123456789-._~/";
		size_t n = (size_t)snprintf(uri, sizeof(uri), "file:");
		for (const unsigned char *c = (const unsigned char *)db_path; *c; c++) {
			if (n + 16 >= sizeof(uri))
				return SQLITE_CANTOPEN;
			if (strchr(keep, *c))
				uri[n++] = (char)*c;
			else
				n += (size_t)snprintf(uri + n, sizeof(uri) - n, "%%%02X", *c);
		}
		snprintf(uri + n, sizeof(uri) - n, "?immutable=1");
		name = uri;
		flags |= SQLITE_OPEN_URI;
	}
	int rc = sqlite3_open_v2(name, db, flags, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_busy_timeout(*db, READ_BUSY_MS);
	if (rc == SQLITE_OK && one_int(*db, "PRAGMA user_version", version) < 0)
		rc = sqlite3_extended_errcode(*db);
	if (rc == SQLITE_OK && !*db)
		rc = SQLITE_NOMEM;
	return rc;
}

int query_open(struct query **out, const char *db_path, char *err, size_t errlen)
{
	struct query *q;
	struct stat sb;
	int64_t version = 0;

	*out = NULL;
	if (!db_path) {
		snprintf(err, errlen, "query: no database path");
		return -1;
	}
	if (stat(db_path, &sb) < 0) {
		snprintf(err, errlen, "%s: %s", db_path, strerror(errno));
		return -1;
	}
	q = calloc(1, sizeof(*q));
	if (!q || !(q->path = strdup(db_path))) {
		snprintf(err, errlen, "%s: out of memory", db_path);
		goto fail;
	}
	int rc = open_version(db_path, 0, &q->db, &version);
	if ((rc & 0xff) == SQLITE_CANTOPEN || (rc & 0xff) == SQLITE_READONLY) {
		/*
		 * A database in WAL mode is read through its -shm file, which
		 * a read-only directory or mount (an evidence copy) does not
		 * let SQLite make. When there is no -wal file either, the
		 * database was closed cleanly and its file holds every
		 * committed row, and nothing can be writing it (a writer
		 * would have made the -wal; an empty one holds nothing):
		 * read it as immutable.
		 */
		char wal[4200];
		struct stat wb;
		snprintf(wal, sizeof(wal), "%s-wal", db_path);
		if (stat(wal, &wb) == 0 && wb.st_size > 0) {
			snprintf(err, errlen,
				 "%s: cannot read: SQLite cannot make the database's -shm file "
				 "(a read-only directory or mount?), and its -wal file holds rows "
				 "not yet in the database: copy the database with its -wal and "
				 "-shm files to writable storage",
				 db_path);
			goto fail;
		}
		int64_t v2 = 0;
		sqlite3 *db2 = NULL;
		int rc2 = open_version(db_path, 1, &db2, &v2);
		if (rc2 == SQLITE_OK) {
			sqlite3_close(q->db);
			q->db = db2;
			version = v2;
			rc = SQLITE_OK;
		} else {
			sqlite3_close(db2);
		}
	}
	if (rc != SQLITE_OK) {
		const char *msg = q->db ? sqlite3_errmsg(q->db) : sqlite3_errstr(rc);
		if ((rc & 0xff) == SQLITE_NOTADB)
			snprintf(err, errlen, "%s: not a database: %s", db_path, msg);
		else if ((rc & 0xff) == SQLITE_CANTOPEN || (rc & 0xff) == SQLITE_READONLY ||
			 (rc & 0xff) == SQLITE_PERM || (rc & 0xff) == SQLITE_IOERR)
			snprintf(err, errlen, "%s: cannot read the database: %s", db_path, msg);
		else
			snprintf(err, errlen, "%s: not a database, or unreadable: %s", db_path, msg);
		goto fail;
	}
	if (version == 0) {
		snprintf(err, errlen, "%s: not an egresswatch database (no schema)", db_path);
		goto fail;
	}
	if (version > store_schema_version()) {
		snprintf(err, errlen,
			 "%s: schema version %lld is newer than this egresswatch supports (%d)",
			 db_path, (long long)version, store_schema_version());
		goto fail;
	}
	*out = q;
	return 0;
fail:
	query_close(q);
	return -1;
}

void query_close(struct query *q)
{
	if (!q)
		return;
	sqlite3_close(q->db); /* no statement outlives a call */
	free(q->path);
	free(q);
}

/* ---- binding --------------------------------------------------------- */

static int bind_i64(sqlite3_stmt *st, const char *name, int64_t v)
{
	int i = sqlite3_bind_parameter_index(st, name);
	return i ? sqlite3_bind_int64(st, i, v) : SQLITE_RANGE;
}

static int bind_text(sqlite3_stmt *st, const char *name, const char *v)
{
	int i = sqlite3_bind_parameter_index(st, name);
	return i ? sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT) : SQLITE_RANGE;
}

static const char *col_text(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

/* ---- rows --------------------------------------------------------------- */

/* Read the current row of st and hand it to the callback in cb; *id gets
 * the row's id. */
typedef int row_step_fn(sqlite3_stmt *st, void *cb, int64_t *id);

/*
 * Step st to the end, calling step() on each row, and finalize it (st is
 * always consumed). Returns the rows handed over, or -1 with a message
 * naming the database and `what` in err. A callback returning > 0 stops
 * early (not an error); < 0 is an error.
 */
static int64_t run_rows(struct query *q, sqlite3_stmt *st, const char *what, row_step_fn *step,
			void *cb, int64_t *last_id, char *err, size_t errlen)
{
	int64_t n = 0, id = 0;
	int rc, frc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		frc = step(st, cb, &id);
		n++;
		if (last_id)
			*last_id = id;
		if (frc < 0) {
			snprintf(err, errlen, "%s: %s: out of memory or output error", q->path, what);
			n = -1;
			goto out;
		}
		if (frc > 0)
			goto out;
	}
	if (rc != SQLITE_DONE) {
		snprintf(err, errlen, "%s: %s: %s", q->path, what, sqlite3_errmsg(q->db));
		n = -1;
	}
out:
	if (sqlite3_finalize(st) != SQLITE_OK && n >= 0) {
		snprintf(err, errlen, "%s: %s: %s", q->path, what, sqlite3_errmsg(q->db));
		n = -1;
	}
	return n;
}

/* ---- events ----------------------------------------------------------- */

typedef int event_row_fn(void *arg, const struct event_row *r);

static void read_event(sqlite3_stmt *st, struct event_row *r)
{
	r->id = sqlite3_column_int64(st, 0);
	r->ts = (uint64_t)sqlite3_column_int64(st, 1);
	r->kind = sqlite3_column_int(st, 2);
	r->flow_id = sqlite3_column_int64(st, 3);
	r->proto = sqlite3_column_int(st, 4);
	r->src_ip = col_text(st, 5);
	r->src_port = sqlite3_column_int(st, 6);
	r->dst_ip = col_text(st, 7);
	r->dst_port = sqlite3_column_int(st, 8);
	r->name = col_text(st, 9);
	r->type = sqlite3_column_int(st, 10);
	r->code = sqlite3_column_int(st, 11);
	r->size = sqlite3_column_int64(st, 12);
	r->flags = (unsigned)sqlite3_column_int64(st, 13);
	r->info = col_text(st, 14);
	r->info_len = r->info ? (size_t)sqlite3_column_bytes(st, 14) : 0;
}

struct event_cb {
	event_row_fn *fn;
	void *arg;
};

static int step_event(sqlite3_stmt *st, void *cb, int64_t *id)
{
	const struct event_cb *c = cb;
	struct event_row r;
	read_event(st, &r);
	*id = r.id;
	return c->fn(c->arg, &r);
}

const char *query_events_sql(const char *kind, int host, int name)
{
	int lo = 0, hi = 0, fam, by = (host != 0) + 2 * (name != 0);

	if (!kind)
		return SQL_EVENTS[by][0];
	if (query_kind_range(kind, &lo, &hi) < 0 || (fam = store_kind_family(lo)) < 0)
		return NULL;
	return SQL_EVENTS[by][1 + fam];
}

int query_canon_name(const char *text, char *buf, size_t len)
{
	size_t n;

	if (!strncmp(text, "*.", 2))
		text += 2;
	n = strlen(text);
	if (n && text[n - 1] == '.')
		n--; /* the root's dot: names are stored without it */
	if (n == 0 || n > QUERY_NAME_MAX || n >= len || memchr(text, '.', n) == text)
		return -1;
	for (size_t i = 0; i < n; i++) /* a control byte is shown as \xNN, never itself */
		if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
			return -1;
	memcpy(buf, text, n);
	buf[n] = '\0';
	return 0;
}

/* The four LIKE patterns of NAME_COND for name (query_canon_name's): the
 * name, one under it, and each with a port; LIKE's % and _, and the escape
 * itself, taken literally. An address has nothing under it (0.80 is not a
 * parent of 10.99.0.80): the name itself, with or without a port. */
static int name_patterns(sqlite3_stmt *st, const char *name)
{
	char lit[2 * QUERY_NAME_MAX + 1], pat[2 * QUERY_NAME_MAX + 8];
	unsigned char addr[16];
	size_t k = 0;
	int brc = SQLITE_OK;
	int literal = inet_pton(AF_INET, name, addr) == 1 || inet_pton(AF_INET6, name, addr) == 1;

	for (const char *c = name; *c && k + 2 < sizeof(lit); c++) {
		if (*c == '%' || *c == '_' || *c == '\\')
			lit[k++] = '\\';
		lit[k++] = *c;
	}
	lit[k] = '\0';
	static const char *const form[4][3] = {
		{":n1", "", ""}, {":n2", "%.", ""}, {":n3", "", ":%"}, {":n4", "%.", ":%"},
	};
	for (int i = 0; i < 4; i++) {
		snprintf(pat, sizeof(pat), "%s%s%s", literal ? "" : form[i][1], lit, form[i][2]);
		brc |= bind_text(st, form[i][0], pat);
	}
	return brc;
}

int query_canon_addr(const char *text, char *buf, size_t len)
{
	static const unsigned char v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	unsigned char a[16];
	int af = strchr(text, ':') ? AF_INET6 : AF_INET;

	if (inet_pton(af, text, a) != 1)
		return -1;
	/* ::ffff:a.b.c.d is the IPv4 address a.b.c.d (as Zeek reads it) */
	if (af == AF_INET6 && !memcmp(a, v4mapped, sizeof(v4mapped))) {
		memmove(a, a + 12, 4);
		af = AF_INET;
	}
	if (!inet_ntop(af, a, buf, (socklen_t)len))
		return -1;
	return 0;
}

static int64_t iter_events(struct query *q, const struct event_filter *f, event_row_fn *fn,
			   void *arg, int64_t *last_id, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int lo = 0, hi = 0, brc = SQLITE_OK;
	int64_t n = -1, since = f ? f->since_id : 0, limit = f ? f->limit : -1;
	const char *kind = f ? f->kind : NULL;

	if (last_id)
		*last_id = since;
	if (kind && query_kind_range(kind, &lo, &hi) < 0) {
		snprintf(err, errlen, "%s: unknown event kind '%s' (want dns, http, tls or icmp)",
			 q->path, kind);
		return -1;
	}
	int64_t version = 0;
	if (one_int(q->db, "PRAGMA user_version", &version) < 0) {
		snprintf(err, errlen, "%s: events: %s", q->path, sqlite3_errmsg(q->db));
		return -1;
	}
	const char *host = f ? f->host : NULL, *name = f ? f->name : NULL;
	const char *sql = version >= 2 ? query_events_sql(kind, host != NULL, name != NULL)
				       : SQL_EVENTS_V1[(host != NULL) + 2 * (name != NULL)][kind != NULL];
	if (sqlite3_prepare_v2(q->db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: events: %s", q->path, sqlite3_errmsg(q->db));
		goto out;
	}
	brc |= bind_i64(st, ":since", since);
	brc |= bind_i64(st, ":limit", limit < 0 ? -1 : limit);
	if (kind) {
		brc |= bind_i64(st, ":k1", lo);
		brc |= bind_i64(st, ":k2", hi != lo ? hi : 0); /* no kind 0: one branch */
	}
	if (host) {
		char mapped[80];
		brc |= bind_text(st, ":host", host);
		if (!strchr(host, ':') && strlen(host) < 64)
			snprintf(mapped, sizeof(mapped), "::ffff:%s", host);
		else
			snprintf(mapped, sizeof(mapped), "%s", host);
		brc |= bind_text(st, ":hostm", mapped);
	}
	if (name)
		brc |= name_patterns(st, name);
	brc |= bind_i64(st, ":from", f && f->timed ? f->from_us : INT64_MIN);
	brc |= bind_i64(st, ":to", f && f->timed ? f->to_us : INT64_MAX);
	if (brc != SQLITE_OK) {
		snprintf(err, errlen, "%s: events: bind: %s", q->path, sqlite3_errmsg(q->db));
		goto out;
	}
	struct event_cb cb = {fn, arg};
	n = run_rows(q, st, "events", step_event, &cb, last_id, err, errlen);
	st = NULL;
out:
	if (st)
		sqlite3_finalize(st);
	return n;
}

struct json_cb {
	query_row_fn *fn;
	void *arg;
};

static int event_to_json(void *arg, const struct event_row *r)
{
	struct json_cb *c = arg;
	json_t *o = event_json_new(r);
	if (!o)
		return -1;
	int rc = c->fn(c->arg, o);
	json_decref(o);
	return rc ? 1 : 0;
}

int64_t query_events(struct query *q, const struct event_filter *f, query_row_fn *fn, void *arg,
		     int64_t *last_id, char *err, size_t errlen)
{
	struct json_cb c = {fn, arg};
	return iter_events(q, f, event_to_json, &c, last_id, err, errlen);
}

/* ---- alerts ----------------------------------------------------------- */

typedef int alert_row_fn(void *arg, const struct alert_row *r);

static void read_alert(sqlite3_stmt *st, struct alert_row *r)
{
	r->id = sqlite3_column_int64(st, 0);
	r->class_name = col_text(st, 1);
	r->severity = sqlite3_column_int(st, 2);
	r->first_ts = (uint64_t)sqlite3_column_int64(st, 3);
	r->last_ts = (uint64_t)sqlite3_column_int64(st, 4);
	r->count = sqlite3_column_int64(st, 5);
	r->outcome = col_text(st, 6);
	r->proto = sqlite3_column_int(st, 7);
	r->src_ip = col_text(st, 8);
	r->src_port = sqlite3_column_type(st, 9) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 9);
	r->dst_ip = col_text(st, 10);
	r->dst_port = sqlite3_column_type(st, 11) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 11);
	r->subject = col_text(st, 12);
	r->has_score = sqlite3_column_type(st, 13) != SQLITE_NULL;
	r->score = sqlite3_column_double(st, 13);
	r->rule = col_text(st, 14);
	r->summary = col_text(st, 15);
	r->evidence = col_text(st, 16);
	r->evidence_len = r->evidence ? (size_t)sqlite3_column_bytes(st, 16) : 0;
	r->cursor = sqlite3_column_count(st) > ALERT_COL_SEQ ? sqlite3_column_int64(st, ALERT_COL_SEQ)
							     : r->id;
}

struct alert_cb {
	alert_row_fn *fn;
	void *arg;
};

static int step_alert(sqlite3_stmt *st, void *cb, int64_t *id)
{
	const struct alert_cb *c = cb;
	struct alert_row r;
	read_alert(st, &r);
	*id = r.cursor;
	return c->fn(c->arg, &r);
}

static int64_t iter_alerts(struct query *q, const struct alert_filter *f, alert_row_fn *fn,
			   void *arg, int64_t *last_id, char *err, size_t errlen)
{
	char sql[sizeof(SQL_ALERTS_SEQ_BASE_V2) + sizeof(SQL_ALERTS_CLASS) + sizeof(SQL_ALERTS_SEV) +
		 sizeof(SQL_ALERTS_SRC) + sizeof(SQL_ALERTS_TIME) + sizeof(SQL_ALERTS_SEQ_TAIL)];
	sqlite3_stmt *st = NULL;
	int sev = 0, brc = SQLITE_OK;
	int64_t n = -1, since = f ? f->since_id : 0, limit = f ? f->limit : -1;

	if (last_id)
		*last_id = since;
	if (f && f->severity && (sev = query_severity_level(f->severity)) < 0) {
		snprintf(err, errlen,
			 "%s: unknown severity '%s' (want info, low, medium, high or critical)",
			 q->path, f->severity);
		return -1;
	}
	int64_t version = 3;
	int by_seq = f && f->by_seq;
	if (by_seq && one_int(q->db, "PRAGMA user_version", &version) < 0) {
		snprintf(err, errlen, "%s: alerts: %s", q->path, sqlite3_errmsg(q->db));
		return -1;
	}
	/* Fixed fragments only; the values are bound below. */
	strcpy(sql, !by_seq ? SQL_ALERTS_BASE : version >= 3 ? SQL_ALERTS_SEQ_BASE
							     : SQL_ALERTS_SEQ_BASE_V2);
	if (f && f->class_name)
		strcat(sql, SQL_ALERTS_CLASS);
	if (sev)
		strcat(sql, SQL_ALERTS_SEV);
	if (f && f->src)
		strcat(sql, SQL_ALERTS_SRC);
	if (f && f->timed)
		strcat(sql, SQL_ALERTS_TIME);
	strcat(sql, by_seq && version >= 3 ? SQL_ALERTS_SEQ_TAIL : SQL_ALERTS_TAIL);

	if (sqlite3_prepare_v2(q->db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: alerts: %s", q->path, sqlite3_errmsg(q->db));
		goto out;
	}
	brc |= bind_i64(st, ":since", since);
	brc |= bind_i64(st, ":limit", limit < 0 ? -1 : limit);
	if (f && f->class_name)
		brc |= bind_text(st, ":class", f->class_name);
	if (sev)
		brc |= bind_i64(st, ":sev", sev);
	if (f && f->src)
		brc |= bind_text(st, ":src", f->src);
	if (f && f->timed) {
		brc |= bind_i64(st, ":from", f->from_us);
		brc |= bind_i64(st, ":to", f->to_us);
	}
	if (brc != SQLITE_OK) {
		snprintf(err, errlen, "%s: alerts: bind: %s", q->path, sqlite3_errmsg(q->db));
		goto out;
	}
	struct alert_cb cb = {fn, arg};
	n = run_rows(q, st, "alerts", step_alert, &cb, last_id, err, errlen);
	st = NULL;
out:
	if (st)
		sqlite3_finalize(st);
	return n;
}

static int alert_to_json(void *arg, const struct alert_row *r)
{
	struct json_cb *c = arg;
	json_t *o = alert_json_new(r);
	if (!o)
		return -1;
	int rc = c->fn(c->arg, o);
	json_decref(o);
	return rc ? 1 : 0;
}

int64_t query_alerts(struct query *q, const struct alert_filter *f, query_row_fn *fn, void *arg,
		     int64_t *last_id, char *err, size_t errlen)
{
	struct json_cb c = {fn, arg};
	return iter_alerts(q, f, alert_to_json, &c, last_id, err, errlen);
}

struct cursor_cb {
	query_cursor_fn *fn;
	void *arg;
};

static int alert_to_json_cursor(void *arg, const struct alert_row *r)
{
	struct cursor_cb *c = arg;
	json_t *o = alert_json_new(r);
	if (!o)
		return -1;
	int rc = c->fn(c->arg, o, r->cursor);
	json_decref(o);
	return rc ? 1 : 0;
}

int64_t query_alerts_cursor(struct query *q, const struct alert_filter *f, query_cursor_fn *fn,
			    void *arg, int64_t *last_id, char *err, size_t errlen)
{
	struct cursor_cb c = {fn, arg};
	return iter_alerts(q, f, alert_to_json_cursor, &c, last_id, err, errlen);
}

int query_alert_get(struct query *q, int64_t id, json_t **out, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc = -1, src;

	*out = NULL;
	if (sqlite3_prepare_v2(q->db, SQL_ALERT_ONE, -1, &st, NULL) != SQLITE_OK ||
	    bind_i64(st, ":id", id) != SQLITE_OK) {
		snprintf(err, errlen, "%s: alert: %s", q->path, sqlite3_errmsg(q->db));
		goto out;
	}
	src = sqlite3_step(st);
	if (src == SQLITE_ROW) {
		struct alert_row r;
		read_alert(st, &r);
		*out = alert_json_new(&r);
		if (*out)
			rc = 0;
		else
			snprintf(err, errlen, "%s: alert: out of memory", q->path);
	} else if (src == SQLITE_DONE) {
		rc = 1;
	} else {
		snprintf(err, errlen, "%s: alert: %s", q->path, sqlite3_errmsg(q->db));
	}
out:
	if (sqlite3_finalize(st) != SQLITE_OK && rc >= 0) {
		snprintf(err, errlen, "%s: alert: %s", q->path, sqlite3_errmsg(q->db));
		json_decref(*out);
		*out = NULL;
		rc = -1;
	}
	return rc;
}

/* ---- stats and counts (the API) ----------------------------------------- */

static const char SQL_STATS[] = "SELECT name, value FROM stats ORDER BY name";
static const char SQL_ALERT_COUNTS[] =
	"SELECT class, severity, count(*) FROM alerts GROUP BY class, severity ORDER BY class, severity";
static const char SQL_ALERT_MAX[] = "SELECT coalesce(max(id), 0) FROM alerts";

int64_t query_stats(struct query *q, query_stat_fn *fn, void *arg, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int64_t n = -1;
	int rc;

	if (sqlite3_prepare_v2(q->db, SQL_STATS, -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: stats: %s", q->path, sqlite3_errmsg(q->db));
		goto out;
	}
	n = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = col_text(st, 0);
		if (!name)
			continue;
		n++;
		if (fn(arg, name, sqlite3_column_int64(st, 1)))
			goto out;
	}
	if (rc != SQLITE_DONE) {
		snprintf(err, errlen, "%s: stats: %s", q->path, sqlite3_errmsg(q->db));
		n = -1;
	}
out:
	if (sqlite3_finalize(st) != SQLITE_OK && n >= 0) {
		snprintf(err, errlen, "%s: stats: %s", q->path, sqlite3_errmsg(q->db));
		n = -1;
	}
	return n;
}

int64_t query_alert_counts(struct query *q, query_count_fn *fn, void *arg, char *err,
			   size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int64_t n = -1;
	int rc;

	if (sqlite3_prepare_v2(q->db, SQL_ALERT_COUNTS, -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: alert counts: %s", q->path, sqlite3_errmsg(q->db));
		goto out;
	}
	n = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *cls = col_text(st, 0);
		if (!cls)
			continue;
		n++;
		if (fn(arg, cls, sqlite3_column_int(st, 1), sqlite3_column_int64(st, 2)))
			goto out;
	}
	if (rc != SQLITE_DONE) {
		snprintf(err, errlen, "%s: alert counts: %s", q->path, sqlite3_errmsg(q->db));
		n = -1;
	}
out:
	if (sqlite3_finalize(st) != SQLITE_OK && n >= 0) {
		snprintf(err, errlen, "%s: alert counts: %s", q->path, sqlite3_errmsg(q->db));
		n = -1;
	}
	return n;
}

int query_alert_max_id(struct query *q, int64_t *out, char *err, size_t errlen)
{
	*out = 0;
	if (one_int(q->db, SQL_ALERT_MAX, out) < 0) {
		snprintf(err, errlen, "%s: alerts: %s", q->path, sqlite3_errmsg(q->db));
		return -1;
	}
	return 0;
}

int query_marks(struct query *q, struct query_marks *m, char *err, size_t errlen)
{
	int64_t version = 0;

	memset(m, 0, sizeof(*m));
	if (one_int(q->db, "PRAGMA user_version", &version) < 0 ||
	    one_int(q->db, version >= 2 ? SQL_EVENT_MAX_ID_V2 : "SELECT coalesce(max(id), 0) FROM events",
		    &m->event_id) < 0 ||
	    one_int(q->db, SQL_ALERT_MAX, &m->alert_id) < 0 ||
	    (version >= 3 && one_int(q->db, SQL_ALERT_MAX_SEQ, &m->alert_seq) < 0)) {
		snprintf(err, errlen, "%s: %s", q->path, sqlite3_errmsg(q->db));
		return -1;
	}
	return 0;
}

/* ---- printing (the CLI) ------------------------------------------------ */

/* "addr:port", "[v6]:port", or "addr" when there is no port. */
static void endpoint(char *buf, size_t cap, const char *ip, int port)
{
	if (!ip || !*ip)
		ip = "-";
	if (port <= 0)
		snprintf(buf, cap, "%s", ip);
	else if (strchr(ip, ':'))
		snprintf(buf, cap, "[%s]:%d", ip, port);
	else
		snprintf(buf, cap, "%s:%d", ip, port);
}

struct printer {
	FILE *out;
	int json;
	char *buf; /* a JSON line, reused from row to row */
	size_t cap;
	/* progress on stderr (a TTY) while out is a file or a pipe */
	const char *what;
	int64_t since, end; /* the listing runs over ids (since, end] */
	uint64_t rows;
	int drawn;
	int werr; /* errno of the first failed write to out, or 0 */
};

/* A write to p->out returned ok (false: it failed, errno set): keep the
 * first failure's errno for the message (print_rows). Returns 0 or -1. */
static int wrote(struct printer *p, int ok)
{
	if (ok)
		return 0;
	if (!p->werr)
		p->werr = errno ? errno : EIO;
	return -1;
}

#define PROGRESS_ROWS 50000 /* rows between two progress lines (~0.4 s of --json) */

/* After each row (id): every PROGRESS_ROWS rows, "events: 1200000 written, 45%"
 * on stderr, the percentage by id over the range the listing started with. */
static void progress_row(struct printer *p, int64_t id)
{
	if (!p->what || ++p->rows % PROGRESS_ROWS)
		return;
	int pct = 100;
	if (p->end > p->since && id < p->end)
		pct = (int)((id - p->since) * 100 / (p->end - p->since));
	fprintf(stderr, "\r%s: %llu written, %d%% ", p->what, (unsigned long long)p->rows, pct);
	fflush(stderr);
	p->drawn = 1;
}

/* Write o as one line (event_json_line) and drop it. */
static int dump_line(struct printer *p, json_t *o)
{
	size_t n = event_json_line(o, &p->buf, &p->cap);

	json_decref(o);
	if (n == 0)
		return -1;
	errno = 0;
	return wrote(p, fwrite(p->buf, 1, n, p->out) == n);
}

/* A string member of a JSON object, or "" */
static const char *jstr(const json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));
	return v ? v : "";
}

/*
 * The table's last column for an HTTP, TLS or ICMP event, from the fields
 * its JSON object has (every string there is escaped text, printable
 * ASCII, so nothing from a packet can drive the terminal):
 *   GET /index.html HTTP/1.1        200 OK HTTP/1.1
 *   client TLS 1.3 alpn h2          server TLS 1.3 cipher 0x1302
 *   echo-request id 24324 seq 1, 56 bytes
 * A request line too long for the column is cut, with "..." at the cut.
 */
static void table_detail(const struct event_row *r, char *buf, size_t len)
{
	json_t *o = event_json_new(r);
	const json_t *k = NULL;
	int n = -1;

	buf[0] = '\0';
	if (o && r->kind >= OBS_HTTP_REQUEST && r->kind <= OBS_HTTP_RESPONSE)
		k = json_object_get(o, "http");
	else if (o && r->kind >= OBS_TLS_CLIENT_HELLO && r->kind <= OBS_TLS_SERVER_HELLO)
		k = json_object_get(o, "tls");
	else if (o && r->kind == OBS_ICMP)
		k = json_object_get(o, "icmp");
	if (!json_is_object(k)) {
		snprintf(buf, len, "type=%d code=%d", r->type, r->code);
		json_decref(o);
		return;
	}
	if (r->kind >= OBS_HTTP_REQUEST && r->kind <= OBS_HTTP_RESPONSE &&
	    !json_object_get(k, r->kind == OBS_HTTP_REQUEST ? "method" : "status")) {
		/* a head too damaged to read its first line: "malformed" follows */
		n = snprintf(buf, len, "%s", r->kind == OBS_HTTP_REQUEST ? "request" : "response");
	} else if (r->kind == OBS_HTTP_REQUEST) {
		n = snprintf(buf, len, "%s %s %s", jstr(k, "method"), jstr(k, "uri"),
			     jstr(k, "version"));
		if (n >= 0 && (size_t)n >= len && len > 4) /* the target was cut */
			memcpy(buf + len - 4, "...", 4);
	} else if (r->kind == OBS_HTTP_RESPONSE) {
		n = snprintf(buf, len, "%lld %s %s",
			     (long long)json_integer_value(json_object_get(k, "status")),
			     jstr(k, "reason"), jstr(k, "version"));
	} else if (r->kind == OBS_TLS_CLIENT_HELLO || r->kind == OBS_TLS_SERVER_HELLO) {
		const json_t *alpn = json_object_get(k, "alpn");
		const char *first = json_string_value(json_array_get(alpn, 0));
		if (r->kind == OBS_TLS_SERVER_HELLO)
			n = snprintf(buf, len, "server %s cipher %s", jstr(k, "version"),
				     jstr(k, "cipher"));
		else
			n = snprintf(buf, len, "client %s%s%s%s",
				     strcmp(jstr(k, "transport"), "quic") ? "" : "QUIC ",
				     jstr(k, "version"), first ? " alpn " : "", first ? first : "");
	} else {
		const char *name = jstr(k, "name");
		long long code = json_integer_value(json_object_get(k, "code"));
		const json_t *q = json_object_get(k, "quoted");
		if (*name)
			n = snprintf(buf, len, code ? "%s code %lld" : "%s", name, code);
		else
			n = snprintf(buf, len, "type %lld code %lld",
				     (long long)json_integer_value(json_object_get(k, "type")), code);
		if (json_object_get(k, "seq") && n >= 0 && (size_t)n < len)
			n += snprintf(buf + n, len - (size_t)n, " id %lld seq %lld",
				      (long long)json_integer_value(json_object_get(k, "id")),
				      (long long)json_integer_value(json_object_get(k, "seq")));
		if (json_is_object(q) && n >= 0 && (size_t)n < len) /* what an error quotes */
			n += snprintf(buf + n, len - (size_t)n, " for %s %s:%lld -> %s:%lld",
				      jstr(q, "proto"), jstr(q, "src_ip"),
				      (long long)json_integer_value(json_object_get(q, "src_port")),
				      jstr(q, "dst_ip"),
				      (long long)json_integer_value(json_object_get(q, "dst_port")));
		if (n >= 0 && (size_t)n < len)
			snprintf(buf + n, len - (size_t)n, ", %lld bytes",
				 (long long)json_integer_value(json_object_get(k, "payload_len")));
	}
	json_decref(o);
}

/* A DNS response's answers after its type/rcode (n bytes of buf), type and
 * data as tshark's summary line gives them: " A 192.0.2.10 A 192.0.2.11",
 * a CNAME's target before the address; TXT strings quoted as dig shows them
 * (tshark gives none). Each
 * datum is cut at TABLE_DATA_MAX characters with "...", and the answers
 * that do not fit in TABLE_ANSWERS_MAX are counted: " (+3)". */
#define TABLE_DATA_MAX 40
#define TABLE_ANSWERS_MAX 100
static void table_answers(const struct event_row *r, char *buf, size_t len, int n)
{
	if (n < 0 || (size_t)n + 32 >= len || !r->info || !*r->info)
		return;
	json_t *o = event_json_new(r);
	const json_t *ans = json_object_get(json_object_get(o, "dns"), "answers");
	size_t used = (size_t)n, count = json_array_size(ans), k;
	/* room for the answers, and the count of those left out after them */
	size_t cap = (size_t)n + TABLE_ANSWERS_MAX;
	if (cap > len - 16)
		cap = len - 16;

	for (k = 0; k < count; k++) {
		const json_t *a = json_array_get(ans, k), *d = json_object_get(a, "data");
		char datum[TABLE_DATA_MAX + 8] = "", one[TABLE_DATA_MAX + 40];
		size_t dl = 0;
		if (json_is_array(d)) { /* TXT: its strings, quoted as dig shows them */
			for (size_t j = 0; j < json_array_size(d) && dl + 2 < sizeof(datum); j++) {
				const char *t = json_string_value(json_array_get(d, j));
				if (j)
					datum[dl++] = ' ';
				datum[dl++] = '"';
				for (; t && *t && dl + 2 < sizeof(datum); t++) {
					if (*t == '"')
						datum[dl++] = '\\';
					datum[dl++] = *t;
				}
				if (dl + 1 < sizeof(datum))
					datum[dl++] = '"';
			}
			datum[dl < sizeof(datum) ? dl : sizeof(datum) - 1] = '\0';
		} else {
			dl = (size_t)snprintf(datum, sizeof(datum), "%s",
					      json_string_value(d) ? json_string_value(d) : "");
		}
		if (dl > TABLE_DATA_MAX)
			memcpy(datum + TABLE_DATA_MAX - 3, "...", 4);
		int w = snprintf(one, sizeof(one), " %s %s", jstr(a, "type"), datum);
		if (w < 0 || used + (size_t)w > cap)
			break;
		memcpy(buf + used, one, (size_t)w + 1);
		used += (size_t)w;
	}
	if (k < count)
		snprintf(buf + used, len - used, " (+%zu)", count - k);
	json_decref(o);
}

static int print_event(void *arg, const struct event_row *r)
{
	struct printer *p = arg;
	char ts[40], src[80], dst[80], tc[160], pbuf[16];
	const char *kind = event_kind_name(r->kind);

	progress_row(p, r->id);
	if (p->json) {
		json_t *o = event_json_new(r);
		return o ? dump_line(p, o) : -1;
	}
	text_time(ts, sizeof(ts), r->ts);
	endpoint(src, sizeof(src), r->src_ip, r->src_port);
	endpoint(dst, sizeof(dst), r->dst_ip, r->dst_port);
	if (r->kind == OBS_DNS_QUERY || r->kind == OBS_DNS_ANSWER) {
		char tn[DNS_MNEMONIC_MAX], cn[DNS_MNEMONIC_MAX];
		const char *t = dns_type_str((unsigned)r->type, tn, sizeof(tn));
		const char *c = dns_rcode_str((unsigned)r->code, cn, sizeof(cn));
		/* no question (a zone transfer's later messages): no type */
		int noq = r->type == 0 && (!r->name || !*r->name);
		if (r->kind == OBS_DNS_QUERY)
			snprintf(tc, sizeof(tc), "%s", noq ? "-" : t);
		else
			table_answers(r, tc, sizeof(tc),
				      noq ? snprintf(tc, sizeof(tc), "%s", c)
					  : snprintf(tc, sizeof(tc), "%s/%s", t, c));
	} else {
		table_detail(r, tc, sizeof(tc));
	}
	errno = 0;
	return wrote(p, fprintf(p->out, "%s %-4s %-6s %s -> %s  %s  %s%s\n", ts, kind ? kind : "?",
				event_proto_name(r->proto, pbuf, sizeof(pbuf)), src, dst,
				r->name && *r->name ? r->name : "-", tc,
				(r->flags & OBS_F_MALFORMED) ? " malformed" : "") >= 0);
}

static int print_alert(void *arg, const struct alert_row *r)
{
	struct printer *p = arg;
	char ts[40], src[80], dst[80];
	const char *sev = event_severity_name(r->severity);

	progress_row(p, r->id);
	if (p->json) {
		json_t *o = alert_json_new(r);
		return o ? dump_line(p, o) : -1;
	}
	text_time(ts, sizeof(ts), r->first_ts);
	endpoint(src, sizeof(src), r->src_ip, r->src_port);
	endpoint(dst, sizeof(dst), r->dst_ip, r->dst_port);
	errno = 0;
	return wrote(p, fprintf(p->out, "%s %-8s %-18s %s -> %s  %s  count=%lld %s\n", ts,
				sev ? sev : "?", r->class_name ? r->class_name : "-", src, dst,
				r->subject ? r->subject : "-", (long long)r->count,
				r->outcome ? r->outcome : "unknown") >= 0);
}

/* The highest id of the listing's table(s) now (0 when empty or unknown). */
static int64_t listing_end(struct query *q, int events)
{
	struct query_marks m;
	char err[8];

	if (query_marks(q, &m, err, sizeof(err)) < 0)
		return 0;
	return events ? m.event_id : m.alert_id;
}

/* Open db_path, list rows through iter (iter_events or iter_alerts with
 * their printer), flush, and report any failure on stderr naming the file.
 * When stderr is a terminal and out is not (an export), a progress line
 * goes to stderr every PROGRESS_ROWS rows and is erased at the end. */
static int print_rows(const char *db_path, const char *what, FILE *out, int json,
		     int64_t (*iter)(struct query *q, const void *f, struct printer *p,
				     char *err, size_t errlen),
		     const void *f, int64_t since)
{
	char err[512];
	struct query *q = NULL;
	struct printer p = {.out = out, .json = json, .since = since};
	int rc = -1;

	if (query_open(&q, db_path, err, sizeof(err)) < 0)
		goto out;
	if (isatty(STDERR_FILENO) && !isatty(fileno(out))) {
		p.what = what;
		p.end = listing_end(q, !strcmp(what, "events"));
	}
	if (iter(q, f, &p, err, sizeof(err)) < 0)
		goto out;
	errno = 0;
	if (wrote(&p, fflush(out) != EOF && !ferror(out)) < 0)
		goto out;
	rc = 0;
out:
	/* A failed write is the output's, not the database's: named so
	 * ("egresswatch events: stdout: No space left on device"). */
	if (rc < 0 && p.werr)
		snprintf(err, sizeof(err), "%s: %s", out == stdout ? "stdout" : "output",
			 strerror(p.werr));
	if (p.drawn)
		fputs("\r\033[K", stderr);
	if (rc < 0)
		fprintf(stderr, "egresswatch %s: %s\n", what, err);
	query_close(q);
	free(p.buf);
	return rc;
}

static int64_t iter_print_events(struct query *q, const void *f, struct printer *p, char *err,
				 size_t errlen)
{
	return iter_events(q, f, print_event, p, NULL, err, errlen);
}

static int64_t iter_print_alerts(struct query *q, const void *f, struct printer *p, char *err,
				 size_t errlen)
{
	return iter_alerts(q, f, print_alert, p, NULL, err, errlen);
}

int query_print_events(const char *db_path, const struct event_filter *f, FILE *out, int json)
{
	return print_rows(db_path, "events", out, json, iter_print_events, f, f ? f->since_id : 0);
}

int query_print_alerts(const char *db_path, const struct alert_filter *f, FILE *out, int json)
{
	return print_rows(db_path, "alerts", out, json, iter_print_alerts, f, f ? f->since_id : 0);
}
