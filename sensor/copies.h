/*
 * copies.h - the same UDP or ICMP datagram seen on two capture sources.
 *
 * A packet that crosses two watched interfaces (a bridge and one of its
 * ports, two containers' veths, `-i any` on a host that forwards) is
 * captured once on each. TCP needs nothing here: the flow table takes the
 * second copy's bytes as a retransmission of the first's. A UDP datagram or
 * an ICMP message, though, would be decoded, stored and counted by the
 * detectors twice: every DNS query and answer two events.
 *
 * So the core remembers the datagrams of the last COPIES_WINDOW_US of
 * packet time (at most COPIES_MAX of them, the oldest forgotten first) by a
 * fingerprint: a keyed hash (hash.h) of the IP version, protocol, addresses
 * and the whole transport header and payload, TTL left out (a router in
 * between lowers it), and of the tunnel that carried it and a source
 * route's last hop: the same DNS query sent plainly and inside VXLAN are
 * two ways out, not one datagram twice. A datagram whose fingerprint was seen from another
 * source within the window is a copy: the core skips it
 * (`copies.skipped`). One seen again from the same source is not: a
 * retransmission, a DNS client's retry, is the sender's and is read again
 * (its entry takes the later time: one entry per fingerprint and source,
 * so repeats cannot grow a chain).
 *
 * Only the layout of the index depends on the hash key; what is remembered
 * and forgotten depends only on the packets (their order and times), so a
 * replay is as deterministic as before. Not recognised: a copy whose
 * addresses or ports a NAT between the two sources rewrote, and one that
 * comes after more than COPIES_MAX other datagrams.
 */
#ifndef EW_COPIES_H
#define EW_COPIES_H

#include <stdint.h>

#include "pkt.h"

#define COPIES_MAX 8192               /* datagrams remembered */
#define COPIES_WINDOW_US 1000000ull   /* how far apart two copies may be */

struct copies;

/* A new, empty memory, or NULL when out of memory. */
struct copies *copies_new(void);
void copies_free(struct copies *c);

/*
 * 1 when p, a decoded UDP, ICMP or ICMPv6 datagram from capture source
 * iface, is a copy of one seen from another source within the window;
 * else 0, and p is remembered. Call hash_init() first.
 */
int copies_seen(struct copies *c, const struct pkt *p, uint32_t iface);

/* Datagrams remembered now (at most COPIES_MAX). */
uint32_t copies_held(const struct copies *c);

#endif
