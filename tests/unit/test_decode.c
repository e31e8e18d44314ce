/*
 * test_decode.c - sensor/decode.c: every link type, VLAN tags, every
 * truncation point, lying length fields, IPv4 options, UDP length narrowing,
 * IPv4 and IPv6 fragment reassembly (in order, reversed, overlapping,
 * duplicate, missing, bounded; the Linux receiver's view beside first-wins,
 * in fixed orders and against a reference of Linux's queue over random
 * sequences), IPv6 extension headers, encapsulations
 * (PPPoE, MPLS, IP-in-IP, GRE, ERSPAN, VXLAN, GENEVE: innermost addresses,
 * every truncation point, the nesting bound, length narrowing, reassembly
 * around tunnels), and random-bytes smoke runs.
 *
 * Frames are built by hand with the small builders below. Every decode works
 * on a heap copy of exactly caplen bytes, so ASan sees any read past caplen.
 */
#include <pcap/dlt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sensor/decode.h"

static const uint8_t SRC4[4] = {10, 99, 0, 10};
static const uint8_t DST4[4] = {93, 184, 216, 34};
static const uint8_t SRC6[16] = {0xfd, 0, 0, 0x99, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10};
static const uint8_t DST6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01};
static const uint8_t ZERO12[12];

/* ---- builders ------------------------------------------------------------ */

static size_t put16(uint8_t *o, unsigned v)
{
	o[0] = (uint8_t)(v >> 8);
	o[1] = (uint8_t)v;
	return 2;
}

static size_t put16le(uint8_t *o, unsigned v)
{
	o[0] = (uint8_t)v;
	o[1] = (uint8_t)(v >> 8);
	return 2;
}

static size_t put32(uint8_t *o, uint32_t v)
{
	o[0] = (uint8_t)(v >> 24);
	o[1] = (uint8_t)(v >> 16);
	o[2] = (uint8_t)(v >> 8);
	o[3] = (uint8_t)v;
	return 4;
}

static size_t mk_udp(uint8_t *o, unsigned sp, unsigned dp, const void *pl, size_t n)
{
	put16(o, sp);
	put16(o + 2, dp);
	put16(o + 4, (unsigned)(8 + n));
	put16(o + 6, 0);
	if (n)
		memcpy(o + 8, pl, n);
	return 8 + n;
}

/* TCP with optw 4-byte words of NOP options. */
static size_t mk_tcp(uint8_t *o, unsigned sp, unsigned dp, uint32_t seq, uint32_t ack,
		     uint8_t flags, unsigned optw, const void *pl, size_t n)
{
	size_t h = 20 + 4 * (size_t)optw;

	put16(o, sp);
	put16(o + 2, dp);
	put32(o + 4, seq);
	put32(o + 8, ack);
	o[12] = (uint8_t)((5 + optw) << 4);
	o[13] = flags;
	put16(o + 14, 0x7210);
	put16(o + 16, 0);
	put16(o + 18, 0);
	memset(o + 20, 1, 4 * (size_t)optw);
	if (n)
		memcpy(o + h, pl, n);
	return h + n;
}

static size_t mk_icmp(uint8_t *o, uint8_t type, const void *pl, size_t n)
{
	o[0] = type;
	o[1] = 0;
	put16(o + 2, 0);
	put16(o + 4, 0x1234);
	put16(o + 6, 1);
	if (n)
		memcpy(o + 8, pl, n);
	return 8 + n;
}

/* IPv4 with optw words of NOP options; frag is the flags+offset field. */
/* Set the IPv4 header checksum of the header at o (after a test edits it). */
static void ip4_csum(uint8_t *o)
{
	size_t h = (size_t)(o[0] & 15) * 4;
	uint32_t sum = 0;

	put16(o + 10, 0);
	for (size_t i = 0; i + 1 < h; i += 2)
		sum += (uint32_t)o[i] << 8 | o[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	put16(o + 10, ~sum & 0xffff);
}

static size_t mk_ip4(uint8_t *o, uint8_t proto, unsigned id, unsigned frag, unsigned optw,
		     const uint8_t *l4, size_t n)
{
	size_t h = 20 + 4 * (size_t)optw;

	o[0] = (uint8_t)(0x40 | (5 + optw));
	o[1] = 0;
	put16(o + 2, (unsigned)(h + n));
	put16(o + 4, id);
	put16(o + 6, frag);
	o[8] = 64;
	o[9] = proto;
	put16(o + 10, 0);
	memcpy(o + 12, SRC4, 4);
	memcpy(o + 16, DST4, 4);
	memset(o + 20, 1, 4 * (size_t)optw);
	ip4_csum(o);
	if (n)
		memcpy(o + h, l4, n);
	return h + n;
}

/* IPv6; pl is everything after the fixed header (extension headers too). */
static size_t mk_ip6(uint8_t *o, uint8_t nh, const uint8_t *pl, size_t n)
{
	put32(o, 0x60000000);
	put16(o + 4, (unsigned)n);
	o[6] = nh;
	o[7] = 63;
	memcpy(o + 8, SRC6, 16);
	memcpy(o + 24, DST6, 16);
	if (n)
		memcpy(o + 40, pl, n);
	return 40 + n;
}

/* Hop-by-hop, routing or destination options: (units + 1) * 8 bytes. */
static size_t mk_opts6(uint8_t *o, uint8_t next, unsigned units)
{
	size_t len = ((size_t)units + 1) * 8;

	memset(o, 0, len);
	o[0] = next;
	o[1] = (uint8_t)units;
	o[2] = 1; /* PadN */
	o[3] = (uint8_t)(len - 4);
	return len;
}

/* AH: (plen + 2) * 4 bytes. */
static size_t mk_ah(uint8_t *o, uint8_t next, unsigned plen)
{
	size_t len = ((size_t)plen + 2) * 4;

	memset(o, 0xa5, len);
	o[0] = next;
	o[1] = (uint8_t)plen;
	return len;
}

static size_t mk_frag6(uint8_t *o, uint8_t next, unsigned off, int more, uint32_t id)
{
	o[0] = next;
	o[1] = 0;
	put16(o + 2, (off & 0xfff8) | (more ? 1 : 0));
	put32(o + 4, id);
	return 8;
}

/* The link header of dlt for an IP packet of version ipv, n bytes long. */
static size_t mk_link(uint8_t *o, int dlt, int ipv, size_t n)
{
	static const uint8_t mac[8] = {0x02, 0, 0, 0, 0, 0x01, 0, 0};
	unsigned type = ipv == 4 ? 0x0800 : 0x86dd;
	unsigned ppp = ipv == 4 ? 0x0021 : 0x0057;

	if (dlt == DLT_EN10MB) {
		memcpy(o, mac, 6);
		memcpy(o + 6, mac, 6);
		o[11] = 2;
		put16(o + 12, type);
		return 14;
	}
	if (dlt == DLT_LINUX_SLL) {
		put16(o, 4);      /* outgoing */
		put16(o + 2, 1);  /* ARPHRD_ETHER */
		put16(o + 4, 6);
		memcpy(o + 6, mac, 8);
		put16(o + 14, type);
		return 16;
	}
	if (dlt == DLT_LINUX_SLL2) {
		put16(o, type);
		put16(o + 2, 0);
		put32(o + 4, 3); /* ifindex */
		put16(o + 8, 1);
		o[10] = 4;
		o[11] = 6;
		memcpy(o + 12, mac, 8);
		return 20;
	}
	if (dlt == DLT_NULL) { /* host order: little-endian here */
		memset(o, 0, 4);
		o[0] = ipv == 4 ? 2 : 30;
		return 4;
	}
	if (dlt == DLT_LOOP) {
		return put32(o, ipv == 4 ? 2 : 24);
	}
	if (dlt == DLT_PPP || dlt == DLT_PPP_SERIAL) {
		put16(o, 0xff03);
		return 2 + put16(o + 2, ppp);
	}
	if (dlt == DLT_PPP_ETHER) { /* PPPoE session header, then PPP */
		put16(o, 0x1100);
		put16(o + 2, 0x556a);
		put16(o + 4, (unsigned)n + 2);
		return 6 + put16(o + 6, ppp);
	}
	if (dlt == DLT_C_HDLC) {
		put16(o, 0x0f00);
		return 2 + put16(o + 2, type);
	}
	if (dlt == DLT_FRELAY) { /* DLCI 100, RFC 2427 NLPID */
		put16(o, 0x1841);
		o[2] = 0x03;
		o[3] = ipv == 4 ? 0xcc : 0x8e;
		return 4;
	}
	if (dlt == DLT_FDDI) { /* LLC async frame, LLC/SNAP */
		o[0] = 0x50;
		memcpy(o + 1, mac, 6);
		memcpy(o + 7, mac, 6);
		memcpy(o + 13, "\xaa\xaa\x03\x00\x00\x00", 6);
		return 19 + put16(o + 19, type);
	}
	if (dlt == DLT_NFLOG) { /* header, NFULA_PACKET_HDR, NFULA_PREFIX, payload */
		o[0] = ipv == 4 ? 2 : 10;
		o[1] = 0;
		put16(o + 2, 42);
		put16le(o + 4, 8);
		put16le(o + 6, 1);
		put16(o + 8, type);
		o[10] = 3;
		o[11] = 0;
		put16le(o + 12, 7);
		put16le(o + 14, 10);
		memcpy(o + 16, "ew\0\0", 4); /* 3 bytes and one of padding */
		put16le(o + 20, (unsigned)n + 4);
		put16le(o + 22, 9);
		return 24;
	}
	return 0; /* raw IP */
}

static size_t mk_frame(uint8_t *o, int dlt, int ipv, const uint8_t *ip, size_t n)
{
	size_t l = mk_link(o, dlt, ipv, n);

	memcpy(o + l, ip, n);
	return l + n;
}

/* ---- harness ------------------------------------------------------------- */

struct h {
	struct decoder *d;
	struct pkt p;
	uint8_t *buf; /* heap copy of exactly caplen bytes */
	uint64_t ts;
};

static void h_init(struct h *h, const struct decode_config *cfg)
{
	memset(h, 0, sizeof(*h));
	h->d = decoder_new(cfg);
	h->ts = 1700000000000000ull;
	if (!h->d)
		abort();
}

static void h_fini(struct h *h)
{
	decoder_free(h->d);
	free(h->buf);
	h->d = NULL;
	h->buf = NULL;
}

static enum decode_result run(struct h *h, int dlt, const uint8_t *f, size_t caplen,
			      size_t wirelen)
{
	free(h->buf);
	h->buf = malloc(caplen ? caplen : 1);
	if (!h->buf)
		abort();
	if (caplen)
		memcpy(h->buf, f, caplen);
	return decode_packet(h->d, dlt, h->buf, (uint32_t)caplen, (uint32_t)wirelen, h->ts,
			     &h->p);
}

static enum decode_result run_full(struct h *h, int dlt, const uint8_t *f, size_t n)
{
	return run(h, dlt, f, n, n);
}

static int payload_is(const struct pkt *p, const void *want, size_t n)
{
	return p->payload_len == n && (n == 0 || memcmp(p->payload, want, n) == 0);
}

static int in_buf(const struct h *h, const uint8_t *q, size_t n, size_t caplen)
{
	uintptr_t a = (uintptr_t)q, b = (uintptr_t)h->buf;

	return a >= b && a + n <= b + caplen;
}

/* ---- link types ---------------------------------------------------------- */

static void check_v4_udp(const struct h *h, int dlt, size_t n)
{
	const struct pkt *p = &h->p;

	CHECK_EQ(p->ipv, 4);
	CHECK_EQ(p->proto, 17);
	CHECK_EQ(p->ttl, 64);
	CHECK_EQ(p->linktype, dlt);
	CHECK_EQ(p->caplen, n);
	CHECK_EQ(p->wirelen, n);
	CHECK(memcmp(p->src, SRC4, 4) == 0);
	CHECK(memcmp(p->dst, DST4, 4) == 0);
	CHECK(memcmp(p->src + 4, ZERO12, 12) == 0);
	CHECK(memcmp(p->dst + 4, ZERO12, 12) == 0);
	CHECK_EQ(p->sport, 40000);
	CHECK_EQ(p->dport, 53);
	CHECK_EQ(p->l4_len, 13);
	CHECK(payload_is(p, "hello", 5));
	CHECK(in_buf(h, p->payload, p->payload_len, n));
	CHECK_EQ(p->flags, 0);
	CHECK_EQ(p->vlan, 0);
	CHECK_EQ(p->encap, 0);
}

static void check_tcp(const struct pkt *p, int ipv)
{
	CHECK_EQ(p->ipv, ipv);
	CHECK_EQ(p->proto, 6);
	CHECK_EQ(p->sport, 51000);
	CHECK_EQ(p->dport, 443);
	CHECK_EQ(p->seq, 0x01020304);
	CHECK_EQ(p->ack, 0xa0b0c0d0u);
	CHECK_EQ(p->tcp_flags, TH_PUSH | TH_ACK);
	CHECK_EQ(p->tcp_win, 0x7210);
	CHECK_EQ(p->l4_len, 20 + 12 + 4);
	CHECK(payload_is(p, "GET ", 4));
	if (ipv == 6) {
		CHECK(memcmp(p->src, SRC6, 16) == 0);
		CHECK(memcmp(p->dst, DST6, 16) == 0);
		CHECK_EQ(p->ttl, 63);
	}
}

static void test_links(void)
{
	static const int dlts[] = {DLT_EN10MB, DLT_LINUX_SLL, DLT_LINUX_SLL2, DLT_RAW,
				   DLT_IPV4, DLT_IPV6, DLT_NULL, DLT_LOOP, 12, 14, 101,
				   DLT_PPP, DLT_PPP_SERIAL, DLT_PPP_ETHER, DLT_C_HDLC,
				   DLT_FRELAY, DLT_FDDI, DLT_NFLOG};
	uint8_t l4[128], ip[256], f[512];
	size_t i, n, ln;
	struct h h;

	h_init(&h, NULL);
	for (i = 0; i < sizeof(dlts) / sizeof(dlts[0]); i++) {
		int dlt = dlts[i];

		CHECK(decode_linktype_supported(dlt));
		if (dlt != DLT_IPV6) {
			/* IPv4 UDP */
			ln = mk_udp(l4, 40000, 53, "hello", 5);
			n = mk_frame(f, dlt, 4, ip, mk_ip4(ip, 17, 1, 0x4000, 0, l4, ln));
			CHECK_EQ(run_full(&h, dlt, f, n), DECODE_OK);
			check_v4_udp(&h, dlt, n);
			/* IPv4 TCP with options */
			ln = mk_tcp(l4, 51000, 443, 0x01020304, 0xa0b0c0d0u, TH_PUSH | TH_ACK, 3,
				    "GET ", 4);
			n = mk_frame(f, dlt, 4, ip, mk_ip4(ip, 6, 2, 0, 0, l4, ln));
			CHECK_EQ(run_full(&h, dlt, f, n), DECODE_OK);
			check_tcp(&h.p, 4);
		}
		if (dlt != DLT_IPV4) {
			/* IPv6 UDP */
			ln = mk_udp(l4, 40000, 53, "hello", 5);
			n = mk_frame(f, dlt, 6, ip, mk_ip6(ip, 17, l4, ln));
			CHECK_EQ(run_full(&h, dlt, f, n), DECODE_OK);
			CHECK_EQ(h.p.ipv, 6);
			CHECK_EQ(h.p.proto, 17);
			CHECK_EQ(h.p.sport, 40000);
			CHECK_EQ(h.p.dport, 53);
			CHECK(payload_is(&h.p, "hello", 5));
			CHECK(memcmp(h.p.src, SRC6, 16) == 0);
			/* IPv6 TCP */
			ln = mk_tcp(l4, 51000, 443, 0x01020304, 0xa0b0c0d0u, TH_PUSH | TH_ACK, 3,
				    "GET ", 4);
			n = mk_frame(f, dlt, 6, ip, mk_ip6(ip, 6, l4, ln));
			CHECK_EQ(run_full(&h, dlt, f, n), DECODE_OK);
			check_tcp(&h.p, 6);
		}
	}

	/* DLT_NULL: host order of the capturer, either way; every AF_INET6. */
	{
		static const uint8_t afs[] = {10, 24, 28, 30};

		ln = mk_udp(l4, 40000, 53, "hello", 5);
		n = mk_ip4(ip, 17, 1, 0, 0, l4, ln);
		put32(f, 2); /* big-endian AF_INET */
		memcpy(f + 4, ip, n);
		CHECK_EQ(run_full(&h, DLT_NULL, f, n + 4), DECODE_OK);
		check_v4_udp(&h, DLT_NULL, n + 4);
		n = mk_ip6(ip, 17, l4, ln);
		for (i = 0; i < sizeof(afs); i++) {
			put32(f, afs[i]);
			memcpy(f + 4, ip, n);
			CHECK_EQ(run_full(&h, DLT_NULL, f, n + 4), DECODE_OK);
			CHECK_EQ(h.p.ipv, 6);
			memset(f, 0, 4);
			f[0] = afs[i];
			CHECK_EQ(run_full(&h, DLT_NULL, f, n + 4), DECODE_OK);
			CHECK_EQ(h.p.ipv, 6);
		}
		/* AF 7 is not IP. */
		put32(f, 7);
		CHECK_EQ(run_full(&h, DLT_NULL, f, n + 4), DECODE_NOT_IP);
		/* DLT_LOOP is big-endian only: little-endian AF_INET is not IP. */
		n = mk_ip4(ip, 17, 1, 0, 0, l4, ln);
		memset(f, 0, 4);
		f[0] = 2;
		memcpy(f + 4, ip, n);
		CHECK_EQ(run_full(&h, DLT_LOOP, f, n + 4), DECODE_NOT_IP);
	}

	/* Raw IP: the version nibble decides; anything else is a lie. */
	ln = mk_udp(l4, 40000, 53, "hello, world", 12);
	n = mk_ip4(ip, 17, 1, 0, 0, l4, ln);
	ip[0] = 0x55;
	CHECK_EQ(run_full(&h, DLT_RAW, ip, n), DECODE_MALFORMED);
	CHECK_EQ(run_full(&h, DLT_IPV4, ip, n), DECODE_MALFORMED);
	CHECK_EQ(decode_stats(h.d)->malformed[L_LINK], 1);
	CHECK_EQ(decode_stats(h.d)->malformed[L_IPV4], 1);
	ip[0] = 0x45;
	CHECK_EQ(run_full(&h, DLT_IPV6, ip, n), DECODE_MALFORMED); /* v4 on an IPv6 link */
	CHECK_EQ(decode_stats(h.d)->malformed[L_IPV6], 1);
	CHECK_EQ(run_full(&h, DLT_RAW, ip, 0), DECODE_TRUNCATED);
	CHECK_EQ(decode_stats(h.d)->truncated[L_LINK], 1);

	/* Unsupported link types. */
	CHECK(!decode_linktype_supported(DLT_IEEE802_11));
	CHECK(!decode_linktype_supported(-1));
	CHECK(!decode_linktype_supported(DLT_ARCNET));
	CHECK_EQ(run_full(&h, DLT_IEEE802_11, ip, n), DECODE_NOT_IP);
	h_fini(&h);
}

static void test_not_ip(void)
{
	uint8_t f[128];
	struct h h;

	h_init(&h, NULL);
	memset(f, 0, sizeof(f));
	put16(f + 12, 0x0806); /* ARP */
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, 42), DECODE_NOT_IP);
	put16(f + 12, 0x0026); /* 802.3 length */
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, 60), DECODE_NOT_IP);
	put16(f + 12, 1500);
	f[14] = 0x45; /* looks like IPv4, but the field is a length */
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, 60), DECODE_NOT_IP);
	put16(f + 12, 0x88cc); /* LLDP */
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, 60), DECODE_NOT_IP);
	memset(f, 0, sizeof(f));
	put16(f + 14, 0x0806);
	CHECK_EQ(run_full(&h, DLT_LINUX_SLL, f, 44), DECODE_NOT_IP);
	put16(f, 0x0004); /* SLL2 802.2 LLC */
	CHECK_EQ(run_full(&h, DLT_LINUX_SLL2, f, 44), DECODE_NOT_IP);
	CHECK_EQ(decode_stats(h.d)->not_ip, 6);
	CHECK_EQ(decode_stats(h.d)->ok[L_LINK], 6);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, 13), DECODE_TRUNCATED);
	CHECK_EQ(run_full(&h, DLT_LINUX_SLL, f, 15), DECODE_TRUNCATED);
	CHECK_EQ(run_full(&h, DLT_LINUX_SLL2, f, 19), DECODE_TRUNCATED);
	CHECK_EQ(run_full(&h, DLT_NULL, f, 3), DECODE_TRUNCATED);
	CHECK_EQ(decode_stats(h.d)->truncated[L_LINK], 4);
	/* NULL data with caplen 0 never crashes. */
	CHECK_EQ(decode_packet(h.d, DLT_EN10MB, NULL, 0, 0, 0, &h.p), DECODE_TRUNCATED);
	h_fini(&h);
}

/* ---- VLAN ---------------------------------------------------------------- */

/* Ethernet with ntags tags (tpids[i], vids[i]) around an IPv4 UDP packet. */
static size_t mk_vlan_frame(uint8_t *f, const unsigned *tpids, const unsigned *tcis,
			    size_t ntags, int ipv)
{
	uint8_t l4[64];
	size_t n = 12, i, ln = mk_udp(l4, 40000, 53, "hello", 5);

	memset(f, 0x02, 12);
	for (i = 0; i < ntags; i++) {
		n += put16(f + n, tpids[i]);
		n += put16(f + n, tcis[i]);
	}
	n += put16(f + n, ipv == 4 ? 0x0800 : 0x86dd);
	if (ipv == 4)
		return n + mk_ip4(f + n, 17, 1, 0, 0, l4, ln);
	return n + mk_ip6(f + n, 17, l4, ln);
}

static void test_vlan(void)
{
	static const unsigned tp[6] = {0x88a8, 0x8100, 0x9100, 0x9200, 0x8100, 0x8100};
	static const unsigned tci[6] = {0xe0c8, 100, 300, 400, 500, 600};
	struct decode_config cfg;
	uint8_t f[256];
	size_t n;
	struct h h;

	h_init(&h, NULL);
	/* single 802.1Q, priority bits masked off */
	n = mk_vlan_frame(f, tp + 1, tci + 1, 1, 4);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK_EQ(h.p.vlan, 100);
	CHECK(payload_is(&h.p, "hello", 5));
	n = mk_vlan_frame(f, tp, tci, 1, 6);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK_EQ(h.p.vlan, 200);
	CHECK_EQ(h.p.ipv, 6);
	/* QinQ: outermost id recorded */
	n = mk_vlan_frame(f, tp, tci, 2, 4);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK_EQ(h.p.vlan, 200);
	CHECK(payload_is(&h.p, "hello", 5));
	/* 0x9100 and 0x9200 outer tags */
	n = mk_vlan_frame(f, tp + 2, tci + 2, 2, 4);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK_EQ(h.p.vlan, 300);
	n = mk_vlan_frame(f, tp + 3, tci + 3, 1, 4);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK_EQ(h.p.vlan, 400);
	/* exactly the default depth of 4 is fine, 5 is too deep */
	n = mk_vlan_frame(f, tp, tci, 4, 4);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK_EQ(h.p.vlan, 200);
	n = mk_vlan_frame(f, tp, tci, 5, 4);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_MALFORMED);
	CHECK_EQ(decode_stats(h.d)->malformed[L_VLAN], 1);
	CHECK_EQ(decode_stats(h.d)->ok[L_VLAN], 6);
	/* VLAN tag over ARP */
	n = mk_vlan_frame(f, tp + 1, tci + 1, 1, 4);
	put16(f + 16, 0x0806);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_NOT_IP);
	/* VLAN inside SLL (libpcap re-inserts tags) */
	memset(f, 0, 16);
	put16(f + 14, 0x8100);
	put16(f + 16, 42);
	put16(f + 18, 0x0800);
	{
		uint8_t l4[64];
		size_t ln = mk_udp(l4, 40000, 53, "hello", 5);
		n = 20 + mk_ip4(f + 20, 17, 1, 0, 0, l4, ln);
	}
	CHECK_EQ(run_full(&h, DLT_LINUX_SLL, f, n), DECODE_OK);
	CHECK_EQ(h.p.vlan, 42);
	h_fini(&h);

	/* a configured depth of 1 refuses QinQ */
	memset(&cfg, 0, sizeof(cfg));
	cfg.max_vlan_depth = 1;
	h_init(&h, &cfg);
	n = mk_vlan_frame(f, tp, tci, 2, 4);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_MALFORMED);
	n = mk_vlan_frame(f, tp, tci, 1, 4);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	h_fini(&h);
}

