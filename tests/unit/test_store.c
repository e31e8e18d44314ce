/*
 * test_store.c - sensor/store.c (the writer), api/query.c (the read side)
 * and api/event_json.c, against real SQLite files in a temporary directory;
 * then a throughput measurement (printed, not asserted).
 *
 * EW_STORE_BENCH_ROWS sets the rows of the measurement (default 1000000,
 * 0 to skip it); EW_STORE_BENCH_ONLY=LABEL runs one of them.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "check.h"
#include "analyzers/module.h"
#include "api/event_json.h"
#include "api/query.h"
#include "sensor/schema.h"
#include "sensor/store.h"

static char dir[256];

static void path_in(char *buf, size_t cap, const char *name)
{
	snprintf(buf, cap, "%s/%s", dir, name);
}

static void remove_db(const char *path)
{
	char p[528]; /* path (< 512) + "-wal" */
	unlink(path);
	snprintf(p, sizeof(p), "%s-wal", path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", path);
	unlink(p);
}

static int64_t sql_int(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int64_t v = -1;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

/* A fake packet and observation. */
struct fake {
	struct pkt p;
	struct obs o;
	char name[64];
	char info[128];
};

static void fake_make(struct fake *f, uint64_t i, enum obs_kind kind)
{
	memset(f, 0, sizeof(*f));
	f->p.ts_us = 1795946465861204ull + i * 10; /* 2026-11-29T10:01:05.861204Z */
	f->p.ipv = 4;
	f->p.proto = kind == OBS_ICMP ? 1 : (kind <= OBS_DNS_ANSWER ? 17 : 6);
	f->p.src[0] = 10, f->p.src[1] = 99, f->p.src[2] = 0, f->p.src[3] = 10;
	f->p.dst[0] = 10, f->p.dst[1] = 99, f->p.dst[2] = 0, f->p.dst[3] = 53;
	f->p.sport = kind == OBS_ICMP ? 0 : (uint16_t)(40000 + i % 20000);
	f->p.dport = kind == OBS_ICMP ? 0 : (kind <= OBS_DNS_ANSWER ? 53 : 443);
	snprintf(f->name, sizeof(f->name), "h%llu.example.com", (unsigned long long)i);
	snprintf(f->info, sizeof(f->info),
		 "4660\x1fresponse\x1f" "0\x1f" "0\x1frd,ra\x1f" "1\x1f" "1\x1f" "0\x1f" "0\x1f"
		 "\x1f\x1f\x1fudp\x1f\x1e"
		 "Q\x1f" "example.com\x1f" "1\x1f" "1\x1e"
		 "AN\x1f" "example.com\x1f" "1\x1f" "1\x1f" "300\x1f" "93.184.216.34\x1e");
	f->o.kind = kind;
	f->o.pkt = &f->p;
	f->o.name = kind == OBS_ICMP ? NULL : f->name;
	f->o.name_len = kind == OBS_ICMP ? 0 : strlen(f->name);
	f->o.type = kind == OBS_ICMP ? 8 : 1;
	f->o.code = 0;
	f->o.size = 56;
	f->o.info = f->info;
	f->o.info_len = strlen(f->info);
}

static enum obs_kind kind_of(uint64_t i)
{
	return (enum obs_kind)(1 + i % 7);
}

static void test_open_migrate(void)
{
	char db[512], err[512];
	struct store *s = NULL;

	path_in(db, sizeof(db), "open.db");
	CHECK(store_schema_version() >= 1);
	CHECK_EQ(store_open(&s, db, NULL, err, sizeof(err)), 0);
	CHECK(s != NULL);
	CHECK_EQ(store_close(s), 0);
	CHECK_EQ(sql_int(db, "PRAGMA user_version"), store_schema_version());
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM sqlite_master WHERE name IN "
			     "('events', 'alerts', 'stats')"),
		 3);
	/* Events: a table per family, the view, and no index to keep up. */
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
			     "('events_dns', 'events_http', 'events_tls', 'events_icmp')"),
		 4);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'view' AND "
			     "name = 'events'"),
		 1);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND "
			     "tbl_name LIKE 'events%'"),
		 0);
	/* WAL is persistent in the file. */
	{
		sqlite3 *h = NULL;
		sqlite3_stmt *st = NULL;
		const unsigned char *mode = NULL;
		sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL);
		if (sqlite3_prepare_v2(h, "PRAGMA journal_mode", -1, &st, NULL) == SQLITE_OK &&
		    sqlite3_step(st) == SQLITE_ROW)
			mode = sqlite3_column_text(st, 0);
		CHECK_STR((const char *)mode, "wal");
		sqlite3_finalize(st);
		sqlite3_close(h);
	}

	/* Reopening is idempotent: nothing re-applied, data kept. */
	struct fake f;
	fake_make(&f, 1, OBS_DNS_QUERY);
	CHECK_EQ(store_open(&s, db, NULL, err, sizeof(err)), 0);
	CHECK_EQ(store_event(s, &f.o, 7), 0);
	CHECK_EQ(store_close(s), 0);
	CHECK_EQ(store_open(&s, db, NULL, err, sizeof(err)), 0);
	CHECK_EQ(store_close(s), 0);
	CHECK_EQ(sql_int(db, "PRAGMA user_version"), store_schema_version());
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events"), 1);
	CHECK_EQ(sql_int(db, "SELECT flow_id FROM events_dns"), 7);
	CHECK_EQ(store_close(NULL), 0);
	remove_db(db);
}

/* Collect ids from query callbacks. */
struct ids {
	int64_t v[4096];
	int n;
	int kinds_ok;
	const char *want_kind;
	char first[2048];
};

static int collect(void *arg, json_t *row)
{
	struct ids *c = arg;
	json_t *id = json_object_get(row, "id");
	const char *kind = json_string_value(json_object_get(row, "kind"));
	if (c->n == 0) {
		char *d = json_dumps(row, EVENT_JSON_DUMP_FLAGS);
		snprintf(c->first, sizeof(c->first), "%s", d ? d : "");
		free(d);
	}
	if (c->n < 4096)
		c->v[c->n++] = json_integer_value(id);
	if (c->want_kind && (!kind || strcmp(kind, c->want_kind) != 0))
		c->kinds_ok = 0;
	return 0;
}

static int exec_ok(sqlite3 *h, const char *sql)
{
	char *msg = NULL;
	int rc = sqlite3_exec(h, sql, NULL, NULL, &msg);
	if (rc != SQLITE_OK)
		fprintf(stderr, "%s: %s\n", sql, msg ? msg : "?");
	sqlite3_free(msg);
	return rc;
}

/* Every row of the query as JSON lines, into a growing buffer. */
struct dump {
	char *buf;
	size_t len;
};

static int dump_row(void *arg, json_t *row)
{
	struct dump *d = arg;
	char *line = json_dumps(row, EVENT_JSON_DUMP_FLAGS);
	size_t n = line ? strlen(line) : 0;
	char *nb = realloc(d->buf, d->len + n + 2);
	if (nb) {
		d->buf = nb;
		memcpy(d->buf + d->len, line ? line : "", n);
		d->len += n;
		d->buf[d->len++] = '\n';
		d->buf[d->len] = '\0';
	}
	free(line);
	return 0;
}

/* The events of every family filter, then of all (kind NULL), then a page,
 * as the read side gives them: one string. */
static char *dump_events(const char *db)
{
	static const char *const kinds[] = {"dns", "http", "tls", "icmp", NULL};
	struct dump d = {NULL, 0};
	struct query *q = NULL;
	char err[512];

	CHECK_EQ(query_open(&q, db, err, sizeof(err)), 0);
	for (size_t k = 0; q && k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct event_filter f = {.kind = kinds[k], .since_id = 0, .limit = -1};
		CHECK(query_events(q, &f, dump_row, &d, NULL, err, sizeof(err)) > 0);
	}
	struct event_filter page = {.kind = "dns", .since_id = 30, .limit = 3};
	CHECK_EQ(query_events(q, &page, dump_row, &d, NULL, err, sizeof(err)), 3);
	query_close(q);
	return d.buf;
}

/*
 * A database of schema 1 (one events table, the events_kind index) moves to
 * the family tables of 002 with its rows and their ids, a kind no build ever
 * wrote included; new events are numbered after the old ones. The read side
 * gives the same answers before (reading schema 1, as `serve` may before a
 * writer opens the database) and after.
 */
static void test_migrate_v1(void)
{
	char db[512], err[512], sql[512];
	struct store *s = NULL;
	struct query *q = NULL;
	struct fake f;
	sqlite3 *h = NULL;
	int64_t per_family[STORE_FAM_COUNT] = {0};

	path_in(db, sizeof(db), "v1.db");
	remove_db(db);
	CHECK_EQ(sqlite3_open(db, &h), SQLITE_OK);
	CHECK_EQ(exec_ok(h, schema_migrations[0].sql), SQLITE_OK);
	CHECK_EQ(exec_ok(h, "PRAGMA user_version = 1"), SQLITE_OK);
	/* rows 1..71: kinds 1..7 in turn, then a kind 9; row 5 deleted */
	for (int i = 0; i <= 70; i++) {
		int kind = i < 70 ? 1 + i % 7 : 9;
		snprintf(sql, sizeof(sql),
			 "INSERT INTO events(ts, kind, proto, src_ip, src_port, dst_ip, dst_port, "
			 "name, flags) VALUES(%d, %d, 17, '10.0.0.1', %d, '10.0.0.2', 53, 'n%d', 0)",
			 1000 + i, kind, 1000 + i, i);
		CHECK_EQ(exec_ok(h, sql), SQLITE_OK);
		if (i != 4 && store_kind_family(kind) >= 0)
			per_family[store_kind_family(kind)]++;
	}
	CHECK_EQ(exec_ok(h, "DELETE FROM events WHERE id = 5"), SQLITE_OK);
	sqlite3_close(h);
	char *before = dump_events(db);

	CHECK_EQ(store_open(&s, db, NULL, err, sizeof(err)), 0);
	fake_make(&f, 1, OBS_DNS_QUERY);
	CHECK_EQ(store_event(s, &f.o, 0), 0);
	CHECK_EQ(store_close(s), 0);

	CHECK_EQ(sql_int(db, "PRAGMA user_version"), store_schema_version());
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'events_kind'"), 0);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events"), 71);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events WHERE id <= 71 AND id != 5 AND "
			     "name = 'n' || (id - 1) AND ts = 999 + id AND src_port = ts"),
		 70);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events_dns WHERE id <= 71"),
		 per_family[STORE_FAM_DNS]);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events_http WHERE kind IN (3, 4)"),
		 per_family[STORE_FAM_HTTP]);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events_tls WHERE kind IN (5, 6)"),
		 per_family[STORE_FAM_TLS]);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events_icmp WHERE kind = 7"),
		 per_family[STORE_FAM_ICMP]);
	CHECK_EQ(sql_int(db, "SELECT id FROM events_icmp WHERE kind = 9"), 71);
	CHECK_EQ(sql_int(db, "SELECT id FROM events_dns WHERE id > 71"), 72);

	/* the read side, less the new event */
	CHECK_EQ(sqlite3_open(db, &h), SQLITE_OK);
	CHECK_EQ(exec_ok(h, "DELETE FROM events_dns WHERE id = 72"), SQLITE_OK);
	sqlite3_close(h);
	char *after = dump_events(db);
	CHECK(before != NULL && after != NULL && strstr(before, "\"kind\":\"tls\"") != NULL);
	CHECK_STR(after, before);
	free(before);
	free(after);

	/* the read side pages through a migrated family as through a new one */
	CHECK_EQ(query_open(&q, db, err, sizeof(err)), 0);
	{
		static struct ids c;
		struct event_filter ef = {.kind = "tls", .since_id = 0, .limit = -1};
		int64_t last = 0;
		memset(&c, 0, sizeof(c));
		CHECK_EQ(query_events(q, &ef, collect, &c, &last, err, sizeof(err)),
			 per_family[STORE_FAM_TLS]);
		CHECK_EQ(last, sql_int(db, "SELECT max(id) FROM events_tls"));
	}
	query_close(q);
	remove_db(db);
}

