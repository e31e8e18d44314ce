/*
 * flow.h - the bidirectional flow table: 5-tuple lookup, TCP state enough to
 * tell an attempt from a connection, and in-order reassembly of the first
 * bytes of each direction.
 *
 * Memory is bounded whatever the input: at most max_flows flows (the least
 * recently seen is evicted), at most stream_max bytes held per direction
 * (the first stream_max bytes, or, for an analyzer that slides its window
 * with flow_stream_slide, the stream_max bytes after its cursor;
 * FLOW_STREAM_WIDE bytes for a direction on one of wide_ports, one whose
 * first bytes are a TLS handshake record (a hello may arrive in one
 * offloaded segment of up to 64 KiB), or one that met an offload's
 * segment, larger than FLOW_SEG_WIRE_MAX, that did not fit what was left
 * of its window, in its first FLOW_FIRST_BYTES, an empty window or a claimed
 * flow), at most
 * ooo_max out-of-order ranges held per direction (past that a segment is
 * not held: flows.ooo_dropped), and a global cap on
 * stream bytes. Idle flows expire by packet time.
 *
 * A TCP flow's two stream records (f->st[0], f->st[1]) come from a pool when
 * the flow is created (other flows have f->st NULL), so the records take at
 * most one pair per flow. A flow's stream buffer is allocated when the first
 * payload byte arrives and released when the flow dies or an analyzer calls
 * flow_stream_done(); the table may keep released buffers for reuse, always
 * within stream_total_max (held and kept together). When that cap is full,
 * a direction that needs room takes the buffers of idle directions of other
 * flows, which are then done as if their analyzer had finished
 * (flows.stream_reclaimed; flow.c, "Reclaim"): an analyzer must not assume
 * a direction it is reading keeps its buffer between packets (buf NULL and
 * done set: nothing more will come; buf NULL, not done and len 0: it had
 * read every byte, the window was slid past them, and the next bytes come
 * in a new buffer).
 *
 * Holes (capture loss). A segment the capture never saw leaves a hole in the
 * stream. The table skips a hole that will not be filled, as Zeek and
 * Suricata do: (1) the peer has acknowledged the bytes after it (the highest
 * ACK from the other direction reaches the start of data held, or arriving,
 * beyond the hole: the receiver has the bytes we missed), or (2) a FIN
 * from this direction, or a RST from either, arrives while data is held
 * (every hole below the held data is skipped). Not for want of room: past
 * ooo_max held ranges a segment is not held, and the holes stay, as the
 * receiver, whose queue holds thousands, keeps them open (up to 16 ranges,
 * the first hole was skipped, so 17 one-byte segments sent ahead hid a
 * request's line and Host from the analyzers; R22-F5). Skipping means: the
 * hole's bytes are left in buf as zeros, len moves past them (absorbing held
 * data), and the hole is recorded. A hole with nothing held or arriving
 * after it is not skipped on an ACK alone, so a data segment that the capture
 * shows after the ACK for it (the two directions reordered) still lands.
 * Bytes of a skipped hole that arrive later are dropped like retransmissions.
 *
 * A hole skipped on the peer's ACK (1) is capture loss: the receiver has
 * the bytes. One skipped for (2) sets unsure for the recorded range:
 * the receiver may not have had those bytes, or may get them yet, so where
 * the data after it sits in the stream is not known (an analyzer of a
 * length-framed protocol stops there rather than guess).
 *
 * Each direction counts its skipped holes (holes) and records [hole_start,
 * resync): every byte of buf in there may be a zero standing for lost data,
 * and resync is where the data after the latest hole starts. The range
 * covers every hole skipped at or after consumed: when a hole is skipped
 * while consumed is still below resync, the range grows to include both
 * (with whatever real data lies between them). So, for an analyzer that
 * keeps consumed: bytes [consumed, len) are all real when holes == 0 or
 * consumed >= resync; otherwise [consumed, hole_start) are real and the
 * analyzer must not read across hole_start. flow_stream_avail() says how
 * far it may read. A length-framed parser drops the message that straddles
 * the range and resumes at resync, assuming a message boundary there.
 * Analyzers that predate holes and ignore these fields read zeros instead of
 * the lost bytes.
 *
 * What the receiver reads. The stream is meant to be the bytes a Linux
 * receiver (default settings) hands to its application, not every byte
 * the capture shows:
 *
 * Urgent data. With net.ipv4.tcp_stdurg = 0 and SO_OOBINLINE off (the
 * defaults), the byte an urgent pointer names (seq + urg_ptr - 1; seq when
 * urg_ptr is 0) is taken out of the stream (send(.., MSG_OOB); Linux's
 * tcp_check_urg and tcp_recvmsg). One urgent byte is pending per
 * direction: a pointer from a segment Linux would not accept (wholly
 * before the bytes held in order, an old retransmission; or starting past
 * the window its receiver last advertised from there, scaled as both SYNs
 * asked and taken as at least 64 KiB) is not read at all; a pointer before
 * the bytes held in order (rcv_nxt) is ignored, and so is one not after
 * the pending one; a later one replaces
 * it, and the replaced byte then stays in the stream. The byte may lie
 * past its segment or in held data: it is taken out when the in-order
 * stream reaches it (also when a skipped hole covers it: a zero goes).
 * Taking it out moves the bytes after it down by one and isn on by one
 * (urg_taken counts them), so later, retransmitted and out-of-order
 * segments land where they did. One approximation: Linux leaves a
 * replaced byte in the stream only when its application had not read up
 * to it yet; here the application is taken to read at once, so a pending
 * byte the stream has reached is always taken out. Counted:
 * flows.urgent.
 *
 * Segments without ACK. Linux discards a segment with none of SYN, ACK and
 * RST in every state; its data, FIN and urgent pointer are ignored here
 * too, and its data is no answer (FLOW_DATA*). Counted, those with data:
 * flows.noack_ignored.
 *
 * SYN data. A SYN's data is the receiver's only with TCP Fast Open, when
 * its SYN-ACK acknowledges it (ack = ISN + 1 + len); otherwise the client
 * sends it again after the handshake. So it is held aside (syn_len bytes
 * at buf[0], len staying 0: no analyzer sees it) until the SYN-ACK says:
 * the bytes its ACK covers become the stream's first, the rest is
 * dropped. When no SYN-ACK is seen (a capture of one direction) the
 * client's next segment says instead: a client goes on after what its
 * peer took, so a segment from byte 0 again drops the data, one at or
 * past its end takes it all (one in between takes that much). In such a
 * capture the sender thus decides alone; a decoy it sends so is left for
 * flows.inconsistent to show (the real bytes arrive as a differing copy).
 * Counted, SYNs whose data the stream did not take (or took in part):
 * flows.syn_data_dropped. The data stays with its own SYN: a SYN of
 * another ISN after it (a retry, or a decoy that a tap near the client
 * records before the SYN-ACK) does not drop it, and the SYN-ACK's ACK says
 * which SYN the server answered (syn_hold_i among the syn_isn kept).
 * Data on a SYN-ACK is taken only when the
 * client's SYN carried data (its own Fast Open, tcp_rcv_fastopen_synack) or
 * was not captured; else the client drops it and the server sends it again
 * (also counted in flows.syn_data_dropped).
 *
 * Checksums. A receiver drops a segment whose IPv4 header or TCP checksum
 * is wrong (or whose VXLAN or GENEVE tunnel's outer UDP checksum is:
 * PKT_IP_CSUM_BAD), so a decoy sent with a bad one would stand in for the real
 * bytes. But a capture taken where the sender's checksum offload has not
 * run yet (the sending host, a veth, a bridge of containers) holds
 * checksums that are not computed: the partial sum of the pseudo-header
 * that offload leaves (told apart exactly), or garbage (some drivers; and
 * a capture rewritten without fixing them, tcprewrite's default). So the
 * verdict is by direction, as Suricata's "auto" mode does it: once two
 * segments of a direction in a row (a wrong one between starts the count
 * again: garbage is right by chance one time in 65,536) had right
 * checksums, its sender computes them,
 * and a later segment with a wrong one (not the offload's partial sum) is
 * ignored as the receiver ignores it: no state, no data, no answer
 * (flows.bad_checksum). Before that, and in a direction of partial sums,
 * every segment counts as before (an offloading sender's decoy cannot be
 * told from its real segments, and is left to flows.inconsistent). The
 * segments checked are those that carry data, SYN, FIN, RST or URG, and
 * every segment until the direction is settled; a segment cut by the
 * capture cannot be checked and counts, and a wrong sum on a segment
 * longer than an Ethernet frame holds (1480 bytes of TCP: coalesced by the
 * capturing host's LRO, which may leave the first segment's checksum, or
 * not yet cut by the sender's offload) is taken as not known. Offload's
 * partial sum stays "not known" even in a settled direction: the
 * capturing host's GRO leaves it on the segments it coalesces, so a decoy
 * that carries it is left to flows.inconsistent.
 *
 * UDP checksums. Linux's UDP stack drops a datagram whose checksum (or IPv4
 * header checksum) is wrong, and over IPv6 one whose checksum is 0 (udp6
 * takes none but on configured tunnel sockets; over IPv4 0 means none and
 * is taken), so a DNS query sent so never reaches the resolver while the
 * sensor read it: decoys that dilute dns_tunnel's per-domain features, or
 * raise metadata_probe and dns_rebind on names no resolver ever saw
 * (pcaps/review21/udp/FINDINGS.md). A direction cannot settle here: a DNS
 * client sends one datagram per source port, so each query is a flow of
 * its own; nor can a sender, since a decoy's source address is the
 * sender's to choose (an address never seen before has no verdict). The
 * verdict is per capture source (pkt.iface, FLOW_UDP_CSUM_SOURCES of them,
 * modulo), since where a capture was taken is what decides whether the
 * checksums in it were computed: once two of its UDP datagrams had checksums their
 * sender's stack wrote (right, or offload's partial sum exactly: a capture
 * on the sending host, a veth or a container bridge shows the partial sum
 * on every datagram its stack sent, never anything else) and no more than
 * FLOW_UDP_CSUM_RATIO wrong ones per such datagram came before, the source
 * is settled for good, and a datagram with a wrong checksum is handed on
 * without payload: no analyzer reads it, no event, the policy still judges
 * it (it went out), flows.udp_bad_checksum. A rewritten capture (garbage
 * everywhere, right by chance one time in 65,536) does not settle (two
 * chance hits among its first 34 datagrams: about once in 7.7 million
 * captures): its datagrams count as before. Not counted either way: a datagram cut by
 * the capture, one with no payload, IPv4's 0, and one longer than an
 * Ethernet frame holds (1480 bytes of UDP: the sending host's UDP GSO not
 * yet cut, or the capturing host's GRO) that is not a reassembled one.
 * The ratio, not two right ones in a row as for TCP, since a sender that
 * puts a decoy between every two real datagrams keeps any row from
 * forming; it makes a sender that wants the source unsettled send more
 * than FLOW_UDP_CSUM_RATIO decoys for each datagram any host's stack
 * sends, from the capture's start.
 *
 * Differing copies. Bytes that arrive for a range already held (in order,
 * or out of order) and differ from it are a sender saying two things; the
 * receiver took one (a decoy with a bad checksum, a short TTL, an old
 * timestamp that PAWS drops ...), which one a passive copy cannot tell.
 * The copy that stays is the one the rules above keep; the segment is
 * counted in flows.inconsistent (Zeek's rexmit_inconsistency). The bytes
 * held are compared where they are still in buf (not skipped holes, not
 * bytes numbered before an urgent byte was taken out); for the first
 * window (before any slide) the latest FLOW_SEG_MEMO segments that brought
 * new bytes are also remembered by sequence number, length and a keyed
 * hash, so a copy of one of them with other bytes is counted after the
 * analyzer slid the bytes away or finished (a copy that overlaps a
 * forgotten segment otherwise is not seen).
 *
 * Keys. A flow is (ipv, proto, address and port of each end), matched in
 * either orientation. Ports are the TCP/UDP ports; for ICMP and ICMPv6 echo
 * (request or reply) both "ports" are the echo identifier, so an echo request
 * and its reply share a flow; other ICMP messages and other protocols have
 * both ports 0. flow->sport/dport hold these key ports (p->sport/dport are
 * left untouched).
 *
 * Initiator. The sender of the first packet seen, except: a TCP SYN+ACK or an
 * ICMP echo reply seen first makes its receiver the initiator, and a TCP SYN
 * without ACK always makes its sender the initiator (an existing flow whose
 * responder sends one is turned around: ends, counters, streams and state bits
 * swap).
 *
 * Expiry. Flows sit on one of three LRU lists by idle class: open TCP
 * (tcp_idle_us), UDP/ICMP/other (udp_idle_us), closed TCP (closed_idle_us:
 * RST seen either way, or FIN seen both ways). Each list is ordered by last
 * packet, so expiry looks only at the oldest flows and stops at the first that
 * is not idle; a flow is idle when now - last_us >= its timeout. Time is
 * packet time only. A pure SYN on a closed flow ends it and starts a new flow
 * (port reuse). When max_flows flows exist, the least recently seen of the
 * three list tails is evicted to make room.
 *
 * Not re-entrant: on_end must not call back into the table.
 */