/* ---- truncation at every length ------------------------------------------ */

struct bound {
	size_t end;               /* header ends here (frame offset) */
	enum decode_layer layer;  /* a cut before end is counted here */
};

/*
 * Cut frame f (n bytes on the wire) at every caplen 0..n. Below the last
 * header's end the result is TRUNCATED, counted once at the layer whose
 * header was cut and nowhere else; from there on it is OK, with the payload
 * exactly the captured bytes after the headers and PKT_SHORT when cut.
 */
static void sweep(int dlt, const uint8_t *f, size_t n, const struct bound *b, size_t nb,
		  unsigned sport, unsigned dport)
{
	size_t hdr = b[nb - 1].end, ip_end = 0, cut, i;
	unsigned full_encap;
	struct h h;

	/* the end of the outermost IP header: a cut after it still leaves a
	 * datagram to hand on */
	for (i = 0; i < nb && !ip_end; i++)
		if (b[i].layer == L_IPV4 || b[i].layer == L_IPV6)
			ip_end = b[i].end;
	h_init(&h, NULL);
	CHECK_EQ(run(&h, dlt, f, n, n), DECODE_OK);
	full_encap = h.p.encap;
	for (cut = 0; cut <= n; cut++) {
		struct decode_stats before = *decode_stats(h.d), after;
		enum decode_result r = run(&h, dlt, f, cut, n);
		int good = 1;

		after = *decode_stats(h.d);
		if (cut < hdr) {
			enum decode_layer want = b[0].layer;
			size_t from = 0, at = 0; /* where the layer cut starts; its bound */

			for (i = nb; i-- > 0;)
				if (cut < b[i].end) {
					want = b[i].layer;
					from = i ? b[i - 1].end : 0;
					at = i;
				}
			int l4 = want == L_TCP || want == L_UDP || want == L_ICMP ||
				 want == L_ICMPV6 ||
				 /* IPv6 extension headers (a second L_IPV6 bound) */
				 (want == L_IPV6 && at > 0 && b[at - 1].layer == L_IPV6);
			/* TCP options cut by the capture: a TCP segment all the
			 * same, with PKT_SHORT and no payload */
			int tcp_opts = want == L_TCP && cut - from >= 20;
			/* an ICMP message with its type but not its 8-byte header
			 * is counted truncated and handed on as ICMP */
			int icmp = (want == L_ICMP || want == L_ICMPV6) && cut > from;
			/* Past the outermost IP header the datagram is handed on
			 * whatever is cut: a transport header it cannot read
			 * flagged PKT_L4_BAD, a cut tunnel as the datagram that
			 * carries it (encap 0; the sweeps nest one tunnel). */
			good = r == (ip_end && cut >= ip_end ? DECODE_OK : DECODE_TRUNCATED);
			if (tcp_opts)
				good &= h.p.sport == sport && h.p.dport == dport &&
					h.p.payload_len == 0 && h.p.l4 == h.buf + from;
			if (r == DECODE_OK) {
				good &= !!(h.p.flags & PKT_L4_BAD) == (l4 && !icmp && !tcp_opts);
				good &= h.p.encap == (at == nb - 1 ? full_encap : 0);
				good &= (h.p.flags & PKT_SHORT) || (l4 && !icmp);
			}
			if (icmp)
				good &= h.p.l4 == h.buf + from && h.p.l4_len == cut - from &&
					h.p.payload_len == 0 && (h.p.flags & PKT_SHORT);
			for (i = 0; i < L_COUNT; i++) {
				good &= after.truncated[i] - before.truncated[i] == (i == want);
				good &= after.malformed[i] == before.malformed[i];
			}
		} else {
			good = r == DECODE_OK;
			good &= !!(h.p.flags & PKT_SHORT) == (cut < n);
			good &= h.p.payload == h.buf + hdr;
			good &= h.p.payload_len == cut - hdr;
			good &= h.p.sport == sport && h.p.dport == dport;
			good &= memcmp(h.p.payload, f + hdr, cut - hdr) == 0;
			/* a TCP or UDP payload the capture cut is counted
			 * truncated at its layer (the stream misses it) */
			enum decode_layer last = b[nb - 1].layer;
			int counted = cut < n && (last == L_TCP || last == L_UDP);
			for (i = 0; i < L_COUNT; i++)
				good &= after.truncated[i] - before.truncated[i] ==
						(unsigned)(counted && i == last) &&
					after.malformed[i] == before.malformed[i];
		}
		if (!good)
			fprintf(stderr, "sweep dlt %d: cut %zu of %zu: result %d\n", dlt, cut, n,
				(int)r);
		CHECK(good);
	}
	h_fini(&h);
}

static void test_truncation(void)
{
	uint8_t l4[256], ip[512], f[1024], ext[64];
	size_t ln, n, e;

	/* Ethernet, IPv4 with 8 bytes of options, TCP with 12 bytes of options */
	ln = mk_tcp(l4, 51000, 443, 1, 2, TH_ACK, 3, "0123456789", 10);
	n = mk_frame(f, DLT_EN10MB, 4, ip, mk_ip4(ip, 6, 7, 0, 2, l4, ln));
	{
		const struct bound b[] = {{14, L_LINK}, {14 + 28, L_IPV4}, {14 + 28 + 32, L_TCP}};
		sweep(DLT_EN10MB, f, n, b, 3, 51000, 443);
	}

	/* Ethernet, QinQ, IPv6, hop-by-hop, destination options, UDP */
	{
		static const unsigned tp[2] = {0x88a8, 0x8100}, tci[2] = {5, 6};
		size_t at;

		e = mk_opts6(ext, 60, 0);
		e += mk_opts6(ext + e, 17, 1);
		ln = mk_udp(ext + e, 40000, 53, "abcdefgh", 8);
		at = mk_vlan_frame(f, tp, tci, 2, 6) - 40 - 13; /* start of IPv6 */
		n = at + mk_ip6(f + at, 0, ext, e + ln);
		{
			const struct bound b[] = {{14, L_LINK}, {22, L_VLAN}, {at + 40, L_IPV6},
						  {at + 40 + 24, L_IPV6}, {at + 40 + 24 + 8, L_UDP}};
			sweep(DLT_EN10MB, f, n, b, 5, 40000, 53);
		}
	}

	/* SLL, IPv4, ICMP echo */
	ln = mk_icmp(l4, 8, "pingpingping", 12);
	n = mk_frame(f, DLT_LINUX_SLL, 4, ip, mk_ip4(ip, 1, 7, 0, 0, l4, ln));
	{
		const struct bound b[] = {{16, L_LINK}, {36, L_IPV4}, {44, L_ICMP}};
		sweep(DLT_LINUX_SLL, f, n, b, 3, 0, 0);
	}

	/* SLL2, IPv6, routing header, ICMPv6 echo */
	e = mk_opts6(ext, 58, 2);
	ln = mk_icmp(ext + e, 128, "pong", 4);
	n = mk_frame(f, DLT_LINUX_SLL2, 6, ip, mk_ip6(ip, 43, ext, e + ln));
	{
		const struct bound b[] = {{20, L_LINK}, {60, L_IPV6}, {60 + 24, L_IPV6},
					  {60 + 24 + 8, L_ICMPV6}};
		sweep(DLT_LINUX_SLL2, f, n, b, 4, 0, 0);
	}

	/* NULL, IPv4, UDP */
	ln = mk_udp(l4, 1234, 53, "dnsdnsdns", 9);
	n = mk_frame(f, DLT_NULL, 4, ip, mk_ip4(ip, 17, 7, 0, 0, l4, ln));
	{
		const struct bound b[] = {{4, L_LINK}, {24, L_IPV4}, {32, L_UDP}};
		sweep(DLT_NULL, f, n, b, 3, 1234, 53);
	}

	/* LOOP, IPv6, AH, TCP */
	e = mk_ah(ext, 6, 4);
	ln = mk_tcp(ext + e, 22, 33000, 9, 9, TH_SYN, 0, "x", 1);
	n = mk_frame(f, DLT_LOOP, 6, ip, mk_ip6(ip, 51, ext, e + ln));
	{
		const struct bound b[] = {{4, L_LINK}, {44, L_IPV6}, {44 + 24, L_IPV6},
					  {44 + 24 + 20, L_TCP}};
		sweep(DLT_LOOP, f, n, b, 4, 22, 33000);
	}

	/* raw IP: one byte of "link" (the version nibble), then IPv4 */
	ln = mk_udp(l4, 5000, 6000, "raw", 3);
	n = mk_ip4(f, 17, 7, 0, 0, l4, ln);
	{
		const struct bound b[] = {{1, L_LINK}, {20, L_IPV4}, {28, L_UDP}};
		sweep(DLT_RAW, f, n, b, 3, 5000, 6000);
	}
	/* DLT_IPV6: no link header at all */
	ln = mk_tcp(l4, 80, 8080, 1, 1, TH_ACK, 1, "body", 4);
	n = mk_ip6(f, 6, l4, ln);
	{
		const struct bound b[] = {{40, L_IPV6}, {64, L_TCP}};
		sweep(DLT_IPV6, f, n, b, 2, 80, 8080);
	}
}

/* ---- length fields that lie ---------------------------------------------- */

/* A datagram whose transport header could not be read, handed on for the
 * policy: PKT_L4_BAD, the ports it could read, no payload. */
static void check_l4_bad(const struct h *h, uint8_t proto, unsigned sport, unsigned dport)
{
	const struct pkt *p = &h->p;

	CHECK(p->flags & PKT_L4_BAD);
	CHECK_EQ(p->proto, proto);
	CHECK_EQ(p->sport, sport);
	CHECK_EQ(p->dport, dport);
	CHECK_EQ(p->payload_len, 0);
	CHECK_EQ(p->tcp_flags, 0);
	CHECK(p->ipv == 4 || p->ipv == 6);
}

static void test_lies(void)
{
	uint8_t l4[256], ip[512], f[1024];
	size_t ln, n;
	struct h h;
	const struct decode_stats *st;

	h_init(&h, NULL);
	st = decode_stats(h.d);

	/* IPv4 options: IHL 15 (40 bytes of options) */
	ln = mk_udp(l4, 40000, 53, "hello", 5);
	n = mk_frame(f, DLT_EN10MB, 4, ip, mk_ip4(ip, 17, 1, 0, 10, l4, ln));
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK(payload_is(&h.p, "hello", 5));
	CHECK(h.p.l4 == h.buf + 14 + 60);
	/* IHL 4 */
	f[14] = 0x44;
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_MALFORMED);
	/* version 5 */
	f[14] = 0x5f;
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_MALFORMED);
	/* total length shorter than IHL */
	f[14] = 0x4f;
	put16(f + 16, 40);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_MALFORMED);
	/* total length beyond the frame on the wire */
	put16(f + 16, (unsigned)(n - 14 + 1));
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_MALFORMED);
	/* ... but within wirelen: a short capture, decoded as far as it goes */
	CHECK_EQ(run(&h, DLT_EN10MB, f, n, n + 1), DECODE_OK);
	CHECK(h.p.flags & PKT_SHORT);
	CHECK(payload_is(&h.p, "hello", 5));
	CHECK_EQ(st->malformed[L_IPV4], 4);

	/* the IPv4 header checksum: right (mk_ip4's), then wrong, then 0
	 * (offload): flagged PKT_IP_CSUM_BAD, decoded all the same (flows
	 * weigh it, flow.h "Checksums") */
	ln = mk_udp(l4, 40000, 53, "hi", 2);
	n = mk_frame(f, DLT_EN10MB, 4, ip, mk_ip4(ip, 17, 1, 0, 0, l4, ln));
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK_EQ(h.p.flags & PKT_IP_CSUM_BAD, 0);
	f[14 + 11] ^= 1;
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK(h.p.flags & PKT_IP_CSUM_BAD);
	CHECK(payload_is(&h.p, "hi", 2));
	put16(f + 14 + 10, 0);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK(h.p.flags & PKT_IP_CSUM_BAD);

	/* Ethernet padding: a 2-byte UDP payload in a 60-byte frame */
	ln = mk_udp(l4, 40000, 53, "hi", 2);
	n = mk_frame(f, DLT_EN10MB, 4, ip, mk_ip4(ip, 17, 1, 0, 0, l4, ln));
	memset(f + n, 0xee, 60 - n);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, 60), DECODE_OK);
	CHECK(payload_is(&h.p, "hi", 2));
	CHECK_EQ(h.p.l4_len, 10);
	CHECK_EQ(h.p.flags, 0);

	/* UDP length shorter than the IP payload narrows the payload */
	ln = mk_udp(l4, 40000, 53, "hello world", 11);
	put16(l4 + 4, 8 + 5);
	n = mk_frame(f, DLT_EN10MB, 4, ip, mk_ip4(ip, 17, 1, 0, 0, l4, ln));
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK(payload_is(&h.p, "hello", 5));
	CHECK_EQ(h.p.l4_len, 13);
	/* UDP length longer than the IP payload: malformed, handed on without
	 * payload (PKT_L4_BAD) */
	put16(f + 14 + 20 + 4, 8 + 12);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	check_l4_bad(&h, 17, 40000, 53);
	CHECK_EQ(h.p.l4_len, 19);
	/* ... even though the frame has the bytes (padding is not payload) */
	put16(f + 14 + 2, 20 + 8 + 5);
	put16(f + 14 + 20 + 4, 8 + 6);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	check_l4_bad(&h, 17, 40000, 53);
	CHECK_EQ(h.p.l4_len, 13);
	/* UDP length below 8 */
	put16(f + 14 + 20 + 4, 7);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	check_l4_bad(&h, 17, 40000, 53);
	CHECK_EQ(st->malformed[L_UDP], 3);
	/* UDP length 0: malformed over IPv4 (Linux drops it) ... */
	put16(f + 14 + 2, 20 + 8 + 5);
	put16(f + 14 + 20 + 4, 0);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	check_l4_bad(&h, 17, 40000, 53);
	CHECK_EQ(st->malformed[L_UDP], 4);
	/* ... the whole payload over IPv6 (Linux reads the query), however
	 * much of it the capture kept */
	{
		uint8_t f6[256], ip6[256];
		size_t n6;
		ln = mk_udp(l4, 40000, 53, "hello world", 11);
		put16(l4 + 4, 0);
		n6 = mk_frame(f6, DLT_EN10MB, 6, ip6, mk_ip6(ip6, 17, l4, ln));
		CHECK_EQ(run_full(&h, DLT_EN10MB, f6, n6), DECODE_OK);
		CHECK(payload_is(&h.p, "hello world", 11));
		CHECK_EQ(h.p.l4_len, 19);
		CHECK_EQ(h.p.flags, 0);
		CHECK_EQ(run(&h, DLT_EN10MB, f6, n6 - 3, n6), DECODE_OK);
		CHECK(h.p.flags & PKT_SHORT);
		CHECK(payload_is(&h.p, "hello wo", 8));
		CHECK_EQ(st->malformed[L_UDP], 4);
	}
	put16(f + 14 + 20 + 4, 8 + 5);
	/* UDP in an IP datagram too short for its header: the ports are
	 * there, the length is not */
	put16(f + 14 + 2, 20 + 6);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	check_l4_bad(&h, 17, 40000, 53);
	CHECK_EQ(h.p.l4_len, 6);
	CHECK_EQ(st->malformed[L_UDP], 5);
	/* ... and too short for the ports */
	put16(f + 14 + 2, 20 + 3);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	check_l4_bad(&h, 17, 0, 0);
	CHECK_EQ(st->malformed[L_UDP], 6);

	/* TCP data offset below 5, and beyond the IP total length */
	ln = mk_tcp(l4, 51000, 443, 1, 2, TH_ACK, 0, "abc", 3);
	n = mk_frame(f, DLT_EN10MB, 4, ip, mk_ip4(ip, 6, 1, 0, 0, l4, ln));
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	f[14 + 20 + 12] = 0x40;
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	check_l4_bad(&h, 6, 51000, 443);
	f[14 + 20 + 12] = 0xf0;
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	check_l4_bad(&h, 6, 51000, 443);
	CHECK_EQ(h.p.l4_len, 23);
	CHECK_EQ(st->malformed[L_TCP], 2);
	/* TCP with no payload */
	ln = mk_tcp(l4, 51000, 443, 1, 2, TH_SYN, 0, NULL, 0);
	n = mk_frame(f, DLT_EN10MB, 4, ip, mk_ip4(ip, 6, 1, 0, 0, l4, ln));
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK_EQ(h.p.payload_len, 0);
	CHECK_EQ(h.p.tcp_flags, TH_SYN);

	/* ICMP: l4 is the whole message, payload the echo data */
	ln = mk_icmp(l4, 8, "0123456789abcdef", 16);
	n = mk_frame(f, DLT_EN10MB, 4, ip, mk_ip4(ip, 1, 1, 0, 0, l4, ln));
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK_EQ(h.p.proto, 1);
	CHECK_EQ(h.p.l4_len, 24);
	CHECK_EQ(h.p.l4[0], 8);
	CHECK(payload_is(&h.p, "0123456789abcdef", 16));
	CHECK_EQ(h.p.sport, 0);
	/* ICMP message shorter than its header: counted malformed, and handed
	 * on with its 6 bytes (an echo request to the outside is egress) */
	n = mk_frame(f, DLT_EN10MB, 4, ip, mk_ip4(ip, 1, 1, 0, 0, l4, 6));
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK_EQ(st->malformed[L_ICMP], 1);
	CHECK_EQ(h.p.l4_len, 6);
	CHECK_EQ(h.p.l4[0], 8);
	CHECK_EQ(h.p.payload_len, 0);
	/* ... and without a type, as a datagram with no readable header */
	n = mk_frame(f, DLT_EN10MB, 4, ip, mk_ip4(ip, 1, 1, 0, 0, l4, 0));
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	check_l4_bad(&h, 1, 0, 0);
	CHECK_EQ(h.p.l4_len, 0);
	CHECK_EQ(st->malformed[L_ICMP], 2);
	/* ICMPv6 echo */
	ln = mk_icmp(l4, 128, "v6ping", 6);
	n = mk_frame(f, DLT_EN10MB, 6, ip, mk_ip6(ip, 58, l4, ln));
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK_EQ(h.p.proto, 58);
	CHECK_EQ(h.p.l4[0], 128);
	CHECK(payload_is(&h.p, "v6ping", 6));
	CHECK_EQ(st->ok[L_ICMPV6], 1);

	/* other protocols (SCTP here): proto and l4, no ports, no payload */
	memcpy(l4, "\x00\x00\x08\x00SCTPSCTP", 13);
	n = mk_frame(f, DLT_EN10MB, 4, ip, mk_ip4(ip, 132, 1, 0, 0, l4, 13));
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK_EQ(h.p.proto, 132);
	CHECK_EQ(h.p.l4_len, 13);
	CHECK(h.p.l4 == h.buf + 34);
	CHECK_EQ(h.p.sport, 0);
	CHECK_EQ(h.p.payload_len, 0);

	/* IPv6 payload length beyond the wire, and a jumbogram */
	ln = mk_udp(l4, 40000, 53, "hello", 5);
	n = mk_frame(f, DLT_EN10MB, 6, ip, mk_ip6(ip, 17, l4, ln));
	put16(f + 14 + 4, (unsigned)ln + 1);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_MALFORMED);
	put16(f + 14 + 4, 0);
	f[14 + 6] = 0;
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_MALFORMED);
	/* payload length 0 with UDP: UDP header does not fit */
	f[14 + 6] = 17;
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	check_l4_bad(&h, 17, 0, 0);
	CHECK_EQ(h.p.ipv, 6);
	/* IPv6 version 4 */
	put16(f + 14 + 4, (unsigned)ln);
	f[14] = 0x40;
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_MALFORMED);
	CHECK_EQ(st->malformed[L_IPV6], 3);
	h_fini(&h);
}

/* ---- IPv6 extension headers ---------------------------------------------- */

static void test_ipv6_ext(void)
{
	uint8_t pl[512], f[1024], ip[1024];
	size_t e, n, i;
	struct h h;
	const struct decode_stats *st;

	h_init(&h, NULL);
	st = decode_stats(h.d);

	/* HBH, routing, destination options, AH, TCP */
	e = mk_opts6(pl, 43, 0);
	e += mk_opts6(pl + e, 60, 1);
	e += mk_opts6(pl + e, 51, 0);
	e += mk_ah(pl + e, 6, 4);
	e += mk_tcp(pl + e, 51000, 443, 0x01020304, 0xa0b0c0d0u, TH_PUSH | TH_ACK, 3, "GET ", 4);
	n = mk_frame(f, DLT_EN10MB, 6, ip, mk_ip6(ip, 0, pl, e));
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	check_tcp(&h.p, 6);

	/* ESP stops the walk: proto 50, l4 = the ESP bytes */
	e = mk_opts6(pl, 50, 0);
	memset(pl + e, 0x33, 24);
	n = mk_frame(f, DLT_EN10MB, 6, ip, mk_ip6(ip, 60, pl, e + 24));
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK_EQ(h.p.proto, 50);
	CHECK_EQ(h.p.l4_len, 24);
	CHECK_EQ(h.p.sport, 0);
	/* no next header */
	n = mk_frame(f, DLT_EN10MB, 6, ip, mk_ip6(ip, 59, pl, 0));
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK_EQ(h.p.proto, 59);
	CHECK_EQ(h.p.l4_len, 0);

	/* any number of extension headers is walked, as Linux delivers the
	 * datagram: 9, and 60 alternating destination options and routing
	 * headers (segments left 0) before UDP */
	for (e = 0, i = 0; i < 9; i++)
		e += mk_opts6(pl + e, i == 8 ? 17 : 60, 0);
	e += mk_udp(pl + e, 1, 2, "x", 1);
	n = mk_frame(f, DLT_EN10MB, 6, ip, mk_ip6(ip, 60, pl, e));
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK_EQ(h.p.proto, 17);
	CHECK(payload_is(&h.p, "x", 1));
	{
		uint8_t big[60 * 8 + 16], ipb[60 * 8 + 64], fb[60 * 8 + 96];
		for (e = 0, i = 0; i < 60; i++)
			e += mk_opts6(big + e, i == 59 ? 17 : i % 2 ? 60 : 43, 0);
		for (i = 1; i < 60; i += 2)
			big[i * 8 + 2] = big[i * 8 + 3] = 0; /* routing type 0, left 0 */
		e += mk_udp(big + e, 1, 2, "x", 1);
		n = mk_frame(fb, DLT_EN10MB, 6, ipb, mk_ip6(ipb, 60, big, e));
		CHECK_EQ(run_full(&h, DLT_EN10MB, fb, n), DECODE_OK);
		CHECK_EQ(h.p.proto, 17);
		CHECK(payload_is(&h.p, "x", 1));
		CHECK(!(h.p.flags & PKT_L4_BAD));
	}
	CHECK_EQ(st->malformed[L_IPV6], 0);
	/* a chain of destination options without an end stops at the
	 * datagram's end: counted malformed, and the datagram is handed on
	 * flagged PKT_L4_BAD (the fixed header was whole, so it went to its
	 * destination all the same) */
	for (e = 0, i = 0; i < 40; i++)
		e += mk_opts6(pl + e, 60, 0);
	n = mk_frame(f, DLT_EN10MB, 6, ip, mk_ip6(ip, 60, pl, e));
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK(h.p.flags & PKT_L4_BAD);
	CHECK_EQ(h.p.ipv, 6);
	CHECK_EQ(h.p.proto, 60);
	CHECK_EQ(h.p.payload_len, 0);
	CHECK_EQ(st->malformed[L_IPV6], 1);

	/* hop-by-hop anywhere but first */
	e = mk_opts6(pl, 0, 0);
	e += mk_opts6(pl + e, 17, 0);
	e += mk_udp(pl + e, 1, 2, "x", 1);
	n = mk_frame(f, DLT_EN10MB, 6, ip, mk_ip6(ip, 60, pl, e));
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK(h.p.flags & PKT_L4_BAD);
	CHECK_EQ(h.p.proto, 0);
	/* an extension header longer than the payload length */
	e = mk_opts6(pl, 17, 3); /* 32 bytes */
	n = mk_frame(f, DLT_EN10MB, 6, ip, mk_ip6(ip, 60, pl, 16));
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK(h.p.flags & PKT_L4_BAD);
	/* AH length beyond the payload */
	e = mk_ah(pl, 17, 1);
	pl[1] = 200;
	n = mk_frame(f, DLT_EN10MB, 6, ip, mk_ip6(ip, 51, pl, e));
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK(h.p.flags & PKT_L4_BAD);
	CHECK_EQ(h.p.proto, 51);
	CHECK_EQ(st->malformed[L_IPV6], 4);

	/* an atomic fragment (offset 0, M 0) is just a header */
	e = mk_frag6(pl, 17, 0, 0, 77);
	e += mk_udp(pl + e, 40000, 53, "hello", 5);
	n = mk_frame(f, DLT_EN10MB, 6, ip, mk_ip6(ip, 44, pl, e));
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK_EQ(h.p.proto, 17);
	CHECK(payload_is(&h.p, "hello", 5));
	CHECK_EQ(h.p.flags, 0);
	CHECK_EQ(decode_frag_pending(h.d), 0);
	h_fini(&h);
}

