/*
 * decode.c - link, network and transport decoding (L2..L4) with IP fragment
 * reassembly and decapsulation of tunnels.
 *
 * One frame goes down the layers in order: the link header (Ethernet, Linux
 * SLL/SLL2, raw IP, BSD NULL/LOOP, PPP, Cisco HDLC, Frame Relay, FDDI,
 * NFLOG) yields an ethertype or an IP version; an ethertype goes through a
 * bounded loop over VLAN tags and then to IP, PPPoE (session) or an MPLS
 * label stack; the IP header yields a view bounded by its own declared
 * length; the transport header is read from that view and, for UDP, narrowed
 * again to the UDP length. Every byte is read through cursor.h.
 *
 * Tunnels: IP-in-IP (protocols 4 and 41), GRE (47; v0 with checksum, key and
 * sequence words, v1 PPTP with its payload length; carrying IP, MPLS,
 * Ethernet, PPP or ERSPAN I/II/III) and UDP to the VXLAN (4789) or GENEVE
 * (6081) port are decapsulated, and the packet handed on describes the
 * innermost IP datagram. Each tunnel entered counts one level of p->encap;
 * entering more than max_encap_depth is malformed (counted at L_TUNNEL), so
 * the recursion is bounded. When a tunnel's payload is not IP (a GRE
 * keepalive, ARP over VXLAN, a UDP datagram to 4789 that is not VXLAN) the
 * outer datagram is the innermost IP packet and is returned as it was.
 *
 * struct view is the unit every layer works on: the captured part of a
 * declared extent plus how many declared bytes caplen cut off. A read that
 * fails is a truncation when the declared length would have held it (caplen
 * cut the frame) and a malformation when it would not (a length field lied);
 * both are counted per layer and returned, never logged. The view of the
 * whole frame is special: a header cut at its end is a truncation, as the
 * frame has no length field that could lie.
 *
 * Fragments (IPv4 MF/offset, IPv6 fragment header) go to a small table keyed
 * by (ipv, src, dst, proto, id), proto being 0 for IPv6. Each datagram keeps
 * its payload bytes and a bitmap of the bytes it has; a byte is written only
 * the first time it arrives, so overlaps resolve to the earliest data. The
 * table is bounded in datagrams, in bytes and in packet time (entries are
 * kept in creation order, so expiry looks only at the oldest). A complete
 * datagram is copied to the decoder's reassembly buffer and decoded from
 * there, so a fragmented outer datagram is reassembled before its tunnel is
 * opened, and fragments of an inner datagram are keyed by the inner
 * addresses. The common, unfragmented path never allocates. Beside a
 * datagram that Linux's receiver would discard (an overlap that is no
 * duplicate, an end contradicted), a Linux view of the same key reassembles
 * what Linux delivers ("The Linux receiver's view", below).
 */
#include "decode.h"

#include <pcap/dlt.h>
#include <stdlib.h>
#include <string.h>

#include "csum.h"
#include "cursor.h"
#include "hash.h"

#define DEF_VLAN_DEPTH 4u
#define DEF_ENCAP_DEPTH 4u
#define MAX_ENCAP_DEPTH 16u  /* cap on the configured depth: one recursion per level */
#define DEF_FRAG_DATAGRAMS 1024u
#define DEF_FRAG_BYTES (16u << 20)
#define DEF_FRAG_TIMEOUT_US 30000000u  /* Linux's ipfrag_time */
#define DEF_FRAG6_TIMEOUT_US 60000000u /* Linux's ip6frag_time */

#define IP_MAX_LEN 65535u    /* largest IP datagram */
#define FRAG_KEY_LEN 38      /* ipv, proto, id[4], src[16], dst[16] */
#define FRAG_MAX_BUCKETS 65536u
#define LINUX_MAX_DIST 64u   /* Linux's ipfrag_max_dist, by default */
#define MPLS_MAX_LABELS 8    /* label stack entries read before giving up */
#define NFLOG_MAX_TLVS 32    /* NFLOG attributes walked before giving up */
#define Q922_MAX_ADDR 4      /* Frame Relay address bytes */

/* Raw-IP link type numbers: DLT_RAW is 12 on most systems and 14 on
 * OpenBSD; LINKTYPE_RAW (101) is what savefiles carry. */
#define LT_RAW_12 12
#define LT_RAW_14 14
#define LT_LINKTYPE_RAW 101

enum {
	ETHERTYPE_IPV4 = 0x0800,
	ETHERTYPE_IPV6 = 0x86dd,
	ETHERTYPE_PPPOE_SESSION = 0x8864,
	ETHERTYPE_MPLS = 0x8847,
	ETHERTYPE_MPLS_MCAST = 0x8848,
	ETHERTYPE_TEB = 0x6558,     /* transparent Ethernet bridging (GRE, GENEVE) */
	ETHERTYPE_PPP = 0x880b,     /* PPP in GRE (PPTP) */
	ETHERTYPE_ERSPAN = 0x88be,  /* ERSPAN type I (no header) and II */
	ETHERTYPE_ERSPAN3 = 0x22eb, /* ERSPAN type III */
	ETHER_MAX_LEN_FIELD = 1500, /* 802.3: a length, not a type */
};

enum {
	PPP_IPV4 = 0x0021,
	PPP_IPV6 = 0x0057,
	PPP_MPLS = 0x0281,
	PPP_MPLS_MCAST = 0x0283,
};

enum {
	GRE_C = 0x8000, /* checksum (and offset) present */
	GRE_R = 0x4000, /* RFC 1701 source routing present */
	GRE_K = 0x2000, /* key present (v1: payload length and call id) */
	GRE_S = 0x1000, /* sequence number present */
	GRE_A = 0x0080, /* v1: acknowledgement number present */
	GRE_VER = 0x0007,
};

enum {
	UDP_PORT_VXLAN = 4789,
	UDP_PORT_GENEVE = 6081,
	VXLAN_FLAG_I = 0x08,  /* the VNI is valid */
	NFULA_PAYLOAD = 9,    /* NFLOG attribute holding the packet */
	NLA_TYPE_MASK = 0x3fff,
	NFLOG_AF_INET = 2,
	NFLOG_AF_INET6 = 10,  /* NFLOG is Linux only */
};

enum link_kind {
	LK_NONE = 0, LK_ETH, LK_SLL, LK_SLL2, LK_RAW, LK_IPV4, LK_IPV6, LK_NULL, LK_LOOP,
	LK_PPP, LK_PPP_SERIAL, LK_PPP_ETHER, LK_CHDLC, LK_FRELAY, LK_FDDI, LK_NFLOG,
};

enum tunnel {
	TUN_IPIP4, TUN_IPIP6, TUN_GRE, TUN_VXLAN, TUN_GENEVE,
};

/*
 * The captured part of a declared extent (an IP payload, a UDP datagram, a
 * PPPoE session payload, the rest of the frame) and how many of its declared
 * bytes caplen cut off. frame is set only for the view of the whole frame.
 */
struct view {
	struct cur c;
	size_t missing;
	int frame;
};

/*
 * A sender of IPv4 fragments as a Linux receiver counts them (its inet_peer
 * rid: ip_frag_too_far), one per source and destination (the receiver),
 * kept while a datagram of the table refers to it: the count matters only
 * against a queue's, and a queue's first fragment is never too far.
 */
struct frag_peer {
	struct frag_peer *hnext;
	uint8_t addrs[32];          /* the key's source and destination */
	uint32_t rid;               /* fragments from this sender so far */
	unsigned refs;              /* datagrams of the table that refer to it */
};

struct frag {
	struct frag *hnext;         /* hash chain */
	struct frag *older, *newer; /* creation order in its family's list, for expiry and eviction */
	uint64_t seq;               /* place in creation order across both lists */
	uint8_t key[FRAG_KEY_LEN];
	uint64_t first_ts;
	uint8_t *data;              /* payload bytes, cap long */
	uint8_t *have;              /* one bit per byte of data */
	size_t cap;
	size_t got;                 /* distinct bytes received */
	size_t max_end;             /* highest end offset received */
	size_t total;               /* payload length, once the last fragment came */
	size_t mem;                 /* bytes charged to frag_max_bytes */
	int total_known;
	int have_first;             /* the offset-0 fragment arrived */
	uint8_t ttl;                /* of the offset-0 fragment */
	uint8_t hlen;               /* IPv4: the offset-0 fragment's header length */
	uint8_t nh;                 /* IPv6: next header of the offset-0 fragment */
	uint8_t proto;              /* IPv4: the protocol; IPv6: the first fragment's next header */
	/* Linux's receiver (see "The Linux receiver's view" below) */
	uint8_t linux_view;         /* this is a Linux view, not a first-wins datagram */
	uint8_t linux_gone;         /* first-wins: Linux discarded the queue these bytes made */
	uint8_t has_digest;         /* view: the first-wins datagram of its key was delivered */
	uint8_t digest_nh;
	struct frag *twin;          /* the other queue of the same key (first-wins <-> view) */
	uint8_t *runs;              /* one bit per 8 bytes: a run of Linux's queue begins there */
	uint64_t digest;            /* view: keyed hash of that first-wins datagram's bytes */
	size_t digest_len;
	struct frag_peer *peer;     /* IPv4: the sender, as Linux counts its fragments */
	uint32_t rid;               /* the peer's count at this queue's last fragment */
};

/* One fragment on its way into the table. */
struct frag_in {
	uint8_t key[FRAG_KEY_LEN];
	size_t off;
	size_t limit;  /* offset + length may not exceed this */
	int more;
	uint8_t hlen;  /* IPv4: this fragment's header length (0 for IPv6) */
	uint8_t nh;    /* IPv6: next header after the fragment header */
	uint8_t proto; /* the datagram's protocol as far as this fragment tells */
};

/* What the IPv6 extension-header walk found about fragmentation. */
struct ip6_frag {
	int present;
	int more;
	size_t off;
	uint32_t id;
};

struct decoder {
	struct decode_config cfg;
	struct decode_stats stats;
	struct frag **buckets;
	size_t nbuckets; /* power of two */
	struct frag_peer **peers; /* nbuckets of them */
	uint32_t rid_now;         /* the peer's count for the fragment at hand */
	struct frag *oldest[2], *newest[2]; /* IPv4's and IPv6's age lists */
	uint64_t seq;
	unsigned nfrag;
	unsigned nlinux; /* of nfrag, Linux views */
	size_t frag_bytes;
	/* A Linux view completed by the fragment that also completed its
	 * first-wins datagram, handed out by decode_next with next_p, the
	 * packet as it stood when that fragment reached the table. */
	struct frag *next;
	struct pkt next_p;
	uint8_t *rbuf;   /* the reassembled datagram handed out, IP_MAX_LEN bytes */
	/* Datagrams given up on (expired, evicted, refused) since the caller
	 * last asked (decode_frag_lost): a ring of lost_cap, which one call
	 * can never overflow (frag_lose). */
	struct pkt_hop *lost;
	unsigned lost_cap, lost_head, lost_n;
};

static const char *const layer_names[L_COUNT] = {
	[L_LINK] = "link", [L_VLAN] = "vlan", [L_IPV4] = "ipv4", [L_IPV6] = "ipv6",
	[L_FRAG] = "frag", [L_TCP] = "tcp", [L_UDP] = "udp", [L_ICMP] = "icmp",
	[L_ICMPV6] = "icmpv6", [L_PPPOE] = "pppoe", [L_PPP] = "ppp", [L_MPLS] = "mpls",
	[L_GRE] = "gre", [L_ERSPAN] = "erspan", [L_VXLAN] = "vxlan", [L_GENEVE] = "geneve",
	[L_TUNNEL] = "tunnel",
};

static const uint16_t vlan_tpids[] = {0x8100, 0x88a8, 0x9100, 0x9200};

/* Count r against layer l and return it. */
static enum decode_result tally(struct decoder *d, enum decode_layer l, enum decode_result r)
{
	switch (r) {
	case DECODE_OK:
		d->stats.ok[l]++;
		break;
	case DECODE_TRUNCATED:
		d->stats.truncated[l]++;
		break;
	case DECODE_MALFORMED:
		d->stats.malformed[l]++;
		break;
	default:
		break;
	}
	return r;
}

/* Why n bytes cannot be read from v: caplen cut them, or the declared
 * length never had room for them. The frame itself declares nothing. */
static enum decode_result view_short(const struct view *v, size_t n)
{
	if (v->frame)
		return DECODE_TRUNCATED;
	return cur_left(&v->c) + v->missing >= n ? DECODE_TRUNCATED : DECODE_MALFORMED;
}

/*
 * Narrow to the next n declared bytes of v: *in gets them (what was
 * captured, and how many caplen cut off) and v moves past them. Returns -1,
 * leaving v as it was, when v never declared n more bytes.
 */
static int view_take(struct view *v, size_t n, struct view *in)
{
	int cut;

	if (v->c.err || n > cur_left(&v->c) + v->missing)
		return -1;
	in->c = cur_take_upto(&v->c, n, &cut);
	in->missing = n - cur_left(&in->c);
	in->frame = 0;
	v->missing -= in->missing;
	return 0;
}

/* libpcap DLT -> how to read the link layer; the first match wins, so
 * DLT_LOOP comes before the raw values (12 is DLT_LOOP on OpenBSD). */