#ifndef EW_FLOW_H
#define EW_FLOW_H

#include <stdint.h>

#include "pkt.h"

enum flow_state_bits {
	FLOW_SYN = 1u << 0,       /* initiator sent SYN */
	FLOW_SYNACK = 1u << 1,    /* responder answered SYN+ACK */
	FLOW_RST = 1u << 2,       /* responder sent RST */
	FLOW_RST_INIT = 1u << 3,  /* initiator sent RST */
	FLOW_FIN = 1u << 4,       /* a FIN was seen */
	FLOW_UNREACH = 1u << 5,   /* an ICMP error quoted this flow */
	FLOW_DATA0 = 1u << 6,     /* payload seen from the initiator */
	FLOW_DATA1 = 1u << 7,     /* payload seen from the responder */
	FLOW_REPLY = 1u << 8,     /* any packet from the responder */
	FLOW_MIDSTREAM = 1u << 9, /* TCP flow first seen without a SYN */
	FLOW_EVICTED = 1u << 10,  /* ended to make room, not by its own packets or time */
};

/* Which application analyzer owns the flow's streams. */
enum flow_app { APP_NONE = 0, APP_DNS, APP_HTTP, APP_TLS, APP_OTHER, APP_HTTP2 };

/* A byte range in offsets from isn: [start, end). */
struct flow_seg {
	uint32_t start, end;
};

