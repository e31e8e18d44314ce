/*
 * test_eve.c - api/eve.c (--eve): what a pass writes, against a real
 * database written by sensor/store.c (the inline writer, so each flush is
 * on disk when it returns) and the file read back line by line.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "check.h"
#include "analyzers/module.h"
#include "api/event_json.h"
#include "api/eve.h"
#include "api/query.h"
#include "sensor/pkt.h"
#include "sensor/store.h"

static char dir[256], db_path[300];

/* One DNS query event, numbered i (its name and time). */
static void put_event(struct store *s, unsigned i)
{
	struct pkt p = {0};
	struct obs o = {0};
	char name[64];

	p.ts_us = 1795946465000000ull + i * 1000;
	p.ipv = 4;
	p.proto = 17;
	memcpy(p.src, "\x0a\x63\x00\x0a", 4);
	memcpy(p.dst, "\x0a\x63\x00\x35", 4);
	p.sport = (uint16_t)(40000 + i);
	p.dport = 53;
	snprintf(name, sizeof(name), "q%u.example.com", i);
	o.kind = OBS_DNS_QUERY;
	o.pkt = &p;
	o.name = name;
	o.name_len = strlen(name);
	o.type = 1;
	CHECK_EQ(store_event(s, &o, 0), 0);
}

/* Insert or update alert id with count n. */
static void put_alert(struct store *s, int64_t id, uint64_t n)
{
	const struct store_alert a = {
		.id = id, .class = "dns_tunnel", .severity = 4,
		.first_ts = 1795946465000000ull, .last_ts = 1795946465000000ull + n,
		.count = n, .outcome = "unknown", .proto = 17,
		.src_ip = "10.99.0.10", .dst_ip = "10.99.0.53", .src_port = 40000, .dst_port = 53,
		.subject = "t.example-tunnel.test", .score = 0.9, .rule = "dns_tunnel",
		.summary = "test", .evidence = "a.t.example-tunnel.test",
	};
	CHECK_EQ(store_alert_upsert(s, &a), 0);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *b = NULL;
	size_t cap = 0, n = 0, r;

	*len = 0;
	if (!f)
		return NULL;
	do {
		if (n + 4096 > cap) {
			cap = cap ? cap * 2 : 8192;
			b = realloc(b, cap + 1);
		}
		r = fread(b + n, 1, cap - n, f);
		n += r;
	} while (r > 0);
	fclose(f);
	b[n] = 0;
	*len = n;
	return b;
}

/* The file's lines from line `from` (0-based) into lines[], at most max. */
static int read_lines(const char *path, int from, char lines[][1024], int max)
{
	size_t len;
	char *b = slurp(path, &len), *p, *nl;
	int n = 0, i = 0;

	if (!b)
		return -1;
	for (p = b; (nl = strchr(p, '\n')); p = nl + 1, i++) {
		if (i < from)
			continue;
		if (n < max) {
			size_t l = (size_t)(nl - p);
			if (l >= 1024)
				l = 1023;
			memcpy(lines[n], p, l);
			lines[n][l] = 0;
		}
		n++;
	}
	CHECK(*p == 0); /* every line whole */
	free(b);
	return n;
}

static int row_line(void *arg, json_t *row)
{
	char *out = arg;
	char *s = json_dumps(row, EVENT_JSON_DUMP_FLAGS);
	snprintf(out, 1024, "%s", s ? s : "");
	free(s);
	return 1; /* one row */
}

/* What `events --json` prints for event id. */
static void event_line(struct query *q, int64_t id, char *out)
{
	char err[512];
	struct event_filter f = {.since_id = id - 1, .limit = 1};
	out[0] = 0;
	CHECK_EQ(query_events(q, &f, row_line, out, NULL, err, sizeof(err)), 1);
}

static int64_t line_id(const char *line)
{
	return strncmp(line, "{\"id\":", 6) ? -1 : strtoll(line + 6, NULL, 10);
}

