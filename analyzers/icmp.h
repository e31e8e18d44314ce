/*
 * icmp.h - the ICMP and ICMPv6 analyzer: one message in, the facts of an
 * observation and its detail record out; for an error message, the packet it
 * quotes tied back to its flow.
 *
 * Every ICMP (IPv4, protocol 1) and ICMPv6 (IPv6, next header 58) message is
 * one observation, whatever its type: echo, errors, neighbour discovery and
 * router messages alike (the conformance corpus expects one event per ICMP
 * packet). The parse is pure and runs over cursors (sensor/cursor.h):
 *   header: type, code, checksum (not verified), 4 bytes of rest-of-header.
 *   echo (v4 8/0, v6 128/129): id and sequence from the rest-of-header; the
 *     payload is everything after the 8-byte header; its Shannon entropy
 *     (text_entropy, bits per byte) is kept as an integer x100, rounded.
 *   errors (v4 3 unreachable, 5 redirect, 11 time exceeded, 12 parameter
 *     problem; v6 1 unreachable, 2 packet too big, 3 time exceeded, 4
 *     parameter problem): the quoted IP header after the 8-byte header:
 *     IPv4 (version, IHL with options, total length, fragment offset,
 *     protocol, source, destination) or IPv6 (next header, source,
 *     destination, then the extension headers, at most ICMP_MAX_EXT of them,
 *     as sensor/decode.c walks them), then the first bytes of the quoted
 *     transport header: TCP/UDP ports, or the type and echo id of a quoted
 *     ICMP/ICMPv6 echo. The MTU of v4 3/4 ("fragmentation needed") and of v6
 *     packet-too-big is kept too.
 *
 * Nested lengths narrow the quote: an RFC 4884 length (v4 3/11/12: byte 5,
 * in 32-bit words; v6 1/3: byte 4, in 64-bit words), when non-zero, bounds
 * the quoted datagram (a length beyond the message takes what is there); the
 * quoted IPv4 total length (minus IHL) or IPv6 payload length bounds the
 * transport bytes. A quoted non-first fragment has no transport header: its
 * ports stay unknown, which is not an error.
 *
 * Hostile-protocol rules (a broken rule makes the message malformed with a
 * reason; the outer fields are still reported): the quoted IP version must
 * be that of the ICMP flavour (4 for ICMP, 6 for ICMPv6); IPv4 IHL >= 5 and
 * total length >= IHL * 4; at most ICMP_MAX_EXT IPv6 extension headers,
 * hop-by-hop only first.
 *
 * Truncation: running out of bytes anywhere the parse needs them (the 8-byte
 * header, the quoted IP header and its options or extension headers, the
 * first 4 bytes of a quoted TCP/UDP header, the first 6 of a quoted echo)
 * makes the message truncated: what was wholly read is reported, the rest is
 * left unknown. Quotes are cut by design (ICMPv4 routers quote the IP header
 * and 8 bytes), so a quote that holds the ports is complete for us. A
 * capture that cut the datagram (the caller passes OBS_F_TRUNCATED) is
 * truncated too, since the payload length and entropy are of a prefix.
 *
 * Flows (icmp_tie_flow): the quoted tuple is looked up in the flow table as
 * the quoted sender sent it (a quoted echo keys on its id, other protocols
 * but TCP/UDP on ports 0). It matches only when the ICMP message is
 * addressed to the quoted packet's sender (outer destination == quoted
 * source), as a genuine error is. On a match, a v4 unreachable (type 3, but
 * not code 4, fragmentation needed: a path-MTU signal, not a refusal), a v4
 * time exceeded (11), a v6 unreachable (1) or a v6 time exceeded (3) sets
 * FLOW_UNREACH on the flow, which makes its outcome "blocked". This is a
 * fact about the flow (an ICMP error quoted it), not a verdict.
 *
 * Observation (OBS_ICMP): name = the quoted destination address as text for
 * an error whose quote was read, else ""; type, code; size = payload length
 * (bytes after the 8-byte header, as captured); flags OBS_F_TRUNCATED /
 * OBS_F_MALFORMED; info = the detail record.
 *
 * Detail record (sensor/record.h encoding: one record, US between fields, RS
 * after it; all values printable ASCII, unknown values ""):
 *    0 v            "4" | "6"
 *    1 type         decimal
 *    2 code         decimal
 *    3 name         "echo-request", "dest-unreachable", ... ("" when unknown)
 *    4 id           echo identifier (echo only)
 *    5 seq          echo sequence number (echo only)
 *    6 payload_len  bytes after the 8-byte header, as captured
 *    7 entropy      payload entropy x100, rounded, "0".."800" (echo only)
 *    8 qproto       quoted transport protocol number (errors whose quoted
 *                   IP header was read; "" otherwise, and so are 9..13, 16)
 *    9 qsrc         quoted source address (IPv6 in RFC 5952 form)
 *   10 qsport       quoted source port (TCP/UDP, when read)
 *   11 qdst         quoted destination address
 *   12 qdport       quoted destination port (TCP/UDP, when read)
 *   13 matched      "1" when the quote matched a known flow, else "0"
 *   14 reason       why the message is malformed ("" when fine)
 *   15 truncated    "1" when truncated, else "0"
 *   16 qid          quoted ICMP/ICMPv6 echo identifier (when read)
 *   17 mtu          next-hop MTU (v4 3/4, v6 2)
 */