/* SYNs of other ISNs remembered per direction (retries, decoys): the
 * SYN-ACK that acknowledges one of them fixes the numbering. */
#define FLOW_SYN_ISNS 4

/* Segments remembered per direction to compare copies with (memo). */
#define FLOW_SEG_MEMO 2

/* "UDP checksums": capture sources with a verdict of their own (pkt.iface
 * modulo this), and the wrong checksums per right one a source may have
 * shown before it settles. */
#define FLOW_UDP_CSUM_SOURCES 16
#define FLOW_UDP_CSUM_RATIO 16

struct flow_stream {
	uint8_t *buf;      /* bytes [0, len), zeros in skipped holes; NULL until data arrives */
	uint32_t len;      /* contiguous bytes reassembled (skipped holes included) */
	uint32_t cap;      /* allocated size of buf */
	uint32_t isn;      /* sequence number of byte 0 */
	uint8_t isn_set;
	uint8_t done;      /* analyzer finished: further data ignored */
	uint8_t overflow;  /* stream_max reached: later bytes not kept */
	uint8_t gap;       /* never set since holes are skipped (kept for old readers) */
	uint32_t consumed; /* bytes the analyzer has parsed (its cursor) */
	uint32_t slid;     /* bytes flow_stream_slide dropped from the front (isn
			    * moved on by as many) */
	/* Held out-of-order data: the bytes are copied into buf at their offset
	 * (beyond len); ooo[0..ooo_n) are the held byte ranges, sorted, disjoint
	 * and not touching (adjacent segments merge into one range). At most
	 * ooo_max ranges per direction (room for 16 at first, doubled as more
	 * come); the held segments, for who wins an overlap, follow them in the
	 * same allocation (flow.c, OOO_SEGS). */
	struct flow_seg *ooo;
	uint32_t ooo_n;
	/* Skipped holes (see "Holes" above). */
	uint32_t holes;      /* holes skipped in this direction; 0: none */
	uint32_t hole_start; /* [hole_start, resync): the holes not yet passed */
	uint32_t resync;     /* where data after the latest hole starts; <= len */
	/* table internal: the highest ACK the peer sent (a sequence number of
	 * this direction), valid when acked_set */
	uint32_t acked;
	uint8_t acked_set;
	uint8_t wide;      /* window FLOW_STREAM_WIDE, not stream_max (wide_ports) */
	uint8_t unsure;    /* a hole in [hole_start, resync) was skipped without the
			    * peer's ACK for it (FIN, RST): the receiver may
			    * not have had those bytes, or may have them yet, so where
			    * the data after it sits in the stream is a guess */
	/* table internal: the numbering is the one the peer took (its SYN-ACK
	 * or its ACK of our SYN-ACK named it); no SYN or SYN-ACK after that
	 * renumbers the direction (a decoy, as Linux ignores it) */
	uint8_t isn_fixed;
	uint8_t syn_n;       /* SYNs sent, of which the last FLOW_SYN_ISNS are kept */
	uint8_t urg_pending; /* urg_off names a pending urgent byte */
	uint8_t memo_next;   /* table internal: the memo entry to overwrite next */
	uint8_t wscale;      /* table internal: 1 + the window scale this direction's
			      * sender asked for in its SYN (RFC 7323); 0: none seen */
	uint8_t win_set : 1; /* table internal: win is known */
	uint8_t syn_data : 1; /* table internal: this direction's SYN carried data */
	uint8_t touched : 1; /* table internal: bytes came since the reclaim sweep
			      * last passed (flow.c, "Reclaim") */
	uint8_t claimed : 1; /* table internal: an analyzer had the flow after the
			      * latest packet (flow_note_claim) */
	uint8_t syn_hold_i;  /* table internal: which SYN (its number among syn_n) the
			      * data held belongs to */
	uint8_t csum_ok;     /* table internal: segments with right checksums in a row,
			      * up to 2 ("Checksums": 2 means the sender computes them) */
	uint32_t syn_isn[FLOW_SYN_ISNS]; /* their ISN + 1, for the SYN-ACK to match */
	/* Data carried by the SYN (see "SYN data"): syn_len bytes held at
	 * buf[0, syn_len), beyond len (0), until the peer says whether it
	 * took them; 0: none held */
	uint32_t syn_len;
	/* table internal: the receive window this direction's sender last
	 * advertised for its peer's data, in bytes (scaled), valid when win_set */
	uint32_t win;
	/* Urgent data (see "Urgent data"): the pending urgent byte's offset,
	 * valid when urg_pending (then urg_off >= len) */
	uint32_t urg_off;
	uint32_t urg_taken;  /* urgent bytes taken out of the stream (isn moved on
			      * by as many, so isn - slid - urg_taken is ISN + 1) */
	/* table internal: bytes below this offset were numbered before the
	 * latest urgent byte was taken out, so a retransmission of them lands
	 * one off: they are not compared (flows.inconsistent) */
	uint32_t aligned;
	/* table internal: the latest segments that brought bytes of the first
	 * window (before any slide), by sequence number, length and a keyed
	 * hash of their bytes, so a copy of one with other bytes is seen
	 * after the analyzer slid the bytes away or finished (flows.inconsistent);
	 * their lengths apart, so that a stream record stays 128 bytes */
	uint16_t memo_len[FLOW_SEG_MEMO];
	struct flow_seg_memo {
		uint32_t seq, hash;
	} memo[FLOW_SEG_MEMO];
};

