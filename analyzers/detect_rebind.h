/*
 * detect_rebind.h - the dns_rebind detector (architecture.md section 3): a
 * DNS answer maps a name that is not internal to a metadata, link-local,
 * loopback, unspecified or private address; or a question asks for a name
 * that spells such an address (nip.io and friends).
 */
#ifndef EW_DETECT_REBIND_H
#define EW_DETECT_REBIND_H

#include <stdint.h>

/* What an address is, in rising order of concern. */
enum rebind_class {
	REBIND_NONE = 0,
	REBIND_PRIVATE,     /* 10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7, fec0::/10 */
	REBIND_UNSPEC,      /* 0.0.0.0, :: (also what sinkholing resolvers answer) */
	REBIND_LOOPBACK,    /* 127/8, ::1 */
	REBIND_LINKLOCAL,   /* 169.254/16, fe80::/10 */
	REBIND_METADATA,    /* one of the rules' metadata addresses */
};

struct rules;

/*
 * Classify an address (ipv 4: 4 bytes, ipv 6: 16 bytes). The IPv4 address
 * inside an IPv4-mapped, IPv4-compatible or NAT64 (64:ff9b::/96) IPv6
 * address is classified too; the higher class wins. Pure.
 */
int rebind_addr_class(const struct rules *r, int ipv, const uint8_t *addr);

/* "private", "unspecified", "loopback", "link-local", "metadata" or "". */
const char *rebind_class_name(int cls);

/* The detector descriptor (analyzers/registry.c). */
struct module;
extern const struct module detect_rebind_module;

#endif