static const struct {
	int dlt;
	enum link_kind kind;
} link_kinds[] = {
	{DLT_EN10MB, LK_ETH},         {DLT_LINUX_SLL, LK_SLL},   {DLT_LINUX_SLL2, LK_SLL2},
	{DLT_NULL, LK_NULL},          {DLT_LOOP, LK_LOOP},       {DLT_IPV4, LK_IPV4},
	{DLT_IPV6, LK_IPV6},          {DLT_RAW, LK_RAW},         {LT_RAW_12, LK_RAW},
	{LT_LINKTYPE_RAW, LK_RAW},
#if !defined(DLT_PPP_BSDOS) || DLT_PPP_BSDOS != LT_RAW_14
	{LT_RAW_14, LK_RAW},
#endif
	{DLT_PPP, LK_PPP},            {DLT_PPP_SERIAL, LK_PPP_SERIAL},
	{DLT_PPP_ETHER, LK_PPP_ETHER}, {DLT_C_HDLC, LK_CHDLC},    {DLT_FRELAY, LK_FRELAY},
	{DLT_FDDI, LK_FDDI},          {DLT_NFLOG, LK_NFLOG},
};

static enum link_kind link_kind(int dlt)
{
	for (size_t i = 0; i < sizeof(link_kinds) / sizeof(link_kinds[0]); i++)
		if (link_kinds[i].dlt == dlt)
			return link_kinds[i].kind;
	return LK_NONE;
}

int decode_linktype_supported(int dlt)
{
	return link_kind(dlt) != LK_NONE;
}

const char *decode_layer_name(enum decode_layer l)
{
	if ((unsigned)l >= L_COUNT)
		return "unknown";
	return layer_names[l];
}

const struct decode_stats *decode_stats(const struct decoder *d)
{
	return &d->stats;
}

unsigned decode_frag_pending(const struct decoder *d)
{
	return d->nfrag - d->nlinux; /* a Linux view is never judged as lost */
}

/* The decoders call each other down the layers (and, through tunnels, back
 * up to IP); each tunnel level is counted in p->encap and bounded. */
static enum decode_result decode_ipv4(struct decoder *d, struct view *o, struct pkt *p);
static enum decode_result decode_ipv6(struct decoder *d, struct view *o, struct pkt *p);
static enum decode_result decode_etype(struct decoder *d, struct view *v, struct pkt *p,
				       uint16_t type);

static enum decode_result decode_ip(struct decoder *d, struct view *v, struct pkt *p, int ipv)
{
	return ipv == 4 ? decode_ipv4(d, v, p) : decode_ipv6(d, v, p);
}

/* ---- link layer ---------------------------------------------------------- */

static int is_vlan_tpid(uint16_t type)
{
	size_t i;

	for (i = 0; i < sizeof(vlan_tpids) / sizeof(vlan_tpids[0]); i++)
		if (vlan_tpids[i] == type)
			return 1;
	return 0;
}

/*
 * PPP from its protocol field: an optional address/control pair ff 03, then
 * a 2-byte protocol or a 1-byte compressed one (odd first byte). IPv4, IPv6
 * and MPLS go on; other protocols (LCP, CCP, ...) are not IP. Counted at l
 * (L_LINK for a PPP link type, L_PPP inside PPPoE or GRE).
 */
static enum decode_result decode_ppp(struct decoder *d, struct view *v, struct pkt *p,
				     enum decode_layer l)
{
	struct cur h = v->c;
	size_t hlen = 0;
	uint16_t proto;

	if (!cur_has(&h, 1))
		return tally(d, l, view_short(v, 1));
	if (cur_u8(&h) == 0xff) {
		if (!cur_has(&h, 1))
			return tally(d, l, view_short(v, 2));
		if (cur_u8(&h) != 0x03)
			return tally(d, l, DECODE_MALFORMED);
		hlen = 2;
	} else {
		h = v->c;
	}
	if (!cur_has(&h, 1))
		return tally(d, l, view_short(v, hlen + 1));
	proto = cur_u8(&h);
	hlen++;
	if (!(proto & 1)) {
		if (!cur_has(&h, 1))
			return tally(d, l, view_short(v, hlen + 1));
		proto = (uint16_t)(proto << 8 | cur_u8(&h));
		hlen++;
	}
	if (!(proto & 1))
		return tally(d, l, DECODE_MALFORMED); /* a protocol number is odd */
	cur_skip(&v->c, hlen);
	tally(d, l, DECODE_OK);
	switch (proto) {
	case PPP_IPV4:
		return decode_ipv4(d, v, p);
	case PPP_IPV6:
		return decode_ipv6(d, v, p);
	case PPP_MPLS:
	case PPP_MPLS_MCAST:
		return decode_etype(d, v, p, ETHERTYPE_MPLS);
	default:
		return DECODE_NOT_IP;
	}
}

/*
 * PPPoE session stage (RFC 2516): version/type 0x11, code 0, session id and
 * a length that bounds the PPP frame; padding after it is not payload.
 */
static enum decode_result decode_pppoe(struct decoder *d, struct view *v, struct pkt *p)
{
	struct cur h = v->c;
	struct view in;
	uint8_t vt, code;
	uint16_t len;

	if (!cur_has(&h, 6))
		return tally(d, L_PPPOE, view_short(v, 6));
	vt = cur_u8(&h);
	code = cur_u8(&h);
	cur_skip(&h, 2); /* session id */
	len = cur_be16(&h);
	if (vt != 0x11 || code != 0)
		return tally(d, L_PPPOE, DECODE_MALFORMED);
	cur_skip(&v->c, 6);
	if (view_take(v, len, &in) != 0)
		return tally(d, L_PPPOE, DECODE_MALFORMED);
	tally(d, L_PPPOE, DECODE_OK);
	return decode_ppp(d, &in, p, L_PPP);
}

/*
 * An MPLS label stack, at most MPLS_MAX_LABELS entries down to the one with
 * the bottom-of-stack bit; what follows carries no type, so the version
 * nibble of its first byte (read here, counted at L_MPLS) picks IPv4 or IPv6.
 */
static enum decode_result decode_mpls(struct decoder *d, struct view *v, struct pkt *p)
{
	struct cur h;
	unsigned i;
	uint8_t vers;

	for (i = 0;; i++) {
		if (i == MPLS_MAX_LABELS)
			return tally(d, L_MPLS, DECODE_MALFORMED);
		if (!cur_has(&v->c, 4))
			return tally(d, L_MPLS, view_short(v, 4));
		if (cur_be32(&v->c) & 0x100)
			break;
	}
	h = v->c;
	if (!cur_has(&h, 1))
		return tally(d, L_MPLS, view_short(v, 1));
	vers = cur_u8(&h) >> 4;
	tally(d, L_MPLS, DECODE_OK);
	if (vers == 4 || vers == 6)
		return decode_ip(d, v, p, vers);
	return DECODE_NOT_IP; /* a pseudowire or something else we cannot name */
}

/*
 * From an ethertype: VLAN tags in a bounded loop (the outermost one of the
 * outer frame is recorded), then IPv4, IPv6, PPPoE session or MPLS. Other
 * types (ARP, LLDP, 802.3 length fields <= 1500, ...) are not IP.
 */
static enum decode_result decode_etype(struct decoder *d, struct view *v, struct pkt *p,
				       uint16_t type)
{
	unsigned depth;

	for (depth = 0; is_vlan_tpid(type); depth++) {
		uint16_t tci;

		if (depth >= d->cfg.max_vlan_depth)
			return tally(d, L_VLAN, DECODE_MALFORMED);
		if (!cur_has(&v->c, 4))
			return tally(d, L_VLAN, view_short(v, 4));
		tci = cur_be16(&v->c);
		type = cur_be16(&v->c);
		if (depth == 0 && p->encap == 0)
			p->vlan = tci & 0x0fff;
	}
	if (depth)
		tally(d, L_VLAN, DECODE_OK);
	switch (type) {
	case ETHERTYPE_IPV4:
		return decode_ipv4(d, v, p);
	case ETHERTYPE_IPV6:
		return decode_ipv6(d, v, p);
	case ETHERTYPE_PPPOE_SESSION:
		return decode_pppoe(d, v, p);
	case ETHERTYPE_MPLS:
	case ETHERTYPE_MPLS_MCAST:
		return decode_mpls(d, v, p);
	default:
		return DECODE_NOT_IP;
	}
}

/* An Ethernet II header (the link type, or a frame inside a tunnel). */
static enum decode_result decode_ether(struct decoder *d, struct view *v, struct pkt *p)
{
	uint16_t type;

	if (!cur_has(&v->c, 14))
		return tally(d, L_LINK, view_short(v, 14));
	cur_skip(&v->c, 12);
	type = cur_be16(&v->c);
	tally(d, L_LINK, DECODE_OK);
	return decode_etype(d, v, p, type);
}

/* An ethertype-numbered payload of GRE or GENEVE. */
static enum decode_result decode_proto(struct decoder *d, struct view *v, struct pkt *p,
				       uint16_t type)
{
	switch (type) {
	case ETHERTYPE_TEB:
		return decode_ether(d, v, p);
	case ETHERTYPE_PPP:
		return decode_ppp(d, v, p, L_PPP);
	default:
		return decode_etype(d, v, p, type);
	}
}

/* AF_INET and the AF_INET6 values of Linux, the BSDs and Darwin. */
static int af_ipv(uint32_t af)
{
	switch (af) {
	case 2:
		return 4;
	case 10:
	case 24:
	case 28:
	case 30:
		return 6;
	default:
		return 0;
	}
}

/* NFLOG attribute fields are in the capturing host's byte order, which
 * libpcap converts to ours when it reads a savefile. */
static uint16_t cur_host16(struct cur *c)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return cur_be16(c);
#else
	return cur_le16(c);
#endif
}

/*
 * NFLOG: family, version 0, resource id, then attributes (length including
 * the 4-byte attribute header, type; each padded to 4 bytes), at most
 * NFLOG_MAX_TLVS of them. The packet is the NFULA_PAYLOAD attribute; the
 * family says which IP version it is. A message without one is not IP.
 */
static enum decode_result decode_nflog(struct decoder *d, struct view *v, struct pkt *p)
{
	struct view in;
	unsigned i;
	uint16_t tlen;
	uint8_t family;
	int ipv;

	if (!cur_has(&v->c, 4))
		return tally(d, L_LINK, DECODE_TRUNCATED);
	family = cur_u8(&v->c);
	if (cur_u8(&v->c) != 0)
		return tally(d, L_LINK, DECODE_MALFORMED);
	cur_skip(&v->c, 2); /* resource id */
	ipv = family == NFLOG_AF_INET ? 4 : family == NFLOG_AF_INET6 ? 6 : 0;
	for (i = 0;; i++) {
		uint16_t type;
		size_t pad;

		if (cur_left(&v->c) == 0 && v->missing == 0) {
			tally(d, L_LINK, DECODE_OK);
			return DECODE_NOT_IP; /* no payload attribute */
		}
		if (i == NFLOG_MAX_TLVS)
			return tally(d, L_LINK, DECODE_MALFORMED);
		if (!cur_has(&v->c, 4))
			return tally(d, L_LINK, view_short(v, 4));
		tlen = cur_host16(&v->c);
		type = cur_host16(&v->c) & NLA_TYPE_MASK;
		if (tlen < 4)
			return tally(d, L_LINK, DECODE_MALFORMED);
		if (type == NFULA_PAYLOAD)
			break;
		pad = ((size_t)tlen + 3) / 4 * 4 - 4;
		if (!cur_has(&v->c, tlen - 4u))
			return tally(d, L_LINK, view_short(v, tlen - 4u));
		if (cur_left(&v->c) < pad) /* the last attribute may end unpadded */
			pad = tlen - 4u;
		cur_skip(&v->c, pad);
	}
	if (view_take(v, tlen - 4u, &in) != 0)
		return tally(d, L_LINK, DECODE_MALFORMED);
	tally(d, L_LINK, DECODE_OK);
	return ipv ? decode_ip(d, &in, p, ipv) : DECODE_NOT_IP;
}

/* Cisco HDLC: address (0x0f unicast, 0x8f broadcast), control, ethertype. */
static enum decode_result decode_chdlc(struct decoder *d, struct view *v, struct pkt *p)
{
	uint16_t type;

	if (!cur_has(&v->c, 4))
		return tally(d, L_LINK, DECODE_TRUNCATED);
	cur_skip(&v->c, 2);
	type = cur_be16(&v->c);
	tally(d, L_LINK, DECODE_OK);
	return decode_etype(d, v, p, type);
}

/*
 * Frame Relay: a Q.922 address of 2 to Q922_MAX_ADDR bytes (the last one has
 * the EA bit set), then either RFC 2427 (control 0x03, an optional 0x00 pad,
 * an NLPID: 0xcc IPv4, 0x8e IPv6, 0x80 SNAP with OUI and ethertype) or
 * Cisco's encapsulation, a bare ethertype (never starting with 0x03).
 */
static enum decode_result decode_frelay(struct decoder *d, struct view *v, struct pkt *p)
{
	struct cur *c = &v->c;
	struct cur h;
	unsigned i;
	uint32_t oui;
	uint16_t type;
	uint8_t b;

