/*
 * tls.h - the TLS analyzer's pure parsers: the hellos of each direction of
 * a TCP stream (ClientHello from the initiator, ServerHello from the
 * responder), on any port and after STARTTLS, in, the facts of an
 * observation and its detail record out.
 *
 * Two steps, both over bounded cursors (sensor/cursor.h):
 *  1. tls_reassemble() walks the TLS record layer from the first byte of a
 *     stream, one sub-cursor per record, and concatenates the payloads of
 *     handshake records (content type 22) into a caller buffer until the
 *     first handshake message (4-byte header + its declared length) is
 *     whole. A hello may span several records and several TCP segments.
 *  2. tls_parse_handshake() parses that message with one sub-cursor per
 *     length field: handshake body → session_id, cipher_suites,
 *     compression_methods, extensions block → each extension → its inner
 *     lists (server_name list → host_name, ALPN list → protocol, ...). An
 *     inner length can never escape the outer one.
 *
 * Hostile-protocol rules (a broken rule makes the message malformed, with a
 * reason): record version major byte 3, record length <= 2^14; only
 * handshake records until the message is whole (and ChangeCipherSpec
 * records of one byte, skipped: GnuTLS takes them before and inside a
 * ClientHello); session_id <= 32 bytes;
 * cipher_suites and signature_algorithms lengths even and non-zero; each
 * list exactly fills its extension; the extensions exactly fill the
 * extensions block and the block ends the message; no extension type twice;
 * host_name and ALPN protocol names non-empty; ServerHello supported_versions
 * exactly 2 bytes. A first record's major may be 4 to 255 too (haproxy
 * routes such a hello): read, and the hello malformed.
 *
 * SNI routers. nginx's ssl_preread and haproxy's req.ssl_sni act on names
 * this grammar refuses (pcaps/review21/tls/FINDINGS.md). tls_router_sni()
 * reads a ClientHello as they do; a first ClientHello's event carries the
 * name it finds when the strict parse found none, and each other name it
 * finds (in the reassembled message, or in the bytes after the first record
 * header as on the wire) is one more event of the same hello, malformed.
 *
 * GREASE values (RFC 8701, 0x?a?a with equal bytes) are left out of the
 * supported versions list, the highest version and every JA4 input; the
 * cipher and extension counts of the record are as on the wire.
 *
 * Big hellos. A ClientHello may be longer than the stream's window (16 KiB
 * a direction, sensor/flow.h): OpenSSL takes up to 131,396 body bytes
 * (CLIENT_HELLO_MAX_LENGTH in ssl/statem/statem_srvr.c: what the length
 * fields of a ClientHello allow), GnuTLS up to 128 KiB
 * (MAX_HANDSHAKE_PACKET_SIZE), and a padding or unknown extension before
 * server_name, many key shares or records of one byte each put its SNI
 * past the window. A first ClientHello that will not be whole in the window
 * (longer than TLS_MSG_MAX, or whose records, at the rate they have gone,
 * take the stream past the window first) and whose declared body is at most
 * TLS_WALK_MAX is walked as its bytes come (tls_walk_feed), once 4 KiB of it
 * are held (a quarter of a smaller window): the flow keeps a struct tls_walk (where the walk is in
 * the records, the message and its nested lists, up to 33 bytes of a field
 * cut by a record or segment edge, and the fields of the event), and the
 * window slides past every byte walked, so the stream holds no more than a
 * segment and a cut record header. Uninteresting bodies (padding, key
 * shares, unknown extensions) pass without being kept; server_name, ALPN,
 * supported_versions and signature_algorithms are walked field by field.
 * The event is what tls_parse_handshake gives for the whole message
 * (unit.tls compares thousands of random hellos, malformed and cut ones
 * among them, however their bytes come), but for the walk's bounds: a
 * host_name is kept to 255 bytes (TLS_WALK_SNI: OpenSSL refuses longer),
 * ALPN names to 256 bytes with their length bytes, and JA4 is "" past 128
 * non-GREASE cipher suites, 64 signature algorithms or 64 extensions (the
 * counts stay as on the wire; repeats past 64 extensions go unseen, but for
 * the four walked into). A walk stopped malformed gives its reason at once
 * (a whole parse of a cut prefix would also say truncated). A direction
 * that starts with a handshake record has the wide window (132 KiB,
 * sensor/flow.c tls_first), so a hello in one segment of a capture made
 * with segmentation offload (up to 64 KiB) is not cut before the walk
 * starts; after STARTTLS text or an HTTP CONNECT the window is 16 KiB, and a
 * segment bringing more than its free room is cut there. A hello whose
 * body claims more than TLS_WALK_MAX is read as before: its first 16 KiB. A hello that fits is
 * read whole, as before, byte for byte (but one whose first records are so
 * small that it seemed not to fit: walked, the same event unless past the
 * walk's bounds).
 *
 * Truncation. When a message can never complete (the stream hit its cap or a
 * hole, or the record layer broke), its prefix is parsed with
 * OBS_F_TRUNCATED: an extension is used only when it is wholly present, and
 * the ClientHello observation is emitted only when the server_name host_name
 * was read (flags OBS_F_TRUNCATED, and OBS_F_MALFORMED when the record layer
 * broke). A cut ServerHello emits nothing. JA4 is computed only for a
 * ClientHello parsed whole and sound; otherwise it is "". In a cut or
 * malformed hello every field is "as far as it was read" (e.g. the version
 * falls back to legacy_version when supported_versions was not reached).
 *
 * Streams. A flow is claimed when its client stream starts with a
 * handshake record (content type 22, version 3.x with any minor: the
 * record version is legacy, and OpenSSL takes 3.5 and 3.255), or
 * (STARTTLS) when it starts with text lines and a handshake record (the
 * same) begins right after a line that is a STARTTLS-like command
 * (STARTTLS, "<tag> STARTTLS", STLS, AUTH TLS, AUTH SSL); the server's records
 * then start after its own text lines. So too after XMPP's <starttls/> (the
 * server's after <proceed/>), PostgreSQL's SSLRequest (the server's after
 * 'S'), LDAP's StartTLS extended request (the server's after its success
 * response) and MySQL's SSLRequest (the server's after its greeting):
 * tls_upgrade. The text is looked at up to TLS_STARTTLS_SCAN
 * bytes. Each direction's cursor is its stream's consumed; the window is
 * slid (flow_stream_slide) only by a walk (see "Big hellos") and after it.
 * A PROXY protocol header (v1 or v2, proxyproto.h) at the start of the
 * client stream (or of a CONNECT tunnel) comes before either, as servers
 * behind HAProxy or with nginx's `proxy_protocol` take it: the claim skips
 * it, waiting while the first bytes may still become one, and slides the
 * client's window past it, so the hello has the whole window as it would
 * without the header.
 *
 * Direction. The first handshake message of each direction is parsed once;
 * its own type decides the observation kind, so a capture that starts mid-way
 * with the roles reversed still reports each hello as what it is. A first
 * message that is neither hello (e.g. encrypted handshake data mid-connection)
 * is MOD_NOT_MINE and emits nothing. A direction that began with a whole
 * ClientHello goes on (a client sends a second ClientHello after a TLS 1.3
 * HelloRetryRequest, as tshark counts): ChangeCipherSpec records (1 byte) are
 * skipped, and the next handshake message is emitted when it is a whole and
 * sound ClientHello, up to TLS_HELLOS_MAX per direction; anything else
 * (application data, an alert, another handshake message, a cut or broken
 * one) finishes the direction. A later ClientHello that will not be whole
 * in the window (over 16 KiB: padding, or post-quantum key shares) is
 * walked as a first one is (see "Big hellos"), and emitted when it was
 * walked whole and sound, as a small one is. Messages after a hello in the same record are
 * not looked at: the next one starts at a record boundary. A finished
 * direction's stream is released with flow_stream_done. Reading stops at a
 * skipped hole (flow_stream_avail): a message cut by one is treated like one
 * cut by the stream cap.
 *
 * Observations:
 *   OBS_TLS_CLIENT_HELLO: name = SNI (escaped, "" when none), aux = ALPN
 *     protocols joined by ',' (each escaped, ',' inside one as \x2c; NULL
 *     when no ALPN), type = highest offered version (supported_versions,
 *     else legacy_version), size = handshake body length as declared.
 *   OBS_TLS_SERVER_HELLO: name = "", type = negotiated version
 *     (supported_versions, else legacy_version), code = selected cipher
 *     suite, size = handshake body length.
 *
 * Detail record (sensor/record.h encoding: one record, US between fields, RS
 * after it, GS between list items; all text escaped with text_escape):
 *   ClientHello: sni, alpn (GS-separated protocol names), legacy_version
 *     ("0x0303"), supported_versions (GS-separated "0x0304" items, GREASE
 *     left out; "" when the extension is absent), cipher count, extension
 *     count (both as on the wire, GREASE included), ech ("0"/"1": extension
 *     0xfe0d, 0xff02 or ESNI 0xffce present), ja4 ("" when not computed),
 *     malformed reason ("" when fine), version (highest offered, "0x0304"),
 *     truncated ("0"/"1"), then only when not TCP: transport ("quic", a
 *     ClientHello from the CRYPTO frames of QUIC Initial packets; the field
 *     is absent for TLS over TCP, so older records read the same; a QUIC
 *     hello's ja4 starts with "q" instead of "t")
 *   ServerHello: version ("0x0304", negotiated), cipher ("0x1301"),
 *     legacy_version ("0x0303"), malformed reason, truncated ("0"/"1")
 * Version and cipher fields are "0x" and four lowercase hex digits.
 */