/* ---- fragments ----------------------------------------------------------- */

/* The transport part of the test datagram: UDP 40000 -> 53 with 64 payload
 * bytes 0..63, 72 bytes in all. */
static size_t dgram_udp(uint8_t *o)
{
	uint8_t pl[64];
	size_t i;

	for (i = 0; i < sizeof(pl); i++)
		pl[i] = (uint8_t)i;
	return mk_udp(o, 40000, 53, pl, sizeof(pl));
}

/* Send the n bytes at data as the IPv4 fragment at offset off, over Ethernet. */
static enum decode_result frag4_at(struct h *h, unsigned id, const uint8_t *data, size_t off,
				   size_t n, int more)
{
	uint8_t ip[2048], f[2048];
	size_t len = mk_ip4(ip, 17, id, (unsigned)(off / 8) | (more ? 0x2000 : 0), 0, data, n);

	return run_full(h, DLT_EN10MB, f, mk_frame(f, DLT_EN10MB, 4, ip, len));
}

/* Send bytes [off, off + n) of l4 as one IPv4 fragment. */
static enum decode_result frag4(struct h *h, unsigned id, const uint8_t *l4, size_t off,
				size_t n, int more)
{
	return frag4_at(h, id, l4 + off, off, n, more);
}

static int is_dgram(const struct h *h, const uint8_t *l4)
{
	const struct pkt *p = &h->p;

	return p->ipv == 4 && p->proto == 17 && (p->flags & PKT_REASSEMBLED) &&
	       p->sport == 40000 && p->dport == 53 && p->l4_len == 72 &&
	       memcmp(p->l4, l4, 72) == 0 && payload_is(p, l4 + 8, 64) && p->ttl == 64 &&
	       memcmp(p->src, SRC4, 4) == 0 && !in_buf(h, p->l4, 1, p->caplen);
}

