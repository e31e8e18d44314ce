/*
 * proxyproto.h - the PROXY protocol header (HAProxy's, versions 1 and 2)
 * that a client may send before anything else on a TCP connection, so that
 * the HTTP, h2c, TLS and DNS analyzers read what follows it as they would
 * without it (DNS: the servers that take one, dnsdist, unbound, PowerDNS,
 * BIND and Knot Resolver v2, CoreDNS v1 and v2, read it once before the
 * first length prefix over TCP, and a v2 header before each message over
 * UDP, which dns.c reads with proxyproto_parse).
 * nginx (`listen ... proxy_protocol`), HAProxy (`accept-proxy`), postfix
 * and others take it; `curl --haproxy-protocol` sends version 1. An agent
 * running its own such server could otherwise hide its HTTP and TLS from
 * the analyzers behind one line.
 *
 * The header is taken as the most lenient common receiver, nginx's
 * `proxy_protocol`, takes it (the specification,
 * https://www.haproxy.org/download/2.9/doc/proxy-protocol.txt, is
 * stricter, but a header nginx serves behind would otherwise hide what
 * follows it), through sensor/cursor.h:
 *   v1  "PROXY" SP then either "UNKNOWN" and any bytes up to the first
 *       CRLF, or "TCP4" or "TCP6", SP, addr SP addr SP port SP port CRLF:
 *       an address any run (even none) of hex digits, ':' and '.' (nginx
 *       does not parse it: "a", "01.2.3.4", IPv6 text after TCP4 all do),
 *       a port one or more decimal digits worth at most 65535 (leading
 *       zeros too); at most PROXY_V1_MAX bytes with the CRLF, so a longer
 *       line is none;
 *   v2  the 12-byte signature "\r\n\r\n\0\r\nQUIT\n", version 2 in the
 *       13th byte's high half, the family byte, a 16-bit length, then that
 *       many bytes. With the PROXY command (1) over TCP/IPv4 (0x11) or
 *       TCP/IPv6 (0x21) the length holds the addresses (12, 36 bytes);
 *       every other command, family and transport is skipped by the
 *       length, unread, as nginx skips it. TLVs are skipped too.
 *
 * Where: at the client stream's cursor (consumed) when the flow is not
 * claimed: its start, or where an analyzer that handed the flow back
 * stopped, the start of an HTTP CONNECT tunnel (the agent's own
 * proxy_protocol server reached through the egress proxy); never
 * mid-stream. While the bytes
 * so far could still become a header the claim waits, as it waits for a
 * request line; the wait is bounded by the header's own bound (1 KiB;
 * 16 + 65535 for v2) and by the stream's window: when no more bytes can
 * come (window full, a hole) an unfinished header is no header.
 * A v2 header is not held whole: once its fixed part is whole and sound,
 * its bytes are passed as they come (the cursor moves to their end, the
 * window slides there, struct flow's pp_rest counts what is left of it),
 * so a header longer than the window (16 KiB; 132 KiB on a wide port)
 * hides nothing after it: unbound 1.17.1 answers a query behind a
 * 20,000-byte header (its TCP buffer takes 16 + 65535), where HAProxy
 * (its 16 KiB buffer) and nginx (its first read buffer, 1 KiB for HTTP by
 * default) refuse one longer than their buffer, and dnsdist and PowerDNS
 * one over their proxy-protocol-maximum-size (512 by default).
 */
#ifndef EW_PROXYPROTO_H
#define EW_PROXYPROTO_H

#include <stddef.h>
#include <stdint.h>

/* The longest v1 line, CRLF included. The specification says 107, but
 * nginx reads the line from its first buffer of the connection
 * (client_header_buffer_size, 1 KiB by default) and serves behind a 500-byte
 * UNKNOWN line or a port with 100 leading zeros. */
#define PROXY_V1_MAX 1024
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
 * The header at the cursor of the client stream (f->st[0]) of the
 * unclaimed TCP flow f, as the claims read it: its length (or, behind a
 * v2 header being passed, the length of its rest) when the bytes from
 * consumed start with one, 0 when they do not, -1 while they may yet
 * (more bytes can still come: no hole before them, window not full).
 * Not pure: it passes a cut v2 header's bytes as they come (consumed
 * moves, the window slides), for every claim at once, since all of them
 * read behind the header. A claim that takes the flow calls
 * proxyproto_taken, whatever it returned. NULL f, or no streams: 0.
 */
struct flow;
int proxyproto_stream(struct flow *f);

/* The claim took f: the rest of a header being passed, if any, is the
 * claim's to skip (by the length proxyproto_stream returned), so f keeps
 * no count of it for a claim after a hand-back. NULL f is fine. */
void proxyproto_taken(struct flow *f);

#endif