/*
 * Every page query is a range of primary keys, merged in id order when it
 * spans the families: no sort and no scan, so a page costs O(limit).
 */
static void test_query_plans(void)
{
	char db[512], err[512], sql[8192];
	struct store *s = NULL;
	sqlite3 *h = NULL;
	const char *kinds[] = {NULL, "dns", "http", "tls", "icmp"};

	path_in(db, sizeof(db), "plans.db");
	remove_db(db);
	CHECK_EQ(store_open(&s, db, NULL, err, sizeof(err)), 0);
	CHECK_EQ(store_close(s), 0);
	CHECK(query_events_sql("nosuch", 0, 0) == NULL);
	CHECK_EQ(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	/* with a host or a name too: a range of ids, the address and the name
	 * filters on it */
	const size_t nk = sizeof(kinds) / sizeof(kinds[0]);
	for (size_t k = 0; k < 4 * nk; k++) {
		sqlite3_stmt *st = NULL;
		int ranges = 0, bad = 0, host = (k / nk) & 1, name = (int)(k / nk) >> 1;
		const char *kind = kinds[k % nk];
		CHECK(query_events_sql(kind, host, name) != NULL);
		CHECK((size_t)snprintf(sql, sizeof(sql), "EXPLAIN QUERY PLAN %s",
				       query_events_sql(kind, host, name)) < sizeof(sql));
		CHECK_EQ(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
		while (st && sqlite3_step(st) == SQLITE_ROW) {
			const char *d = (const char *)sqlite3_column_text(st, 3);
			if (!d)
				continue;
			if (strstr(d, "USING INTEGER PRIMARY KEY (rowid>?)"))
				ranges++;
			else if (strstr(d, "TEMP B-TREE") || strncmp(d, "SCAN", 4) == 0) {
				fprintf(stderr, "plan of %s: %s\n", kind ? kind : "all", d);
				bad++;
			}
		}
		sqlite3_finalize(st);
		CHECK_EQ(ranges, kind ? 1 : STORE_FAM_COUNT);
		CHECK_EQ(bad, 0);
	}
	sqlite3_close(h);
	remove_db(db);
}

/*
 * The events table's last column for a DNS response: its type/rcode, then
 * its answers as tshark's summary gives them, those that do not fit in
 * the column counted ("(+5)"), and nothing after the rcode for a response
 * without answers.
 */
static void test_table_answers(void)
{
	char db[512], err[512], out[512], line[1024];
	struct store *s = NULL;
	struct fake f;
	char info[2048];
	size_t k;

	path_in(db, sizeof(db), "table.db");
	path_in(out, sizeof(out), "table.txt");
	remove_db(db);
	CHECK_EQ(store_open(&s, db, NULL, err, sizeof(err)), 0);
	/* 12 answers: A 192.0.2.1 .. A 192.0.2.12 */
	k = (size_t)snprintf(info, sizeof(info),
			     "4660\x1fresponse\x1f" "0\x1f" "0\x1frd,ra\x1f" "1\x1f" "12\x1f"
			     "0\x1f" "0\x1f\x1f\x1f\x1fudp\x1f\x1eQ\x1fmany.example.test\x1f"
			     "1\x1f" "1\x1e");
	for (int i = 1; i <= 12; i++)
		k += (size_t)snprintf(info + k, sizeof(info) - k,
				      "AN\x1fmany.example.test\x1f" "1\x1f" "1\x1f" "300\x1f"
				      "192.0.2.%d\x1e", i);
	fake_make(&f, 1, OBS_DNS_ANSWER);
	f.o.info = info;
	f.o.info_len = k;
	CHECK_EQ(store_event(s, &f.o, 1), 0);
	/* an NXDOMAIN: no answers */
	fake_make(&f, 2, OBS_DNS_ANSWER);
	snprintf(f.info, sizeof(f.info), "4661\x1fresponse\x1f" "0\x1f" "3\x1frd,ra\x1f" "1\x1f"
		 "0\x1f" "0\x1f" "0\x1f\x1f\x1f\x1fudp\x1f\x1eQ\x1fnope.example.test\x1f"
		 "1\x1f" "1\x1e");
	f.o.info_len = strlen(f.info);
	f.o.code = 3;
	CHECK_EQ(store_event(s, &f.o, 2), 0);
	CHECK_EQ(store_close(s), 0);

	FILE *o = fopen(out, "w");
	CHECK(o != NULL);
	if (!o)
		return;
	struct event_filter flt = {.limit = -1};
	CHECK_EQ(query_print_events(db, &flt, o, 0), 0);
	fclose(o);
	o = fopen(out, "r");
	CHECK(o && fgets(line, sizeof(line), o));
	line[strcspn(line, "\n")] = '\0';
	const char *col = strstr(line, "A/NOERROR");
	CHECK(col != NULL);
	if (col) {
		int shown = 0, more = -1;
		const char *p = col + strlen("A/NOERROR");
		char want[32];
		while (snprintf(want, sizeof(want), " A 192.0.2.%d", shown + 1) > 0 &&
		       !strncmp(p, want, strlen(want))) {
			p += strlen(want);
			shown++;
		}
		CHECK(sscanf(p, " (+%d)", &more) == 1);
		CHECK(shown >= 4);
		CHECK_EQ(shown + more, 12);
		CHECK(strlen(col) <= strlen("A/NOERROR") + 100 + strlen(" (+12)"));
		if (shown + more != 12)
			fprintf(stderr, "table line: %s\n", line);
	}
	CHECK(o && fgets(line, sizeof(line), o));
	line[strcspn(line, "\n")] = '\0';
	CHECK(strlen(line) > 11 && !strcmp(line + strlen(line) - 11, " A/NXDOMAIN"));
	if (o)
		fclose(o);
	unlink(out);
	remove_db(db);
}

/*
 * events --name / ?name=: the name itself or one under it (at a dot), with
 * or without a port after it, ASCII case ignored; LIKE's % and _ and its
 * escape are literal, and a name that merely ends the same is not one under
 * it. Through both schemas' statements (2: the family tables; 1: the one
 * table, which a read-only connection still reads).
 */
static void test_name_filter(void)
{
	static const struct {
		const char *name;
		enum obs_kind kind;
	} rows[] = {
		{"example.com", OBS_DNS_QUERY},           /* 1 */
		{"a.b.EXAMPLE.com", OBS_DNS_ANSWER},      /* 2 */
		{"xexample.com", OBS_DNS_QUERY},          /* 3: not under it */
		{"example.com:8080", OBS_HTTP_REQUEST},   /* 4 */
		{"www.example.com:443", OBS_HTTP_REQUEST},/* 5 */
		{"example.com.evil.test", OBS_TLS_CLIENT_HELLO}, /* 6 */
		{"ex%mple.com", OBS_DNS_QUERY},           /* 7 */
		{"exa_ple.com", OBS_DNS_QUERY},           /* 8 */
		{"b\\x41.test", OBS_DNS_QUERY},           /* 9: b\x41.test as shown */
		{"bA.test", OBS_DNS_QUERY},               /* 10 */
		{"", OBS_TLS_CLIENT_HELLO},                      /* 11 */
		{"10.99.0.80", OBS_HTTP_REQUEST},         /* 12 */
		{"10.99.0.80:8080", OBS_HTTP_REQUEST},    /* 13 */
		{"Evil.test.", OBS_TLS_CLIENT_HELLO},     /* 14: a trailing dot as sent */
		{"www.evil.test.:8080", OBS_HTTP_REQUEST},/* 15 */
		{"fd00:99::80", OBS_TLS_CLIENT_HELLO},                /* 16: an ICMPv6 error's quote */
		{"2001:db8::1:5", OBS_TLS_CLIENT_HELLO},              /* 17 */
		{"::ffff:10.0.0.1", OBS_TLS_CLIENT_HELLO},            /* 18 */
	};
	static const struct {
		const char *filter;
		const char *want; /* the ids, as a list */
	} cases[] = {
		{"example.com", "1 2 4 5"},
		{"EXAMPLE.COM.", "1 2 4 5"},
		{"*.example.com", "1 2 4 5"},
		{"b.example.com", "2"},
		{"com", "1 2 3 4 5 7 8"},
		{"ex%mple.com", "7"},
		{"exa_ple.com", "8"},
		{"b\\x41.test", "9"},
		{"test", "6 9 10 14 15"},
		{"example", ""},
		{"10.99.0.80", "12 13"},
		{"0.80", ""},      /* an address is under nothing */
		{"99.0.80", ""},
		{"evil.test", "6 14 15"},
		{"fd00", ""},      /* nor has an IPv6 address a port */
		{"fd00:99", ""},
		{"fd00:99::80", "16"},
		{"2001:db8::1", ""},
		{"0.0.1", ""},
		{"::ffff:10.0.0.1", "18"},
	};
	char db[512], err[512], got[256];
	struct store *s = NULL;
	struct query *q = NULL;
	const size_t nrows = sizeof(rows) / sizeof(rows[0]);

	path_in(db, sizeof(db), "names.db");
	remove_db(db);
	CHECK_EQ(store_open(&s, db, NULL, err, sizeof(err)), 0);
	for (size_t i = 0; s && i < nrows; i++) {
		struct fake f;
		fake_make(&f, i, rows[i].kind);
		snprintf(f.name, sizeof(f.name), "%s", rows[i].name);
		f.o.name_len = strlen(f.name);
		CHECK_EQ(store_event(s, &f.o, i + 1), 0);
	}
	CHECK_EQ(store_close(s), 0);
	for (int schema = 2; schema >= 1; schema--) {
		if (schema == 1) { /* the same rows in schema 1's one table */
			sqlite3 *h = NULL;
			CHECK_EQ(sqlite3_open(db, &h), SQLITE_OK);
			CHECK_EQ(exec_ok(h, "CREATE TABLE e1 AS SELECT * FROM events; "
					 "DROP VIEW events; DROP TABLE events_dns; "
					 "DROP TABLE events_http; DROP TABLE events_tls; "
					 "DROP TABLE events_icmp; ALTER TABLE e1 RENAME TO events; "
					 "PRAGMA user_version = 1"), SQLITE_OK);
			sqlite3_close(h);
		}
		CHECK_EQ(query_open(&q, db, err, sizeof(err)), 0);
		for (size_t k = 0; q && k < sizeof(cases) / sizeof(cases[0]); k++) {
			char canon[QUERY_NAME_MAX + 1];
			static struct ids c;
			memset(&c, 0, sizeof(c));
			CHECK_EQ(query_canon_name(cases[k].filter, canon, sizeof(canon)), 0);
			struct event_filter f = {.name = canon, .limit = -1};
			CHECK(query_events(q, &f, collect, &c, NULL, err, sizeof(err)) >= 0);
			got[0] = '\0';
			for (int j = 0; j < c.n; j++)
				snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%lld",
					 j ? " " : "", (long long)c.v[j]);
			if (strcmp(got, cases[k].want) != 0)
				fprintf(stderr, "schema %d, name %s: got \"%s\"\n", schema,
					cases[k].filter, got);
			CHECK_STR(got, cases[k].want);
		}
		/* with a kind and a host as well */
		{
			static struct ids c;
			memset(&c, 0, sizeof(c));
			struct event_filter f = {.kind = "http", .host = "10.99.0.53",
						 .name = "example.com", .limit = -1};
			CHECK_EQ(query_events(q, &f, collect, &c, NULL, err, sizeof(err)), 2);
			f.host = "10.99.0.54";
			CHECK_EQ(query_events(q, &f, collect, &c, NULL, err, sizeof(err)), 0);
		}
		query_close(q);
		q = NULL;
	}
	/* what the filter refuses */
	char canon[QUERY_NAME_MAX + 1], longer[QUERY_NAME_MAX + 2];
	memset(longer, 'a', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	CHECK_EQ(query_canon_name("", canon, sizeof(canon)), -1);
	CHECK_EQ(query_canon_name(".", canon, sizeof(canon)), -1);
	CHECK_EQ(query_canon_name("*.", canon, sizeof(canon)), -1);
	CHECK_EQ(query_canon_name(".example.com", canon, sizeof(canon)), -1);
	CHECK_EQ(query_canon_name("a\tb", canon, sizeof(canon)), -1);
	CHECK_EQ(query_canon_name(longer, canon, sizeof(canon)), -1);
	longer[QUERY_NAME_MAX] = '\0';
	CHECK_EQ(query_canon_name(longer, canon, sizeof(canon)), 0);
	remove_db(db);
}

/*
 * Ids are one sequence over the family tables in the order the events came,
 * with the writer thread's per-family multi-row INSERTs as row by row, and
 * when two writers take turns on one database (each reads max(id) at BEGIN).
 */
static void test_event_ids(enum store_writer mode)
{
	char db[512], err[512];
	struct store *s = NULL, *s2 = NULL;
	struct store_config cfg = {.writer = mode, .batch_rows = 37, .batch_ms = 600000};
	const int n = 1000;
	uint64_t x = 12345;

	path_in(db, sizeof(db), "ids.db");
	remove_db(db);
	CHECK_EQ(store_open(&s, db, &cfg, err, sizeof(err)), 0);
	for (int i = 0; i < n; i++) {
		struct fake f;
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		/* runs of one family and mixes, DNS the most */
		enum obs_kind k = (x >> 60) < 9 ? kind_of(x >> 61) : (enum obs_kind)(1 + (x >> 59) % 2);
		fake_make(&f, (uint64_t)i, k);
		CHECK_EQ(store_event(s, &f.o, (uint64_t)i + 1), 0);
	}
	CHECK_EQ(store_flush(s), 0);
	CHECK_EQ(store_get_stats(s)->events, n);
	CHECK_EQ(store_get_stats(s)->commits, (n + 36) / 37);
	CHECK_EQ(store_close(s), 0);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM (SELECT id, flow_id, row_number() OVER "
			     "(ORDER BY id) AS rn FROM events) WHERE flow_id = rn AND id = rn"),
		 n);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events_dns WHERE kind NOT IN (1, 2)"), 0);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events_icmp WHERE kind != 7"), 0);
	remove_db(db);

	/* two writers, each batch one row, taking turns */
	cfg.batch_rows = 1;
	CHECK_EQ(store_open(&s, db, &cfg, err, sizeof(err)), 0);
	CHECK_EQ(store_open(&s2, db, &cfg, err, sizeof(err)), 0);
	for (int i = 0; i < 40; i++) {
		struct fake f;
		fake_make(&f, (uint64_t)i, kind_of((uint64_t)i / 2));
		CHECK_EQ(store_event(i % 2 ? s2 : s, &f.o, (uint64_t)i + 1), 0);
		CHECK_EQ(store_flush(i % 2 ? s2 : s), 0);
	}
	CHECK_EQ(store_close(s), 0);
	CHECK_EQ(store_close(s2), 0);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM (SELECT id, flow_id, row_number() OVER "
			     "(ORDER BY id) AS rn FROM events) WHERE flow_id = rn AND id = rn"),
		 40);
	remove_db(db);
}

