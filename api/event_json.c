/*
 * event_json.c - events and alerts rows as section 4 JSON (event_json.h).
 *
 * Keys are added in the documented order (jansson keeps insertion order), so
 * a row always dumps the same bytes. The kind-specific object of a DNS event
 * comes from dns_json.c, which reads the record.h encoding of events.info;
 * the other kinds get a generic object until their own readers exist.
 */
#include "event_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analyzers/module.h"
#include "../sensor/text.h"

#include "dns_json.h"
#include "http_json.h"
#include "icmp_json.h"
#include "tls_json.h"

/* Each kind's detail record is rendered by its analyzer's renderer: one
 * table, indexed by enum obs_kind. */
typedef int (*detail_json_fn)(json_t *obj, const char *info, size_t len, int obs_kind);

static detail_json_fn event_detail_renderer(int kind)
{
	static const detail_json_fn renderers[OBS_KIND_MAX] = {
		[OBS_DNS_QUERY] = dns_info_json,
		[OBS_DNS_ANSWER] = dns_info_json,
		[OBS_HTTP_REQUEST] = http_info_json,
		[OBS_HTTP_RESPONSE] = http_info_json,
		[OBS_ICMP] = icmp_info_json,
		[OBS_TLS_CLIENT_HELLO] = tls_info_json,
		[OBS_TLS_SERVER_HELLO] = tls_info_json,
	};
	return kind > 0 && kind < OBS_KIND_MAX ? renderers[kind] : NULL;
}

static const char *const severity_names[] = {NULL, "info", "low", "medium", "high", "critical"};

const char *event_kind_name(int kind)
{
	switch (kind) {
	case OBS_DNS_QUERY:
	case OBS_DNS_ANSWER:
		return "dns";
	case OBS_HTTP_REQUEST:
	case OBS_HTTP_RESPONSE:
		return "http";
	case OBS_TLS_CLIENT_HELLO:
	case OBS_TLS_SERVER_HELLO:
		return "tls";
	case OBS_ICMP:
		return "icmp";
	default:
		return NULL;
	}
}

const char *event_proto_name(int proto, char *buf, size_t cap)
{
	switch (proto) {
	case 1:
		return "icmp";
	case 6:
		return "tcp";
	case 17:
		return "udp";
	case 58:
		return "icmpv6";
	/* other protocols an alert can name (a way out past the proxy,
	 * docs/detection.md) or an ICMP error can quote: IANA's keywords */
	case 2:
		return "igmp";
	case 47:
		return "gre";
	case 50:
		return "esp";
	case 51:
		return "ah";
	case 132:
		return "sctp";
	default:
		snprintf(buf, cap, "%d", proto);
		return buf;
	}
}

const char *event_severity_name(int severity)
{
	if (severity < 1 || severity > 5)
		return NULL;
	return severity_names[severity];
}

/* A JSON string of n bytes; bytes that are not valid UTF-8 get escaped. */
static json_t *jstr(const char *s, size_t n)
{
	json_t *j = json_stringn(s, n);
	if (j || n > (SIZE_MAX - 1) / 4)
		return j;
	char *esc = malloc(4 * n + 1);
	if (!esc)
		return NULL;
	size_t len = text_escape(esc, 4 * n + 1, (const uint8_t *)s, n, NULL);
	j = json_stringn(esc, len);
	free(esc);
	return j;
}

static json_t *jstr_z(const char *s)
{
	return s ? jstr(s, strlen(s)) : json_null();
}

/* json_object_set_new with a NULL check on the value; the object owns it. */
static int set(json_t *o, const char *key, json_t *v)
{
	return v ? json_object_set_new(o, key, v) : -1;
}

static json_t *jtime(uint64_t ts)
{
	char buf[40];
	size_t n = text_time(buf, sizeof(buf), ts);
	return json_stringn(buf, n);
}

static int generic_kind(json_t *k, const struct event_row *r)
{
	int rc = 0;
	if (r->name)
		rc |= set(k, "name", jstr_z(r->name));
	rc |= set(k, "type", json_integer(r->type));
	rc |= set(k, "code", json_integer(r->code));
	rc |= set(k, "size", json_integer(r->size));
	return rc ? -1 : 0;
}

