/*
 * core.c - the packet path of core.h.
 *
 * core_packet() decodes a frame, files it in the flow table, offers it to
 * every analyzer whose selection matches, and hands each observation an
 * analyzer emits to the store (as an event) and to the detectors that asked
 * for its kind. Module results are counted per module; nothing here exits or
 * prints per packet.
 *
 * Which modules see a packet depends only on its class (protocol, whether it
 * starts a connection, whether it has payload) and which see an observation
 * only on its kind, so core_open works both out once into per-class and
 * per-kind lists of module indices (in registry order), and the packet path
 * walks a list instead of testing every module's selection.
 */
#include "core.h"

#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alerts.h"
#include "copies.h"
#include "log.h"
#include "rules.h"
#include "text.h"

#define TICK_US 1000000u /* detectors' on_tick period, packet time */
#define RESTARTS_TOLD 10 /* restarts said in the log; the rest are counted */

/* Packet classes for dispatch (pkt_class): the inputs of core_selected. */
enum {
	PC_UDP,           /* UDP, no payload */
	PC_UDP_PAYLOAD,
	PC_TCP,           /* TCP, not a connection start, no payload */
	PC_TCP_PAYLOAD,
	PC_TCP_SYN,       /* SYN without ACK */
	PC_TCP_SYN_PAYLOAD,
	PC_TCP_END,       /* FIN or RST, not SYN, no payload */
	PC_ICMP,          /* ICMP or ICMPv6 */
	PC_OTHER,
	PC_N
};

/* A list of module indices, in registry order. */
struct mod_list {
	uint8_t n;
	uint8_t idx[CORE_MAX_MODULES];
};

struct core {
	struct decoder *dec;
	struct flow_table *flows;
	struct store *store;
	struct alerts *alerts;
	struct rules *own_rules; /* rules_default() when the caller gave none */
	const char *db_path;
	void *mod_state[CORE_MAX_MODULES];
	const struct rules *rules; /* in force (borrowed, or own_rules) */
	unsigned n_modules;
	struct mod_list by_class[PC_N];       /* analyzers per packet class */
	struct mod_list by_kind[OBS_KIND_MAX]; /* detectors per observation kind */
	struct mod_list flow_end;             /* modules told when a flow ends */
	struct mod_list flow_left;            /* ... and asked for what it left unread */
	struct emit emit;
	uint64_t next_tick_us;
	uint64_t clock_us;       /* the newest packet time since the last restart */
	uint64_t restart_pkts;   /* packets since then */
	unsigned back_run;       /* packets in a row more than CORE_CLOCK_BACK_US back */
	int input_start;         /* core_input_start(): the next packet starts an input */
	struct core_stats stats;
	int finished;              /* core_finish() has run */
	struct flow_stats final_fs; /* the flow table's counters at core_finish() */
	/* the datagrams of the last second (copies.h), with core_config.copies:
	 * made at the first datagram */
	struct copies *copies;
	int copies_on;     /* core_config.copies */
};

static int core_emit_obs(struct emit *e, const struct obs *o);
static void core_flow_end(void *user, struct flow *f);
static int core_emit_alert(struct emit *e, const struct alert *a);
static void core_build_dispatch(struct core *c);
static void core_lost_frags(struct core *c, uint64_t ts_us, uint32_t iface);
static int core_deliver(struct core *c, struct pkt *p, uint32_t iface);

const char *core_kind_name(enum obs_kind k)
{
	switch (k) {
	case OBS_DNS_QUERY:
	case OBS_DNS_ANSWER:
		return "dns";
	case OBS_HTTP_REQUEST:
	case OBS_HTTP_RESPONSE:
		return "http";
	case OBS_TLS_CLIENT_HELLO:
	case OBS_TLS_SERVER_HELLO:
		return "tls";
	case OBS_ICMP:
		return "icmp";
	default:
		return "unknown";
	}
}