#ifndef EW_TLS_H
#define EW_TLS_H

#include <stddef.h>
#include <stdint.h>

#include "../sensor/record.h"

#define TLS_MSG_MAX 16384   /* largest handshake message reassembled whole (header included) */
#define TLS_REC_MAX 16384   /* largest TLSPlaintext fragment (2^14) */
#define TLS_SNI_MAX 1024    /* escaped SNI + NUL; longer names are cut */
#define TLS_ALPN_MAX 1024   /* escaped ALPN text (record field or aux) + NUL */
#define TLS_VERSIONS_MAX 128 /* supported_versions: at most 127 on the wire */
#define TLS_JA4_MAX 40      /* "t13d1516h2_8daaf6152771_b186095e22b6" + NUL */
#define TLS_INFO_MAX 4096   /* the whole detail record */
#define TLS_HELLOS_MAX 4    /* ClientHellos emitted per direction (a retry after HRR) */
#define TLS_STARTTLS_SCAN 4096 /* text looked at before a STARTTLS handshake */
#define TLS_CCS_SNIFF 4     /* ChangeCipherSpec records looked past before a first ClientHello */

enum tls_hs_type { TLS_CLIENT_HELLO = 1, TLS_SERVER_HELLO = 2 };

/* tls_reassemble results. */
enum tls_asm {
	TLS_ASM_DONE = 0, /* the message is whole in buf[0..*msg_len) */
	TLS_ASM_MORE,     /* the stream ends first: buf holds what is there */
	TLS_ASM_BIG,      /* longer than cap: buf holds its first cap bytes */
	TLS_ASM_NOT_HS,   /* the stream does not start with a handshake record */
	TLS_ASM_BAD,      /* the record layer broke (*why); buf holds what came before */
};

