/*
 * icmp_json.h - the ICMP event detail (the record analyzers/icmp.c writes,
 * see analyzers/icmp.h) as the "icmp" object of docs/architecture.md
 * section 4.
 */
#ifndef EW_ICMP_JSON_H
#define EW_ICMP_JSON_H

#include <stddef.h>

#include <jansson.h>

/*
 * Fill the jansson object obj (owned by the caller, normally empty) from the
 * detail record info[0..len) of one ICMP event (obs_kind OBS_ICMP), keys in
 * this order, each only when known:
 *   "v" (4 or 6), "type", "code", "name" ("echo-request", ...),
 *   "id", "seq" (echo), "payload_len", "entropy" (echo: bits per byte, a
 *   real with 2 decimals), "mtu" (fragmentation needed, packet too big),
 *   "quoted" (errors whose quoted IP header was read: {"proto" ("udp",
 *   "tcp", "icmp", "icmpv6", "sctp" or the number as text), "src_ip",
 *   "src_port", "dst_ip", "dst_port" (ports when read), "id" (a quoted
 *   echo), "flow": whether it matched a known flow}), "malformed" (the
 *   reason), "truncated": true.
 * info is only read.
 *
 * Returns 0; -EINVAL when info holds no ICMP record (v not 4 or 6, or no
 * type) or obs_kind is not OBS_ICMP (obj is left empty); -ENOMEM when
 * jansson could not allocate (obj may be partly filled: the caller discards
 * it).
 */
int icmp_info_json(json_t *obj, const char *info, size_t len, int obs_kind);

#endif
