/*
 * decode.h - link, network and transport decoding (L2..L4) with IP fragment
 * reassembly and tunnel decapsulation.
 *
 * decode_packet() turns one captured frame into a struct pkt. It reads only
 * through sensor/cursor.h, takes its bounds from caplen, then narrows them to
 * each header's declared length (IP total length, IPv6 payload length, UDP
 * length). Problems are counted per layer in struct decode_stats and never
 * stop the run.
 *
 * Fragments: IPv4 and IPv6 fragments are held (bounded in count, bytes and
 * packet time) until the datagram is complete; then decode_packet returns the
 * reassembled datagram with PKT_REASSEMBLED set, its bytes borrowed from the
 * decoder until the next call. Overlaps: the bytes that arrived first win;
 * where Linux's receiver would reassemble other bytes (it discards a
 * datagram on an overlap that is no duplicate and starts over), that
 * datagram is delivered too, from the packet that completes it or, when
 * that packet also completed the first-wins one, from decode_next.
 *
 * Encapsulations: PPPoE sessions (bounded by the PPPoE length), MPLS label
 * stacks (bounded in depth), IP-in-IP, GRE (with PPP, Ethernet and ERSPAN
 * payloads), VXLAN and GENEVE are opened, and struct pkt describes the
 * innermost IP datagram, with p->encap counting the tunnels crossed (at
 * most max_encap_depth). A fragmented outer datagram is reassembled before
 * its tunnel is opened; inner fragments are keyed by the inner addresses.
 */
#ifndef EW_DECODE_H
#define EW_DECODE_H

#include <stdint.h>

#include "pkt.h"

/*
 * Layers counted in decode_stats, once per header read: a packet inside a
 * tunnel counts its inner headers too (an Ethernet frame inside VXLAN or
 * GRE at L_LINK, the inner IP at L_IPV4/L_IPV6). L_TUNNEL counts IP-in-IP
 * decapsulations, and as malformed the tunnels refused by the depth bound.
 */
enum decode_layer {
	L_LINK = 0, L_VLAN, L_IPV4, L_IPV6, L_FRAG, L_TCP, L_UDP, L_ICMP, L_ICMPV6,
	L_PPPOE, L_PPP, L_MPLS, L_GRE, L_ERSPAN, L_VXLAN, L_GENEVE, L_TUNNEL,
	L_COUNT
};

/* Result of decode_packet. */
enum decode_result {
	DECODE_OK = 0,        /* pkt filled; ipv != 0 */
	DECODE_NOT_IP = 1,    /* ARP, LLDP, PPP LCP, ... counted as other */
	DECODE_TRUNCATED = 2, /* a header was cut by caplen */
	DECODE_MALFORMED = 3, /* a header lied (bad version, length, ...) */
	DECODE_HELD = 4,      /* a fragment was stored; nothing to analyze yet */
};

struct decode_stats {
	uint64_t ok[L_COUNT];
	uint64_t truncated[L_COUNT];
	uint64_t malformed[L_COUNT];
	uint64_t not_ip;         /* frames carrying no IP (a tunnel without IP inside
				  * is not counted: its outer datagram is the packet) */
	uint64_t frag_held;      /* fragments stored */
	uint64_t frag_done;      /* datagrams reassembled */
	uint64_t frag_expired;   /* incomplete datagrams dropped by time */
	uint64_t frag_evicted;   /* dropped because a bound was hit */
	uint64_t frag_overlap;   /* fragments that overlapped earlier data (dups too) */
	uint64_t frag_duplicate; /* fragments that brought no new byte at all */
	uint64_t frag_conflict;  /* fragments whose overlapping bytes differ from those held */
	uint64_t frag_bad_checksum; /* IPv4 fragments refused for a wrong header checksum */
	uint64_t frag_linux_discard; /* queues Linux's receiver discards (overlap, end contradicted) */
	uint64_t frag_linux_view;  /* datagrams Linux reassembles otherwise, delivered too */
	uint64_t frag_linux_same;  /* Linux views whose bytes were the first-wins datagram's */
	uint64_t frag_linux_lost;  /* Linux views expired or evicted (never judged as lost) */
	uint64_t frag_linux_far;   /* of linux_discard: queues started over for ipfrag_max_dist */
	uint64_t frag_trimmed;     /* IPv4 fragments cut to a multiple of 8, as Linux cuts them */
	uint64_t frag_chain_cut;   /* IPv6 first fragments short of their upper-layer header (refused) */
	uint64_t frag_rx_drop;     /* IPv6 fragments whose options Linux refuses (PKT_RX_DROP) */
};

/* Zero in any field means its default. */
struct decode_config {
	unsigned max_vlan_depth;  /* default 4 */
	unsigned max_encap_depth; /* tunnels opened inside each other: default 4, at most 16 */
	unsigned frag_max_datagrams; /* default 1024 in flight */
	unsigned frag_max_bytes;  /* default 16 MiB held in total */
	unsigned frag_timeout_us; /* IPv4: default 30 s of packet time (Linux's ipfrag_time) */
	unsigned frag6_timeout_us; /* IPv6: default 60 s (Linux's ip6frag_time) */
};

struct decoder;