/*
 * Gather the first handshake message of stream s[0..n) (bytes from the start
 * of one TCP direction) into buf (cap bytes). Sets *msg_len to the bytes
 * gathered (always) and *why to a static reason on TLS_ASM_BAD (else NULL).
 * Bytes after the message are not looked at. Pure: s is only borrowed, no
 * allocation, no globals.
 */
int tls_reassemble(const uint8_t *s, size_t n, uint8_t *buf, size_t cap, size_t *msg_len,
		   const char **why);

/*
 * As tls_reassemble, and *used = the offset in s just past the last record
 * read (the record holding the message's last byte: it may lie beyond n when
 * that record is not all there yet; 0 when no record was read). The next
 * message of another record starts there.
 */
int tls_gather(const uint8_t *s, size_t n, uint8_t *buf, size_t cap, size_t *msg_len,
	       size_t *used, const char **why);

/* tls_next results. */
enum tls_next_result {
	TLS_NEXT_WAIT = 0, /* the bytes end first (a record header or a CCS is cut) */
	TLS_NEXT_HS,       /* a handshake record starts at s + *skip */
	TLS_NEXT_END,      /* anything else: application data, alert, not TLS */
};

/*
 * What follows a hello at s[0..n) (a record boundary): whole
 * ChangeCipherSpec records (type 20, length 1) are skipped, *skip is set to
 * the bytes skipped, and the next record decides. Pure.
 */
