/*
 * server.c - the HTTP API of architecture.md section 5 and the dashboard,
 * on libmicrohttpd (server.h; the user's view is docs/api.md).
 *
 * One thread per connection (MHD_USE_THREAD_PER_CONNECTION), bounded by a
 * connection limit in total and per client address and an idle timeout, so
 * a slow client holds one thread and nothing else. The capture thread never
 * runs any of this code. Requests go through a route table {method, path,
 * handler}; each handler reads the database through api/query.h on a
 * read-only connection taken from a small pool (one connection is used by
 * one thread at a time; opening one per request costs a stat, an open and a
 * PRAGMA, which the pool saves), and every body is built by jansson and
 * handed to MHD with a free callback. Nothing here formats JSON by hand:
 * qnames, Hosts and SNIs in the rows are attacker-chosen, and so are the
 * query parameters echoed in errors (those are escaped to printable ASCII
 * first, then quoted by jansson).
 *
 * /api/v1/stream is a server-sent-event stream: its content callback runs
 * on the connection's own thread, polls the database every stream_poll_ms
 * for alert ids above the last one sent, and sleeps on a condition variable
 * that api_stop() broadcasts, so shutdown never waits for a poll or a
 * keep-alive. Streams are counted and bounded, and end after stream_max_s
 * (clients reconnect with Last-Event-ID and lose nothing).
 *
 * All state lives in struct api, handed to MHD as the handler's closure: no
 * globals.
 */
#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <microhttpd.h>

#include "../sensor/alerts.h"
#include "../sensor/log.h"
#include "../sensor/sync.h"
#include "../sensor/text.h"
#include "event_json.h"
#include "query.h"

#define DEF_MAX_CONN 128
#define DEF_PER_IP 64
#define DEF_TIMEOUT_S 10
#define DEF_REQ_MEMORY 32768
#define DEF_STREAMS 16
#define DEF_STREAM_MAX_S 3600
#define DEF_POLL_MS 500
#define DEF_KEEPALIVE_S 15
#define POOL_MAX 8
#define PAGE_DEFAULT 100
#define PAGE_MAX 1000
#define STREAM_BATCH 100
#define MAX_PARAMS 16
#define TOKEN_MAX 4096
#define LISTEN_BACKLOG 128
#define LOG_PER_S 10

#define CT_JSON "application/json"
#define CT_METRICS "text/plain; version=0.0.4; charset=utf-8"
#define CSP_DASHBOARD "default-src 'self'; frame-ancestors 'none'; base-uri 'none'"

struct api {
	struct MHD_Daemon *daemon;
	struct api_config cfg; /* limits with defaults filled in */
	char *db_path;
	char *token;           /* NULL: no token required */
	size_t token_len;
	unsigned port;
	char url[96];
	double t0;             /* CLOCK_MONOTONIC at start */

	pthread_mutex_t lock;  /* guards everything below */
	pthread_cond_t wake;   /* broadcast by api_stop() */
	int stopping;
	struct query *pool[POOL_MAX];
	unsigned npool;
	unsigned streams;
	uint64_t requests;
	time_t log_second;     /* MHD's messages: at most LOG_PER_S a second */
	unsigned log_count;
};

/* ---- small helpers ------------------------------------------------------ */


/* Attacker-chosen text made printable ASCII (text_escape) and cut to fit. */
static const char *esc(char *buf, size_t cap, const char *s)
{
	text_escape(buf, cap, (const uint8_t *)s, s ? strlen(s) : 0, NULL);
	return buf;
}

/* A decimal integer in lo..hi: digits only (no sign, no blanks). */
static int parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
	int64_t v = 0;

	if (!s || !*s || strlen(s) > 19)
		return -1;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		if (v > (INT64_MAX - (*p - '0')) / 10)
			return -1;
		v = v * 10 + (*p - '0');
	}
	if (v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* ---- configuration: address and token ----------------------------------- */

struct bind_addr {
	struct sockaddr_storage ss;
	socklen_t len;
	int loopback;
	char host[INET6_ADDRSTRLEN];
};

static int parse_addr(const char *text, struct bind_addr *b, char *err, size_t errlen)
{
	char host[INET6_ADDRSTRLEN + 2], ebuf[128];
	const char *port_s;
	int64_t port;
	size_t hl;

	memset(b, 0, sizeof(*b));
	if (!text)
		text = API_DEFAULT_ADDR;
	if (text[0] == '[') {
		const char *close = strchr(text, ']');
		if (!close || close[1] != ':')
			goto bad;
		hl = (size_t)(close - text - 1);
		port_s = close + 2;
		if (hl == 0 || hl >= sizeof(host))
			goto bad;
		memcpy(host, text + 1, hl);
		host[hl] = '\0';
	} else {
		const char *colon = strrchr(text, ':');
		if (!colon) {
			/* "8080": a port on the default address */
			hl = 0;
			port_s = text;
		} else {
			if (memchr(text, ':', (size_t)(colon - text)))
				goto bad; /* an IPv6 address must be bracketed */
			hl = (size_t)(colon - text);
			port_s = colon + 1;
		}
		if (hl >= sizeof(host))
			goto bad;
		memcpy(host, text, hl);
		host[hl] = '\0';
	}
	if (!host[0] || !strcmp(host, "localhost"))
		strcpy(host, "127.0.0.1");
	if (parse_int(port_s, 0, 65535, &port) < 0)
		goto bad;

	struct sockaddr_in *s4 = (struct sockaddr_in *)&b->ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&b->ss;
	if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		b->len = sizeof(*s4);
		b->loopback = (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
	} else if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1 &&
		   IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
		/* ::ffff:a.b.c.d is the IPv4 address (the IPv6 socket is
		 * IPv6-only, so it could not be bound as it is) */
		struct in_addr a;
		memcpy(&a, s6->sin6_addr.s6_addr + 12, sizeof(a));
		memset(&b->ss, 0, sizeof(b->ss));
		s4->sin_family = AF_INET;
		s4->sin_addr = a;
		s4->sin_port = htons((uint16_t)port);
		b->len = sizeof(*s4);
		b->loopback = (ntohl(a.s_addr) >> 24) == 127;
		if (!inet_ntop(AF_INET, &a, host, sizeof(host)))
			goto bad;
	} else if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		b->len = sizeof(*s6);
		b->loopback = IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr);
	} else {
		goto bad;
	}
	/* an address inet_pton read fits (INET6_ADDRSTRLEN) */
	if ((size_t)snprintf(b->host, sizeof(b->host), "%s", host) >= sizeof(b->host))
		goto bad;
	return 0;
bad:
	snprintf(err, errlen,
		 "--api %s: want ADDR:PORT with a numeric address (127.0.0.1:8080, [::1]:8080)",
		 esc(ebuf, sizeof(ebuf), text));
	return API_EUSAGE;
}

/* The first line of the token file, trimmed. *out is malloc'd. */
static int read_token(const char *path, char **out, size_t *outlen, char *err, size_t errlen)
{
	char buf[TOKEN_MAX + 2];
	struct stat sb;
	FILE *f;
	size_t n, start = 0;

	*out = NULL;
	f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "--token-file %s: %s", path, strerror(errno));
		return API_EUSAGE;
	}
	if (fstat(fileno(f), &sb) == 0 && (sb.st_mode & 077))
		log_warn("api", "token file %s is readable by group or others (chmod 600)", path);
	if (!fgets(buf, sizeof(buf), f)) {
		buf[0] = '\0';
		if (ferror(f)) {
			snprintf(err, errlen, "--token-file %s: %s", path, strerror(errno));
			fclose(f);
			return API_EUSAGE;
		}
	}
	fclose(f);
	n = strcspn(buf, "\r\n");
	if (n > TOKEN_MAX) {
		snprintf(err, errlen, "--token-file %s: the token is longer than %d bytes", path,
			 TOKEN_MAX);
		return API_EUSAGE;
	}
	while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '\t'))
		n--;
	while (start < n && (buf[start] == ' ' || buf[start] == '\t'))
		start++;
	if (start == n) {
		snprintf(err, errlen, "--token-file %s: no token on the first line", path);
		return API_EUSAGE;
	}
	*out = strndup(buf + start, n - start);
	explicit_bzero(buf, sizeof(buf));
	if (!*out) {
		snprintf(err, errlen, "--token-file %s: out of memory", path);
		return -1;
	}
	*outlen = n - start;
	return 0;
}