	for (i = 1;; i++) {
		if (!cur_has(c, 1))
			return tally(d, L_LINK, DECODE_TRUNCATED);
		if (cur_u8(c) & 1)
			break;
		if (i == Q922_MAX_ADDR)
			return tally(d, L_LINK, DECODE_MALFORMED);
	}
	if (i < 2)
		return tally(d, L_LINK, DECODE_MALFORMED);
	h = *c;
	if (!cur_has(&h, 2))
		return tally(d, L_LINK, DECODE_TRUNCATED);
	if (cur_u8(&h) != 0x03) {
		type = cur_be16(c);
		tally(d, L_LINK, DECODE_OK);
		return decode_etype(d, v, p, type);
	}
	b = cur_u8(&h);
	if (b == 0x00) {
		if (!cur_has(&h, 1))
			return tally(d, L_LINK, DECODE_TRUNCATED);
		b = cur_u8(&h);
	}
	switch (b) {
	case 0xcc:
		*c = h;
		tally(d, L_LINK, DECODE_OK);
		return decode_ipv4(d, v, p);
	case 0x8e:
		*c = h;
		tally(d, L_LINK, DECODE_OK);
		return decode_ipv6(d, v, p);
	case 0x80:
		if (!cur_has(&h, 5))
			return tally(d, L_LINK, DECODE_TRUNCATED);
		oui = cur_be24(&h);
		type = cur_be16(&h);
		*c = h;
		tally(d, L_LINK, DECODE_OK);
		return oui == 0 ? decode_etype(d, v, p, type) : DECODE_NOT_IP;
	default:
		tally(d, L_LINK, DECODE_OK);
		return DECODE_NOT_IP; /* another NLPID (CLNP, Q.933, ...) */
	}
}

/*
 * FDDI: frame control, destination, source (13 bytes). LLC frames (frame
 * control format bits 01) carry 802.2 LLC; with SNAP (AA AA 03) and an OUI
 * of 0 (RFC 1042) or 00-00-f8 (802.1H) the ethertype follows. MAC and SMT
 * frames and other LLC saps are not IP.
 */
static enum decode_result decode_fddi(struct decoder *d, struct view *v, struct pkt *p)
{
	struct cur *c = &v->c;
	struct cur h;
	uint32_t oui;
	uint16_t type;
	uint8_t fc, dsap, ssap, ctl;

	if (!cur_has(c, 13))
		return tally(d, L_LINK, DECODE_TRUNCATED);
	fc = cur_u8(c);
	cur_skip(c, 12);
	if ((fc & 0x30) != 0x10) {
		tally(d, L_LINK, DECODE_OK);
		return DECODE_NOT_IP;
	}
	h = *c;
	if (!cur_has(&h, 3))
		return tally(d, L_LINK, DECODE_TRUNCATED);
	dsap = cur_u8(&h);
	ssap = cur_u8(&h);
	ctl = cur_u8(&h);
	if (dsap != 0xaa || ssap != 0xaa || ctl != 0x03) {
		tally(d, L_LINK, DECODE_OK);
		return DECODE_NOT_IP;
	}
	if (!cur_has(&h, 5))
		return tally(d, L_LINK, DECODE_TRUNCATED);
	oui = cur_be24(&h);
	type = cur_be16(&h);
	*c = h;
	tally(d, L_LINK, DECODE_OK);
	if (oui != 0 && oui != 0xf8)
		return DECODE_NOT_IP;
	return decode_etype(d, v, p, type);
}

/* Read the link header of kind lk and everything below it. */
static enum decode_result decode_link(struct decoder *d, enum link_kind lk, struct view *v,
				      struct pkt *p)
{
	struct cur *c = &v->c;
	struct cur h = *c;
	uint16_t type;
	uint32_t le, be;
	uint8_t b;
	int ipv;

	switch (lk) {
	case LK_ETH:
		return decode_ether(d, v, p);
	case LK_SLL:
		if (!cur_has(c, 16))
			return tally(d, L_LINK, DECODE_TRUNCATED);
		cur_skip(c, 14);
		type = cur_be16(c);
		tally(d, L_LINK, DECODE_OK);
		return decode_etype(d, v, p, type);
	case LK_SLL2:
		if (!cur_has(c, 20))
			return tally(d, L_LINK, DECODE_TRUNCATED);
		type = cur_be16(c);
		cur_skip(c, 18);
		tally(d, L_LINK, DECODE_OK);
		return decode_etype(d, v, p, type);
	case LK_NULL:
	case LK_LOOP:
		if (!cur_has(c, 4))
			return tally(d, L_LINK, DECODE_TRUNCATED);
		be = cur_be32(c);
		le = cur_le32(&h);
		ipv = af_ipv(be);
		if (!ipv && lk == LK_NULL) /* host byte order of the capturer */
			ipv = af_ipv(le);
		tally(d, L_LINK, DECODE_OK);
		return ipv ? decode_ip(d, v, p, ipv) : DECODE_NOT_IP;
	case LK_RAW:
		if (!cur_has(&h, 1))
			return tally(d, L_LINK, DECODE_TRUNCATED);
		ipv = cur_u8(&h) >> 4;
		if (ipv != 4 && ipv != 6)
			return tally(d, L_LINK, DECODE_MALFORMED);
		tally(d, L_LINK, DECODE_OK);
		return decode_ip(d, v, p, ipv);
	case LK_IPV4:
		tally(d, L_LINK, DECODE_OK);
		return decode_ipv4(d, v, p);
	case LK_IPV6:
		tally(d, L_LINK, DECODE_OK);
		return decode_ipv6(d, v, p);
	case LK_PPP:
		return decode_ppp(d, v, p, L_LINK);
	case LK_PPP_SERIAL: /* PPP in HDLC-like framing, or Cisco HDLC */
		if (!cur_has(&h, 1))
			return tally(d, L_LINK, DECODE_TRUNCATED);
		b = cur_u8(&h);
		if (b == 0x0f || b == 0x8f)
			return decode_chdlc(d, v, p);
		return decode_ppp(d, v, p, L_LINK);
	case LK_PPP_ETHER:
		return decode_pppoe(d, v, p);
	case LK_CHDLC:
		return decode_chdlc(d, v, p);
	case LK_FRELAY:
		return decode_frelay(d, v, p);
	case LK_FDDI:
		return decode_fddi(d, v, p);
	case LK_NFLOG:
		return decode_nflog(d, v, p);
	case LK_NONE:
	default:
		return DECODE_NOT_IP;
	}
}

/* ---- tunnels ------------------------------------------------------------- */

/*
 * ERSPAN inside GRE, then an Ethernet frame. Type I (0x88be without a GRE
 * sequence number) has no header; type II (0x88be with one) an 8-byte
 * header of version 1; type III (0x22eb) a 12-byte header of version 2,
 * 8 more bytes when its O flag is set, and frame type 0 (Ethernet) only.
 */
static enum decode_result decode_erspan(struct decoder *d, struct view *v, struct pkt *p,
					int type)
{
	struct cur h = v->c;
	size_t hlen = type == 2 ? 8 : 12;
	unsigned vers;
	uint16_t last;

	if (type == 1) {
		tally(d, L_ERSPAN, DECODE_OK);
		return decode_ether(d, v, p);
	}
	if (!cur_has(&h, hlen))
		return tally(d, L_ERSPAN, view_short(v, hlen));
	vers = cur_u8(&h) >> 4;
	if (type == 2) {
		if (vers != 1)
			return tally(d, L_ERSPAN, DECODE_MALFORMED);
	} else {
		if (vers != 2)
			return tally(d, L_ERSPAN, DECODE_MALFORMED);
		cur_skip(&h, 9);
		last = cur_be16(&h);
		if (last & 1)
			hlen += 8; /* platform-specific subheader */
		if ((last >> 10) & 0x1f) {
			tally(d, L_ERSPAN, DECODE_OK);
			return DECODE_NOT_IP; /* not an Ethernet frame */
		}
	}
	if (!cur_has(&v->c, hlen))
		return tally(d, L_ERSPAN, view_short(v, hlen));
	cur_skip(&v->c, hlen);
	tally(d, L_ERSPAN, DECODE_OK);
	return decode_ether(d, v, p);
}

/*
 * GRE (RFC 2784/2890): flags and version, protocol type, then a checksum
 * and offset word (C), key (K) and sequence number (S). Version 1 (PPTP,
 * RFC 2637) always has a key made of the payload length, which bounds the
 * PPP frame, and the call id, then S and an acknowledgement (A); an
 * acknowledgement alone carries no payload. RFC 1701 source routing and
 * other versions are not read (the outer datagram stands).
 */
static enum decode_result decode_gre(struct decoder *d, struct view *v, struct pkt *p)
{
	struct cur h = v->c;
	struct view in;
	size_t hlen = 4;
	uint16_t fl, type, plen;

	if (!cur_has(&h, 4))
		return tally(d, L_GRE, view_short(v, 4));
	fl = cur_be16(&h);
	type = cur_be16(&h);
	switch (fl & GRE_VER) {
	case 0:
		if (fl & GRE_R)
			return DECODE_NOT_IP;
		hlen += (fl & GRE_C ? 4 : 0) + (fl & GRE_K ? 4 : 0) + (fl & GRE_S ? 4 : 0);
		if (!cur_has(&v->c, hlen))
			return tally(d, L_GRE, view_short(v, hlen));
		cur_skip(&v->c, hlen);
		tally(d, L_GRE, DECODE_OK);
		if (type == ETHERTYPE_ERSPAN)
			return decode_erspan(d, v, p, fl & GRE_S ? 2 : 1);
		if (type == ETHERTYPE_ERSPAN3)
			return decode_erspan(d, v, p, 3);
		return decode_proto(d, v, p, type);
	case 1:
		if ((fl & (GRE_C | GRE_R)) || !(fl & GRE_K) || type != ETHERTYPE_PPP)
			return tally(d, L_GRE, DECODE_MALFORMED);
		hlen = 8 + (fl & GRE_S ? 4 : 0) + (fl & GRE_A ? 4 : 0);
		if (!cur_has(&v->c, hlen))
			return tally(d, L_GRE, view_short(v, hlen));
		cur_skip(&v->c, 4);
		plen = cur_be16(&v->c);
		cur_skip(&v->c, hlen - 6);
		if (view_take(v, plen, &in) != 0)
			return tally(d, L_GRE, DECODE_MALFORMED);
		tally(d, L_GRE, DECODE_OK);
		if (!(fl & GRE_S) || plen == 0)
			return DECODE_NOT_IP;
		return decode_ppp(d, &in, p, L_PPP);
	default:
		return DECODE_NOT_IP;
	}
}

/*
 * VXLAN (RFC 7348): flags with I set, 24 reserved bits, VNI, 8 reserved
 * bits, then an Ethernet frame. A datagram to the port that is too short
 * or lacks the I flag is not VXLAN (the outer datagram stands).
 */
static enum decode_result decode_vxlan(struct decoder *d, struct view *v, struct pkt *p)
{
	struct cur h = v->c;

	if (!cur_has(&h, 8)) {
		if (view_short(v, 8) == DECODE_TRUNCATED)
			return tally(d, L_VXLAN, DECODE_TRUNCATED);
		return DECODE_NOT_IP;
	}
	if (!(cur_u8(&h) & VXLAN_FLAG_I))
		return DECODE_NOT_IP;
	cur_skip(&v->c, 8);
	tally(d, L_VXLAN, DECODE_OK);
	return decode_ether(d, v, p);
}

/*
 * GENEVE (RFC 8926): version 0 and option length (4-byte words), flags,
 * protocol type, VNI, reserved, the options, then the payload named by
 * the protocol type (0x6558 Ethernet, or an ethertype). Other versions and
 * datagrams too short for the header are not GENEVE.
 */
static enum decode_result decode_geneve(struct decoder *d, struct view *v, struct pkt *p)
{
	struct cur h = v->c;
	size_t hlen;
	uint16_t type;
	uint8_t b;

	if (!cur_has(&h, 8)) {
		if (view_short(v, 8) == DECODE_TRUNCATED)
			return tally(d, L_GENEVE, DECODE_TRUNCATED);
		return DECODE_NOT_IP;
	}
	b = cur_u8(&h);
	cur_skip(&h, 1);
	type = cur_be16(&h);
	if (b >> 6 != 0)
		return DECODE_NOT_IP;
	hlen = 8 + (size_t)(b & 0x3f) * 4;
	if (!cur_has(&v->c, hlen)) {
		if (view_short(v, hlen) == DECODE_TRUNCATED)
			return tally(d, L_GENEVE, DECODE_TRUNCATED);
		return DECODE_NOT_IP;
	}
	cur_skip(&v->c, hlen);
	tally(d, L_GENEVE, DECODE_OK);
	return decode_proto(d, v, p, type);
}

/*
 * Enter tunnel t whose bytes are v: one more level of p->encap, refused
 * (malformed, at L_TUNNEL) beyond max_encap_depth. The transport fields
 * and addresses are cleared for the inner packet; entering the first
 * tunnel keeps the outermost datagram's in p->outer. When the tunnel turns
 * out to carry no IP, or an IP datagram cut or malformed (counted at its
 * layer), or a fragment the table holds until its datagram is whole, or is
 * one level too deep, *p is put back: the carrier is then the innermost IP
 * packet, and the result is DECODE_OK. A broken or partial inner packet
 * must not hide the datagram that carried it: a UDP datagram to port 4789
 * of the outside is egress whatever its payload holds. (The inner datagram,
 * once whole, comes out of the packet that completes it.)
 */
