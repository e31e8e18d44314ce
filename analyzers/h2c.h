/*
 * h2c.h - the HTTP/2 cleartext analyzer, prior knowledge (RFC 9113 3.3): a
 * TCP flow whose client stream starts with the connection preface
 * "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", as `curl --http2-prior-knowledge` and
 * plaintext gRPC open one, on any port, also behind a PROXY protocol
 * header (proxyproto.h: skipped, as nginx's `listen ... proxy_protocol
 * http2` skips it, and the preface looked for after it). Its frames are walked in both
 * directions and the header blocks decoded with libnghttp2's HPACK inflater
 * (one per direction: the dynamic table is per direction), so the requests
 * carry the same facts as HTTP/1's: one OBS_HTTP_REQUEST per stream the
 * client opens (and per request the server promises with PUSH_PROMISE),
 * one OBS_HTTP_RESPONSE per header block of the server with a
 * :status, with http.h's detail record (version "HTTP/2").
 *
 * Frame rules (each breaks the direction's framing: counted as malformed,
 * the direction stops, as HTTP/1's fatal head does):
 *   - a frame (9-byte header) is at most the largest its receiver allows:
 *     16384 bytes, or more once the receiver's SETTINGS_MAX_FRAME_SIZE said
 *     so (the largest it ever said; at most 2^24-1);
 *   - HEADERS and PUSH_PROMISE on stream 0; padding (PADDED) that does not
 *     fit the frame, with the PRIORITY fields and the promised stream id
 *     counted; a header block not continued by CONTINUATION frames of its
 *     own stream up to END_HEADERS; a CONTINUATION outside a block;
 *   - SETTINGS not on stream 0, not a multiple of 6 bytes, or an ACK with
 *     a payload;
 *   - an HPACK decoding error (nghttp2's NGHTTP2_ERR_HEADER_COMP and the
 *     others): the dynamic table is then unknown, so nothing after it in
 *     the direction can be decoded; the head read so far is emitted,
 *     malformed.
 * A hole the flow table skipped (capture loss), or bytes the window could
 * not keep (a segment longer than it), stop the direction too, counted as
 * truncated. Other frame types (DATA, PRIORITY, RST_STREAM, PING, GOAWAY,
 * WINDOW_UPDATE, unknown ones) are passed by their length as their bytes
 * arrive, without being held. A SETTINGS frame of any length its receiver
 * allows is read entry by entry (6 bytes) as its bytes arrive, nothing of
 * it held but what its SETTINGS_HEADER_TABLE_SIZE entries said (the
 * smallest and the last: a repeated identifier's last value counts, as the
 * peer takes it) and the largest SETTINGS_MAX_FRAME_SIZE; unknown
 * identifiers are passed (RFC 9113 6.5.2).
 *
 * Header blocks. A block (HEADERS or PUSH_PROMISE and its CONTINUATIONs)
 * is decoded frame by frame as its bytes arrive: each piece of a fragment
 * in the window goes to the inflater at once (nghttp2_hd_inflate_hd2 with
 * in_final 0, but for the last bytes of the END_HEADERS frame), its fields
 * into the head being built, and the window slides past it; a field cut
 * between two pieces or frames is kept by nghttp2, in memory the counting
 * allocator bounds (a literal string at most 64 KiB, nghttp2's own
 * NGHTTP2_HD_MAX_NV). So a block's length on the wire is not bounded (any
 * number of CONTINUATIONs, empty ones too, as nginx takes them): only
 * what is kept of it, the head's fixed fields (struct http_head; a longer
 * value is cut), and the event comes when END_HEADERS is read. A block
 * cut by a hole or by a segment longer than the window is emitted as far
 * as it was decoded, with OBS_F_TRUNCATED, and the direction stops (the
 * HPACK state past it is unknown). A server's PUSH_PROMISE block is decoded
 * with the server's inflater (it changes the server's table as any of its
 * blocks) as a request's head: the promised request (RFC 9113 8.4), one
 * OBS_HTTP_REQUEST, seen from the client's side (the packet turned around,
 * so src is the client, as in every request event: the request is the
 * client's, made for it by the server), remembered under the promised
 * stream id, so that the pushed response (HEADERS on that stream) pairs
 * with it; a promised id that is odd or 0 is malformed and not
 * remembered. A client's PUSH_PROMISE (a protocol error) is decoded, for
 * its table, and makes no event. Once the server acknowledged a client's
 * SETTINGS_ENABLE_PUSH of 0 (its SETTINGS ACK, or the 101 of an Upgrade
 * whose HTTP2-Settings said it), a PUSH_PROMISE of the server, and a
 * response on an even stream, are a connection error to the client (RFC
 * 9113 6.5.2, 8.4): it requests nothing, so they make no event; decoded
 * for the table, counted (module.h2c.push_refused) and malformed.
 *
 * Dynamic table size. The table a direction's encoder uses is bounded by
 * the SETTINGS_HEADER_TABLE_SIZE its peer sent (4096 until then). The new
 * bound takes effect for the decoder when the encoder's side acknowledges
 * that SETTINGS (its ACK lies between two of its header blocks, so the
 * blocks before it are read with the old bound, as the peer reads them).
 * The bound is capped at H2C_TABLE_MAX: a table size update above it is an
 * HPACK error (malformed, the direction stops). A table size update after
 * a block's first field, which RFC 7541 4.2 forbids and nghttp2 refuses,
 * is read as nginx (1.22, ngx_http_v2_state_header_block) reads it: applied
 * in place, before the fields after it. The block's bytes are walked
 * representation by representation as they are fed (lengths only, through
 * the cursor, in a few bytes of state per direction, so across pieces and
 * CONTINUATIONs too), and the block is cut before such an update: the
 * part before it is ended as a block of its own for nghttp2, and the
 * update opens the next part, where nghttp2 takes it (with the same bounds
 * as one at the start). The request is reported whole, malformed
 * ("dynamic table size update after a field"), and the direction reads on.
 *
 * Two more irregular blocks nginx 1.22 serves and nghttp2 refuses
 * (pcaps/review20/h2c) are read as nginx reads them (h2c.c, "HPACK
 * representations walked"): a string longer than H2C_STRING_MAX (nginx
 * with large_client_header_buffers big enough) is not decoded, nghttp2
 * given an empty one (its length held back until whole, at most 6 bytes
 * per direction), and, when it was to be indexed, the table emptied as the
 * peer empties it; a Huffman string ending in 8 to 29 bits of 1s (padding
 * over 7 bits) loses its field, and the inflater is made anew (then, unless
 * the table was empty and the field not to be indexed, every later block
 * of the direction is marked "HPACK table unknown": an entry the new table
 * lacks is an HPACK error). The request is reported, marked, and the
 * direction reads on.
 *
 * Any other HPACK error stops the direction: nghttp2's inflater refuses
 * every later block once it failed, and the table past the failing
 * representation is not known. Those errors are ones nginx and nghttpd
 * both end the connection on (GOAWAY: an index 0 or past the table,
 * Huffman padding of 0s or EOS, an integer over 32 bits, an update above
 * the bound first in a block, a block that ends inside a field), so no
 * request the server would serve is lost by the stop, with one exception:
 * nghttp2's memory refused by the counting allocator (the bounds below).
 *
 * Fields (a name is matched case-insensitively; an uppercase one, an empty
 * one, a pseudo-header after a regular field, a repeated or unknown one,
 * one of the wrong side, a value with NUL, CR or LF, or a
 * connection-specific field (connection, keep-alive, proxy-connection,
 * transfer-encoding, upgrade, te but "te: trailers"; RFC 9113 8.2.2)
 * marks the head malformed, decoding goes on):
 *   request:  :method, :path (the uri; for CONNECT without :path, the
 *             :authority, as HTTP/1's host:port target), :authority (the
 *             host; without it the host field's value), and user-agent,
 *             upgrade, connection, content-length, metadata,
 *             metadata-flavor, x-aws-ec2-metadata-token(-ttl-seconds) as
 *             http.h reads them; no :method, or no :path (but CONNECT),
 *             is malformed;
 *   response: :status (3 digits, 100..999; else malformed, no status),
 *             content-length, server, location, upgrade, connection.
 * A request is the first client header block of a stream (odd id above
 * any the client opened before), or a server's PUSH_PROMISE block; later
 * client blocks of a stream (trailers) make no event. A
 * server block with :status is a response; without one (trailers), none.
 *
 * Observations: as http.h's (OBS_HTTP_REQUEST: name = host, aux = uri;
 * OBS_HTTP_RESPONSE: type = status, name/aux = the paired request's host
 * and uri), size = the block's bytes with its frame headers. A response
 * pairs with the request of its stream id when that one is remembered (the
 * last H2C_PENDING_MAX requests without a final response; a 1xx leaves it).
 *
 * Bounds. Per claimed flow, in flow->app_state: the struct h2c_flow (304
 * bytes) and, while requests wait for their final response, their
 * summaries packed at their real lengths (pending.h), allocated with the
 * first and freed with the last or when the flow ends; those of every flow
 * hold at most H2C_PENDING_BUDGET (32 MiB) together, and a request that
 * would pass it is not remembered (its response goes unpaired; an older
 * one it would have overwritten is kept) and is counted
 * (module.h2c.pending_refused in the stats table). The two HPACK
 * inflaters of a flow, and the two heads being decoded (18 KiB, allocated
 * with the slot's first flow and kept for the next), live in the module,
 * in one of H2C_FLOWS_MAX slots
 * (when all are taken, the new flow gets, in this order, the slot of a
 * flow whose connection ended (the flow table ended the flow: its
 * app_state is no longer ours; or FIN both ways, or a RST), of the flow
 * seen least recently among those that never began a header block
 * (connections that only opened, so a run of them cannot take a live
 * connection's tables), or of the flow seen least recently: the flow that
 * lost it stops, counted truncated; a slot idle for H2C_IDLE_US of packet
 * time is freed); every byte nghttp2
 * allocates for them goes through a counting allocator: at most
 * H2C_HEAP_MAX per flow and H2C_HEAP_TOTAL_MAX for all flows (a refused
 * allocation is an HPACK error for that flow's direction). No allocation
 * per packet but nghttp2's per header field.
 *
 * Upgrade. After an HTTP/1.1 request with "Upgrade: h2c" answered 101,
 * http.c hands the flow back (APP_NONE) with the client stream's cursor
 * after the request; the client's preface (RFC 7540 3.2) then claims it
 * here, and what the server already sent (its SETTINGS, its response to
 * the upgraded request, stream 1: unpaired) is read at once, before the
 * client's frames, from the packet turned around. The request's
 * HTTP2-Settings field is read by http.c (h2c_upgrade_settings): when it
 * holds a table or frame size, http.c leaves a struct h2c_upgrade in
 * flow->app_state as it hands the flow back (app stays APP_NONE, so the
 * other claims, which want no app_state, leave the flow to this one), and
 * the claim applies it to the server's side at once, as the 101
 * acknowledged it: the server's inflater's table bound (as a SETTINGS
 * ACK would), and the frame length it may send. The claim frees it; the
 * flow table frees it with the flow when nothing claims.
 *
 * Not read: HTTP/2 over TLS (the TLS analyzer reports its ALPN "h2").
 */