static void test_frag4(void)
{
	uint8_t l4[128], alt[128];
	struct pkt_hop hop;
	struct decode_config cfg;
	struct h h;
	const struct decode_stats *st;
	size_t i;

	dgram_udp(l4);
	h_init(&h, NULL);
	st = decode_stats(h.d);

	/* in order */
	CHECK_EQ(frag4(&h, 1, l4, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(decode_frag_pending(h.d), 1);
	CHECK_EQ(frag4(&h, 1, l4, 24, 24, 1), DECODE_HELD);
	CHECK_EQ(frag4(&h, 1, l4, 48, 24, 0), DECODE_OK);
	CHECK(is_dgram(&h, l4));
	CHECK_EQ(decode_frag_pending(h.d), 0);
	CHECK_EQ(st->frag_done, 1);
	CHECK_EQ(st->frag_held, 2);
	CHECK_EQ(st->ok[L_UDP], 1);

	/* reversed */
	CHECK_EQ(frag4(&h, 2, l4, 48, 24, 0), DECODE_HELD);
	CHECK_EQ(frag4(&h, 2, l4, 24, 24, 1), DECODE_HELD);
	CHECK_EQ(frag4(&h, 2, l4, 0, 24, 1), DECODE_OK);
	CHECK(is_dgram(&h, l4));

	/* the UDP header itself split across fragments */
	CHECK_EQ(frag4(&h, 3, l4, 0, 8, 1), DECODE_HELD);
	CHECK_EQ(frag4(&h, 3, l4, 8, 64, 0), DECODE_OK);
	CHECK(is_dgram(&h, l4));
	CHECK_EQ(st->frag_overlap, 0);

	/* overlap: [0,24) first, then [16,48) with other bytes at 16..23 */
	memcpy(alt, l4, sizeof(alt));
	memset(alt + 16, 0xaa, 8);
	CHECK_EQ(frag4(&h, 4, l4, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(frag4(&h, 4, alt, 16, 32, 1), DECODE_HELD);
	CHECK_EQ(st->frag_overlap, 1);
	CHECK_EQ(frag4(&h, 4, l4, 48, 24, 0), DECODE_OK);
	CHECK(is_dgram(&h, l4)); /* the first arrival won */
	/* ... and the other way round the 0xaa bytes arrived first */
	CHECK_EQ(frag4(&h, 5, alt, 16, 32, 1), DECODE_HELD);
	CHECK_EQ(frag4(&h, 5, l4, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(frag4(&h, 5, l4, 48, 24, 0), DECODE_OK);
	CHECK_EQ(h.p.l4_len, 72);
	CHECK(memcmp(h.p.l4, alt, 72) == 0);
	CHECK(h.p.payload[8] == 0xaa && h.p.payload[15] == 0xaa && h.p.payload[16] == 16);
	CHECK_EQ(st->frag_overlap, 2);
	CHECK_EQ(st->frag_duplicate, 0);
	CHECK_EQ(st->frag_conflict, 2);

	/* a decoy with a wrong header checksum first: Linux never reassembles
	 * it, so it is refused (counted) and the real bytes win; a checksum of
	 * 0 (offload's, uncomputed) is taken as before */
	{
		uint8_t ip[256], f[256];
		size_t len = mk_ip4(ip, 17, 20, 2, 0, alt + 16, 32);
		ip[10] ^= 0x40;
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, mk_frame(f, DLT_EN10MB, 4, ip, len)),
			 DECODE_MALFORMED);
		CHECK_EQ(st->frag_bad_checksum, 1);
		CHECK_EQ(frag4(&h, 20, l4, 0, 24, 1), DECODE_HELD);
		CHECK_EQ(frag4(&h, 20, l4, 16, 32, 1), DECODE_HELD);
		CHECK_EQ(frag4(&h, 20, l4, 48, 24, 0), DECODE_OK);
		CHECK(is_dgram(&h, l4));
		CHECK_EQ(st->frag_conflict, 2);
		len = mk_ip4(ip, 17, 21, 0x2003, 0, l4 + 24, 24);
		put16(ip + 10, 0);
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, mk_frame(f, DLT_EN10MB, 4, ip, len)),
			 DECODE_HELD);
		CHECK_EQ(frag4(&h, 21, l4, 0, 24, 1), DECODE_HELD);
		CHECK_EQ(frag4(&h, 21, l4, 48, 24, 0), DECODE_OK);
		CHECK(is_dgram(&h, l4));
		CHECK_EQ(st->frag_bad_checksum, 1);
	}

	/* duplicates */
	CHECK_EQ(frag4(&h, 6, l4, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(frag4(&h, 6, l4, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(frag4(&h, 6, l4, 24, 24, 1), DECODE_HELD);
	CHECK_EQ(frag4(&h, 6, l4, 24, 24, 1), DECODE_HELD);
	CHECK_EQ(frag4(&h, 6, l4, 48, 24, 0), DECODE_OK);
	CHECK(is_dgram(&h, l4));
	CHECK_EQ(st->frag_duplicate, 2);
	CHECK_EQ(st->frag_overlap, 5);
	CHECK_EQ(st->frag_conflict, 2); /* copies that agree are no conflict */

	/* interleaved datagrams with different ids */
	CHECK_EQ(frag4(&h, 7, l4, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(frag4(&h, 8, l4, 48, 24, 0), DECODE_HELD);
	CHECK_EQ(frag4(&h, 8, l4, 0, 48, 1), DECODE_OK);
	CHECK(is_dgram(&h, l4));
	CHECK_EQ(frag4(&h, 7, l4, 24, 48, 0), DECODE_OK);
	CHECK(is_dgram(&h, l4));
	CHECK_EQ(decode_frag_pending(h.d), 0);

	/* missing middle: never completes, expires by packet time, and is
	 * then handed to decode_frag_lost with the ports its first fragment
	 * held */
	CHECK_EQ(decode_frag_lost(h.d, &hop), 0); /* nothing lost so far */
	CHECK_EQ(frag4(&h, 9, l4, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(frag4(&h, 9, l4, 48, 24, 0), DECODE_HELD);
	CHECK_EQ(frag4(&h, 9, l4, 48, 24, 0), DECODE_HELD);
	CHECK_EQ(decode_frag_pending(h.d), 1);
	h.ts += 29000000;
	CHECK_EQ(frag4(&h, 10, l4, 0, 8, 1), DECODE_HELD); /* another datagram, not expired */
	CHECK_EQ(decode_frag_pending(h.d), 2);
	CHECK_EQ(st->frag_expired, 0);
	h.ts += 2000000; /* 31 s after datagram 9 began */
	CHECK_EQ(frag4(&h, 11, l4, 0, 72, 0), DECODE_OK); /* offset 0 and no MF: not a fragment */
	CHECK_EQ(h.p.flags, 0);
	CHECK_EQ(st->frag_expired, 1);
	CHECK_EQ(decode_frag_pending(h.d), 1);
	CHECK_EQ(decode_frag_lost(h.d, &hop), 1);
	CHECK_EQ(hop.ipv, 4);
	CHECK_EQ(hop.proto, 17);
	CHECK_EQ(hop.sport, 40000);
	CHECK_EQ(hop.dport, 53);
	CHECK(memcmp(hop.src, SRC4, 4) == 0 && memcmp(hop.dst, DST4, 4) == 0);
	CHECK_EQ(decode_frag_lost(h.d, &hop), 0);
	/* the late middle starts a new datagram that again never completes:
	 * lost without its first fragment, so without ports */
	CHECK_EQ(frag4(&h, 9, l4, 24, 24, 1), DECODE_HELD);
	h.ts += 60000000;
	CHECK_EQ(frag4(&h, 11, l4, 0, 72, 0), DECODE_OK);
	CHECK_EQ(st->frag_expired, 3);
	CHECK_EQ(decode_frag_pending(h.d), 0);
	CHECK_EQ(decode_frag_lost(h.d, &hop), 1); /* datagram 10 */
	CHECK_EQ(hop.proto, 17);
	CHECK_EQ(hop.dport, 53);
	CHECK_EQ(decode_frag_lost(h.d, &hop), 1); /* the late middle of 9 */
	CHECK_EQ(hop.proto, 17);
	CHECK_EQ(hop.sport, 0);
	CHECK_EQ(hop.dport, 0);
	CHECK_EQ(decode_frag_lost(h.d, &hop), 0);

	/* a fragment past 65535 (ping of death) */
	CHECK_EQ(frag4_at(&h, 12, l4, 65528, 16, 0), DECODE_MALFORMED);
	CHECK_EQ(frag4_at(&h, 12, l4, 65512, 8, 0), DECODE_MALFORMED); /* 20 + 65520 */
	CHECK_EQ(frag4_at(&h, 12, l4, 65496, 16, 0), DECODE_HELD);     /* 20 + 65512 fits */
	/* a non-last fragment whose length is not a multiple of 8 is cut to
	 * one, as Linux cuts it (test_frag_linux_rules); each refused
	 * fragment is lost too */
	CHECK_EQ(frag4(&h, 13, l4, 0, 20, 1), DECODE_HELD);
	CHECK_EQ(st->frag_trimmed, 1);
	{
		unsigned lost = 0;
		while (decode_frag_lost(h.d, &hop)) {
			lost++;
			CHECK_EQ(hop.sport, 0);
		}
		CHECK_EQ(lost, 2);
	}
	/* a second last fragment that disagrees with the first */
	CHECK_EQ(frag4(&h, 14, l4, 48, 24, 0), DECODE_HELD);
	CHECK_EQ(frag4(&h, 14, l4, 48, 16, 0), DECODE_MALFORMED);
	CHECK_EQ(frag4(&h, 14, l4, 64, 8, 1), DECODE_HELD);      /* inside: a duplicate */
	CHECK_EQ(frag4_at(&h, 14, l4, 72, 8, 1), DECODE_MALFORMED); /* past the end */
	CHECK_EQ(frag4(&h, 14, l4, 0, 48, 1), DECODE_OK);
	CHECK(is_dgram(&h, l4));
	CHECK_EQ(st->malformed[L_FRAG], 5);
	/* refused while their datagram was held: judged with it, not lost */
	CHECK_EQ(decode_frag_lost(h.d, &hop), 0);

	/* a fragment cut by caplen */
	{
		uint8_t ip[256], f[256];
		size_t n = mk_frame(f, DLT_EN10MB, 4, ip, mk_ip4(ip, 17, 15, 0x2000, 0, l4, 24));

		CHECK_EQ(run(&h, DLT_EN10MB, f, n - 1, n), DECODE_TRUNCATED);
		CHECK_EQ(st->truncated[L_FRAG], 1);
	}
	h_fini(&h);

	/* a TCP header split across fragments */
	{
		uint8_t seg[128];
		size_t ln = mk_tcp(seg, 51000, 443, 0x01020304, 0xa0b0c0d0u, TH_PUSH | TH_ACK, 3,
				   "GET ", 4);
		uint8_t ip[256], f[256];
		size_t n;

		h_init(&h, NULL);
		n = mk_frame(f, DLT_EN10MB, 4, ip, mk_ip4(ip, 6, 99, 0x2000, 0, seg, 16));
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_HELD);
		n = mk_frame(f, DLT_EN10MB, 4, ip, mk_ip4(ip, 6, 99, 2, 0, seg + 16, ln - 16));
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
		check_tcp(&h.p, 4);
		CHECK(h.p.flags & PKT_REASSEMBLED);
		/* same id, other protocol: a different datagram */
		n = mk_frame(f, DLT_EN10MB, 4, ip, mk_ip4(ip, 17, 99, 0x2000, 0, seg, 16));
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_HELD);
		n = mk_frame(f, DLT_EN10MB, 4, ip, mk_ip4(ip, 6, 99, 2, 0, seg + 16, ln - 16));
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_HELD);
		CHECK_EQ(decode_frag_pending(h.d), 2);
		h_fini(&h);
	}

	/* bounded: 2 datagrams in flight */
	memset(&cfg, 0, sizeof(cfg));
	cfg.frag_max_datagrams = 2;
	h_init(&h, &cfg);
	st = decode_stats(h.d);
	CHECK_EQ(frag4(&h, 1, l4, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(frag4(&h, 2, l4, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(frag4(&h, 3, l4, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(st->frag_evicted, 1);
	CHECK_EQ(decode_frag_pending(h.d), 2);
	CHECK_EQ(frag4(&h, 1, l4, 24, 48, 0), DECODE_HELD); /* 1 was evicted */
	CHECK_EQ(frag4(&h, 3, l4, 24, 48, 0), DECODE_OK);
	CHECK(is_dgram(&h, l4));
	h_fini(&h);

	/* bounded in bytes: many datagrams, memory never above the bound */
	memset(&cfg, 0, sizeof(cfg));
	cfg.frag_max_bytes = 20000;
	h_init(&h, &cfg);
	st = decode_stats(h.d);
	for (i = 0; i < 100; i++)
		CHECK_EQ(frag4(&h, (unsigned)(1000 + i), l4, 0, 24, 1), DECODE_HELD);
	CHECK(st->frag_evicted > 0);
	CHECK(decode_frag_pending(h.d) < 100);
	CHECK(decode_frag_pending(h.d) > 0);
	/* the newest is still there and completes */
	CHECK_EQ(frag4(&h, 1099, l4, 24, 48, 0), DECODE_OK);
	CHECK(is_dgram(&h, l4));
	h_fini(&h);

	/* a bound smaller than any datagram drops every fragment */
	memset(&cfg, 0, sizeof(cfg));
	cfg.frag_max_bytes = 100;
	h_init(&h, &cfg);
	CHECK_EQ(frag4(&h, 1, l4, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(frag4(&h, 1, l4, 24, 48, 0), DECODE_HELD);
	CHECK_EQ(decode_frag_pending(h.d), 0);
	CHECK_EQ(decode_stats(h.d)->frag_evicted, 2);
	h_fini(&h);

	/* a fragment of no bytes is refused and names nothing: at offset 0
	 * it would have set the TTL (and for IPv6 the next header) */
	h_init(&h, NULL);
	st = decode_stats(h.d);
	{
		uint8_t ip[256], f[256];
		size_t n = mk_ip4(ip, 17, 16, 0x2000, 0, l4, 0);

		ip[8] = 3; /* TTL */
		n = mk_frame(f, DLT_EN10MB, 4, ip, n);
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_MALFORMED);
		CHECK_EQ(st->malformed[L_FRAG], 1);
		CHECK_EQ(decode_frag_pending(h.d), 0);
		CHECK_EQ(frag4(&h, 16, l4, 0, 24, 1), DECODE_HELD);
		CHECK_EQ(frag4_at(&h, 16, l4, 24, 0, 1), DECODE_MALFORMED);
		CHECK_EQ(frag4(&h, 16, l4, 24, 48, 0), DECODE_OK);
		CHECK(is_dgram(&h, l4)); /* TTL 64, not 3 */
	}
	h_fini(&h);

	/* a lone fragment stamped a day ahead does not stop expiry: what
	 * began more than the timeout away, either way, expires */
	h_init(&h, NULL);
	st = decode_stats(h.d);
	CHECK_EQ(frag4(&h, 17, l4, 0, 24, 1), DECODE_HELD);
	h.ts += 86400000000ull;
	CHECK_EQ(frag4(&h, 18, l4, 0, 24, 1), DECODE_HELD);
	h.ts -= 86400000000ull - 1000000; /* back to 1 s after datagram 17 */
	CHECK_EQ(frag4(&h, 19, l4, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(st->frag_expired, 2); /* 17: a day from 18; 18: a day ahead */
	CHECK_EQ(decode_frag_pending(h.d), 1);
	h.ts += 31000000;
	CHECK_EQ(frag4(&h, 17, l4, 24, 48, 0), DECODE_HELD); /* 17 began again */
	CHECK_EQ(st->frag_expired, 3); /* 19, 31 s old */
	CHECK_EQ(decode_frag_pending(h.d), 1);
	h_fini(&h);

	/* 65,535 bytes with the FIRST fragment's header: a last fragment
	 * with a longer header than the first's does not count its own */
	{
		static uint8_t big[65535], ip[2048], f[2048];
		size_t total = 65535 - 20, off, n;

		memset(big, 0x5a, sizeof(big));
		mk_udp(big, 1, 2, NULL, 0);
		put16(big + 4, (unsigned)total);
		for (int firstopt = 0; firstopt < 2; firstopt++) {
			h_init(&h, NULL);
			st = decode_stats(h.d);
			for (off = 0; off < total; off += 1480) {
				size_t len = total - off < 1480 ? total - off : 1480;
				int more = off + len < total;
				/* options (40 bytes) on the first fragment, or
				 * on the last */
				unsigned optw = (off == 0) == (firstopt == 1) ? 10 : 0;
				enum decode_result r;

				if (!more && firstopt == 0)
					optw = 10;
				n = mk_frame(f, DLT_EN10MB, 4, ip,
					     mk_ip4(ip, 17, 6, (unsigned)(off / 8) | (more ? 0x2000 : 0),
						    optw, big + off, len));
				r = run_full(&h, DLT_EN10MB, f, n);
				if (more)
					CHECK_EQ(r, DECODE_HELD);
				else if (firstopt)
					CHECK_EQ(r, DECODE_MALFORMED); /* 60 + 65,515 */
				else
					CHECK_EQ(r, DECODE_OK);
			}
			CHECK_EQ(st->malformed[L_FRAG], (unsigned)firstopt);
			CHECK_EQ(decode_frag_pending(h.d), 0);
			h_fini(&h);
		}
	}

	/* a datagram of the largest size reassembles */
	{
		static uint8_t big[65535], ip[2048], f[2048];
		size_t total = 65535 - 20, off, n;

		for (off = 0; off < total; off++)
			big[off] = (uint8_t)(off * 7);
		mk_udp(big, 1, 2, NULL, 0);
		put16(big + 4, (unsigned)total);
		h_init(&h, NULL);
		for (off = 0; off < total; off += 1480) {
			size_t len = total - off < 1480 ? total - off : 1480;
			int more = off + len < total;
			enum decode_result r;

			n = mk_frame(f, DLT_EN10MB, 4, ip,
				     mk_ip4(ip, 17, 5, (unsigned)(off / 8) | (more ? 0x2000 : 0),
					    0, big + off, len));
			r = run_full(&h, DLT_EN10MB, f, n);
			if (more)
				CHECK_EQ(r, DECODE_HELD);
			else
				CHECK_EQ(r, DECODE_OK);
		}
		CHECK_EQ(h.p.l4_len, total);
		CHECK(memcmp(h.p.l4, big, total) == 0);
		CHECK_EQ(h.p.payload_len, total - 8);
		h_fini(&h);
	}
}

/* Send the n bytes at data as the IPv6 fragment at offset off, behind a
 * destination options header (unfragmentable part). */
static enum decode_result frag6_at(struct h *h, uint32_t id, const uint8_t *data, size_t off,
				   size_t n, int more, uint8_t first_nh)
{
	uint8_t pl[2048], ip[2048], f[2048];
	size_t e = mk_opts6(pl, 44, 0);

	e += mk_frag6(pl + e, first_nh, (unsigned)off, more, id);
	memcpy(pl + e, data, n);
	return run_full(h, DLT_EN10MB, f,
			mk_frame(f, DLT_EN10MB, 6, ip, mk_ip6(ip, 60, pl, e + n)));
}

static enum decode_result frag6(struct h *h, uint32_t id, const uint8_t *l4, size_t off,
				size_t n, int more, uint8_t first_nh)
{
	return frag6_at(h, id, l4 + off, off, n, more, first_nh);
}

/* ---- fragments as Linux's receiver reassembles them ----------------------- */

/* Bytes [off, off + n) of l4 as one IPv4 or IPv6 fragment of datagram id. */
static enum decode_result lx(struct h *h, int v6, unsigned id, const uint8_t *l4, size_t off,
			     size_t n, int more)
{
	return v6 ? frag6(h, id, l4, off, n, more, 17) : frag4(h, id, l4, off, n, more);
}

/* The packet in h is the reassembled 72-byte UDP datagram l4. */
static int is_l4(const struct h *h, int v6, const uint8_t *l4)
{
	const struct pkt *p = &h->p;

	return p->ipv == (v6 ? 6 : 4) && p->proto == 17 && (p->flags & PKT_REASSEMBLED) &&
	       p->sport == 40000 && p->dport == 53 && p->l4_len == 72 &&
	       memcmp(p->l4, l4, 72) == 0 && payload_is(p, l4 + 8, 64);
}

/* A second datagram from the same fragment (decode_next), which must be l4
 * when l4 is not NULL, and then none. */
static int next_is(struct h *h, int v6, const uint8_t *l4)
{
	int ok = 1;

	if (l4)
		ok = decode_next(h->d, &h->p) == DECODE_OK && is_l4(h, v6, l4);
	return ok && decode_next(h->d, &h->p) == DECODE_HELD;
}

/*
 * FINDINGS R20-3: the first-wins datagram is delivered as before, and the
 * datagram Linux's receiver reassembles (it discards a queue on an overlap
 * that is no duplicate inside one run, or on an end contradicted, and
 * starts over with the fragments that follow) is delivered too, unless it
 * is the same.
 */
static void test_frag_linux_view(int v6)
{
	uint8_t real[128], decoy[128], alt[128];
	struct pkt_hop hop;
	struct decode_config cfg;
	struct h h;
	const struct decode_stats *st;
	unsigned id = 100;

	dgram_udp(real);
	memcpy(decoy, real, sizeof(decoy));
	memset(decoy + 8, 'w', 8); /* the decoy differs in [8, 16) only */
	memcpy(alt, real, sizeof(alt));
	memset(alt + 16, 0xee, 16);

	h_init(&h, NULL);
	st = decode_stats(h.d);

	/* 1-2-3-4: decoy head, a fragment partly over it (Linux discards),
	 * the shared tail (completes the decoy here; Linux's new queue),
	 * the real head (Linux: tail + head = the real datagram) */
	CHECK_EQ(lx(&h, v6, id, decoy, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, real, 16, 16, 1), DECODE_HELD);
	CHECK_EQ(st->frag_linux_discard, 1);
	CHECK_EQ(lx(&h, v6, id, real, 32, 40, 0), DECODE_OK);
	CHECK(is_l4(&h, v6, decoy));
	CHECK(next_is(&h, v6, NULL));
	CHECK_EQ(decode_frag_pending(h.d), 0); /* the view is not a datagram to judge */
	CHECK_EQ(lx(&h, v6, id, real, 0, 32, 1), DECODE_OK);
	CHECK(is_l4(&h, v6, real));
	CHECK_EQ(st->frag_linux_view, 1);
	CHECK_EQ(st->frag_done, 1);
	/* the real head went to the view, not to a new datagram that would
	 * only expire */
	CHECK_EQ(decode_frag_pending(h.d), 0);
	CHECK_EQ(decode_frag_lost(h.d, &hop), 0);

	/* 2-1-3-4: the overlapping fragment first */
	id++;
	CHECK_EQ(lx(&h, v6, id, real, 16, 16, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, decoy, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(st->frag_linux_discard, 2);
	CHECK_EQ(lx(&h, v6, id, real, 32, 40, 0), DECODE_OK);
	CHECK(is_l4(&h, v6, decoy)); /* [0, 16) the decoy's, [16, 32) the real one's: the same */
	CHECK_EQ(lx(&h, v6, id, real, 0, 32, 1), DECODE_OK);
	CHECK(is_l4(&h, v6, real));
	CHECK(next_is(&h, v6, NULL));
	CHECK_EQ(st->frag_linux_view, 2);

	/* 1-2-4-3: the tail last completes both; the view comes from
	 * decode_next */
	id++;
	CHECK_EQ(lx(&h, v6, id, decoy, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, real, 16, 16, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, real, 0, 32, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, real, 32, 40, 0), DECODE_OK);
	CHECK(is_l4(&h, v6, decoy));
	CHECK(next_is(&h, v6, real));
	CHECK_EQ(st->frag_linux_view, 3);
	CHECK_EQ(decode_frag_pending(h.d), 0);
	CHECK_EQ(decode_frag_lost(h.d, &hop), 0);

	/* a Linux view not asked for is dropped by the next packet, counted */
	id++;
	CHECK_EQ(lx(&h, v6, id, decoy, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, real, 16, 16, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, real, 0, 32, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, real, 32, 40, 0), DECODE_OK);
	CHECK_EQ(lx(&h, v6, id + 1000, real, 0, 72, 0), DECODE_OK); /* whole */
	CHECK_EQ(st->frag_linux_lost, 1);
	CHECK(next_is(&h, v6, NULL));

	/* 1-2-3-4 without an overlap: no view, nothing more */
	id++;
	CHECK_EQ(lx(&h, v6, id, real, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, real, 24, 8, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, real, 32, 16, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, real, 48, 24, 0), DECODE_OK);
	CHECK(is_l4(&h, v6, real));
	CHECK(next_is(&h, v6, NULL));
	CHECK_EQ(st->frag_linux_discard, 4);

	/* exact duplicates, the same bytes or others: Linux drops the
	 * second copy (IPFRAG_DUP) and keeps its queue, as first-wins does */
	id++;
	CHECK_EQ(lx(&h, v6, id, real, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, real, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, decoy, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, real, 24, 48, 0), DECODE_OK);
	CHECK(is_l4(&h, v6, real));
	CHECK(next_is(&h, v6, NULL));
	/* a copy inside one run, even over two fragments of it, is a
	 * duplicate too (in order: one run [0, 48)) */
	id++;
	CHECK_EQ(lx(&h, v6, id, real, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, real, 24, 24, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, alt, 8, 8, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, alt, 16, 16, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, real, 48, 24, 0), DECODE_OK);
	CHECK(is_l4(&h, v6, real));
	CHECK(next_is(&h, v6, NULL));
	CHECK_EQ(st->frag_linux_discard, 4);
	CHECK_EQ(st->frag_linux_view, 3);
	/* ... but the same copy over two runs (the second fragment came
	 * first) is an overlap: Linux discards, and then holds the tail
	 * alone, which the real head completes */
	id++;
	CHECK_EQ(lx(&h, v6, id, real, 24, 24, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, real, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, alt, 16, 16, 1), DECODE_HELD);
	CHECK_EQ(st->frag_linux_discard, 5);
	CHECK_EQ(lx(&h, v6, id, real, 48, 24, 0), DECODE_OK);
	CHECK(is_l4(&h, v6, real));
	CHECK_EQ(lx(&h, v6, id, alt, 0, 48, 1), DECODE_OK);
	CHECK(is_l4(&h, v6, alt)); /* Linux: [0, 48) of alt, [48, 72) the tail */
	CHECK_EQ(st->frag_linux_view, 4);

	/* Linux delivering what the sensor read: no second delivery */
	id++;
	CHECK_EQ(lx(&h, v6, id, real, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, real, 16, 16, 1), DECODE_HELD); /* the same bytes, overlapping */
	CHECK_EQ(st->frag_linux_discard, 6);
	CHECK_EQ(lx(&h, v6, id, real, 32, 40, 0), DECODE_OK);
	CHECK(is_l4(&h, v6, real));
	CHECK_EQ(lx(&h, v6, id, real, 0, 32, 1), DECODE_HELD);
	CHECK_EQ(st->frag_linux_same, 1);
	CHECK_EQ(st->frag_linux_view, 4);
	CHECK_EQ(decode_frag_pending(h.d), 0);

	/* a last fragment that contradicts the end known: refused here as
	 * before; Linux discards the queue, the fragments after make a new one */
	id++;
	CHECK_EQ(lx(&h, v6, id, real, 48, 24, 0), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, real, 40, 8, 0), DECODE_MALFORMED); /* ends before 72 */
	CHECK_EQ(st->frag_linux_discard, 7);
	CHECK_EQ(lx(&h, v6, id, decoy, 0, 48, 1), DECODE_OK);
	CHECK(is_l4(&h, v6, decoy)); /* first-wins: as before */
	CHECK_EQ(lx(&h, v6, id, real, 48, 24, 0), DECODE_HELD); /* Linux: [0, 48) + this */
	CHECK_EQ(st->frag_linux_same, 2); /* the decoy: what was delivered */
	CHECK_EQ(decode_frag_pending(h.d), 0);
	/* and one with more to come past the end: the same */
	id++;
	CHECK_EQ(lx(&h, v6, id, decoy, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, decoy, 40, 8, 0), DECODE_HELD); /* a decoy end at 48 */
	CHECK_EQ(lx(&h, v6, id, real, 48, 16, 1), DECODE_MALFORMED); /* past it */
	CHECK_EQ(st->frag_linux_discard, 8);
	{
		uint64_t done = st->frag_done;

		(void)lx(&h, v6, id, real, 24, 24, 1); /* completes the 48 bytes, as before */
		CHECK_EQ(st->frag_done, done + 1);
	}
	CHECK_EQ(lx(&h, v6, id, real, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(decode_frag_pending(h.d), 0);
	CHECK_EQ(lx(&h, v6, id, real, 48, 24, 0), DECODE_OK);
	CHECK(is_l4(&h, v6, real)); /* Linux: [24, 48), [0, 24), [48, 72) */
	CHECK_EQ(st->frag_linux_view, 5);

	/* the Linux view overlapped again starts over, as Linux does */
	id++;
	CHECK_EQ(lx(&h, v6, id, decoy, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, real, 16, 16, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, real, 32, 40, 0), DECODE_OK);
	CHECK(is_l4(&h, v6, decoy));
	CHECK_EQ(st->frag_linux_discard, 9);
	CHECK_EQ(lx(&h, v6, id, alt, 24, 16, 1), DECODE_HELD); /* over the view's tail */
	CHECK_EQ(st->frag_linux_discard, 10);
	CHECK_EQ(lx(&h, v6, id, real, 0, 32, 1), DECODE_HELD); /* no tail any more */
	CHECK_EQ(lx(&h, v6, id, real, 32, 40, 0), DECODE_OK);
	CHECK(is_l4(&h, v6, real));
	CHECK_EQ(st->frag_linux_view, 6);
	/* a last fragment that is a duplicate completes the datagram here;
	 * Linux tests for completion only after placing a fragment, so its
	 * queue stays whole and waiting: a second datagram of the same id
	 * inside its run is duplicates to it, not delivered; once a fragment
	 * past the end discards it, the next one is */
	id++;
	CHECK_EQ(lx(&h, v6, id, real, 0, 48, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, real, 48, 24, 1), DECODE_HELD); /* one run [0, 72) */
	CHECK_EQ(lx(&h, v6, id, real, 64, 8, 0), DECODE_OK);    /* inside it */
	CHECK(is_l4(&h, v6, real));
	CHECK_EQ(lx(&h, v6, id, decoy, 0, 48, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, decoy, 48, 24, 0), DECODE_HELD); /* Linux: duplicates */
	CHECK_EQ(st->frag_linux_view, 6);
	CHECK_EQ(decode_frag_pending(h.d), 0);
	CHECK_EQ(lx(&h, v6, id, alt, 72, 8, 1), DECODE_HELD); /* past the end: discards */
	CHECK_EQ(st->frag_linux_discard, 11);
	CHECK_EQ(lx(&h, v6, id, decoy, 0, 48, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, decoy, 48, 24, 0), DECODE_OK);
	CHECK(is_l4(&h, v6, decoy));
	CHECK_EQ(st->frag_linux_view, 7);
	/* a fragment of no bytes discards Linux's queue too */
	id++;
	CHECK_EQ(lx(&h, v6, id, decoy, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, id, real, 24, 0, 1), DECODE_MALFORMED);
	CHECK_EQ(st->frag_linux_discard, 12);
	CHECK_EQ(lx(&h, v6, id, real, 24, 48, 0), DECODE_OK);
	CHECK(is_l4(&h, v6, decoy));
	CHECK_EQ(lx(&h, v6, id, real, 0, 24, 1), DECODE_OK);
	CHECK(is_l4(&h, v6, real));
	CHECK_EQ(st->frag_linux_view, 8);
	CHECK_EQ(decode_frag_pending(h.d), 0);
	CHECK_EQ(decode_frag_lost(h.d, &hop), 0);
	h_fini(&h);

	/* bounds: a view counts in the table's datagrams, is evicted and
	 * expires like any, and is never handed to decode_frag_lost */
	memset(&cfg, 0, sizeof(cfg));
	cfg.frag_max_datagrams = 2;
	h_init(&h, &cfg);
	st = decode_stats(h.d);
	CHECK_EQ(lx(&h, v6, 1, decoy, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, 1, real, 16, 16, 1), DECODE_HELD); /* a view: 2 entries */
	CHECK_EQ(decode_frag_pending(h.d), 1);
	CHECK_EQ(lx(&h, v6, 2, real, 0, 24, 1), DECODE_HELD); /* evicts datagram 1 */
	CHECK_EQ(st->frag_evicted, 1);
	CHECK_EQ(decode_frag_lost(h.d, &hop), 1);
	CHECK_EQ(decode_frag_lost(h.d, &hop), 0);
	CHECK_EQ(lx(&h, v6, 1, real, 32, 40, 0), DECODE_HELD); /* into the view */
	CHECK_EQ(lx(&h, v6, 1, real, 0, 32, 1), DECODE_OK);    /* Linux's datagram */
	CHECK(is_l4(&h, v6, real));
	CHECK_EQ(lx(&h, v6, 3, real, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, 3, alt, 16, 16, 1), DECODE_HELD); /* view of 3: evicts 2 */
	CHECK_EQ(st->frag_evicted, 2);
	CHECK_EQ(lx(&h, v6, 4, real, 0, 24, 1), DECODE_HELD); /* evicts datagram 3, not the view */
	CHECK_EQ(st->frag_evicted, 3);
	CHECK_EQ(lx(&h, v6, 5, real, 0, 24, 1), DECODE_HELD); /* then the view */
	CHECK_EQ(st->frag_evicted, 3);
	CHECK_EQ(st->frag_linux_lost, 1);
	CHECK_EQ(decode_frag_pending(h.d), 2);
	h_fini(&h);

	h_init(&h, NULL);
	st = decode_stats(h.d);
	/* expiry: a view's time starts with its first fragment, again each
	 * time it starts over (Linux's new queue); IPv6's times are twice
	 * IPv4's (60 s, 30 s) */
	CHECK_EQ(lx(&h, v6, 6, decoy, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, 6, real, 16, 16, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, 6, real, 32, 40, 0), DECODE_OK);
	h.ts += 20000000 * (1 + (uint64_t)v6);
	CHECK_EQ(lx(&h, v6, 6, alt, 24, 16, 1), DECODE_HELD); /* the view starts over */
	h.ts += 5000000 * (1 + (uint64_t)v6);
	CHECK_EQ(lx(&h, v6, 6, real, 0, 24, 1), DECODE_HELD); /* its first fragment, at 25 s */
	h.ts += 15000000 * (1 + (uint64_t)v6);
	CHECK_EQ(lx(&h, v6, 7, real, 0, 8, 1), DECODE_HELD); /* 40 s */
	CHECK_EQ(st->frag_linux_lost, 0);
	h.ts += 16000000 * (1 + (uint64_t)v6);
	CHECK_EQ(lx(&h, v6, 8, real, 0, 8, 1), DECODE_HELD); /* 56 s */
	CHECK_EQ(st->frag_linux_lost, 1);
	CHECK_EQ(st->frag_expired, 0);
	CHECK_EQ(decode_frag_pending(h.d), 2);
	CHECK_EQ(decode_frag_lost(h.d, &hop), 0); /* a view is not judged */
	/* the end of a run gives up the views too, judging only datagrams */
	CHECK_EQ(lx(&h, v6, 9, decoy, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, 9, real, 16, 16, 1), DECODE_HELD);
	CHECK_EQ(lx(&h, v6, 9, real, 32, 40, 0), DECODE_OK);
	CHECK_EQ(decode_frag_pending(h.d), 2);
	decode_frag_give_up(h.d);
	CHECK_EQ(decode_frag_pending(h.d), 0);
	CHECK_EQ(st->frag_linux_lost, 2);
	CHECK_EQ(decode_frag_lost(h.d, &hop), 1);
	CHECK_EQ(decode_frag_lost(h.d, &hop), 1);
	CHECK_EQ(decode_frag_lost(h.d, &hop), 0);
	h_fini(&h);
}

static void test_frag6(void)
{
	uint8_t l4[256], pl[256], ip[512], f[512];
	struct h h;
	const struct decode_stats *st;
	size_t n, e;

	dgram_udp(l4);
	h_init(&h, NULL);
	st = decode_stats(h.d);

	/* in order, with a destination options header before the fragment header */
	CHECK_EQ(frag6(&h, 0x11223344, l4, 0, 32, 1, 17), DECODE_HELD);
	CHECK_EQ(frag6(&h, 0x11223344, l4, 32, 40, 0, 17), DECODE_OK);
	CHECK_EQ(h.p.ipv, 6);
	CHECK_EQ(h.p.proto, 17);
	CHECK(h.p.flags & PKT_REASSEMBLED);
	CHECK_EQ(h.p.sport, 40000);
	CHECK_EQ(h.p.l4_len, 72);
	CHECK(payload_is(&h.p, l4 + 8, 64));
	CHECK(memcmp(h.p.dst, DST6, 16) == 0);
	CHECK_EQ(h.p.ttl, 63);

	/* reversed; the next header of the non-first fragment is ignored */
	CHECK_EQ(frag6(&h, 7, l4, 32, 40, 0, 6), DECODE_HELD);
	CHECK_EQ(frag6(&h, 7, l4, 0, 32, 1, 17), DECODE_OK);
	CHECK_EQ(h.p.proto, 17);
	CHECK(payload_is(&h.p, l4 + 8, 64));

	/* overlap: first wins */
	{
		uint8_t alt[128];

		memcpy(alt, l4, sizeof(alt));
		memset(alt + 24, 0x55, 16);
		CHECK_EQ(frag6(&h, 8, l4, 0, 32, 1, 17), DECODE_HELD);
		CHECK_EQ(frag6(&h, 8, alt, 24, 48, 0, 17), DECODE_OK);
		CHECK(memcmp(h.p.l4, l4, 32) == 0);
		CHECK(memcmp(h.p.l4 + 32, alt + 32, 40) == 0);
		CHECK_EQ(st->frag_overlap, 1);
	}

	/* the fragmentable part begins with destination options */
	e = mk_opts6(pl, 17, 0);
	e += dgram_udp(pl + e);
	CHECK_EQ(frag6(&h, 9, pl, 0, 40, 1, 60), DECODE_HELD);
	CHECK_EQ(frag6(&h, 9, pl, 40, e - 40, 0, 60), DECODE_OK);
	CHECK_EQ(h.p.proto, 17);
	CHECK(payload_is(&h.p, l4 + 8, 64));

	/* a fragment header inside the reassembled part is malformed, but the
	 * datagram is handed on (for the egress policy) like an unfragmented
	 * one whose extension headers lie */
	e = mk_frag6(pl, 17, 0, 0, 1);
	e += dgram_udp(pl + e);
	CHECK_EQ(frag6(&h, 10, pl, 0, 40, 1, 44), DECODE_HELD);
	CHECK_EQ(frag6(&h, 10, pl, 40, e - 40, 0, 44), DECODE_OK);
	CHECK_EQ(st->malformed[L_FRAG], 1);
	CHECK(h.p.flags & PKT_L4_BAD);
	CHECK(h.p.flags & PKT_REASSEMBLED);
	CHECK_EQ(h.p.proto, 44);
	CHECK(h.p.ipv == 6 && memcmp(h.p.dst, DST6, 16) == 0);

	/* a fragment header after hop-by-hop, no destination options */
	e = mk_opts6(pl, 44, 0);
	e += mk_frag6(pl + e, 17, 0, 1, 20);
	e += dgram_udp(pl + e);
	n = mk_frame(f, DLT_EN10MB, 6, ip, mk_ip6(ip, 0, pl, 16 + 32));
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_HELD);
	/* the unfragmentable part may differ between fragments: same datagram */
	CHECK_EQ(frag6(&h, 20, l4, 32, 40, 0, 17), DECODE_OK);
	CHECK(payload_is(&h.p, l4 + 8, 64));

	/* a fragment of no bytes at offset 0 names no next header: the
	 * fragments that carry the datagram do (tshark and Linux agree) */
	e = mk_frag6(pl, 59, 0, 1, 21);
	n = mk_frame(f, DLT_EN10MB, 6, ip, mk_ip6(ip, 44, pl, e));
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_MALFORMED);
	CHECK_EQ(frag6(&h, 21, l4, 0, 32, 1, 17), DECODE_HELD);
	CHECK_EQ(frag6(&h, 21, l4, 32, 40, 0, 17), DECODE_OK);
	CHECK_EQ(h.p.proto, 17);
	CHECK_EQ(h.p.sport, 40000);

	/* missing last: expires, after 60 s as Linux's ip6frag_time (IPv4:
	 * 30 s) */
	CHECK_EQ(frag6(&h, 11, l4, 0, 32, 1, 17), DECODE_HELD);
	CHECK_EQ(decode_frag_pending(h.d), 1);
	h.ts += 31000000;
	CHECK_EQ(frag6(&h, 12, l4, 0, 72, 0, 17), DECODE_OK); /* atomic-looking: offset 0, M 0 */
	CHECK_EQ(h.p.flags, 0);
	CHECK_EQ(decode_frag_pending(h.d), 1);
	CHECK_EQ(st->frag_expired, 0);
	h.ts += 30000000;
	CHECK_EQ(frag6(&h, 12, l4, 0, 72, 0, 17), DECODE_OK);
	CHECK_EQ(decode_frag_pending(h.d), 0);
	CHECK_EQ(st->frag_expired, 1);

	/* beyond 65535 */
	CHECK_EQ(frag6_at(&h, 13, l4, 65528, 8, 0, 17), DECODE_MALFORMED);
	CHECK_EQ(frag6_at(&h, 13, l4, 65520, 8, 0, 17), DECODE_HELD);
	h_fini(&h);
}

/* ---- encapsulations ------------------------------------------------------ */

/* The inner packet of every tunnel test: a DNS query over UDP between
 * addresses that appear nowhere in the outer headers. */
static const uint8_t IN_SRC4[4] = {172, 16, 44, 3};
static const uint8_t IN_DST4[4] = {8, 8, 8, 8};
static const uint8_t IN_SRC6[16] = {0xfd, 0x00, 0, 0x44, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x03};
static const uint8_t IN_DST6[16] = {0x20, 0x01, 0x48, 0x60, 0x48, 0x60, 0, 0, 0, 0, 0, 0, 0, 0, 0x88, 0x88};
static const char DNSQ[] = "\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x03"
			   "www\x07"
			   "example\x03"
			   "com\x00\x00\x01\x00\x01";
#define DNSQ_LEN (sizeof(DNSQ) - 1)

/* IPv4 between src and dst (no options, DF, TTL 64). */
static size_t mk_ip4_at(uint8_t *o, uint8_t proto, const uint8_t *src, const uint8_t *dst,
			unsigned id, unsigned frag, const uint8_t *l4, size_t n)
{
	size_t len = mk_ip4(o, proto, id, frag, 0, l4, n);

	memcpy(o + 12, src, 4);
	memcpy(o + 16, dst, 4);
	ip4_csum(o);
	return len;
}

static size_t mk_ip6_at(uint8_t *o, uint8_t nh, const uint8_t *src, const uint8_t *dst,
			const uint8_t *pl, size_t n)
{
	size_t len = mk_ip6(o, nh, pl, n);

	memcpy(o + 8, src, 16);
	memcpy(o + 24, dst, 16);
	return len;
}

/* The inner DNS query datagram, IPv4 or IPv6. */
static size_t mk_inner(uint8_t *o, int ipv)
{
	uint8_t l4[128];
	size_t ln = mk_udp(l4, 40768, 53, DNSQ, DNSQ_LEN);

	if (ipv == 4)
		return mk_ip4_at(o, 17, IN_SRC4, IN_DST4, 0x77, 0x4000, l4, ln);
	return mk_ip6_at(o, 17, IN_SRC6, IN_DST6, l4, ln);
}

/* An Ethernet header with the given ethertype. */
static size_t mk_eth(uint8_t *o, unsigned type)
{
	memset(o, 0x02, 12);
	o[5] = 0x11;
	return 12 + put16(o + 12, type);
}

/* Ethernet + outer IPv4 (SRC4 -> DST4) of protocol proto around pl. */
static size_t mk_outer4(uint8_t *f, uint8_t proto, const uint8_t *pl, size_t n)
{
	size_t e = mk_eth(f, 0x0800);

	return e + mk_ip4(f + e, proto, 9, 0, 0, pl, n);
}

/* Ethernet + outer IPv4 + UDP to dport around pl. */
static size_t mk_outer_udp(uint8_t *f, unsigned dport, const uint8_t *pl, size_t n)
{
	uint8_t u[2048];

	return mk_outer4(f, 17, u, mk_udp(u, 50000, dport, pl, n));
}

/* p->outer of a tunnelled packet: mk_outer4's datagram. */
static void check_hop(const struct h *h, uint8_t proto, unsigned sport, unsigned dport)
{
	const struct pkt_hop *o = &h->p.outer;

	CHECK_EQ(o->ipv, 4);
	CHECK_EQ(o->proto, proto);
	CHECK_EQ(o->sport, sport);
	CHECK_EQ(o->dport, dport);
	CHECK(memcmp(o->src, SRC4, 4) == 0 && memcmp(o->src + 4, ZERO12, 12) == 0);
	CHECK(memcmp(o->dst, DST4, 4) == 0 && memcmp(o->dst + 4, ZERO12, 12) == 0);
}

/* The decoded packet is the inner DNS query, behind encap tunnels. */
static void check_inner(const struct h *h, int ipv, unsigned encap)
{
	const struct pkt *p = &h->p;

	CHECK_EQ(p->ipv, ipv);
	CHECK_EQ(p->proto, 17);
	CHECK_EQ(p->encap, encap);
	CHECK_EQ(p->sport, 40768);
	CHECK_EQ(p->dport, 53);
	if (ipv == 4) {
		CHECK(memcmp(p->src, IN_SRC4, 4) == 0);
		CHECK(memcmp(p->dst, IN_DST4, 4) == 0);
		CHECK(memcmp(p->src + 4, ZERO12, 12) == 0);
		CHECK(memcmp(p->dst + 4, ZERO12, 12) == 0);
		CHECK_EQ(p->ttl, 64);
	} else {
		CHECK(memcmp(p->src, IN_SRC6, 16) == 0);
		CHECK(memcmp(p->dst, IN_DST6, 16) == 0);
		CHECK_EQ(p->ttl, 63);
	}
	CHECK_EQ(p->l4_len, 8 + DNSQ_LEN);
	CHECK(payload_is(p, DNSQ, DNSQ_LEN));
	CHECK_EQ(p->flags & PKT_SHORT, 0);
}

/* The decoded packet is the outer datagram SRC4 -> DST4 of protocol proto. */
static void check_outer(const struct h *h, uint8_t proto, unsigned dport)
{
	const struct pkt *p = &h->p;

	CHECK_EQ(p->ipv, 4);
	CHECK_EQ(p->proto, proto);
	CHECK_EQ(p->encap, 0);
	CHECK_EQ(p->outer.ipv, 0); /* it is the outermost */
	CHECK_EQ(p->dport, dport);
	CHECK(memcmp(p->src, SRC4, 4) == 0);
	CHECK(memcmp(p->dst, DST4, 4) == 0);
	CHECK(p->l4 == h->buf + 34);
}

/* PPP protocol number of an IP version. */
static unsigned ppp_proto(int ipv)
{
	return ipv == 4 ? 0x0021 : 0x0057;
}

/* Link types other than test_links' plain form: variants of each header. */
static void test_link_variants(void)
{
	uint8_t in[256], f[512];
	size_t n, k;
	struct h h;
	const struct decode_stats *st;
	int ipv;

	h_init(&h, NULL);
	st = decode_stats(h.d);
	for (ipv = 4; ipv <= 6; ipv += 2) {
		size_t m = mk_inner(in, ipv);
		unsigned type = ipv == 4 ? 0x0800 : 0x86dd;

		/* PPP without address/control, and with a compressed protocol */
		n = put16(f, ppp_proto(ipv));
		memcpy(f + n, in, m);
		CHECK_EQ(run_full(&h, DLT_PPP, f, n + m), DECODE_OK);
		check_inner(&h, ipv, 0);
		f[0] = (uint8_t)ppp_proto(ipv);
		memcpy(f + 1, in, m);
		CHECK_EQ(run_full(&h, DLT_PPP, f, 1 + m), DECODE_OK);
		check_inner(&h, ipv, 0);
		/* DLT_PPP_SERIAL carrying Cisco HDLC framing (broadcast address) */
		put16(f, 0x8f00);
		put16(f + 2, type);
		memcpy(f + 4, in, m);
		CHECK_EQ(run_full(&h, DLT_PPP_SERIAL, f, 4 + m), DECODE_OK);
		check_inner(&h, ipv, 0);
		/* Frame Relay: Cisco encapsulation (a bare ethertype) */
		put16(f, 0x1861);
		put16(f + 2, type);
		memcpy(f + 4, in, m);
		CHECK_EQ(run_full(&h, DLT_FRELAY, f, 4 + m), DECODE_OK);
		check_inner(&h, ipv, 0);
		/* ... RFC 2427 with the pad byte and a 3-byte address */
		memcpy(f, "\x18\x60\x01\x03\x00", 5);
		f[5] = ipv == 4 ? 0xcc : 0x8e;
		memcpy(f + 6, in, m);
		CHECK_EQ(run_full(&h, DLT_FRELAY, f, 6 + m), DECODE_OK);
		check_inner(&h, ipv, 0);
		/* ... SNAP (NLPID 0x80, OUI 0, ethertype) */
		memcpy(f, "\x18\x41\x03\x00\x80\x00\x00\x00", 8);
		put16(f + 8, type);
		memcpy(f + 10, in, m);
		CHECK_EQ(run_full(&h, DLT_FRELAY, f, 10 + m), DECODE_OK);
		check_inner(&h, ipv, 0);
		/* FDDI with an 802.1H OUI */
		n = mk_link(f, DLT_FDDI, ipv, m);
		f[18] = 0xf8;
		memcpy(f + n, in, m);
		CHECK_EQ(run_full(&h, DLT_FDDI, f, n + m), DECODE_OK);
		check_inner(&h, ipv, 0);
		/* NFLOG with the payload attribute first, padded, another after it */
		f[0] = ipv == 4 ? 2 : 10;
		f[1] = 0;
		put16(f + 2, 1);
		put16le(f + 4, (unsigned)m + 4);
		put16le(f + 6, 9);
		memcpy(f + 8, in, m);
		n = 8 + m;
		while (n % 4)
			f[n++] = 0;
		put16le(f + n, 8);
		put16le(f + n + 2, 11); /* NFULA_UID */
		put32(f + n + 4, 1000);
		CHECK_EQ(run_full(&h, DLT_NFLOG, f, n + 8), DECODE_OK);
		check_inner(&h, ipv, 0);
		/* ... and a type carrying the NLA_F_NET_BYTEORDER flag */
		put16le(f + 6, 0x4009);
		CHECK_EQ(run_full(&h, DLT_NFLOG, f, n + 8), DECODE_OK);
		check_inner(&h, ipv, 0);
	}
	CHECK_EQ(st->malformed[L_LINK], 0);
	CHECK_EQ(st->truncated[L_LINK], 0);

	/* Not IP: PPP LCP, Cisco SLARP, a Frame Relay CLNP NLPID, an FDDI SMT
	 * frame, FDDI spanning tree LLC, NFLOG without a payload, NFLOG of
	 * another family. */
	memcpy(f, "\xff\x03\xc0\x21\x01\x01\x00\x04", 8);
	CHECK_EQ(run_full(&h, DLT_PPP, f, 8), DECODE_NOT_IP);
	memcpy(f, "\x8f\x00\x80\x35\x00\x00\x00\x00", 8);
	CHECK_EQ(run_full(&h, DLT_C_HDLC, f, 8), DECODE_NOT_IP);
	memcpy(f, "\x18\x41\x03\x81\x00\x00\x00\x00", 8);
	CHECK_EQ(run_full(&h, DLT_FRELAY, f, 8), DECODE_NOT_IP);
	memset(f, 0, 32);
	f[0] = 0x41;
	CHECK_EQ(run_full(&h, DLT_FDDI, f, 32), DECODE_NOT_IP);
	f[0] = 0x50;
	memcpy(f + 13, "\x42\x42\x03", 3);
	CHECK_EQ(run_full(&h, DLT_FDDI, f, 32), DECODE_NOT_IP);
	memcpy(f + 13, "\xaa\xaa\x03\x00\x00\x0c\x20\x00", 8); /* Cisco OUI */
	CHECK_EQ(run_full(&h, DLT_FDDI, f, 32), DECODE_NOT_IP);
	memcpy(f, "\x02\x00\x00\x2a\x08\x00\x01\x00\x08\x00\x03\x00", 12);
	CHECK_EQ(run_full(&h, DLT_NFLOG, f, 12), DECODE_NOT_IP);
	n = mk_inner(in, 4);
	k = mk_frame(f, DLT_NFLOG, 4, in, n);
	f[0] = 7;
	CHECK_EQ(run_full(&h, DLT_NFLOG, f, k), DECODE_NOT_IP);
	CHECK_EQ(st->not_ip, 8);
	CHECK_EQ(st->malformed[L_LINK], 0);

	/* Lies: PPP address without control 0x03, an even PPP protocol, a
	 * one-byte and a five-byte Q.922 address, NFLOG version 1, an attribute
	 * shorter than its header, a payload attribute beyond the wire, more
	 * attributes than the walk allows. */
	memcpy(f, "\xff\x05\x00\x21", 4);
	memcpy(f + 4, in, n);
	CHECK_EQ(run_full(&h, DLT_PPP, f, 4 + n), DECODE_MALFORMED);
	memcpy(f, "\x00\x20", 2);
	CHECK_EQ(run_full(&h, DLT_PPP, f, 4 + n), DECODE_MALFORMED);
	memcpy(f, "\x19\x41\x03\xcc", 4);
	CHECK_EQ(run_full(&h, DLT_FRELAY, f, 4 + n), DECODE_MALFORMED);
	memcpy(f, "\x18\x40\x00\x00\x00\x03\xcc", 7);
	CHECK_EQ(run_full(&h, DLT_FRELAY, f, 7 + n), DECODE_MALFORMED);
	k = mk_frame(f, DLT_NFLOG, 4, in, n);
	f[1] = 1;
	CHECK_EQ(run_full(&h, DLT_NFLOG, f, k), DECODE_MALFORMED);
	f[1] = 0;
	put16le(f + 4, 3);
	CHECK_EQ(run_full(&h, DLT_NFLOG, f, k), DECODE_MALFORMED);
	put16le(f + 4, 8);
	put16le(f + 20, (unsigned)n + 5);
	CHECK_EQ(run_full(&h, DLT_NFLOG, f, k), DECODE_MALFORMED);
	put16le(f + 20, (unsigned)n + 4);
	CHECK_EQ(run(&h, DLT_NFLOG, f, k - 3, k), DECODE_OK); /* cut, not a lie */
	CHECK(h.p.flags & PKT_SHORT);
	memcpy(f, "\x02\x00\x00\x2a", 4);
	for (k = 0; k < 33; k++) {
		put16le(f + 4 + 4 * k, 4);
		put16le(f + 6 + 4 * k, 15);
	}
	CHECK_EQ(run_full(&h, DLT_NFLOG, f, 4 + 4 * 33), DECODE_MALFORMED);
	CHECK_EQ(st->malformed[L_LINK], 8);
	h_fini(&h);
}

/* Ethernet payloads: PPPoE sessions and MPLS label stacks. */
static void test_pppoe_mpls(void)
{
	static const unsigned tp[2] = {0x8100, 0x8100}, tci[2] = {421, 785};
	uint8_t in[256], f[512];
	size_t n, m, e, i;
	struct h h;
	const struct decode_stats *st;
	int ipv;

	h_init(&h, NULL);
	st = decode_stats(h.d);
	for (ipv = 4; ipv <= 6; ipv += 2) {
		m = mk_inner(in, ipv);
		/* PPPoE session, behind QinQ as in the corpus */
		n = 12;
		memset(f, 0x02, 12);
		for (i = 0; i < 2; i++) {
			n += put16(f + n, tp[i]);
			n += put16(f + n, tci[i]);
		}
		n += put16(f + n, 0x8864);
		n += mk_link(f + n, DLT_PPP_ETHER, ipv, m);
		memcpy(f + n, in, m);
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n + m), DECODE_OK);
		check_inner(&h, ipv, 0);
		CHECK_EQ(h.p.vlan, 421);
		/* MPLS: two labels, the second with bottom-of-stack */
		e = mk_eth(f, ipv == 4 ? 0x8847 : 0x8848);
		e += put32(f + e, 0x0001d0ff);
		e += put32(f + e, 0x0001d1ff);
		memcpy(f + e, in, m);
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, e + m), DECODE_OK);
		check_inner(&h, ipv, 0);
	}
	CHECK_EQ(st->ok[L_PPPOE], 2);
	CHECK_EQ(st->ok[L_PPP], 2);
	CHECK_EQ(st->ok[L_MPLS], 2);

	/* PPPoE length narrowing. The frame padded to 100 bytes; the PPPoE
	 * length covers exactly PPP + IP: the padding is not payload. */
	m = mk_inner(in, 4);
	e = mk_eth(f, 0x8864);
	n = e + mk_link(f + e, DLT_PPP_ETHER, 4, m);
	memcpy(f + n, in, m);
	memset(f + n + m, 0xee, 100);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n + m + 100), DECODE_OK);
	check_inner(&h, 4, 0);
	/* ... a PPPoE length shorter than the IP datagram: the IP header lies */
	put16(f + e + 4, (unsigned)m + 2 - 1);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n + m + 100), DECODE_MALFORMED);
	CHECK_EQ(st->malformed[L_IPV4], 1);
	/* ... a PPPoE length beyond the frame on the wire */
	put16(f + e + 4, (unsigned)m + 2 + 101);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n + m + 100), DECODE_MALFORMED);
	CHECK_EQ(st->malformed[L_PPPOE], 1);
	/* ... but within wirelen: a short capture */
	put16(f + e + 4, (unsigned)m + 2);
	CHECK_EQ(run(&h, DLT_EN10MB, f, n + m - 3, n + m), DECODE_OK);
	CHECK(h.p.flags & PKT_SHORT);
	CHECK_EQ(h.p.payload_len, DNSQ_LEN - 3);
	/* ... length 0: no room for the PPP protocol */
	put16(f + e + 4, 0);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n + m), DECODE_MALFORMED);
	CHECK_EQ(st->malformed[L_PPP], 1);
	/* ... version/type and code (PADI) */
	put16(f + e + 4, (unsigned)m + 2);
	f[e] = 0x12;
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n + m), DECODE_MALFORMED);
	f[e] = 0x11;
	f[e + 1] = 0x09;
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n + m), DECODE_MALFORMED);
	CHECK_EQ(st->malformed[L_PPPOE], 3);
	/* ... LCP in the session, and discovery (0x8863): not IP */
	f[e + 1] = 0;
	put16(f + e + 6, 0xc021);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n + m), DECODE_NOT_IP);
	put16(f + 12, 0x8863);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n + m), DECODE_NOT_IP);

	/* MPLS: the label stack is bounded; a payload of version 0 is unknown */
	e = mk_eth(f, 0x8847);
	for (i = 0; i < 8; i++)
		e += put32(f + e, 0x000100ff | (i == 7 ? 0x100 : 0));
	memcpy(f + e, in, m);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, e + m), DECODE_OK);
	check_inner(&h, 4, 0);
	f[e - 2] &= 0xfe;
	e += put32(f + e, 0x000101ff);
	memcpy(f + e, in, m);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, e + m), DECODE_MALFORMED);
	CHECK_EQ(st->malformed[L_MPLS], 1);
	e = mk_eth(f, 0x8847);
	e += put32(f + e, 0x000101ff);
	memset(f + e, 0, 20);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, e + 20), DECODE_NOT_IP);
	/* MPLS over PPP (protocol 0x0281) */
	n = put16(f, 0xff03);
	n += put16(f + n, 0x0281);
	n += put32(f + n, 0x000101ff);
	memcpy(f + n, in, m);
	CHECK_EQ(run_full(&h, DLT_PPP, f, n + m), DECODE_OK);
	check_inner(&h, 4, 0);
	h_fini(&h);
}