int core_open(struct core **out, const struct core_config *cfg, char *err, size_t errlen)
{
	struct core *c;
	struct module_env env = {0};
	int rc = -1;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	c->emit.obs = core_emit_obs;
	c->emit.alert = core_emit_alert;
	c->emit.core = c;
	c->db_path = cfg->db_path;
	c->copies_on = cfg->copies;
	c->dec = decoder_new(&cfg->decode);
	c->flows = flow_table_new(&cfg->flow, core_flow_end, c);
	if (!cfg->rules)
		c->own_rules = rules_default();
	env.rules = cfg->rules ? cfg->rules : c->own_rules;
	c->rules = env.rules;
	if (!c->dec || !c->flows || !env.rules) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (cfg->db_path && store_open(&c->store, cfg->db_path, &cfg->store, err, errlen) < 0)
		goto fail;
	c->alerts = alerts_new(c->store, (uint64_t)env.rules->t.suppress_s * 1000000u, 0);
	if (!c->alerts) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	env.flows = c->flows;
	for (unsigned i = 0; modules[i]; i++) {
		if (i >= CORE_MAX_MODULES) {
			snprintf(err, errlen, "too many modules (at most %d)", CORE_MAX_MODULES);
			goto fail;
		}
		c->n_modules = i + 1;
		if (modules[i]->init) {
			int r = modules[i]->init(&env, &c->mod_state[i]);
			if (r < 0) {
				snprintf(err, errlen, "module %s: %s", modules[i]->name,
					 strerror(-r));
				goto fail;
			}
		}
	}
	core_build_dispatch(c);
	*out = c;
	rc = 0;
	goto out;
fail:
	core_close(c);
out:
	return rc;
}

