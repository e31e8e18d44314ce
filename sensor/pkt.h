/*
 * pkt.h - a decoded packet: the borrowed view that capture and decode hand to
 * the flow table and the analyzers.
 *
 * Every pointer in struct pkt borrows either the capture buffer or the
 * decoder's reassembly buffer and is valid only for the duration of the
 * callback that receives the packet. Whoever keeps data copies it.
 *
 * Bounds: l4 and payload are already narrowed to the IP total/payload length
 * and the UDP length, so link-layer padding never reaches an analyzer.
 */
#ifndef EW_PKT_H
#define EW_PKT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct flow;

enum pkt_flags {
	PKT_REASSEMBLED = 1u << 0, /* IP datagram rebuilt from fragments */
	PKT_SHORT = 1u << 1,       /* caplen shorter than the IP datagram: payload cut */
	PKT_FRAGMENT = 1u << 2,    /* a non-first IP fragment that was not reassembled */
	/* The transport header (TCP, UDP, ICMP) could not be read: cut by
	 * caplen, or lengths that lie. The packet still went out, so it is
	 * handed on for the policy (addresses, proto and the ports if their 4
	 * bytes are there), but it has no payload, joins no flow and reaches
	 * only the modules that judge every IP packet (SEL_ALL). */
	PKT_L4_BAD = 1u << 3,
	/* The IP header names a route to take before its destination (an
	 * IPv4 loose or strict source route, an IPv6 routing header of type 0
	 * or a segment routing header) with hops left: route_to is where the
	 * sender wants the packet to end up. */
	PKT_SRCROUTE = 1u << 4,
	/* An IPv4 header (the innermost's or a tunnel's), or a VXLAN or
	 * GENEVE tunnel's outer UDP datagram, whose checksum is wrong: a
	 * receiver drops it (flow.c weighs it, flow.h "Checksums") */
	PKT_IP_CSUM_BAD = 1u << 5,
	/* IP options or extension headers that Linux's receiver refuses:
	 * IPv4 options ip_options_compile refuses, or a source route (a host
	 * takes none); an IPv6 hop-by-hop or destination options header
	 * ip6_parse_tlv refuses (an unknown option whose type says discard,
	 * padding over 7 bytes or not zero, more than 8 options, a router
	 * alert, jumbo or CALIPSO option it cannot take), or a routing header
	 * with segments left, or of segment routing or RPL. Its IP layer
	 * drops the packet, so no TCP stack or reassembly sees it. */
	PKT_RX_DROP = 1u << 6,
};

/* The outermost IP datagram of a frame that carried tunnels (encap > 0):
 * the hop the frame really takes on the watched link. */
struct pkt_hop {
	uint8_t ipv, proto;       /* 0: no tunnel was opened */
	uint16_t sport, dport;    /* UDP ports (VXLAN, GENEVE); 0 otherwise */
	uint8_t src[16], dst[16];
};

/* TCP flag bits as on the wire. */
enum tcp_flag_bits {
	TH_FIN = 0x01, TH_SYN = 0x02, TH_RST = 0x04, TH_PUSH = 0x08,
	TH_ACK = 0x10, TH_URG = 0x20, TH_ECE = 0x40, TH_CWR = 0x80,
};

struct pkt {
	uint64_t ts_us;           /* packet time, microseconds since the epoch */
	uint32_t caplen, wirelen; /* as libpcap reported them */
	int linktype;             /* DLT_* of the capture */
	uint16_t vlan;            /* outermost 802.1Q/ad VLAN id, 0 if untagged */
	uint8_t ipv;              /* 4 or 6; 0 when not an IP packet */
	uint8_t proto;            /* IPPROTO_* of the transport (after IPv6 ext headers) */
	uint8_t ttl;              /* IPv4 TTL or IPv6 hop limit */
	uint8_t tcp_flags;        /* TH_* bits, TCP only */
	uint8_t encap;            /* tunnels opened to reach this IP datagram (decode.h) */
	struct pkt_hop outer;     /* the outermost datagram, when encap > 0 */
	uint8_t src[16], dst[16]; /* IPv4 addresses use the first 4 bytes, rest zero */
	uint8_t route_to[16];     /* PKT_SRCROUTE: the route's last address */
	uint16_t sport, dport;    /* TCP/UDP ports; 0 otherwise */
	uint32_t seq, ack;        /* TCP sequence and acknowledgement numbers */
	uint16_t tcp_win;
	unsigned flags;           /* PKT_* */

	/* Transport header and everything after it, bounded by the IP length. */
	const uint8_t *l4;
	size_t l4_len;
	/* Application payload after the TCP/UDP/ICMP header, bounded likewise. */
	const uint8_t *payload;
	size_t payload_len;

	/* Set by the flow table. dir is 0 for packets from the flow's
	 * initiator, 1 for packets from the responder. */
	struct flow *flow;
	int dir;
	uint32_t iface; /* capture source index (which -i, or which file) */
};

/* p seen from its other end: addresses, ports and direction swapped, all
 * else as it is (an alert owed to the peer, or the analyzers reading the
 * other direction's stream on this packet's turn). */
static inline struct pkt pkt_turned(const struct pkt *p)
{
	struct pkt q = *p;

	memcpy(q.src, p->dst, sizeof(q.src));
	memcpy(q.dst, p->src, sizeof(q.dst));
	q.sport = p->dport;
	q.dport = p->sport;
	q.dir = !p->dir;
	return q;
}

#endif