static struct store *open_store(void)
{
	struct store *s = NULL;
	char err[512];
	const struct store_config cfg = {.writer = STORE_WRITER_INLINE};
	CHECK_EQ(store_open(&s, db_path, &cfg, err, sizeof(err)), 0);
	return s;
}

/* replay mode: only what comes after eve_open; events in id order, each
 * the line `events --json` prints; the alerts once, at the end, final. */
static void test_replay_mode(void)
{
	char path[400], err[512], lines[16][1024], want[1024];
	struct store *s = open_store();
	struct eve *e = NULL;
	struct eve_stats st;
	struct query *q = NULL;

	for (unsigned i = 0; i < 3; i++)
		put_event(s, i);
	put_alert(s, store_alert_id(s), 1); /* before: not written */
	CHECK_EQ(store_flush(s), 0);
	snprintf(path, sizeof(path), "%s/replay.json", dir);
	const struct eve_config cfg = {.path = path, .db_path = db_path};
	CHECK_EQ(eve_open(&e, &cfg, err, sizeof(err)), 0);
	if (!e)
		return;
	for (unsigned i = 3; i < 8; i++)
		put_event(s, i);
	int64_t a1 = store_alert_id(s), a2 = store_alert_id(s);
	put_alert(s, a1, 1);
	put_alert(s, a2, 2);
	put_alert(s, a1, 7); /* grows: written once, as it ends */
	CHECK_EQ(store_flush(s), 0);
	CHECK_EQ(eve_finish(e), 0);

	CHECK_EQ(read_lines(path, 0, lines, 16), 7);
	CHECK_EQ(query_open(&q, db_path, err, sizeof(err)), 0);
	for (int i = 0; i < 5; i++) {
		CHECK_EQ(line_id(lines[i]), 4 + i);
		event_line(q, 4 + i, want);
		CHECK_STR(lines[i], want);
	}
	query_close(q);
	CHECK_EQ(line_id(lines[5]), a1);
	CHECK_EQ(line_id(lines[6]), a2);
	CHECK(strstr(lines[5], ",\"kind\":\"alert\",\"class\":\"dns_tunnel\",") ==
	      lines[5] + strlen("{\"id\":2"));
	CHECK(strstr(lines[5], "\"count\":7,") != NULL);
	CHECK(strstr(lines[6], "\"count\":2,") != NULL);
	eve_get_stats(e, &st);
	CHECK_EQ(st.events, 5);
	CHECK_EQ(st.alerts, 2);
	CHECK_EQ(st.errors, 0);
	CHECK_EQ(st.missed, 0);

	/* A second pass writes only what is new. */
	put_event(s, 8);
	CHECK_EQ(store_flush(s), 0);
	CHECK_EQ(eve_finish(e), 0);
	CHECK_EQ(read_lines(path, 7, lines, 16), 1);
	CHECK_EQ(line_id(lines[0]), 9);
	eve_close(e);
	CHECK_EQ(store_close(s), 0);
}

/* live mode: an alert comes again at each pass after it grows, never when
 * it has not; a gap in the ids is counted as missed; SIGHUP's reopen moves
 * to a new file at the same path. */