static int check_config(const struct api_config *cfg, struct bind_addr *b, char **token,
			size_t *token_len, char *err, size_t errlen)
{
	int rc = parse_addr(cfg->addr, b, err, errlen);

	*token = NULL;
	*token_len = 0;
	if (rc < 0)
		return rc;
	if (!cfg->token_file) {
		if (!b->loopback) {
			snprintf(err, errlen,
				 "--api %s is not a loopback address: give --token-file FILE "
				 "(a bearer token clients must send)",
				 cfg->addr);
			return API_EUSAGE;
		}
		return 0;
	}
	return read_token(cfg->token_file, token, token_len, err, errlen);
}

int api_check_config(const struct api_config *cfg, char *err, size_t errlen)
{
	struct bind_addr b;
	char *token = NULL;
	size_t len = 0;
	int rc = check_config(cfg, &b, &token, &len, err, errlen);

	if (token) {
		explicit_bzero(token, len);
		free(token);
	}
	return rc;
}

/* ---- the connection pool ------------------------------------------------- */

static struct query *pool_get(struct api *a, char *err, size_t errlen)
{
	struct query *q = NULL;

	pthread_mutex_lock(&a->lock);
	if (a->npool)
		q = a->pool[--a->npool];
	pthread_mutex_unlock(&a->lock);
	if (!q && query_open(&q, a->db_path, err, errlen) < 0)
		return NULL;
	return q;
}

/* Give a connection back; one that failed is closed instead. */
static void pool_put(struct api *a, struct query *q, int failed)
{
	if (!q)
		return;
	if (!failed) {
		pthread_mutex_lock(&a->lock);
		if (a->npool < POOL_MAX && !a->stopping) {
			a->pool[a->npool++] = q;
			q = NULL;
		}
		pthread_mutex_unlock(&a->lock);
	}
	query_close(q);
}

/* ---- requests and responses ---------------------------------------------- */

struct param {
	const char *key, *value; /* borrowed from MHD for the request */
};

struct req {
	struct api *a;
	struct MHD_Connection *c;
	const char *url;
	const char *tail;        /* what follows a prefix route's path */
	int head;
	struct param params[MAX_PARAMS];
	unsigned nparams;
	int too_many;
};

static const char *param(const struct req *r, const char *key)
{
	for (unsigned i = 0; i < r->nparams; i++)
		if (!strcmp(r->params[i].key, key))
			return r->params[i].value ? r->params[i].value : "";
	return NULL;
}

static enum MHD_Result collect_param(void *cls, enum MHD_ValueKind kind, const char *key,
				     const char *value)
{
	struct req *r = cls;
	(void)kind;
	if (r->nparams == MAX_PARAMS) {
		r->too_many = 1;
		return MHD_NO;
	}
	r->params[r->nparams].key = key ? key : "";
	r->params[r->nparams].value = value;
	r->nparams++;
	return MHD_YES;
}

static void common_headers(struct MHD_Response *resp, const char *ctype, int api)
{
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, api ? "no-store" : "no-cache");
	if (!api) {
		MHD_add_response_header(resp, "Content-Security-Policy", CSP_DASHBOARD);
		MHD_add_response_header(resp, "X-Frame-Options", "DENY");
		MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	}
}

/* Queue a response that owns buf (malloc'd; freed by MHD, or here on
 * failure). extra_name/extra_value add one header (NULL for none). */