/*
 * Laid out for the cache: 128 bytes, and the table keeps each flow on a
 * 64-byte boundary. The first line holds what a lookup compares (the tuple)
 * and most of what every packet updates; the second the rest of the
 * per-packet fields. The TCP streams live apart (st), so a UDP or ICMP flow
 * is two cache lines and creating one clears only those.
 */
struct flow {
	uint8_t src[16], dst[16]; /* src is the initiator */
	uint16_t sport, dport;
	uint8_t ipv, proto;
	uint8_t app;          /* enum flow_app */
	uint8_t lru_class;    /* table internal: which LRU list (idle class) */
	uint8_t fin_dirs;     /* table internal: bit d: FIN seen from direction d */
	uint16_t pp_rest;     /* while no analyzer has the flow: the bytes still to
			       * come of a PROXY v2 header at the client stream's
			       * cursor whose first part was passed as it came
			       * (analyzers/proxyproto.h); 0: none */
	uint32_t state;       /* FLOW_* */
	uint64_t last_us;
	uint32_t lru_prev, lru_next; /* table internal: slab index + 1, 0: none */
	uint64_t pkts[2], bytes[2];
	uint64_t id;          /* 1, 2, ... in order of creation */
	uint64_t first_us;
	void *app_state;      /* owned by the analyzer named by app; freed via free()
			       * after on_end (the core: the module's on_flow_end);
			       * with APP_NONE: NULL, or what an analyzer handing the
			       * flow back left for the next (http.c's struct
			       * h2c_upgrade after a 101 to h2c, h2c.h) */
	/* TCP: the two directions, st[0] and st[1] (owned by the table);
	 * NULL for every other protocol. */
	struct flow_stream *st;
};