static void test_live_mode(void)
{
	char path[400], moved[420], err[512], lines[16][1024];
	struct store *s = open_store();
	struct eve *e = NULL;
	struct eve_stats st;

	snprintf(path, sizeof(path), "%s/live.json", dir);
	const struct eve_config cfg = {.path = path, .db_path = db_path, .live = 1};
	CHECK_EQ(eve_open(&e, &cfg, err, sizeof(err)), 0);
	if (!e)
		return;
	int64_t a = store_alert_id(s), first = 0;
	put_event(s, 100);
	put_alert(s, a, 1);
	CHECK_EQ(store_flush(s), 0);
	CHECK_EQ(eve_finish(e), 0);
	CHECK_EQ(read_lines(path, 0, lines, 16), 2);
	first = line_id(lines[0]);
	CHECK(first > 0);
	CHECK(strstr(lines[1], "\"kind\":\"alert\"") && strstr(lines[1], "\"count\":1,"));

	put_alert(s, a, 5);
	CHECK_EQ(store_flush(s), 0);
	CHECK_EQ(eve_finish(e), 0);
	CHECK_EQ(read_lines(path, 2, lines, 16), 1);
	CHECK_EQ(line_id(lines[0]), a);
	CHECK(strstr(lines[0], "\"count\":5,") != NULL);
	CHECK_EQ(eve_finish(e), 0); /* nothing changed: nothing written */
	CHECK_EQ(read_lines(path, 3, lines, 16), 0);

	/* Two events deleted before a pass reached them (what --retain does
	 * to a follower that lags): the gap is counted, the rest written. */
	for (unsigned i = 101; i < 105; i++)
		put_event(s, i);
	CHECK_EQ(store_flush(s), 0);
	sqlite3 *h = NULL;
	char sql[128];
	CHECK_EQ(sqlite3_open(db_path, &h), SQLITE_OK);
	snprintf(sql, sizeof(sql), "DELETE FROM events_dns WHERE id IN (%lld, %lld)",
		 (long long)first + 1, (long long)first + 2);
	CHECK_EQ(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	CHECK_EQ(eve_finish(e), 0);
	CHECK_EQ(read_lines(path, 3, lines, 16), 2);
	CHECK_EQ(line_id(lines[0]), first + 3);
	CHECK_EQ(line_id(lines[1]), first + 4);
	eve_get_stats(e, &st);
	CHECK_EQ(st.missed, 2);

	/* Log rotation: the file is moved away, eve_reopen(), and the next
	 * lines go to a new file by the path; the moved one is left as it was. */
	snprintf(moved, sizeof(moved), "%s.1", path);
	CHECK_EQ(rename(path, moved), 0);
	eve_reopen(e);
	put_event(s, 105);
	CHECK_EQ(store_flush(s), 0);
	CHECK_EQ(eve_finish(e), 0);
	CHECK_EQ(read_lines(path, 0, lines, 16), 1);
	CHECK_EQ(line_id(lines[0]), first + 5);
	CHECK_EQ(read_lines(moved, 0, lines, 16), 5);
	eve_get_stats(e, &st);
	CHECK_EQ(st.reopens, 1);
	CHECK_EQ(st.events, 4);
	CHECK_EQ(st.alerts, 2);
	eve_close(e);
	CHECK_EQ(store_close(s), 0);
}

/* The follower thread writes without being asked, and its last pass at
 * eve_finish() takes what it had not reached. */
static void test_thread(void)
{
	char path[400], err[512], lines[64][1024];
	struct store *s = open_store();
	struct eve *e = NULL;
	int n = 0;

	snprintf(path, sizeof(path), "%s/thread.json", dir);
	const struct eve_config cfg = {.path = path, .db_path = db_path, .live = 1,
				       .interval_ms = 20};
	CHECK_EQ(eve_open(&e, &cfg, err, sizeof(err)), 0);
	if (!e)
		return;
	CHECK_EQ(eve_start(e, err, sizeof(err)), 0);
	for (unsigned i = 200; i < 210; i++)
		put_event(s, i);
	CHECK_EQ(store_flush(s), 0);
	for (int tries = 0; tries < 500 && (n = read_lines(path, 0, lines, 64)) < 10; tries++) {
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	CHECK_EQ(n, 10);
	for (unsigned i = 210; i < 230; i++)
		put_event(s, i);
	CHECK_EQ(store_flush(s), 0);
	CHECK_EQ(eve_finish(e), 0);
	CHECK_EQ(read_lines(path, 0, lines, 64), 30);
	for (int i = 1; i < 30; i++)
		CHECK_EQ(line_id(lines[i]), line_id(lines[0]) + i);
	eve_close(e);
	CHECK_EQ(store_close(s), 0);
}

/* The line number (0-based) of the first line holding needle, or -1; the
 * number of lines into *n. */
static long find_line(const char *path, const char *needle, long *n)
{
	size_t len;
	char *b = slurp(path, &len), *p, *nl;
	long i = 0, at = -1;

	*n = 0;
	if (!b)
		return -1;
	for (p = b; (nl = strchr(p, '\n')); p = nl + 1, i++) {
		*nl = 0;
		if (at < 0 && strstr(p, needle))
			at = i;
	}
	free(b);
	*n = i;
	return at;
}

/* A flood: more events than a pass of the thread reads (10 pages of
 * 10,000). The alert written with them comes after the first pass's
 * 100,000 events, not after all of them, and the next pass follows at once. */
static void test_flood(void)
{
	char path[400], err[512];
	struct store *s = open_store();
	struct eve *e = NULL;
	struct eve_stats st;
	long n = 0, at;

	snprintf(path, sizeof(path), "%s/flood.json", dir);
	const struct eve_config cfg = {.path = path, .db_path = db_path, .live = 1,
				       .interval_ms = 20};
	CHECK_EQ(eve_open(&e, &cfg, err, sizeof(err)), 0);
	if (!e)
		return;
	for (unsigned i = 0; i < 120000; i++)
		put_event(s, 1000 + i);
	put_alert(s, store_alert_id(s), 3);
	CHECK_EQ(store_flush(s), 0);
	CHECK_EQ(eve_start(e, err, sizeof(err)), 0);
	for (int tries = 0; tries < 1000; tries++) {
		eve_get_stats(e, &st);
		if (st.events == 120000 && st.alerts == 1)
			break;
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	CHECK_EQ(st.events, 120000);
	CHECK_EQ(eve_finish(e), 0);
	at = find_line(path, "\"kind\":\"alert\"", &n);
	CHECK_EQ(n, 120001);
	CHECK_EQ(at, 100000);
	eve_close(e);
	CHECK_EQ(store_close(s), 0);
}

/* A pass that cannot read the database (a table renamed away under it)
 * fails, writes nothing and loses nothing: the next one writes it all. */
static void test_read_error(void)
{
	char path[400], err[512], lines[16][1024];
	struct store *s = open_store();
	struct eve *e = NULL;
	sqlite3 *h = NULL;

	snprintf(path, sizeof(path), "%s/readerr.json", dir);
	const struct eve_config cfg = {.path = path, .db_path = db_path, .live = 1};
	CHECK_EQ(eve_open(&e, &cfg, err, sizeof(err)), 0);
	if (!e)
		return;
	put_event(s, 400);
	put_event(s, 401);
	CHECK_EQ(store_flush(s), 0);
	CHECK_EQ(sqlite3_open(db_path, &h), SQLITE_OK);
	CHECK_EQ(sqlite3_exec(h, "ALTER TABLE events_icmp RENAME TO away", NULL, NULL, NULL),
		 SQLITE_OK);
	CHECK_EQ(eve_finish(e), -1);
	CHECK_EQ(read_lines(path, 0, lines, 16), 0);
	CHECK_EQ(sqlite3_exec(h, "ALTER TABLE away RENAME TO events_icmp", NULL, NULL, NULL),
		 SQLITE_OK);
	sqlite3_close(h);
	CHECK_EQ(eve_finish(e), 0);
	CHECK_EQ(read_lines(path, 0, lines, 16), 2);
	CHECK(strstr(lines[0], "q400.example.com") && strstr(lines[1], "q401.example.com"));
	eve_close(e);
	CHECK_EQ(store_close(s), 0);
}

static int collect_id(void *arg, json_t *row)
{
	int64_t *ids = arg;
	ids[++ids[0]] = json_integer_value(json_object_get(row, "id"));
	return ids[0] >= 7;
}

/* query_alerts by_seq (what --eve and since_seq page by): the order of
 * writes, a rewritten alert after those written since it first was; a
 * database from before schema 3 (no seq column) pages by id instead. */
static void test_by_seq(void)
{
	char path[400], err[512];
	struct store *s = NULL;
	struct query *q = NULL;
	const struct store_config cfg = {.writer = STORE_WRITER_INLINE};
	int64_t ids[8], last = -1;
	sqlite3 *h = NULL;

	snprintf(path, sizeof(path), "%s/seq.db", dir);
	CHECK_EQ(store_open(&s, path, &cfg, err, sizeof(err)), 0);
	if (!s)
		return;
	int64_t a1 = store_alert_id(s), a2 = store_alert_id(s);
	put_alert(s, a1, 1);
	put_alert(s, a2, 1);
	put_alert(s, a1, 4);
	CHECK_EQ(store_close(s), 0);

	struct alert_filter f = {.by_seq = 1, .limit = -1};
	CHECK_EQ(query_open(&q, path, err, sizeof(err)), 0);
	ids[0] = 0;
	CHECK_EQ(query_alerts(q, &f, collect_id, ids, &last, err, sizeof(err)), 2);
	CHECK_EQ(ids[1], a2);
	CHECK_EQ(ids[2], a1);
	CHECK_EQ(last, 3); /* the third write */
	f.since_id = 2;
	ids[0] = 0;
	CHECK_EQ(query_alerts(q, &f, collect_id, ids, &last, err, sizeof(err)), 1);
	CHECK_EQ(ids[1], a1);
	query_close(q);

	CHECK_EQ(sqlite3_open(path, &h), SQLITE_OK);
	CHECK_EQ(sqlite3_exec(h, "DROP INDEX alerts_seq; ALTER TABLE alerts DROP COLUMN seq; "
			      "PRAGMA user_version = 2", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	CHECK_EQ(query_open(&q, path, err, sizeof(err)), 0);
	f.since_id = 0;
	ids[0] = 0;
	CHECK_EQ(query_alerts(q, &f, collect_id, ids, &last, err, sizeof(err)), 2);
	CHECK_EQ(ids[1], a1);
	CHECK_EQ(ids[2], a2);
	CHECK_EQ(last, a2);
	query_close(q);
}

/* A file that cannot be written: the lines are counted as lost and
 * eve_finish() says so; a path or database that cannot be opened is
 * refused at open, naming it. */
static void test_errors(void)
{
	char path[400], err[512];
	struct store *s = open_store();
	struct eve *e = NULL;
	struct eve_stats st;

	const struct eve_config full = {.path = "/dev/full", .db_path = db_path};
	CHECK_EQ(eve_open(&e, &full, err, sizeof(err)), 0);
	if (e) {
		put_event(s, 300);
		put_event(s, 301);
		CHECK_EQ(store_flush(s), 0);
		CHECK_EQ(eve_finish(e), -1);
		eve_get_stats(e, &st);
		CHECK_EQ(st.errors, 2);
		CHECK_EQ(st.events, 2); /* rendered; the write failed */
		eve_close(e);
	}
	snprintf(path, sizeof(path), "%s/no/such/dir.json", dir);
	const struct eve_config nodir = {.path = path, .db_path = db_path};
	CHECK_EQ(eve_open(&e, &nodir, err, sizeof(err)), -1);
	CHECK(e == NULL);
	CHECK(strstr(err, path) && strstr(err, strerror(ENOENT)));
	snprintf(path, sizeof(path), "%s/x.json", dir);
	const struct eve_config nodb = {.path = path, .db_path = "/nonexistent/ew.db"};
	CHECK_EQ(eve_open(&e, &nodb, err, sizeof(err)), -1);
	CHECK(strstr(err, "/nonexistent/ew.db") != NULL);
	CHECK(access(path, F_OK) != 0); /* nothing created for a refused run */
	CHECK_EQ(store_close(s), 0);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "%s/ew-eve.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(db_path, sizeof(db_path), "%s/eve.db", dir);
	test_replay_mode();
	test_live_mode();
	test_thread();
	test_flood();
	test_read_error();
	test_by_seq();
	test_errors();
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return check_done();
}
