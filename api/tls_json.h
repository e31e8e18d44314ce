/*
 * tls_json.h - the TLS event detail (the record analyzers/tls.c writes, see
 * analyzers/tls.h) as the "tls" object of docs/architecture.md section 4.
 */
#ifndef EW_TLS_JSON_H
#define EW_TLS_JSON_H

#include <stddef.h>

#include <jansson.h>

#define TLS_VERSION_STR_MAX 8

/*
 * A protocol version as text: "SSL 3.0", "TLS 1.0" .. "TLS 1.3", otherwise
 * "0xNNNN" written into buf (at least TLS_VERSION_STR_MAX bytes). Returns a
 * static const string or buf; never a static buffer.
 */
const char *tls_version_str(unsigned v, char *buf, size_t cap);

/*
 * Fill the jansson object obj (owned by the caller, normally empty) from the
 * detail record info[0..len) of one TLS event; obs_kind (OBS_TLS_CLIENT_HELLO
 * or OBS_TLS_SERVER_HELLO) selects the layout.
 *   client: {"hello":"client","sni" (only when present),"alpn":[...],
 *            "version" (highest offered),"legacy_version",
 *            "supported_versions":[...] (only when the extension was sent),
 *            "ciphers","extensions" (counts),"ech":bool,"ja4" (when computed),
 *            "malformed" (the reason, when malformed),"truncated":true (when cut)}
 *   server: {"hello":"server","version" (negotiated),"cipher":"0x1301",
 *            "legacy_version","malformed","truncated" (as above)}
 * Versions are rendered by tls_version_str. info is only read.
 *
 * Returns 0; -EINVAL when info holds no record of that layout (obj is left
 * empty) or obs_kind is not a TLS kind; -ENOMEM when jansson could not
 * allocate (obj may be partly filled: the caller discards it).
 */
int tls_info_json(json_t *obj, const char *info, size_t len, int obs_kind);

#endif