#ifndef EW_H2C_H
#define EW_H2C_H

#include <stddef.h>
#include <stdint.h>

#define H2C_PREFACE_LEN 24
#define H2C_FRAME_HEAD 9
#define H2C_FRAME_DEFAULT 16384    /* SETTINGS_MAX_FRAME_SIZE before SETTINGS */
#define H2C_FRAME_LIMIT 16777215u  /* the most SETTINGS_MAX_FRAME_SIZE may say */
#define H2C_TABLE_DEFAULT 4096     /* SETTINGS_HEADER_TABLE_SIZE before SETTINGS */
#define H2C_TABLE_MAX 65536        /* the largest dynamic table a decoder allows */
#define H2C_STRING_MAX 65536       /* the longest HPACK string nghttp2 decodes (NGHTTP2_HD_MAX_NV) */
#define H2C_STATIC_ENTRIES 61      /* HPACK's static table (RFC 7541 Appendix A) */
#define H2C_PENDING_MAX 16         /* requests remembered per flow for pairing */
#define H2C_PENDING_BUDGET (32u * 1024u * 1024u) /* ... by all flows: bytes */
#define H2C_SETTINGS_QUEUE 4       /* SETTINGS awaiting their ACK, per direction */
#define H2C_FLOWS_MAX 1024         /* flows holding HPACK inflaters */
#define H2C_HEAP_MAX (256u * 1024u)          /* nghttp2's bytes per flow */
#define H2C_HEAP_TOTAL_MAX (32u * 1024u * 1024u) /* ... for all flows */
#define H2C_IDLE_US 300000000ull   /* a slot idle this long (packet time) is freed */