/* Two writers on one database, each with its own alerts: every alert gets
 * a row of its own, and each writer's later upserts update its own rows
 * (each store numbers its alerts from max(id) + 1 at open, so both hand
 * out the same ids). Then a writer alone again keeps its ids. */
static void alert_put(struct store *s, int64_t id, const char *subject, uint64_t count)
{
	struct store_alert a = {.id = id, .class = "dns_tunnel", .severity = 3, .first_ts = 1,
				.last_ts = 1 + count, .count = count, .src_ip = "10.99.0.10",
				.subject = subject};
	CHECK_EQ(store_alert_upsert(s, &a), 0);
}

static void test_alert_ids_shared(enum store_writer mode)
{
	char db[512], err[512];
	struct store *s1 = NULL, *s2 = NULL;
	struct store_config cfg = {.writer = mode, .batch_ms = 600000};

	path_in(db, sizeof(db), "alert_ids.db");
	remove_db(db);
	CHECK_EQ(store_open(&s1, db, &cfg, err, sizeof(err)), 0);
	alert_put(s1, store_alert_id(s1), "before.test", 1);
	CHECK_EQ(store_close(s1), 0);

	CHECK_EQ(store_open(&s1, db, &cfg, err, sizeof(err)), 0);
	CHECK_EQ(store_open(&s2, db, &cfg, err, sizeof(err)), 0);
	int64_t a1 = store_alert_id(s1), b1 = store_alert_id(s2);
	CHECK_EQ(a1, 2);
	CHECK_EQ(b1, 2); /* the same id in both processes */
	alert_put(s2, b1, "b1.test", 1);
	int64_t b2 = store_alert_id(s2);
	alert_put(s2, b2, "b2.test", 1);
	CHECK_EQ(store_flush(s2), 0);
	alert_put(s1, a1, "a1.test", 1);
	CHECK_EQ(store_flush(s1), 0);
	/* both grow (each batch committed before the other writes: a batch
	 * holds the write lock); s1's next alert comes in the same batch as
	 * a1's update */
	alert_put(s2, b1, "b1.test", 7);
	CHECK_EQ(store_flush(s2), 0);
	alert_put(s1, a1, "a1.test", 5);
	int64_t a2 = store_alert_id(s1);
	alert_put(s1, a2, "a2.test", 1);
	alert_put(s1, a2, "a2.test", 2);
	CHECK_EQ(store_flush(s1), 0);
	alert_put(s2, b2, "b2.test", 9);
	CHECK_EQ(store_flush(s2), 0);
	alert_put(s1, a1, "a1.test", 6);
	CHECK_EQ(store_flush(s1), 0);
	alert_put(s2, b2, "b2.test", 10);
	CHECK_EQ(store_close(s2), 0);
	alert_put(s1, a1, "a1.test", 8);
	CHECK_EQ(store_close(s1), 0);

	CHECK_EQ(sql_int(db, "SELECT count(*) FROM alerts"), 5);
	CHECK_EQ(sql_int(db, "SELECT count(DISTINCT subject) FROM alerts"), 5);
	CHECK_EQ(sql_int(db, "SELECT count FROM alerts WHERE subject = 'before.test'"), 1);
	CHECK_EQ(sql_int(db, "SELECT count FROM alerts WHERE subject = 'a1.test'"), 8);
	CHECK_EQ(sql_int(db, "SELECT count FROM alerts WHERE subject = 'a2.test'"), 2);
	CHECK_EQ(sql_int(db, "SELECT count FROM alerts WHERE subject = 'b1.test'"), 7);
	CHECK_EQ(sql_int(db, "SELECT count FROM alerts WHERE subject = 'b2.test'"), 10);
	/* rows in the order they were first committed */
	CHECK_EQ(sql_int(db, "SELECT id FROM alerts WHERE subject = 'b1.test'"), 2);
	CHECK_EQ(sql_int(db, "SELECT id FROM alerts WHERE subject = 'b2.test'"), 3);
	CHECK_EQ(sql_int(db, "SELECT id FROM alerts WHERE subject = 'a1.test'"), 4);
	CHECK_EQ(sql_int(db, "SELECT id FROM alerts WHERE subject = 'a2.test'"), 5);
	remove_db(db);
}

/* Processes opening one new database at once (replays started together):
 * each finds it new, or made by another, never half-made ("not an
 * egresswatch database (it holds 6 other tables ...)") or locked while it
 * switches to WAL. Children released together through a pipe; each opens,
 * writes an event and an alert, closes. */
static void test_open_race(enum store_writer mode)
{
	char db[512];
	const int kids = 4, rounds = 30;
	int failed = 0;

	path_in(db, sizeof(db), "race.db");
	for (int round = 0; round < rounds; round++) {
		int go[2];
		pid_t pid[4];
		remove_db(db);
		if (pipe(go) < 0) {
			CHECK(0);
			return;
		}
		for (int k = 0; k < kids; k++) {
			pid[k] = fork();
			if (pid[k] == 0) {
				char err[512], c;
				struct store *s = NULL;
				struct store_config cfg = {.writer = mode};
				struct fake f;
				close(go[1]);
				(void)!read(go[0], &c, 1);
				if (store_open(&s, db, &cfg, err, sizeof(err)) < 0) {
					fprintf(stderr, "open race: %s\n", err);
					_exit(1);
				}
				fake_make(&f, (uint64_t)k, OBS_DNS_QUERY);
				alert_put(s, store_alert_id(s), "race.test", 1);
				_exit(store_event(s, &f.o, 1) == 0 && store_close(s) == 0 ? 0 : 1);
			}
		}
		close(go[0]);
		close(go[1]);
		for (int k = 0; k < kids; k++) {
			int st = 0;
			if (pid[k] < 0 || waitpid(pid[k], &st, 0) < 0 || !WIFEXITED(st) ||
			    WEXITSTATUS(st) != 0)
				failed++;
		}
		if (sql_int(db, "SELECT count(*) FROM events") != kids ||
		    sql_int(db, "SELECT count(*) FROM alerts") != kids ||
		    sql_int(db, "PRAGMA page_size") != 16384)
			failed++;
	}
	CHECK_EQ(failed, 0);
	remove_db(db);
}

/* An IPv4-mapped IPv6 address is its IPv4 address (as Zeek reads it): in
 * query_canon_addr (--host, --src, host=, src=), and the events filter
 * finds the IPv4 packets and an IPv6 packet that carried the mapped form,
 * by either spelling. */