static enum MHD_Result send_buf(struct req *r, unsigned status, const char *ctype, char *buf,
				size_t len, const char *extra_name, const char *extra_value)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer_with_free_callback(len, buf, free);
	if (!resp) {
		free(buf);
		return MHD_NO; /* MHD closes the connection */
	}
	common_headers(resp, ctype, 1);
	if (extra_name)
		MHD_add_response_header(resp, extra_name, extra_value);
	ret = MHD_queue_response(r->c, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* Queue o (a reference we steal) as a JSON body. */
static enum MHD_Result send_json_hdr(struct req *r, unsigned status, json_t *o,
				     const char *extra_name, const char *extra_value)
{
	char *body = o ? json_dumps(o, EVENT_JSON_DUMP_FLAGS) : NULL;

	json_decref(o);
	if (!body) {
		static const char oom[] = "{\"error\":\"out of memory\"}";
		struct MHD_Response *resp = MHD_create_response_from_buffer(
			sizeof(oom) - 1, (void *)oom, MHD_RESPMEM_PERSISTENT);
		enum MHD_Result ret;
		if (!resp)
			return MHD_NO;
		common_headers(resp, CT_JSON, 1);
		ret = MHD_queue_response(r->c, MHD_HTTP_INTERNAL_SERVER_ERROR, resp);
		MHD_destroy_response(resp);
		return ret;
	}
	return send_buf(r, status, CT_JSON, body, strlen(body), extra_name, extra_value);
}

static enum MHD_Result send_json(struct req *r, unsigned status, json_t *o)
{
	return send_json_hdr(r, status, o, NULL, NULL);
}

/* {"error": message}; any attacker text in the arguments must already be
 * escaped (esc()), so the message is ASCII and jansson only quotes it. */
static enum MHD_Result send_error_hdr(struct req *r, unsigned status, const char *extra_name,
				      const char *extra_value, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static enum MHD_Result send_error_hdr(struct req *r, unsigned status, const char *extra_name,
				      const char *extra_value, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return send_json_hdr(r, status, json_pack("{s:s}", "error", msg), extra_name, extra_value);
}

#define send_error(r, status, ...) send_error_hdr(r, status, NULL, NULL, __VA_ARGS__)

static enum MHD_Result bad_param(struct req *r, const char *name, const char *want)
{
	return send_error(r, MHD_HTTP_BAD_REQUEST, "bad parameter %s: %s", name, want);
}

static enum MHD_Result db_error(struct req *r, const char *err)
{
	log_warn("api", "%s", err);
	return send_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "database error");
}

/* ---- the common filters --------------------------------------------------- */

static int get_since_limit(struct req *r, int64_t *since, int64_t *limit, enum MHD_Result *ret)
{
	const char *v;

	*since = 0;
	*limit = PAGE_DEFAULT;
	if ((v = param(r, "since_id")) && parse_int(v, 0, INT64_MAX, since) < 0) {
		*ret = bad_param(r, "since_id", "want an integer >= 0");
		return -1;
	}
	if (limit && (v = param(r, "limit")) && parse_int(v, 1, PAGE_MAX, limit) < 0) {
		*ret = bad_param(r, "limit", "want an integer 1..1000");
		return -1;
	}
	return 0;
}

/* from and to: a range of packet time, [from, to), each in a form
 * text_parse_time takes; *timed is set when either is given. */
static int get_time_range(struct req *r, int *timed, int64_t *from, int64_t *to,
			  enum MHD_Result *ret)
{
	static const char want[] = "want a time as 2026-11-29T10:00:08Z (RFC 3339), "
				   "2026-11-29 or seconds since 1970";
	const char *v;

	*timed = 0;
	*from = INT64_MIN;
	*to = INT64_MAX;
	if ((v = param(r, "from"))) {
		if (text_parse_time(v, from) < 0) {
			*ret = bad_param(r, "from", want);
			return -1;
		}
		*timed = 1;
	}
	if ((v = param(r, "to"))) {
		if (text_parse_time(v, to) < 0) {
			*ret = bad_param(r, "to", want);
			return -1;
		}
		*timed = 1;
	}
	if (*from >= *to) {
		*ret = bad_param(r, "from", "not before to: nothing lies between");
		return -1;
	}
	return 0;
}

/* class, severity, src and the time range into f; src is normalized
 * (inet_ntop) into srcbuf. */
static int get_alert_filter(struct req *r, struct alert_filter *f, char *srcbuf, size_t srccap,
			    enum MHD_Result *ret)
{
	const char *v;
	int k;

	if ((v = param(r, "class"))) {
		if ((k = alerts_class_index(v)) < 0) {
			*ret = bad_param(r, "class", "not an alert class (docs/api.md)");
			return -1;
		}
		f->class_name = alerts_class_name(k);
	}
	if ((v = param(r, "severity"))) {
		if ((k = query_severity_level(v)) < 0) {
			*ret = bad_param(r, "severity",
					 "want info, low, medium, high or critical, or 1..5");
			return -1;
		}
		f->severity = event_severity_name(k);
	}
	if ((v = param(r, "src"))) {
		if (query_canon_addr(v, srcbuf, srccap) < 0) {
			*ret = bad_param(r, "src", "not an IPv4 or IPv6 address");
			return -1;
		}
		f->src = srcbuf;
	}
	return get_time_range(r, &f->timed, &f->from_us, &f->to_us, ret);
}

/* ---- /api/v1/alerts and /api/v1/events ------------------------------------ */

struct collect {
	json_t *arr;
	int64_t last_id;
	int failed;
};

static int collect_row(void *arg, json_t *row)
{
	struct collect *c = arg;
	if (json_array_append(c->arr, row) < 0) {
		c->failed = 1;
		return 1;
	}
	c->last_id = json_integer_value(json_object_get(row, "id"));
	return 0;
}

/* {"<key>": rows, "next_since_id": N}: next_since_id is the id of the last
 * row returned, or since_id when none, so paging neither skips nor repeats:
 * ids only grow, and one writer commits them in id order. With by_seq the
 * cursor is "next_since_seq", a write sequence, which grows the same way. */
static enum MHD_Result send_page_as(struct req *r, const char *key, struct collect *c,
				    const char *cursor)
{
	json_t *o;
	if (c->failed) {
		json_decref(c->arr);
		return send_json(r, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL);
	}
	o = json_object();
	if (!o || json_object_set_new(o, key, c->arr) < 0 ||
	    json_object_set_new(o, cursor, json_integer(c->last_id)) < 0) {
		json_decref(o);
		return send_json(r, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL);
	}
	return send_json(r, MHD_HTTP_OK, o);
}

static enum MHD_Result send_page(struct req *r, const char *key, struct collect *c)
{
	return send_page_as(r, key, c, "next_since_id");
}

/*
 * since_id pages through the alerts by id: each once, as it was when read.
 * since_seq pages through them in the order they were written (schema 3's
 * write sequence): a grown alert comes again, in its latest state, after
 * the ones written before it, so a dashboard that polls with it sees every
 * change (count, last_ts, outcome). One or the other.
 */
static enum MHD_Result h_alerts(struct req *r)
{
	struct alert_filter f = {0};
	struct collect c = {0};
	struct query *q;
	char src[INET6_ADDRSTRLEN], err[512];
	enum MHD_Result ret = MHD_NO;
	const char *seq = param(r, "since_seq");
	int64_t last_seq = 0;

	if (get_since_limit(r, &f.since_id, &f.limit, &ret) < 0 ||
	    get_alert_filter(r, &f, src, sizeof(src), &ret) < 0)
		return ret;
	if (seq) {
		if (param(r, "since_id"))
			return bad_param(r, "since_seq", "not with since_id: one cursor or the other");
		if (parse_int(seq, 0, INT64_MAX, &f.since_id) < 0)
			return bad_param(r, "since_seq", "want an integer >= 0");
		f.by_seq = 1;
	}
	if (!(q = pool_get(r->a, err, sizeof(err))))
		return db_error(r, err);
	if (!(c.arr = json_array())) {
		pool_put(r->a, q, 0);
		return send_json(r, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL);
	}
	c.last_id = f.since_id;
	if (query_alerts(q, &f, collect_row, &c, &last_seq, err, sizeof(err)) < 0) {
		pool_put(r->a, q, 1);
		json_decref(c.arr);
		return db_error(r, err);
	}
	pool_put(r->a, q, 0);
	if (!f.by_seq)
		return send_page(r, "alerts", &c);
	c.last_id = last_seq;
	return send_page_as(r, "alerts", &c, "next_since_seq");
}

static enum MHD_Result h_alert_one(struct req *r)
{
	struct query *q;
	json_t *o = NULL;
	char err[512];
	int64_t id;
	int rc;

	if (strchr(r->tail, '/'))
		return send_error(r, MHD_HTTP_NOT_FOUND, "not found");
	if (parse_int(r->tail, 1, INT64_MAX, &id) < 0)
		return bad_param(r, "id", "want a positive integer");
	if (!(q = pool_get(r->a, err, sizeof(err))))
		return db_error(r, err);
	rc = query_alert_get(q, id, &o, err, sizeof(err));
	pool_put(r->a, q, rc < 0);
	if (rc < 0)
		return db_error(r, err);
	if (rc > 0)
		return send_error(r, MHD_HTTP_NOT_FOUND, "no alert %" PRId64, id);
	return send_json(r, MHD_HTTP_OK, o);
}

_Static_assert(QUERY_NAME_MAX == 1024, "h_events's message gives the bound");

static enum MHD_Result h_events(struct req *r)
{
	struct event_filter f = {0};
	struct collect c = {0};
	struct query *q;
	char err[512];
	enum MHD_Result ret = MHD_NO;
	const char *kind, *v;
	char host[INET6_ADDRSTRLEN], name[QUERY_NAME_MAX + 1];
	int lo, hi;

	if (get_since_limit(r, &f.since_id, &f.limit, &ret) < 0)
		return ret;
	if ((kind = param(r, "kind"))) {
		if (query_kind_range(kind, &lo, &hi) < 0)
			return bad_param(r, "kind", "want dns, http, tls or icmp");
		f.kind = kind;
	}
	if ((v = param(r, "host"))) {
		if (query_canon_addr(v, host, sizeof(host)) < 0)
			return bad_param(r, "host", "not an IPv4 or IPv6 address");
		f.host = host;
	}
	if ((v = param(r, "name"))) {
		if (query_canon_name(v, name, sizeof(name)) < 0)
			return bad_param(r, "name", "want a name such as example.com (not empty, "
						    "no leading dot, no control character, at most "
						    "1024 characters)");
		f.name = name;
	}
	if (get_time_range(r, &f.timed, &f.from_us, &f.to_us, &ret) < 0)
		return ret;
	if (!(q = pool_get(r->a, err, sizeof(err))))
		return db_error(r, err);
	if (!(c.arr = json_array())) {
		pool_put(r->a, q, 0);
		return send_json(r, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL);
	}
	c.last_id = f.since_id;
	if (query_events(q, &f, collect_row, &c, NULL, err, sizeof(err)) < 0) {
		pool_put(r->a, q, 1);
		json_decref(c.arr);
		return db_error(r, err);
	}
	pool_put(r->a, q, 0);
	return send_page(r, "events", &c);
}

/* ---- /api/v1/stats --------------------------------------------------------- */

/* The stats table's dotted names become nested objects: "group.key.leaf"
 * -> {group: {key: {leaf: v}}} (the key may hold dots: an interface
 * "eth0.100"), "group.leaf" -> {group: {leaf: v}}, "name" -> {name: v}.
 * module.* is shown as "analyzers"; the alert counts come from the alerts
 * table, so the sensor's alerts.<class> rows are left out (but not
 * alerts.detections). */
struct stats_ctx {
	json_t *root;
	int64_t drops;
	int failed;
};

static json_t *child(json_t *parent, const char *key)
{
	json_t *o = json_object_get(parent, key);
	if (o)
		return json_is_object(o) ? o : NULL;
	o = json_object();
	if (!o || json_object_set_new(parent, key, o) < 0)
		return NULL;
	return o;
}

static int set_int(json_t *o, const char *key, int64_t v)
{
	json_t *old = json_object_get(o, key);
	if (old && !json_is_integer(old))
		return 0; /* a name clash: keep the object */
	return json_object_set_new(o, key, json_integer(v));
}

static int stat_row(void *arg, const char *name, int64_t v)
{
	struct stats_ctx *s = arg;
	char group[64], key[128], leaf[64];
	const char *d1 = strchr(name, '.'), *dn = strrchr(name, '.');
	json_t *g, *k;

	if (!d1) {
		if (set_int(s->root, esc(group, sizeof(group), name), v) < 0)
			s->failed = 1;
		return 0;
	}
	text_escape(group, sizeof(group), (const uint8_t *)name, (size_t)(d1 - name), NULL);
	esc(leaf, sizeof(leaf), dn + 1);
	if (!strcmp(group, "module"))
		strcpy(group, "analyzers");
	if (!strcmp(group, "alerts") && strcmp(name, "alerts.detections"))
		return 0;
	if (!(g = child(s->root, group)))
		return 0;
	if (d1 == dn) {
		if (set_int(g, leaf, v) < 0)
			s->failed = 1;
		return 0;
	}
	text_escape(key, sizeof(key), (const uint8_t *)d1 + 1, (size_t)(dn - d1 - 1), NULL);
	if (!(k = child(g, key)))
		return 0;
	if (set_int(k, leaf, v) < 0)
		s->failed = 1;
	if (!strcmp(group, "capture") && !strcmp(leaf, "dropped"))
		s->drops += v;
	return 0;
}

static int count_row(void *arg, const char *cls, int sev, int64_t n)
{
	struct stats_ctx *s = arg;
	json_t *alerts = json_object_get(s->root, "alerts");
	json_t *bc = json_object_get(alerts, "by_class"), *bs = json_object_get(alerts, "by_severity");
	const char *sn = event_severity_name(sev);
	char cb[128];

	esc(cb, sizeof(cb), cls);
	if (set_int(bc, cb, json_integer_value(json_object_get(bc, cb)) + n) < 0 ||
	    (sn && set_int(bs, sn, json_integer_value(json_object_get(bs, sn)) + n) < 0) ||
	    set_int(alerts, "total", json_integer_value(json_object_get(alerts, "total")) + n) < 0)
		s->failed = 1;
	return 0;
}

/* The stats object into *out (a new reference). Returns 0, -1 on a
 * database error (err filled) or -2 when out of memory. */
static int build_stats(struct api *a, struct query *q, json_t **out, char *err, size_t errlen)
{
	struct stats_ctx s = {0};
	json_t *alerts, *bc, *bs;

	*out = NULL;
	/* Keys in a fixed order first; the rows fill them in. */
	s.root = json_pack("{s:I,s:I,s:I,s:{},s:{},s:{},s:{},s:{},s:{s:I,s:I,s:{},s:{}}}",
			   "packets", (json_int_t)0, "bytes", (json_int_t)0, "drops",
			   (json_int_t)0, "capture", "decode", "analyzers", "flows", "events",
			   "alerts", "total", (json_int_t)0, "detections", (json_int_t)0,
			   "by_class", "by_severity");
	if (!s.root)
		return -2;
	alerts = json_object_get(s.root, "alerts");
	bc = json_object_get(alerts, "by_class");
	bs = json_object_get(alerts, "by_severity");
	for (int k = 0; k < AC_COUNT; k++)
		if (set_int(bc, alerts_class_name(k), 0) < 0)
			s.failed = 1;
	for (int v = 1; v <= 5; v++)
		if (set_int(bs, event_severity_name(v), 0) < 0)
			s.failed = 1;
	if (query_stats(q, stat_row, &s, err, errlen) < 0 ||
	    query_alert_counts(q, count_row, &s, err, errlen) < 0) {
		json_decref(s.root);
		return -1;
	}
	if (set_int(s.root, "drops", s.drops) < 0 ||
	    set_int(s.root, "uptime_s", (int64_t)(sync_now() - a->t0)) < 0)
		s.failed = 1;
	if (s.failed) {
		json_decref(s.root);
		return -2;
	}
	*out = s.root;
	return 0;
}

static enum MHD_Result h_stats(struct req *r)
{
	struct query *q;
	json_t *o;
	char err[512];
	int rc;

	if (!(q = pool_get(r->a, err, sizeof(err))))
		return db_error(r, err);
	rc = build_stats(r->a, q, &o, err, sizeof(err));
	pool_put(r->a, q, rc == -1);
	if (rc == -1)
		return db_error(r, err);
	return send_json(r, rc == 0 ? MHD_HTTP_OK : MHD_HTTP_INTERNAL_SERVER_ERROR, o);
}

/* ---- /metrics ------------------------------------------------------------- */

static void prom_family(FILE *m, const char *name, const char *type, const char *help)
{
	fprintf(m, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value: backslash, double quote and newline escaped. */
static void prom_label(FILE *m, const char *label, const char *v, int first)
{
	fprintf(m, "%s%s=\"", first ? "" : ",", label);
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', m);
		if (*v == '\n')
			fputs("\\n", m);
		else
			fputc(*v, m);
	}
	fputc('"', m);
}

static void prom_sample(FILE *m, const char *name, const char *l1, const char *v1, const char *l2,
			const char *v2, int64_t value)
{
	fputs(name, m);
	if (l1) {
		fputc('{', m);
		prom_label(m, l1, v1, 1);
		if (l2)
			prom_label(m, l2, v2, 0);
		fputc('}', m);
	}
	fprintf(m, " %" PRId64 "\n", value);
}

/* One family from a two-level group: {key: {leaf: v}} -> name{l1=key,l2=leaf}. */
static void prom_nested(FILE *m, json_t *group, const char *name, const char *help,
			const char *l1, const char *l2)
{
	const char *key, *leaf;
	json_t *obj, *v;

	prom_family(m, name, "counter", help);
	json_object_foreach(group, key, obj) {
		if (!json_is_object(obj))
			continue;
		json_object_foreach(obj, leaf, v)
			prom_sample(m, name, l1, key, l2, leaf, json_integer_value(v));
	}
}

/* One family from {key: {want: v}} -> name{label=key}. */
static void prom_pick(FILE *m, json_t *group, const char *name, const char *help,
		      const char *label, const char *want)
{
	const char *key;
	json_t *obj;

	prom_family(m, name, "counter", help);
	json_object_foreach(group, key, obj) {
		json_t *v = json_object_get(obj, want);
		if (v)
			prom_sample(m, name, label, key, NULL, NULL, json_integer_value(v));
	}
}

static void prom_one(FILE *m, const char *name, const char *type, const char *help, int64_t v)
{
	prom_family(m, name, type, help);
	prom_sample(m, name, NULL, NULL, NULL, NULL, v);
}

struct prom_alerts {
	FILE *m;
};

static int prom_alert_row(void *arg, const char *cls, int sev, int64_t n)
{
	struct prom_alerts *p = arg;
	const char *sn = event_severity_name(sev);
	char cb[128];
	prom_sample(p->m, "egresswatch_alerts", "class", esc(cb, sizeof(cb), cls), "severity",
		    sn ? sn : "unknown", n);
	return 0;
}

static enum MHD_Result h_metrics(struct req *r)
{
	struct api *a = r->a;
	struct prom_alerts pa;
	struct query *q;
	json_t *st = NULL, *g, *v;
	char err[512], *buf = NULL, name[160];
	const char *key;
	size_t len = 0;
	unsigned streams;
	uint64_t requests;
	FILE *m;
	int rc;

	if (!(q = pool_get(a, err, sizeof(err))))
		return db_error(r, err);
	rc = build_stats(a, q, &st, err, sizeof(err));
	if (rc == -1) {
		pool_put(a, q, 1);
		return db_error(r, err);
	}
	if (rc < 0 || !(m = open_memstream(&buf, &len))) {
		pool_put(a, q, 0);
		json_decref(st);
		return send_json(r, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL);
	}
	prom_one(m, "egresswatch_packets_total", "counter", "Packets captured or read.",
		 json_integer_value(json_object_get(st, "packets")));
	prom_one(m, "egresswatch_bytes_total", "counter", "Bytes of the packets captured or read.",
		 json_integer_value(json_object_get(st, "bytes")));
	g = json_object_get(st, "capture");
	prom_pick(m, g, "egresswatch_capture_received_total",
		  "Packets the kernel delivered to the capture, per interface (pcap_stats).",
		  "iface", "received");
	prom_pick(m, g, "egresswatch_capture_dropped_total",
		  "Packets dropped by the kernel ring, per interface (pcap_stats).", "iface",
		  "dropped");
	g = json_object_get(st, "decode");
	prom_nested(m, g, "egresswatch_decode_total",
		    "Headers decoded per layer and result (ok, truncated, malformed).", "layer",
		    "result");
	prom_one(m, "egresswatch_decode_not_ip_total", "counter",
		 "Frames that carried no IP packet.",
		 json_integer_value(json_object_get(g, "not_ip")));
	prom_nested(m, json_object_get(st, "analyzers"), "egresswatch_analyzer_total",
		    "Packets or observations per analyzer or detector and result.", "analyzer",
		    "result");
	g = json_object_get(st, "flows");
	prom_one(m, "egresswatch_flows_active", "gauge", "Flows in the flow table.",
		 json_integer_value(json_object_get(g, "active")));
	prom_family(m, "egresswatch_flows_total", "counter",
		    "Flows created, expired and evicted (table full); RSTs ignored (ones "
		    "the connecting stack would drop); TCP urgent bytes taken out, data "
		    "segments without ACK ignored, SYNs whose data was not taken, "
		    "segments with bad checksums ignored (bad_checksum), segments "
		    "differing from the bytes held (inconsistent), UDP datagrams with "
		    "bad checksums not read (udp_bad_checksum), UDP datagrams in IP "
		    "packets Linux refuses for their options not read (udp_rx_drop), "
		    "out-of-order TCP segments not held (ooo_dropped).");
	json_object_foreach(g, key, v)
		if (strcmp(key, "active") && json_is_integer(v))
			prom_sample(m, "egresswatch_flows_total", "result", key, NULL, NULL,
				    json_integer_value(v));
	g = json_object_get(st, "fragments");
	prom_family(m, "egresswatch_fragments_total", "counter",
		    "IP fragments held, overlapping, duplicate or conflicting (overlapping "
		    "with other bytes), refused for a bad header checksum; datagrams "
		    "reassembled, expired or evicted (a bound was hit).");
	json_object_foreach(g, key, v)
		if (json_is_integer(v))
			prom_sample(m, "egresswatch_fragments_total", "result", key, NULL, NULL,
				    json_integer_value(v));
	g = json_object_get(st, "events");
	prom_family(m, "egresswatch_events_total", "counter", "Events stored, per kind.");
	json_object_foreach(g, key, v)
		if (strcmp(key, "malformed") && json_is_integer(v))
			prom_sample(m, "egresswatch_events_total", "kind", key, NULL, NULL,
				    json_integer_value(v));
	prom_one(m, "egresswatch_events_malformed_total", "counter",
		 "Events from messages that were malformed.",
		 json_integer_value(json_object_get(g, "malformed")));
	g = json_object_get(st, "alerts");
	prom_one(m, "egresswatch_detections_total", "counter",
		 "Alerts raised by the detectors, before aggregation into rows.",
		 json_integer_value(json_object_get(g, "detections")));
	prom_family(m, "egresswatch_alerts", "gauge",
		    "Alert rows in the database, per class and severity.");
	pa.m = m;
	if (query_alert_counts(q, prom_alert_row, &pa, err, sizeof(err)) < 0)
		log_warn("api", "%s", err);
	pool_put(a, q, 0);
	g = json_object_get(st, "store");
	json_object_foreach(g, key, v) {
		size_t n = (size_t)snprintf(name, sizeof(name), "egresswatch_store_%s", key);
		if (!json_is_integer(v) || n >= sizeof(name))
			continue;
		for (char *p = name; *p; p++)
			if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			      (*p >= '0' && *p <= '9') || *p == '_'))
				*p = '_';
		prom_one(m, name, "gauge", "Store writer counter (stats table).",
			 json_integer_value(v));
	}
	/* watch --eve: eve.events, eve.alerts (lines written), eve.missed,
	 * eve.errors, eve.reopens; absent without --eve */
	g = json_object_get(st, "eve");
	json_object_foreach(g, key, v) {
		size_t n = (size_t)snprintf(name, sizeof(name), "egresswatch_eve_%s_total", key);
		if (!json_is_integer(v) || n >= sizeof(name) ||
		    key[strspn(key, "abcdefghijklmnopqrstuvwxyz_")])
			continue;
		prom_one(m, name, "counter", "--eve follower counter (stats table).",
			 json_integer_value(v));
	}
	prom_one(m, "egresswatch_time_restarts_total", "counter",
		 "Times packet time went back more than a minute and flows, detector windows "
		 "and alert rows started over.",
		 json_integer_value(json_object_get(st, "time_restarts")));
	prom_family(m, "egresswatch_last_packet_timestamp_seconds", "gauge",
		    "Time of the newest packet seen (packet time, Unix seconds).");
	fprintf(m, "egresswatch_last_packet_timestamp_seconds %.6f\n",
		(double)json_integer_value(json_object_get(st, "last_ts_us")) / 1e6);
	pthread_mutex_lock(&a->lock);
	streams = a->streams;
	requests = a->requests;
	pthread_mutex_unlock(&a->lock);
	prom_one(m, "egresswatch_uptime_seconds", "gauge", "Seconds since the API server started.",
		 json_integer_value(json_object_get(st, "uptime_s")));
	prom_one(m, "egresswatch_api_streams", "gauge", "Open /api/v1/stream clients.",
		 (int64_t)streams);
	const union MHD_DaemonInfo *di =
		MHD_get_daemon_info(a->daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
	prom_one(m, "egresswatch_api_connections", "gauge", "Open HTTP connections.",
		 di ? (int64_t)di->num_connections : 0);
	prom_one(m, "egresswatch_api_requests_total", "counter", "HTTP requests received.",
		 (int64_t)requests);
	prom_family(m, "egresswatch_build_info", "gauge", "The egresswatch version (always 1).");
	prom_sample(m, "egresswatch_build_info", "version", EGRESSWATCH_VERSION, NULL, NULL, 1);
	json_decref(st);
	if (ferror(m)) {
		fclose(m);
		free(buf);
		return send_json(r, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL);
	}
	if (fclose(m) != 0) {
		free(buf);
		return send_json(r, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL);
	}
	return send_buf(r, MHD_HTTP_OK, CT_METRICS, buf, len, NULL, NULL);
}

/* ---- /healthz ------------------------------------------------------------ */

static enum MHD_Result h_healthz(struct req *r)
{
	struct query *q;
	char err[512];
	int64_t max_id;
	int rc = -1;

	if ((q = pool_get(r->a, err, sizeof(err)))) {
		rc = query_alert_max_id(q, &max_id, err, sizeof(err));
		pool_put(r->a, q, rc < 0);
	}
	if (rc < 0) {
		log_warn("api", "healthz: %s", err);
		return send_json(r, MHD_HTTP_SERVICE_UNAVAILABLE,
				 json_pack("{s:s,s:s}", "status", "error", "error",
					   "database unavailable"));
	}
	return send_json(r, MHD_HTTP_OK,
			 json_pack("{s:s,s:I}", "status", "ok", "uptime_s",
				   (json_int_t)(sync_now() - r->a->t0)));
}

/* ---- /api/v1/stream (server-sent events) --------------------------------- */

struct stream {
	struct api *a;
	struct query *q;
	struct alert_filter f;
	char src[INET6_ADDRSTRLEN];
	int fd;                /* the client's socket, to notice it leave */
	int64_t last_id;
	double started, last_send, next_poll;
	char *buf;
	size_t len, off, cap;
	int failing, oom;
};

static int stream_append(struct stream *s, const char *data, size_t n)
{
	if (s->len + n > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;
		while (cap < s->len + n)
			cap *= 2;
		char *nb = realloc(s->buf, cap);
		if (!nb)
			return -1;
		s->buf = nb;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, data, n);
	s->len += n;
	return 0;
}

/* One alert as an event: "id: N\nevent: alert\ndata: {json}\n\n", N the
 * row's cursor (its id, or with since_seq its write sequence, so that
 * Last-Event-ID resumes either way). Compact JSON has no raw newline
 * (jansson escapes them), so it is one data line. */
static int stream_row(void *arg, json_t *row, int64_t id)
{
	struct stream *s = arg;
	char head[64], *js = json_dumps(row, EVENT_JSON_DUMP_FLAGS);
	int n = snprintf(head, sizeof(head), "id: %" PRId64 "\nevent: alert\ndata: ", id);

	if (!js || stream_append(s, head, (size_t)n) < 0 || stream_append(s, js, strlen(js)) < 0 ||
	    stream_append(s, "\n\n", 2) < 0) {
		free(js);
		s->oom = 1;
		return 1;
	}
	free(js);
	s->last_id = id;
	return 0;
}

static void stream_poll(struct stream *s)
{
	char err[512];
	size_t keep = s->len;
	int64_t prev = s->last_id;

	s->f.since_id = s->last_id;
	s->f.limit = STREAM_BATCH;
	s->oom = 0;
	if (query_alerts_cursor(s->q, &s->f, stream_row, s, NULL, err, sizeof(err)) < 0) {
		if (!s->failing)
			log_warn("api", "stream: %s", err);
		s->failing = 1;
		s->len = keep; /* resend the whole batch next time */
		s->last_id = prev;
		return;
	}
	s->failing = 0;
}

/* Did the client close its end? An event-stream client sends nothing after
 * its request, so a readable socket with nothing to read is the end. */
static int stream_gone(const struct stream *s)
{
	char c;
	ssize_t n;

	if (s->fd < 0)
		return 0;
	n = recv(s->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n == 0)
		return 1;
	return n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
}

static int stream_stopping(struct api *a)
{
	int stop;
	pthread_mutex_lock(&a->lock);
	stop = a->stopping;
	pthread_mutex_unlock(&a->lock);
	return stop;
}

/* Sleep until `until` (monotonic seconds) or api_stop(). */
static void stream_wait(struct api *a, double until)
{
	struct timespec ts;
	double secs;

	if (until <= sync_now())
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	secs = until - sync_now();
	ts.tv_sec += (time_t)secs;
	ts.tv_nsec += (long)((secs - (double)(time_t)secs) * 1e9);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&a->lock);
	if (!a->stopping)
		pthread_cond_timedwait(&a->wake, &a->lock, &ts);
	pthread_mutex_unlock(&a->lock);
}