/*
 * What the HTTP2-Settings field of an "Upgrade: h2c" request said that the
 * reading of the server's frames depends on. The field is the client's
 * SETTINGS payload, base64url-coded (RFC 7540 3.2.1), which the 101
 * acknowledges: it binds the server's encoder and framing from its first
 * HTTP/2 frame, before any SETTINGS frame of the client is acknowledged.
 * SETTINGS_HEADER_TABLE_SIZE bounds the table of the server's HPACK
 * encoder (the smallest and the last value kept, as for a SETTINGS
 * frame), SETTINGS_MAX_FRAME_SIZE the server's frames (the largest legal
 * value kept), SETTINGS_ENABLE_PUSH whether the server may push (the last
 * value kept); the other settings change nothing that is decoded here.
 */
struct h2c_upgrade {
	uint8_t fields;     /* HTTP2-Settings fields read (up to 255) */
	uint8_t bad;        /* one was not a base64url SETTINGS payload */
	uint8_t has_table;  /* a SETTINGS_HEADER_TABLE_SIZE was there */
	uint32_t table_min, table_last;
	uint32_t max_frame; /* the largest legal SETTINGS_MAX_FRAME_SIZE; 0: none */
	uint8_t push;       /* its last SETTINGS_ENABLE_PUSH: 0 none, 1 off (0), 2 on (1) */
};