static void core_write_stats(struct core *c, const struct flow_stats *fs)
{
	const struct decode_stats *ds = decode_stats(c->dec);
	char name[96];

	store_put_stat(c->store, "packets", (int64_t)c->stats.packets);
	store_put_stat(c->store, "bytes", (int64_t)c->stats.bytes);
	store_put_stat(c->store, "first_ts_us", (int64_t)c->stats.first_ts_us);
	store_put_stat(c->store, "last_ts_us", (int64_t)c->stats.last_ts_us);
	store_put_stat(c->store, "time_restarts", (int64_t)c->stats.time_restarts);
	store_put_stat(c->store, "decode.not_ip", (int64_t)ds->not_ip);
	for (int l = 0; l < L_COUNT; l++) {
		const char *ln = decode_layer_name((enum decode_layer)l);
		snprintf(name, sizeof(name), "decode.%s.ok", ln);
		store_put_stat(c->store, name, (int64_t)ds->ok[l]);
		snprintf(name, sizeof(name), "decode.%s.truncated", ln);
		store_put_stat(c->store, name, (int64_t)ds->truncated[l]);
		snprintf(name, sizeof(name), "decode.%s.malformed", ln);
		store_put_stat(c->store, name, (int64_t)ds->malformed[l]);
	}
	store_put_stat(c->store, "fragments.held", (int64_t)ds->frag_held);
	store_put_stat(c->store, "fragments.reassembled", (int64_t)ds->frag_done);
	store_put_stat(c->store, "fragments.expired", (int64_t)ds->frag_expired);
	store_put_stat(c->store, "fragments.evicted", (int64_t)ds->frag_evicted);
	store_put_stat(c->store, "fragments.overlap", (int64_t)ds->frag_overlap);
	store_put_stat(c->store, "fragments.duplicate", (int64_t)ds->frag_duplicate);
	store_put_stat(c->store, "fragments.conflict", (int64_t)ds->frag_conflict);
	store_put_stat(c->store, "fragments.bad_checksum", (int64_t)ds->frag_bad_checksum);
	store_put_stat(c->store, "fragments.linux_discard", (int64_t)ds->frag_linux_discard);
	store_put_stat(c->store, "fragments.linux_view", (int64_t)ds->frag_linux_view);
	store_put_stat(c->store, "fragments.linux_same", (int64_t)ds->frag_linux_same);
	store_put_stat(c->store, "fragments.linux_lost", (int64_t)ds->frag_linux_lost);
	store_put_stat(c->store, "fragments.linux_far", (int64_t)ds->frag_linux_far);
	store_put_stat(c->store, "fragments.trimmed", (int64_t)ds->frag_trimmed);
	store_put_stat(c->store, "fragments.chain_cut", (int64_t)ds->frag_chain_cut);
	store_put_stat(c->store, "fragments.rx_drop", (int64_t)ds->frag_rx_drop);
	store_put_stat(c->store, "copies.skipped", (int64_t)c->stats.copies);
	store_put_stat(c->store, "flows.created", (int64_t)fs->created);
	store_put_stat(c->store, "flows.active", (int64_t)fs->active);
	store_put_stat(c->store, "flows.expired", (int64_t)fs->expired);
	store_put_stat(c->store, "flows.evicted", (int64_t)fs->evicted);
	store_put_stat(c->store, "flows.rst_ignored", (int64_t)fs->rst_ignored);
	store_put_stat(c->store, "flows.urgent", (int64_t)fs->urgent);
	store_put_stat(c->store, "flows.noack_ignored", (int64_t)fs->noack_ignored);
	store_put_stat(c->store, "flows.syn_data_dropped", (int64_t)fs->syn_data_dropped);
	store_put_stat(c->store, "flows.inconsistent", (int64_t)fs->inconsistent);
	store_put_stat(c->store, "flows.bad_checksum", (int64_t)fs->bad_checksum);
	store_put_stat(c->store, "flows.rx_drop", (int64_t)fs->rx_drop);
	store_put_stat(c->store, "flows.udp_bad_checksum", (int64_t)fs->udp_bad_checksum);
	store_put_stat(c->store, "flows.udp_rx_drop", (int64_t)fs->udp_rx_drop);
	store_put_stat(c->store, "flows.stream_capped", (int64_t)fs->stream_capped);
	store_put_stat(c->store, "flows.ooo_dropped", (int64_t)fs->ooo_dropped);
	store_put_stat(c->store, "flows.stream_reclaimed", (int64_t)fs->stream_reclaimed);
	for (int k = 0; k < AC_COUNT; k++) {
		snprintf(name, sizeof(name), "alerts.%s", alerts_class_name(k));
		store_put_stat(c->store, name, (int64_t)c->stats.alerts_by_class[k]);
	}
	for (unsigned i = 0; i < c->n_modules; i++) {
		const struct mod_counts *m = &c->stats.mod[i];
		snprintf(name, sizeof(name), "module.%s.ok", modules[i]->name);
		store_put_stat(c->store, name, (int64_t)m->ok);
		snprintf(name, sizeof(name), "module.%s.truncated", modules[i]->name);
		store_put_stat(c->store, name, (int64_t)m->truncated);
		snprintf(name, sizeof(name), "module.%s.malformed", modules[i]->name);
		store_put_stat(c->store, name, (int64_t)m->malformed);
		for (unsigned k = 0; k < m->n_own; k++) {
			snprintf(name, sizeof(name), "module.%s.%s", modules[i]->name,
				 m->own[k].name);
			store_put_stat(c->store, name, (int64_t)m->own[k].value);
		}
	}
	static const char *const obs_names[OBS_KIND_MAX] = {
		[OBS_DNS_QUERY] = "dns_query", [OBS_DNS_ANSWER] = "dns_response",
		[OBS_HTTP_REQUEST] = "http_request", [OBS_HTTP_RESPONSE] = "http_response",
		[OBS_TLS_CLIENT_HELLO] = "tls_client_hello",
		[OBS_TLS_SERVER_HELLO] = "tls_server_hello", [OBS_ICMP] = "icmp",
	};
	for (int k = 1; k < OBS_KIND_MAX; k++) {
		snprintf(name, sizeof(name), "events.%s", obs_names[k]);
		store_put_stat(c->store, name, (int64_t)c->stats.events[k]);
	}
	store_put_stat(c->store, "events.malformed", (int64_t)c->stats.events_malformed);
	store_put_stat(c->store, "alerts.detections", (int64_t)c->stats.alerts);
	const struct store_stats *ss = store_get_stats(c->store);
	store_put_stat(c->store, "store.events", (int64_t)ss->events);
	store_put_stat(c->store, "store.errors", (int64_t)ss->errors);
	store_put_stat(c->store, "store.dropped", (int64_t)ss->dropped);
	store_put_stat(c->store, "store.queue_bytes", (int64_t)ss->queue_bytes);
	store_put_stat(c->store, "store.queue_waits", (int64_t)ss->queue_waits);
	store_put_stat(c->store, "store.expired", (int64_t)ss->expired);
}