#ifndef EW_ICMP_H
#define EW_ICMP_H

#include <stddef.h>
#include <stdint.h>

#include "../sensor/record.h"

#define ICMP_MAX_EXT 8     /* IPv6 extension headers walked in a quote */
#define ICMP_INFO_MAX 512  /* the whole detail record (fits with room to spare) */
#define ICMP_ADDR_MAX 46   /* an address as text, NUL included */
#define ICMP_FILL_PERIOD 32 /* the longest repeating pattern icmp_fill recognises */
#define ICMP_DIGEST_SKIP 16 /* leading payload bytes the digest leaves out */

/* The quoted packet of an error message. Optional numbers are -1 when unknown. */
struct icmp_quote {
	int present;              /* fixed IP header read: ipv, proto, src, dst valid */
	uint8_t ipv, proto;
	uint8_t src[16], dst[16]; /* IPv4 uses the first 4 bytes, rest zero */
	int32_t sport, dport;     /* TCP/UDP ports */
	int64_t tcp_seq;          /* TCP: the quoted segment's sequence number; -1 when cut */
	int32_t qtype;            /* quoted ICMP/ICMPv6 type */
	int32_t id;               /* quoted echo identifier */
	int matched;              /* icmp_tie_flow found the flow */
};

/*
 * What icmp_parse found. The caller owns the struct; every field is
 * overwritten by each call and the strings stay valid until the next call.
 * Optional numbers are -1 when unknown.
 */
struct icmp_msg {
	uint8_t ipv;              /* 4: ICMP, 6: ICMPv6 */
	int32_t type, code;       /* -1 when cut before them */
	const char *name;         /* static, NULL when the type has no name */
	int echo;                 /* an echo request or reply */
	int error;                /* an error message (it quotes a packet) */
	int32_t id, seq;          /* echo only */
	uint32_t payload_len;     /* bytes after the 8-byte header */
	int32_t entropy100;       /* icmp_carries_data types only: bits per
				   * byte x100, rounded */
	/* icmp_carries_data types only (else 0): the payload less its filler
	 * (icmp_fill), that part's entropy x100, and the payload's keyed digest
	 * (hash_keyed of the bytes after the first ICMP_DIGEST_SKIP, where ping
	 * keeps its send time, a struct timeval, and a reply that writes its
	 * own is still an echo; 0 when the capture cut the payload), and the
	 * same digest of the data alone (the bytes after the first
	 * ICMP_DIGEST_SKIP and before the filler: a `ping -p` pattern, not
	 * the size; 0 when cut), and the data's first ICMP_DIGEST_SKIP bytes,
	 * which both digests leave out (lead_len: at most data_len; 0 when cut)
	 * */
	uint32_t data_len;
	int32_t data_entropy100;
	uint64_t digest;
	uint64_t data_digest;
	uint8_t lead[ICMP_DIGEST_SKIP];
	uint8_t lead_len;
	int64_t mtu;              /* v4 3/4 and v6 2 */
	struct icmp_quote q;
	const char *reason;       /* static: why malformed; NULL when fine */
	unsigned flags;           /* OBS_F_TRUNCATED / OBS_F_MALFORMED */
	char qdst[ICMP_ADDR_MAX]; /* quoted destination as text; "" when none */
	size_t qdst_len;
	const char *info;         /* the detail record, after icmp_record */
	size_t info_len;

