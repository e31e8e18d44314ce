/*
 * tls_json.c - the reader side of the TLS detail record: one record, fields
 * split at US, list items at GS (sensor/record.h), turned into the section 4
 * "tls" object through jansson. Values in the record are already escaped
 * printable ASCII, so they go into JSON strings as they are; version and
 * cipher fields ("0x0304") are checked and rendered by name.
 */
#include "tls_json.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../analyzers/module.h"
#include "../sensor/record.h"

/* Client record fields (analyzers/tls.h). */
enum {
	C_SNI, C_ALPN, C_LEGACY, C_VERSIONS, C_NCIPHERS, C_NEXTS, C_ECH, C_JA4, C_REASON,
	C_VERSION, C_TRUNC, C_TRANSPORT, C_MIN = C_REASON + 1
};
/* Server record fields. */
enum { S_VERSION, S_CIPHER, S_LEGACY, S_REASON, S_TRUNC, S_MIN = S_CIPHER + 1 };

const char *tls_version_str(unsigned v, char *buf, size_t cap)
{
	switch (v) {
	case 0x0300:
		return "SSL 3.0";
	case 0x0301:
		return "TLS 1.0";
	case 0x0302:
		return "TLS 1.1";
	case 0x0303:
		return "TLS 1.2";
	case 0x0304:
		return "TLS 1.3";
	default:
		if (cap)
			snprintf(buf, cap, "0x%04x", v & 0xffffu);
		return cap ? buf : "";
	}
}

/* "0xNNNN" (four hex digits) as a number; -1 otherwise. */
static long hex16(const char *s, size_t n)
{
	long v = 0;

	if (n != 6 || s[0] != '0' || s[1] != 'x')
		return -1;
	for (size_t i = 2; i < n; i++) {
		char ch = s[i];
		int d = ch >= '0' && ch <= '9'   ? ch - '0'
			: ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
			: ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
						 : -1;
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* ---- jansson helpers: each returns -1 on failure, 0 on success ------------ */

static int set(json_t *o, const char *key, json_t *v)
{
	return json_object_set_new(o, key, v) ? -1 : 0; /* steals v, NULL fails */
}

/* A version string: by name when it is "0xNNNN", else the text as it is. */
static json_t *version_json(const char *s, size_t n)
{
	char buf[TLS_VERSION_STR_MAX];
	long v = hex16(s, n);

	if (v < 0)
		return json_stringn(s, n);
	return json_string(tls_version_str((unsigned)v, buf, sizeof(buf)));
}

static int set_version(json_t *o, const char *key, const struct rec_fields *f, int i)
{
	size_t n;
	const char *s = rec_fields_str(f, i, &n);
	return set(o, key, version_json(s, n));
}

/* A GS list field as an array; each item through conv (or as a string). */
static json_t *list_array(const char *s, size_t n, json_t *(*conv)(const char *, size_t))
{
	json_t *a = json_array();
	const char *piece;
	size_t plen;

	if (!a)
		return NULL;
	while (rec_split(&s, &n, REC_GS, &piece, &plen)) {
		if (json_array_append_new(a, conv(piece, plen))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *string_json(const char *s, size_t n)
{
	return json_stringn(s, n);
}

/* "malformed" and "truncated", only when set. */
static int set_status(json_t *o, const struct rec_fields *f, int reason, int trunc)
{
	size_t n;
	const char *s = rec_fields_str(f, reason, &n);
	int err = 0;

	if (n)
		err |= set(o, "malformed", json_stringn(s, n));
	if (rec_fields_is(f, trunc, "1"))
		err |= set(o, "truncated", json_true());
	return err;
}

/* A count field; 0 when it is not a number. */
static long long count_field(const struct rec_fields *f, int i)
{
	long long v = rec_fields_num(f, i);
	return v < 0 ? 0 : v;
}

static int client_json(json_t *o, const struct rec_fields *f)
{
	size_t n;
	const char *s;
	int err = 0;

	err |= set(o, "hello", json_string("client"));
	s = rec_fields_str(f, C_SNI, &n);
	if (n)
		err |= set(o, "sni", json_stringn(s, n));
	s = rec_fields_str(f, C_ALPN, &n);
	err |= set(o, "alpn", list_array(s, n, string_json));
	/* records written before the version field: fall back to legacy */
	err |= set_version(o, "version", f, f->count > C_VERSION ? C_VERSION : C_LEGACY);
	err |= set_version(o, "legacy_version", f, C_LEGACY);
	s = rec_fields_str(f, C_VERSIONS, &n);
	if (n)
		err |= set(o, "supported_versions", list_array(s, n, version_json));
	err |= set(o, "ciphers", json_integer(count_field(f, C_NCIPHERS)));
	err |= set(o, "extensions", json_integer(count_field(f, C_NEXTS)));
	err |= set(o, "ech", json_boolean(rec_fields_is(f, C_ECH, "1")));
	s = rec_fields_str(f, C_JA4, &n);
	if (n)
		err |= set(o, "ja4", json_stringn(s, n));
	err |= set_status(o, f, C_REASON, C_TRUNC);
	/* absent for TLS over TCP; "quic" for a hello from QUIC Initials */
	s = rec_fields_str(f, C_TRANSPORT, &n);
	if (n)
		err |= set(o, "transport", json_stringn(s, n));
	return err;
}

static int server_json(json_t *o, const struct rec_fields *f)
{
	size_t n;
	const char *s;
	int err = 0;

	err |= set(o, "hello", json_string("server"));
	err |= set_version(o, "version", f, S_VERSION);
	s = rec_fields_str(f, S_CIPHER, &n);
	err |= set(o, "cipher", json_stringn(s, n));
	if (f->count > S_LEGACY)
		err |= set_version(o, "legacy_version", f, S_LEGACY);
	err |= set_status(o, f, S_REASON, S_TRUNC);
	return err;
}

int tls_info_json(json_t *obj, const char *info, size_t len, int obs_kind)
{
	const char *rec;
	size_t rlen;
	struct rec_fields f;

	if (obs_kind != OBS_TLS_CLIENT_HELLO && obs_kind != OBS_TLS_SERVER_HELLO)
		return -EINVAL;
	if (!rec_split(&info, &len, REC_RS, &rec, &rlen))
		return -EINVAL;
	rec_fields_split(&f, rec, rlen);
	if (obs_kind == OBS_TLS_CLIENT_HELLO) {
		if (f.count < C_MIN || hex16(f.s[C_LEGACY], f.n[C_LEGACY]) < 0)
			return -EINVAL;
		return client_json(obj, &f) ? -ENOMEM : 0;
	}
	if (f.count < S_MIN || hex16(f.s[S_VERSION], f.n[S_VERSION]) < 0)
		return -EINVAL;
	return server_json(obj, &f) ? -ENOMEM : 0;
}