static enum decode_result decap(struct decoder *d, struct view *v, struct pkt *p,
				enum tunnel t)
{
	struct pkt outer;
	enum decode_result r;

	if (p->encap >= d->cfg.max_encap_depth) {
		tally(d, L_TUNNEL, DECODE_MALFORMED);
		return DECODE_OK; /* the carrier is the packet */
	}
	outer = *p;
	if (p->encap == 0) {
		p->outer.ipv = p->ipv;
		p->outer.proto = p->proto;
		p->outer.sport = p->sport;
		p->outer.dport = p->dport;
		memcpy(p->outer.src, p->src, sizeof(p->src));
		memcpy(p->outer.dst, p->dst, sizeof(p->dst));
	}
	p->encap++;
	p->flags &= ~(unsigned)PKT_SHORT;
	memset(p->src, 0, sizeof(p->src));
	memset(p->dst, 0, sizeof(p->dst));
	p->sport = p->dport = 0;
	p->seq = p->ack = 0;
	p->tcp_flags = 0;
	p->tcp_win = 0;
	p->l4 = p->payload = NULL;
	p->l4_len = p->payload_len = 0;
	switch (t) {
	case TUN_IPIP4:
		tally(d, L_TUNNEL, DECODE_OK);
		r = decode_ipv4(d, v, p);
		break;
	case TUN_IPIP6:
		tally(d, L_TUNNEL, DECODE_OK);
		r = decode_ipv6(d, v, p);
		break;
	case TUN_GRE:
		r = decode_gre(d, v, p);
		break;
	case TUN_VXLAN:
		r = decode_vxlan(d, v, p);
		break;
	case TUN_GENEVE:
	default:
		r = decode_geneve(d, v, p);
		break;
	}
	if (r != DECODE_OK) {
		/* No IP datagram inside, a broken one (already counted at its
		 * layer), or an inner fragment held for reassembly: the carrier
		 * is what went over the wire. */
		*p = outer;
		r = DECODE_OK;
	}
	return r;
}

/* ---- transport ----------------------------------------------------------- */

/* What is left of v is the transport part, with no payload after it (a
 * header cut short, or one that cannot be read). */
static void rest_no_payload(struct pkt *p, const struct view *v)
{
	p->l4 = v->c.p;
	p->l4_len = cur_left(&v->c);
	p->payload = v->c.p + p->l4_len;
	p->payload_len = 0;
}

/*
 * A TCP, UDP or ICMP header that cannot be read (result r: cut, or lengths
 * that lie) is counted at layer l, and the packet is still handed on,
 * flagged PKT_L4_BAD: it went out all the same, and a listener outside that
 * reads raw packets gets its bytes, so the egress policy must see it. The
 * ports are kept when their 4 bytes are there; TCP's flags and numbers and
 * the payload are not.
 */
static enum decode_result l4_bad(struct decoder *d, struct view *v, struct pkt *p,
				 enum decode_layer l, enum decode_result r)
{
	struct cur h = v->c;

	tally(d, l, r);
	p->flags |= PKT_L4_BAD;
	p->sport = p->dport = 0;
	if (l != L_ICMP && l != L_ICMPV6 && cur_has(&h, 4)) {
		p->sport = cur_be16(&h);
		p->dport = cur_be16(&h);
	}
	p->seq = p->ack = 0;
	p->tcp_flags = 0;
	p->tcp_win = 0;
	rest_no_payload(p, v);
	return DECODE_OK;
}

static enum decode_result decode_tcp(struct decoder *d, struct view *v, struct pkt *p)
{
	struct cur h = v->c;
	size_t hlen;

	if (!cur_has(&h, 20))
		return l4_bad(d, v, p, L_TCP, view_short(v, 20));
	p->sport = cur_be16(&h);
	p->dport = cur_be16(&h);
	p->seq = cur_be32(&h);
	p->ack = cur_be32(&h);
	hlen = (size_t)(cur_u8(&h) >> 4) * 4;
	p->tcp_flags = cur_u8(&h);
	p->tcp_win = cur_be16(&h);
	if (hlen < 20)
		return l4_bad(d, v, p, L_TCP, DECODE_MALFORMED);
	if (!cur_has(&v->c, hlen)) {
		enum decode_result r = view_short(v, hlen);
		if (r == DECODE_MALFORMED)
			return l4_bad(d, v, p, L_TCP, r);
		/* Only options were cut by the capture (a small snaplen, or
		 * tcpdump's old 68): the fixed header is whole, so this is a
		 * TCP segment like any other, its payload not captured. */
		tally(d, L_TCP, r);
		p->flags |= PKT_SHORT;
		rest_no_payload(p, v);
		return DECODE_OK;
	}
	p->l4 = v->c.p;
	p->l4_len = cur_left(&v->c);
	cur_skip(&v->c, hlen); /* options */
	p->payload = v->c.p;
	p->payload_len = cur_left(&v->c);
	/* payload the capture cut (snaplen) is counted at this layer: the
	 * stream will miss it, and no analyzer may see the cut itself */
	tally(d, L_TCP, v->missing ? DECODE_TRUNCATED : DECODE_OK);
	return DECODE_OK;
}

/* Is the checksum of UDP datagram p (l4, whole) set and wrong? 0 means
 * none was computed (allowed over IPv4, and for tunnels over IPv6, RFC
 * 6935), so it is never wrong. A tunnel's outer datagram is checked by the
 * endpoint's UDP socket before it decapsulates (udp_queue_rcv_one_skb), so
 * a wrong one (a decoy's) never reaches the inner flow. */
static int udp_csum_wrong(const struct pkt *p)
{
	size_t len = p->l4_len;
	struct cur c = cur_init(p->l4, len);
	const uint8_t *dg = cur_ptr(&c, len);

	if (!dg || len < 8 || len > 0xffff || (dg[6] == 0 && dg[7] == 0))
		return 0;
	return csum_fold(csum_add(csum_pseudo(p->ipv, p->src, p->dst, 17, len), dg, len)) != 0xffff;
}

/* UDP, narrowed to the UDP length; VXLAN and GENEVE ports are opened. */
static enum decode_result decode_udp(struct decoder *d, struct view *v, struct pkt *p)
{
	struct cur h = v->c;
	struct view u;
	uint16_t ulen;

	if (!cur_has(&h, 8))
		return l4_bad(d, v, p, L_UDP, view_short(v, 8));
	p->sport = cur_be16(&h);
	p->dport = cur_be16(&h);
	ulen = cur_be16(&h);
	/* IPv6: a length of 0 is the whole payload (Linux's __udp6_lib_rcv, for
	 * jumbograms, takes it on any datagram: a DNS query sent so is read) */
	if (ulen == 0 && p->ipv == 6 && cur_left(&v->c) + v->missing <= 0xffff)
		ulen = (uint16_t)(cur_left(&v->c) + v->missing);
	if (ulen < 8 || view_take(v, ulen, &u) != 0)
		return l4_bad(d, v, p, L_UDP, DECODE_MALFORMED);
	if (u.missing)
		p->flags |= PKT_SHORT;
	p->l4 = u.c.p;
	p->l4_len = cur_left(&u.c);
	cur_skip(&u.c, 8);
	p->payload = u.c.p;
	p->payload_len = cur_left(&u.c);
	/* payload the capture cut is counted here, unless it is a tunnel's:
	 * the inner layers count it */
	tally(d, L_UDP,
	      u.missing && p->dport != UDP_PORT_VXLAN && p->dport != UDP_PORT_GENEVE
		      ? DECODE_TRUNCATED
		      : DECODE_OK);
	if (p->dport != UDP_PORT_VXLAN && p->dport != UDP_PORT_GENEVE)
		return DECODE_OK;
	if (!u.missing && udp_csum_wrong(p))
		p->flags |= PKT_IP_CSUM_BAD; /* the tunnel endpoint drops it */
	return decap(d, &u, p, p->dport == UDP_PORT_VXLAN ? TUN_VXLAN : TUN_GENEVE);
}

/* ICMP and ICMPv6: l4 is the whole message, payload what follows the
 * 8-byte header (type, code, checksum and 4 bytes of rest-of-header).
 * A message shorter than that, cut by caplen or short on the wire, is
 * counted truncated or malformed at this layer but still handed on when it
 * has its type: an echo request of 4 bytes to the outside is egress all the
 * same (the ICMP analyzer reads what there is, through its cursor, and
 * flags the observation). Without even the type it is PKT_L4_BAD
 * (l4_bad). */
static enum decode_result decode_icmp(struct decoder *d, struct view *v, struct pkt *p,
				      enum decode_layer l)
{
	if (!cur_has(&v->c, 8)) {
		enum decode_result r = view_short(v, 8);
		if (!cur_has(&v->c, 1))
			return l4_bad(d, v, p, l, r);
		tally(d, l, r);
		rest_no_payload(p, v);
		return DECODE_OK;
	}
	p->l4 = v->c.p;
	p->l4_len = cur_left(&v->c);
	cur_skip(&v->c, 8);
	p->payload = v->c.p;
	p->payload_len = cur_left(&v->c);
	return tally(d, l, DECODE_OK);
}

static enum decode_result decode_l4(struct decoder *d, struct view *v, struct pkt *p)
{
	switch (p->proto) {
	case 6:
		return decode_tcp(d, v, p);
	case 17:
		return decode_udp(d, v, p);
	case 1:
		if (p->ipv == 4)
			return decode_icmp(d, v, p, L_ICMP);
		break;
	case 58:
		if (p->ipv == 6)
			return decode_icmp(d, v, p, L_ICMPV6);
		break;
	default:
		break;
	}
	p->l4 = v->c.p;
	p->l4_len = cur_left(&v->c);
	switch (p->proto) {
	case 4:
		return decap(d, v, p, TUN_IPIP4);
	case 41:
		return decap(d, v, p, TUN_IPIP6);
	case 47:
		return decap(d, v, p, TUN_GRE);
	default:
		return DECODE_OK;
	}
}

/* ---- fragment table ------------------------------------------------------ */

/*
 * The Linux receiver's view. The first-wins datagram is what the issue that
 * specified the decoder asks for, and stays. Linux reassembles otherwise
 * (net/ipv4/inet_fragment.c, inet_frag_queue_insert, and ip_frag_queue /
 * ip6_frag_queue): it keeps its fragments in runs (a fragment that begins
 * where the highest one held ends extends that one's run; any other starts
 * a run); a fragment inside one run is a duplicate, dropped; any other
 * overlap, a last fragment that ends before bytes held or elsewhere than
 * the last one said, a fragment past that end, or one of no bytes (IPv4:
 * fewer than 8 with more to come, cut to 0) discards the whole queue and
 * the fragment, and the fragments after it make a new queue. A sender can
 * use the difference (a decoy overlapped, then the real head: FINDINGS
 * R20-3). So each first-wins datagram also tracks Linux's runs (one bit per
 * 8 bytes, set only while the two agree, which they do until Linux would
 * discard); when Linux would, the datagram is marked linux_gone and a Linux
 * view of the same key, an entry of the same table (counted in its bounds),
 * takes every later fragment as Linux does, starting over as Linux would.
 * A view that completes is delivered too, unless its bytes are those of the
 * first-wins datagram already delivered for its key (the digest). Once the
 * first-wins datagram is done, later fragments of its key go to the view
 * alone: they are Linux's next datagram, not a stray to expire. A view is
 * never judged as lost (the first-wins datagram of its key is, or was
 * delivered); it is counted (fragments.linux_lost).
 */
enum { LX_INSERT, LX_DUP, LX_OVERLAP };

/* Keyed (hash.h): a fragment's addresses and id are the sender's to choose. */
static size_t frag_hash(const struct decoder *d, const uint8_t *key)
{
	return (size_t)hash_keyed(key, FRAG_KEY_LEN) & (d->nbuckets - 1);
}

static struct frag *frag_find(const struct decoder *d, const uint8_t *key)
{
	struct frag *f;

	for (f = d->buckets[frag_hash(d, key)]; f; f = f->hnext)
		if (memcmp(f->key, key, FRAG_KEY_LEN) == 0)
			return f;
	return NULL;
}

/* addrs: a key's source and destination, 32 bytes */
static size_t peer_hash(const struct decoder *d, const uint8_t *addrs)
{
	return (size_t)hash_keyed(addrs, 32) & (d->nbuckets - 1);
}

static struct frag_peer *peer_find(const struct decoder *d, const uint8_t *key)
{
	struct frag_peer *pe;

	for (pe = d->peers[peer_hash(d, key + 6)]; pe; pe = pe->hnext)
		if (memcmp(pe->addrs, key + 6, 32) == 0)
			return pe;
	return NULL;
}

/* The peer of IPv4 key, made with the count at hand when there is none;
 * NULL when memory is short (the queue is then never too far). */
static struct frag_peer *peer_ref(struct decoder *d, const uint8_t *key)
{
	struct frag_peer *pe = peer_find(d, key);
	size_t b;

	if (!pe) {
		pe = calloc(1, sizeof(*pe));
		if (!pe)
			return NULL;
		memcpy(pe->addrs, key + 6, 32);
		pe->rid = d->rid_now;
		b = peer_hash(d, key + 6);
		pe->hnext = d->peers[b];
		d->peers[b] = pe;
	}
	pe->refs++;
	return pe;
}

