/*
 * http.h - the HTTP/1.x analyzer: request heads from the client stream and
 * status heads from the server stream of a TCP flow, recognised by content
 * on any port, one observation per head.
 *
 * The pure part is http_parse_head(): one head (start line and header
 * fields, up to the empty line) in, its fields out, read through
 * sensor/cursor.h. Every token and value lands in a bounded buffer of
 * struct http_head, escaped with text_escape() (bytes outside 0x20..0x7e as
 * \xNN, '\' as \\); a value that does not fit is cut at a whole escape and
 * sets http_head.cut. Character classes (tchar, DIGIT, HEXDIG, OWS) are
 * locale-free ASCII tests, never <ctype.h>.
 *
 * Hostile-input rules (each breaks the head and is counted as malformed):
 *   - a head is at most HTTP_HEAD_MAX bytes, terminator included (squid's
 *     default bound; nginx's is 32 KiB); a longer one is read on all the
 *     same, "head longer than 65536 bytes" (not fatal: servers take longer
 *     ones), up to HTTP_HEAD_FAR, past which, without an empty line, it
 *     breaks (fatal, too_long);
 *   - bytes allowed in a head: HT, LF, CR just before LF, 0x20..0x7e and
 *     0x80..0xff; NUL, other controls, DEL and a bare CR are "control byte"
 *     (in a field value, after the line's first ':', they are the softer
 *     kind below: nginx and squid pass them on, and a bare CR there ends
 *     the field line, as Python's http.server reads it, the rest of the
 *     line read as the next field; so is a bare CR in a request line,
 *     which squid reads as whitespace: the line runs to its LF and the CR
 *     splits nothing);
 *   - a request line that does not start with a method token; the status
 *     line is HTTP-version SP 3DIGIT [SP reason], the version exactly
 *     "HTTP/" DIGIT "." DIGIT;
 *   - Content-Length is 1*DIGIT, at most 18 after leading zeros (a list of
 *     equal values is one value);
 *     several that differ, or a bad one, lose the body framing; so does a
 *     request whose Transfer-Encoding does not end in chunked.
 * Lines end in CRLF or a bare LF; the head ends at the first empty line.
 * Those problems are "fatal": the framing of the stream is lost, so the
 * analyzer emits what was read and stops the direction. Softer problems
 * (a field line without a token name and a colon, obsolete line folding,
 * several Host fields, Transfer-Encoding together with Content-Length) mark
 * the head malformed too, but the head's end is known and the analyzer goes
 * on with the next message. So does a request line that is not
 * method SP request-target SP "HTTP/" DIGIT "." DIGIT, read as servers
 * read it (RFC 9112 3 allows it for robustness): parts split on runs of SP
 * and HTAB, whitespace after the version ignored, the version
 * "HTTP/" 1*DIGIT "." 1*DIGIT, the target what lies between method and
 * version; a method longer than HTTP_METHOD_LEN bytes is cut; a missing
 * target or version leaves its field "".
 *
 * Stream rules (the module, over flow->st[dir] from the flow table):
 *   - a flow is claimed (APP_HTTP) when its client stream starts with a
 *     known method and SP or HTAB, or when its first line is any other
 *     token, whitespace, a target, whitespace and "HTTP/" 1*DIGIT "."
 *     1*DIGIT (http_sniff; not the HTTP/2 preface): such a line may be
 *     longer than the window (nginx with large header buffers serves
 *     "FOO /" and 20,000 bytes), the claim waiting for its LF while
 *     its first bytes are a token, whitespace and a target's start (each
 *     call looks for the LF with memchr and walks at most 1 KiB byte by
 *     byte until it comes), and claiming without it once the line has
 *     passed HTTP_LINE_SKIP bytes (it is then read as a long request line,
 *     below; when the LF comes and the line ends in no HTTP version after
 *     a method not on the list, it was no request: both directions are
 *     left unread, no event);
 *     nothing else is looked at, so the TLS and DNS
 *     analyzers may claim the rest;
 *   - a PROXY protocol header (v1 or v2, proxyproto.h) at the start of
 *     the client stream is skipped as nginx's `listen ... proxy_protocol`
 *     skips it: the flow is claimed when what
 *     follows it would be, and read from there (the header is no part of
 *     any head, nor of its size); while the first bytes may still become
 *     a header (at most 1 KiB of a v1 line, a v2 header's 16 + length)
 *     the claim waits, until the window is full or a hole cuts them;
 *   - a request line that grows past HTTP_LINE_SKIP without its LF
 *     (nginx with large header buffers serves 20 KB ones, Python's
 *     http.server 64 KiB, Go heads of 1 MiB) keeps its first bytes (RL_KEEP, http.c)
 *     (the method and the target as far as the event keeps it) and is
 *     skipped to its LF, its last bytes kept for the version; the request
 *     is read from the two, marked malformed ("request line longer than
 *     8192 bytes") and cut, then its fields (Host) and the requests after
 *     it; in the skipped bytes a bare CR is whitespace and another control
 *     passes (Python's reading; nginx answers 400); a line past
 *     HTTP_HEAD_FAR is reported there (method and target, no version, no
 *     fields) and the rest of its head skipped as below;
 *   - a field line of a head read a line at a time that grows past
 *     HTTP_LINE_SKIP without its LF (a 20 KB cookie or JWT, which nginx
 *     with large buffers serves) is skipped to its LF, the head marked
 *     malformed and cut, so the fields after it are read; a bare CR in
 *     the skipped bytes ends the line there (Python's http.server starts
 *     a new field after it; nginx answers 400), a control byte before the
 *     line's ':' breaks the head (fatal), one after it passes; a status
 *     line that grows past HTTP_LINE_SKIP is read from its first bytes
 *     (version, code, the start of its phrase) and skipped to its LF the
 *     same way ("status line longer than 8192 bytes"; when those bytes are
 *     no status line it is left to fill the window);
 *   - a head past HTTP_HEAD_MAX goes on being read a line at a time, the
 *     window moving on, nothing kept but struct http_head, to its empty
 *     line (its Host, framing and Upgrade from anywhere in it); one past
 *     HTTP_HEAD_FAR is reported (malformed) there and its rest skipped to
 *     its empty line, then the next message is read (its body framed by a
 *     Content-Length read before that bound; chunked framing stops the
 *     direction);
 *   - a head longer than HTTP_HEAD_HOLD is read a line at a time
 *     (http_parse_more): its complete lines are parsed, its state is kept
 *     with the flow (which grows once, by two struct http_head) and the
 *     window moves on past them, so a head up to HTTP_HEAD_FAR is read
 *     whole whatever the 16 KiB window, as long as each segment fits the
 *     window beside the start of the line before it;
 *   - HTTP/0.9: a request line without a version, alone (no byte after
 *     its line end), is a whole request when the server sends while it
 *     waits: it is emitted then (the server's packet turned around),
 *     malformed for its missing version, and the client direction stops;
 *     a server answer that does not start with "HTTP/" is the bare body,
 *     and the server direction stops without a malformed count;
 *   - pipelined requests give one event each; a body is skipped by
 *     Content-Length or by walking chunked framing (chunk-size lines, data,
 *     trailer) as its bytes arrive; a request without either has no body;
 *   - each response pairs with the oldest unanswered request (a FIFO of
 *     HTTP_PIPELINE_MAX summaries; when more requests are in flight, the
 *     ones that did not fit are not remembered and their responses go
 *     unpaired rather than mispaired); 1xx responses other than 101 are
 *     interim and pair without using the request up;
 *   - the summaries are kept at their real lengths (pending.h), stored
 *     only while their requests wait: the unanswered requests of every flow
 *     hold at most HTTP_PENDING_BUDGET (32 MiB) together; a request that
 *     would pass it is not remembered either (its response goes unpaired)
 *     and is counted (module.http.pending_refused in the stats table);
 *   - responses to HEAD, and 1xx, 204 and 304, have no body; a response with
 *     neither Content-Length nor chunked framing runs to the end of the
 *     connection, so the server direction stops after its head;
 *   - after a CONNECT request or a request with Upgrade, the client
 *     direction pauses until the response: 2xx to CONNECT (a tunnel) or 101
 *     (another protocol) stops both directions, anything else resumes; a
 *     tunnel, and a 101 to an Upgrade that offered h2c (RFC 7540 3.2), hand
 *     the flow back (APP_NONE), the client stream's cursor after the
 *     request, for TLS or h2c (h2c.h) to claim; after an Upgrade to h2c
 *     whose HTTP2-Settings field holds a table or frame size
 *     (h2c_upgrade_settings, h2c_upgrade_matters), a copy of what it said
 *     (struct h2c_upgrade) is left in flow->app_state for h2c's claim;
 *   - when a direction stops growing (the flow table's 16 KiB stream cap
 *     or a hole never filled) inside a head, the head is emitted with
 *     OBS_F_TRUNCATED if its start line was complete; inside a body, the
 *     direction just stops (it cannot resynchronise);
 *   - a chunk-size line is read as nginx reads it: hex digits (leading
 *     zeros free, at most 15 after them), then the line end, or ';', SP or
 *     HTAB and anything up to the line end;
 *   - broken chunked framing (a size line that is not as above, longer than
 *     HTTP_CHUNK_LINE_MAX, or data not followed by CRLF) is counted as
 *     MOD_MALFORMED and stops the direction; no event (the head had one);
 *   - a stopped direction is never parsed again; its packets count as
 *     MOD_OK (the flow stays claimed). A head that is incomplete when the
 *     connection closes is not reported (the module sees no flow end).
 *
 * Observations:
 *   OBS_HTTP_REQUEST   name = Host ("" when absent), aux = request-target as
 *                      sent, type = 0, size = head bytes.
 *   OBS_HTTP_RESPONSE  name/aux = Host/request-target of the paired request
 *                      ("" when unpaired), type = status code, size = head
 *                      bytes.
 *   Malformed heads carry OBS_F_MALFORMED, cut ones OBS_F_TRUNCATED.
 *
 * Detail record (sensor/record.h encoding: one record, fields separated by
 * US, ended by RS; every text field escaped as above; "" = absent):
 *   request:  "req", method, request-target, version, host, user_agent,
 *             upgrade, connection, content_length (decimal), metadata
 *             ("1" when a Metadata field is present), metadata_flavor ("1"
 *             for Metadata-Flavor), aws_token ("1" for
 *             X-aws-ec2-metadata-token: the token itself is never stored),
 *             aws_token_ttl (the value of
 *             X-aws-ec2-metadata-token-ttl-seconds), malformed reason, cut
 *             ("1" when a value was cut to fit), host_sent ("1" when a Host
 *             field was sent, so that an empty one is told from none),
 *             ttl_sent (the same for the TTL field), truncated ("1" when
 *             the head was reported without its end: a hole, the window,
 *             the connection's end); records written before each of the
 *             last three end before it
 *   response: "resp", version, status (decimal), reason phrase,
 *             content_length, upgrade, connection, server, location,
 *             request method, request host, request-target (the paired
 *             request; all three "" when unpaired; host and target cut to
 *             HTTP_PAIR_HOST_MAX / HTTP_PAIR_URI_MAX), malformed reason, cut,
 *             truncated (as for a request); records written before it end
 *             before it
 * Upgrade and Connection fields that appear several times are joined with
 * ", "; for the other fields the first one wins.
 */
