/*
 * proxyproto.h - the PROXY protocol header (HAProxy's, versions 1 and 2)
 * that a client may send before anything else on a TCP connection, so that
 * the HTTP and TLS analyzers read what follows it as they would without it.
 * nginx (`listen ... proxy_protocol`), HAProxy (`accept-proxy`), postfix
 * and others take it; `curl --haproxy-protocol` sends version 1. An agent
 * running its own such server could otherwise hide its HTTP and TLS from
 * the analyzers behind one line.
 *
 * The header is checked as the specification says
 * (https://www.haproxy.org/download/2.9/doc/proxy-protocol.txt), through
 * sensor/cursor.h:
 *   v1  "PROXY" SP then either "UNKNOWN" and any bytes up to the first
 *       CRLF, or "TCP4" SP addr SP addr SP port SP port CRLF (IPv4 as four
 *       decimal numbers 0..255 without leading zeros) or the same with
 *       "TCP6" (IPv6 text, one "::" at most, 128 bits); ports decimal
 *       0..65535 without leading zeros; at most PROXY_V1_MAX bytes with the
 *       CRLF, so a longer line is none;
 *   v2  the 12-byte signature "\r\n\r\n\0\r\nQUIT\n", version 2 and command
 *       LOCAL (0) or PROXY (1) in the 13th byte, the family byte, a 16-bit
 *       length, then that many bytes. With PROXY the family is one the
 *       specification names (UNSPEC, or INET, INET6, UNIX over STREAM or
 *       DGRAM) and the length holds its addresses (12, 36, 216 bytes); with
 *       LOCAL the family is ignored, as the receiver ignores it. What lies
 *       after the addresses (TLVs) is skipped by the length, unread.
 *
 * Where: only at the very start of the client stream (offset 0, nothing
 * consumed or slid), never mid-stream nor after a CONNECT. While the bytes
 * so far could still become a header the claim waits, as it waits for a
 * request line; the wait is bounded by the header's own bound (107 bytes;
 * 16 + 65535 for v2) and by the stream's window: when no more bytes can
 * come (window full, a hole) an unfinished header is no header.
 */
#ifndef EW_PROXYPROTO_H
#define EW_PROXYPROTO_H

#include <stddef.h>
#include <stdint.h>

#define PROXY_V1_MAX 107      /* the longest v1 line, CRLF included */
#define PROXY_V2_FIXED 16     /* signature, version/command, family, length */
#define PROXY_V2_MAX (PROXY_V2_FIXED + 65535)

/*
 * Does buf[0..len) start with a PROXY protocol header? Returns its length
 * (> 0) when a whole, well-formed v1 or v2 header is there; 0 when the
 * bytes are not one and cannot become one; -1 when they are a proper
 * prefix of one (ask again with more). Reads at most
 * min(len, PROXY_V2_MAX) bytes; pure.
 */
int proxyproto_parse(const uint8_t *buf, size_t len);

/*
 * The header at the start of the client stream s, as the claims read it:
 * its length when s starts with one (nothing consumed nor slid yet), 0 when
 * it does not (or the analyzer's cursor has moved), -1 while it may yet
 * (more bytes can still come: no hole before them, window not full).
 */
struct flow_stream;
int proxyproto_stream(const struct flow_stream *s);

#endif