/* Read each module's own counters (module.counters) into c->stats. */
static void core_read_counters(struct core *c)
{
	for (unsigned i = 0; i < c->n_modules; i++) {
		struct mod_counts *m = &c->stats.mod[i];
		unsigned n = modules[i]->counters
				     ? modules[i]->counters(c->mod_state[i], m->own)
				     : 0;
		m->n_own = n < MOD_COUNTERS_MAX ? n : MOD_COUNTERS_MAX;
	}
}

void core_write_counters(struct core *c)
{
	if (c->finished)
		return; /* written for the last time by core_finish() */
	core_read_counters(c);
	alerts_refresh(c->alerts);
	if (!c->store)
		return;
	memcpy(c->stats.alerts_by_class, alerts_get_stats(c->alerts)->by_class,
	       sizeof(c->stats.alerts_by_class));
	core_write_stats(c, flow_table_stats(c->flows));
}

int core_finish(struct core *c)
{
	if (!c || c->finished)
		return 0;
	c->finished = 1;
	/* Datagrams still waiting for fragments never will: judged first. */
	core_end_input(c);
	if (c->flows)
		c->final_fs = *flow_table_stats(c->flows);
	/* Flows end first: analyzers may still emit from their flow state. */
	flow_table_free(c->flows);
	c->flows = NULL;
	copies_free(c->copies);
	c->copies = NULL;
	core_read_counters(c); /* their last values, before the state goes */
	for (unsigned i = 0; i < c->n_modules; i++)
		if (modules[i]->fini)
			modules[i]->fini(c->mod_state[i]);
	/* Freeing the alert table writes each open row's final state. */
	if (c->alerts) {
		c->stats.alert_rows = alerts_get_stats(c->alerts)->rows;
		memcpy(c->stats.alerts_by_class, alerts_get_stats(c->alerts)->by_class,
		       sizeof(c->stats.alerts_by_class));
	}
	alerts_free(c->alerts);
	c->alerts = NULL;
	if (!c->store)
		return 0;
	/* Commit the events first, so that store.events counts them all. */
	int rc = store_flush(c->store);
	core_write_stats(c, &c->final_fs);
	return store_flush(c->store) < 0 || rc < 0 ? -1 : 0;
}

int core_close(struct core *c)
{
	int rc = 0;

	if (!c)
		return 0;
	if (core_finish(c) < 0)
		rc = -1;
	if (c->store && store_close(c->store) < 0)
		rc = -1;
	decoder_free(c->dec);
	rules_free(c->own_rules);
	free(c);
	return rc;
}

/* Does packet p fall in a module's selection? */
static int core_selected(unsigned sel, const struct pkt *p)
{
	int conn_start;

	if (sel & SEL_ALL)
		return 1;
	switch (p->proto) {
	case IPPROTO_UDP:
		if (!(sel & (SEL_UDP | SEL_CONN_START)))
			return 0;
		conn_start = 1;
		break;
	case IPPROTO_TCP:
		if (!(sel & (SEL_TCP | SEL_CONN_START)))
			return 0;
		conn_start = (p->tcp_flags & (TH_SYN | TH_ACK)) == TH_SYN;
		break;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		return (sel & SEL_ICMP) != 0;
	default:
		return 0;
	}
	if ((sel & SEL_CONN_START) && conn_start)
		return 1;
	if (!(sel & (SEL_UDP | SEL_TCP)))
		return 0;
	if (p->proto == IPPROTO_UDP && !(sel & SEL_UDP))
		return 0;
	if (p->proto == IPPROTO_TCP && !(sel & SEL_TCP))
		return 0;
	if ((sel & SEL_PAYLOAD) && p->payload_len == 0 &&
	    !((sel & SEL_TCP_END) && p->proto == IPPROTO_TCP && !(p->tcp_flags & TH_SYN) &&
	      (p->tcp_flags & (TH_FIN | TH_RST))))
		return 0;
	return 1;
}

