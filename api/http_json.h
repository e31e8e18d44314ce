/*
 * http_json.h - the HTTP event detail (the record analyzers/http.c writes,
 * see analyzers/http.h) as the "http" object of docs/architecture.md
 * section 4.
 */
#ifndef EW_HTTP_JSON_H
#define EW_HTTP_JSON_H

#include <stddef.h>

#include <jansson.h>

/*
 * Fill the jansson object http (owned by the caller, normally empty) from
 * the detail record info[0..len) of one HTTP event; obs_kind
 * (OBS_HTTP_REQUEST or OBS_HTTP_RESPONSE) says which record to expect.
 *
 * Request:  method, host, uri, version, user_agent (always; "" when
 *           absent), then only when present: upgrade, connection,
 *           content_length (a number), metadata_headers (the names of the
 *           metadata fields present, in a fixed order), metadata_token_ttl
 *           (the TTL value as sent, a string), malformed (the reason),
 *           detail_cut (true when the analyzer cut a value).
 * Response: status (a number, absent when there was no status line),
 *           reason, version, then only when present: content_length,
 *           upgrade, connection, server, location, request {method, host,
 *           uri} (the request it answers), malformed, detail_cut.
 *
 * Returns 0; -EINVAL when info holds no record of that kind (http is left
 * empty); -ENOMEM when jansson could not allocate (http may be partly
 * filled: the caller discards it). info is only read.
 */
int http_info_json(json_t *http, const char *info, size_t len, int obs_kind);

#endif
