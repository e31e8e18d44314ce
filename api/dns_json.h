/*
 * dns_json.h - the DNS event detail (the record analyzers/dns.c writes, see
 * analyzers/dns.h) as the "dns" object of docs/architecture.md section 4,
 * and the DNS mnemonic tables it uses.
 *
 * The mnemonic functions write into caller buffers (no static return
 * buffers): each returns either a string from a static const table or buf
 * filled with the numeric form ("TYPE65280", "CLASS32769", "RCODE4000",
 * "OPCODE9"); buf needs at least DNS_MNEMONIC_MAX bytes.
 */
#ifndef EW_DNS_JSON_H
#define EW_DNS_JSON_H

#include <stddef.h>

#include <jansson.h>

#define DNS_MNEMONIC_MAX 16

const char *dns_type_str(unsigned type, char *buf, size_t cap);
const char *dns_class_str(unsigned cls, char *buf, size_t cap);
const char *dns_rcode_str(unsigned rcode, char *buf, size_t cap);
const char *dns_opcode_str(unsigned opcode, char *buf, size_t cap);

/*
 * Fill the jansson object dns (owned by the caller, normally empty) from the
 * detail record info[0..len) of one DNS event: id, qr, opcode, rcode,
 * flags, tc, qname/qtype (and qclass when not IN) of the first question,
 * questions (only when there are several), answers (always), authority and
 * additional (only when non-empty), edns (when an OPT was seen), malformed
 * (the reason, only when malformed), counts, and detail_cut (only when the
 * analyzer had to cut the record). obs_kind (OBS_DNS_QUERY/ANSWER) gives qr
 * when the record lacks it. info is only read.
 *
 * Returns 0; -EINVAL when info has no header record (dns is left empty);
 * -ENOMEM when jansson could not allocate (dns may be partly filled: the
 * caller discards it).
 */
int dns_info_json(json_t *dns, const char *info, size_t len, int obs_kind);

#endif