/* The dispatch class of packet p (the inputs of core_selected). */
static unsigned pkt_class(const struct pkt *p)
{
	unsigned pay = p->payload_len != 0;

	if (p->flags & PKT_L4_BAD)
		return PC_OTHER; /* no header to dispatch on: SEL_ALL only */
	switch (p->proto) {
	case IPPROTO_UDP:
		return PC_UDP + pay;
	case IPPROTO_TCP:
		if ((p->tcp_flags & (TH_SYN | TH_ACK)) == TH_SYN)
			return PC_TCP_SYN + pay;
		if (!pay && !(p->tcp_flags & TH_SYN) && (p->tcp_flags & (TH_FIN | TH_RST)))
			return PC_TCP_END;
		return PC_TCP + pay;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		return PC_ICMP;
	default:
		return PC_OTHER;
	}
}

/* Work out by_class and by_kind from every module's sel and obs_mask, by
 * asking core_selected about one representative packet per class. */
static void core_build_dispatch(struct core *c)
{
	static const struct {
		uint8_t proto, tcp_flags;
		uint32_t payload_len;
	} rep[PC_N] = {
		[PC_UDP] = {IPPROTO_UDP, 0, 0},
		[PC_UDP_PAYLOAD] = {IPPROTO_UDP, 0, 1},
		[PC_TCP] = {IPPROTO_TCP, TH_ACK, 0},
		[PC_TCP_PAYLOAD] = {IPPROTO_TCP, TH_ACK, 1},
		[PC_TCP_SYN] = {IPPROTO_TCP, TH_SYN, 0},
		[PC_TCP_SYN_PAYLOAD] = {IPPROTO_TCP, TH_SYN, 1},
		[PC_TCP_END] = {IPPROTO_TCP, TH_ACK | TH_FIN, 0},
		[PC_ICMP] = {IPPROTO_ICMP, 0, 0},
		[PC_OTHER] = {IPPROTO_GRE, 0, 1},
	};

	memset(c->by_class, 0, sizeof(c->by_class));
	memset(c->by_kind, 0, sizeof(c->by_kind));
	for (unsigned pc = 0; pc < PC_N; pc++) {
		struct pkt p;
		memset(&p, 0, sizeof(p));
		p.proto = rep[pc].proto;
		p.tcp_flags = rep[pc].tcp_flags;
		p.payload_len = rep[pc].payload_len;
		for (unsigned i = 0; i < c->n_modules; i++)
			if (modules[i]->on_packet && core_selected(modules[i]->sel, &p))
				c->by_class[pc].idx[c->by_class[pc].n++] = (uint8_t)i;
	}
	for (unsigned k = 1; k < OBS_KIND_MAX; k++)
		for (unsigned i = 0; i < c->n_modules; i++)
			if (modules[i]->on_obs && (modules[i]->obs_mask & (1u << k)))
				c->by_kind[k].idx[c->by_kind[k].n++] = (uint8_t)i;
	c->flow_end.n = c->flow_left.n = 0;
	for (unsigned i = 0; i < c->n_modules; i++) {
		if (modules[i]->on_flow_end)
			c->flow_end.idx[c->flow_end.n++] = (uint8_t)i;
		if (modules[i]->on_flow_left)
			c->flow_left.idx[c->flow_left.n++] = (uint8_t)i;
	}
}

static void core_count(struct mod_counts *m, int r)
{
	switch (r) {
	case MOD_OK:
		m->ok++;
		break;
	case MOD_NOT_MINE:
		m->not_mine++;
		break;
	case MOD_TRUNCATED:
		m->truncated++;
		break;
	case MOD_MALFORMED:
		m->malformed++;
		break;
	default:
		m->failed++;
		break;
	}
}

/* A flow ends (expiry, eviction, close, a time restart, the end of the
 * run): the analyzer that claimed it reports what it left unread, as a
 * packet of the flow's client at the flow's last time; then the alerts
 * let go of it and the modules free their state. */
static void core_flow_end(void *user, struct flow *f)
{
	struct core *c = user;
	if (f->app != APP_NONE && f->st && c->flow_left.n) {
		struct pkt q;
		memset(&q, 0, sizeof(q));
		q.ts_us = f->last_us;
		q.ipv = f->ipv;
		q.proto = f->proto;
		memcpy(q.src, f->src, sizeof(q.src));
		memcpy(q.dst, f->dst, sizeof(q.dst));
		q.sport = f->sport;
		q.dport = f->dport;
		q.flow = f;
		for (unsigned k = 0; k < c->flow_left.n; k++) {
			unsigned i = c->flow_left.idx[k];
			int r = modules[i]->on_flow_left(c->mod_state[i], f, &q, &c->emit);
			if (r != MOD_NOT_MINE)
				core_count(&c->stats.mod[i], r);
		}
	}
	alerts_flow_end(c->alerts, f);
	for (unsigned k = 0; k < c->flow_end.n; k++) {
		unsigned i = c->flow_end.idx[k];
		modules[i]->on_flow_end(c->mod_state[i], f);
	}
}