/* GRE v0 with the words its flags ask for (checksum+offset, key, sequence). */
static size_t mk_gre(uint8_t *o, unsigned flags, unsigned type)
{
	size_t n = put16(o, flags);

	n += put16(o + n, type);
	if (flags & 0x8000)
		n += put32(o + n, 0);
	if (flags & 0x2000)
		n += put32(o + n, 0xabcd0001u);
	if (flags & 0x1000)
		n += put32(o + n, 7);
	return n;
}

/* GRE v1 (PPTP): flags include K; payload length plen, call id 6016. */
static size_t mk_pptp(uint8_t *o, unsigned flags, unsigned plen)
{
	size_t n = put16(o, flags);

	n += put16(o + n, 0x880b);
	n += put16(o + n, plen);
	n += put16(o + n, 6016);
	if (flags & 0x1000)
		n += put32(o + n, 430001);
	if (flags & 0x0080)
		n += put32(o + n, 539254);
	return n;
}

/* A VXLAN header (I flag, VNI 1). */
static size_t mk_vxlan(uint8_t *o, uint8_t flags)
{
	memset(o, 0, 8);
	o[0] = flags;
	o[6] = 1;
	return 8;
}

/* A GENEVE header with optw words of options. */
static size_t mk_geneve(uint8_t *o, unsigned optw, unsigned type)
{
	size_t n = 8 + 4 * (size_t)optw;

	memset(o, 0, n);
	o[0] = (uint8_t)optw;
	put16(o + 2, type);
	o[6] = 1;
	if (optw) { /* one option: class, type, length in words */
		put16(o + 8, 0x0103);
		o[10] = 0x80;
		o[11] = (uint8_t)(optw - 1);
	}
	return n;
}

/* IP tunnels: IP-in-IP, GRE (v0, v1, TEB, MPLS, ERSPAN), VXLAN, GENEVE. */
static void test_tunnels(void)
{
	uint8_t in[256], pl[1024], f[2048];
	size_t n, m, k;
	struct h h;
	const struct decode_stats *st;
	int ipv, i;

	h_init(&h, NULL);
	st = decode_stats(h.d);
	for (ipv = 4; ipv <= 6; ipv += 2) {
		unsigned type = ipv == 4 ? 0x0800 : 0x86dd;

		m = mk_inner(in, ipv);
		/* IP-in-IP (4, 41) in IPv4, and in IPv6 */
		n = mk_outer4(f, ipv == 4 ? 4 : 41, in, m);
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
		check_inner(&h, ipv, 1);
		k = mk_eth(f, 0x86dd);
		n = k + mk_ip6(f + k, ipv == 4 ? 4 : 41, in, m);
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
		check_inner(&h, ipv, 1);
		/* GRE: plain, then with checksum, key and sequence number */
		k = mk_gre(pl, 0, type);
		memcpy(pl + k, in, m);
		n = mk_outer4(f, 47, pl, k + m);
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
		check_inner(&h, ipv, 1);
		k = mk_gre(pl, 0xb000, type);
		memcpy(pl + k, in, m);
		n = mk_outer4(f, 47, pl, k + m);
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
		check_inner(&h, ipv, 1);
		/* GRE, transparent Ethernet bridging */
		k = mk_gre(pl, 0x2000, 0x6558);
		k += mk_eth(pl + k, type);
		memcpy(pl + k, in, m);
		n = mk_outer4(f, 47, pl, k + m);
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
		check_inner(&h, ipv, 1);
		/* GRE, MPLS */
		k = mk_gre(pl, 0, 0x8847);
		k += put32(pl + k, 0x000101ff);
		memcpy(pl + k, in, m);
		n = mk_outer4(f, 47, pl, k + m);
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
		check_inner(&h, ipv, 1);
		/* GRE v1 (PPTP): sequence and ack, PPP with address and control */
		k = mk_pptp(pl, 0x3081, (unsigned)m + 4);
		k += put16(pl + k, 0xff03);
		k += put16(pl + k, ppp_proto(ipv));
		memcpy(pl + k, in, m);
		n = mk_outer4(f, 47, pl, k + m);
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
		check_inner(&h, ipv, 1);
		/* ... sequence only, a compressed PPP protocol */
		k = mk_pptp(pl, 0x3001, (unsigned)m + 1);
		pl[k++] = (uint8_t)ppp_proto(ipv);
		memcpy(pl + k, in, m);
		n = mk_outer4(f, 47, pl, k + m);
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
		check_inner(&h, ipv, 1);
		/* ERSPAN type II (GRE sequence number, 8-byte header) */
		k = mk_gre(pl, 0x1000, 0x88be);
		k += put32(pl + k, 0x10640001);
		k += put32(pl + k, 0);
		k += mk_eth(pl + k, type);
		memcpy(pl + k, in, m);
		n = mk_outer4(f, 47, pl, k + m);
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
		check_inner(&h, ipv, 1);
		/* ERSPAN type I (no sequence number, no header) */
		k = mk_gre(pl, 0, 0x88be);
		k += mk_eth(pl + k, type);
		memcpy(pl + k, in, m);
		n = mk_outer4(f, 47, pl, k + m);
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
		check_inner(&h, ipv, 1);
		/* ERSPAN type III with its platform subheader (O flag) */
		k = mk_gre(pl, 0x1000, 0x22eb);
		k += put32(pl + k, 0x20640001);
		k += put32(pl + k, 0x12345678);
		k += put16(pl + k, 0);
		k += put16(pl + k, 0x0001);
		k += put32(pl + k, 0x1c000000);
		k += put32(pl + k, 0);
		k += mk_eth(pl + k, type);
		memcpy(pl + k, in, m);
		n = mk_outer4(f, 47, pl, k + m);
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
		check_inner(&h, ipv, 1);
		check_hop(&h, 47, 0, 0);
		/* VXLAN */
		k = mk_vxlan(pl, 0x08);
		k += mk_eth(pl + k, type);
		memcpy(pl + k, in, m);
		n = mk_outer_udp(f, 4789, pl, k + m);
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
		check_inner(&h, ipv, 1);
		check_hop(&h, 17, 50000, 4789);
		CHECK_EQ(h.p.flags & PKT_IP_CSUM_BAD, 0); /* outer checksum 0: none */
		/* the outer UDP checksum, right, then wrong: the endpoint drops
		 * a wrong one before it decapsulates (flows weigh the flag) */
		{
			uint8_t *u = f + 14 + 20;
			size_t ul = (size_t)(u[4] << 8 | u[5]);
			uint32_t sum = 17 + (uint32_t)ul;
			for (size_t j = 0; j < 8; j += 2)
				sum += (uint32_t)(f[14 + 12 + j] << 8 | f[14 + 12 + j + 1]);
			for (size_t j = 0; j < ul; j += 2)
				sum += (uint32_t)(u[j] << 8 | (j + 1 < ul ? u[j + 1] : 0));
			while (sum >> 16)
				sum = (sum & 0xffff) + (sum >> 16);
			put16(u + 6, ~sum & 0xffff);
			CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
			check_inner(&h, ipv, 1);
			CHECK_EQ(h.p.flags & PKT_IP_CSUM_BAD, 0);
			u[7] ^= 0x10;
			CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
			check_inner(&h, ipv, 1);
			CHECK(h.p.flags & PKT_IP_CSUM_BAD);
		}
		/* GENEVE with an option, Ethernet; and carrying IP directly */
		k = mk_geneve(pl, 2, 0x6558);
		k += mk_eth(pl + k, type);
		memcpy(pl + k, in, m);
		n = mk_outer_udp(f, 6081, pl, k + m);
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
		check_inner(&h, ipv, 1);
		k = mk_geneve(pl, 0, type);
		memcpy(pl + k, in, m);
		n = mk_outer_udp(f, 6081, pl, k + m);
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
		check_inner(&h, ipv, 1);
	}
	CHECK_EQ(st->ok[L_TUNNEL], 4);
	CHECK_EQ(st->ok[L_GRE], 18);
	CHECK_EQ(st->ok[L_ERSPAN], 6);
	CHECK_EQ(st->ok[L_VXLAN], 6);
	CHECK_EQ(st->ok[L_GENEVE], 4);
	CHECK_EQ(st->not_ip, 0);
	for (i = 0; i < L_COUNT; i++) {
		CHECK_EQ(st->truncated[i], 0);
		CHECK_EQ(st->malformed[i], 0);
	}

	/* Tunnels carrying no IP: the outer datagram stands, not counted as
	 * not-IP. GRE keepalive, RFC 1701 routing, GRE version 2, a PPTP ack
	 * alone, ERSPAN III of an IP frame type, VXLAN without the I flag,
	 * ARP over VXLAN, a datagram to 4789 too short for VXLAN, GENEVE
	 * version 1. */
	memset(pl, 0, 64);
	n = mk_outer4(f, 47, pl, mk_gre(pl, 0, 0) + 8);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	check_outer(&h, 47, 0);
	CHECK_EQ(h.p.l4_len, 12);
	CHECK_EQ(h.p.payload_len, 0);
	k = mk_inner(in, 4);
	m = mk_gre(pl, 0x4000, 0x0800);
	memcpy(pl + m, in, k);
	n = mk_outer4(f, 47, pl, m + k);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	check_outer(&h, 47, 0);
	pl[1] = 2;
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, mk_outer4(f, 47, pl, m + k)), DECODE_OK);
	check_outer(&h, 47, 0);
	n = mk_outer4(f, 47, pl, mk_pptp(pl, 0x2081, 0));
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	check_outer(&h, 47, 0);
	m = mk_gre(pl, 0x1000, 0x22eb);
	m += put32(pl + m, 0x20640001);
	m += put32(pl + m, 0);
	m += put16(pl + m, 0);
	m += put16(pl + m, 2 << 10);
	memcpy(pl + m, in, k);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, mk_outer4(f, 47, pl, m + k)), DECODE_OK);
	check_outer(&h, 47, 0);
	m = mk_vxlan(pl, 0x00);
	m += mk_eth(pl + m, 0x0800);
	memcpy(pl + m, in, k);
	n = mk_outer_udp(f, 4789, pl, m + k);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	check_outer(&h, 17, 4789);
	CHECK_EQ(h.p.sport, 50000);
	CHECK(payload_is(&h.p, pl, m + k));
	pl[0] = 0x08;
	put16(pl + 20, 0x0806);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, mk_outer_udp(f, 4789, pl, m + k)), DECODE_OK);
	check_outer(&h, 17, 4789);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, mk_outer_udp(f, 4789, pl, 4)), DECODE_OK);
	check_outer(&h, 17, 4789);
	CHECK_EQ(h.p.payload_len, 4);
	m = mk_geneve(pl, 0, 0x0800);
	pl[0] = 0x40;
	memcpy(pl + m, in, k);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, mk_outer_udp(f, 6081, pl, m + k)), DECODE_OK);
	check_outer(&h, 17, 6081);
	CHECK_EQ(st->not_ip, 0);
	for (i = 0; i < L_COUNT; i++)
		CHECK_EQ(st->malformed[i], 0);

	/* An outer datagram cut after its inner one ends: the inner is whole */
	memcpy(pl, in, k);
	memset(pl + k, 0xee, 8);
	n = mk_outer4(f, 4, pl, k + 8);
	CHECK_EQ(run(&h, DLT_EN10MB, f, n - 4, n), DECODE_OK);
	check_inner(&h, 4, 1);
	CHECK_EQ(h.p.flags, 0);

	/* Lies. GRE v1 without its key; PPTP payload length beyond the
	 * datagram, and shorter than the PPP frame; ERSPAN II of version 2; a
	 * GRE header longer than the IP datagram; IP-in-IP whose inner packet
	 * is not IPv4. Each is counted malformed, and the datagram that
	 * carries the tunnel is handed on: it went over the wire. */
	m = mk_pptp(pl, 0x3081, (unsigned)k + 4);
	m += put16(pl + m, 0xff03);
	m += put16(pl + m, 0x0021);
	memcpy(pl + m, in, k);
	pl[0] = 0x10;
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, mk_outer4(f, 47, pl, m + k)), DECODE_OK);
	check_outer(&h, 47, 0);
	pl[0] = 0x30;
	put16(pl + 4, (unsigned)k + 5);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, mk_outer4(f, 47, pl, m + k)), DECODE_OK);
	check_outer(&h, 47, 0);
	CHECK_EQ(st->malformed[L_GRE], 2);
	put16(pl + 4, (unsigned)k + 3);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, mk_outer4(f, 47, pl, m + k)), DECODE_OK);
	check_outer(&h, 47, 0);
	CHECK_EQ(h.p.flags, 0);
	CHECK_EQ(st->malformed[L_IPV4], 1);
	m = mk_gre(pl, 0x1000, 0x88be);
	m += put32(pl + m, 0x20640001);
	m += put32(pl + m, 0);
	m += mk_eth(pl + m, 0x0800);
	memcpy(pl + m, in, k);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, mk_outer4(f, 47, pl, m + k)), DECODE_OK);
	check_outer(&h, 47, 0);
	CHECK_EQ(st->malformed[L_ERSPAN], 1);
	n = mk_outer4(f, 47, pl, mk_gre(pl, 0xb000, 0x0800));
	put16(f + 16, 20 + 8);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	check_outer(&h, 47, 0);
	CHECK_EQ(h.p.l4_len, 8);
	CHECK_EQ(st->malformed[L_GRE], 3);
	n = mk_outer4(f, 4, in, k);
	f[34] = 0x65;
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	check_outer(&h, 4, 0);
	CHECK_EQ(st->malformed[L_IPV4], 2);
	h_fini(&h);
}