static void peer_unref(struct decoder *d, struct frag_peer *pe)
{
	struct frag_peer **pp;

	if (!pe || --pe->refs > 0)
		return;
	for (pp = &d->peers[peer_hash(d, pe->addrs)]; *pp && *pp != pe; pp = &(*pp)->hnext)
		;
	if (*pp)
		*pp = pe->hnext;
	free(pe);
}

/*
 * Remember a datagram the table gives up on, for the egress policy: its
 * fragments went over the wire whether or not they ever made a whole
 * datagram. key/proto name it; f (NULL for a fragment refused before it
 * was stored) gives the ports when its first fragment held them.
 */
static void frag_lose(struct decoder *d, const uint8_t *key, uint8_t proto, const struct frag *f)
{
	struct pkt_hop *h;

	if (d->lost_n >= d->lost_cap)
		return; /* not reached: a call loses at most the table and two more */
	h = &d->lost[(d->lost_head + d->lost_n++) % d->lost_cap];
	memset(h, 0, sizeof(*h));
	h->ipv = key[0];
	h->proto = proto;
	memcpy(h->src, key + 6, 16);
	memcpy(h->dst, key + 22, 16);
	if (f && f->have_first && (proto == 6 || proto == 17) && f->cap >= 4 &&
	    (f->have[0] & 0x0f) == 0x0f) {
		h->sport = (uint16_t)(f->data[0] << 8 | f->data[1]);
		h->dport = (uint16_t)(f->data[2] << 8 | f->data[3]);
	}
}

/* f's age list: IPv4's (0) or IPv6's (1), whose timeouts differ. */
static int frag_fam(const struct frag *f)
{
	return f->key[0] == 6;
}

/* Unlink f from its age list (not the hash). */
static void frag_unage(struct decoder *d, struct frag *f)
{
	int k = frag_fam(f);

	if (f->older)
		f->older->newer = f->newer;
	else
		d->oldest[k] = f->newer;
	if (f->newer)
		f->newer->older = f->older;
	else
		d->newest[k] = f->older;
	f->older = f->newer = NULL;
}

static void frag_age(struct decoder *d, struct frag *f)
{
	int k = frag_fam(f);

	f->seq = d->seq++;
	f->older = d->newest[k];
	if (d->newest[k])
		d->newest[k]->newer = f;
	else
		d->oldest[k] = f;
	d->newest[k] = f;
}

/* The older of two entries (either may be NULL) by creation order. */
static struct frag *frag_older(struct frag *a, struct frag *b)
{
	if (!a || !b)
		return a ? a : b;
	return a->seq <= b->seq ? a : b;
}

/* Unlink f from the hash and the age list and free it. */
static void frag_drop(struct decoder *d, struct frag *f)
{
	struct frag **pp = &d->buckets[frag_hash(d, f->key)];

	while (*pp && *pp != f)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = f->hnext;
	frag_unage(d, f);
	if (f->twin)
		f->twin->twin = NULL;
	if (f->linux_view)
		d->nlinux--;
	if (d->next == f)
		d->next = NULL;
	d->frag_bytes -= f->mem;
	d->nfrag--;
	peer_unref(d, f->peer);
	free(f->data);
	free(f->have);
	free(f->runs);
	free(f);
}

/* Give f up (expired, evicted): a first-wins datagram is remembered as
 * lost and counted in *n; a Linux view is only counted. */
static void frag_give_up(struct decoder *d, struct frag *f, uint64_t *n)
{
	if (f->linux_view) {
		d->stats.frag_linux_lost++;
	} else {
		frag_lose(d, f->key, f->proto, f);
		(*n)++;
	}
	frag_drop(d, f);
}

/*
 * Expire, oldest first, what began more than the timeout away from now, in
 * either direction: a datagram begun by a lone fragment stamped far ahead
 * (a damaged or hostile time) would otherwise stand at the head of the list
 * until packet time caught up, and nothing behind it would expire.
 */
static int frag_stale(const struct decoder *d, const struct frag *f, uint64_t now)
{
	uint64_t age = now > f->first_ts ? now - f->first_ts : f->first_ts - now;
	return age > (frag_fam(f) ? d->cfg.frag6_timeout_us : d->cfg.frag_timeout_us);
}

/* Each list's head while it is stale, the older of the two first, so
 * what is given up is judged in creation order. */
static void frag_expire(struct decoder *d, uint64_t now)
{
	for (;;) {
		struct frag *a = d->oldest[0], *b = d->oldest[1];

		if (a && !frag_stale(d, a, now))
			a = NULL;
		if (b && !frag_stale(d, b, now))
			b = NULL;
		if (!a && !b)
			return;
		frag_give_up(d, frag_older(a, b), &d->stats.frag_expired);
	}
}

/* The oldest entry other than keep and its twin (the pair a fragment is
 * being stored into), or NULL. */
static struct frag *frag_victim(const struct decoder *d, const struct frag *keep)
{
	struct frag *v[2];

	for (int k = 0; k < 2; k++) {
		v[k] = d->oldest[k];
		while (v[k] && keep && (v[k] == keep || v[k] == keep->twin))
			v[k] = v[k]->newer;
	}
	return frag_older(v[0], v[1]);
}

/* Evict the oldest datagrams other than keep (and its twin) until extra
 * more bytes fit. Returns 0 when they fit. */
static int frag_make_room(struct decoder *d, size_t extra, const struct frag *keep)
{
	while (d->frag_bytes + extra > d->cfg.frag_max_bytes) {
		struct frag *victim = frag_victim(d, keep);

		if (!victim)
			return -1;
		frag_give_up(d, victim, &d->stats.frag_evicted);
	}
	return 0;
}

/* A new, empty datagram for key, evicting the oldest (not keep or its
 * twin) when the table is full. NULL when memory is short. */
static struct frag *frag_new(struct decoder *d, const uint8_t *key, uint8_t proto, uint64_t ts,
			     const struct frag *keep)
{
	struct frag *f = NULL;
	size_t b;

	if (d->nfrag >= d->cfg.frag_max_datagrams) {
		struct frag *victim = frag_victim(d, keep);

		if (!victim)
			goto out;
		frag_give_up(d, victim, &d->stats.frag_evicted);
	}
	if (frag_make_room(d, sizeof(*f), keep) != 0)
		goto out;
	f = calloc(1, sizeof(*f));
	if (!f)
		goto out;
	memcpy(f->key, key, FRAG_KEY_LEN);
	f->proto = proto;
	f->first_ts = ts;
	if (key[0] == 4)
		f->peer = peer_ref(d, key);
	f->rid = d->rid_now;
	f->mem = sizeof(*f);
	b = frag_hash(d, key);
	f->hnext = d->buckets[b];
	d->buckets[b] = f;
	frag_age(d, f);
	d->nfrag++;
	d->frag_bytes += f->mem;
out:
	return f;
}

/* Grow f to hold end payload bytes. Returns 0, or -1 when the byte bound
 * or memory does not allow it (f is left as it was). */
static int frag_grow(struct decoder *d, struct frag *f, size_t end)
{
	size_t cap = f->cap ? f->cap : 1024;
	size_t oldmap = (f->cap + 7) / 8, newmap;
	size_t oldruns = (f->cap / 8 + 7) / 8, newruns;
	uint8_t *data, *have, *runs;

	if (end <= f->cap)
		return 0;
	while (cap < end)
		cap *= 2;
	if (cap > IP_MAX_LEN)
		cap = IP_MAX_LEN;
	newmap = (cap + 7) / 8;
	newruns = (cap / 8 + 7) / 8;
	if (frag_make_room(d, (cap - f->cap) + (newmap - oldmap) + (newruns - oldruns), f) != 0)
		return -1;
	data = realloc(f->data, cap);
	if (!data)
		return -1;
	f->data = data;
	have = realloc(f->have, newmap);
	if (!have)
		return -1;
	memset(have + oldmap, 0, newmap - oldmap);
	f->have = have;
	runs = realloc(f->runs, newruns);
	if (!runs)
		return -1;
	memset(runs + oldruns, 0, newruns - oldruns);
	f->runs = runs;
	d->frag_bytes += (cap - f->cap) + (newmap - oldmap) + (newruns - oldruns);
	f->mem += (cap - f->cap) + (newmap - oldmap) + (newruns - oldruns);
	f->cap = cap;
	return 0;
}

/* Copy the bytes of c (placed at off) that f does not have yet: the
 * earliest arrival wins. Counts overlaps, and those that disagree with the
 * bytes held (where receivers differ). f must already hold off + len.
 * Returns how many bytes were new. */
static size_t frag_fill(struct decoder *d, struct frag *f, size_t off, struct cur *c)
{
	size_t i, len = cur_left(c), fresh = 0;
	int conflict = 0;

	for (i = 0; i < len; i++) {
		size_t at = off + i;
		uint8_t bit = (uint8_t)(1u << (at & 7));
		uint8_t b = cur_u8(c);

		if (f->have[at >> 3] & bit) {
			conflict |= f->data[at] != b;
			continue;
		}
		f->have[at >> 3] |= bit;
		f->data[at] = b;
		fresh++;
	}
	f->got += fresh;
	if (fresh < len) {
		d->stats.frag_overlap++;
		if (fresh == 0)
			d->stats.frag_duplicate++;
		if (conflict)
			d->stats.frag_conflict++;
	}
	return fresh;
}

static int frag_has(const struct frag *f, size_t at)
{
	return at < f->cap && (f->have[at >> 3] >> (at & 7) & 1);
}

/* Offsets are multiples of 8, so a run begins on one. */
static int run_begins(const struct frag *f, size_t at)
{
	return f->runs[at >> 6] >> ((at >> 3) & 7) & 1;
}

static void run_mark(struct frag *f, size_t at)
{
	f->runs[at >> 6] |= (uint8_t)(1u << ((at >> 3) & 7));
}

/* Whether [off, end), every byte of it held, lies inside one run: no run
 * begins after off before end. Linux drops such a fragment as a duplicate
 * (IPFRAG_DUP), whatever its bytes; any other overlap is IPFRAG_OVERLAP. */
static int run_holds(const struct frag *f, size_t off, size_t end)
{
	size_t at;

	for (at = (off | 7) + 1; at < end; at += 8)
		if (run_begins(f, at))
			return 0;
	return 1;
}

/* Where Linux's inet_frag_queue_insert puts [off, end) into q, which
 * holds Linux's queue as it stands (before the fragment): LX_INSERT with
 * *newrun when the fragment starts a run, LX_DUP or LX_OVERLAP. Reads
 * the bytes of the range only when the fragment ends inside what is held. */
static int linux_place(const struct frag *q, size_t off, size_t end, int *newrun)
{
	size_t at;
	int some = 0, all = 1;

	*newrun = 1;
	if (q->got == 0)
		return LX_INSERT;
	if (end > q->max_end) { /* past the highest fragment: the common case */
		if (off < q->max_end)
			return LX_OVERLAP;
		*newrun = off != q->max_end;
		return LX_INSERT;
	}
	for (at = off; at < end; at++) {
		if (frag_has(q, at))
			some = 1;
		else
			all = 0;
	}
	if (!some)
		return LX_INSERT;
	return all && run_holds(q, off, end) ? LX_DUP : LX_OVERLAP;
}

/* Start f afresh as an empty Linux queue (Linux discarded what it held):
 * its buffers and its key's digest are kept. */
static void linux_reset(struct frag *f)
{
	if (f->cap) {
		memset(f->have, 0, (f->cap + 7) / 8);
		memset(f->runs, 0, (f->cap / 8 + 7) / 8);
	}
	f->got = f->max_end = f->total = 0;
	f->total_known = f->have_first = 0;
}

/* A Linux view beside the first-wins datagram fw (which has none). */
static struct frag *linux_view_new(struct decoder *d, struct frag *fw, uint64_t ts)
{
	struct frag *lv = frag_new(d, fw->key, fw->proto, ts, fw);

	if (!lv)
		return NULL;
	lv->linux_view = 1;
	lv->twin = fw;
	fw->twin = lv;
	d->nlinux++;
	return lv;
}

/*
 * fw is complete, but Linux's queue of the same bytes is not (the last
 * fragment was a duplicate, and Linux tests for completion only after
 * placing one): that queue stays, with its timer, until a fragment
 * discards it, and can never complete (every byte is held and its end is
 * known), so later fragments of the key are duplicates to it until one
 * discards it. A view keeps its bytes held and its runs (not the bytes
 * themselves: nothing is placed in it before it starts over), beside fw in
 * the age list. Without room, no view: those fragments then start a new
 * datagram at once, as before.
 */
static void linux_stuck(struct decoder *d, struct frag *fw)
{
	struct frag *lv = linux_view_new(d, fw, fw->first_ts);

	if (!lv)
		return;
	if (frag_grow(d, lv, fw->total) != 0) {
		frag_drop(d, lv);
		return;
	}
	memcpy(lv->have, fw->have, (lv->cap + 7) / 8);
	memcpy(lv->runs, fw->runs, (lv->cap / 8 + 7) / 8);
	lv->got = fw->got;
	lv->max_end = fw->max_end;
	lv->total = fw->total;
	lv->total_known = 1;
	lv->have_first = 1;
	/* its time is fw's: next to fw in the age list */
	frag_unage(d, lv);
	lv->seq = fw->seq;
	lv->older = fw;
	lv->newer = fw->newer;
	if (fw->newer)
		fw->newer->older = lv;
	else
		d->newest[frag_fam(fw)] = lv;
	fw->newer = lv;
}

