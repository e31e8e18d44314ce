/*
 * http_json.c - the reader side of the HTTP detail record: one record,
 * fields split at US (sensor/record.h), turned into the section 4 "http"
 * object through jansson. The field order is the one analyzers/http.h
 * documents; every value is already escaped printable ASCII, so it goes
 * into JSON strings as is and jansson escapes what JSON needs. Keys are
 * added in a fixed order, so a record always dumps the same bytes.
 */
#include "http_json.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "../analyzers/module.h"
#include "../sensor/record.h"

/* Request record fields. */
enum {
	RQ_TAG = 0, RQ_METHOD, RQ_URI, RQ_VERSION, RQ_HOST, RQ_USER_AGENT, RQ_UPGRADE,
	RQ_CONNECTION, RQ_CONTENT_LENGTH, RQ_METADATA, RQ_METADATA_FLAVOR, RQ_AWS_TOKEN,
	RQ_AWS_TTL, RQ_WHY, RQ_CUT, RQ_HOST_SET, RQ_FIELDS
};
/* A request record written before RQ_HOST_SET ("1": a Host field was sent,
 * maybe empty) has one field less; its empty host reads as absent. */
#define RQ_FIELDS_OLD (RQ_FIELDS - 1)

/* Response record fields. */
enum {
	RS_TAG = 0, RS_VERSION, RS_STATUS, RS_PHRASE, RS_CONTENT_LENGTH, RS_UPGRADE,
	RS_CONNECTION, RS_SERVER, RS_LOCATION, RS_REQ_METHOD, RS_REQ_HOST, RS_REQ_URI,
	RS_WHY, RS_CUT, RS_FIELDS
};

#define MAX_FIELDS 16

struct fields {
	const char *s[MAX_FIELDS];
	size_t n[MAX_FIELDS];
	int count;
};

/* Split a record at US. Unlike rec_split, an empty last field counts, so
 * the field count says which layout this is. */
static void split_fields(const char *rec, size_t len, struct fields *f)
{
	f->count = 0;
	for (;;) {
		const char *us = memchr(rec, REC_US, len);
		size_t n = us ? (size_t)(us - rec) : len;

		if (f->count == MAX_FIELDS) {
			f->count++; /* too many: no known layout */
			return;
		}
		f->s[f->count] = rec;
		f->n[f->count] = n;
		f->count++;
		if (!us)
			return;
		rec = us + 1;
		len -= n + 1;
	}
}

static int feq(const struct fields *f, int i, const char *lit)
{
	return i < f->count && i < MAX_FIELDS && f->n[i] == strlen(lit) &&
	       memcmp(f->s[i], lit, f->n[i]) == 0;
}

static int fempty(const struct fields *f, int i)
{
	return i >= f->count || i >= MAX_FIELDS || f->n[i] == 0;
}

/* Field i as a decimal number; -1 when empty or not a number. */
static long long fnum(const struct fields *f, int i)
{
	long long v = 0;

	if (fempty(f, i) || f->n[i] > 18)
		return -1;
	for (size_t k = 0; k < f->n[i]; k++) {
		if (f->s[i][k] < '0' || f->s[i][k] > '9')
			return -1;
		v = v * 10 + (f->s[i][k] - '0');
	}
	return v;
}

/* ---- jansson helpers: each returns -1 on failure, 0 on success ------------ */

static int set(json_t *o, const char *key, json_t *v)
{
	return json_object_set_new(o, key, v) ? -1 : 0; /* steals v; NULL fails */
}

static int set_field(json_t *o, const char *key, const struct fields *f, int i)
{
	return set(o, key, fempty(f, i) ? json_string("") : json_stringn(f->s[i], f->n[i]));
}

/* Only when the field is not empty. */
static int set_present(json_t *o, const char *key, const struct fields *f, int i)
{
	return fempty(f, i) ? 0 : set_field(o, key, f, i);
}

static int set_number(json_t *o, const char *key, const struct fields *f, int i)
{
	long long v = fnum(f, i);
	return v < 0 ? 0 : set(o, key, json_integer(v));
}