/* Every truncation point of every new header, with the layer it counts at. */
static void test_encap_truncation(void)
{
	uint8_t in4[256], in6[256], pl[1024], f[2048];
	size_t m4 = mk_inner(in4, 4), m6 = mk_inner(in6, 6), n, k;
	const size_t u4 = 20 + 8, u6 = 40 + 8; /* inner headers */

	/* Link types: Cisco HDLC, PPP, PPPoE (DLT_PPP_ETHER), Frame Relay
	 * (NLPID, SNAP), FDDI, NFLOG */
	n = mk_frame(f, DLT_C_HDLC, 4, in4, m4);
	{
		const struct bound b[] = {{4, L_LINK}, {4 + 20, L_IPV4}, {4 + u4, L_UDP}};
		sweep(DLT_C_HDLC, f, n, b, 3, 40768, 53);
	}
	n = mk_frame(f, DLT_PPP, 6, in6, m6);
	{
		const struct bound b[] = {{4, L_LINK}, {4 + 40, L_IPV6}, {4 + u6, L_UDP}};
		sweep(DLT_PPP, f, n, b, 3, 40768, 53);
	}
	n = mk_frame(f, DLT_PPP_ETHER, 4, in4, m4);
	{
		const struct bound b[] = {{6, L_PPPOE}, {8, L_PPP}, {8 + 20, L_IPV4},
					  {8 + u4, L_UDP}};
		sweep(DLT_PPP_ETHER, f, n, b, 4, 40768, 53);
	}
	n = mk_frame(f, DLT_FRELAY, 4, in4, m4);
	f[3] = 0x00; /* pad byte before the NLPID */
	memmove(f + 5, f + 4, n - 4);
	f[4] = 0xcc;
	n++;
	{
		const struct bound b[] = {{5, L_LINK}, {5 + 20, L_IPV4}, {5 + u4, L_UDP}};
		sweep(DLT_FRELAY, f, n, b, 3, 40768, 53);
	}
	memcpy(f, "\x18\x41\x03\x00\x80\x00\x00\x00\x86\xdd", 10);
	memcpy(f + 10, in6, m6);
	{
		const struct bound b[] = {{10, L_LINK}, {10 + 40, L_IPV6}, {10 + u6, L_UDP}};
		sweep(DLT_FRELAY, f, 10 + m6, b, 3, 40768, 53);
	}
	n = mk_frame(f, DLT_FDDI, 4, in4, m4);
	{
		const struct bound b[] = {{21, L_LINK}, {21 + 20, L_IPV4}, {21 + u4, L_UDP}};
		sweep(DLT_FDDI, f, n, b, 3, 40768, 53);
	}
	n = mk_frame(f, DLT_NFLOG, 6, in6, m6);
	{
		const struct bound b[] = {{24, L_LINK}, {24 + 40, L_IPV6}, {24 + u6, L_UDP}};
		sweep(DLT_NFLOG, f, n, b, 3, 40768, 53);
	}

	/* Ethernet, VLAN, PPPoE, PPP, IPv4, UDP */
	k = mk_eth(f, 0x8100);
	k += put16(f + k, 7);
	k += put16(f + k, 0x8864);
	k += mk_link(f + k, DLT_PPP_ETHER, 4, m4);
	memcpy(f + k, in4, m4);
	{
		const struct bound b[] = {{14, L_LINK}, {18, L_VLAN}, {24, L_PPPOE}, {26, L_PPP},
					  {26 + 20, L_IPV4}, {26 + u4, L_UDP}};
		sweep(DLT_EN10MB, f, k + m4, b, 6, 40768, 53);
	}
	/* Ethernet, MPLS (two labels and the version nibble), IPv6, UDP */
	k = mk_eth(f, 0x8847);
	k += put32(f + k, 0x000100ff);
	k += put32(f + k, 0x000101ff);
	memcpy(f + k, in6, m6);
	{
		const struct bound b[] = {{14, L_LINK}, {22, L_MPLS}, {23, L_MPLS},
					  {22 + 40, L_IPV6}, {22 + u6, L_UDP}};
		sweep(DLT_EN10MB, f, k + m6, b, 5, 40768, 53);
	}
	/* IPv4 in IPv4; IPv4 in IPv6 */
	n = mk_outer4(f, 4, in4, m4);
	{
		const struct bound b[] = {{14, L_LINK}, {34, L_IPV4}, {54, L_IPV4}, {34 + u4, L_UDP}};
		sweep(DLT_EN10MB, f, n, b, 4, 40768, 53);
	}
	k = mk_eth(f, 0x86dd);
	n = k + mk_ip6(f + k, 4, in4, m4);
	{
		const struct bound b[] = {{14, L_LINK}, {54, L_IPV6}, {74, L_IPV4}, {54 + u4, L_UDP}};
		sweep(DLT_EN10MB, f, n, b, 4, 40768, 53);
	}
	/* GRE with checksum, key and sequence, IPv6 */
	k = mk_gre(pl, 0xb000, 0x86dd);
	memcpy(pl + k, in6, m6);
	n = mk_outer4(f, 47, pl, k + m6);
	{
		const struct bound b[] = {{14, L_LINK}, {34, L_IPV4}, {50, L_GRE}, {90, L_IPV6},
					  {50 + u6, L_UDP}};
		sweep(DLT_EN10MB, f, n, b, 5, 40768, 53);
	}
	/* GRE v1, PPP (address, control, protocol), IPv4 */
	k = mk_pptp(pl, 0x3081, (unsigned)m4 + 4);
	k += put16(pl + k, 0xff03);
	k += put16(pl + k, 0x0021);
	memcpy(pl + k, in4, m4);
	n = mk_outer4(f, 47, pl, k + m4);
	{
		const struct bound b[] = {{14, L_LINK}, {34, L_IPV4}, {50, L_GRE}, {54, L_PPP},
					  {74, L_IPV4}, {54 + u4, L_UDP}};
		sweep(DLT_EN10MB, f, n, b, 6, 40768, 53);
	}
	/* GRE, ERSPAN II, Ethernet, IPv4 */
	k = mk_gre(pl, 0x1000, 0x88be);
	k += put32(pl + k, 0x10640001);
	k += put32(pl + k, 0);
	k += mk_eth(pl + k, 0x0800);
	memcpy(pl + k, in4, m4);
	n = mk_outer4(f, 47, pl, k + m4);
	{
		const struct bound b[] = {{14, L_LINK}, {34, L_IPV4}, {42, L_GRE}, {50, L_ERSPAN},
					  {64, L_LINK}, {84, L_IPV4}, {64 + u4, L_UDP}};
		sweep(DLT_EN10MB, f, n, b, 7, 40768, 53);
	}
	/* VXLAN, Ethernet, IPv4 */
	k = mk_vxlan(pl, 0x08);
	k += mk_eth(pl + k, 0x0800);
	memcpy(pl + k, in4, m4);
	n = mk_outer_udp(f, 4789, pl, k + m4);
	{
		const struct bound b[] = {{14, L_LINK}, {34, L_IPV4}, {42, L_UDP}, {50, L_VXLAN},
					  {64, L_LINK}, {84, L_IPV4}, {64 + u4, L_UDP}};
		sweep(DLT_EN10MB, f, n, b, 7, 40768, 53);
	}
	/* GENEVE with 12 bytes of options, IPv6 */
	k = mk_geneve(pl, 3, 0x86dd);
	memcpy(pl + k, in6, m6);
	n = mk_outer_udp(f, 6081, pl, k + m6);
	{
		const struct bound b[] = {{14, L_LINK}, {34, L_IPV4}, {42, L_UDP}, {62, L_GENEVE},
					  {102, L_IPV6}, {62 + u6, L_UDP}};
		sweep(DLT_EN10MB, f, n, b, 6, 40768, 53);
	}
}

/* Wrap the n bytes at in in levels of IPv4 + GRE into f (with Ethernet). */
static size_t mk_gre_nest(uint8_t *f, const uint8_t *in, size_t n, unsigned levels)
{
	uint8_t a[2048], b[2048];
	size_t len = n;
	unsigned i;

	memcpy(a, in, n);
	for (i = 0; i < levels; i++) {
		size_t g = mk_gre(b, 0, 0x0800);

		memcpy(b + g, a, len);
		len = mk_ip4(a, 47, 100 + i, 0, 0, b, g + len);
	}
	memcpy(f + mk_eth(f, 0x0800), a, len);
	return 14 + len;
}

/* The nesting bound: tunnels inside tunnels, counted in p->encap. */
static void test_encap_depth(void)
{
	uint8_t in[256], pl[2048], f[4096];
	struct decode_config cfg;
	size_t m = mk_inner(in, 4), n, k;
	unsigned lv;
	struct h h;

	/* GRE in GRE in ...: the default bound of 4 holds, 5 is refused */
	h_init(&h, NULL);
	for (lv = 1; lv <= 4; lv++) {
		n = mk_gre_nest(f, in, m, lv);
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
		check_inner(&h, 4, lv);
	}
	CHECK_EQ(decode_stats(h.d)->ok[L_GRE], 1 + 2 + 3 + 4);
	/* too deep: counted, and the deepest carrier it reached is handed
	 * on, with the outermost datagram in p->outer */
	n = mk_gre_nest(f, in, m, 5);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK_EQ(decode_stats(h.d)->malformed[L_TUNNEL], 1);
	CHECK_EQ(h.p.encap, 4);
	CHECK_EQ(h.p.proto, 47);
	CHECK_EQ(h.p.outer.ipv, 4);
	CHECK_EQ(h.p.outer.proto, 47);
	n = mk_gre_nest(f, in, m, 12);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK_EQ(decode_stats(h.d)->malformed[L_TUNNEL], 2);
	CHECK_EQ(h.p.encap, 4);
	/* a mix: IPv4 in VXLAN in GRE in IPv4-in-IPv4 */
	k = mk_vxlan(pl, 0x08);
	k += mk_eth(pl + k, 0x0800);
	memcpy(pl + k, in, m);
	n = mk_outer_udp(f, 4789, pl, k + m); /* Ethernet + IPv4 + UDP + VXLAN */
	k = mk_gre(pl, 0, 0x0800);
	memcpy(pl + k, f + 14, n - 14);
	n = mk_outer4(f, 47, pl, k + n - 14);
	memcpy(pl, f + 14, n - 14);
	n = mk_outer4(f, 4, pl, n - 14);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	check_inner(&h, 4, 3);
	check_hop(&h, 4, 0, 0); /* the outermost of the three */
	h_fini(&h);

	/* a configured bound of 1; and one beyond the hard cap of 16 */
	memset(&cfg, 0, sizeof(cfg));
	cfg.max_encap_depth = 1;
	h_init(&h, &cfg);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, mk_gre_nest(f, in, m, 1)), DECODE_OK);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, mk_gre_nest(f, in, m, 2)), DECODE_OK);
	CHECK_EQ(h.p.encap, 1);
	CHECK_EQ(h.p.proto, 47);
	h_fini(&h);
	cfg.max_encap_depth = 1000;
	h_init(&h, &cfg);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, mk_gre_nest(f, in, m, 16)), DECODE_OK);
	check_inner(&h, 4, 16);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, mk_gre_nest(f, in, m, 17)), DECODE_OK);
	CHECK_EQ(h.p.encap, 16);
	CHECK_EQ(h.p.proto, 47);
	h_fini(&h);
}

/* Ethernet + IPv4 (src -> DST4) fragment of protocol proto: data at off. */
static size_t mk_frag4_frame(uint8_t *f, uint8_t proto, const uint8_t *src, unsigned id,
			     const uint8_t *data, size_t off, size_t n, int more)
{
	size_t e = mk_eth(f, 0x0800);

	return e + mk_ip4_at(f + e, proto, src, DST4, id,
			     (unsigned)(off / 8) | (more ? 0x2000u : 0), data, n);
}

/* Reassembly around tunnels: outer first, inner keyed by inner addresses. */
static void test_encap_frag(void)
{
	static const uint8_t tun_a[4] = {192, 0, 2, 1}, tun_b[4] = {192, 0, 2, 2};
	uint8_t in[256], inner[256], pl[1024], f[2048], fr[256];
	size_t m, k, n;
	struct h h;

	h_init(&h, NULL);
	/* A fragmented outer datagram carrying GRE: reassembled, then opened */
	m = mk_inner(in, 4);
	k = mk_gre(pl, 0x2000, 0x0800);
	memcpy(pl + k, in, m);
	k += m;
	n = mk_frag4_frame(f, 47, SRC4, 500, pl, 0, 24, 1);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_HELD);
	n = mk_frag4_frame(f, 47, SRC4, 500, pl + 24, 24, k - 24, 0);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	check_inner(&h, 4, 1);
	CHECK(h.p.flags & PKT_REASSEMBLED);

	/* Inner fragments through IP-in-IP, arriving over two different
	 * tunnels: the inner addresses key the table. A held inner fragment
	 * hands on its carrier (proto 4, no tunnel opened) */
	{
		uint8_t l4[128];
		size_t ln = mk_udp(l4, 40768, 53, DNSQ, DNSQ_LEN), e;

		k = mk_ip4_at(inner, 17, IN_SRC4, IN_DST4, 0x99, 0x2000, l4, 16);
		e = mk_eth(f, 0x0800);
		n = e + mk_ip4_at(f + e, 4, tun_a, DST4, 1, 0, inner, k);
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
		CHECK_EQ(h.p.proto, 4);
		CHECK_EQ(h.p.encap, 0);
		CHECK(memcmp(h.p.src, tun_a, 4) == 0);
		CHECK_EQ(decode_frag_pending(h.d), 1);
		k = mk_ip4_at(inner, 17, IN_SRC4, IN_DST4, 0x99, 2, l4 + 16, ln - 16);
		n = e + mk_ip4_at(f + e, 4, tun_b, DST4, 2, 0, inner, k);
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
		check_inner(&h, 4, 1);
		CHECK(h.p.flags & PKT_REASSEMBLED);
		CHECK_EQ(decode_frag_pending(h.d), 0);

		/* Both at once: a fragmented outer datagram whose reassembled
		 * payload is the first inner fragment (the reassembly buffer is
		 * reused for the inner datagram) */
		k = mk_ip4_at(inner, 17, IN_SRC4, IN_DST4, 0x9a, 0x2000, l4, 16);
		n = mk_frag4_frame(f, 4, tun_a, 600, inner, 0, 16, 1);
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_HELD);
		n = mk_frag4_frame(f, 4, tun_a, 600, inner + 16, 16, k - 16, 0);
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK); /* the carrier, whole */
		CHECK_EQ(h.p.proto, 4);
		CHECK_EQ(h.p.encap, 0);
		CHECK(h.p.flags & PKT_REASSEMBLED);
		CHECK_EQ(h.p.l4_len, k);
		k = mk_ip4_at(inner, 17, IN_SRC4, IN_DST4, 0x9a, 2, l4 + 16, ln - 16);
		memcpy(fr, inner, k);
		n = mk_frag4_frame(f, 4, tun_a, 601, fr, 0, 24, 1);
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_HELD);
		n = mk_frag4_frame(f, 4, tun_a, 601, fr + 24, 24, k - 24, 0);
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
		check_inner(&h, 4, 1);
		CHECK(h.p.flags & PKT_REASSEMBLED);
		CHECK_EQ(decode_frag_pending(h.d), 0);
	}
	h_fini(&h);
}

/* ---- random bytes -------------------------------------------------------- */

static uint32_t rnd(uint32_t *s)
{
	uint32_t x = *s;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*s = x;
	return x;
}

/*
 * A reference of Linux's fragment queue for one key (IPv4 and IPv6 share
 * inet_frag_queue_insert; the end checks are alike), written from the
 * kernel's rules (ip_frag_queue, inet_frag_queue_insert) rather than from
 * the decoder: a list of fragments, each knowing the run it belongs to.
 */
struct lxref {
	int alive, n, first_in, last_in;
	size_t len, meat;
	size_t off[32], end[32];
	int run[32];     /* index of the fragment that heads its run */
	uint8_t data[80];
};

/* One fragment [off, off + n) of bytes b; 1 when the queue completes, its
 * 72-byte datagram in out. */
static int lxref_add(struct lxref *q, int v6, size_t off, size_t n, int more, const uint8_t *b,
		     uint8_t *out)
{
	size_t end;
	int i, tail = -1, k;

	if (v6 && off == 0 && n < 8)
		return 0; /* ipv6_frag_rcv: no whole UDP header; dropped before the queue */
	if (more && (n & 7)) {
		if (v6)
			return 0; /* ip6_frag_queue: dropped, the queue kept */
		n &= ~(size_t)7; /* ip_frag_queue: cut to a multiple of 8 */
	}
	end = off + n;
	if (!q->alive)
		memset(q, 0, sizeof(*q)), q->alive = 1;
	if (!more) {
		if (end < q->len || (q->last_in && end != q->len))
			goto kill;
		q->last_in = 1;
		q->len = end;
	} else if (end > q->len) {
		if (q->last_in)
			goto kill;
		q->len = end;
	}
	if (end == off)
		goto kill;
	for (i = 0; i < q->n; i++)
		if (tail < 0 || q->end[i] > q->end[tail])
			tail = i;
	k = q->n;
	if (tail < 0) {
		q->run[k] = k;
	} else if (q->end[tail] < end) {
		if (off < q->end[tail])
			goto kill;
		q->run[k] = off == q->end[tail] ? q->run[tail] : k;
	} else {
		for (i = 0; i < q->n; i++) {
			size_t rs, re = 0;
			int j;

			if (q->run[i] != i)
				continue; /* not a run's head */
			rs = q->off[i];
			for (j = 0; j < q->n; j++)
				if (q->run[j] == i && q->end[j] > re)
					re = q->end[j];
			if (end <= rs || off >= re)
				continue;
			if (off >= rs && end <= re)
				return 0; /* IPFRAG_DUP: dropped, the queue kept */
			goto kill;        /* IPFRAG_OVERLAP */
		}
		q->run[k] = k;
	}
	q->off[k] = off;
	q->end[k] = end;
	q->n++;
	memcpy(q->data + off, b, n);
	q->meat += n;
	if (off == 0)
		q->first_in = 1;
	if (q->first_in && q->last_in && q->meat == q->len) {
		memcpy(out, q->data, q->len);
		q->alive = 0;
		return q->len == 72;
	}
	return 0;
kill:
	q->alive = 0;
	return 0;
}

/*
 * Random fragments of one IPv4 or IPv6 datagram (three versions of its bytes, offsets
 * and lengths on 8-byte steps, duplicates, overlaps, fragments of no bytes,
 * any order): whatever the reference Linux queue delivers, the decoder
 * delivers too (or it is the first-wins datagram it already delivered),
 * and every datagram the decoder delivers from a Linux view is what Linux
 * delivers with that fragment.
 */
static void test_frag_linux_random(int v6)
{
	uint8_t ver[3][128], out[80];
	uint32_t s = 0x5eed1234;
	struct h h;
	const struct decode_stats *st;
	struct pkt_hop hop;
	unsigned trial, bad = 0, linux_seen = 0, view_seen = 0;

	for (int v = 0; v < 3; v++) {
		dgram_udp(ver[v]);
		if (v)
			memset(ver[v] + 8 + 8 * (size_t)v, 0xa0 + v, 24);
	}
	h_init(&h, NULL);
	st = decode_stats(h.d);
	for (trial = 0; trial < 40000; trial++) {
		struct lxref ref;
		uint8_t fw_last[72];
		int have_fw = 0;
		unsigned k, nfr = 3 + rnd(&s) % 8;

		memset(&ref, 0, sizeof(ref));
		for (k = 0; k < nfr; k++) {
			int v = (int)(rnd(&s) % 3), more, lin;
			size_t off = 8 * (size_t)(rnd(&s) % 9), n;
			uint64_t done = st->frag_done, view = st->frag_linux_view;
			enum decode_result r;

			off %= 8 * (1 + (size_t)(rnd(&s) % 9)); /* small offsets more often */

			n = 8 * (size_t)(1 + rnd(&s) % (9 - off / 8));
			if (rnd(&s) % 16 == 0)
				n = 0;
			if (off + n > 72)
				n = 72 - off;
			more = off + n < 72 ? 1 : (int)(rnd(&s) % 2);
			if (off == 0 && n == 72)
				more = 1; /* else no fragment at all (IPv6: atomic) */
			if (more && rnd(&s) % 8 == 0) /* not a multiple of 8 */
				n += 1 + rnd(&s) % 7, n = off + n > 72 ? 72 - off : n;
			lin = lxref_add(&ref, v6, off, n, more, ver[v] + off, out);
			if (lin)
				linux_seen++;
			r = v6 ? frag6_at(&h, 5000 + trial, ver[v] + off, off, n, more, 17)
			       : frag4_at(&h, 5000 + trial, ver[v] + off, off, n, more);
			if (st->frag_done > done) {
				/* the first-wins datagram, as before */
				if (r != DECODE_OK || h.p.l4_len != 72) {
					bad++;
					continue;
				}
				memcpy(fw_last, h.p.l4, 72);
				have_fw = 1;
				if (lin && memcmp(out, fw_last, 72) == 0)
					lin = 0; /* delivered once */
				if (decode_next(h.d, &h.p) == DECODE_OK) {
					view_seen++;
					bad += !lin || h.p.l4_len != 72 || memcmp(h.p.l4, out, 72) != 0;
					lin = 0;
				}
			} else if (st->frag_linux_view > view) {
				view_seen++;
				bad += !lin || r != DECODE_OK || h.p.l4_len != 72 ||
				       memcmp(h.p.l4, out, 72) != 0;
				lin = 0;
			}
			/* Linux's datagram not delivered: only as the first-wins one */
			if (lin && !(have_fw && memcmp(out, fw_last, 72) == 0))
				bad++;
		}
		decode_frag_give_up(h.d);
		while (decode_frag_lost(h.d, &hop))
			;
	}
	CHECK_EQ(bad, 0);
	CHECK(linux_seen > 500); /* 706 */
	CHECK(view_seen > 200);  /* 276 */
	h_fini(&h);
}