/*
 * MHD's content callback, on the connection's own thread (so it may block:
 * returning 0 would make MHD spin). It hands out what is buffered, else polls
 * the database, else sends a keep-alive comment when one is due, else
 * sleeps until the next poll or api_stop().
 */
static ssize_t stream_read(void *cls, uint64_t pos, char *out, size_t max)
{
	struct stream *s = cls;
	struct api *a = s->a;
	(void)pos;

	for (;;) {
		double now;
		if (s->off < s->len) {
			size_t n = s->len - s->off < max ? s->len - s->off : max;
			memcpy(out, s->buf + s->off, n);
			s->off += n;
			if (s->off == s->len)
				s->off = s->len = 0;
			return (ssize_t)n;
		}
		now = sync_now();
		if (stream_stopping(a) || now - s->started >= (double)a->cfg.stream_max_s)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (stream_gone(s))
			return MHD_CONTENT_READER_END_OF_STREAM; /* nobody to tell */
		if (now >= s->next_poll) {
			stream_poll(s);
			s->next_poll = now + a->cfg.stream_poll_ms / 1000.0;
			if (s->len) {
				s->last_send = now;
				continue;
			}
			if (s->oom)
				return MHD_CONTENT_READER_END_WITH_ERROR;
		}
		if (now - s->last_send >= (double)a->cfg.keepalive_s) {
			if (stream_append(s, ": keep-alive\n\n", 14) < 0)
				return MHD_CONTENT_READER_END_WITH_ERROR;
			s->last_send = now;
			continue;
		}
		double until = s->next_poll;
		if (s->last_send + a->cfg.keepalive_s < until)
			until = s->last_send + a->cfg.keepalive_s;
		stream_wait(a, until);
	}
}