static int request_json(json_t *http, const struct fields *f)
{
	static const struct {
		int field;
		const char *name;
	} meta[] = {
		{RQ_METADATA, "Metadata"},
		{RQ_METADATA_FLAVOR, "Metadata-Flavor"},
		{RQ_AWS_TOKEN, "X-aws-ec2-metadata-token"},
		{RQ_AWS_TTL, "X-aws-ec2-metadata-token-ttl-seconds"},
	};
	json_t *names = NULL;
	int err = 0;

	err |= set_field(http, "method", f, RQ_METHOD);
	/* A request without a Host header has "host": null (HTTP/1.0,
	 * CONNECT without Host), as tshark and Zeek show it; one with an empty
	 * Host field (RFC 9110 7.2: a target without an authority) has "". */
	int host_sent = !fempty(f, RQ_HOST) || (f->count == RQ_FIELDS && feq(f, RQ_HOST_SET, "1"));
	err |= set(http, "host", host_sent ? json_stringn(f->s[RQ_HOST], f->n[RQ_HOST]) : json_null());
	err |= set_field(http, "uri", f, RQ_URI);
	err |= set_field(http, "version", f, RQ_VERSION);
	err |= set_field(http, "user_agent", f, RQ_USER_AGENT);
	err |= set_present(http, "upgrade", f, RQ_UPGRADE);
	err |= set_present(http, "connection", f, RQ_CONNECTION);
	err |= set_number(http, "content_length", f, RQ_CONTENT_LENGTH);
	for (size_t i = 0; i < sizeof(meta) / sizeof(meta[0]); i++) {
		if (fempty(f, meta[i].field))
			continue;
		if (!names) {
			names = json_array();
			if (!names)
				return -1;
		}
		if (json_array_append_new(names, json_string(meta[i].name)))
			err = -1;
	}
	if (names)
		err |= set(http, "metadata_headers", names);
	err |= set_present(http, "metadata_token_ttl", f, RQ_AWS_TTL);
	err |= set_present(http, "malformed", f, RQ_WHY);
	if (feq(f, RQ_CUT, "1"))
		err |= set(http, "detail_cut", json_true());
	return err;
}

static int response_json(json_t *http, const struct fields *f)
{
	int err = 0;

	err |= set_number(http, "status", f, RS_STATUS);
	err |= set_field(http, "reason", f, RS_PHRASE);
	err |= set_field(http, "version", f, RS_VERSION);
	err |= set_number(http, "content_length", f, RS_CONTENT_LENGTH);
	err |= set_present(http, "upgrade", f, RS_UPGRADE);
	err |= set_present(http, "connection", f, RS_CONNECTION);
	err |= set_present(http, "server", f, RS_SERVER);
	err |= set_present(http, "location", f, RS_LOCATION);
	if (!fempty(f, RS_REQ_METHOD)) {
		json_t *rq = json_object();
		if (!rq)
			return -1;
		err |= set_field(rq, "method", f, RS_REQ_METHOD);
		err |= set_field(rq, "host", f, RS_REQ_HOST);
		err |= set_field(rq, "uri", f, RS_REQ_URI);
		err |= set(http, "request", rq);
	}
	err |= set_present(http, "malformed", f, RS_WHY);
	if (feq(f, RS_CUT, "1"))
		err |= set(http, "detail_cut", json_true());
	return err;
}

int http_info_json(json_t *http, const char *info, size_t len, int obs_kind)
{
	const char *rec;
	size_t rlen;
	struct fields f;

	if (!info || !rec_split(&info, &len, REC_RS, &rec, &rlen))
		return -EINVAL;
	split_fields(rec, rlen, &f);
	if (obs_kind == OBS_HTTP_REQUEST && feq(&f, RQ_TAG, "req") &&
	    (f.count == RQ_FIELDS || f.count == RQ_FIELDS_OLD))
		return request_json(http, &f) ? -ENOMEM : 0;
	if (obs_kind == OBS_HTTP_RESPONSE && feq(&f, RS_TAG, "resp") && f.count == RS_FIELDS)
		return response_json(http, &f) ? -ENOMEM : 0;
	return -EINVAL;
}