/* A decoder with its own fragment table. cfg may be NULL for defaults.
 * Returns NULL when out of memory. Free with decoder_free (NULL is fine). */
struct decoder *decoder_new(const struct decode_config *cfg);
void decoder_free(struct decoder *d);

/* True when libpcap's DLT is one this decoder reads (those listed at
 * decode_packet). */
int decode_linktype_supported(int dlt);

/*
 * Decode one frame of link type dlt (DLT_EN10MB, DLT_LINUX_SLL,
 * DLT_LINUX_SLL2, DLT_RAW, DLT_IPV4, DLT_IPV6, DLT_NULL, DLT_LOOP, DLT_PPP,
 * DLT_PPP_SERIAL, DLT_PPP_ETHER, DLT_C_HDLC, DLT_FRELAY, DLT_FDDI,
 * DLT_NFLOG). data/caplen are the captured bytes; wirelen the original
 * length; ts_us the packet time. On DECODE_OK, *p is filled and borrows data
 * (or the decoder's reassembly buffer, valid until the next decode_packet
 * call).
 *
 * Tunnels: *p describes the innermost IP datagram (addresses, ports, ttl,
 * l4/payload, PKT_SHORT) with p->encap the number of tunnels opened and
 * p->outer the outermost datagram's addresses, proto and ports; vlan stays
 * the outer frame's. A tunnel whose payload is not IP, or is an IP
 * datagram cut or malformed, or an inner fragment held for reassembly, or
 * that is nested deeper than
 * max_encap_depth, is counted (at the inner layer, or malformed at
 * L_TUNNEL) and leaves *p describing the datagram that carries it
 * (DECODE_OK, proto 4, 41, 47 or UDP to the port): what went over the
 * wire is judged whatever it carries.
 *
 * *p is overwritten whole (flow, dir and iface are zeroed: the caller sets
 * iface afterwards); after a result other than DECODE_OK its fields are
 * partial and only ts_us/caplen/wirelen/linktype are meaningful.
 * DECODE_OK with PKT_SHORT means caplen cut the datagram after the
 * transport header: l4/payload hold what was captured. DECODE_OK with
 * PKT_L4_BAD means the TCP, UDP or ICMP header itself was cut or lied
 * (counted at its layer): addresses and proto are set, the ports when
 * their bytes are there, no payload (pkt.h). Other IP protocols
 * (and ESP, no-next-header) give DECODE_OK with proto and l4 set, no ports
 * and no payload. Fragments give DECODE_HELD until their datagram is
 * complete; the fragment table is expired by ts_us on every call.
 */
enum decode_result decode_packet(struct decoder *d, int dlt, const uint8_t *data,
				 uint32_t caplen, uint32_t wirelen, uint64_t ts_us,
				 struct pkt *p);

/*
 * The addresses and ports of a frame read ahead of decode_packet, as a hint
 * for the flow table (flow_table_prefetch): a TCP or UDP packet right after
 * an IPv4 header (no fragment) or a plain IPv6 header, framed in Ethernet
 * (up to two VLAN tags), Linux SLL/SLL2 or raw IP. Fills *t and returns 1;
 * returns 0 for anything else. It reads through the cursor, counts nothing
 * and keeps nothing: decode_packet still judges the frame.
 */
struct tuple_hint {
	uint8_t ipv, proto;
	uint16_t sport, dport;
	uint8_t src[16], dst[16];
};
int decode_peek_tuple(int dlt, const uint8_t *data, uint32_t caplen, struct tuple_hint *t);

/* Datagrams being reassembled right now (first-wins; not the Linux views,
 * which decode_frag_give_up drops without judging them). */
unsigned decode_frag_pending(const struct decoder *d);

/*
 * The datagram Linux's receiver reassembles from the fragment the last
 * decode_packet took, when that fragment completed both it and the
 * first-wins datagram decode_packet returned, and their bytes differ:
 * DECODE_OK with *p filled as decode_packet fills it (bytes borrowed until
 * the next call), or DECODE_HELD when there is none. Ask after every
 * decode_packet until it says DECODE_HELD; one not asked for is dropped by
 * the next decode_packet (fragments.linux_lost).
 */
enum decode_result decode_next(struct decoder *d, struct pkt *p);

/*
 * IP datagrams the fragment table gave up on since the last call: expired,
 * evicted for room, or a fragment refused (cut, or lying about its place).
 * Their fragments went over the wire all the same, so the caller hands
 * each to the egress policy. Fills *out (addresses, the protocol, and the
 * TCP/UDP ports when the first fragment held them) and returns 1, or
 * returns 0 when there is none. Ask after every decode_packet call: the
 * decoder keeps the losses of one call, not more.
 */
int decode_frag_lost(struct decoder *d, struct pkt_hop *out);

/* Give up on every datagram still held (the end of a run): each goes to
 * decode_frag_lost, counted expired. Ask decode_frag_lost until it says 0,
 * then call again while decode_frag_pending() is not 0. */
void decode_frag_give_up(struct decoder *d);

/* Counters so far (borrowed; lives as long as the decoder). */
const struct decode_stats *decode_stats(const struct decoder *d);

/* Name of a layer for stats output ("ipv4", "tcp", ...). */
const char *decode_layer_name(enum decode_layer l);

#endif