static void stream_free(void *cls)
{
	struct stream *s = cls;
	struct api *a = s->a;

	pool_put(a, s->q, s->failing);
	free(s->buf);
	free(s);
	pthread_mutex_lock(&a->lock);
	a->streams--;
	pthread_mutex_unlock(&a->lock);
}

static enum MHD_Result h_stream(struct req *r)
{
	struct api *a = r->a;
	struct stream *s;
	struct MHD_Response *resp;
	enum MHD_Result ret = MHD_NO;
	const char *lei, *since, *seq;
	char err[512];
	int64_t start = -1;
	int full;

	s = calloc(1, sizeof(*s));
	if (!s)
		return send_json(r, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL);
	s->a = a;
	if (get_alert_filter(r, &s->f, s->src, sizeof(s->src), &ret) < 0)
		goto fail_ret;
	lei = MHD_lookup_connection_value(r->c, MHD_HEADER_KIND, MHD_HTTP_HEADER_LAST_EVENT_ID);
	since = param(r, "since_id");
	/* Start after Last-Event-ID (a reconnecting EventSource), else since_id,
	 * else the newest alert now. With since_seq the stream follows the
	 * write sequence instead (every alert written after it, new or grown),
	 * and Last-Event-ID is a sequence too. */
	if (since && parse_int(since, 0, INT64_MAX, &start) < 0) {
		ret = bad_param(r, "since_id", "want an integer >= 0");
		goto fail_ret;
	}
	if ((seq = param(r, "since_seq"))) {
		if (since) {
			ret = bad_param(r, "since_seq", "not with since_id: one cursor or the other");
			goto fail_ret;
		}
		if (parse_int(seq, 0, INT64_MAX, &start) < 0) {
			ret = bad_param(r, "since_seq", "want an integer >= 0");
			goto fail_ret;
		}
		s->f.by_seq = 1;
	}
	if (lei && parse_int(lei, 0, INT64_MAX, &start) < 0) {
		ret = send_error(r, MHD_HTTP_BAD_REQUEST,
				 "bad header Last-Event-ID: want an integer >= 0");
		goto fail_ret;
	}
	if (r->head) {
		free(s);
		resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
		if (!resp)
			return MHD_NO;
		common_headers(resp, "text/event-stream", 1);
		ret = MHD_queue_response(r->c, MHD_HTTP_OK, resp);
		MHD_destroy_response(resp);
		return ret;
	}
	pthread_mutex_lock(&a->lock);
	full = a->streams >= a->cfg.max_streams;
	if (!full)
		a->streams++;
	pthread_mutex_unlock(&a->lock);
	if (full) {
		free(s);
		return send_error_hdr(r, MHD_HTTP_SERVICE_UNAVAILABLE, MHD_HTTP_HEADER_RETRY_AFTER,
				      "10", "too many streams (at most %u)", a->cfg.max_streams);
	}
	/* From here on stream_free() undoes everything. */
	if (!(s->q = pool_get(a, err, sizeof(err)))) {
		s->failing = 1;
		stream_free(s);
		return db_error(r, err);
	}
	if (start < 0 && query_alert_max_id(s->q, &start, err, sizeof(err)) < 0) {
		s->failing = 1;
		stream_free(s);
		return db_error(r, err);
	}
	s->last_id = start;
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(r->c, MHD_CONNECTION_INFO_CONNECTION_FD);
	s->fd = ci ? ci->connect_fd : -1;
	s->started = s->last_send = sync_now();
	s->next_poll = s->started; /* a reconnecting client gets what it missed at once */
	if (stream_append(s, "retry: 3000\n: connected\n\n", 25) < 0 ||
	    !(resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, stream_read, s,
						       stream_free))) {
		stream_free(s);
		return send_json(r, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL);
	}
	common_headers(resp, "text/event-stream", 1);
	MHD_add_response_header(resp, "X-Accel-Buffering", "no");
	/* The idle timeout would cut a quiet stream: allow a few keep-alives. */
	MHD_set_connection_option(r->c, MHD_CONNECTION_OPTION_TIMEOUT,
				  (unsigned int)(a->cfg.keepalive_s * 4 + a->cfg.timeout_s));
	ret = MHD_queue_response(r->c, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp); /* MHD keeps it until the stream ends */
	return ret;
