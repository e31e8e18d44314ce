/*
 * icmp_json.c - the reader side of the ICMP detail record: one record,
 * fields split at US (sensor/record.h), turned into the section 4 "icmp"
 * object through jansson. Every value in the record is printable ASCII
 * (numbers, addresses, static names and reasons), so text goes into JSON
 * strings as it is; numbers are checked before they become integers.
 */
#include "icmp_json.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../analyzers/module.h"
#include "../sensor/record.h"
#include "event_json.h"

/* Record fields (analyzers/icmp.h). */
enum {
	F_V, F_TYPE, F_CODE, F_NAME, F_ID, F_SEQ, F_PLEN, F_ENTROPY, F_QPROTO, F_QSRC,
	F_QSPORT, F_QDST, F_QDPORT, F_MATCHED, F_REASON, F_TRUNC, F_QID, F_MTU
};

/* ---- jansson helpers: each returns -1 on failure, 0 on success ------------ */

static int set(json_t *o, const char *key, json_t *v)
{
	return json_object_set_new(o, key, v) ? -1 : 0; /* steals v, NULL fails */
}

/* Field i as an integer under key, only when it is a number. */
static int set_opt_num(json_t *o, const char *key, const struct rec_fields *f, int i)
{
	long long v = rec_fields_num(f, i);
	return v < 0 ? 0 : set(o, key, json_integer(v));
}

/* Field i as a string under key, only when non-empty. */
static int set_opt_str(json_t *o, const char *key, const struct rec_fields *f, int i)
{
	size_t n;
	const char *s = rec_fields_str(f, i, &n);
	return n ? set(o, key, json_stringn(s, n)) : 0;
}

/* A quoted packet's protocol, named as an event's is (event_proto_name). */
static json_t *proto_json(long long proto)
{
	char buf[24];

	if (proto >= 0 && proto <= 255)
		return json_string(event_proto_name((int)proto, buf, sizeof(buf)));
	snprintf(buf, sizeof(buf), "%lld", proto);
	return json_string(buf);
}

static json_t *quoted_json(const struct rec_fields *f)
{
	json_t *q = json_object();
	size_t n;
	const char *s;
	int err = 0;

	if (!q)
		return NULL;
	err |= set(q, "proto", proto_json(rec_fields_num(f, F_QPROTO)));
	s = rec_fields_str(f, F_QSRC, &n);
	err |= set(q, "src_ip", json_stringn(s, n));
	err |= set_opt_num(q, "src_port", f, F_QSPORT);
	s = rec_fields_str(f, F_QDST, &n);
	err |= set(q, "dst_ip", json_stringn(s, n));
	err |= set_opt_num(q, "dst_port", f, F_QDPORT);
	err |= set_opt_num(q, "id", f, F_QID);
	err |= set(q, "flow", json_boolean(rec_fields_num(f, F_MATCHED) == 1));
	if (err) {
		json_decref(q);
		return NULL;
	}
	return q;
}

int icmp_info_json(json_t *obj, const char *info, size_t len, int obs_kind)
{
	const char *rec;
	size_t rlen;
	struct rec_fields f;
	long long v, entropy;
	int err = 0;

	if (obs_kind != OBS_ICMP || !rec_split(&info, &len, REC_RS, &rec, &rlen))
		return -EINVAL;
	rec_fields_split(&f, rec, rlen);
	v = rec_fields_num(&f, F_V);
	if ((v != 4 && v != 6) || rec_fields_num(&f, F_TYPE) < 0)
		return -EINVAL;

	err |= set(obj, "v", json_integer(v));
	err |= set_opt_num(obj, "type", &f, F_TYPE);
	err |= set_opt_num(obj, "code", &f, F_CODE);
	err |= set_opt_str(obj, "name", &f, F_NAME);
	err |= set_opt_num(obj, "id", &f, F_ID);
	err |= set_opt_num(obj, "seq", &f, F_SEQ);
	err |= set_opt_num(obj, "payload_len", &f, F_PLEN);
	entropy = rec_fields_num(&f, F_ENTROPY);
	if (entropy >= 0)
		err |= set(obj, "entropy", json_real((double)entropy / 100.0));
	err |= set_opt_num(obj, "mtu", &f, F_MTU);
	if (rec_fields_num(&f, F_QPROTO) >= 0)
		err |= set(obj, "quoted", quoted_json(&f));
	err |= set_opt_str(obj, "malformed", &f, F_REASON);
	if (rec_fields_num(&f, F_TRUNC) == 1)
		err |= set(obj, "truncated", json_true());
	return err ? -ENOMEM : 0;
}
