/*
 * detect_egress.h - the egress policy detector: judges connections and
 * observations from the sandbox against the rules' allow section, and
 * recognises DNS over HTTPS/TLS wherever it comes from.
 *
 * Classes (architecture.md section 3; docs/detection.md says what raises
 * each and which rules keys tune it):
 *   policy (only with a sandbox section, only traffic whose source is a
 *   sandbox address other than an allowed proxy or resolver):
 *     proxy_bypass, udp_egress, icmp_egress, ipv6_egress, dns_over_tcp,
 *     websocket, smtp, domain_not_allowed, proxy_denied;
 *   content (always): doh.
 * icmp_tunnel lives in detect_icmp_tunnel.h.
 *
 * Inputs: every IP packet's header fields (SEL_ALL: addresses, ports,
 * protocol, TCP flags, flow direction; never payload bytes) and the
 * observations OBS_DNS_QUERY, OBS_HTTP_REQUEST, OBS_HTTP_RESPONSE,
 * OBS_TLS_CLIENT_HELLO and OBS_ICMP. Packet-based classes are raised once
 * per flow (a bounded cache of flow ids; a flow pushed out of it may be
 * raised again, which the core's aggregation absorbs); observation-based
 * ones once per observation.
 *
 * State: the rules (borrowed from module_env, immutable), the known DoH
 * addresses parsed once at init, and the per-flow cache: a fixed size,
 * whatever the traffic. Time is not used: nothing here expires.
 */
#ifndef EW_DETECT_EGRESS_H
#define EW_DETECT_EGRESS_H

#include <stddef.h>

/*
 * Is name[0..len) (escaped text as in struct obs; one trailing dot and a
 * ":port" suffix are ignored) a known DNS-over-HTTPS/TLS resolver name or a
 * subdomain of one (dot boundary, ASCII case-insensitive)? Returns 1 or 0.
 * Pure; exposed for tests.
 */
int detect_egress_doh_name(const char *name, size_t len);

/* The detector descriptor (analyzers/registry.c). */
struct module;
extern const struct module detect_egress_module;

#endif