/*
 * Linux discards its queue of fw's key (and the fragment at hand): when
 * that queue was the first-wins datagram's, a Linux view begins beside it,
 * empty; when it was the view lv, the view starts over.
 */
static void linux_discard(struct decoder *d, struct frag *fw, struct frag *lv, uint64_t ts)
{
	if (fw && !fw->linux_gone) {
		fw->linux_gone = 1;
		d->stats.frag_linux_discard++;
		if (!lv)
			linux_view_new(d, fw, ts);
		else
			linux_reset(lv); /* not reached: a view exists only once fw is gone */
	} else if (lv && lv->got) {
		d->stats.frag_linux_discard++;
		linux_reset(lv);
	} else if (lv) {
		linux_reset(lv); /* a last fragment alone said where the end is */
	}
}

/*
 * One fragment (c, n bytes at fi->off) into the Linux view q as Linux
 * takes it (ip_frag_queue: the end first, then the place). Returns 1 when
 * the view is complete, 0 when it holds or dropped the fragment or started
 * over, -1 when the table had no room (q is gone).
 */
static int linux_input(struct decoder *d, struct frag *q, const struct frag_in *fi,
		       struct cur c, size_t n, const struct pkt *p)
{
	size_t end = fi->off + n;
	int newrun;

	if (!fi->more) {
		if (end < q->max_end || (q->total_known && end != q->total))
			goto discard;
		q->total = end;
		q->total_known = 1; /* INET_FRAG_LAST_IN, even for a duplicate */
	} else if (end > q->max_end && q->total_known) {
		goto discard;
	}
	switch (linux_place(q, fi->off, end, &newrun)) {
	case LX_DUP:
		return 0;
	case LX_OVERLAP:
		goto discard;
	default:
		break;
	}
	if (q->got == 0) {
		/* a new queue: Linux's timer for it starts now */
		q->first_ts = p->ts_us;
		frag_unage(d, q);
		frag_age(d, q);
	}
	if (frag_grow(d, q, end) != 0) {
		d->stats.frag_linux_lost++;
		frag_drop(d, q);
		return -1;
	}
	frag_fill(d, q, fi->off, &c);
	if (newrun)
		run_mark(q, fi->off);
	if (end > q->max_end)
		q->max_end = end;
	if (fi->off == 0 && !q->have_first) {
		q->have_first = 1;
		q->ttl = p->ttl;
		q->hlen = fi->hlen;
		q->nh = fi->nh;
	}
	return q->total_known && q->got == q->total && q->have_first;
discard:
	linux_discard(d, NULL, q, p->ts_us);
	return 0;
}

static uint64_t frag_digest(const struct frag *f)
{
	return hash_keyed(f->data, f->total);
}

/* A fragment refused (cut, or lying): counted, and remembered as lost,
 * unless its datagram is held: that one is judged whole when it completes,
 * or as lost when it is given up, and one judgement of the same datagram
 * is enough. */
static enum decode_result frag_refuse(struct decoder *d, const struct frag_in *fi,
				      enum decode_result r)
{
	if (!frag_find(d, fi->key))
		frag_lose(d, fi->key, fi->proto, NULL);
	return tally(d, L_FRAG, r);
}

/* Hand out q's datagram in d->rbuf (*len, p->ttl, *nh) and drop q. */
static void frag_out(struct decoder *d, struct frag *q, struct pkt *p, uint8_t *nh, size_t *len)
{
	memcpy(d->rbuf, q->data, q->total);
	*len = q->total;
	p->ttl = q->ttl;
	*nh = q->nh;
	frag_drop(d, q);
}

/*
 * Store one fragment (its payload is the rest of v). DECODE_HELD while the
 * datagram is incomplete; DECODE_OK with *len set when d->rbuf now holds it,
 * with p->ttl/p->proto (IPv4) or *nh (IPv6) from its first fragment. A
 * fragment refused, or a datagram dropped for want of room, is remembered
 * for decode_frag_lost(). The first-wins datagram comes out as it always
 * did; a Linux view that completes comes out here when the first-wins one
 * did not, else from decode_next.
 */
static enum decode_result frag_input(struct decoder *d, struct view *v, const struct frag_in *fi,
				     struct pkt *p, uint8_t *nh, size_t *len)
{
	struct frag *f, *lv;
	struct cur lc = v->c; /* the payload again, for the Linux view */
	size_t n = cur_left(&v->c), end = fi->off + n;
	enum decode_result r = DECODE_HELD;
	int take, fw_done = 0, lv_done = 0, linux_took = 0;

	if (fi->key[0] == 4) {
		/* Linux counts the fragment from its sender (cut by the
		 * capture or not: it got it whole) */
		struct frag_peer *pe = peer_find(d, fi->key);

		d->rid_now = pe ? ++pe->rid : 1;
	}
	if (v->missing)
		return frag_refuse(d, fi, DECODE_TRUNCATED);
	f = frag_find(d, fi->key);
	lv = NULL;
	if (f && f->linux_view) {
		lv = f;
		f = f->twin;
	} else if (f) {
		lv = f->twin;
	}
	if (fi->key[0] == 4) {
		/* Linux starts a queue over (ip_frag_reinit: what it held
		 * goes, this fragment is its first) when more than
		 * ipfrag_max_dist other fragments came from the same sender
		 * since the queue's last one: a decoy's head held here would
		 * otherwise stand for the datagram Linux makes of the real
		 * head sent after them. */
		struct frag *lq = f && !f->linux_gone ? f : lv;

		if (lq && lq->got && lq->peer && d->rid_now - lq->rid > LINUX_MAX_DIST) {
			d->stats.frag_linux_far++;
			linux_discard(d, f, lv, p->ts_us);
			lv = f ? f->twin : lv;
		}
		if (lq)
			lq->rid = d->rid_now;
	}
	/* Linux cuts an IPv4 fragment with more to come to a multiple of 8
	 * bytes and keeps the rest (ip_frag_queue); so does the table, for
	 * the receiver reads the datagram so cut (one of fewer than 8 bytes
	 * is cut to nothing: below). IPv6 drops such a fragment
	 * (ip6_frag_queue, RFC 8200 4.5), and so does the table. */
	if (fi->key[0] == 4 && fi->more && n >= 8 && (n & 7)) {
		struct cur whole = v->c;

		n &= ~(size_t)7;
		v->c = cur_take(&whole, n);
		lc = v->c;
		end = fi->off + n;
		d->stats.frag_trimmed++;
	}
	/* A fragment of no bytes is refused (Linux drops it too): it adds
	 * nothing, and taken as the offset-0 fragment it would name the
	 * datagram's next header or TTL for the fragments that carry it.
	 * Linux discards the queue with it (end == offset; for IPv4 after
	 * cutting a fragment with more to come to a multiple of 8). */
	if (n == 0 || (fi->key[0] == 4 && fi->more && n < 8)) {
		linux_discard(d, f, lv, p->ts_us);
		linux_took = 1;
	}
	if (n == 0 || end > fi->limit || (fi->more && (n & 7)))
		return frag_refuse(d, fi, DECODE_MALFORMED);
	take = f != NULL;
	if (f) {
		/* A fragment that contradicts the known end is refused; Linux
		 * discards the queue, and the fragment with it. */
		if ((f->total_known && (end > f->total || (!fi->more && end != f->total))) ||
		    (!fi->more && f->max_end > end)) {
			if (!f->linux_gone) {
				linux_discard(d, f, lv, p->ts_us);
				linux_took = 1;
			}
			r = frag_refuse(d, fi, DECODE_MALFORMED);
			take = 0;
		}
	} else if (!lv) {
		f = frag_new(d, fi->key, fi->proto, p->ts_us, NULL);
		if (!f) {
			frag_lose(d, fi->key, fi->proto, NULL);
			d->stats.frag_evicted++; /* out of memory: dropped */
			return DECODE_HELD;
		}
		take = 1;
	}
	if (take) {
		size_t got = f->got, last = f->max_end, fresh;

		tally(d, L_FRAG, DECODE_OK);
		if (frag_grow(d, f, end) != 0) {
			frag_lose(d, f->key, f->proto, f);
			frag_drop(d, f);
			d->stats.frag_evicted++;
			return DECODE_HELD;
		}
		fresh = frag_fill(d, f, fi->off, &v->c);
		if (!f->linux_gone) {
			/* These bytes are Linux's queue too: a fragment that
			 * meets no byte held is placed (extending the last run
			 * when it begins where the highest fragment ends), one
			 * inside a run is a duplicate, any other overlap
			 * discards the queue. */
			linux_took = 1;
			if (fresh == n && !(got && fi->off == last))
				run_mark(f, fi->off);
			else if (fresh < n && (fresh || !run_holds(f, fi->off, end)))
				linux_discard(d, f, lv, p->ts_us);
		}
		if (end > f->max_end)
			f->max_end = end;
		if (!fi->more) {
			f->total = end;
			f->total_known = 1;
		}
		if (fi->off == 0 && !f->have_first) {
			f->have_first = 1;
			f->ttl = p->ttl;
			f->hlen = fi->hlen;
			f->nh = fi->nh;
		}
		fw_done = f->total_known && f->got == f->total && f->have_first;
		/* Linux checks for a whole datagram only after placing a
		 * fragment: a last one that is a duplicate completes the
		 * datagram here but leaves Linux's queue whole and waiting */
		if (fw_done && !f->linux_gone && fresh == 0 && !f->twin)
			linux_stuck(d, f);
	}
	lv = f ? f->twin : lv;
	if (!linux_took) {
		/* Linux's queue is the view's, made now if Linux discarded
		 * the first-wins one and took nothing since */
		int k;

		if (!take && r == DECODE_HELD)
			tally(d, L_FRAG, DECODE_OK); /* the first-wins datagram is done */
		if (!lv && f)
			lv = linux_view_new(d, f, p->ts_us);
		k = lv ? linux_input(d, lv, fi, lc, n, p) : 0;
		if (k < 0)
			lv = NULL;
		lv_done = k > 0;
	}
	/* Linux refuses a datagram over 65,535 bytes with its first
	 * fragment's header as it reassembles it, and its queue with it. */
	if (lv_done && lv->hlen + lv->total > IP_MAX_LEN) {
		linux_discard(d, NULL, lv, p->ts_us);
		lv_done = 0;
	}
	if (fw_done && f->hlen + f->total > IP_MAX_LEN) {
		frag_lose(d, f->key, f->proto, f);
		frag_drop(d, f);
		fw_done = 0;
		r = tally(d, L_FRAG, DECODE_MALFORMED);
	}
	if (fw_done && lv) {
		lv->digest = frag_digest(f);
		lv->digest_len = f->total;
		lv->digest_nh = f->nh;
		lv->has_digest = 1;
	}
	if (lv_done && lv->has_digest && lv->digest_len == lv->total &&
	    lv->digest_nh == lv->nh && lv->digest == frag_digest(lv)) {
		/* Linux delivers what the sensor already read */
		d->stats.frag_linux_same++;
		frag_drop(d, lv);
		lv_done = 0;
	}
	if (fw_done) {
		if (lv_done) {
			if (d->next) { /* not reached: one per packet and layer */
				d->stats.frag_linux_lost++;
				frag_drop(d, d->next);
			}
			d->next = lv;
			d->next_p = *p;
		}
		frag_out(d, f, p, nh, len);
		d->stats.frag_done++;
		return DECODE_OK;
	}
	if (lv_done) {
		frag_out(d, lv, p, nh, len);
		d->stats.frag_linux_view++;
		return DECODE_OK;
	}
	if (r == DECODE_HELD)
		d->stats.frag_held++;
	return r;
}

/*
 * A fragment whose IP options or extension headers Linux's receiver refuses
 * (PKT_RX_DROP): dropped before reassembly, so a decoy sent so never
 * reaches the datagram Linux makes, and it does not enter the table. It
 * went out all the same: handed on at once, flagged PKT_FRAGMENT |
 * PKT_L4_BAD (no ports, no payload), as a fragment that never made a
 * whole datagram, its source route's last hop kept.
 */
static enum decode_result frag_rx_drop(struct decoder *d, const struct view *v, struct pkt *p)
{
	d->stats.frag_rx_drop++;
	tally(d, L_FRAG, DECODE_MALFORMED);
	p->flags |= PKT_FRAGMENT | PKT_L4_BAD;
	p->sport = p->dport = 0;
	rest_no_payload(p, v);
	return DECODE_OK;
}

/* ---- network ------------------------------------------------------------- */

/*
 * An IPv4 loose (131) or strict (137) source route among options o, with
 * hops left (its pointer not past its addresses): the last address is where
 * the packet is meant to end (RFC 791 3.1). Options that lie end the walk;
 * the datagram is judged by its header as before.
 */