static void core_tick(struct core *c, uint64_t now_us)
{
	alerts_tick(c->alerts, now_us);
	for (unsigned i = 0; i < c->n_modules; i++)
		if (modules[i]->on_tick)
			modules[i]->on_tick(c->mod_state[i], now_us, &c->emit);
}

/*
 * IP datagrams the fragment table gave up on (decode_frag_lost): each goes
 * to the modules that judge every IP packet (the egress policy) as a packet
 * flagged PKT_FRAGMENT | PKT_L4_BAD, with no flow and no payload, at the
 * time it was given up.
 */
static void core_lost_frags(struct core *c, uint64_t ts_us, uint32_t iface)
{
	struct pkt_hop h;

	while (decode_frag_lost(c->dec, &h)) {
		struct pkt p;
		const struct mod_list *l = &c->by_class[PC_OTHER];

		memset(&p, 0, sizeof(p));
		p.ts_us = ts_us;
		p.ipv = h.ipv;
		p.proto = h.proto;
		p.sport = h.sport;
		p.dport = h.dport;
		memcpy(p.src, h.src, sizeof(p.src));
		memcpy(p.dst, h.dst, sizeof(p.dst));
		p.flags = PKT_FRAGMENT | PKT_L4_BAD;
		p.iface = iface;
		for (unsigned k = 0; k < l->n; k++) {
			unsigned i = l->idx[k];
			core_count(&c->stats.mod[i], modules[i]->on_packet(c->mod_state[i], &p, &c->emit));
		}
	}
}

/*
 * Packet time went back from c->clock_us to ts_us, by more than
 * CORE_CLOCK_BACK_US (core_packet): unless it is folded in (a lone packet,
 * the start of a run not yet CORE_CLOCK_BACK_RUN long, the rate limit of
 * core.h), end what was open and start the detectors, the alert rows and
 * the tick afresh, as core_finish and core_open would, keeping the store,
 * the counters and the analyzers (whose state is all in the flows).
 */
static void core_restart(struct core *c, uint64_t ts_us)
{
	char from[40], to[40], err[256];

	if (!c->input_start && (c->back_run < CORE_CLOCK_BACK_RUN ||
				(c->stats.time_restarts >= CORE_RESTARTS_FREE &&
				 c->restart_pkts < CORE_RESTART_MIN_PACKETS))) {
		c->stats.time_folded++;
		return;
	}
	c->stats.time_restarts++;
	if (c->stats.time_restarts <= RESTARTS_TOLD) {
		text_time(from, sizeof(from), c->clock_us);
		text_time(to, sizeof(to), ts_us);
		log_warn("core", "packet time went back %" PRIu64 " s, from %s to %s: flows, "
				 "detector windows and alert rows start over%s",
			 (c->clock_us - ts_us) / 1000000u, from, to,
			 c->stats.time_restarts == RESTARTS_TOLD ? " (said no more; counted)" : "");
	}
	core_end_input(c);
	flow_table_end_all(c->flows);
	alerts_close_all(c->alerts);
	if (core_set_rules(c, c->rules, err, sizeof(err)) < 0)
		log_err("core", "detectors kept their state: %s", err);
	c->next_tick_us = 0;
	c->clock_us = ts_us;
	c->restart_pkts = 0;
	c->back_run = 0;
}

void core_input_start(struct core *c)
{
	if (c)
		c->input_start = 1;
}

/*
 * The SYN-ACK p acknowledged the data its SYN carried (TCP Fast Open), so
 * that data is now the client's stream (flow.c held it until then): the
 * analyzers read it as if the SYN had just brought it, from a copy of p
 * turned around, before p itself (the server's answer comes after the
 * request). The client may send no more data, so this is its only turn.
 */