static void test_mapped_host(void)
{
	char db[512], err[512], buf[64];
	struct store *s = NULL;
	struct query *q = NULL;
	static struct ids c;
	static const struct {
		const char *in, *out;
	} canon[] = {
		{"::ffff:10.99.0.10", "10.99.0.10"}, {"::FFFF:0a63:000a", "10.99.0.10"},
		{"0:0:0:0:0:ffff:10.99.0.10", "10.99.0.10"}, {"10.99.0.10", "10.99.0.10"},
		{"::10.99.0.10", "::10.99.0.10"}, {"64:ff9b::10.99.0.10", "64:ff9b::a63:a"},
		{"fd00::1", "fd00::1"},
	};

	for (size_t i = 0; i < sizeof(canon) / sizeof(canon[0]); i++) {
		CHECK_EQ(query_canon_addr(canon[i].in, buf, sizeof(buf)), 0);
		CHECK_STR(buf, canon[i].out);
	}
	CHECK_EQ(query_canon_addr("::ffff:10.99.0", buf, sizeof(buf)), -1);

	path_in(db, sizeof(db), "mapped.db");
	remove_db(db);
	CHECK_EQ(store_open(&s, db, NULL, err, sizeof(err)), 0);
	struct fake f4, f6, other;
	fake_make(&f4, 1, OBS_DNS_QUERY);
	fake_make(&f6, 2, OBS_DNS_QUERY);
	f6.p.ipv = 6;
	memset(f6.p.src, 0, 16);
	f6.p.src[10] = f6.p.src[11] = 0xff;
	f6.p.src[12] = 10, f6.p.src[13] = 99, f6.p.src[14] = 0, f6.p.src[15] = 10;
	memset(f6.p.dst, 0, 16);
	f6.p.dst[0] = 0xfd, f6.p.dst[15] = 0x53;
	fake_make(&other, 3, OBS_DNS_QUERY);
	other.p.src[3] = 11;
	CHECK_EQ(store_event(s, &f4.o, 0), 0);
	CHECK_EQ(store_event(s, &f6.o, 0), 0);
	CHECK_EQ(store_event(s, &other.o, 0), 0);
	CHECK_EQ(store_close(s), 0);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events WHERE src_ip = '::ffff:10.99.0.10'"), 1);

	CHECK_EQ(query_open(&q, db, err, sizeof(err)), 0);
	const char *spellings[] = {"10.99.0.10", "::ffff:10.99.0.10", "::ffff:a63:a"};
	for (size_t i = 0; i < 3; i++) {
		CHECK_EQ(query_canon_addr(spellings[i], buf, sizeof(buf)), 0);
		struct event_filter ef = {.host = buf, .limit = -1};
		memset(&c, 0, sizeof(c));
		CHECK_EQ(query_events(q, &ef, collect, &c, NULL, err, sizeof(err)), 2);
	}
	struct event_filter ef6 = {.host = "fd00::53", .limit = -1};
	memset(&c, 0, sizeof(c));
	CHECK_EQ(query_events(q, &ef6, collect, &c, NULL, err, sizeof(err)), 1);
	query_close(q);
	remove_db(db);
}

static void test_refused(void)
{
	char db[512], uri[600], err[512];
	struct store *s = NULL;
	struct query *q = NULL;
	sqlite3 *h = NULL;

	/* A database from a newer egresswatch. */
	path_in(db, sizeof(db), "future.db");
	CHECK_EQ(sqlite3_open(db, &h), SQLITE_OK);
	CHECK_EQ(sqlite3_exec(h, "CREATE TABLE x(a); PRAGMA user_version = 999", NULL, NULL, NULL),
		 SQLITE_OK);
	sqlite3_close(h);
	err[0] = '\0';
	CHECK_EQ(store_open(&s, db, NULL, err, sizeof(err)), -1);
	CHECK(s == NULL);
	CHECK(strstr(err, db) != NULL);
	CHECK(strstr(err, "newer") != NULL);
	CHECK_EQ(sql_int(db, "PRAGMA user_version"), 999); /* untouched */
	err[0] = '\0';
	CHECK_EQ(query_open(&q, db, err, sizeof(err)), -1);
	CHECK(strstr(err, db) != NULL && strstr(err, "newer") != NULL);
	remove_db(db);

	/* The read side does not create a missing file. */
	path_in(db, sizeof(db), "missing.db");
	err[0] = '\0';
	CHECK_EQ(query_open(&q, db, err, sizeof(err)), -1);
	CHECK(strstr(err, db) != NULL);
	CHECK(access(db, F_OK) != 0);

	/* A database opened read-only (as a 0444 file is for non-root). */
	path_in(db, sizeof(db), "ro.db");
	CHECK_EQ(store_open(&s, db, NULL, err, sizeof(err)), 0);
	CHECK_EQ(store_close(s), 0);
	snprintf(uri, sizeof(uri), "file:%s?mode=ro", db);
	err[0] = '\0';
	CHECK_EQ(store_open(&s, uri, NULL, err, sizeof(err)), -1);
	CHECK(strstr(err, db) != NULL && strstr(err, "read-only") != NULL);

	/* Not an egresswatch database. */
	path_in(db, sizeof(db), "empty.db");
	CHECK_EQ(sqlite3_open(db, &h), SQLITE_OK);
	CHECK_EQ(sqlite3_exec(h, "CREATE TABLE x(a)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	CHECK_EQ(query_open(&q, db, err, sizeof(err)), -1);
	CHECK(strstr(err, "not an egresswatch database") != NULL);
	/* ... nor written into: the store refuses it, and it stays as it was */
	err[0] = '\0';
	CHECK_EQ(store_open(&s, db, NULL, err, sizeof(err)), -1);
	CHECK(strstr(err, db) != NULL &&
	      strstr(err, "not an egresswatch database (it holds 1 other table") != NULL);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM sqlite_master"), 1);
	CHECK_EQ(sql_int(db, "PRAGMA user_version"), 0);
	remove_db(db);
}


static void test_events(enum store_writer mode)
{
	char db[512], err[512];
	struct store *s = NULL;
	struct query *q = NULL;
	struct store_config cfg = {.writer = mode, .batch_ms = 600000};
	const int n = 700;
	int i;

	path_in(db, sizeof(db), "events.db");
	remove_db(db);
	CHECK_EQ(store_open(&s, db, &cfg, err, sizeof(err)), 0);
	for (i = 0; i < n; i++) {
		struct fake f;
		fake_make(&f, (uint64_t)i, kind_of((uint64_t)i));
		if (i == 3)
			f.o.flags = OBS_F_MALFORMED;
		CHECK_EQ(store_event(s, &f.o, (uint64_t)i + 1), 0);
	}
	CHECK_EQ(store_put_stat(s, "packets", 5), 0);
	CHECK_EQ(store_put_stat(s, "packets", 1234), 0);
	CHECK_EQ(store_flush(s), 0);
	const struct store_stats *st = store_get_stats(s);
	CHECK_EQ(st->events, n);
	CHECK_EQ(st->errors, 0);
	CHECK_EQ(st->stats, 2);
	CHECK_EQ(sql_int(db, "SELECT value FROM stats WHERE name = 'packets'"), 1234);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM stats"), 1);

	CHECK_EQ(query_open(&q, db, err, sizeof(err)), 0);
	/* Kind filters: dns = kinds 1 and 2, icmp = 7. */
	static const struct {
		const char *kind;
		int per7;
	} kinds[] = {{"dns", 2}, {"http", 2}, {"tls", 2}, {"icmp", 1}};
	for (size_t k = 0; k < 4; k++) {
		static struct ids c;
		struct event_filter f = {.kind = kinds[k].kind, .since_id = 0, .limit = -1};
		memset(&c, 0, sizeof(c));
		c.kinds_ok = 1;
		c.want_kind = kinds[k].kind;
		int64_t last = -1;
		CHECK_EQ(query_events(q, &f, collect, &c, &last, err, sizeof(err)),
			 n / 7 * kinds[k].per7);
		CHECK_EQ(c.n, n / 7 * kinds[k].per7);
		CHECK(c.kinds_ok);
		int sorted = 1;
		for (int j = 1; j < c.n; j++)
			if (c.v[j] <= c.v[j - 1])
				sorted = 0;
		CHECK(sorted);
		CHECK_EQ(last, c.v[c.n - 1]);
	}
	{
		struct event_filter f = {.kind = "smtp", .limit = -1};
		static struct ids c;
		memset(&c, 0, sizeof(c));
		err[0] = '\0';
		CHECK_EQ(query_events(q, &f, collect, &c, NULL, err, sizeof(err)), -1);
		CHECK(strstr(err, "smtp") != NULL && strstr(err, db) != NULL);
	}

	/* Paging by since_id with a limit: every id once, in order. */
	for (int pass = 0; pass < 2; pass++) {
		static struct ids all;
		memset(&all, 0, sizeof(all));
		struct event_filter f = {.kind = pass ? "dns" : NULL, .since_id = 0, .limit = 33};
		int pages = 0;
		for (;;) {
			static struct ids page;
			int64_t last = 0;
			memset(&page, 0, sizeof(page));
			int64_t got = query_events(q, &f, collect, &page, &last, err, sizeof(err));
			CHECK(got >= 0 && got <= 33);
			if (got <= 0)
				break;
			for (int j = 0; j < page.n; j++)
				all.v[all.n++] = page.v[j];
			f.since_id = last;
			pages++;
		}
		int expect = pass ? n / 7 * 2 : n;
		CHECK_EQ(all.n, expect);
		CHECK_EQ(pages, (expect + 32) / 33);
		int ok = 1;
		for (int j = 1; j < all.n; j++)
			if (all.v[j] <= all.v[j - 1])
				ok = 0;
		CHECK(ok);
		if (!pass)
			CHECK(all.v[0] == 1 && all.v[n - 1] == n);
	}

	/* The JSON of whole rows, compared as strings. */
	{
		static struct ids c;
		struct event_filter f = {.kind = "icmp", .limit = 1};
		memset(&c, 0, sizeof(c));
		CHECK_EQ(query_events(q, &f, collect, &c, NULL, err, sizeof(err)), 1);
		CHECK_STR(c.first, "{\"id\":7,\"ts\":\"2026-11-29T10:01:05.861264Z\",\"kind\":\"icmp\","
				   "\"src_ip\":\"10.99.0.10\",\"src_port\":0,\"dst_ip\":\"10.99.0.53\","
				   "\"dst_port\":0,\"proto\":\"icmp\",\"icmp\":{\"type\":8,\"code\":0,"
				   "\"size\":56}}");
		memset(&c, 0, sizeof(c));
		f.kind = "http";
		f.since_id = 0;
		CHECK_EQ(query_events(q, &f, collect, &c, NULL, err, sizeof(err)), 1);
		CHECK_STR(c.first, "{\"id\":3,\"ts\":\"2026-11-29T10:01:05.861224Z\",\"kind\":\"http\","
				   "\"src_ip\":\"10.99.0.10\",\"src_port\":40002,\"dst_ip\":\"10.99.0.53\","
				   "\"dst_port\":443,\"proto\":\"tcp\",\"http\":{\"name\":\"h2.example.com\","
				   "\"type\":1,\"code\":0,\"size\":56}}");
		memset(&c, 0, sizeof(c));
		f.kind = "http"; /* id 4 (an HTTP response) is flagged malformed */
		f.since_id = 3;
		CHECK_EQ(query_events(q, &f, collect, &c, NULL, err, sizeof(err)), 1);
		CHECK_STR(c.first, "{\"id\":4,\"ts\":\"2026-11-29T10:01:05.861234Z\",\"kind\":\"http\","
				   "\"src_ip\":\"10.99.0.10\",\"src_port\":40003,\"dst_ip\":\"10.99.0.53\","
				   "\"dst_port\":443,\"proto\":\"tcp\",\"http\":{\"name\":\"h3.example.com\","
				   "\"type\":1,\"code\":0,\"size\":56},\"malformed\":true}");
		memset(&c, 0, sizeof(c));
		f.kind = "dns";
		f.since_id = 0;
		CHECK_EQ(query_events(q, &f, collect, &c, NULL, err, sizeof(err)), 1);
		const char *prefix = "{\"id\":1,\"ts\":\"2026-11-29T10:01:05.861204Z\",\"kind\":\"dns\","
				     "\"src_ip\":\"10.99.0.10\",\"src_port\":40000,\"dst_ip\":\"10.99.0.53\","
				     "\"dst_port\":53,\"proto\":\"udp\",\"dns\":{";
		CHECK(strncmp(c.first, prefix, strlen(prefix)) == 0);
		CHECK(strstr(c.first, "\"qname\":\"example.com\"") != NULL);
		CHECK(strstr(c.first, "\"data\":\"93.184.216.34\"") != NULL);
		if (strncmp(c.first, prefix, strlen(prefix)) != 0 || !strstr(c.first, "qname"))
			fprintf(stderr, "dns row: %s\n", c.first);
	}
	query_close(q);
	CHECK_EQ(store_close(s), 0);
	remove_db(db);
}

/*
 * Events carry their addresses raw and the writer renders them: IPv4, IPv6
 * (compressed, v4-mapped) as inet_ntop would, "" for a non-IP packet or no
 * packet. Enough rows for the writer thread's multi-row INSERT, each row
 * different, so every row of a group must get its own text.
 */
static void test_addresses(enum store_writer mode)
{
	char db[512], err[512];
	struct store *s = NULL;
	struct store_config cfg = {.writer = mode, .batch_ms = 600000};
	enum { N = 53 };
	static char want_src[N][64], want_dst[N][64];

	path_in(db, sizeof(db), "addr.db");
	remove_db(db);
	CHECK_EQ(store_open(&s, db, &cfg, err, sizeof(err)), 0);
	for (int i = 0; i < N; i++) {
		struct fake f;
		fake_make(&f, (uint64_t)i, OBS_DNS_QUERY);
		memset(f.p.src, 0, sizeof(f.p.src));
		memset(f.p.dst, 0, sizeof(f.p.dst));
		want_src[i][0] = want_dst[i][0] = '\0';
		switch (i % 5) {
		case 0: /* IPv4, every field width */
			f.p.src[0] = (uint8_t)i, f.p.src[1] = 0, f.p.src[2] = 255,
			f.p.src[3] = (uint8_t)(i * 7);
			f.p.dst[0] = 192, f.p.dst[1] = 168, f.p.dst[2] = (uint8_t)(i * 3),
			f.p.dst[3] = 10;
			break;
		case 1: /* IPv6 with a run of zeros */
			f.p.ipv = 6;
			f.p.src[0] = 0x20, f.p.src[1] = 0x01, f.p.src[2] = 0x0d, f.p.src[3] = 0xb8;
			f.p.src[15] = (uint8_t)i;
			f.p.dst[15] = 1; /* ::1 */
			break;
		case 2: /* IPv4-mapped IPv6, and all zeros */
			f.p.ipv = 6;
			f.p.src[10] = f.p.src[11] = 0xff;
			f.p.src[12] = 1, f.p.src[13] = 2, f.p.src[14] = 3, f.p.src[15] = (uint8_t)i;
			break;
		case 3: /* not an IP packet */
			f.p.ipv = 0;
			break;
		default: /* no packet */
			f.o.pkt = NULL;
			break;
		}
		if (f.o.pkt && f.p.ipv) {
			int af = f.p.ipv == 6 ? AF_INET6 : AF_INET;
			inet_ntop(af, f.p.src, want_src[i], sizeof(want_src[i]));
			inet_ntop(af, f.p.dst, want_dst[i], sizeof(want_dst[i]));
		}
		CHECK_EQ(store_event(s, &f.o, (uint64_t)i + 1), 0);
	}
	CHECK_EQ(store_flush(s), 0);
	CHECK_EQ(store_close(s), 0);

	sqlite3 *h = NULL;
	sqlite3_stmt *st = NULL;
	int rows = 0, bad = 0;
	CHECK_EQ(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	CHECK_EQ(sqlite3_prepare_v2(h,
				    "SELECT flow_id, src_ip, dst_ip, typeof(src_ip), typeof(dst_ip) "
				    "FROM events ORDER BY id",
				    -1, &st, NULL),
		 SQLITE_OK);
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		int i = sqlite3_column_int(st, 0) - 1;
		const char *src = (const char *)sqlite3_column_text(st, 1);
		const char *dst = (const char *)sqlite3_column_text(st, 2);
		if (i != rows || strcmp(src, want_src[i]) != 0 || strcmp(dst, want_dst[i]) != 0 ||
		    strcmp((const char *)sqlite3_column_text(st, 3), "text") != 0 ||
		    strcmp((const char *)sqlite3_column_text(st, 4), "text") != 0) {
			fprintf(stderr, "row %d: src %s (want %s) dst %s (want %s)\n", rows, src,
				i >= 0 && i < N ? want_src[i] : "?", dst,
				i >= 0 && i < N ? want_dst[i] : "?");
			bad++;
		}
		rows++;
	}
	sqlite3_finalize(st);
	sqlite3_close(h);
	CHECK_EQ(rows, N);
	CHECK_EQ(bad, 0);
	remove_db(db);
}

/* A reader sees nothing of an open batch, and everything after a flush. */
static void test_batching(enum store_writer mode)
{
	char db[512], err[512];
	struct store *s = NULL;
	struct store_config cfg = {.writer = mode, .batch_rows = 10, .batch_ms = 600000};
	int i;

	path_in(db, sizeof(db), "batch.db");
	remove_db(db);
	CHECK_EQ(store_open(&s, db, &cfg, err, sizeof(err)), 0);
	for (i = 0; i < 25; i++) {
		struct fake f;
		fake_make(&f, 0, OBS_DNS_QUERY); /* the same packet time */
		CHECK_EQ(store_event(s, &f.o, 0), 0);
	}
	if (mode == STORE_WRITER_INLINE) {
		/* Two batches of 10 committed, 5 rows open. */
		CHECK_EQ(sql_int(db, "SELECT count(*) FROM events"), 20);
	} else {
		/* The writer may still be draining: at most 20 visible. */
		int64_t seen = sql_int(db, "SELECT count(*) FROM events");
		CHECK(seen >= 0 && seen <= 20 && seen % 10 == 0);
	}
	CHECK_EQ(store_flush(s), 0);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events"), 25);
	CHECK_EQ(store_get_stats(s)->commits, 3);

	/* batch_ms of packet time commits too. */
	for (i = 0; i < 3; i++) {
		struct fake f;
		fake_make(&f, 0, OBS_ICMP);
		f.p.ts_us += (uint64_t)i * 400000000ull; /* 0, 400 s, 800 s */
		CHECK_EQ(store_event(s, &f.o, 0), 0);
	}
	CHECK_EQ(store_flush(s), 0);
	CHECK_EQ(store_close(s), 0);
	remove_db(db);

	/* Many rows at once (multi-row inserts with the writer thread): all
	 * stored, in order, with their own values. */
	cfg.batch_rows = 50;
	CHECK_EQ(store_open(&s, db, &cfg, err, sizeof(err)), 0);
	for (i = 0; i < 300; i++) {
		struct fake f;
		fake_make(&f, 0, OBS_ICMP);
		f.p.ts_us += (uint64_t)i;
		f.o.size = (uint32_t)i;
		CHECK_EQ(store_event(s, &f.o, 0), 0);
	}
	CHECK_EQ(store_flush(s), 0);
	CHECK_EQ(store_get_stats(s)->events, 300);
	CHECK_EQ(store_get_stats(s)->commits, 6); /* exactly batch_rows each */
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events WHERE size = id - 1"), 300);
	CHECK_EQ(store_close(s), 0);
	remove_db(db);

	cfg.batch_rows = 1000;
	cfg.batch_ms = 1000; /* 1 s of packet time */
	CHECK_EQ(store_open(&s, db, &cfg, err, sizeof(err)), 0);
	for (i = 0; i < 3; i++) {
		struct fake f;
		fake_make(&f, 0, OBS_ICMP);
		f.p.ts_us += (uint64_t)i * 600000u; /* 0, 0.6 s, 1.2 s */
		CHECK_EQ(store_event(s, &f.o, 0), 0);
	}
	if (mode == STORE_WRITER_INLINE)
		CHECK_EQ(sql_int(db, "SELECT count(*) FROM events"), 3);
	CHECK_EQ(store_flush(s), 0);
	CHECK_EQ(store_get_stats(s)->commits, 1);
	CHECK_EQ(store_close(s), 0);
	remove_db(db);
}

/* Standard error into the file path (returns what to give stderr_back), so
 * a test can read what the store logged. */
static int stderr_to(const char *path)
{
	fflush(stderr);
	int saved = dup(STDERR_FILENO);
	FILE *f = fopen(path, "w");
	CHECK(saved >= 0 && f != NULL);
	dup2(fileno(f), STDERR_FILENO);
	fclose(f);
	return saved;
}

static void stderr_back(int saved)
{
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
}

/* The whole of a small file, NUL-terminated, into buf. */
static void slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, len - 1, f) : 0;
	buf[n] = '\0';
	if (f)
		fclose(f);
}