static void ip4_srcroute(struct cur o, struct pkt *p)
{
	while (cur_left(&o) > 0) {
		uint8_t type = cur_u8(&o), len;
		if (type == 0) /* end of options */
			return;
		if (type == 1) /* no-op */
			continue;
		len = cur_u8(&o);
		if (o.err || len < 2)
			return;
		struct cur b = cur_take(&o, len - 2u);
		if (b.err)
			return;
		if ((type != 131 && type != 137) || len < 7)
			continue;
		uint8_t ptr = cur_u8(&b);
		size_t n = cur_left(&b) / 4;
		if (ptr < 4 || ptr > len - 3u)
			continue; /* every hop taken (or a pointer that lies) */
		cur_skip(&b, (n - 1) * 4);
		memset(p->route_to, 0, sizeof(p->route_to));
		cur_bytes(&b, p->route_to, 4);
		if (!b.err)
			p->flags |= PKT_SRCROUTE;
	}
}

/* The reassembled IPv4 datagram's transport part, len bytes in d->rbuf. */
static enum decode_result ip4_whole(struct decoder *d, struct pkt *p, size_t len)
{
	struct view v;

	p->flags = PKT_REASSEMBLED | (p->flags & PKT_SRCROUTE);
	v.c = cur_init(d->rbuf, len);
	v.missing = 0;
	v.frame = 0;
	return decode_l4(d, &v, p);
}

/*
 * Would Linux's receiver drop an IPv4 packet for its options o (the bytes
 * after the fixed header)? ip_options_compile refuses an option whose
 * length is under 2 or runs past the header, a second source route,
 * record route or timestamp, a route (loose, strict, record) whose pointer
 * is under 4 or, while it has room left, too close to its end, a
 * timestamp under 4 bytes or with a pointer under 5, room left too small
 * for its flag's entry, or its overflow count full, a router alert under 4
 * bytes, and a CIPSO option (no DOI is configured); others are ignored.
 * And a host drops every source-routed packet (ip_rcv_options:
 * accept_source_route is off in conf/all by default). End of options ends
 * the walk.
 */
static int ip4_opts_drop(struct cur o)
{
	int srr = 0, rr = 0, ts = 0;

	while (cur_left(&o) > 0) {
		size_t l = cur_left(&o);
		uint8_t type = cur_u8(&o), len, ptr, flg;

		if (type == 0) /* end of options */
			break;
		if (type == 1) /* no-op */
			continue;
		if (l < 2)
			return 1;
		len = cur_u8(&o);
		if (len < 2 || len > l)
			return 1;
		struct cur b = cur_take(&o, len - 2u);
		ptr = len >= 3 ? cur_u8(&b) : 0;
		flg = len >= 4 ? cur_u8(&b) : 0;
		switch (type) {
		case 131: /* loose source route */
		case 137: /* strict */
			if (len < 3 || ptr < 4 || srr)
				return 1;
			srr = 1;
			break;
		case 7: /* record route */
			if (rr || len < 3 || ptr < 4 || (ptr <= len && ptr + 3 > len))
				return 1;
			rr = 1;
			break;
		case 68: /* timestamp */
			if (ts || len < 4 || ptr < 5)
				return 1;
			if (ptr <= len) {
				if (ptr + 3 > len ||
				    (((flg & 0xf) == 1 || (flg & 0xf) == 3) && ptr + 7 > len))
					return 1;
			} else if ((flg & 0xf) != 3 && flg >> 4 == 15) {
				return 1;
			}
			ts = 1;
			break;
		case 148: /* router alert */
			if (len < 4)
				return 1;
			break;
		case 134: /* CIPSO */
			return 1;
		default:
			break;
		}
	}
	return srr;
}

/* IPv4 from the start of o, narrowed to its total length (which o must
 * have declared room for). */
static enum decode_result decode_ipv4(struct decoder *d, struct view *o, struct pkt *p)
{
	struct cur h = o->c;
	struct frag_in fi;
	struct view v;
	uint8_t vihl, nh;
	uint16_t total, id, frag, csum;
	size_t ihl, len;
	enum decode_result r;

	if (!cur_has(&h, 20))
		return tally(d, L_IPV4, view_short(o, 20));
	vihl = cur_u8(&h);
	cur_skip(&h, 1); /* TOS */
	total = cur_be16(&h);
	id = cur_be16(&h);
	frag = cur_be16(&h);
	p->ttl = cur_u8(&h);
	p->proto = cur_u8(&h);
	csum = cur_be16(&h); /* checked below, over the whole header */
	cur_bytes(&h, p->src, 4);
	cur_bytes(&h, p->dst, 4);
	ihl = (size_t)(vihl & 0x0f) * 4;
	if (vihl >> 4 != 4 || ihl < 20 || total < ihl || view_take(o, total, &v) != 0)
		return tally(d, L_IPV4, DECODE_MALFORMED);
	if (!cur_has(&v.c, ihl))
		return tally(d, L_IPV4, DECODE_TRUNCATED); /* options cut */
	{
		struct cur hc = v.c;
		const uint8_t *hb = cur_ptr(&hc, ihl);
		if (hb && csum_fold(csum_add(0, hb, ihl)) != 0xffff)
			p->flags |= PKT_IP_CSUM_BAD;
	}
	if (ihl > 20) {
		struct cur opt = v.c;
		cur_skip(&opt, 20);
		opt = cur_take(&opt, ihl - 20);
		ip4_srcroute(opt, p);
		if (ip4_opts_drop(opt))
			p->flags |= PKT_RX_DROP;
	}
	cur_skip(&v.c, ihl);
	p->ipv = 4;
	if (v.missing)
		p->flags |= PKT_SHORT;
	tally(d, L_IPV4, DECODE_OK);
	if (!(frag & 0x2000) && !(frag & 0x1fff))
		return decode_l4(d, &v, p);

	/* a fragment whose options Linux refuses never reaches its
	 * reassembly either (ip_rcv_options) */
	if (p->flags & PKT_RX_DROP)
		return frag_rx_drop(d, &v, p);
	/* a fragment whose header checksum is wrong never reaches Linux's
	 * reassembly (ip_rcv_core drops it): a decoy sent first would win
	 * ("first arrival"). 0 is offload's uncomputed field (Windows'
	 * captures), not a sum: such fragments are taken as before. */
	if ((p->flags & PKT_IP_CSUM_BAD) && csum != 0) {
		d->stats.frag_bad_checksum++;
		return tally(d, L_FRAG, DECODE_MALFORMED);
	}
	memset(&fi, 0, sizeof(fi));
	fi.key[0] = 4;
	fi.key[1] = p->proto;
	fi.proto = p->proto;
	fi.key[2] = (uint8_t)(id >> 8);
	fi.key[3] = (uint8_t)id;
	memcpy(fi.key + 6, p->src, 16);
	memcpy(fi.key + 22, p->dst, 16);
	fi.off = (size_t)(frag & 0x1fff) * 8;
	fi.limit = IP_MAX_LEN - 20; /* and with the first one's header: frag_input */
	fi.hlen = (uint8_t)ihl;
	fi.more = (frag & 0x2000) != 0;
	r = frag_input(d, &v, &fi, p, &nh, &len);
	if (r != DECODE_OK)
		return r;
	return ip4_whole(d, p, len);
}

/*
 * Walk IPv6 extension headers from *nh, as many as there are: Linux follows
 * any number (100 destination options before a DNS query are delivered), and
 * each header takes at least 8 bytes of the view, so the bytes bound the
 * walk (8,191 headers in a 64 KiB datagram, linear like reading them). Stops
 * at a transport (or ESP, no-next-header, unknown) header with *nh set to
 * it, or right after a fragment header that is not atomic (fh filled, *nh
 * its next header). fh NULL means fragment and hop-by-hop headers are not
 * allowed here (the fragmentable part of a reassembled datagram).
 */
/*
 * An IPv6 routing header h (after its next-header and length bytes) with
 * segments left: type 0 (RFC 2460, deprecated by RFC 5095) ends at its last
 * address, a segment routing header (type 4, RFC 8754) at segment 0. Type 2
 * (mobility: the node's own home address) and type 3 (RPL, compressed) are
 * not followed.
 */
static void ip6_srcroute(struct cur h, struct pkt *p)
{
	uint8_t type = cur_u8(&h), left = cur_u8(&h);
	uint8_t last[16];

	if (h.err || !left)
		return;
	if (type == 0) {
		cur_skip(&h, 4);
		size_t n = cur_left(&h) / 16;
		if (!n)
			return;
		cur_skip(&h, (n - 1) * 16);
	} else if (type == 4) {
		cur_skip(&h, 4); /* last entry, flags, tag */
	} else {
		return;
	}
	cur_bytes(&h, last, 16);
	if (h.err)
		return;
	memcpy(p->route_to, last, 16);
	p->flags |= PKT_SRCROUTE;
}

/*
 * Would Linux's receiver drop a packet for this hop-by-hop (hbh) or
 * destination options header, whose hlen bytes h holds (ip6_parse_tlv)?
 * Options are walked as Linux walks them: Pad1 and PadN add to a run of
 * padding that may not pass 7 bytes, and PadN's bytes must be 0 (RFC 4942
 * 2.1.9.5); an option that runs past the header, or more than 8 others
 * (max_hbh_opts_number, max_dst_opts_number), drop the packet; an option
 * Linux does not know drops it when the two high bits of its type say so
 * (RFC 8200 4.2). Of the hop-by-hop options it knows, a router alert of
 * another length than 2, a jumbo payload (this packet is no jumbogram), a
 * CALIPSO option (no DOI is configured) and an IOAM option off a 4-byte
 * boundary drop it; IOAM is otherwise ignored (off by default). In a
 * destination options header it knows the home address (201), which it
 * drops without Mobile IPv6 state, as the type's high bits say anyway.
 */
static int ip6_opts_drop(struct cur h, size_t hlen, int hbh)
{
	size_t off = 2, padlen = 0;
	unsigned count = 0;

	if (!cur_has(&h, hlen))
		return 0;
	cur_skip(&h, 2);
	while (off < hlen) {
		uint8_t type = cur_u8(&h), olen;

		if (type == 0) { /* Pad1 */
			if (++padlen > 7)
				return 1;
			off++;
			continue;
		}
		if (hlen - off < 2)
			return 1;
		olen = cur_u8(&h);
		if ((size_t)olen + 2 > hlen - off)
			return 1;
		if (type == 1) { /* PadN */
			padlen += (size_t)olen + 2;
			if (padlen > 7)
				return 1;
			for (unsigned i = 0; i < olen; i++)
				if (cur_u8(&h) != 0)
					return 1;
		} else {
			if (++count > 8)
				return 1;
			if (hbh && type == 5 && olen != 2)
				return 1; /* router alert */
			if (hbh && (type == 194 || type == 7))
				return 1; /* jumbo payload, CALIPSO */
			if (hbh && type == 49 && ((40 + off) & 3))
				return 1; /* IOAM, misaligned */
			if (!(hbh && (type == 5 || type == 49)) && (type & 0xc0))
				return 1; /* unknown: discard */
			cur_skip(&h, olen);
			padlen = 0;
		}
		off += (size_t)olen + 2;
	}
	return 0;
}

static enum decode_result ip6_walk(struct view *v, uint8_t *nh, struct ip6_frag *fh,
				   struct pkt *p)
{
	unsigned i;

	for (i = 0;; i++) {
		struct cur h = v->c;
		size_t hlen;
		uint8_t next;
		uint16_t offm;

		if (*nh == 0 && (i != 0 || !fh))
			return DECODE_MALFORMED; /* hop-by-hop comes first or not at all */
		switch (*nh) {
		case 0:  /* hop-by-hop */
		case 43: /* routing */
		case 60: /* destination options */
			if (!cur_has(&h, 2))
				return view_short(v, 2);
			next = cur_u8(&h);
			hlen = ((size_t)cur_u8(&h) + 1) * 8;
			if (*nh == 43 && cur_has(&v->c, hlen)) {
				struct cur rh = v->c;
				cur_skip(&rh, 2);
				ip6_srcroute(cur_take(&rh, hlen - 2), p);
				/* ipv6_rthdr_rcv: a segment routing (4) or RPL
				 * (3) header unless those are enabled (off by
				 * default), any other with segments left (type
				 * 0 is gone, type 2 wants Mobile IPv6 state),
				 * drop the packet; one with none left is
				 * passed */
				rh = v->c;
				cur_skip(&rh, 2);
				uint8_t rtype = cur_u8(&rh), left = cur_u8(&rh);
				if (rtype == 3 || rtype == 4 || left)
					p->flags |= PKT_RX_DROP;
			}
			break;
		case 51: /* AH: length in 4-byte units, minus 2 */
			if (!cur_has(&h, 2))
				return view_short(v, 2);
			next = cur_u8(&h);
			hlen = ((size_t)cur_u8(&h) + 2) * 4;
			break;
		case 44: /* fragment */
			if (!fh || fh->present)
				return DECODE_MALFORMED;
			if (!cur_has(&h, 8))
				return view_short(v, 8);
			next = cur_u8(&h);
			cur_skip(&h, 1);
			offm = cur_be16(&h);
			fh->id = cur_be32(&h);
			hlen = 8;
			if ((offm & 0xfff8) || (offm & 1)) {
				fh->present = 1;
				fh->off = offm & 0xfff8;
				fh->more = offm & 1;
				cur_skip(&v->c, 8);
				*nh = next;
				return DECODE_OK;
			}
			break; /* atomic fragment (RFC 6946): just a header */
		default:
			return DECODE_OK;
		}
		if (!cur_has(&v->c, hlen))
			return view_short(v, hlen);
		if ((*nh == 0 || *nh == 60) && ip6_opts_drop(v->c, hlen, *nh == 0))
			p->flags |= PKT_RX_DROP;
		cur_skip(&v->c, hlen); /* hlen >= 8: the walk ends */
		*nh = next;
	}
}