#ifndef EW_HTTP_H
#define EW_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "../sensor/record.h"
#include "h2c.h"

#define HTTP_HEAD_MAX 65536   /* one head, terminator included */
/* ... and past it, marked, a head is still read a line at a time, nothing
 * of it kept but its state, up to this many bytes: Python's http.server
 * takes 100 lines of 64 KiB (6.5 MB), Go 1 MiB, nginx what its
 * large_client_header_buffers hold; a head that passes it is reported
 * there and the rest of it skipped to its empty line */
#define HTTP_HEAD_FAR (8 * 1024 * 1024)
#define HTTP_HEAD_HOLD 8192   /* a head longer is read a line at a time */
#define HTTP_LINE_SKIP 8192   /* ... and a field or request line longer is skipped */
#define HTTP_METHOD_LEN 32    /* method token bytes */
#define HTTP_METHOD_MAX (HTTP_METHOD_LEN + 1)
#define HTTP_URI_MAX 4096     /* escaped request-target + NUL */
#define HTTP_HOST_MAX 1024    /* escaped Host + NUL */
#define HTTP_VALUE_MAX 512    /* escaped User-Agent, Upgrade, Connection, Server, Location */
#define HTTP_VERSION_MAX 16
#define HTTP_PHRASE_MAX 256   /* escaped reason phrase */
#define HTTP_TTL_MAX 32       /* escaped token TTL value */
#define HTTP_WHY_MAX 96       /* malformed reason */
#define HTTP_PIPELINE_MAX 16  /* unanswered requests remembered per flow */
#define HTTP_PENDING_BUDGET (32u * 1024u * 1024u) /* ... by all flows: bytes */
#define HTTP_PAIR_HOST_MAX 256
#define HTTP_PAIR_URI_MAX 512
#define HTTP_CHUNK_LINE_MAX 1024 /* a chunk-size or trailer line */
#define HTTP_INFO_MAX 12288   /* the detail record; every field at its cap fits */