json_t *event_json_new(const struct event_row *r)
{
	char pbuf[16], kbuf[16];
	const char *kind = event_kind_name(r->kind);
	json_t *o = json_object(), *k = NULL;
	detail_json_fn detail;
	int rc = 0;

	if (!o)
		return NULL;
	if (!kind) {
		snprintf(kbuf, sizeof(kbuf), "%d", r->kind);
		kind = kbuf;
	}
	rc |= set(o, "id", json_integer(r->id));
	rc |= set(o, "ts", jtime(r->ts));
	rc |= set(o, "kind", json_string(kind));
	rc |= set(o, "src_ip", jstr_z(r->src_ip ? r->src_ip : ""));
	rc |= set(o, "src_port", json_integer(r->src_port));
	rc |= set(o, "dst_ip", jstr_z(r->dst_ip ? r->dst_ip : ""));
	rc |= set(o, "dst_port", json_integer(r->dst_port));
	rc |= set(o, "proto", json_string(event_proto_name(r->proto, pbuf, sizeof(pbuf))));
	if (rc)
		goto fail;

	k = json_object();
	if (!k)
		goto fail;
	detail = event_detail_renderer(r->kind);
	if (detail) {
		int drc = detail(k, r->info ? r->info : "", r->info ? r->info_len : 0, r->kind);
		if (drc == -ENOMEM)
			goto fail;
		if (drc < 0) {
			/* No readable detail: keep the row's own columns. */
			json_object_clear(k);
			if (generic_kind(k, r) < 0)
				goto fail;
		}
	} else if (generic_kind(k, r) < 0) {
		goto fail;
	}
	rc = json_object_set_new(o, kind, k);
	k = NULL;
	if (rc)
		goto fail;
	if ((r->flags & OBS_F_MALFORMED) && json_object_set_new(o, "malformed", json_true()))
		goto fail;
	return o;
fail:
	json_decref(k);
	json_decref(o);
	return NULL;
}

static json_t *evidence_array(const char *ev, size_t n)
{
	json_t *a = json_array();
	if (!a || !ev)
		return a;
	while (n > 0) {
		const char *gs = memchr(ev, '\x1d', n);
		size_t len = gs ? (size_t)(gs - ev) : n;
		if (json_array_append_new(a, jstr(ev, len)) < 0) {
			json_decref(a);
			return NULL;
		}
		if (!gs)
			break;
		n -= len + 1;
		ev = gs + 1;
	}
	return a;
}

static json_t *port_or_null(int port)
{
	return port < 0 ? json_null() : json_integer(port);
}

json_t *alert_json_new(const struct alert_row *r)
{
	char pbuf[16], sbuf[16];
	const char *sev = event_severity_name(r->severity);
	json_t *o = json_object();
	int rc = 0;

	if (!o)
		return NULL;
	if (!sev) {
		snprintf(sbuf, sizeof(sbuf), "%d", r->severity);
		sev = sbuf;
	}
	rc |= set(o, "id", json_integer(r->id));
	rc |= set(o, "class", jstr_z(r->class_name));
	rc |= set(o, "severity", json_string(sev));
	rc |= set(o, "first_ts", jtime(r->first_ts));
	rc |= set(o, "last_ts", jtime(r->last_ts));
	rc |= set(o, "count", json_integer(r->count));
	rc |= set(o, "outcome", jstr_z(r->outcome ? r->outcome : "unknown"));
	rc |= set(o, "src_ip", jstr_z(r->src_ip));
	rc |= set(o, "src_port", port_or_null(r->src_port));
	rc |= set(o, "dst_ip", jstr_z(r->dst_ip));
	rc |= set(o, "dst_port", port_or_null(r->dst_port));
	rc |= set(o, "proto", r->proto ? json_string(event_proto_name(r->proto, pbuf, sizeof(pbuf)))
				       : json_null());
	rc |= set(o, "subject", jstr_z(r->subject));
	rc |= set(o, "score", r->has_score ? json_real(r->score) : json_null());
	rc |= set(o, "rule", jstr_z(r->rule));
	rc |= set(o, "summary", jstr_z(r->summary));
	rc |= set(o, "evidence", evidence_array(r->evidence, r->evidence_len));
	if (rc) {
		json_decref(o);
		return NULL;
	}
	return o;
}

size_t event_json_line(json_t *o, char **buf, size_t *cap)
{
	size_t n = json_dumpb(o, *buf, *cap, EVENT_JSON_DUMP_FLAGS);

	if (n && n >= *cap) {
		/* did not fit: grow (room for the newline too) and render again */
		size_t c = *cap ? *cap : 4096;
		while (c <= n)
			c *= 2;
		char *b = realloc(*buf, c);
		if (!b)
			return 0;
		*buf = b;
		*cap = c;
		n = json_dumpb(o, *buf, *cap, EVENT_JSON_DUMP_FLAGS);
	}
	if (n == 0 || n >= *cap)
		return 0;
	(*buf)[n] = '\n';
	return n + 1;
}