/* Another writer holds the lock: rows fail, are counted and reported, and
 * the store recovers when the lock goes away. The failures are logged as a
 * run: its first failure, a line while it goes on (every fail_log_ms: 1
 * here, against the 20 ms each failure waits), and its end, with the rows
 * lost. */
static void test_errors(enum store_writer mode)
{
	char db[512], err[512], logf[512], log[8192];
	struct store *s = NULL;
	struct store_config cfg = {.writer = mode, .busy_ms = 20, .batch_ms = 600000,
				   .fail_log_ms = 1};
	sqlite3 *h = NULL;
	struct fake f;

	path_in(db, sizeof(db), "locked.db");
	path_in(logf, sizeof(logf), "locked.log");
	remove_db(db);
	CHECK_EQ(store_open(&s, db, &cfg, err, sizeof(err)), 0);
	int saved = stderr_to(logf);
	CHECK_EQ(sqlite3_open(db, &h), SQLITE_OK);
	CHECK_EQ(sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
	fake_make(&f, 1, OBS_DNS_QUERY);
	for (int i = 0; i < 3; i++) {
		int rc = store_event(s, &f.o, 0);
		CHECK_EQ(rc, mode == STORE_WRITER_INLINE ? -1 : 0);
	}
	/* Enough for a multi-row insert with the writer thread: when it
	 * fails, every row is retried alone and counted. */
	for (int i = 0; i < 40; i++)
		store_event(s, &f.o, 0);
	CHECK_EQ(store_flush(s), -1);
	CHECK_EQ(store_get_stats(s)->errors, 43);
	CHECK_EQ(store_get_stats(s)->events, 0);
	CHECK(strstr(store_last_error(s), db) != NULL);
	CHECK(strstr(store_last_error(s), "locked") != NULL);
	CHECK_EQ(store_flush(s), 0); /* reported once */

	CHECK_EQ(sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	CHECK_EQ(store_event(s, &f.o, 0), 0);
	CHECK_EQ(store_flush(s), 0);
	CHECK_EQ(store_get_stats(s)->events, 1);
	stderr_back(saved);
	slurp(logf, log, sizeof(log));
	remove(logf);
	/* the run's first failure, once */
	const char *first = strstr(log, "rows are lost until a write succeeds");
	CHECK(first != NULL);
	CHECK(first && strstr(first + 1, "rows are lost until a write succeeds") == NULL);
	CHECK(strstr(log, "still failing after ") != NULL);
	/* its end, after every failure, with all 43 rows */
	const char *end = strstr(log, ": writing again, after ");
	CHECK(end != NULL && end > first);
	CHECK(end && strstr(end, "s of failed writes and 43 rows lost\n") != NULL);
	CHECK(end && strstr(end, "still failing") == NULL);
	CHECK_EQ(store_close(s), -1); /* the run had errors */
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events"), 1);
	remove_db(db);
}

/* Live capture never stalls on a slow disk: with drop_when_full, a full
 * queue drops the event, counts it, and returns at once. The writer is held
 * up by another connection's write lock (busy wait 1 s per statement). */
static void test_drop_when_full(void)
{
	char db[512], err[512];
	struct store *s = NULL;
	struct store_config cfg = {.writer = STORE_WRITER_THREAD, .busy_ms = 1000,
				   .queue_kib = 256, .drop_when_full = 1};
	sqlite3 *h = NULL;
	struct fake f;
	uint64_t ok = 0, dropped = 0;

	path_in(db, sizeof(db), "full.db");
	remove_db(db);
	CHECK_EQ(store_open(&s, db, &cfg, err, sizeof(err)), 0);
	CHECK_EQ(sqlite3_open(db, &h), SQLITE_OK);
	CHECK_EQ(sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
	fake_make(&f, 1, OBS_DNS_QUERY);
	for (int i = 0; i < 20000; i++) {
		if (store_event(s, &f.o, 0) == 0)
			ok++;
		else
			dropped++;
	}
	CHECK(dropped > 0);
	CHECK(ok > 0);
	CHECK_EQ(store_get_stats(s)->dropped, dropped);
	CHECK(store_get_stats(s)->queue_bytes <= 256 * 1024);
	CHECK_EQ(store_get_stats(s)->queue_waits, 0);
	CHECK_EQ(sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	store_flush(s);
	/* every event is either stored (after the writer's retries) or counted */
	CHECK_EQ(store_get_stats(s)->events + store_get_stats(s)->errors + dropped, 20000);
	store_close(s);
	remove_db(db);
}

/* DNS queries i = from .. to-1, the i-th at step_us * i after the first. */
static void put_queries(struct store *s, int from, int to, uint64_t step_us)
{
	struct fake f;

	for (int i = from; i < to; i++) {
		fake_make(&f, 0, OBS_DNS_QUERY);
		f.p.ts_us += (uint64_t)i * step_us;
		CHECK_EQ(store_event(s, &f.o, 0), 0);
	}
}

/* Bulk mode hands events to the writer in chunks (PUBLISH_BYTES): a few
 * events still held back are written by a flush, and a producer that fills
 * the smallest ring while holding some back gets it drained; every event
 * arrives, in order. */
static void test_bulk_publish(void)
{
	char db[512], err[512];
	struct store *s = NULL;
	struct store_config cfg = {.writer = STORE_WRITER_THREAD, .bulk = 1, .queue_kib = 256,
				   .batch_ms = 600000};

	path_in(db, sizeof(db), "bulkpub.db");
	remove_db(db);
	CHECK_EQ(store_open(&s, db, &cfg, err, sizeof(err)), 0);
	put_queries(s, 0, 3, 1);
	CHECK_EQ(store_flush(s), 0);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events"), 3);
	put_queries(s, 3, 30000, 1);
	CHECK_EQ(store_flush(s), 0);
	CHECK(store_get_stats(s)->queue_waits > 0); /* the ring did fill */
	CHECK_EQ(store_get_stats(s)->events, 30000);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events"), 30000);
	/* in order: ids follow packet time */
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events e JOIN events n ON n.id = e.id + 1 "
			     "WHERE n.ts <= e.ts"),
		 0);
	CHECK_EQ(store_close(s), 0);
	remove_db(db);
}

/* A replay's batches span up to 60 s of packet time (batch_ms is 1 s): of
 * four events 20 s apart, a batch closes with the event that reaches its
 * span, so bulk mode commits once (at 60 s), the default twice. */
static void test_bulk_span(void)
{
	for (int bulk = 0; bulk <= 1; bulk++) {
		char db[512], err[512];
		struct store *s = NULL;
		struct store_config cfg = {.writer = STORE_WRITER_INLINE, .bulk = bulk,
					   .batch_ms = 1000};

		path_in(db, sizeof(db), "span.db");
		remove_db(db);
		CHECK_EQ(store_open(&s, db, &cfg, err, sizeof(err)), 0);
		put_queries(s, 0, 4, 20000000u); /* 0, 20, 40, 60 s */
		CHECK_EQ(store_flush(s), 0);
		CHECK_EQ(store_get_stats(s)->commits, bulk ? 1 : 2);
		CHECK_EQ(sql_int(db, "SELECT count(*) FROM events"), 4);
		CHECK_EQ(store_close(s), 0);
		remove_db(db);
	}
}

/* With the writer thread, checkpoints run on the checkpointer thread, yet
 * the WAL still starts over: ~80 MiB of rows go through a WAL that never
 * grows past the checkpointer's bound (32 MiB) plus a couple of batches,
 * every row arrives, and close leaves no WAL behind. The bound is in bytes,
 * whatever the page size: page_size 0 is a database the store creates (16
 * KiB pages), another one a database that existed with that page size and
 * keeps it. */
static void test_checkpointer(int page_size)
{
	char db[512], wal[520], err[512];
	struct store *s = NULL;
	struct store_config cfg = {.writer = STORE_WRITER_THREAD, .bulk = 1, .batch_rows = 2000};
	static char big[2048];
	struct fake f;
	struct stat sb;
	off_t wal_max = 0;

	path_in(db, sizeof(db), "ckpt.db");
	snprintf(wal, sizeof(wal), "%s-wal", db);
	remove_db(db);
	memset(big, 'x', sizeof(big) - 1);
	if (page_size) {
		sqlite3 *h = NULL;
		char sql[96];
		/* the page size sticks once a page is written; the table
		 * goes again, since a file holding another program's tables
		 * is refused */
		snprintf(sql, sizeof(sql),
			 "PRAGMA page_size = %d; CREATE TABLE other (x); DROP TABLE other;",
			 page_size);
		CHECK_EQ(sqlite3_open(db, &h), SQLITE_OK);
		CHECK_EQ(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
		sqlite3_close(h);
	}
	CHECK_EQ(store_open(&s, db, &cfg, err, sizeof(err)), 0);
	CHECK_EQ(sql_int(db, "PRAGMA page_size"), page_size ? page_size : 16384);
	for (int i = 0; i < 40000; i++) {
		fake_make(&f, (uint64_t)i, OBS_DNS_ANSWER);
		f.o.info = big;
		f.o.info_len = sizeof(big) - 1;
		CHECK_EQ(store_event(s, &f.o, 0), 0);
		if (i % 1000 == 999) {
			CHECK_EQ(store_flush(s), 0);
			if (stat(wal, &sb) == 0 && sb.st_size > wal_max)
				wal_max = sb.st_size;
		}
	}
	CHECK_EQ(store_flush(s), 0);
	CHECK(wal_max > 0);
	CHECK(wal_max < (off_t)48 << 20);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events"), 40000);
	CHECK_EQ(store_close(s), 0);
	CHECK(stat(wal, &sb) != 0 || sb.st_size == 0);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events"), 40000);
	remove_db(db);
}

static void test_alerts_and_caps(void)
{
	char db[512], err[512];
	struct store *s = NULL;
	struct query *q = NULL;
	static struct ids c;

	path_in(db, sizeof(db), "alerts.db");
	remove_db(db);
	CHECK_EQ(store_open(&s, db, NULL, err, sizeof(err)), 0);
	struct store_alert a = {
		.id = store_alert_id(s),
		.class = "dns_tunnel",
		.severity = 4,
		.first_ts = 1795946465861204ull,
		.last_ts = 1795946483004111ull,
		.count = 1,
		.outcome = NULL,
		.proto = 17,
		.src_ip = "10.99.0.10",
		.dst_ip = "10.99.0.53",
		.src_port = 41234,
		.dst_port = 53,
		.subject = "example-tunnel.test",
		.score = 0.97,
		.rule = "dns_tunnel",
		.summary = "1 query",
		.evidence = "paaaaqb1nbswy3dp.t.example-tunnel.test",
	};
	CHECK_EQ(a.id, 1);
	CHECK_EQ(store_alert_upsert(s, &a), 0);
	a.count = 145;
	a.outcome = "answered";
	a.summary = "145 queries, 146 distinct names, 3.1 bits/char, ~9 KB encoded";
	a.evidence = "paaaaqb1nbswy3dp.t.example-tunnel.test\x1d...";
	CHECK_EQ(store_alert_upsert(s, &a), 0);
	struct store_alert b = {.id = store_alert_id(s), .class = "icmp_egress", .severity = 2,
				.first_ts = 1, .last_ts = 2, .count = 3, .outcome = "blocked",
				.src_ip = "10.99.0.11", .dst_ip = "8.8.8.8", .proto = 1};
	CHECK_EQ(b.id, 2);
	CHECK_EQ(store_alert_upsert(s, &b), 0);

	/* Over-long text is cut and counted. */
	static char longname[3000];
	memset(longname, 'a', sizeof(longname) - 1);
	struct fake f;
	fake_make(&f, 1, OBS_HTTP_REQUEST);
	f.o.name = longname;
	f.o.name_len = strlen(longname);
	CHECK_EQ(store_event(s, &f.o, 0), 0);
	CHECK_EQ(store_flush(s), 0);
	CHECK_EQ(store_get_stats(s)->truncated, 1);
	CHECK_EQ(store_get_stats(s)->alerts, 3);
	CHECK_EQ(sql_int(db, "SELECT length(name) FROM events"), STORE_NAME_MAX);
	CHECK_EQ(store_close(s), 0);

	/* Ids continue after reopening. */
	CHECK_EQ(store_open(&s, db, NULL, err, sizeof(err)), 0);
	CHECK_EQ(store_alert_id(s), 3);
	CHECK_EQ(store_close(s), 0);

	CHECK_EQ(query_open(&q, db, err, sizeof(err)), 0);
	struct alert_filter af = {.limit = -1};
	memset(&c, 0, sizeof(c));
	CHECK_EQ(query_alerts(q, &af, collect, &c, NULL, err, sizeof(err)), 2);
	CHECK_STR(c.first,
		  "{\"id\":1,\"class\":\"dns_tunnel\",\"severity\":\"high\","
		  "\"first_ts\":\"2026-11-29T10:01:05.861204Z\",\"last_ts\":\"2026-11-29T10:01:23.004111Z\","
		  "\"count\":145,\"outcome\":\"answered\",\"src_ip\":\"10.99.0.10\",\"src_port\":41234,"
		  "\"dst_ip\":\"10.99.0.53\",\"dst_port\":53,\"proto\":\"udp\","
		  "\"subject\":\"example-tunnel.test\",\"score\":0.97,\"rule\":\"dns_tunnel\","
		  "\"summary\":\"145 queries, 146 distinct names, 3.1 bits/char, ~9 KB encoded\","
		  "\"evidence\":[\"paaaaqb1nbswy3dp.t.example-tunnel.test\",\"...\"]}");
	af.class_name = "icmp_egress";
	memset(&c, 0, sizeof(c));
	CHECK_EQ(query_alerts(q, &af, collect, &c, NULL, err, sizeof(err)), 1);
	CHECK_EQ(c.v[0], 2);
	af.class_name = NULL;
	af.severity = "high";
	memset(&c, 0, sizeof(c));
	CHECK_EQ(query_alerts(q, &af, collect, &c, NULL, err, sizeof(err)), 1);
	CHECK_EQ(c.v[0], 1);
	af.severity = "low";
	af.src = "10.99.0.11";
	memset(&c, 0, sizeof(c));
	CHECK_EQ(query_alerts(q, &af, collect, &c, NULL, err, sizeof(err)), 1);
	CHECK_EQ(c.v[0], 2);
	af.src = "10.0.0.1' OR 1=1 --"; /* bound, so just a non-matching value */
	memset(&c, 0, sizeof(c));
	CHECK_EQ(query_alerts(q, &af, collect, &c, NULL, err, sizeof(err)), 0);
	af.src = NULL;
	af.severity = "urgent";
	CHECK_EQ(query_alerts(q, &af, collect, &c, NULL, err, sizeof(err)), -1);
	af.severity = NULL;
	af.since_id = 1;
	af.limit = 1;
	memset(&c, 0, sizeof(c));
	CHECK_EQ(query_alerts(q, &af, collect, &c, NULL, err, sizeof(err)), 1);
	CHECK_EQ(c.v[0], 2);

	json_t *one = NULL;
	CHECK_EQ(query_alert_get(q, 2, &one, err, sizeof(err)), 0);
	char *d = one ? json_dumps(one, EVENT_JSON_DUMP_FLAGS) : NULL;
	CHECK_STR(d, "{\"id\":2,\"class\":\"icmp_egress\",\"severity\":\"low\","
		     "\"first_ts\":\"1970-01-01T00:00:00.000001Z\","
		     "\"last_ts\":\"1970-01-01T00:00:00.000002Z\",\"count\":3,\"outcome\":\"blocked\","
		     "\"src_ip\":\"10.99.0.11\",\"src_port\":0,\"dst_ip\":\"8.8.8.8\",\"dst_port\":0,"
		     "\"proto\":\"icmp\",\"subject\":null,\"score\":0.0,\"rule\":null,"
		     "\"summary\":null,\"evidence\":[]}");
	free(d);
	json_decref(one);
	CHECK_EQ(query_alert_get(q, 99, &one, err, sizeof(err)), 1);
	query_close(q);

	/* The CLI printers. */
	char out[512];
	path_in(out, sizeof(out), "out.txt");
	FILE *fp = fopen(out, "w+");
	CHECK(fp != NULL);
	if (fp) {
		struct alert_filter pf = {.class_name = "icmp_egress", .limit = -1};
		struct event_filter ef = {.limit = -1};
		char line[4096];
		CHECK_EQ(query_print_alerts(db, &pf, fp, 0), 0);
		CHECK_EQ(query_print_events(db, &ef, fp, 1), 0);
		rewind(fp);
		CHECK(fgets(line, sizeof(line), fp) != NULL);
		CHECK_STR(line, "1970-01-01T00:00:00.000001Z low      icmp_egress        "
				"10.99.0.11 -> 8.8.8.8  -  count=3 blocked\n");
		CHECK(fgets(line, sizeof(line), fp) != NULL);
		CHECK(strncmp(line, "{\"id\":1,\"ts\":", 13) == 0);
		fclose(fp);
		unlink(out);
	}
	path_in(out, sizeof(out), "nosuch.db");
	struct event_filter ef = {.limit = -1};
	CHECK_EQ(query_print_events(out, &ef, stdout, 0), -1);
	remove_db(db);
}

static void test_event_json_direct(void)
{
	/* Not valid UTF-8 in a row (a foreign writer): still valid JSON. */
	struct event_row r = {.id = 9, .ts = 0, .kind = OBS_TLS_CLIENT_HELLO, .proto = 253,
			      .src_ip = "::1", .dst_ip = NULL, .src_port = 1, .dst_port = 2,
			      .name = "bad\xff\"name", .type = 0x304};
	json_t *o = event_json_new(&r);
	char *d = o ? json_dumps(o, EVENT_JSON_DUMP_FLAGS) : NULL;
	CHECK_STR(d, "{\"id\":9,\"ts\":\"1970-01-01T00:00:00.000000Z\",\"kind\":\"tls\","
		     "\"src_ip\":\"::1\",\"src_port\":1,\"dst_ip\":\"\",\"dst_port\":2,\"proto\":\"253\","
		     "\"tls\":{\"name\":\"bad\\\\xff\\\"name\",\"type\":772,\"code\":0,\"size\":0}}");
	free(d);
	json_decref(o);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* Busy-wait ns nanoseconds: stands in for decoding a packet. */
static void spin_ns(long ns)
{
	double end = now_s() + (double)ns / 1e9;
	while (now_s() < end)
		;
}

static void bench(const char *label, enum store_writer mode, int bulk, long rows, long work_ns)
{
	char db[512], err[512];
	struct store *s = NULL;
	struct store_config cfg = {.writer = mode, .bulk = bulk};
	static struct fake fk[7];

	path_in(db, sizeof(db), "bench.db");
	remove_db(db);
	for (int k = 0; k < 7; k++)
		fake_make(&fk[k], (uint64_t)k, kind_of((uint64_t)k));
	const char *only = getenv("EW_STORE_BENCH_ONLY");
	if (only && strcmp(only, label) != 0)
		return;
	double t0 = now_s(), c0 = cpu_s();
	if (store_open(&s, db, &cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench: %s\n", err);
		CHECK(0);
		return;
	}
	for (long i = 0; i < rows; i++) {
		struct fake *f = &fk[i % 7];
		f->p.ts_us += 1; /* ~1 us apart: batches end on batch_rows */
		f->p.sport = (uint16_t)(i & 0xffff);
		if (work_ns)
			spin_ns(work_ns);
		if (store_event(s, &f->o, (uint64_t)i) < 0)
			break;
	}
	double t1 = now_s();
	const struct store_stats *st = store_get_stats(s);
	uint64_t waits = st->queue_waits;
	CHECK_EQ(store_close(s), 0);
	double t2 = now_s(), c2 = cpu_s();
	struct stat sb;
	stat(db, &sb);
	printf("bench %-22s %8ld rows  %6.3f s  %9.0f rows/s  (enqueue %.3f s, %llu queue waits, "
	       "%.0f MB, cpu %.3f s)\n",
	       label, rows, t2 - t0, (double)rows / (t2 - t0), t1 - t0,
	       (unsigned long long)waits, (double)sb.st_size / 1e6, c2 - c0);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events"), rows);
	remove_db(db);
}

/* Event i of a retention test: kind_of(i), at base + sec seconds, flow_id
 * i + 1 (to tell the rows apart). */
static void put_at(struct store *s, uint64_t i, enum obs_kind k, uint64_t sec)
{
	struct fake f;
	fake_make(&f, 0, k);
	f.p.ts_us += sec * 1000000u;
	CHECK_EQ(store_event(s, &f.o, i + 1), 0);
}

/* --retain: each commit deletes, table by table in id order, the events
 * not within retain_us of the newest one written; never a table's last row;
 * ids go on rising; alerts stay; a row stored out of order waits for the
 * rows before it; rows dated far after the newest go too; at most
 * STORE_EXPIRE_MAX rows a table a commit. */
static void test_retention(enum store_writer mode)
{
	char db[512], err[512];
	struct store *s = NULL;
	struct store_config cfg = {.writer = mode, .batch_rows = 5, .batch_ms = 600000,
				   .retain_us = 100 * 1000000ull};
	const uint64_t base = 1795946465861204ull; /* fake_make's packet time */

	path_in(db, sizeof(db), "retain.db");
	remove_db(db);

	/* A capture from the future replayed into the database first, without
	 * retention: 3 rows dated 10^6 s on, and an alert. */
	struct store_config plain = cfg;
	plain.retain_us = 0;
	CHECK_EQ(store_open(&s, db, &plain, err, sizeof(err)), 0);
	for (uint64_t i = 0; i < 3; i++)
		put_at(s, 100 + i, OBS_DNS_QUERY, 1000000 + i);
	struct store_alert a = {.id = store_alert_id(s), .class = "dns_tunnel", .severity = 3,
				.first_ts = base, .last_ts = base, .count = 1};
	CHECK_EQ(store_alert_upsert(s, &a), 0);
	CHECK_EQ(store_close(s), 0);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events"), 3);

	/* 30 events 10 s apart over the seven kinds (all four tables): the last
	 * commit sees the newest at 290 s and keeps 190..290 s. */
	CHECK_EQ(store_open(&s, db, &cfg, err, sizeof(err)), 0);
	for (uint64_t i = 0; i < 30; i++)
		put_at(s, i, kind_of(i), i * 10);
	CHECK_EQ(store_flush(s), 0);
	CHECK_EQ(store_get_stats(s)->events, 30);
	CHECK_EQ(store_get_stats(s)->expired, 3 + 19);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events"), 11);
	CHECK_EQ(sql_int(db, "SELECT min(flow_id) FROM events"), 20);
	CHECK_EQ(sql_int(db, "SELECT max(flow_id) FROM events"), 30);
	/* ids as stored: the future rows were 1..3 */
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events WHERE id = flow_id + 3"), 11);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM alerts"), 1);

	/* Stored out of order: one batch with a row at 50 s and one at 300 s.
	 * The window is 200..400 s: TLS loses i = 19 (190 s); the row at 50 s
	 * waits, as the scan stops at the first row inside. */
	put_at(s, 30, OBS_DNS_QUERY, 50);
	put_at(s, 31, OBS_DNS_QUERY, 300);
	CHECK_EQ(store_flush(s), 0);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events WHERE flow_id = 31"), 1);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events"), 12);
	CHECK_EQ(store_get_stats(s)->expired, 23);

	/* The clock jumps forward: one ICMP event at 10,000 s, and everything
	 * else is old. The ICMP table keeps that row; each other table keeps
	 * its last row only. */
	put_at(s, 32, OBS_ICMP, 10000);
	CHECK_EQ(store_flush(s), 0);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events_icmp"), 1);
	CHECK_EQ(sql_int(db, "SELECT flow_id FROM events_icmp"), 33);
	CHECK_EQ(sql_int(db, "SELECT flow_id FROM events_dns"), 32);
	CHECK_EQ(sql_int(db, "SELECT flow_id FROM events_http"), 1 + 24); /* i = 24, kind 4 */
	CHECK_EQ(sql_int(db, "SELECT flow_id FROM events_tls"), 1 + 26);  /* i = 26, kind 6 */
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events"), 4);
	/* ICMP 2 (i = 20, 27), DNS 5 (21, 22, 28, 29, the 50 s row), HTTP 1
	 * (23), TLS 1 (25) */
	CHECK_EQ(store_get_stats(s)->expired, 23 + 9);

	/* ... and steps back (NTP): a batch whose newest event, at 400 s, is
	 * more than the window older than 10,000 s sets the window back to
	 * 300..500 s. TLS loses i = 26 (260 s); the row at 10,000 s is the
	 * ICMP table's last, so it stays until the next ICMP event (401 s)
	 * makes it a row dated after the window, which goes. Ids go on after
	 * the highest ever given. */
	put_at(s, 33, OBS_TLS_CLIENT_HELLO, 400);
	CHECK_EQ(store_flush(s), 0);
	CHECK_EQ(sql_int(db, "SELECT flow_id FROM events_tls"), 34);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events"), 4);
	CHECK_EQ(store_get_stats(s)->expired, 33);
	put_at(s, 34, OBS_ICMP, 401);
	CHECK_EQ(store_flush(s), 0);
	CHECK_EQ(sql_int(db, "SELECT flow_id FROM events_icmp"), 35);
	CHECK_EQ(sql_int(db, "SELECT id FROM events WHERE flow_id = 35"), 3 + 35);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events WHERE ts > 1795946465861204 + 1000000000"),
		 0);
	CHECK_EQ(store_get_stats(s)->expired, 34);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM alerts"), 1);
	CHECK_EQ(store_get_stats(s)->errors, 0);
	CHECK_EQ(store_close(s), 0);
	remove_db(db);

	/* The file levels off: 20 windows' worth of events (one every 0.1 s,
	 * 1,000 a window, every kind), and the pages after 10 windows are the
	 * pages after 20, give or take a few: SQLite reuses the freed ones. */
	cfg.batch_rows = 250;
	CHECK_EQ(store_open(&s, db, &cfg, err, sizeof(err)), 0);
	int64_t pages_at_10 = 0, pages_at_20 = 0;
	for (uint64_t i = 0; i < 20000; i++) {
		struct fake f;
		fake_make(&f, 0, kind_of(i));
		f.p.ts_us += i * 100000u;
		CHECK_EQ(store_event(s, &f.o, i + 1), 0);
		if (i == 9999 || i == 19999) {
			CHECK_EQ(store_flush(s), 0);
			*(i == 9999 ? &pages_at_10 : &pages_at_20) =
				sql_int(db, "PRAGMA page_count");
		}
	}
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events"), 1001);
	CHECK(pages_at_10 > 0 && pages_at_20 <= pages_at_10 + pages_at_10 / 10);
	if (pages_at_20 > pages_at_10 + pages_at_10 / 10)
		fprintf(stderr, "  pages after 10 windows %lld, after 20 %lld\n",
			(long long)pages_at_10, (long long)pages_at_20);
	CHECK_EQ(store_close(s), 0);
	remove_db(db);

	if (mode != STORE_WRITER_INLINE)
		return;
	/* At most STORE_EXPIRE_MAX rows of a table go in one commit; the rest
	 * at the next commits, events or not (here: 2.5 times the cap, then a
	 * commit of a stat row alone, twice). */
	cfg.batch_rows = 300000;
	plain.batch_rows = 300000;
	const uint64_t n = STORE_EXPIRE_MAX * 2 + STORE_EXPIRE_MAX / 2;
	CHECK_EQ(store_open(&s, db, &plain, err, sizeof(err)), 0);
	for (uint64_t i = 0; i < n; i++)
		put_at(s, i, OBS_DNS_QUERY, 0);
	CHECK_EQ(store_close(s), 0);
	CHECK_EQ(store_open(&s, db, &cfg, err, sizeof(err)), 0);
	put_at(s, n, OBS_DNS_QUERY, 1000);
	CHECK_EQ(store_flush(s), 0);
	CHECK_EQ(store_get_stats(s)->expired, STORE_EXPIRE_MAX);
	CHECK_EQ(sql_int(db, "SELECT min(flow_id) FROM events"), STORE_EXPIRE_MAX + 1);
	CHECK_EQ(store_put_stat(s, "test.quiet", 1), 0);
	CHECK_EQ(store_flush(s), 0);
	CHECK_EQ(store_get_stats(s)->expired, 2 * STORE_EXPIRE_MAX);
	CHECK_EQ(store_put_stat(s, "test.quiet", 2), 0);
	CHECK_EQ(store_flush(s), 0);
	CHECK_EQ(store_get_stats(s)->expired, n);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events"), 1);
	/* nothing left to do: a quiet commit deletes nothing more */
	CHECK_EQ(store_put_stat(s, "test.quiet", 3), 0);
	CHECK_EQ(store_flush(s), 0);
	CHECK_EQ(store_get_stats(s)->expired, n);
	put_at(s, n + 1, OBS_DNS_QUERY, 1001);
	CHECK_EQ(store_flush(s), 0);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events"), 2);
	CHECK_EQ(store_close(s), 0);
	remove_db(db);

	/* The same with two tables taking turns, so a pass's bound of ids
	 * holds half as many rows of each: quiet commits go on until nothing
	 * is left but each table's last row. */
	CHECK_EQ(store_open(&s, db, &plain, err, sizeof(err)), 0);
	for (uint64_t i = 0; i < n; i++)
		put_at(s, i, i % 2 ? OBS_ICMP : OBS_DNS_QUERY, 0);
	CHECK_EQ(store_close(s), 0);
	CHECK_EQ(store_open(&s, db, &cfg, err, sizeof(err)), 0);
	put_at(s, n, OBS_DNS_QUERY, 1000);
	CHECK_EQ(store_flush(s), 0);
	uint64_t before = 0;
	int quiet = 0;
	while (store_get_stats(s)->expired != before && quiet < 20) {
		before = store_get_stats(s)->expired;
		CHECK_EQ(store_put_stat(s, "test.quiet", quiet), 0);
		CHECK_EQ(store_flush(s), 0);
		quiet++;
	}
	CHECK(quiet >= 3 && quiet < 20);
	CHECK_EQ(store_get_stats(s)->expired, n - 1);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM events"), 2);
	CHECK_EQ(sql_int(db, "SELECT flow_id FROM events_icmp"), n); /* i = n - 1 */
	CHECK_EQ(store_close(s), 0);
	remove_db(db);
}