static void core_syn_data(struct core *c, const struct pkt *p)
{
	const struct flow_stream *st = &p->flow->st[!p->dir];
	struct pkt q = pkt_turned(p);

	if (!st->buf || !st->len)
		return;
	q.tcp_flags = TH_SYN;
	q.seq = st->isn;
	q.ack = 0;
	q.payload = st->buf;
	q.payload_len = st->len;
	q.l4 = NULL;
	q.l4_len = 0;
	q.flags &= ~(uint32_t)PKT_SHORT;
	const struct mod_list *l = &c->by_class[pkt_class(&q)];
	for (unsigned k = 0; k < l->n; k++) {
		unsigned i = l->idx[k];
		core_count(&c->stats.mod[i], modules[i]->on_packet(c->mod_state[i], &q, &c->emit));
	}
}

/*
 * With core_config.copies, a UDP, ICMP or ICMPv6 datagram that another
 * capture source already gave (copies.h): 1, and the packet is skipped.
 * TCP is left to the flow table, which takes a second copy's bytes as a
 * retransmission. Out of memory: every copy is read.
 */
static int core_copy(struct core *c, const struct pkt *p, uint32_t iface)
{
	if (!c->copies_on ||
	    (p->proto != IPPROTO_UDP && p->proto != IPPROTO_ICMP && p->proto != IPPROTO_ICMPV6))
		return 0;
	if (!c->copies && !(c->copies = copies_new()))
		return 0;
	return copies_seen(c->copies, p, iface);
}

void core_packet(struct core *c, int dlt, uint64_t ts_us, const uint8_t *data,
		 uint32_t caplen, uint32_t wirelen, uint32_t iface)
{
	struct pkt p;
	enum decode_result dr;

	c->stats.packets++;
	c->stats.bytes += wirelen;
	if (!c->stats.first_ts_us)
		c->stats.first_ts_us = ts_us;
	if (ts_us > c->stats.last_ts_us)
		c->stats.last_ts_us = ts_us;
	if (ts_us >= c->clock_us) {
		c->clock_us = ts_us;
		c->back_run = 0;
	} else if (c->clock_us - ts_us > CORE_CLOCK_BACK_US) {
		c->back_run++;
		core_restart(c, ts_us);
	} else {
		c->back_run = 0;
	}
	c->input_start = 0;
	c->restart_pkts++;

	dr = decode_packet(c->dec, dlt, data, caplen, wirelen, ts_us, &p);
	core_lost_frags(c, ts_us, iface);
	if (dr != DECODE_OK)
		return;
	if (core_deliver(c, &p, iface))
		return;
	/* the datagram Linux's receiver reassembles from the same fragment,
	 * when it is another (decode.h, decode_next): rare */
	while (decode_next(c->dec, &p) == DECODE_OK) {
		core_lost_frags(c, ts_us, iface);
		core_deliver(c, &p, iface);
	}

	if (ts_us >= c->next_tick_us) {
		if (c->next_tick_us)
			core_tick(c, ts_us);
		c->next_tick_us = ts_us + TICK_US;
	}
}

/* One decoded packet (or reassembled datagram): the flow table, then the
 * analyzers of its class. 1 when it was a copy from another source
 * (copies.h), skipped. */
static int core_deliver(struct core *c, struct pkt *p, uint32_t iface)
{
	if (core_copy(c, p, iface)) {
		c->stats.copies++;
		return 1;
	}
	p->iface = iface;
	p->flow = NULL;
	p->dir = 0;
	/* A packet whose transport header could not be read joins no flow:
	 * its ports, if any, are not a connection's. */
	if (!(p->flags & PKT_L4_BAD))
		flow_table_update(c->flows, p);
	if (p->flow && flow_table_syn_taken(c->flows))
		core_syn_data(c, p);

	const struct mod_list *l = &c->by_class[pkt_class(p)];
	for (unsigned k = 0; k < l->n; k++) {
		unsigned i = l->idx[k];
		core_count(&c->stats.mod[i], modules[i]->on_packet(c->mod_state[i], p, &c->emit));
	}
	/* a window no analyzer will read goes back to the global cap */
	if (p->flow && p->payload_len && p->flow->app == APP_NONE)
		flow_release_unread(c->flows, p->flow);
	flow_note_claim(p->flow); /* for the reclaim sweep */
	return 0;
}