int tls_next(const uint8_t *s, size_t n, size_t *skip);

/*
 * The host_name an SNI router (nginx's ssl_preread, haproxy's req.ssl_sni)
 * would take from the ClientHello message at m[0..n), read more leniently
 * than tls_parse_handshake reads it (tls.c); escaped into dst (cap bytes),
 * its length returned, 0 when there is none. Called on the reassembled
 * message and on the bytes after the first record header as they are on
 * the wire (haproxy reads them so, later record headers and all). Pure.
 */
size_t tls_router_sni(const uint8_t *m, size_t n, char *dst, size_t cap);

/*
 * Where TLS starts in a stream that opens with text lines (STARTTLS):
 * client != 0 wants the line before to be a STARTTLS-like command (see
 * "Streams"); for the server any line start will do. Returns 1 with *off set
 * to the first byte of a handshake record (0x16 0x03 0x00..0x04) that starts
 * a line; 0 when s is text so far and the answer needs more bytes; -1 when
 * it is not (a byte that is neither text nor a record there, or no answer
 * within TLS_STARTTLS_SCAN bytes). Text is any byte but the control
 * characters other than tab, CR and LF. Pure.
 */
int tls_starttls(const uint8_t *s, size_t n, int client, size_t *off);

/* The upgrade a connection starts with before TLS (tls_upgrade). */
enum tls_upgrade_kind {
	TLS_UP_TEXT = 1, /* a STARTTLS-like command line, then the server's lines (tls_starttls) */
	TLS_UP_XMPP,     /* <starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>, then <proceed/> */
	TLS_UP_PGSQL,    /* PostgreSQL's SSLRequest, then the server's 'S' */
	TLS_UP_LDAP,     /* LDAP's StartTLS ExtendedRequest, then its success response */
	TLS_UP_MYSQL,    /* MySQL's SSLRequest; the server's TLS follows its greeting */
	/* (the last: tests/fuzz/fuzz_tls.c tries every kind up to it) */
};

/*
 * Where TLS starts in a stream that opens with an upgrade: the text lines
 * of tls_starttls, or XMPP's <starttls/> and <proceed/>, PostgreSQL's
 * SSLRequest and 'S', LDAP's StartTLS extended operation and its success
 * response, MySQL's SSLRequest and the server's greeting. For the client (client != 0) *kind is set to the upgrade found
 * (0 when none); for the server *kind is the client's, and only that
 * upgrade's server half is looked for. Returns as tls_starttls: 1 with *off
 * at the first handshake record, 0 when more bytes are needed, -1 when it is
 * not (within TLS_STARTTLS_SCAN bytes). Pure.
 */
int tls_upgrade(const uint8_t *s, size_t n, int client, int *kind, size_t *off);

/*
 * What tls_parse_handshake found. The caller owns the struct (about 70 KB:
 * keep it in module state or on the heap); every field is overwritten by
 * each call, and the strings stay valid until the next call.
 */