/* query_print_events --json: each line is json_dumps of the row's object,
 * the lines that do not fit the printer's first buffer (4 KiB) and those
 * past twice that too. */
static int dump_row_line(void *arg, json_t *row)
{
	FILE *f = arg;
	char *d = json_dumps(row, EVENT_JSON_DUMP_FLAGS);
	if (!d)
		return 1;
	fprintf(f, "%s\n", d);
	free(d);
	return 0;
}

static void test_print_json_lines(void)
{
	char db[512], a[512], b[512], err[512];
	struct store *s = NULL;
	struct store_config cfg = {.writer = STORE_WRITER_INLINE};
	static char name[STORE_NAME_MAX + 1], info[STORE_INFO_MAX + 1];

	path_in(db, sizeof(db), "print.db");
	path_in(a, sizeof(a), "print.a");
	path_in(b, sizeof(b), "print.b");
	remove_db(db);
	CHECK_EQ(store_open(&s, db, &cfg, err, sizeof(err)), 0);
	for (uint64_t i = 0; i < 40; i++) {
		struct fake f;
		fake_make(&f, i, OBS_DNS_ANSWER);
		/* names of 0..1024 bytes, escaped ones among them, and info of
		 * up to 8 KiB of answers: JSON lines from ~400 bytes to ~20 KiB */
		size_t nl = (size_t)(i * 97 % (STORE_NAME_MAX + 1));
		for (size_t k = 0; k < nl; k++)
			name[k] = (char)(k % 7 == 6 ? '.' : (i % 3 == 0 && k % 11 == 0) ? '\x01' : 'a' + k % 26);
		name[nl] = '\0';
		f.o.name = name;
		f.o.name_len = nl;
		size_t il = 0;
		il += (size_t)snprintf(info, sizeof(info), "%s",
				       "4660\x1fresponse\x1f" "0\x1f" "0\x1frd,ra\x1f" "1\x1f" "1\x1f"
				       "0\x1f" "0\x1f\x1f\x1f\x1fudp\x1f\x1e" "Q\x1f" "example.com\x1f"
				       "1\x1f" "1\x1e");
		for (uint64_t k = 0; k < i * 5 && il + 64 < sizeof(info); k++)
			il += (size_t)snprintf(info + il, sizeof(info) - il,
					       "AN\x1f" "example.com\x1f" "1\x1f" "1\x1f" "300\x1f"
					       "192.0.2.%u\x1e", (unsigned)(k % 256));
		f.o.info = info;
		f.o.info_len = il;
		CHECK_EQ(store_event(s, &f.o, i + 1), 0);
	}
	CHECK_EQ(store_close(s), 0);

	FILE *fa = fopen(a, "w"), *fb = fopen(b, "w");
	CHECK(fa && fb);
	if (!fa || !fb)
		return;
	struct event_filter ef = {.limit = -1};
	CHECK_EQ(query_print_events(db, &ef, fa, 1), 0);
	struct query *q = NULL;
	CHECK_EQ(query_open(&q, db, err, sizeof(err)), 0);
	CHECK_EQ(query_events(q, &ef, dump_row_line, fb, NULL, err, sizeof(err)), 40);
	query_close(q);
	fclose(fa);
	fclose(fb);

	/* the same bytes, and lines of every size class */
	fa = fopen(a, "r");
	fb = fopen(b, "r");
	CHECK(fa && fb);
	if (!fa || !fb)
		return;
	int lines = 0, over4k = 0, over8k = 0, same = 1;
	static char la[65536], lb[65536];
	while (fgets(lb, sizeof(lb), fb)) {
		if (!fgets(la, sizeof(la), fa) || strcmp(la, lb) != 0)
			same = 0;
		size_t n = strlen(lb);
		lines++;
		over4k += n > 4096;
		over8k += n > 8192;
	}
	CHECK(fgets(la, sizeof(la), fa) == NULL);
	CHECK_EQ(same, 1);
	CHECK_EQ(lines, 40);
	if (!(over4k >= 5 && over8k >= 2 && over4k < lines))
		fprintf(stderr, "  lines over 4 KiB %d, over 8 KiB %d\n", over4k, over8k);
	CHECK(over4k >= 5 && over8k >= 2 && over4k < lines);
	fclose(fa);
	fclose(fb);
	unlink(a);
	unlink(b);
	remove_db(db);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/ew_store_XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_open_migrate();
	test_refused();
	test_migrate_v1();
	test_query_plans();
	test_name_filter();
	test_table_answers();
	test_event_ids(STORE_WRITER_INLINE);
	test_event_ids(STORE_WRITER_THREAD);
	test_alert_ids_shared(STORE_WRITER_INLINE);
	test_alert_ids_shared(STORE_WRITER_THREAD);
	test_open_race(STORE_WRITER_INLINE);
	test_open_race(STORE_WRITER_THREAD);
	test_mapped_host();
	test_events(STORE_WRITER_INLINE);
	test_events(STORE_WRITER_THREAD);
	test_addresses(STORE_WRITER_INLINE);
	test_addresses(STORE_WRITER_THREAD);
	test_batching(STORE_WRITER_INLINE);
	test_batching(STORE_WRITER_THREAD);
	test_errors(STORE_WRITER_INLINE);
	test_errors(STORE_WRITER_THREAD);
	test_drop_when_full();
	test_bulk_publish();
	test_bulk_span();
	test_checkpointer(0);
	test_checkpointer(4096);
	test_alerts_and_caps();
	test_event_json_direct();
	test_print_json_lines();
	test_retention(STORE_WRITER_INLINE);
	test_retention(STORE_WRITER_THREAD);

	const char *br = getenv("EW_STORE_BENCH_ROWS");
	long rows = br ? atol(br) : 1000000;
	if (rows > 0) {
		bench("inline", STORE_WRITER_INLINE, 0, rows, 0);
		bench("thread", STORE_WRITER_THREAD, 0, rows, 0);
		bench("inline bulk", STORE_WRITER_INLINE, 1, rows, 0);
		bench("thread bulk", STORE_WRITER_THREAD, 1, rows, 0);
		/* With 1 us of "decode" per row, as in a replay at ~0.7 Mpps:
		 * the writer thread overlaps it, inline adds it. */
		bench("inline bulk+decode", STORE_WRITER_INLINE, 1, rows, 1000);
		bench("thread bulk+decode", STORE_WRITER_THREAD, 1, rows, 1000);
	}
	rmdir(dir);
	return check_done();
}