fail_ret:
	free(s);
	return ret;
}

/* ---- the dashboard -------------------------------------------------------- */

static const struct api_static_file *static_find(const char *name)
{
	for (const struct api_static_file *f = api_static_files; f->name; f++)
		if (!strcmp(f->name, name))
			return f;
	return NULL;
}

static enum MHD_Result send_static(struct req *r, const char *name)
{
	const struct api_static_file *f = name ? static_find(name) : NULL;
	struct MHD_Response *resp;
	enum MHD_Result ret;

	if (!f)
		return send_error(r, MHD_HTTP_NOT_FOUND, "not found");
	/* Compiled-in constants: persistent, nothing to copy or free. */
	resp = MHD_create_response_from_buffer(f->len, (void *)f->data, MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	common_headers(resp, f->content_type, 0);
	ret = MHD_queue_response(r->c, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result h_index(struct req *r)
{
	return send_static(r, "index.html");
}

static enum MHD_Result h_static(struct req *r)
{
	return send_static(r, r->tail);
}

/* ---- routing -------------------------------------------------------------- */

typedef enum MHD_Result route_fn(struct req *r);

static const char *const P_NONE[] = {NULL};
static const char *const P_ALERTS[] = {"class", "severity", "src", "from", "to", "since_id",
					 "since_seq", "limit", NULL};
static const char *const P_EVENTS[] = {"kind", "host", "name", "from", "to", "since_id", "limit",
				       NULL};
static const char *const P_STREAM[] = {"class", "severity", "src", "from", "to", "since_id",
					"since_seq", NULL};

static const struct route {
	const char *method;        /* GET routes answer HEAD too (MHD sends no body) */
	const char *path;
	int prefix;                /* path is a prefix; the rest is req.tail */
	int open;                  /* no token needed */
	int files;                 /* the tail must name a compiled-in file */
	const char *const *params; /* the query parameters allowed; NULL: any */
	route_fn *fn;
} routes[] = {
	{"GET", "/api/v1/alerts", 0, 0, 0, P_ALERTS, h_alerts},
	{"GET", "/api/v1/alerts/", 1, 0, 0, P_NONE, h_alert_one},
	{"GET", "/api/v1/events", 0, 0, 0, P_EVENTS, h_events},
	{"GET", "/api/v1/stats", 0, 0, 0, P_NONE, h_stats},
	{"GET", "/api/v1/stream", 0, 0, 0, P_STREAM, h_stream},
	{"GET", "/healthz", 0, 1, 0, P_NONE, h_healthz},
	{"GET", "/metrics", 0, 0, 0, P_NONE, h_metrics},
	{"GET", "/", 0, 0, 0, NULL, h_index},     /* any parameters: the page's own */
	{"GET", "/static/", 1, 0, 1, NULL, h_static},
	{"GET", "/", 1, 0, 1, NULL, h_static},    /* /app.js as well as /static/app.js */
};

static const struct route *route_find(const char *url, const char **tail)
{
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		const struct route *rt = &routes[i];
		size_t n = strlen(rt->path);
		if (rt->prefix ? strncmp(url, rt->path, n) != 0 : strcmp(url, rt->path) != 0)
			continue;
		*tail = url + (rt->prefix ? n : strlen(url));
		if (rt->files && !static_find(*tail))
			continue;
		return rt;
	}
	return NULL;
}

/* Constant time in the presented token: every byte of the expected token is
 * compared whatever the lengths. */
static int token_ok(const struct api *a, const char *given)
{
	size_t glen = strlen(given);
	volatile unsigned char diff = glen != a->token_len;

	for (size_t i = 0; i < a->token_len; i++)
		diff |= (unsigned char)a->token[i] ^ (unsigned char)(glen ? given[i % glen] : 0);
	return diff == 0;
}

static int authorized(struct req *r)
{
	const char *h = MHD_lookup_connection_value(r->c, MHD_HEADER_KIND,
						    MHD_HTTP_HEADER_AUTHORIZATION);
	char tok[TOKEN_MAX + 1];
	size_t n;

	if (!h)
		return 0;
	while (*h == ' ' || *h == '\t')
		h++;
	if (strncasecmp(h, "Bearer", 6) != 0 || (h[6] != ' ' && h[6] != '\t'))
		return 0;
	h += 6;
	while (*h == ' ' || *h == '\t')
		h++;
	n = strlen(h);
	while (n > 0 && (h[n - 1] == ' ' || h[n - 1] == '\t'))
		n--;
	if (n == 0 || n > TOKEN_MAX)
		return 0;
	memcpy(tok, h, n);
	tok[n] = '\0';
	int ok = token_ok(r->a, tok);
	explicit_bzero(tok, n);
	return ok;
}

static enum MHD_Result dispatch(struct req *r, const char *method)
{
	const struct route *rt = route_find(r->url, &r->tail);
	char b1[96];

	if (r->a->token && !(rt && rt->open) && !authorized(r))
		return send_error_hdr(r, MHD_HTTP_UNAUTHORIZED, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
				      "Bearer realm=\"egresswatch\"", "missing or bad bearer token");
	if (!rt)
		return send_error(r, MHD_HTTP_NOT_FOUND, "not found");
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return send_error_hdr(r, MHD_HTTP_METHOD_NOT_ALLOWED, MHD_HTTP_HEADER_ALLOW,
				      "GET, HEAD", "method not allowed: %s",
				      esc(b1, sizeof(b1), method));
	r->head = !strcmp(method, MHD_HTTP_METHOD_HEAD);
	MHD_get_connection_values(r->c, MHD_GET_ARGUMENT_KIND, collect_param, r);
	if (r->too_many)
		return send_error(r, MHD_HTTP_BAD_REQUEST, "too many parameters (at most %d)",
				  MAX_PARAMS);
	for (unsigned i = 0; rt->params && i < r->nparams; i++) {
		const char *k = r->params[i].key;
		size_t j;
		for (j = 0; rt->params[j] && strcmp(rt->params[j], k); j++)
			;
		if (!rt->params[j])
			return send_error(r, MHD_HTTP_BAD_REQUEST, "unknown parameter: %s",
					  esc(b1, sizeof(b1), k));
		for (j = 0; j < i; j++)
			if (!strcmp(r->params[j].key, k))
				return send_error(r, MHD_HTTP_BAD_REQUEST,
						  "duplicate parameter: %s", k);
	}
	return rt->fn(r);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size,
				  void **con_cls)
{
	static const int pending = 1, answered = 2; /* markers; never written */
	struct api *a = cls;
	struct req r = {.a = a, .c = c, .url = url ? url : "/"};
	(void)version;
	(void)upload_data;

	if (!method)
		method = "";
	if (!*con_cls) {
		/* Headers are in. A GET or HEAD without a body is answered on
		 * the next call, which keeps the connection reusable; anything
		 * else is answered now ("early"), and MHD then closes the
		 * connection instead of reading a body no route takes. */
		pthread_mutex_lock(&a->lock);
		a->requests++;
		pthread_mutex_unlock(&a->lock);
		if ((!strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD)) &&
		    !MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH) &&
		    !MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						 MHD_HTTP_HEADER_TRANSFER_ENCODING)) {
			*con_cls = (void *)&pending;
			return MHD_YES;
		}
		*con_cls = (void *)&answered;
		return dispatch(&r, method);
	}
	if (*upload_data_size) {
		*upload_data_size = 0; /* not expected: discard */
		return MHD_YES;
	}
	if (*con_cls == (void *)&answered)
		return MHD_YES;
	*con_cls = (void *)&answered;
	return dispatch(&r, method);
}

