/*
 * dns.h - the DNS analyzer's pure parser: one DNS message in, the facts of
 * an observation and its detail record out.
 *
 * The normal path parses with ldns (ldns_wire2pkt) and renders names and
 * rdata itself from ldns's uncompressed wire bytes (never ldns_rdf2str; the
 * rdata of types shown as "\# len hex" is taken from the wire, since ldns
 * drops bytes beyond its per-type descriptors). A
 * cursor-based walk over the message (sensor/cursor.h) runs first and
 * enforces the hostile-protocol rules that ldns does not: a compression
 * pointer must point strictly before the start of the name piece that
 * contains it (so no loops and no forward jumps), a name is at most 255 wire
 * bytes, a label at most 63, at most DNS_MAX_JUMPS pointers per name, each
 * rdata of a type we decode must be exactly filled by its fields, at most
 * one OPT, owned by the root and exactly filled by its options (RFC 6891
 * 6.1.2), TSIG only last, and the message must end where its last RR ends
 * (over TCP: the length prefix must match). The first question's name
 * alone, when it breaks the pointer or length rules, is then read as
 * dnsmasq reads it (pointers anywhere, up to DNS_LOOSE_JUMPS; up to
 * DNS_LOOSE_NAME_MAX bytes, given by its last labels that fit 255): the
 * message stays malformed, but its qname is the name a resolver acts on
 * (dns.c, name_read_loose). The rdata of other types ldns
 * reads by their fields: one its fields do not fill exactly (a HINFO with
 * bytes left over) is malformed wherever it lies ("answer 2: HINFO rdata
 * longer than its fields"). When that walk or ldns rejects the message,
 * the same walk renders what could be read (header, questions
 * and every RR up to the damage) and the message is flagged malformed with
 * a reason.
 *
 * Names are in presentation form without the trailing dot; the root is ".".
 * Inside a label '.' is written "\." and '\' is written "\\"; bytes outside
 * 0x20..0x7e are written \xNN (two lowercase hex digits). NOTE: this is not
 * RFC 1035's \DDD: it is the project-wide escaping of sensor/text.h, so one
 * decoder undoes qnames, Hosts and SNIs alike.
 *
 * Detail record (sensor/record.h encoding; US between fields, RS after each
 * record, GS between list items; all text escaped as above):
 *   header: id, "query"|"response", opcode, rcode (12 bits, with the EDNS
 *           extended bits), flags (comma list of aa,tc,rd,ra,ad,cd that are
 *           set), qdcount, ancount, nscount, arcount (as on the wire),
 *           edns_udp_size, edns_version, edns_do ("0"/"1"; all three "" when
 *           there is no OPT), "udp"|"tcp", malformed reason ("" when fine,
 *           and when the message reads well up to where the capture cut
 *           it), truncated ("1" when the caller said the capture cut the
 *           message, OBS_F_TRUNCATED; else "0")
 *   per question: "Q", name, type, class (type and class "" when the
 *           message ends between the name and them)
 *   per RR: "AN"|"NS"|"AR", name, type, class, ttl, data (OPT in the
 *           additional section is not listed: it is in the header)
 *   last, only when something was cut to fit: "CUT"
 * data by type:
 *   A, AAAA                      the address (AAAA in RFC 5952 form)
 *   NS CNAME PTR DNAME MD MF MB MG MR   the target name
 *   MX KX AFSDB RT                "pref name"
 *   MINFO RP                      "name name"
 *   SOA                           "mname rname serial refresh retry expire minimum"
 *   SRV                           "priority weight port target"
 *   TXT SPF                       each character-string, items separated by GS
 *   NULL                          lowercase hex of the rdata
 *   CAA                           "flags tag value"
 *   SVCB HTTPS                    "priority target" then " key=value" per
 *                                 parameter: mandatory, alpn and ipv4hint /
 *                                 ipv6hint decoded (lists comma-separated,
 *                                 ',' inside an alpn id as \x2c), port as a
 *                                 number, no-default-alpn bare, others
 *                                 (ech, keyNNNNN) as lowercase hex; keys
 *                                 out of order or repeated, or a mandatory
 *                                 list out of order, repeating a key or
 *                                 naming mandatory, do not parse (RFC 9460
 *                                 2.2, 8)
 *   anything else                 "\# len hex" (RFC 3597)
 *   rdata that does not parse as its type is shown as "\# len hex" too, and
 *   the message is flagged malformed. Empty rdata (UPDATE deletes and
 *   prerequisites) is "\# 0" for every type but NULL, and is not malformed;
 *   so for TXT an empty data field is one empty string.
 * Each data field is capped at DNS_DATA_MAX bytes and the whole record at
 * DNS_INFO_MAX; a cut sets dns_out.cut and appends the "CUT" record.
 */
#ifndef EW_DNS_H
#define EW_DNS_H

#include <stddef.h>
#include <stdint.h>

#include "../sensor/record.h"
#include "module.h"

