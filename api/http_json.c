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
	RQ_AWS_TTL, RQ_WHY, RQ_CUT, RQ_HOST_SET, RQ_TTL_SET, RQ_TRUNCATED, RQ_FIELDS
};
/* Request records written by older versions end earlier: before
 * RQ_TRUNCATED ("1": reported without its end), before RQ_TTL_SET ("1": an
 * X-aws-ec2-metadata-token-ttl-seconds field was sent, maybe empty) and
 * before RQ_HOST_SET (the same for Host); an empty field of theirs reads as
 * absent. */
#define RQ_FIELDS_MIN (RQ_FIELDS - 3)

/* Response record fields. */
enum {
	RS_TAG = 0, RS_VERSION, RS_STATUS, RS_PHRASE, RS_CONTENT_LENGTH, RS_UPGRADE,
	RS_CONNECTION, RS_SERVER, RS_LOCATION, RS_REQ_METHOD, RS_REQ_HOST, RS_REQ_URI,
	RS_WHY, RS_CUT, RS_TRUNCATED, RS_FIELDS
};
/* Response records written by older versions end before RS_TRUNCATED ("1":
 * reported without its end). */
#define RS_FIELDS_MIN (RS_FIELDS - 1)

/* ---- jansson helpers: each returns -1 on failure, 0 on success ------------ */

static int set(json_t *o, const char *key, json_t *v)
{
	return json_object_set_new(o, key, v) ? -1 : 0; /* steals v; NULL fails */
}

static int set_field(json_t *o, const char *key, const struct rec_fields *f, int i)
{
	return set(o, key, rec_fields_empty(f, i) ? json_string("") : json_stringn(f->s[i], f->n[i]));
}

/* Only when the field is not empty. */
static int set_present(json_t *o, const char *key, const struct rec_fields *f, int i)
{
	return rec_fields_empty(f, i) ? 0 : set_field(o, key, f, i);
}

/* A number of up to 18 digits (a Content-Length is 64-bit); left out when
 * the field is empty or not one. */
static int set_number(json_t *o, const char *key, const struct rec_fields *f, int i)
{
	size_t n;
	const char *s = rec_fields_str(f, i, &n);
	long long v = 0;

	if (n == 0 || n > 18)
		return 0;
	for (size_t k = 0; k < n; k++) {
		if (s[k] < '0' || s[k] > '9')
			return 0;
		v = v * 10 + (s[k] - '0');
	}
	return set(o, key, json_integer(v));
}

static int request_json(json_t *http, const struct rec_fields *f)
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
	int host_sent = !rec_fields_empty(f, RQ_HOST) ||
			(f->count > RQ_HOST_SET && rec_fields_is(f, RQ_HOST_SET, "1"));
	int ttl_sent = !rec_fields_empty(f, RQ_AWS_TTL) ||
		       (f->count > RQ_TTL_SET && rec_fields_is(f, RQ_TTL_SET, "1"));
	err |= set(http, "host", host_sent ? json_stringn(f->s[RQ_HOST], f->n[RQ_HOST]) : json_null());
	err |= set_field(http, "uri", f, RQ_URI);
	err |= set_field(http, "version", f, RQ_VERSION);
	err |= set_field(http, "user_agent", f, RQ_USER_AGENT);
	err |= set_present(http, "upgrade", f, RQ_UPGRADE);
	err |= set_present(http, "connection", f, RQ_CONNECTION);
	err |= set_number(http, "content_length", f, RQ_CONTENT_LENGTH);
	for (size_t i = 0; i < sizeof(meta) / sizeof(meta[0]); i++) {
		if (meta[i].field == RQ_AWS_TTL ? !ttl_sent : rec_fields_empty(f, meta[i].field))
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
	if (ttl_sent) /* "" when the field was sent empty */
		err |= set_field(http, "metadata_token_ttl", f, RQ_AWS_TTL);
	err |= set_present(http, "malformed", f, RQ_WHY);
	if (f->count > RQ_TRUNCATED && rec_fields_is(f, RQ_TRUNCATED, "1"))
		err |= set(http, "truncated", json_true());
	if (rec_fields_is(f, RQ_CUT, "1"))
		err |= set(http, "detail_cut", json_true());
	return err;
}

static int response_json(json_t *http, const struct rec_fields *f)
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
	if (!rec_fields_empty(f, RS_REQ_METHOD)) {
		json_t *rq = json_object();
		if (!rq)
			return -1;
		err |= set_field(rq, "method", f, RS_REQ_METHOD);
		err |= set_field(rq, "host", f, RS_REQ_HOST);
		err |= set_field(rq, "uri", f, RS_REQ_URI);
		err |= set(http, "request", rq);
	}
	err |= set_present(http, "malformed", f, RS_WHY);
	if (f->count > RS_TRUNCATED && rec_fields_is(f, RS_TRUNCATED, "1"))
		err |= set(http, "truncated", json_true());
	if (rec_fields_is(f, RS_CUT, "1"))
		err |= set(http, "detail_cut", json_true());
	return err;
}

int http_info_json(json_t *http, const char *info, size_t len, int obs_kind)
{
	const char *rec;
	size_t rlen;
	struct rec_fields f;

	if (!info || !rec_split(&info, &len, REC_RS, &rec, &rlen))
		return -EINVAL;
	rec_fields_split(&f, rec, rlen);
	if (obs_kind == OBS_HTTP_REQUEST && rec_fields_is(&f, RQ_TAG, "req") &&
	    f.count >= RQ_FIELDS_MIN && f.count <= RQ_FIELDS)
		return request_json(http, &f) ? -ENOMEM : 0;
	if (obs_kind == OBS_HTTP_RESPONSE && rec_fields_is(&f, RS_TAG, "resp") &&
	    f.count >= RS_FIELDS_MIN && f.count <= RS_FIELDS)
		return response_json(http, &f) ? -ENOMEM : 0;
	return -EINVAL;
}