struct flow_config {
	uint32_t max_flows;     /* default 262144 */
	uint32_t stream_max;    /* bytes per direction, default 16384 */
	uint32_t ooo_max;       /* out-of-order ranges per direction, default 1024 */
	uint64_t stream_total_max; /* all stream buffers together, default 64 MiB */
	uint64_t tcp_idle_us;   /* default 300 s */
	uint64_t udp_idle_us;   /* default 60 s */
	uint64_t closed_idle_us;/* after RST/FIN both ways, default 10 s */
	uint64_t hash_seed;     /* 0: a random seed per table (getentropy) */
	/* TCP flows with either port here get the wide window
	 * (FLOW_STREAM_WIDE) from their first byte: DNS, whose messages may
	 * be 64 KiB and arrive in one segment (offloaded captures); 0 ends;
	 * all zero: the default, 53, 5353 and 5355 */
	uint16_t wide_ports[4];
	/* 1: no direction is widened but on wide_ports: one that starts with
	 * a TLS handshake record (tls_first) or meets an offload's segment
	 * keeps stream_max too (tests of a window shorter than what they
	 * send); 0, the default: they get the wide window (flow.c) */
	uint8_t narrow;
};

struct flow_stats {
	uint64_t created, expired, evicted, active;
	uint64_t stream_bytes;     /* currently held by flows: buffers and ooo range tables */
	uint64_t ooo_dropped;      /* out-of-order segments not held: ooo_max ranges held
				    * already, or no memory (stream_total_max) */
	uint64_t stream_truncated; /* directions that hit stream_max */
	uint64_t stream_far;       /* segments dropped: start >= stream_max past isn */
	uint64_t stream_widened;   /* directions widened for an offload's segment */
	uint64_t stream_released;  /* unclaimed directions released at stream_max */
	uint64_t stream_capped;    /* directions stopped by stream_total_max */
	uint64_t stream_shrunk;    /* widened buffers moved to a smaller one after slides */
	uint64_t stream_reclaimed; /* idle directions whose buffer went to a newer stream
				    * when stream_total_max was full (flow.c, "Reclaim") */
	uint64_t stream_cap_bytes; /* payload bytes not kept because of stream_total_max */
	uint64_t stream_gaps;      /* always 0: holes are skipped now (kept for old readers) */
	uint64_t stream_holes;     /* holes skipped (capture loss), see "Holes" */
	uint64_t rst_ignored;      /* RSTs the connecting stack would drop (no answer) */
	uint64_t urgent;           /* urgent bytes taken out of streams ("Urgent data") */
	uint64_t noack_ignored;    /* segments with data but no ACK (nor SYN, RST): Linux
				    * discards them, so their data is not taken */
	uint64_t syn_data_dropped; /* SYNs whose data the stream did not take ("SYN data") */
	uint64_t inconsistent;     /* segments whose bytes differ from those held for the
				    * same range (a decoy: which copy the receiver took
				    * is not known; Zeek's rexmit_inconsistency) */
	uint64_t bad_checksum;     /* TCP segments ignored for a wrong IP or TCP checksum
				    * in a direction whose checksums are right ("Checksums") */
	uint64_t rx_drop;          /* TCP segments ignored: IP options or extension
				    * headers Linux's receiver refuses (PKT_RX_DROP) */
	uint64_t udp_rx_drop;      /* UDP datagrams whose payload no analyzer read, for
				    * the same reason */
	uint64_t udp_bad_checksum; /* UDP datagrams whose payload no analyzer read: a wrong
				    * IP or UDP checksum from a capture source whose
				    * checksums are computed ("Checksums") */
};