/* n fragments [0, 8) with more to come, each of its own datagram (ids from
 * id), from src to dst: fragments that never complete. */
static void fillers(struct h *h, const uint8_t *src, const uint8_t *dst, unsigned id, unsigned n)
{
	static const uint8_t eight[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	uint8_t f[256];

	for (unsigned i = 0; i < n; i++) {
		size_t e = mk_eth(f, 0x0800);

		e += mk_ip4_at(f + e, 17, src, dst, id + i, 0x2000, eight, 8);
		CHECK_EQ(run_full(h, DLT_EN10MB, f, e), DECODE_HELD);
	}
}

/*
 * Two rules of Linux's IPv4 reassembly that a first-wins table also has to
 * follow, or a sender hides a datagram from it (pcaps/review21/frag,
 * recorded against dnsmasq on Linux 6.18): a fragment with more to come
 * whose length is not a multiple of 8 is cut to one and kept (the sensor
 * refused it, and never saw the query Linux delivered), and a queue with
 * more than ipfrag_max_dist (64) other fragments from its sender since its
 * last one starts over (the sensor kept a decoy's head there, and read the
 * decoy where Linux delivered the real query).
 */
static void test_frag_linux_rules(void)
{
	static const uint8_t other[4] = {10, 99, 0, 11};
	uint8_t real[128], decoy[128], l4v6[128];
	struct h h;
	const struct decode_stats *st;

	dgram_udp(real);
	memcpy(decoy, real, sizeof(decoy));
	memset(decoy + 8, 'w', 16); /* the decoy differs in [8, 24) only */
	h_init(&h, NULL);
	st = decode_stats(h.d);

	/* cut: [0, 37) with more to come is [0, 32), then [32, 72) */
	CHECK_EQ(frag4(&h, 1, real, 0, 37, 1), DECODE_HELD);
	CHECK_EQ(st->frag_trimmed, 1);
	CHECK_EQ(frag4(&h, 1, real, 32, 40, 0), DECODE_OK);
	CHECK(is_dgram(&h, real));
	CHECK(next_is(&h, 0, NULL));
	/* the decoy's bytes past the cut are not held: the real ones that
	 * follow are no overlap, for Linux or here */
	CHECK_EQ(frag4_at(&h, 2, decoy, 0, 21, 1), DECODE_HELD); /* [0, 16) */
	CHECK_EQ(frag4(&h, 2, real, 16, 56, 0), DECODE_OK);
	CHECK(h.p.l4_len == 72 && memcmp(h.p.l4 + 16, real + 16, 56) == 0);
	CHECK(next_is(&h, 0, NULL));
	CHECK_EQ(st->frag_conflict, 0);
	CHECK_EQ(st->frag_linux_discard, 0);
	/* fewer than 8 with more to come: cut to nothing, refused (Linux
	 * discards the queue) */
	CHECK_EQ(frag4(&h, 3, real, 0, 7, 1), DECODE_MALFORMED);
	CHECK_EQ(st->frag_trimmed, 2);
	/* IPv6 drops such a fragment and keeps the queue */
	dgram_udp(l4v6);
	CHECK_EQ(frag6(&h, 4, l4v6, 0, 24, 1, 17), DECODE_HELD);
	CHECK_EQ(frag6(&h, 4, l4v6, 24, 13, 1, 17), DECODE_MALFORMED);
	CHECK_EQ(frag6(&h, 4, l4v6, 24, 48, 0, 17), DECODE_OK);
	CHECK(is_l4(&h, 1, l4v6));
	CHECK_EQ(st->frag_trimmed, 2);
	CHECK_EQ(st->frag_linux_discard, 0); /* id 3 had no queue to discard */
	h_fini(&h);

	/* ipfrag_max_dist: the decoy's head, 64 fragments of other datagrams
	 * from the same sender to the same host, the real head (Linux starts
	 * the queue over with it), the shared tail */
	h_init(&h, NULL);
	st = decode_stats(h.d);
	CHECK_EQ(frag4(&h, 10, decoy, 0, 24, 1), DECODE_HELD);
	fillers(&h, SRC4, DST4, 100, 64);
	CHECK_EQ(frag4(&h, 10, real, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(st->frag_linux_far, 1);
	CHECK_EQ(st->frag_linux_discard, 1);
	CHECK_EQ(frag4(&h, 10, real, 24, 48, 0), DECODE_OK);
	CHECK(is_dgram(&h, decoy)); /* first wins, as before */
	CHECK(next_is(&h, 0, real)); /* and what Linux delivers */
	CHECK_EQ(st->frag_linux_view, 1);
	/* 63 between them is not too far: the real head is a duplicate to
	 * Linux too */
	CHECK_EQ(frag4(&h, 11, decoy, 0, 24, 1), DECODE_HELD);
	fillers(&h, SRC4, DST4, 200, 63);
	CHECK_EQ(frag4(&h, 11, real, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(frag4(&h, 11, real, 24, 48, 0), DECODE_OK);
	CHECK(is_dgram(&h, decoy));
	CHECK(next_is(&h, 0, NULL));
	CHECK_EQ(st->frag_linux_far, 1);
	/* fragments from another sender, or to another host, are not
	 * counted */
	CHECK_EQ(frag4(&h, 12, decoy, 0, 24, 1), DECODE_HELD);
	fillers(&h, other, DST4, 300, 100);
	fillers(&h, SRC4, IN_DST4, 400, 100);
	CHECK_EQ(frag4(&h, 12, real, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(frag4(&h, 12, real, 24, 48, 0), DECODE_OK);
	CHECK(is_dgram(&h, decoy));
	CHECK(next_is(&h, 0, NULL));
	CHECK_EQ(st->frag_linux_far, 1);
	/* the count is since the queue's last fragment: 40 and 40 is not
	 * too far */
	CHECK_EQ(frag4(&h, 13, decoy, 0, 16, 1), DECODE_HELD);
	fillers(&h, SRC4, DST4, 500, 40);
	CHECK_EQ(frag4(&h, 13, decoy, 16, 8, 1), DECODE_HELD);
	fillers(&h, SRC4, DST4, 600, 40);
	CHECK_EQ(frag4(&h, 13, real, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(frag4(&h, 13, real, 24, 48, 0), DECODE_OK);
	CHECK(is_dgram(&h, decoy));
	CHECK(next_is(&h, 0, NULL));
	CHECK_EQ(st->frag_linux_far, 1);
	/* a Linux view starts over too: the decoy's head, an overlap (Linux
	 * discards; its view takes the second decoy head), 64 others, the
	 * real head, the tail */
	CHECK_EQ(frag4(&h, 14, decoy, 0, 24, 1), DECODE_HELD);
	CHECK_EQ(frag4(&h, 14, decoy, 16, 16, 1), DECODE_HELD);
	CHECK_EQ(frag4(&h, 14, decoy, 0, 16, 1), DECODE_HELD);
	fillers(&h, SRC4, DST4, 700, 64);
	CHECK_EQ(frag4(&h, 14, real, 0, 16, 1), DECODE_HELD);
	CHECK_EQ(st->frag_linux_far, 2);
	CHECK_EQ(frag4(&h, 14, real, 16, 56, 0), DECODE_OK);
	CHECK(is_dgram(&h, decoy));
	CHECK(next_is(&h, 0, real));
	/* the peers go with the last datagram that names them */
	decode_frag_give_up(h.d);
	CHECK_EQ(decode_frag_pending(h.d), 0);
	h_fini(&h);
}

/* An IPv6 packet over Ethernet: an options header of type ht (0 or 60)
 * whose option bytes are opts[0..n) (n + 2 a multiple of 8), then UDP with
 * l4[0..l4n). PKT_RX_DROP of the decoded packet, or -1 when it did not
 * decode. */
static int opts_drop(struct h *h, uint8_t ht, const uint8_t *opts, size_t n, const uint8_t *l4,
		     size_t l4n)
{
	uint8_t pl[512], ip[600], f[700];

	pl[0] = 17;
	pl[1] = (uint8_t)((n + 2) / 8 - 1);
	memcpy(pl + 2, opts, n);
	memcpy(pl + 2 + n, l4, l4n);
	if (run_full(h, DLT_EN10MB, f, mk_frame(f, DLT_EN10MB, 6, ip, mk_ip6(ip, ht, pl, 2 + n + l4n))) !=
	    DECODE_OK)
		return -1;
	return (h->p.flags & PKT_RX_DROP) != 0;
}

/*
 * IPv6 options Linux's receiver refuses (ip6_parse_tlv; FINDINGS R21-F5):
 * its IP layer drops the packet, so a TCP segment sent so is a decoy that
 * no server reads (it stood for the real request here), and a fragment
 * sent so never reaches the datagram Linux makes.
 */
static void test_ip6_opts_drop(void)
{
	static const struct {
		uint8_t ht;
		uint8_t o[14];
		uint8_t n;
		int drop;
	} c[] = {
		{60, {0x1e, 4, 0, 0, 0, 0}, 6, 0},          /* unknown, skip */
		{60, {0x5e, 4, 0, 0, 0, 0}, 6, 1},          /* unknown, discard */
		{60, {0x9e, 4, 0, 0, 0, 0}, 6, 1},          /* ..., and ICMP */
		{60, {0xde, 4, 0, 0, 0, 0}, 6, 1},          /* ..., ICMP unless multicast */
		{60, {1, 4, 0, 0, 0, 0}, 6, 0},             /* PadN of 6 */
		{60, {1, 4, 0, 1, 0, 0}, 6, 1},             /* PadN not zero */
		{60, {0, 0, 0, 0, 0, 0}, 6, 0},             /* six Pad1 */
		{60, {1, 12, 0}, 14, 1},                    /* PadN of 14 */
		{60, {1, 3, 0, 0, 0, 0, 0, 0, 0x1e, 4}, 14, 1}, /* PadN 5 + Pad1 3 */
		{60, {1, 3, 0, 0, 0, 0, 0, 0x1e, 5}, 14, 0},    /* PadN 5 + Pad1 2 */
		{60, {0x1e, 0, 1, 1, 0, 0x1e, 0, 1, 2, 0, 0, 0x1e, 0, 0}, 14, 0},
		{60, {0x1e, 6, 0}, 6, 1},                   /* runs past the header */
		{60, {0xc9, 4, 0, 0, 0, 0}, 6, 1},          /* home address */
		{60, {5, 2, 0, 0, 1, 0}, 6, 0},             /* router alert: only hop-by-hop's */
		{0, {5, 2, 0, 0, 1, 0}, 6, 0},              /* router alert */
		{0, {5, 4, 0, 0, 0, 0}, 6, 1},              /* ... of another length */
		{0, {0xc2, 4, 0, 1, 0, 0}, 6, 1},           /* jumbo payload */
		{0, {7, 4, 0, 0, 0, 0}, 6, 1},              /* CALIPSO */
		{0, {1, 0, 0x31, 2, 0, 0}, 6, 0},           /* IOAM at 44: ignored */
		{0, {0x31, 2, 0, 0, 1, 0}, 6, 1},           /* IOAM at 42: misaligned */
		{0, {0x3e, 4, 0, 0, 0, 0}, 6, 0},
		{0, {0x7e, 4, 0, 0, 0, 0}, 6, 1},
	};
	uint8_t l4[128], nine[30], pl[600], ip[700], f[800], d[128];
	struct h h;
	const struct decode_stats *st;
	size_t i, e;

	dgram_udp(l4);
	h_init(&h, NULL);
	st = decode_stats(h.d);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int r = opts_drop(&h, c[i].ht, c[i].o, c[i].n, l4, 72);
		if (r != c[i].drop)
			fprintf(stderr, "options case %zu: %d\n", i, r);
		CHECK_EQ(r, c[i].drop);
	}
	/* eight options and six bytes of PadN: taken; nine: dropped */
	memset(nine, 0, sizeof(nine));
	for (i = 0; i < 9; i++)
		nine[2 * i] = 0x1e;
	nine[16] = 1, nine[17] = 4;
	CHECK_EQ(opts_drop(&h, 60, nine, 22, l4, 72), 0);
	nine[16] = 0x1e, nine[17] = 0, nine[18] = 1, nine[19] = 2;
	CHECK_EQ(opts_drop(&h, 60, nine, 22, l4, 72), 1);

	/* a fragment behind options Linux refuses: refused, so the real head
	 * after it wins */
	memcpy(d, l4, sizeof(d));
	memset(d + 8, 'w', 16);
	e = mk_opts6(pl, 44, 0);
	pl[2] = 0x9e;
	e += mk_frag6(pl + e, 17, 0, 1, 30);
	memcpy(pl + e, d, 24);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, mk_frame(f, DLT_EN10MB, 6, ip, mk_ip6(ip, 60, pl, e + 24))),
		 DECODE_OK); /* handed on for the policy, not held */
	CHECK_EQ(h.p.flags & (PKT_FRAGMENT | PKT_L4_BAD | PKT_RX_DROP),
		 PKT_FRAGMENT | PKT_L4_BAD | PKT_RX_DROP);
	CHECK_EQ(decode_frag_pending(h.d), 0);
	CHECK_EQ(st->frag_rx_drop, 1);
	CHECK_EQ(frag6(&h, 30, l4, 0, 24, 1, 17), DECODE_HELD);
	CHECK_EQ(frag6(&h, 30, l4, 24, 48, 0, 17), DECODE_OK);
	CHECK(is_l4(&h, 1, l4));
	CHECK(next_is(&h, 1, NULL));
	CHECK_EQ(st->frag_conflict, 0);
	/* options inside the fragmentable part: the whole datagram is
	 * flagged once reassembled */
	e = mk_opts6(pl, 17, 0);
	pl[2] = 0x5e;
	memcpy(pl + e, l4, 72);
	CHECK_EQ(frag6_at(&h, 31, pl, 0, 16, 1, 60), DECODE_HELD);
	CHECK_EQ(frag6_at(&h, 31, pl + 16, 16, 64, 0, 60), DECODE_OK);
	CHECK(h.p.flags & PKT_RX_DROP);
	CHECK(h.p.flags & PKT_REASSEMBLED);
	CHECK_EQ(h.p.proto, 17);

	/* IPv6 routing headers: one with segments left, or segment routing
	 * or RPL, drops the packet at a host; another with none left is
	 * passed (ipv6_rthdr_rcv) */
	{
		static const uint8_t rh[][3] = {
			/* type, segments left, dropped */
			{0, 0, 0}, {0, 1, 1}, {2, 1, 1}, {9, 0, 0}, {9, 3, 1},
			{4, 0, 1}, {4, 1, 1}, {3, 0, 1},
		};
		for (i = 0; i < sizeof(rh) / sizeof(rh[0]); i++) {
			memset(pl, 0, 24);
			pl[0] = 17, pl[1] = 2, pl[2] = rh[i][0], pl[3] = rh[i][1];
			memcpy(pl + 24, l4, 72);
			CHECK_EQ(run_full(&h, DLT_EN10MB, f,
					  mk_frame(f, DLT_EN10MB, 6, ip, mk_ip6(ip, 43, pl, 96))),
				 DECODE_OK);
			CHECK_EQ((h.p.flags & PKT_RX_DROP) != 0, rh[i][2]);
		}
	}
	/* IPv4 options (ip_options_compile, ip_rcv_options) */
	{
		static const struct {
			uint8_t o[12];
			int drop;
		} v4[] = {
			{{1, 1, 1, 1}, 0},                               /* no-ops */
			{{0, 131, 7, 4}, 0},                             /* after the end */
			{{7, 7, 4, 0, 0, 0, 0, 0}, 0},                   /* record route */
			{{7, 7, 2, 0, 0, 0, 0, 0}, 1},                   /* ... pointer under 4 */
			{{7, 7, 6, 0, 0, 0, 0, 0}, 1},                   /* ... too close to its end */
			{{7, 7, 12, 0, 0, 0, 0, 0}, 0},                  /* ... full */
			{{7, 3, 4, 7, 3, 4, 0, 0}, 1},                   /* ... twice */
			{{131, 7, 8, 10, 0, 0, 1, 0}, 1},                /* loose source route, done */
			{{137, 7, 4, 10, 0, 0, 1, 0}, 1},                /* strict */
			{{68, 8, 5, 0, 0, 0, 0, 0}, 0},                  /* timestamp */
			{{68, 8, 4, 0, 0, 0, 0, 0}, 1},                  /* ... pointer under 5 */
			{{68, 8, 5, 1, 0, 0, 0, 0}, 1},                  /* ... no room for an address */
			{{68, 8, 9, 0xf0, 0, 0, 0, 0}, 1},               /* ... overflow full */
			{{68, 8, 9, 0xe0, 0, 0, 0, 0}, 0},
			{{148, 4, 0, 0}, 0},                             /* router alert */
			{{148, 2, 1, 1}, 1},                             /* ... short */
			{{134, 6, 0, 0, 0, 1, 0, 0}, 1},                 /* CIPSO */
			{{0x9e, 4, 0, 0}, 0},                            /* unknown: ignored */
			{{0x9e, 9, 0, 0}, 1},                            /* ... past the header */
			{{0x9e, 8, 0, 0}, 0},                            /* ... up to its end */
			{{0x9e, 1, 0, 0}, 1},                            /* ... length under 2 */
			{{1, 1, 1, 0x9e}, 1},                            /* ... no length byte */
		};
		for (i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
			size_t n4 = mk_ip4(ip, 17, 1, 0, 2, l4, 72);

			memset(ip + 20, 0, 8);
			memcpy(ip + 20, v4[i].o, 8);
			ip4_csum(ip);
			CHECK_EQ(run_full(&h, DLT_EN10MB, f, mk_frame(f, DLT_EN10MB, 4, ip, n4)),
				 DECODE_OK);
			if (((h.p.flags & PKT_RX_DROP) != 0) != v4[i].drop)
				fprintf(stderr, "IPv4 options case %zu\n", i);
			CHECK_EQ((h.p.flags & PKT_RX_DROP) != 0, v4[i].drop);
		}
	}
	h_fini(&h);
}

/*
 * Linux keeps an IPv6 queue 60 s (ip6frag_time), an IPv4 one 30 s
 * (ipfrag_time): an IPv6 datagram whose fragments came 30-60 s apart was
 * delivered by Linux and lost here (FINDINGS R21-F4). Each family has its
 * own age list; what is given up or evicted still goes in creation order.
 */
static void test_frag_timeouts(void)
{
	uint8_t l4[128];
	struct decode_config cfg;
	struct pkt_hop hop;
	struct h h;
	const struct decode_stats *st;

	dgram_udp(l4);
	h_init(&h, NULL);
	st = decode_stats(h.d);
	/* 59 s apart: whole for IPv6, lost for IPv4 */
	CHECK_EQ(frag6(&h, 1, l4, 0, 32, 1, 17), DECODE_HELD);
	h.ts += 59000000;
	CHECK_EQ(frag6(&h, 1, l4, 32, 40, 0, 17), DECODE_OK);
	CHECK(is_l4(&h, 1, l4));
	CHECK_EQ(frag4(&h, 2, l4, 0, 32, 1), DECODE_HELD);
	h.ts += 31000000;
	CHECK_EQ(frag4(&h, 2, l4, 32, 40, 0), DECODE_HELD); /* a new datagram */
	CHECK_EQ(st->frag_expired, 1);
	CHECK_EQ(decode_frag_lost(h.d, &hop), 1);
	CHECK_EQ(hop.ipv, 4);
	decode_frag_give_up(h.d);
	while (decode_frag_lost(h.d, &hop))
		;
	/* an older IPv6 datagram at the head of its list does not hold up
	 * the IPv4 one behind it */
	CHECK_EQ(frag6(&h, 3, l4, 0, 32, 1, 17), DECODE_HELD);
	h.ts += 1000000;
	CHECK_EQ(frag4(&h, 4, l4, 0, 32, 1), DECODE_HELD);
	h.ts += 31000000;
	CHECK_EQ(frag4(&h, 5, l4, 0, 8, 1), DECODE_HELD);
	CHECK_EQ(st->frag_expired, 3);                 /* datagram 4 */
	CHECK_EQ(decode_frag_pending(h.d), 2);
	h.ts += 29000000;                              /* 61 s after 3 */
	CHECK_EQ(frag4(&h, 6, l4, 0, 8, 1), DECODE_HELD);
	CHECK_EQ(st->frag_expired, 4);                 /* 3; 5 is 29 s old */
	CHECK_EQ(decode_frag_lost(h.d, &hop), 1);
	CHECK_EQ(hop.ipv, 4);                          /* 4 */
	CHECK_EQ(decode_frag_lost(h.d, &hop), 1);
	CHECK_EQ(hop.ipv, 6);                          /* 3 */
	CHECK_EQ(decode_frag_lost(h.d, &hop), 0);
	/* the end of a run judges what is left in creation order */
	CHECK_EQ(frag6(&h, 7, l4, 0, 8, 1, 17), DECODE_HELD);
	CHECK_EQ(frag4(&h, 8, l4, 0, 8, 1), DECODE_HELD);
	decode_frag_give_up(h.d);
	for (unsigned i = 0; i < 4; i++) {             /* 5, 6, 7, 8 */
		CHECK_EQ(decode_frag_lost(h.d, &hop), 1);
		CHECK_EQ(hop.ipv, i == 2 ? 6 : 4);
	}
	CHECK_EQ(decode_frag_lost(h.d, &hop), 0);
	h_fini(&h);

	/* a full table evicts the oldest of either family */
	memset(&cfg, 0, sizeof(cfg));
	cfg.frag_max_datagrams = 2;
	h_init(&h, &cfg);
	st = decode_stats(h.d);
	CHECK_EQ(frag4(&h, 1, l4, 0, 8, 1), DECODE_HELD);
	CHECK_EQ(frag6(&h, 2, l4, 0, 8, 1, 17), DECODE_HELD);
	CHECK_EQ(frag6(&h, 3, l4, 0, 8, 1, 17), DECODE_HELD);
	CHECK_EQ(st->frag_evicted, 1);
	CHECK_EQ(decode_frag_lost(h.d, &hop), 1);
	CHECK_EQ(hop.ipv, 4);
	CHECK_EQ(frag4(&h, 4, l4, 0, 8, 1), DECODE_HELD);
	CHECK_EQ(decode_frag_lost(h.d, &hop), 1);
	CHECK_EQ(hop.ipv, 6);
	h_fini(&h);
}

/*
 * An IPv6 first fragment whose extension headers end inside it but whose
 * upper-layer header does not fit is dropped by Linux (RFC 8200 4.5,
 * ipv6frag_thdr_truncated; pcaps/review21/frag, FINDINGS R21-F3): as a
 * decoy it garbled the datagram the sensor reassembled (the real query
 * Linux delivered was malformed here), alone it made a query Linux never
 * delivered.
 */
static void test_frag6_chain_cut(void)
{
	uint8_t l4[128], dst[64], dpl[200], tcp[64];
	struct h h;
	const struct decode_stats *st;
	struct pkt_hop hop;

	dgram_udp(l4);
	h_init(&h, NULL);
	st = decode_stats(h.d);

	/* destination options alone in the first fragment, UDP after it */
	mk_opts6(dpl, 17, 0);
	memcpy(dpl + 8, l4, 72);
	CHECK_EQ(frag6_at(&h, 1, dpl, 0, 8, 1, 60), DECODE_MALFORMED);
	CHECK_EQ(st->frag_chain_cut, 1);
	CHECK_EQ(frag6_at(&h, 1, dpl + 8, 8, 72, 0, 60), DECODE_HELD); /* never whole */
	CHECK_EQ(decode_frag_lost(h.d, &hop), 1); /* the refused head, judged */
	CHECK_EQ(hop.proto, 17);                  /* as the UDP it names */
	CHECK_EQ(hop.dport, 0);
	CHECK_EQ(decode_frag_lost(h.d, &hop), 0);
	/* the same as a decoy before the real head: the real datagram */
	CHECK_EQ(frag6_at(&h, 2, dpl, 0, 8, 1, 60), DECODE_MALFORMED);
	CHECK_EQ(frag6(&h, 2, l4, 0, 16, 1, 17), DECODE_HELD);
	CHECK_EQ(frag6(&h, 2, l4, 16, 56, 0, 17), DECODE_OK);
	CHECK(is_l4(&h, 1, l4));
	CHECK(next_is(&h, 1, NULL));
	CHECK_EQ(st->frag_conflict, 0);
	CHECK_EQ(st->frag_chain_cut, 2);
	/* options whose length runs past the fragment, then UDP: cut */
	mk_opts6(dst, 17, 2); /* 24 bytes */
	CHECK_EQ(frag6_at(&h, 3, dst, 0, 16, 1, 60), DECODE_MALFORMED);
	CHECK_EQ(st->frag_chain_cut, 3);
	/* a second extension header that starts past the fragment, or No
	 * Next Header: Linux cannot walk the chain and takes the fragment */
	mk_opts6(dst, 60, 0);
	CHECK_EQ(frag6_at(&h, 4, dst, 0, 8, 1, 60), DECODE_HELD);
	mk_opts6(dst, 59, 0);
	CHECK_EQ(frag6_at(&h, 5, dst, 0, 8, 1, 60), DECODE_HELD);
	/* TCP needs 20 bytes in the first fragment, UDP and ICMPv6 8,
	 * anything else 1 */
	memset(tcp, 0, sizeof(tcp));
	CHECK_EQ(frag6_at(&h, 6, tcp, 0, 16, 1, 6), DECODE_MALFORMED);
	CHECK_EQ(frag6_at(&h, 7, tcp, 0, 24, 1, 6), DECODE_HELD);
	CHECK_EQ(frag6_at(&h, 8, tcp, 0, 8, 1, 58), DECODE_HELD);
	CHECK_EQ(frag6_at(&h, 9, tcp, 0, 8, 1, 253), DECODE_HELD);
	mk_opts6(dst, 58, 0);
	CHECK_EQ(frag6_at(&h, 10, dst, 0, 8, 1, 60), DECODE_MALFORMED);
	mk_opts6(dst, 253, 0);
	CHECK_EQ(frag6_at(&h, 11, dst, 0, 8, 1, 60), DECODE_MALFORMED);
	CHECK_EQ(st->frag_chain_cut, 6);
	/* later fragments are not looked at */
	CHECK_EQ(frag6_at(&h, 12, tcp, 8, 8, 1, 6), DECODE_HELD);
	CHECK_EQ(st->frag_chain_cut, 6);
	h_fini(&h);
}

/* Touch every byte the decoder handed out, so ASan checks the bounds. */
static unsigned touch(const uint8_t *q, size_t n)
{
	unsigned sum = 0;
	size_t i;

	for (i = 0; i < n; i++)
		sum += q[i];
	return sum;
}

static void test_random(void)
{
	static const int dlts[] = {DLT_EN10MB, DLT_LINUX_SLL, DLT_LINUX_SLL2, DLT_RAW,
				   DLT_IPV4, DLT_IPV6, DLT_NULL, DLT_LOOP};
	uint8_t tmpl[8][512], l4[256], pl[256], f[1024];
	size_t tlen[8], ntmpl = 0, e, di;
	uint32_t seed = 0x2545f491u;
	volatile unsigned sink = 0;
	struct decode_config cfg;
	uint64_t results[5] = {0};
	unsigned hints_checked = 0;

	/* templates: valid IP packets to mutate */
	tlen[ntmpl++] = mk_ip4(tmpl[0], 17, 1, 0, 0, l4, mk_udp(l4, 1, 53, "abcdefgh", 8));
	tlen[ntmpl++] = mk_ip4(tmpl[1], 6, 2, 0, 3, l4, mk_tcp(l4, 1, 80, 1, 2, 0x18, 2, "GET", 3));
	tlen[ntmpl++] = mk_ip4(tmpl[2], 17, 3, 0x2000, 0, l4, mk_udp(l4, 1, 53, "abcdefghijklmnop", 16));
	tlen[ntmpl++] = mk_ip4(tmpl[3], 17, 3, 0x0003, 0, l4, 16);
	e = mk_opts6(pl, 60, 0);
	e += mk_opts6(pl + e, 17, 1);
	e += mk_udp(pl + e, 5, 6, "zz", 2);
	tlen[ntmpl++] = mk_ip6(tmpl[4], 0, pl, e);
	e = mk_frag6(pl, 17, 0, 1, 9);
	e += mk_udp(pl + e, 5, 6, "0123456789abcdef", 16);
	tlen[ntmpl++] = mk_ip6(tmpl[5], 44, pl, e);
	e = mk_frag6(pl, 17, 24, 0, 9);
	memset(pl + e, 0x61, 16);
	tlen[ntmpl++] = mk_ip6(tmpl[6], 44, pl, e + 16);
	tlen[ntmpl++] = mk_ip4(tmpl[7], 1, 4, 0, 0, l4, mk_icmp(l4, 8, "ping", 4));

	memset(&cfg, 0, sizeof(cfg));
	cfg.frag_max_datagrams = 8;
	cfg.frag_max_bytes = 65536;
	cfg.frag_timeout_us = 1000000;
	for (di = 0; di < sizeof(dlts) / sizeof(dlts[0]); di++) {
		int dlt = dlts[di], bad = 0, i;
		struct h h;

		h_init(&h, di & 1 ? &cfg : NULL);
		for (i = 0; i < 4000; i++) {
			uint32_t mode = rnd(&seed) % 4;
			size_t n, caplen, wirelen, k;
			enum decode_result r;

			if (mode == 0) {
				n = rnd(&seed) % 160;
				for (k = 0; k < n; k++)
					f[k] = (uint8_t)rnd(&seed);
			} else {
				size_t t = rnd(&seed) % ntmpl, muts = 1 + rnd(&seed) % 4;
				int ipv = tmpl[t][0] >> 4;

				if (dlt == DLT_IPV4 && ipv != 4)
					t = 0;
				if (dlt == DLT_IPV6 && ipv != 6)
					t = 4;
				n = mk_frame(f, dlt, tmpl[t][0] >> 4, tmpl[t], tlen[t]);
				for (k = 0; k < muts && mode != 3; k++)
					f[rnd(&seed) % (n < 80 ? n : 80)] = (uint8_t)rnd(&seed);
			}
			caplen = n;
			if (rnd(&seed) % 4 == 0)
				caplen = n ? rnd(&seed) % (n + 1) : 0;
			wirelen = n;
			if (rnd(&seed) % 8 == 0)
				wirelen = rnd(&seed) % 2000;
			h.ts += rnd(&seed) % 200000;
			/* The read-ahead hint, on an exact-size copy (ASan sees
			 * any overread), before the decoder judges the frame. */
			uint8_t *copy = malloc(caplen ? caplen : 1);
			struct tuple_hint th;
			CHECK(copy != NULL);
			if (!copy)
				return;
			memcpy(copy, f, caplen);
			int hinted = decode_peek_tuple(dlt, copy, (uint32_t)caplen, &th);
			free(copy);
			r = run(&h, dlt, f, caplen, wirelen);
			/* A hint for a frame the decoder takes as TCP or UDP names
			 * the same tuple (it may hint at frames the decoder then
			 * refuses: it is only a hint). */
			if (hinted && r == DECODE_OK && (h.p.proto == 6 || h.p.proto == 17) &&
			    !(h.p.flags & PKT_REASSEMBLED)) {
				hints_checked++;
				if (th.ipv != h.p.ipv || th.proto != h.p.proto ||
				    th.sport != h.p.sport || th.dport != h.p.dport ||
				    memcmp(th.src, h.p.src, h.p.ipv == 4 ? 4 : 16) ||
				    memcmp(th.dst, h.p.dst, h.p.ipv == 4 ? 4 : 16))
					bad++;
			}
			if ((unsigned)r > DECODE_HELD) {
				bad++;
				continue;
			}
			results[r]++;
			if (r != DECODE_OK)
				continue;
			if (h.p.ipv != 4 && h.p.ipv != 6)
				bad++;
			if (h.p.l4_len > 65535 || h.p.payload_len > h.p.l4_len)
				bad++;
			if (!(h.p.flags & PKT_REASSEMBLED) &&
			    (!in_buf(&h, h.p.l4, h.p.l4_len, caplen) ||
			     (h.p.payload && !in_buf(&h, h.p.payload, h.p.payload_len, caplen))))
				bad++;
			if (h.p.payload &&
			    ((uintptr_t)h.p.payload < (uintptr_t)h.p.l4 ||
			     (uintptr_t)h.p.payload + h.p.payload_len >
				     (uintptr_t)h.p.l4 + h.p.l4_len))
				bad++;
			if (h.p.l4_len)
				sink += touch(h.p.l4, h.p.l4_len);
		}
		CHECK_EQ(bad, 0);
		h_fini(&h);
	}
	(void)sink;
	/* The smoke run reached every outcome. */
	CHECK(results[DECODE_OK] > 0);
	CHECK(results[DECODE_NOT_IP] > 0);
	CHECK(results[DECODE_TRUNCATED] > 0);
	CHECK(results[DECODE_MALFORMED] > 0);
	CHECK(results[DECODE_HELD] > 0);
	CHECK(hints_checked > 1000);
}

/* Random smoke over the new link types and encapsulations: templates of
 * valid frames, mutated in their headers, cut and given lying wirelens. */
static void test_random_encap(void)
{
	enum { NT = 16 };
	uint8_t tmpl[NT][512], in4[256], in6[256], pl[512], f[1024];
	size_t tlen[NT], nt = 0, m4 = mk_inner(in4, 4), m6 = mk_inner(in6, 6), k, ti;
	int tdlt[NT];
	uint32_t seed = 0x9e3779b9u;
	volatile unsigned sink = 0;
	uint64_t results[5] = {0};
	int bad = 0, i;
	struct h h;

#define TMPL(dlt_, expr_)                         \
	do {                                      \
		tdlt[nt] = (dlt_);                \
		tlen[nt] = (expr_);               \
		nt++;                             \
	} while (0)
	TMPL(DLT_PPP, mk_frame(tmpl[nt], DLT_PPP, 4, in4, m4));
	TMPL(DLT_PPP_SERIAL, mk_frame(tmpl[nt], DLT_PPP_SERIAL, 6, in6, m6));
	TMPL(DLT_PPP_ETHER, mk_frame(tmpl[nt], DLT_PPP_ETHER, 4, in4, m4));
	TMPL(DLT_C_HDLC, mk_frame(tmpl[nt], DLT_C_HDLC, 6, in6, m6));
	TMPL(DLT_FRELAY, mk_frame(tmpl[nt], DLT_FRELAY, 4, in4, m4));
	TMPL(DLT_FDDI, mk_frame(tmpl[nt], DLT_FDDI, 4, in4, m4));
	TMPL(DLT_NFLOG, mk_frame(tmpl[nt], DLT_NFLOG, 6, in6, m6));
	k = mk_eth(tmpl[nt], 0x8864);
	TMPL(DLT_EN10MB, k + mk_frame(tmpl[nt] + k, DLT_PPP_ETHER, 4, in4, m4));
	k = mk_eth(tmpl[nt], 0x8847);
	k += put32(tmpl[nt] + k, 0x000101ff);
	memcpy(tmpl[nt] + k, in6, m6);
	TMPL(DLT_EN10MB, k + m6);
	TMPL(DLT_EN10MB, mk_outer4(tmpl[nt], 4, in4, m4));
	k = mk_gre(pl, 0xb000, 0x86dd);
	memcpy(pl + k, in6, m6);
	TMPL(DLT_EN10MB, mk_outer4(tmpl[nt], 47, pl, k + m6));
	k = mk_pptp(pl, 0x3081, (unsigned)m4 + 4);
	k += put16(pl + k, 0xff03);
	k += put16(pl + k, 0x0021);
	memcpy(pl + k, in4, m4);
	TMPL(DLT_EN10MB, mk_outer4(tmpl[nt], 47, pl, k + m4));
	k = mk_gre(pl, 0x1000, 0x88be);
	k += put32(pl + k, 0x10640001);
	k += put32(pl + k, 0);
	k += mk_eth(pl + k, 0x0800);
	memcpy(pl + k, in4, m4);
	TMPL(DLT_EN10MB, mk_outer4(tmpl[nt], 47, pl, k + m4));
	k = mk_vxlan(pl, 0x08);
	k += mk_eth(pl + k, 0x0800);
	memcpy(pl + k, in4, m4);
	TMPL(DLT_EN10MB, mk_outer_udp(tmpl[nt], 4789, pl, k + m4));
	k = mk_geneve(pl, 2, 0x6558);
	k += mk_eth(pl + k, 0x86dd);
	memcpy(pl + k, in6, m6);
	TMPL(DLT_EN10MB, mk_outer_udp(tmpl[nt], 6081, pl, k + m6));
	TMPL(DLT_EN10MB, mk_gre_nest(tmpl[nt], in4, m4, 4));
#undef TMPL

	h_init(&h, NULL);
	for (i = 0; i < 40000; i++) {
		uint32_t mode = rnd(&seed) % 4;
		size_t n, caplen, wirelen, j;
		enum decode_result r;
		int dlt;

		ti = rnd(&seed) % nt;
		dlt = tdlt[ti];
		if (mode == 0) { /* random bytes on the template's link type */
			n = rnd(&seed) % 200;
			for (j = 0; j < n; j++)
				f[j] = (uint8_t)rnd(&seed);
		} else {
			size_t muts = 1 + rnd(&seed) % 4, span;

			n = tlen[ti];
			memcpy(f, tmpl[ti], n);
			span = n < 120 ? n : 120;
			for (j = 0; j < muts && mode != 3; j++)
				f[rnd(&seed) % span] = (uint8_t)rnd(&seed);
		}
		caplen = n;
		if (rnd(&seed) % 4 == 0)
			caplen = n ? rnd(&seed) % (n + 1) : 0;
		wirelen = n;
		if (rnd(&seed) % 8 == 0)
			wirelen = rnd(&seed) % 2000;
		h.ts += rnd(&seed) % 200000;
		r = run(&h, dlt, f, caplen, wirelen);
		if ((unsigned)r > DECODE_HELD) {
			bad++;
			continue;
		}
		results[r]++;
		if (r != DECODE_OK)
			continue;
		if ((h.p.ipv != 4 && h.p.ipv != 6) || h.p.encap > 4)
			bad++;
		if (h.p.l4_len > 65535 || h.p.payload_len > h.p.l4_len)
			bad++;
		if (!(h.p.flags & PKT_REASSEMBLED) &&
		    (!in_buf(&h, h.p.l4, h.p.l4_len, caplen) ||
		     (h.p.payload && !in_buf(&h, h.p.payload, h.p.payload_len, caplen))))
			bad++;
		if (h.p.payload &&
		    ((uintptr_t)h.p.payload < (uintptr_t)h.p.l4 ||
		     (uintptr_t)h.p.payload + h.p.payload_len > (uintptr_t)h.p.l4 + h.p.l4_len))
			bad++;
		if (h.p.l4_len)
			sink += touch(h.p.l4, h.p.l4_len);
	}
	h_fini(&h);
	(void)sink;
	CHECK_EQ(bad, 0);
	CHECK(results[DECODE_OK] > 0);
	CHECK(results[DECODE_NOT_IP] > 0);
	CHECK(results[DECODE_TRUNCATED] > 0);
	CHECK(results[DECODE_MALFORMED] > 0);
}

static void test_misc(void)
{
	struct decoder *d;
	size_t l;

	decoder_free(NULL);
	d = decoder_new(NULL);
	CHECK(d != NULL);
	CHECK_EQ(decode_frag_pending(d), 0);
	CHECK_EQ(decode_stats(d)->ok[L_LINK], 0);
	decoder_free(d);
	CHECK_STR(decode_layer_name(L_LINK), "link");
	CHECK_STR(decode_layer_name(L_IPV4), "ipv4");
	CHECK_STR(decode_layer_name(L_ICMPV6), "icmpv6");
	CHECK_STR(decode_layer_name(L_FRAG), "frag");
	CHECK_STR(decode_layer_name(L_PPPOE), "pppoe");
	CHECK_STR(decode_layer_name(L_MPLS), "mpls");
	CHECK_STR(decode_layer_name(L_GRE), "gre");
	CHECK_STR(decode_layer_name(L_VXLAN), "vxlan");
	CHECK_STR(decode_layer_name(L_TUNNEL), "tunnel");
	CHECK_STR(decode_layer_name(L_COUNT), "unknown");
	for (l = 0; l < L_COUNT; l++)
		CHECK(decode_layer_name((enum decode_layer)l) != NULL);
}

/*
 * Source routes: an IPv4 loose or strict route with hops left, an IPv6 type 0
 * routing header or segment routing header with segments left, set
 * PKT_SRCROUTE and route_to (the route's last address); an exhausted route,
 * other routing types and options that lie do not; the flag survives
 * reassembly of fragments that carry it.
 */
static void test_srcroute(void)
{
	static const uint8_t out4[4] = {198, 51, 100, 9}, hop4[4] = {192, 0, 2, 7};
	static const uint8_t out6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 9};
	uint8_t l4[64], ip[256], f[512], pl[256];
	size_t n, e, u;
	struct h h;

	h_init(&h, NULL);
	u = mk_udp(l4, 40000, 53, "q", 1);
	for (int type = 131; type <= 137; type += 6) {
		/* two addresses, the pointer at the first: hops left */
		n = mk_ip4(ip, 17, 1, 0, 3, l4, u);
		ip[20] = (uint8_t)type, ip[21] = 11, ip[22] = 4;
		memcpy(ip + 23, hop4, 4);
		memcpy(ip + 27, out4, 4);
		ip[31] = 0; /* end of options */
		n = mk_frame(f, DLT_EN10MB, 4, ip, n);
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
		CHECK(h.p.flags & PKT_SRCROUTE);
		CHECK(memcmp(h.p.route_to, out4, 4) == 0 && h.p.route_to[4] == 0);
		CHECK_EQ(h.p.dport, 53);
	}
	/* every hop taken (pointer past the addresses), a pointer below 4, a
	 * length that runs past the options, a record route (7): no route */
	static const uint8_t ptr_len[][3] = {{131, 11, 12}, {131, 11, 3}, {137, 40, 4}, {7, 11, 4}};
	for (size_t k = 0; k < sizeof(ptr_len) / sizeof(ptr_len[0]); k++) {
		n = mk_ip4(ip, 17, 1, 0, 3, l4, u);
		ip[20] = ptr_len[k][0], ip[21] = ptr_len[k][1], ip[22] = ptr_len[k][2];
		memcpy(ip + 23, hop4, 4);
		memcpy(ip + 27, out4, 4);
		n = mk_frame(f, DLT_EN10MB, 4, ip, n);
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
		CHECK(!(h.p.flags & PKT_SRCROUTE));
	}
	/* a NOP, then the route: found after it */
	n = mk_ip4(ip, 17, 1, 0, 3, l4, u);
	ip[20] = 1, ip[21] = 131, ip[22] = 7, ip[23] = 4;
	memcpy(ip + 24, out4, 4);
	n = mk_frame(f, DLT_EN10MB, 4, ip, n);
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK(h.p.flags & PKT_SRCROUTE);
	CHECK(memcmp(h.p.route_to, out4, 4) == 0);

	/* IPv4 fragments, each with the route (its copy bit is set): a Linux
	 * host drops each before reassembly (no source route is taken), so
	 * each is handed on at once as a fragment that never made a whole
	 * datagram, with the route's last hop */
	uint8_t big[64];
	memset(big, 'x', sizeof(big));
	u = mk_udp(l4, 40000, 53, big, 32); /* 40 bytes: two fragments of 24 and 16 */
	for (int k = 0; k < 2; k++) {
		n = mk_ip4(ip, 17, 77, k ? 3 : 0x2000, 2, l4 + 24 * k, k ? u - 24 : 24);
		ip[20] = 131, ip[21] = 7, ip[22] = 4;
		memcpy(ip + 23, out4, 4);
		ip[27] = 0;
		ip4_csum(ip);
		n = mk_frame(f, DLT_EN10MB, 4, ip, n);
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
		CHECK_EQ(h.p.flags & (PKT_FRAGMENT | PKT_L4_BAD | PKT_RX_DROP | PKT_SRCROUTE),
			 PKT_FRAGMENT | PKT_L4_BAD | PKT_RX_DROP | PKT_SRCROUTE);
		CHECK(memcmp(h.p.route_to, out4, 4) == 0);
		CHECK_EQ(h.p.payload_len, 0);
	}
	CHECK_EQ(decode_frag_pending(h.d), 0);

	/* IPv6: type 0 with two addresses, segments left 2: the last */
	u = mk_udp(l4, 40000, 53, "q", 1);
	memset(pl, 0, sizeof(pl));
	pl[0] = 17, pl[1] = 4, pl[2] = 0, pl[3] = 2;
	memset(pl + 8, 0x11, 16);
	memcpy(pl + 24, out6, 16);
	memcpy(pl + 40, l4, u);
	n = mk_frame(f, DLT_EN10MB, 6, ip, mk_ip6(ip, 43, pl, 40 + u));
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK(h.p.flags & PKT_SRCROUTE);
	CHECK(memcmp(h.p.route_to, out6, 16) == 0);
	CHECK_EQ(h.p.proto, 17);
	/* a segment routing header (type 4): segment 0 */
	pl[2] = 4, pl[3] = 1, pl[4] = 1; /* last entry 1 */
	memcpy(pl + 8, out6, 16);
	memset(pl + 24, 0x22, 16);
	n = mk_frame(f, DLT_EN10MB, 6, ip, mk_ip6(ip, 43, pl, 40 + u));
	CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
	CHECK(h.p.flags & PKT_SRCROUTE);
	CHECK(memcmp(h.p.route_to, out6, 16) == 0);
	/* no segments left, type 2 (mobility), type 3: no route */
	static const uint8_t type_left[][2] = {{4, 0}, {0, 0}, {2, 1}, {3, 1}};
	for (size_t k = 0; k < sizeof(type_left) / sizeof(type_left[0]); k++) {
		pl[2] = type_left[k][0], pl[3] = type_left[k][1];
		n = mk_frame(f, DLT_EN10MB, 6, ip, mk_ip6(ip, 43, pl, 40 + u));
		CHECK_EQ(run_full(&h, DLT_EN10MB, f, n), DECODE_OK);
		CHECK(!(h.p.flags & PKT_SRCROUTE));
	}
	/* every cut of a type 0 header: no read past, no route from a cut */
	pl[2] = 0, pl[3] = 2;
	e = mk_ip6(ip, 43, pl, 40 + u);
	for (size_t cut = 40; cut < 40 + 40; cut++) {
		n = mk_frame(f, DLT_EN10MB, 6, ip, e);
		enum decode_result r = run(&h, DLT_EN10MB, f, 14 + cut, n);
		CHECK(r == DECODE_OK || r == DECODE_TRUNCATED);
		CHECK(!(h.p.flags & PKT_SRCROUTE));
	}
	h_fini(&h);
}

int main(void)
{
	test_misc();
	test_srcroute();
	test_links();
	test_not_ip();
	test_vlan();
	test_truncation();
	test_lies();
	test_ipv6_ext();
	test_frag4();
	test_frag6();
	test_frag_linux_view(0);
	test_frag_linux_view(1);
	test_frag_linux_rules();
	test_frag6_chain_cut();
	test_frag_timeouts();
	test_ip6_opts_drop();
	test_frag_linux_random(0);
	test_frag_linux_random(1);
	test_random();
	test_link_variants();
	test_pppoe_mpls();
	test_tunnels();
	test_encap_truncation();
	test_encap_depth();
	test_encap_frag();
	test_random_encap();
	return check_done();
}
