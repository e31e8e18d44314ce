/*
 * detect_icmp_tunnel.h - the icmp_tunnel detector: ICMP and ICMPv6 echo
 * traffic that carries data (ptunnel, icmpsh, hans, icmptunnel, ...).
 *
 * A content class (architecture.md section 6): it runs with or without a
 * sandbox section and judges echoes from any source. From OBS_ICMP
 * observations (never packet bytes), each echo request or reply is judged
 * on its own, and each echo reply against its request:
 *   - reply: an echo reply with the identifier and sequence of a request
 *     its sender received from its peer within ICMP_TUNNEL_REPLY_US, whose
 *     payload length, digest (obs_icmp: past the first 16 bytes, ping's
 *     timestamp) or lead (those 16 bytes of data, less a send time that
 *     moved by the time between them: lead_echoed) is not the request's: a
 *     host echoes the request's bytes, a tunnel's far end sends its own;
 *   - size: bytes of data (obs_icmp.data_len: the payload before the filler
 *     icmp_fill finds; the whole payload without obs_icmp) >
 *     thresholds.icmp_payload_max;
 *   - entropy: the data's bits/byte x100 > thresholds.icmp_entropy_x100,
 *     for at least ICMP_TUNNEL_ENTROPY_MIN bytes of data (below that the
 *     entropy of even random bytes is capped by the length);
 *   - volume: bytes of data sent by one source (requests and replies
 *     alike) within a minute of packet time > thresholds.icmp_volume_bytes
 *     (once per source per window);
 *   - distinct data: more than thresholds.icmp_distinct_data different
 *     data (obs_icmp.data_digest: the bytes past the first 16, before the
 *     filler, joined with what of those 16, obs_icmp.lead, is not a send
 *     time that moved with the packets' time since the pair's last
 *     request: clock_span) in the messages one source began (requests, not
 *     replies) to one peer within a minute of packet time (once per pair
 *     per window): ping sends the same data each time, whatever its size,
 *     pattern or clock, and a channel whose data is a new `ping -p` pattern
 *     each time, a payload of at most 16 bytes (`ping -s 15 -p`), or small
 *     low-entropy messages, changes it at every message;
 *   - distinct data in an hour: more than
 *     thresholds.icmp_distinct_data_hour different data, counted as above,
 *     within a tumbling hour of packet time from the pair's first request
 *     in it (once per pair per hour, and not in an hour in which the
 *     minute's count raised the pair): a channel under 8 a minute.
 * Every alert belongs to the echo's requester: a reply's alert is turned
 * around (source = the host that sent the request, subject = its peer), so
 * one conversation is one alert row whichever way its data flows.
 * ping's payloads raise nothing, whatever their size: a timestamp, then
 * bytes counting up or a pattern of at most 16 bytes (-p), which is filler;
 * its data is the timestamp and the pattern's first period.
 *
 * State: a fixed table of ICMP_TUNNEL_SOURCES volume windows and one of as
 * many distinct-data windows (source and peer: the minute's digests, the
 * hour's, up to ICMP_TUNNEL_HOUR_MAX, and the last request's lead),
 * whatever the traffic (a full table gives up the least
 * recently active key's), and
 * one of ICMP_TUNNEL_PENDING echo requests (first in, first out), both keyed
 * by a hash a sender cannot steer (sensor/hash.h). Time is packet time.
 */
#ifndef EW_DETECT_ICMP_TUNNEL_H
#define EW_DETECT_ICMP_TUNNEL_H

#define ICMP_TUNNEL_ENTROPY_MIN 32    /* bytes of data before entropy counts */
#define ICMP_TUNNEL_WINDOW_US 60000000ull /* the volume window: one minute */
#define ICMP_TUNNEL_SOURCES 1024      /* volume windows kept, and distinct-data windows */
#define ICMP_TUNNEL_DISTINCT_MAX 16   /* thresholds.icmp_distinct_data's ceiling */
#define ICMP_TUNNEL_HOUR_US 3600000000ull /* the distinct data's slow window: an hour */
#define ICMP_TUNNEL_HOUR_MAX 256      /* thresholds.icmp_distinct_data_hour's ceiling */
#define ICMP_TUNNEL_PENDING 2048      /* echo requests kept for their replies (a power of 2) */
#define ICMP_TUNNEL_REPLY_US 30000000ull /* a reply later than this is not compared */

/* The detector descriptor (analyzers/registry.c). */
struct module;
extern const struct module detect_icmp_tunnel_module;

#endif