/*
 * Extension headers that are cut or lie (counted as r at layer), but the
 * fixed header was whole: the datagram went to p->dst all the same. Handed
 * on like a transport header that cannot be read, its proto the header the
 * walk stopped at, so the egress policy still judges it.
 */
static enum decode_result ip6_bad_ext(struct decoder *d, enum decode_layer layer,
				      enum decode_result r, const struct view *v, uint8_t nh,
				      struct pkt *p)
{
	tally(d, layer, r);
	p->proto = nh;
	p->flags |= PKT_L4_BAD;
	rest_no_payload(p, v);
	return DECODE_OK;
}

/*
 * Whether the first fragment (offset 0) of an IPv6 datagram, its
 * fragmentable part in v beginning with next header nh, stops short of
 * its upper-layer header: the extension headers end inside it, but not
 * the first 20 bytes of TCP, 8 of UDP or ICMPv6, 1 of anything else.
 * Linux drops such a fragment and answers a parameter problem
 * (ipv6_frag_rcv, ipv6frag_thdr_truncated; RFC 8200 4.5), so a decoy so
 * cut never reaches the datagram Linux makes; a chain whose own headers
 * run past the end, or that ends in No Next Header, is taken
 * (ipv6_skip_exthdr fails, and the check with it). The capture's cut
 * bytes count as there (Linux had them); a header that starts among them
 * cannot be read and the fragment is taken. *upper: the upper-layer
 * header the chain names, when it says 1.
 */
static int ip6_first_cut(const struct view *v, uint8_t nh, uint8_t *upper)
{
	size_t end = cur_left(&v->c) + v->missing, at = 0, hlen;

	/* each header takes at least 8 bytes: at most end / 8 of them */
	while (nh == 0 || nh == 43 || nh == 44 || nh == 51 || nh == 60 || nh == 59) {
		struct cur h = v->c;
		uint8_t next, len;

		if (nh == 59 || at + 2 > end)
			return 0;
		cur_skip(&h, at);
		if (!cur_has(&h, nh == 44 ? 4 : 2))
			return 0; /* past what the capture holds, or the fragment */
		next = cur_u8(&h);
		len = cur_u8(&h);
		if (nh == 44) {
			if (cur_be16(&h) & 0xfff8)
				return 0; /* a later fragment's header: the walk stops */
			hlen = 8;
		} else if (nh == 51) {
			hlen = ((size_t)len + 2) * 4;
		} else {
			hlen = ((size_t)len + 1) * 8;
		}
		at += hlen;
		nh = next;
	}
	hlen = nh == 6 ? 20 : nh == 17 || nh == 58 ? 8 : 1;
	*upper = nh;
	return at + hlen > end;
}

/* IPv6 from the start of o, narrowed to its payload length. */
/* The reassembled IPv6 datagram's fragmentable part, len bytes in d->rbuf
 * starting with next header nh. */
static enum decode_result ip6_whole(struct decoder *d, struct pkt *p, uint8_t nh, size_t len)
{
	struct view v;
	enum decode_result r;

	p->flags = PKT_REASSEMBLED | (p->flags & PKT_SRCROUTE);
	v.c = cur_init(d->rbuf, len);
	v.missing = 0;
	v.frame = 0;
	r = ip6_walk(&v, &nh, NULL, p);
	if (r != DECODE_OK)
		return ip6_bad_ext(d, L_FRAG, r, &v, nh, p); /* the reassembled part's */
	p->proto = nh;
	return decode_l4(d, &v, p);
}

static enum decode_result decode_ipv6(struct decoder *d, struct view *o, struct pkt *p)
{
	struct cur h = o->c;
	struct ip6_frag fh = {0, 0, 0, 0};
	struct frag_in fi;
	struct view v;
	uint32_t vtf;
	uint16_t plen;
	uint8_t nh;
	size_t len;
	enum decode_result r;

	if (!cur_has(&h, 40))
		return tally(d, L_IPV6, view_short(o, 40));
	vtf = cur_be32(&h);
	plen = cur_be16(&h);
	nh = cur_u8(&h);
	p->ttl = cur_u8(&h);
	cur_bytes(&h, p->src, 16);
	cur_bytes(&h, p->dst, 16);
	/* Payload length 0 with hop-by-hop is a jumbogram: not supported. */
	if (vtf >> 28 != 6 || (plen == 0 && nh == 0))
		return tally(d, L_IPV6, DECODE_MALFORMED);
	cur_skip(&o->c, 40);
	if (view_take(o, plen, &v) != 0)
		return tally(d, L_IPV6, DECODE_MALFORMED);
	p->ipv = 6;
	if (v.missing)
		p->flags |= PKT_SHORT;
	r = ip6_walk(&v, &nh, &fh, p);
	if (r != DECODE_OK)
		return ip6_bad_ext(d, L_IPV6, r, &v, nh, p);
	tally(d, L_IPV6, DECODE_OK);
	p->proto = nh;
	if (!fh.present)
		return decode_l4(d, &v, p);

	memset(&fi, 0, sizeof(fi));
	fi.key[0] = 6;
	fi.key[2] = (uint8_t)(fh.id >> 24);
	fi.key[3] = (uint8_t)(fh.id >> 16);
	fi.key[4] = (uint8_t)(fh.id >> 8);
	fi.key[5] = (uint8_t)fh.id;
	memcpy(fi.key + 6, p->src, 16);
	memcpy(fi.key + 22, p->dst, 16);
	fi.off = fh.off;
	fi.limit = IP_MAX_LEN;
	fi.more = fh.more;
	fi.nh = nh;
	fi.proto = nh;
	if (p->flags & PKT_RX_DROP)
		return frag_rx_drop(d, &v, p);
	if (fi.off == 0 && ip6_first_cut(&v, nh, &fi.proto)) {
		/* judged, if its datagram is not held, as the protocol it
		 * names (its ports are not there) */
		d->stats.frag_chain_cut++;
		return frag_refuse(d, &fi, DECODE_MALFORMED);
	}
	r = frag_input(d, &v, &fi, p, &nh, &len);
	if (r != DECODE_OK)
		return r;
	return ip6_whole(d, p, nh, len);
}

/* ---- entry points -------------------------------------------------------- */

struct decoder *decoder_new(const struct decode_config *cfg)
{
	struct decoder *d = calloc(1, sizeof(*d));
	struct decoder *ret = NULL;
	size_t nb = 16;

	if (!d || hash_init() != 0)
		goto out;
	if (cfg)
		d->cfg = *cfg;
	if (!d->cfg.max_vlan_depth)
		d->cfg.max_vlan_depth = DEF_VLAN_DEPTH;
	if (!d->cfg.max_encap_depth)
		d->cfg.max_encap_depth = DEF_ENCAP_DEPTH;
	if (d->cfg.max_encap_depth > MAX_ENCAP_DEPTH)
		d->cfg.max_encap_depth = MAX_ENCAP_DEPTH;
	if (!d->cfg.frag_max_datagrams)
		d->cfg.frag_max_datagrams = DEF_FRAG_DATAGRAMS;
	if (!d->cfg.frag_max_bytes)
		d->cfg.frag_max_bytes = DEF_FRAG_BYTES;
	if (!d->cfg.frag_timeout_us)
		d->cfg.frag_timeout_us = DEF_FRAG_TIMEOUT_US;
	if (!d->cfg.frag6_timeout_us)
		d->cfg.frag6_timeout_us = DEF_FRAG6_TIMEOUT_US;
	while (nb < d->cfg.frag_max_datagrams && nb < FRAG_MAX_BUCKETS)
		nb <<= 1;
	d->nbuckets = nb;
	d->buckets = calloc(nb, sizeof(*d->buckets));
	d->peers = calloc(nb, sizeof(*d->peers));
	if (!d->buckets || !d->peers)
		goto out;
	d->rbuf = malloc(IP_MAX_LEN);
	if (!d->rbuf)
		goto out;
	/* one call loses at most every datagram held, one refused fragment
	 * and one that found no room */
	d->lost_cap = d->cfg.frag_max_datagrams + 2;
	d->lost = calloc(d->lost_cap, sizeof(*d->lost));
	if (!d->lost)
		goto out;
	ret = d;
	d = NULL;
out:
	decoder_free(d);
	return ret;
}

void decoder_free(struct decoder *d)
{
	if (!d)
		return;
	while (d->oldest[0] || d->oldest[1])
		frag_drop(d, frag_older(d->oldest[0], d->oldest[1]));
	free(d->buckets);
	free(d->peers);
	free(d->rbuf);
	free(d->lost);
	free(d);
}

int decode_frag_lost(struct decoder *d, struct pkt_hop *out)
{
	if (!d->lost_n)
		return 0;
	*out = d->lost[d->lost_head];
	d->lost_head = (d->lost_head + 1) % d->lost_cap;
	d->lost_n--;
	return 1;
}

void decode_frag_give_up(struct decoder *d)
{
	while ((d->oldest[0] || d->oldest[1]) && d->lost_n < d->lost_cap)
		frag_give_up(d, frag_older(d->oldest[0], d->oldest[1]), &d->stats.frag_expired);
}

enum decode_result decode_next(struct decoder *d, struct pkt *p)
{
	struct frag *q = d->next;
	uint8_t nh, ipv;
	size_t len;

	if (!q)
		return DECODE_HELD;
	ipv = q->key[0];
	*p = d->next_p;
	frag_out(d, q, p, &nh, &len); /* clears d->next */
	d->stats.frag_linux_view++;
	return ipv == 4 ? ip4_whole(d, p, len) : ip6_whole(d, p, nh, len);
}

int decode_peek_tuple(int dlt, const uint8_t *data, uint32_t caplen, struct tuple_hint *t)
{
	struct cur c = cur_init(data, data ? caplen : 0);
	uint16_t type = 0;
	int ipv = 0;

	switch (link_kind(dlt)) {
	case LK_ETH:
		cur_skip(&c, 12);
		type = cur_be16(&c);
		for (int depth = 0; depth < 2 && is_vlan_tpid(type); depth++) {
			cur_skip(&c, 2);
			type = cur_be16(&c);
		}
		break;
	case LK_SLL:
		cur_skip(&c, 14);
		type = cur_be16(&c);
		break;
	case LK_SLL2:
		type = cur_be16(&c);
		cur_skip(&c, 18);
		break;
	case LK_RAW:
	case LK_IPV4:
	case LK_IPV6: {
		struct cur v = c; /* the version nibble, read again below */
		ipv = cur_u8(&v) >> 4;
		break;
	}
	default:
		return 0;
	}
	if (type == ETHERTYPE_IPV4)
		ipv = 4;
	else if (type == ETHERTYPE_IPV6)
		ipv = 6;
	memset(t, 0, sizeof(*t));
	if (ipv == 4) {
		uint8_t vhl = cur_u8(&c);
		cur_skip(&c, 5);
		uint16_t frag = cur_be16(&c);
		cur_skip(&c, 1);
		t->proto = cur_u8(&c);
		cur_skip(&c, 2);
		cur_bytes(&c, t->src, 4);
		cur_bytes(&c, t->dst, 4);
		if ((vhl >> 4) != 4 || (vhl & 15) < 5 || (frag & 0x3fff))
			return 0;
		cur_skip(&c, ((size_t)(vhl & 15) - 5) * 4);
	} else if (ipv == 6) {
		cur_skip(&c, 6);
		t->proto = cur_u8(&c);
		cur_skip(&c, 1);
		cur_bytes(&c, t->src, 16);
		cur_bytes(&c, t->dst, 16);
	} else {
		return 0;
	}
	if (t->proto != 6 && t->proto != 17) /* TCP, UDP */
		return 0;
	t->sport = cur_be16(&c);
	t->dport = cur_be16(&c);
	t->ipv = (uint8_t)ipv;
	return !c.err;
}

enum decode_result decode_packet(struct decoder *d, int dlt, const uint8_t *data,
				 uint32_t caplen, uint32_t wirelen, uint64_t ts_us,
				 struct pkt *p)
{
	struct view v;
	size_t wire;
	enum decode_result r;

	memset(p, 0, sizeof(*p));
	p->ts_us = ts_us;
	p->caplen = caplen;
	p->wirelen = wirelen;
	p->linktype = dlt;
	if (!data)
		caplen = 0;
	if (d->next) { /* the caller did not ask decode_next */
		d->stats.frag_linux_lost++;
		frag_drop(d, d->next);
	}
	frag_expire(d, ts_us);
	/* The frame on the wire may be longer than what was captured: an IP
	 * length beyond it is a lie, not a truncation. */
	wire = wirelen > caplen ? wirelen : caplen;
	v.c = cur_init(data, caplen);
	v.missing = wire - caplen;
	v.frame = 1;
	r = decode_link(d, link_kind(dlt), &v, p);
	if (r == DECODE_NOT_IP)
		d->stats.not_ip++;
	return r;
}