struct flow_table;

/* Called for each flow just before it is freed (expiry, eviction, close,
 * table free). f is borrowed for the call; f->app_state, if still non-NULL
 * afterwards, is then released with free(). May be NULL. */
typedef void (*flow_end_fn)(void *user, struct flow *f);

/*
 * cfg may be NULL for defaults; a zero field also means its default. Limits
 * are clamped: max_flows to [1, 2^24], stream_max to [1, 2^30]. The table
 * keeps on_end and user (borrowed). Returns a table owned by the caller (free
 * with flow_table_free), or NULL when out of memory.
 */
struct flow_table *flow_table_new(const struct flow_config *cfg, flow_end_fn on_end,
				  void *user);
/* Ends every flow (calling on_end) and frees the table. NULL is fine. */
void flow_table_free(struct flow_table *ft);

/*
 * Find or create the flow of p (IP packets with TCP, UDP, ICMP echo or other
 * protocols), set p->flow and p->dir, update counters and TCP state, and for
 * TCP append the payload to the direction's stream (in order, holding
 * out-of-order segments, dropping retransmitted bytes (what is in order
 * stays as it first came); among held out-of-order bytes the copy that
 * starts lower wins (at the same start, the one that reaches further),
 * and a segment arriving in order wins over the held bytes it overlaps,
 * as Linux's receiver takes them (stream_write has the one approximation);
 * skipping holes that
 * will not be filled, see
 * "Holes"; taking out urgent bytes, ignoring segments without ACK and
 * holding SYN data, see "What the receiver reads"). Also expires idle
 * flows by p->ts_us.
 * Streams take TCP payload only (not from RST segments); bytes[] counts L4
 * payload bytes. Returns the flow (owned by the table, valid until a later
 * table call may end it), or NULL when p is not IP (ipv not 4 or 6), is a
 * non-first TCP/UDP/ICMP fragment (no ports to key on), or memory ran out.
 */