/* Metadata-endpoint header fields present in a request (http_head.meta). */
enum http_meta_bits {
	HTTP_META = 1u << 0,        /* Metadata (Azure IMDS) */
	HTTP_META_FLAVOR = 1u << 1, /* Metadata-Flavor (GCP, OCI) */
	HTTP_META_TOKEN = 1u << 2,  /* X-aws-ec2-metadata-token */
	HTTP_META_TTL = 1u << 3,    /* X-aws-ec2-metadata-token-ttl-seconds */
};

/*
 * One parsed head. Owned by the caller (about 9 KB: keep it in module state
 * or static storage); every field is reset by each http_parse_head call.
 * Strings are escaped and NUL-terminated.
 */
struct http_head {
	int response;              /* parsed as a status line */
	int have_line;             /* a sound status line; a request line with a method */
	char method[HTTP_METHOD_MAX];
	char uri[HTTP_URI_MAX];
	size_t uri_len;
	char version[HTTP_VERSION_MAX]; /* "HTTP/1.1"; "" when bad */
	uint16_t status;           /* response: 100..999 */
	char phrase[HTTP_PHRASE_MAX];
	char host[HTTP_HOST_MAX];
	size_t host_len;
	int have_host;
	char user_agent[HTTP_VALUE_MAX];
	char upgrade[HTTP_VALUE_MAX];
	char connection[HTTP_VALUE_MAX];
	char server[HTTP_VALUE_MAX];
	char location[HTTP_VALUE_MAX];
	char ttl[HTTP_TTL_MAX];    /* X-aws-ec2-metadata-token-ttl-seconds */
	unsigned meta;             /* HTTP_META_* */
	int64_t content_length;    /* -1 when absent or bad */
	int te;                    /* Transfer-Encoding present */
	int chunked;               /* ... and its last coding is chunked */
	size_t head_len;           /* bytes of the head with its terminator; 0
				    * unless the empty line was found */
	size_t seen;               /* bytes examined (up to the damage) */
	size_t taken;              /* bytes of its complete lines read so far
				    * (the empty lines before it included): where
				    * http_parse_more goes on */
	unsigned lines;            /* complete lines read so far */
	int malformed;             /* a rule above was broken: why says which */
	int fatal;                 /* ... and the stream's framing is lost */
	int too_long;              /* ... because the head passed HTTP_HEAD_MAX
				    * (its end is still findable: its empty line) */
	int cut;                   /* a value was cut to fit its buffer */
	int truncated;             /* reported without its end (the
				    * capture lost what followed, the window
				    * ended, the connection ended) */
	char why[HTTP_WHY_MAX];
	struct h2c_upgrade h2s;    /* request: its HTTP2-Settings (h2c.h) */
};