	/* working space, not results */
	struct rec rec;
	char info_buf[ICMP_INFO_MAX];
};

/*
 * Parse the ICMP (ipv 4) or ICMPv6 (ipv 6) message msg[0..len), header
 * included, into *out. flags: OBS_F_TRUNCATED when the capture cut the
 * datagram. Writes no record (icmp_record does, once the flow is tied).
 *
 * Returns MOD_OK; MOD_TRUNCATED (bytes ran out, or flags said so: what was
 * wholly read is in *out, OBS_F_TRUNCATED in out->flags); MOD_MALFORMED (a
 * rule above broke: reason set, OBS_F_MALFORMED in out->flags; the outer
 * fields are in *out); MOD_NOT_MINE when ipv is neither 4 nor 6. A message
 * that ends inside its 8-byte header is MOD_MALFORMED ("shorter than its
 * header") unless flags say the capture cut it; what it has is in *out (one
 * byte gives the type, code -1). With no byte at all the result is
 * MOD_TRUNCATED and out->type is -1: there is nothing to report. Pure: msg is only borrowed; no
 * allocation, no globals, no output.
 */
int icmp_parse(const uint8_t *msg, size_t len, int ipv, unsigned flags, struct icmp_msg *out);

/*
 * Tie the quote of an error message to its flow, as described above: sets
 * m->q.matched and, for an unreachable or time-exceeded message, FLOW_UNREACH
 * on the flow. outer_ipv/outer_dst are the ICMP packet's IP version and
 * destination. ft may be NULL (nothing matches). Returns the flow (owned by
 * the table, valid only until the next table call) or NULL.
 */
struct flow_table;
struct flow;
struct flow *icmp_tie_flow(struct flow_table *ft, int outer_ipv, const uint8_t *outer_dst,
			   struct icmp_msg *m);

/* Write the detail record of m (layout above) into m->info_buf and point
 * m->info/info_len at it. */
void icmp_record(struct icmp_msg *m);

/* The name of an ICMP (ipv 4) or ICMPv6 (ipv 6) type ("echo-request", ...),
 * a static string; NULL when it has none. */
const char *icmp_type_name(int ipv, unsigned type);

/*
 * Does an ICMP (ipv 4) or ICMPv6 (ipv 6) message of this type start
 * something of its own (a request, or a type of no known kind, which a host
 * sends only to carry something), rather than answer, report an error or keep
 * the link (replies, errors, router and neighbour discovery, MLD)? The
 * answering kinds are listed; all else starts: echo (8, 128), timestamp
 * (13), information (15), address mask (17), extended echo (42, 160), node
 * information query (139), and every unassigned or experimental type.
 */
int icmp_starts(int ipv, unsigned type);

/*
 * Can a message of this type carry data of the sender's choosing: one that
 * starts something (icmp_starts) or the reply to such a request (echo,
 * timestamp, information, address mask, extended echo, node information
 * replies)? These have their payload's entropy measured, and icmp_tunnel
 * judges them; errors (they quote a packet) and link upkeep do not.
 */
int icmp_carries_data(int ipv, unsigned type);

/*
 * The filler at the end of payload p[0..n): the length of its longest tail
 * that only repeats what came before it, either a pattern of at most
 * ICMP_FILL_PERIOD bytes (p[i] == p[i - d], d fixed: ping -p, Windows'
 * "abcdefghijklmnopqrstuvw", zeros) or bytes counting up by one (p[i] ==
 * p[i - 1] + 1 mod 256: iputils' and BSD's default after the timestamp,
 * traceroute's). The bytes before it, the pattern's first period or the
 * count's first byte included, are the data. A tail shorter than
 * ICMP_FILL_PERIOD bytes is not filler (random data repeats a byte at some
 * distance now and then). Pure; the period tests are taken shortest first,
 * none once its period is not below the data found, and a multiple of a
 * period starts where that period's tail says it must hold, so a run of
 * zeros or of one pattern is read once (8 bytes a compare), not once per
 * period, and a test whose period the bytes do not have ends within about
 * two periods.
 */
size_t icmp_fill(const uint8_t *p, size_t n);

/* The analyzer descriptor (analyzers/registry.c). */
struct module;
extern const struct module icmp_module;

#endif