struct flow *flow_table_update(struct flow_table *ft, struct pkt *p);

/*
 * Did the last flow_table_update make a SYN's held data the client's stream
 * (a SYN-ACK that acknowledges it: TCP Fast Open)? Then the analyzers must
 * read that direction now, though the packet was the server's and carried
 * nothing (the client may send no more data): 1 once, for that update, and
 * 0 after.
 */
int flow_table_syn_taken(struct flow_table *ft);

/*
 * Warm the caches for the packets about to be processed, from tuple hints
 * (decode_peek_tuple) read one packet ahead: the home slot of t's flow,
 * and the flow in the home slot of the previous hint's (the next packet's)
 * flow. A replay spends much of its flow-table time waiting for those two
 * cache lines. Changes nothing; t may be NULL (no hint).
 */
struct tuple_hint;
void flow_table_prefetch(struct flow_table *ft, const struct tuple_hint *t);

/* Look up without creating (for ICMP errors quoting a flow). key fields as
 * in the quoted header: src/sport is the sender of the quoted packet (for
 * IPv4 only the first 4 bytes of src and dst are read; for a quoted ICMP echo
 * pass the echo id as both ports). Returns the flow and sets *dir (if dir is
 * non-NULL) to 0 when the quoted sender is the initiator, 1 otherwise; NULL
 * when there is no such flow. Never creates, never touches LRU order. */
struct flow *flow_table_find(struct flow_table *ft, uint8_t ipv, uint8_t proto,
			     const uint8_t *src, uint16_t sport, const uint8_t *dst,
			     uint16_t dport, int *dir);

/* End every flow, oldest first, calling on_end (counted as expired); the
 * table stays, empty, with its counters (packet time stepped back: see
 * core_packet). */
void flow_table_end_all(struct flow_table *ft);

/* Expire flows idle at now_us (packet time), oldest first, calling on_end. */
void flow_table_expire(struct flow_table *ft, uint64_t now_us);

/* The analyzer is finished with this direction (0 or 1): free its buffer
 * and held segments, set done; later data for it is ignored. buf becomes
 * NULL (len keeps the count of bytes reassembled). NULL f, or a flow
 * without streams (not TCP), is fine. */
void flow_stream_done(struct flow_table *ft, struct flow *f, int dir);