/*
 * Parse the head at buf[0..len) (a request when response is 0, a status
 * head otherwise). Only buf[0..min(len, HTTP_HEAD_FAR)) is read; buf is
 * borrowed.
 *
 * Returns MOD_OK (head_len set); MOD_TRUNCATED when no empty line is there
 * yet and nothing is wrong so far (h holds the complete lines: more bytes may
 * finish it); MOD_MALFORMED with why set (h holds what could be read;
 * head_len is set unless h->fatal). Pure: no globals, no allocation.
 */
int http_parse_head(const uint8_t *buf, size_t len, int response, struct http_head *h);

/*
 * Go on with the head in h, which http_parse_head or this function left
 * MOD_TRUNCATED: buf[0..len) is its bytes from h->taken on (the rest of a
 * line that was not complete, and what followed), so a head longer than
 * the bytes one can hold is read a line at a time. Reads at most
 * HTTP_HEAD_FAR - h->taken bytes; returns as http_parse_head does, with
 * every length and offset counted from the head's first byte.
 */
int http_parse_more(const uint8_t *buf, size_t len, struct http_head *h);

/*
 * Does the client stream buf[0..len) start like an HTTP request: a known
 * method token (GET, POST, ..., PROPFIND, ...) followed by SP or HTAB, or
 * a first line of any token, whitespace, a target, whitespace and
 * "HTTP/" 1*DIGIT "." 1*DIGIT (optional whitespace, then CRLF or LF; within
 * HTTP_HEAD_MAX bytes; not "PRI * HTTP/2.0")? Returns 1 yes, 0 no, -1 when
 * the bytes so far are a prefix of one (ask again with more). Known method
 * names are case-sensitive, as in RFC 9110.
 */
int http_sniff(const uint8_t *buf, size_t len);

/* A request as a response pairs with it (a summary kept per flow). */
struct http_pair {
	char method[HTTP_METHOD_MAX];
	char host[HTTP_PAIR_HOST_MAX];
	char uri[HTTP_PAIR_URI_MAX];
};

/*
 * Write the detail record of h (layout above) into r, with the paired
 * request pair (NULL or ignored for requests; NULL = unpaired). r must have
 * at least HTTP_INFO_MAX bytes of room, which every head fits.
 */
void http_head_record(const struct http_head *h, const struct http_pair *pair, struct rec *r);

/*
 * Copy the escaped string src into dst (cap bytes, NUL-terminated when
 * cap > 0), cutting at a whole escape. Returns the length written; sets
 * *cut (when not NULL) when src did not fit.
 */
size_t http_copy_escaped(char *dst, size_t cap, const char *src, int *cut);

/* The bytes every flow's pending requests hold, as counted against
 * HTTP_PENDING_BUDGET (the module's state from init; for the tests). */
size_t http_pending_bytes(const void *state);

/* The analyzer descriptor (analyzers/registry.c). */
struct module;
extern const struct module http_module;

#endif