struct tls_hello {
	uint8_t hs_type;          /* TLS_CLIENT_HELLO / TLS_SERVER_HELLO; 0 when unread */
	uint32_t hs_len;          /* declared body length */
	uint16_t legacy_version;
	uint16_t version;         /* client: highest offered; server: negotiated */
	uint16_t cipher;          /* server: selected cipher suite */
	int has_sni;              /* a host_name was read */
	char sni[TLS_SNI_MAX];    /* escaped first host_name; "" when none */
	size_t sni_len;
	unsigned n_alpn;          /* ALPN protocol names read */
	char alpn[TLS_ALPN_MAX];  /* escaped names, GS-separated (record form) */
	size_t alpn_len;
	char alpn_aux[TLS_ALPN_MAX]; /* escaped names, ','-separated (obs aux) */
	size_t alpn_aux_len;
	int has_versions;         /* supported_versions extension seen */
	uint16_t versions[TLS_VERSIONS_MAX]; /* its non-GREASE values, in order */
	unsigned n_versions;
	unsigned n_ciphers, n_exts; /* as on the wire, GREASE included */
	int ech;                  /* ECH (0xfe0d, 0xff02) or ESNI (0xffce) seen */
	char ja4[TLS_JA4_MAX];    /* "" unless whole and sound */
	const char *reason;       /* static: why the parse stopped; NULL when fine */
	const char *transport;    /* static: "quic", or NULL for TCP (no record field) */
	unsigned flags;           /* OBS_F_MALFORMED / OBS_F_TRUNCATED */
	int cut;                  /* SNI or ALPN text was capped */
	const char *info;         /* the detail record (NUL-terminated) */
	size_t info_len;

	/* working space, not results */
	uint16_t ja_ciphers[TLS_MSG_MAX / 2]; /* non-GREASE, JA4 */
	unsigned ja_nciphers;
	uint16_t ja_exts[TLS_MSG_MAX / 4];    /* non-GREASE, JA4 */
	unsigned ja_nexts;
	uint16_t ja_sigalgs[TLS_MSG_MAX / 2]; /* non-GREASE, wire order */
	unsigned ja_nsigalgs;
	int ja_alpn;              /* first ALPN name seen: ja_alpn_first/last valid */
	uint8_t ja_alpn_first, ja_alpn_last;
	uint8_t seen[65536 / 8];  /* extension types seen (duplicates) */
	struct rec rec;
	char info_buf[TLS_INFO_MAX];
};

/*
 * Parse the handshake message msg[0..len) (4-byte header included), a
 * ClientHello or a ServerHello, into *out and write its detail record.
 * flags: OBS_F_TRUNCATED says msg is only a prefix (the rest never came), so
 * running out of bytes is MOD_TRUNCATED rather than MOD_MALFORMED.
 *
 * Returns MOD_OK; MOD_TRUNCATED (what was wholly present is in *out);
 * MOD_MALFORMED (what could be read is in *out, reason set, OBS_F_MALFORMED
 * in out->flags); MOD_NOT_MINE when msg is not a ClientHello or ServerHello
 * (out->info is then ""). Pure: msg is only borrowed, no allocation, no
 * globals, no output.
 */
int tls_parse_handshake(const uint8_t *msg, size_t len, unsigned flags, struct tls_hello *out);

/*
 * As tls_parse_handshake, for a hello carried by another transport:
 * transport (a static string such as "quic", or NULL for TCP) is kept in
 * out->transport and written as the trailing "transport" field of a
 * ClientHello's detail record. Pure, like tls_parse_handshake.
 */
int tls_parse_transport(const uint8_t *msg, size_t len, unsigned flags, const char *transport,
			struct tls_hello *out);

/*
 * The streaming walk of a ClientHello too big for the stream's window (tls.h,
 * "Big hellos"). The walker keeps where it is in the record layer, in the
 * handshake message and in its nested lists, a few bytes of a field cut by a
 * record or segment edge, and the fields the event needs; nothing else of
 * the message. About 1.5 KB.
 */
#define TLS_WALK_MAX 131396   /* largest ClientHello body walked (OpenSSL's bound) */
#define TLS_WALK_SNI 255      /* host_name bytes kept (OpenSSL's TLSEXT_MAXLEN_host_name) */
#define TLS_WALK_ALPN 256     /* ALPN names kept, each with its length byte */
#define TLS_WALK_CIPHERS 128  /* non-GREASE cipher suites kept for JA4 */
#define TLS_WALK_EXTS 64      /* extension types kept (repeats, JA4) */
#define TLS_WALK_SIGALGS 64   /* non-GREASE signature algorithms kept for JA4 */