/* MHD's own messages (refused connections, oversized requests, ...), rate
 * limited: a client can cause them. */
__attribute__((format(printf, 2, 0))) static void on_mhd_log(void *cls, const char *fmt,
							     va_list ap)
{
	struct api *a = cls;
	char line[512];
	size_t n;
	unsigned count;
	time_t now = time(NULL);

	pthread_mutex_lock(&a->lock);
	if (now != a->log_second) {
		a->log_second = now;
		a->log_count = 0;
	}
	count = ++a->log_count;
	pthread_mutex_unlock(&a->lock);
	if (count > LOG_PER_S + 1)
		return;
	if (count == LOG_PER_S + 1) {
		log_warn("api", "more HTTP server messages this second are not logged");
		return;
	}
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	log_warn("api", "%s", line);
}

/* ---- start and stop -------------------------------------------------------- */

static int listen_on(const struct bind_addr *b, unsigned *port, char *err, size_t errlen)
{
	int fd, one = 1, fam = b->ss.ss_family;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	fd = socket(fam, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(err, errlen, "--api %s: socket: %s", b->host, strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fam == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)&b->ss, b->len) < 0 ||
	    listen(fd, LISTEN_BACKLOG) < 0 || getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
		snprintf(err, errlen, "--api %s port %u: cannot listen: %s", b->host,
			 ntohs(fam == AF_INET6 ? ((const struct sockaddr_in6 *)&b->ss)->sin6_port
					       : ((const struct sockaddr_in *)&b->ss)->sin_port),
			 strerror(errno));
		close(fd);
		return -1;
	}
	*port = ntohs(fam == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
				      : ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

static unsigned or_default(unsigned v, unsigned def)
{
	return v ? v : def;
}

int api_start(struct api **out, const struct api_config *cfg, char *err, size_t errlen)
{
	struct bind_addr b;
	struct api *a;
	struct query *q = NULL;
	pthread_condattr_t ca;
	int rc, fd;

	*out = NULL;
	a = calloc(1, sizeof(*a));
	if (!a) {
		snprintf(err, errlen, "api: out of memory");
		return -1;
	}
	if (pthread_mutex_init(&a->lock, NULL) != 0) {
		free(a);
		snprintf(err, errlen, "api: cannot create a mutex");
		return -1;
	}
	if (pthread_condattr_init(&ca) != 0 ||
	    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
	    pthread_cond_init(&a->wake, &ca) != 0) {
		pthread_mutex_destroy(&a->lock);
		free(a);
		snprintf(err, errlen, "api: cannot create a condition variable");
		return -1;
	}
	pthread_condattr_destroy(&ca);
	a->cfg = *cfg;
	a->cfg.db_path = a->cfg.addr = a->cfg.token_file = NULL; /* not kept */
	a->cfg.max_connections = or_default(cfg->max_connections, DEF_MAX_CONN);
	a->cfg.per_ip_connections = or_default(cfg->per_ip_connections, DEF_PER_IP);
	a->cfg.timeout_s = or_default(cfg->timeout_s, DEF_TIMEOUT_S);
	a->cfg.request_memory = cfg->request_memory ? cfg->request_memory : DEF_REQ_MEMORY;
	a->cfg.max_streams = or_default(cfg->max_streams, DEF_STREAMS);
	a->cfg.stream_max_s = or_default(cfg->stream_max_s, DEF_STREAM_MAX_S);
	a->cfg.stream_poll_ms = or_default(cfg->stream_poll_ms, DEF_POLL_MS);
	a->cfg.keepalive_s = or_default(cfg->keepalive_s, DEF_KEEPALIVE_S);
	a->t0 = sync_now();

	if ((rc = check_config(cfg, &b, &a->token, &a->token_len, err, errlen)) < 0)
		goto fail;
	rc = -1;
	if (!cfg->db_path || !(a->db_path = strdup(cfg->db_path))) {
		snprintf(err, errlen, "api: no database path, or out of memory");
		goto fail;
	}
	/* The database must be there and ours before we listen; keep the
	 * connection as the pool's first. */
	if (query_open(&q, a->db_path, err, errlen) < 0)
		goto fail;
	pool_put(a, q, 0);
	if ((fd = listen_on(&b, &a->port, err, errlen)) < 0)
		goto fail;
	a->daemon = MHD_start_daemon(
		MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO |
			MHD_USE_ERROR_LOG | (b.ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
		0, NULL, NULL, on_request, a,
		MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, a,
		MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)a->cfg.max_connections,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)a->cfg.per_ip_connections,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)a->cfg.timeout_s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)a->cfg.request_memory,
		MHD_OPTION_END);
	if (!a->daemon) {
		close(fd);
		snprintf(err, errlen, "--api %s port %u: cannot start the HTTP server", b.host,
			 a->port);
		goto fail;
	}
	if (b.ss.ss_family == AF_INET6)
		snprintf(a->url, sizeof(a->url), "http://[%s]:%u/", b.host, a->port);
	else
		snprintf(a->url, sizeof(a->url), "http://%s:%u/", b.host, a->port);
	log_info("api", "serving API on %s (database %s%s)", a->url, a->db_path,
		 a->token ? ", bearer token required" : "");
	*out = a;
	return 0;
fail:
	api_stop(a);
	return rc;
}

unsigned api_port(const struct api *a)
{
	return a ? a->port : 0;
}

const char *api_url(const struct api *a)
{
	return a ? a->url : "";
}

void api_stop(struct api *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->stopping = 1;
	pthread_cond_broadcast(&a->wake);
	pthread_mutex_unlock(&a->lock);
	/* Joins every connection thread; the streams see `stopping` and end. */
	if (a->daemon)
		MHD_stop_daemon(a->daemon);
	for (unsigned i = 0; i < a->npool; i++)
		query_close(a->pool[i]);
	if (a->token) {
		explicit_bzero(a->token, a->token_len);
		free(a->token);
	}
	free(a->db_path);
	pthread_cond_destroy(&a->wake);
	pthread_mutex_destroy(&a->lock);
	free(a);
}