/*
 * After the analyzers had a packet of f: when no analyzer has claimed f, a
 * direction holding stream_max bytes or more will never be read (every
 * claim looks at the first bytes, which it has seen), so its buffer goes
 * back to stream_total_max now rather than when the flow ends, and the
 * direction is done (flows.stream_released). Not a direction an analyzer
 * read part of (consumed or slid) and handed back: the next one claims at
 * that cursor, which may be anywhere in the window (after an Upgrade to
 * h2c, the server's frames may fill it before the client's preface). Idle connections that filled
 * their windows, widened ones most, would otherwise hold the global cap
 * and leave no buffer for new flows. NULL f, or a flow without streams, is
 * fine.
 */
void flow_release_unread(struct flow_table *ft, struct flow *f);

/* After the analyzers had a packet of f: note whether one has the flow,
 * for the reclaim sweep (flow.c, "Reclaim"), which takes the buffers of
 * the directions no analyzer is in the middle of reading first. NULL f,
 * or a flow without streams, is fine. */
void flow_note_claim(struct flow *f);

/*
 * The analyzer is finished with the bytes before its cursor (st->consumed):
 * drop them from the front of the buffer, and number the stream on from
 * there (isn, len, the held ranges and holes move back by as many; consumed
 * becomes 0). The reassembly window (stream_max) then starts at the cursor,
 * so a direction is followed for as long as the analyzer keeps consuming:
 * DNS over TCP, many messages on one connection, with at most one
 * unfinished message held. A stream that is done, has overflowed (bytes
 * were lost past the window), or has nothing consumed is left as it is.
 */
void flow_stream_slide(struct flow_stream *st);

/*
 * The window of a TCP flow on one of cfg.wide_ports (DNS over TCP: up to
 * 65535 bytes after a 2-byte length, where stream_max is 16 KiB), or
 * stream_max when that is larger: room for the rest of one whole message
 * and the segment that brings more (at most 64 KiB), so the message comes
 * whole instead of cut at stream_max. The global cap (stream_total_max)
 * still bounds what all streams hold.
 */
#define FLOW_STREAM_WIDE (128u * 1024u + 4096u)

/* More TCP payload than a segment crossing an Ethernet of 1,500-byte MTU
 * carries: a segment larger is an offload's (TSO/GSO, GRO, loopback's
 * 64 KiB MTU) or a jumbo frame's, which may take a direction's window to
 * FLOW_STREAM_WIDE (flow.c, stream_add). (A 9,000-byte GSO segment landing
 * on 7.9 KB of a pending head was cut when the bound was 9,216.) */
#define FLOW_SEG_WIRE_MAX 1460u

/* "The first bytes of a direction" for that widening: a segment starting
 * within them, before any slide (behind a PROXY protocol header or a
 * STARTTLS command line: a ClientHello of 21 KB in one segment after a
 * PROXY line of its own was cut when only offset 0 counted). */
#define FLOW_FIRST_BYTES 4096u

/*
 * The bytes direction st of a flow in ft may hold before it overflows
 * (stream_max, or FLOW_STREAM_WIDE on a wide port or after a TLS record
 * start): an analyzer that slides
 * its window (flow_stream_slide) asks it to know whether what it waits for
 * can still come whole. NULL ft: stream_max's default.
 */
uint32_t flow_stream_window(const struct flow_table *ft, const struct flow_stream *st);

/*
 * How far an analyzer whose cursor is at `from` (normally st->consumed) may
 * read without crossing a skipped hole: st->hole_start when a recorded hole
 * lies at or after from (from < st->resync), else st->len. When it returns
 * from itself, the analyzer is at a hole: it drops what it was parsing and
 * continues at st->resync.
 */
static inline uint32_t flow_stream_avail(const struct flow_stream *st, uint32_t from)
{
	if (st->holes && from < st->resync)
		return from < st->hole_start ? st->hole_start : from;
	return st->len;
}

/* Counters (borrowed; live as long as the table). */
const struct flow_stats *flow_table_stats(const struct flow_table *ft);

/* Could direction dir's sender of TCP flow f have sent a segment with
 * sequence number seq (its SYN, or a byte it sent)? 1 when not known (no
 * SYN seen, not TCP). */
int flow_seq_sent(const struct flow *f, int dir, uint32_t seq);

#endif