void core_end_input(struct core *c)
{
	if (!c || !c->dec)
		return;
	while (decode_frag_pending(c->dec)) {
		decode_frag_give_up(c->dec);
		core_lost_frags(c, c->stats.last_ts_us, 0);
	}
}

void core_prefetch(struct core *c, int dlt, const uint8_t *data, uint32_t caplen)
{
	struct tuple_hint t;

	flow_table_prefetch(c->flows, decode_peek_tuple(dlt, data, caplen, &t) ? &t : NULL);
}

static int core_emit_obs(struct emit *e, const struct obs *o)
{
	struct core *c = e->core;
	uint64_t flow_id = o->pkt && o->pkt->flow ? o->pkt->flow->id : 0;

	if (o->kind > 0 && o->kind < OBS_KIND_MAX)
		c->stats.events[o->kind]++;
	if (o->flags & OBS_F_MALFORMED)
		c->stats.events_malformed++;
	if (c->store && store_event(c->store, o, flow_id) < 0)
		c->stats.store_errors++;
	if (o->kind <= 0 || o->kind >= OBS_KIND_MAX)
		return 0;
	const struct mod_list *l = &c->by_kind[o->kind];
	for (unsigned k = 0; k < l->n; k++)
		if (modules[l->idx[k]]->prefetch)
			modules[l->idx[k]]->prefetch(c->mod_state[l->idx[k]], o);
	for (unsigned k = 0; k < l->n; k++) {
		unsigned i = l->idx[k];
		core_count(&c->stats.mod[i], modules[i]->on_obs(c->mod_state[i], o, e));
	}
	return 0;
}

static int core_emit_alert(struct emit *e, const struct alert *a)
{
	struct core *c = e->core;
	uint64_t now = a->pkt ? a->pkt->ts_us : c->stats.last_ts_us;

	c->stats.alerts++;
	return alerts_raise(c->alerts, a, now);
}

int core_flush(struct core *c)
{
	return c->store ? store_flush(c->store) : 0;
}

void core_put_stat(struct core *c, const char *name, int64_t value)
{
	if (c->store)
		store_put_stat(c->store, name, value);
}

const struct core_stats *core_stats(const struct core *c)
{
	return &c->stats;
}

const struct decode_stats *core_decode_stats(const struct core *c)
{
	return decode_stats(c->dec);
}

const struct flow_stats *core_flow_stats(const struct core *c)
{
	return c->flows ? flow_table_stats(c->flows) : &c->final_fs;
}

const struct store_stats *core_store_stats(const struct core *c)
{
	return c->store ? store_get_stats(c->store) : NULL;
}

void core_alert_counts(const struct core *c, uint64_t by_class[14])
{
	memcpy(by_class, c->alerts ? alerts_get_stats(c->alerts)->by_class : c->stats.alerts_by_class,
	       sizeof(uint64_t) * AC_COUNT);
}

static int core_is_detector(const struct module *m)
{
	return m->on_obs || strncmp(m->name, "detect_", 7) == 0;
}

int core_set_rules(struct core *c, const struct rules *rules, char *err, size_t errlen)
{
	struct module_env env = {.rules = rules, .flows = c->flows};
	void *fresh[CORE_MAX_MODULES] = {0};

	/* Initialise every detector with the new rules first, so a failure
	 * leaves the old ones running. */
	for (unsigned i = 0; i < c->n_modules; i++) {
		const struct module *m = modules[i];
		if (!core_is_detector(m) || !m->init)
			continue;
		int r = m->init(&env, &fresh[i]);
		if (r < 0) {
			snprintf(err, errlen, "module %s: %s", m->name, strerror(-r));
			for (unsigned j = 0; j < i; j++)
				if (fresh[j] && modules[j]->fini)
					modules[j]->fini(fresh[j]);
			return -1;
		}
	}
	for (unsigned i = 0; i < c->n_modules; i++) {
		const struct module *m = modules[i];
		if (!core_is_detector(m) || !m->init)
			continue;
		if (m->fini)
			m->fini(c->mod_state[i]);
		c->mod_state[i] = fresh[i];
	}
	c->rules = rules;
	alerts_set_window(c->alerts, (uint64_t)rules->t.suppress_s * 1000000u);
	return 0;
}