struct tls_walk {
	/* where the walk is */
	uint32_t left[4];  /* bytes left: handshake body, extensions, extension, its list */
	uint32_t run;      /* bytes left of a field walked as it passes (skipped or kept) */
	uint32_t run_len;  /* its length */
	uint16_t rec_left; /* payload bytes left in the current record; 0: a header is next */
	uint8_t step;      /* what comes next (tls.c, enum wstep) */
	uint8_t depth;     /* left[0..depth] are open */
	uint8_t keep;      /* the run is kept: 1 host_name, 2 ALPN name */
	uint8_t acc_n;     /* bytes of acc gathered */
	uint8_t acc[33];   /* a fixed-size field cut by a record or segment edge */
	uint16_t ext_type; /* the extension being walked */
	const char *reason; /* static: malformed, the walk stopped; NULL when fine */
	int not_hello;     /* the message is not a ClientHello, or longer than TLS_WALK_MAX */
	/* what the event needs */
	uint32_t hs_len;
	uint16_t legacy_version;
	uint32_t n_ciphers, cs_seen; /* cs_seen: counted as they pass, n_ciphers when whole */
	uint32_t n_exts;
	uint8_t ech, inexact;  /* inexact: a JA4 input past its bound (no JA4) */
	uint8_t exts_seen;     /* server_name, ALPN, supported_versions, sigalgs: 1, 2, 4, 8 */
	uint8_t exts_done;     /* the same, for extensions walked whole */
	uint16_t ciphers[TLS_WALK_CIPHERS];
	unsigned n_ja_ciphers;
	uint16_t types[TLS_WALK_EXTS];
	unsigned n_types;
	uint16_t sigalgs[TLS_WALK_SIGALGS];
	unsigned n_sigalgs;
	uint16_t versions[TLS_VERSIONS_MAX];
	unsigned n_versions;
	uint8_t sni_state;     /* 0 none, 1 being kept, 2 kept whole */
	uint8_t sni_cut;       /* the host_name was longer than TLS_WALK_SNI */
	uint16_t sni_len;
	uint8_t sni[TLS_WALK_SNI];
	uint8_t alpn_cut;      /* a name did not fit in alpn[] */
	uint8_t alpn_first, alpn_last; /* ends of the first name (JA4) */
	uint16_t alpn_len;
	unsigned n_alpn;
	uint8_t alpn[TLS_WALK_ALPN]; /* length byte, name, length byte, name ... */
};

/* Start a walk at a record boundary. */
void tls_walk_init(struct tls_walk *w);

/*
 * Walk the records s[0..n), the stream from where the last call stopped.
 * Sets *used to the bytes walked (the caller drops them; a record header cut
 * short is left for the next call) and *why to a static reason on
 * TLS_ASM_BAD. Returns TLS_ASM_DONE when the walk is over (the message
 * walked whole, and *used then reaches the end of the record holding its
 * last byte, which may lie past n; or stopped: malformed, not a
 * ClientHello), TLS_ASM_MORE when the bytes end first, TLS_ASM_BAD when the
 * record layer broke. Pure: s is only borrowed.
 */
int tls_walk_feed(struct tls_walk *w, const uint8_t *s, size_t n, size_t *used, const char **why);

/*
 * The hello walked into *out, as tls_parse_handshake gives it for the whole
 * message (flags OBS_F_TRUNCATED: the stream ended before the walk did), but
 * for the bounds above: a host_name is kept to TLS_WALK_SNI bytes, ALPN
 * names to TLS_WALK_ALPN (both set out->cut), and JA4 is "" when a list it
 * hashes was longer than its bound or repeats went past TLS_WALK_EXTS. Same
 * results as tls_parse_handshake. Pure.
 */
int tls_walk_hello(const struct tls_walk *w, unsigned flags, struct tls_hello *out);

/* True for an RFC 8701 GREASE value (0x0a0a, 0x1a1a, ... 0xfafa). */
static inline int tls_grease(uint16_t v)
{
	return (v & 0x0f0f) == 0x0a0a && (v >> 8) == (v & 0xff);
}

/* The analyzer descriptor (analyzers/registry.c). */
struct module;
extern const struct module tls_module;

#endif