#define DNS_NAME_MAX 1024     /* escaped name + NUL: 255 wire bytes always fit */
#define DNS_INFO_MAX 8192     /* the whole detail record */
#define DNS_DATA_MAX 4096     /* one rendered rdata field */
#define DNS_REASON_MAX 96
#define DNS_SCRATCH_MAX 65536 /* uncompressed rdata of one RR from ldns */
#define DNS_MAX_JUMPS 128     /* compression pointers followed per name: a name
			       * has at most 127 labels, and a legal one may put a
			       * pointer after each */
#define DNS_LOOSE_JUMPS 255   /* pointers followed in a first question's name
			       * read loosely (dns.c, name_read_loose): dnsmasq's
			       * limit */
#define DNS_LOOSE_NAME_MAX 1025 /* wire bytes of such a name (dnsmasq's
				 * MAXDNAME); reported by its last 255 */
#define DNS_RR_SEEN 64        /* RRs whose wire place the walk remembers */

/* Extra input flags for dns_parse_message (beside OBS_F_*): skip ldns and
 * use the cursor walk alone; or hand every sound message to ldns, even one
 * the walk has read whole (see dns.c). For differential tests and the fuzz
 * driver. */
#define DNS_PARSE_OWN (1u << 16)
#define DNS_PARSE_LDNS (1u << 17)

/* An uncompressed wire name, ending in its root label. */
struct dns_wname {
	uint8_t w[256];
	size_t len;
};


/*
 * What dns_parse_message found. The caller owns the struct (it is large:
 * keep it in module state or static storage, not on a small stack); every
 * field is overwritten by each call, and the strings stay valid until the
 * next call.
 */
struct dns_out {
	char qname[DNS_NAME_MAX]; /* escaped first question name; "" when none */
	size_t qname_len;
	uint16_t id;
	uint16_t qtype, qclass;   /* of the first question; 0 when none or cut */
	uint16_t rcode;           /* header rcode | EDNS extended rcode << 4 */
	uint8_t qr;               /* 1 for a response */
	uint8_t opcode;
	uint16_t qdcount, ancount, nscount, arcount; /* as on the wire */
	unsigned flags;           /* OBS_F_* for the observation: the caller's
				   * OBS_F_TCP/OBS_F_TRUNCATED, plus
				   * OBS_F_MALFORMED when malformed */
	char reason[DNS_REASON_MAX]; /* why the parse stopped; "" when fine */
	int cut;                  /* a data field or the record was capped */
	const char *info;         /* the detail record (NUL-terminated) */
	size_t info_len;

	/* working space, not results */
	const uint8_t *qwire;     /* wire form of qname (valid during the parse) */
	size_t qwire_len;         /* 0: no qname rendered */
	struct rec rec;
	/* Section, type, class and rdata of the first DNS_RR_SEEN RRs as the
	 * checking walk read them (OPT included), so the ldns path can take its
	 * wire RRs from here instead of reading every owner name again; beyond
	 * these it reads the wire. Valid for the current message only, never
	 * cleared. n_rrs: how many when they are every RR of a message the walk
	 * found sound, else 0 (what obs.rrs gives detectors). */
	struct obs_rr seen[DNS_RR_SEEN];
	unsigned n_rrs;
	/* The last name rendered inside a kept RR's data field (a CNAME
	 * target, an MX exchange, ...): its wire form and where its text sits
	 * in info_buf. A later owner is often that name (a CNAME chain, glue):
	 * its text is copied, not rendered again. prev_ok 0: none. */
	struct dns_wname prev;
	int prev_ok;
	size_t prev_off, prev_text_len;
	char info_buf[DNS_INFO_MAX];
	/* the records as the walk renders them, before the header record,
	 * which needs what the walk learns, goes in front of them */
	char walk_buf[DNS_INFO_MAX];
	uint8_t scratch[DNS_SCRATCH_MAX];
};

/*
 * Parse the DNS message msg[0..len) (no TCP length prefix). obs_flags are
 * OBS_F_* that describe the transport: OBS_F_TCP selects "tcp" in the
 * header record; OBS_F_TRUNCATED says the capture cut the message, so
 * running out of bytes means MOD_TRUNCATED rather than MOD_MALFORMED.
 * DNS_PARSE_OWN or DNS_PARSE_LDNS may be or'ed in (see above).
 *
 * Returns MOD_OK; MOD_TRUNCATED (capture cut, what could be read is in
 * *out); MOD_MALFORMED (what could be read is in *out, reason set,
 * OBS_F_MALFORMED in out->flags); or -ENOMEM when ldns could not allocate.
 * With fewer than 12 bytes there is no header: out->info is "" and the
 * result is MOD_TRUNCATED or MOD_MALFORMED. msg is only borrowed. Pure: no
 * globals, no output, no allocation apart from ldns's own (freed before
 * returning).
 */
int dns_parse_message(const uint8_t *msg, size_t len, unsigned obs_flags, struct dns_out *out);

/*
 * Render the wire name w[0..n) (uncompressed, ending in its root label) in
 * the presentation form above into dst (cap bytes, NUL-terminated when
 * cap > 0). Returns the length written; sets *cut (when not NULL) if dst was
 * too small or w was not a well-formed name. For tests and other analyzers.
 */
size_t dns_name_text(char *dst, size_t cap, const uint8_t *w, size_t n, int *cut);

/* The analyzer descriptor (analyzers/registry.c). */
struct module;
extern const struct module dns_module;

#endif