/*
 * Read one HTTP2-Settings value v[0..n) (borrowed) into u (zeroed before
 * the head's first field): 8 characters at a time, each group one 6-byte
 * setting (libsodium's base64url decoder, no padding), so a value of any
 * length is read without a buffer. A value whose length is not a multiple
 * of 8, or that does not decode, sets bad (a server takes no setting from
 * it: nghttp2_session_upgrade2 refuses a payload that is not a multiple
 * of 6 bytes).
 */
void h2c_upgrade_settings(struct h2c_upgrade *u, const uint8_t *v, size_t n);

/* Does u hold a setting to apply: one sound HTTP2-Settings field (a
 * server must not upgrade with two, RFC 7540 3.2.1) with a table or frame
 * size in it? */
int h2c_upgrade_matters(const struct h2c_upgrade *u);

/*
 * Does the client stream buf[0..len) start with the connection preface?
 * 1 yes, 0 no, -1 when the bytes so far are a prefix of it.
 */
int h2c_sniff(const uint8_t *buf, size_t len);

/* The bytes nghttp2 holds for every flow's inflaters (the module's state
 * from init; for the tests). */
size_t h2c_heap(const void *state);

/* The bytes every flow's pending requests hold, as counted against
 * H2C_PENDING_BUDGET (the module's state from init; for the tests). */
size_t h2c_pending_bytes(const void *state);

/* The analyzer descriptor (analyzers/registry.c). */
struct module;
extern const struct module h2c_module;

#endif
