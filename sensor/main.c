/*
 * main.c - the egresswatch command line: replay, watch, serve, events, alerts.
 *
 * Exit status (architecture.md section 2): 0 on success, 1 on a runtime
 * failure (including a capture file damaged part-way: everything before the
 * damage is kept), 2 on a usage or input error; always with one line on
 * stderr naming the file at fault.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <ldns/ldns.h>
#include <libpsl.h>
#include <microhttpd.h>
#include <openssl/crypto.h>
#include <pcap/pcap.h>
#include <sodium.h>
#include <sqlite3.h>
#include <yaml.h>
#include <zlib.h>
#include <zstd.h>

#include "analyzers/module.h"
#include "api/eve.h"
#include "api/query.h"
#include "api/server.h"
#include "sensor/capture.h"
#include "sensor/core.h"
#include "sensor/daemon.h"
#include "sensor/inputs.h"
#include "sensor/decode.h"
#include "sensor/alerts.h"
#include "sensor/log.h"
#include "sensor/reader.h"
#include "sensor/rules.h"
#include "sensor/store.h"
#include "sensor/sync.h"
#include "sensor/instream.h"
#include "sensor/text.h"

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2
#define MAX_IFACES 16
#define DEFAULT_DB "egresswatch.db"

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t reload_requested;

static void on_hup_signal(int sig)
{
	(void)sig;
	reload_requested = 1;
}

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}


static void usage_main(FILE *f)
{
	fputs("usage: egresswatch COMMAND [OPTIONS]\n"
	      "\n"
	      "Network egress monitoring for AI-agent sandboxes.\n"
	      "\n"
	      "commands:\n"
	      "  replay [-c RULES] [-d DB] [-f BPF] [--from TIME] [--to TIME] [--eve FILE] [-q]\n"
	      "         [--merge] [--no-progress] [--no-store] PCAP...\n"
	      "                                  replay capture files into the database; prints a summary\n"
	      "  watch  [-c RULES] [-d DB] -i IFACE [-i IFACE]... [-f BPF] [-B MB] [-s SNAPLEN]\n"
	      "         [--immediate] [--retain DURATION] [--eve FILE] [--api ADDR:PORT\n"
	      "         [--token-file FILE]] [--user NAME]\n"
	      "                                  capture live from interfaces until SIGINT/SIGTERM\n"
	      "  serve  [-d DB] [--api ADDR:PORT] [--token-file FILE]\n"
	      "                                  HTTP API and dashboard over a database (docs/api.md)\n"
	      "  events [-d DB] [--json] [--kind K] [--host ADDR] [--name NAME] [--from TIME] [--to TIME]\n"
	      "         [--alert ID] [--since-id N] [--limit N]\n"
	      "                                  list stored events (dns, http, tls, icmp)\n"
	      "  alerts [-d DB] [--json] [--class C] [--severity S] [--src ADDR] [--from TIME]\n"
	      "         [--to TIME] [--since-id N] [--limit N]\n"
	      "                                  list stored alerts\n"
	      "  rules check RULES...            validate rules files (docs/rules.md)\n"
	      "  version                         print the version and the libraries'\n"
	      "\n"
	      "Run 'egresswatch COMMAND --help' for a command's options.\n"
	      "The database defaults to ./" DEFAULT_DB ".\n",
	      f);
}

/* ---- replay ------------------------------------------------------------ */

static void usage_replay(FILE *f)
{
	fputs("usage: egresswatch replay [-c RULES] [-d DB] [-f BPF] [--from TIME] [--to TIME]\n"
	      "                          [--eve FILE] [-q] [--merge] [--no-progress] [--no-store]\n"
	      "                          PCAP...\n"
	      "\n"
	      "Replay pcap or pcapng files, plain, gzip or zstd (one after the other, in the\n"
	      "order given, or with --merge side by side; '-' reads stdin) through the\n"
	      "decoders and analyzers, store every event in DB, and print a summary.\n"
	      "A directory stands for the capture files in it, in name order as `ls -v`\n"
	      "sorts (ring_9 before ring_10); what else it holds is named and skipped.\n"
	      "Time comes from the packets, so a replay is deterministic.\n"
	      "\n"
	      "  -c, --rules RULES   rules file (default: the built-in rules, the same as\n"
	      "                      rules/default.yaml; see docs/rules.md)\n"
	      "  -d, --db DB         SQLite database (default ./" DEFAULT_DB ")\n"
	      "  -f, --filter BPF    only packets matching this pcap-filter(7) expression\n"
	      "                      (e.g. \"host 10.99.0.10\"); the summary counts the others\n"
	      "      --from TIME     only packets at or after TIME (RFC 3339, e.g.\n"
	      "                      2026-11-29T10:00:08Z, a date, or seconds since 1970)\n"
	      "      --to TIME       only packets before TIME; the summary counts the others\n"
	      "      --eve FILE      also append the run's events and then its alerts to FILE,\n"
	      "                      one JSON object a line (docs/eve.md); '-' is stdout,\n"
	      "                      and the summary then goes to stderr\n"
	      "  -q, --quiet         no summary\n"
	      "      --merge         read the files side by side, their packets in time order\n"
	      "                      (captures of several interfaces, as mergecap merges\n"
	      "                      them; a UDP or ICMP datagram that two of them both\n"
	      "                      hold is read once); at most 64 of them overlapping\n"
	      "                      in time\n"
	      "      --no-progress   no progress bar (it is shown only when stderr is a TTY)\n"
	      "      --no-store      decode and analyze, but store nothing\n"
	      "  -h, --help          this text\n"
	      "\n"
	      "Exit status: 0 ok; 1 a file was damaged part-way (what came before is kept)\n"
	      "or a runtime failure; 2 a usage error or an unreadable or unsupported file.\n",
	      f);
}

static void human_count(char *buf, size_t n, double v)
{
	if (v >= 1e9)
		snprintf(buf, n, "%.2fG", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, n, "%.2fM", v / 1e6);
	else if (v >= 1e4)
		snprintf(buf, n, "%.1fk", v / 1e3);
	else
		snprintf(buf, n, "%.0f", v);
}

/* "[#####               ]  25%": the bar of both progress lines. */
static void progress_bar(int pct)
{
	fprintf(stderr, "[%-20.*s] %3d%%", pct / 5, "####################", pct);
}

/* The file being processed (file i of n), its bytes read (by the reader
 * thread, which is up to a ring ahead) and its size (0 when unknown). */
static void progress_draw(const char *name, unsigned i, unsigned n, uint64_t done, uint64_t total,
			  uint64_t packets, double t0)
{
	char pk[32], rate[32], of[32] = "";
	double el = sync_now() - t0;

	human_count(pk, sizeof(pk), (double)packets);
	human_count(rate, sizeof(rate), el > 0 ? (double)packets / el : 0);
	if (n > 1)
		snprintf(of, sizeof(of), " (%u of %u)", i + 1, n);
	if (total > 0) {
		int pct = (int)((done < total ? done : total) * 100 / total);
		fprintf(stderr, "\r%s%s ", name, of);
		progress_bar(pct);
		fprintf(stderr, " %s packets %s/s ", pk, rate);
	} else {
		fprintf(stderr, "\r%s%s %s packets %s/s ", name, of, pk, rate);
	}
	fflush(stderr);
}

/*
 * After the last packet, the --eve thread may still be writing the events
 * it has not reached (it renders ~110,000 lines a second; a replay stores
 * several times that): show how far it is on stderr (a TTY) until it has
 * them all, or stops getting on (a read error: eve_finish reports it).
 */
static void eve_progress(const struct eve *eve, const char *path, uint64_t total)
{
	struct eve_stats es;
	uint64_t last = 0;
	double since = sync_now();
	int drawn = 0;

	for (;;) {
		eve_get_stats(eve, &es);
		if (es.events >= total || stop_requested)
			break;
		if (es.events != last) {
			last = es.events;
			since = sync_now();
		} else if (sync_now() - since > 2.0) {
			break;
		}
		int pct = (int)(es.events * 100 / total);
		fprintf(stderr, "\r--eve %s ", path);
		progress_bar(pct);
		fprintf(stderr, " %" PRIu64 " of %" PRIu64 " events ", es.events, total);
		fflush(stderr);
		drawn = 1;
		struct timespec ts = {0, 100 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	if (drawn)
		fputs("\r\033[K", stderr);
}

/* The run's alert rows, by class: "2 (dns_tunnel 1, metadata_probe 1)",
 * or "0". */
static void alert_classes(struct core *core, char *buf, size_t len)
{
	uint64_t by_class[AC_COUNT], rows = 0;
	size_t n;

	core_alert_counts(core, by_class);
	for (int k = 0; k < AC_COUNT; k++)
		rows += by_class[k];
	n = (size_t)snprintf(buf, len, "%" PRIu64 "%s", rows, rows ? " (" : "");
	for (int k = 0, first = 1; k < AC_COUNT && n < len; k++) {
		if (!by_class[k])
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%s %" PRIu64, first ? "" : ", ",
				      alerts_class_name(k), by_class[k]);
		first = 0;
	}
	if (rows && n < len)
		snprintf(buf + n, len - n, ")");
}

/* " (T truncated, M malformed)" after a count, each part only when it is
 * not zero */
static void print_bad(FILE *f, uint64_t truncated, uint64_t malformed)
{
	if (truncated && malformed)
		fprintf(f, " (%" PRIu64 " truncated, %" PRIu64 " malformed)", truncated, malformed);
	else if (truncated)
		fprintf(f, " (%" PRIu64 " truncated)", truncated);
	else if (malformed)
		fprintf(f, " (%" PRIu64 " malformed)", malformed);
}

/*
 * The summary's "analyzers:" line (the modules that take packets: what each
 * decoded) or "detectors:" line (the modules that take observations: how
 * many each judged, named without their "detect_" prefix), in the order they
 * run, each count followed by its truncated and malformed counts where there
 * are any, and by the module's own counters marked MODC_SUMMARY that are
 * not zero ("http 12 [pending_refused 3]").
 */
static void print_modules(FILE *f, const struct core_stats *s, int detectors)
{
	fputs(detectors ? "  detectors:" : "  analyzers:", f);
	for (unsigned i = 0, n = 0; modules[i] && i < CORE_MAX_MODULES; i++) {
		if ((modules[i]->on_obs != NULL) != detectors)
			continue;
		const char *name = modules[i]->name;
		if (detectors && strncmp(name, "detect_", 7) == 0)
			name += 7;
		const struct mod_counts *m = &s->mod[i];
		fprintf(f, "%s %s %" PRIu64, n++ ? "," : "", name, m->ok);
		print_bad(f, m->truncated, m->malformed);
		for (unsigned k = 0; k < m->n_own; k++)
			if ((m->own[k].flags & MODC_SUMMARY) && m->own[k].value)
				fprintf(f, " [%s %" PRIu64 "]", m->own[k].name, m->own[k].value);
	}
	fputc('\n', f);
}

static void print_summary(FILE *f, struct core *core, const char *db, unsigned nfiles,
			  double elapsed, const char *bpf, uint64_t filtered, int timed,
			  uint64_t outside, const struct eve *eve, const char *eve_path)
{
	const struct core_stats *s = core_stats(core);
	const struct decode_stats *ds = core_decode_stats(core);
	const struct flow_stats *fs = core_flow_stats(core);
	const struct store_stats *ss = core_store_stats(core);
	uint64_t trunc = 0, malf = 0;
	char rate[32];

	for (int l = 0; l < L_COUNT; l++) {
		trunc += ds->truncated[l];
		malf += ds->malformed[l];
	}
	human_count(rate, sizeof(rate), elapsed > 0 ? (double)s->packets / elapsed : 0);
	char left[128] = "";
	if (bpf && timed)
		snprintf(left, sizeof(left), " (%" PRIu64 " left out by the filter, %" PRIu64
			 " outside --from/--to)", filtered, outside);
	else if (bpf)
		snprintf(left, sizeof(left), " (%" PRIu64 " left out by the filter)", filtered);
	else if (timed)
		snprintf(left, sizeof(left), " (%" PRIu64 " outside --from/--to)", outside);
	fprintf(f, "egresswatch replay: %u file%s, %" PRIu64 " packets%s, %" PRIu64
		   " bytes in %.2f s (%s packets/s)\n",
		nfiles, nfiles == 1 ? "" : "s", s->packets, left, s->bytes, elapsed, rate);
	fprintf(f, "  decode:    %" PRIu64 " truncated, %" PRIu64 " malformed, %" PRIu64
		   " not IP; fragments %" PRIu64 " reassembled, %" PRIu64 " expired",
		trunc, malf, ds->not_ip, ds->frag_done, ds->frag_expired);
	/* overlaps whose bytes disagree: what receivers reassemble
	 * differently (docs/architecture.md, "What a bad packet does") */
	if (ds->frag_conflict)
		fprintf(f, ", %" PRIu64 " conflicting", ds->frag_conflict);
	if (ds->frag_bad_checksum)
		fprintf(f, ", %" PRIu64 " with bad checksums refused", ds->frag_bad_checksum);
	/* datagrams Linux's receiver reassembles otherwise, delivered too
	 * (docs/architecture.md, "Overlapping fragments") */
	if (ds->frag_linux_view)
		fprintf(f, ", %" PRIu64 " as Linux reassembles them", ds->frag_linux_view);
	/* a datagram another file (or interface) already gave (copies.h) */
	if (s->copies)
		fprintf(f, "; %" PRIu64 " UDP/ICMP copies from another source skipped", s->copies);
	fputc('\n', f);
	fprintf(f, "  layers:   ");
	int any = 0;
	for (int l = 0; l < L_COUNT; l++) {
		if (!ds->ok[l] && !ds->truncated[l] && !ds->malformed[l])
			continue;
		fprintf(f, " %s %" PRIu64, decode_layer_name((enum decode_layer)l), ds->ok[l]);
		print_bad(f, ds->truncated[l], ds->malformed[l]);
		any = 1;
	}
	if (!any)
		fputs(" none", f);
	fprintf(f, "\n  flows:     %" PRIu64 " created, %" PRIu64 " evicted", fs->created,
		fs->evicted);
	if (s->time_restarts || s->time_folded)
		fprintf(f, "; packet time went back: %" PRIu64 " restarts (flows, windows and "
			   "alert rows began afresh), %" PRIu64 " packets folded",
			s->time_restarts, s->time_folded);
	/* what a Linux receiver would not have read: decoys among them */
	if (fs->urgent || fs->noack_ignored || fs->syn_data_dropped || fs->inconsistent ||
	    fs->bad_checksum || fs->rx_drop)
		fprintf(f, "; TCP read as Linux reads it: %" PRIu64 " urgent bytes taken out, %" PRIu64
			   " segments without ACK ignored, %" PRIu64 " SYN data dropped, %" PRIu64
			   " with bad checksums ignored, %" PRIu64 " with IP options refused, %" PRIu64
			   " differing copies",
			fs->urgent, fs->noack_ignored, fs->syn_data_dropped, fs->bad_checksum,
			fs->rx_drop, fs->inconsistent);
	if (fs->udp_bad_checksum || fs->udp_rx_drop)
		fprintf(f, "; UDP read as Linux reads it: %" PRIu64 " datagrams with bad checksums "
			   "not read, %" PRIu64 " with IP options refused",
			fs->udp_bad_checksum, fs->udp_rx_drop);
	/* the global cap on stream bytes was reached */
	if (fs->stream_reclaimed || fs->stream_capped)
		fprintf(f, "; stream cap full: %" PRIu64 " idle windows reclaimed, %" PRIu64
			   " directions cut",
			fs->stream_reclaimed, fs->stream_capped);
	/* out-of-order segments past the 1,024 ranges a direction holds */
	if (fs->ooo_dropped)
		fprintf(f, "; %" PRIu64 " out-of-order segments not held", fs->ooo_dropped);
	fputc('\n', f);
	fprintf(f, "  events:    dns %" PRIu64 " (%" PRIu64 " queries, %" PRIu64
		   " responses), http %" PRIu64 ", tls %" PRIu64 ", icmp %" PRIu64
		   "; %" PRIu64 " malformed\n",
		s->events[OBS_DNS_QUERY] + s->events[OBS_DNS_ANSWER], s->events[OBS_DNS_QUERY],
		s->events[OBS_DNS_ANSWER],
		s->events[OBS_HTTP_REQUEST] + s->events[OBS_HTTP_RESPONSE],
		s->events[OBS_TLS_CLIENT_HELLO] + s->events[OBS_TLS_SERVER_HELLO],
		s->events[OBS_ICMP], s->events_malformed);
	print_modules(f, s, 0);
	print_modules(f, s, 1);
	char classes[512];
	alert_classes(core, classes, sizeof(classes));
	fprintf(f, "  alerts:    %s from %" PRIu64 " detections\n", classes, s->alerts);
	if (ss) {
		/* errors counts the rows of every kind a failed write lost */
		uint64_t lost = ss->errors + s->store_errors;
		fprintf(f, "  store:     %s, %" PRIu64 " events written, %" PRIu64
			   " rows not written%s\n", db, ss->events, lost,
			lost ? " (events, alerts and counters: see the log)" : "");
	}
	if (eve) {
		struct eve_stats es;
		eve_get_stats(eve, &es);
		/* es counts the lines rendered, the lost among them */
		fprintf(f, "  eve:       %s, %" PRIu64 " events and %" PRIu64 " alerts %s, %" PRIu64
			   " lines lost\n", strcmp(eve_path, "-") ? eve_path : "stdout", es.events,
			es.alerts, es.errors ? "rendered" : "written", es.errors);
	}
}

/*
 * A file whose first packet is older than a packet of a file before it: the
 * files are replayed in the order given, never merged by time, so flows,
 * windows and expiry see time step back (and more than CORE_CLOCK_BACK_US
 * starts them over: core_packet). Said once per such file, for the first
 * FILE_ORDER_TOLD of them, on stderr, and the run goes on (a rotated capture given as `cap*`, where the
 * shell sorts cap10 before cap2; two interfaces' captures given side by
 * side).
 */
#define FILE_ORDER_TOLD 10 /* files out of order named; the rest are not */

static void warn_file_order(const char *file, const char *earlier, uint64_t back_us,
			    int progress)
{
	static unsigned told;

	if (told > FILE_ORDER_TOLD)
		return;
	if (progress)
		fputs("\r\033[K", stderr);
	if (told++ == FILE_ORDER_TOLD) {
		fputs("egresswatch replay: warning: more files start before the latest packet "
		      "of an earlier one; they are not named\n", stderr);
		return;
	}
	fprintf(stderr,
		"egresswatch replay: warning: %s starts %" PRIu64 ".%06" PRIu64
		" s before the latest packet of %s: files are replayed in the order given, "
		"not merged by time (--merge merges them)\n",
		file, back_us / 1000000, back_us % 1000000, earlier);
}

static void replay_one(struct core *core, const struct reader_rec *f)
{
	core_packet(core, f->dlt, f->ts_us, f->data, f->caplen, f->wirelen, f->file);
}

/*
 * Replay the files through the core. A reader thread (sensor/reader.h)
 * reads them in order into a ring; here its records are taken in that
 * order, so the per-file messages come where a loop reading the files
 * itself would print them: an unopenable file or an unsupported link type
 * after every packet before it, and ends the run (exit 2); a file damaged
 * part-way after its packets, and the next files are still read (exit 1).
 * One frame of read-ahead: the next record is taken, and its flow
 * prefetched, before this frame is processed; both lie in the ring, so
 * there is nothing to copy. On SIGINT/SIGTERM the frame in hand is
 * processed and the rest of the ring dropped. Returns the exit status.
 */
/* replay --from/--to: only the packets of [from_us, to_us); --merge */
struct replay_window {
	int timed;
	uint64_t from_us, to_us;
	int merge;
};

static int replay_files(struct core *core, char *const *paths, unsigned n, int progress,
			double t0, const char *bpf, const struct replay_window *win, uint64_t *filtered,
			uint64_t *outside, unsigned *replayed)
{
	const struct reader_config rcfg = {
		.paths = paths, .npaths = n, .accept_dlt = decode_linktype_supported, .bpf = bpf,
		.timed = win->timed, .from_us = win->from_us, .to_us = win->to_us,
		.merge = win->merge,
	};
	struct reader *rd;
	const struct reader_rec *cur = NULL, *rec;
	uint64_t since_draw = 0, size = 0; /* frames processed (for the progress line), the file's size */
	double last_draw = -1; /* when the progress line was last drawn */
	unsigned cur_file = 0;
	int rc = 0, reading = 0; /* between a file's RD_FILE and its end */
	/* the latest packet time replayed so far, and its file; whether the
	 * next frame is a file's first */
	uint64_t max_ts = 0;
	unsigned max_file = 0;
	int first_frame = 0, any_frame = 0;
	char err[256], merged[48];
	/* per file, 2 bits: opened (RD_FILE), and a packet of it replayed; for
	 * the summary's count, which leaves out a file that a filter that does
	 * not apply to it stopped before its first packet */
	uint8_t *started = calloc((n + 3) / 4, 1);
#define FILE_BIT(f, b) ((uint8_t)(1u << ((f) % 4 * 2 + (b))))

	*replayed = 0;
	if (!started) {
		fprintf(stderr, "egresswatch replay: out of memory\n");
		return EXIT_RUNTIME;
	}
	snprintf(merged, sizeof(merged), "%u files merged", n);

	if (reader_open(&rd, &rcfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "egresswatch replay: %s\n", err);
		free(started);
		return EXIT_RUNTIME;
	}
	for (;;) {
		if (stop_requested) { /* what was read is processed */
			if (cur)
				replay_one(core, cur);
			break;
		}
		rec = reader_next(rd, 100);
		if (!rec)
			continue; /* nothing yet: look at stop_requested again */
		if (rec->kind == RD_FRAME)
			core_prefetch(core, rec->dlt, rec->data, rec->caplen);
		if (cur) {
			replay_one(core, cur);
			reader_release(rd, cur);
			cur = NULL;
			if (progress && (++since_draw & 0xffff) == 0) {
				if (win->merge) { /* the files' bytes together */
					uint64_t all, done = reader_merge_progress(rd, &all);
					progress_draw(merged, 0, 1, done, all,
						      core_stats(core)->packets, t0);
				} else
					progress_draw(paths[cur_file], cur_file, n,
						      reader_progress(rd, cur_file), size,
						      core_stats(core)->packets, t0);
				last_draw = sync_now();
			}
		}
		if (rec->kind == RD_FRAME) {
			if (rec->file < n)
				started[rec->file / 4] |= FILE_BIT(rec->file, 1);
			if (first_frame && any_frame && rec->ts_us < max_ts && !win->merge)
				warn_file_order(paths[rec->file], paths[max_file], max_ts - rec->ts_us,
						progress);
			first_frame = 0;
			if (!any_frame || rec->ts_us >= max_ts) {
				max_ts = rec->ts_us;
				max_file = rec->file;
			}
			any_frame = 1;
			cur = rec;
			continue;
		}
		if (rec->kind == RD_DAMAGED && stop_requested)
			break; /* interrupted: said below */
		switch (rec->kind) {
		case RD_FILE:
			if (rec->file < n && !(started[rec->file / 4] & FILE_BIT(rec->file, 0))) {
				started[rec->file / 4] |= FILE_BIT(rec->file, 0);
				++*replayed;
			}
			if (!win->merge) /* merged files start amid the others' packets */
				core_input_start(core);
			reading = 1;
			first_frame = 1;
			cur_file = rec->file;
			size = rec->size;
			/* each file as it starts, at most four a second: many small
			 * files (a ring buffer's) show too */
			if (progress && !win->merge && sync_now() - last_draw >= 0.25) {
				progress_draw(paths[cur_file], cur_file, n, 0, size,
					      core_stats(core)->packets, t0);
				last_draw = sync_now();
			}
			break;
		case RD_EOF:
		case RD_DAMAGED:
			if (progress)
				fputs("\r\033[K", stderr);
			reading = 0;
			if (rec->kind == RD_DAMAGED) {
				fprintf(stderr,
					"egresswatch replay: %s; the packets before it are kept\n",
					(const char *)rec->data);
				rc = EXIT_RUNTIME;
			}
			break;
		case RD_SKIPPED: /* damage read past: said, and counted as damage */
		case RD_JOINED:  /* a capture joined on: said */
			if (rec->kind == RD_JOINED && !win->merge)
				core_input_start(core);
			if (progress)
				fputs("\r\033[K", stderr);
			fprintf(stderr, "egresswatch replay: %s%s\n", rec->kind == RD_JOINED ?
				"warning: " : "", (const char *)rec->data);
			if (rec->kind == RD_SKIPPED && rc == 0)
				rc = EXIT_RUNTIME;
			break;
		case RD_OPEN_ERROR:
			fprintf(stderr, "egresswatch replay: %s\n", (const char *)rec->data);
			rc = EXIT_USAGE;
			if (rec->file < n && (started[rec->file / 4] & FILE_BIT(rec->file, 0)) &&
			    !(started[rec->file / 4] & FILE_BIT(rec->file, 1))) {
				started[rec->file / 4] &= (uint8_t)~FILE_BIT(rec->file, 0);
				--*replayed; /* opened, but no packet read: the filter */
			}
			break;
		case RD_BAD_LINK:
			fprintf(stderr, "egresswatch replay: %s: unsupported link type %s (%d)\n",
				paths[rec->file], (const char *)rec->data, rec->dlt);
			rc = EXIT_USAGE;
			break;
		default: /* RD_DONE */
			goto done;
		}
		reader_release(rd, rec);
	}
	if (progress && reading)
		fputs("\r\033[K", stderr);
done:
	*filtered = reader_filtered(rd);
	*outside = reader_outside(rd);
	reader_close(rd);
	free(started);
	return rc;
}
#undef FILE_BIT

/*
 * Before anything is opened or created: every capture named (not "-";
 * directories already stand for their files, sensor/inputs.h) must exist
 * and be readable, so a mistyped name exits 2
 * with one line, leaving no database behind. Only stat(2) and access(2):
 * a named pipe is not opened here, which would take its writer's data. What
 * a file holds is the reader's to judge. "-" may come once.
 */
static int check_inputs(char *const *paths, unsigned n)
{
	int stdin_seen = 0;

	for (unsigned i = 0; i < n; i++) {
		struct stat st;
		if (!strcmp(paths[i], "-")) {
			/* one stream: a second '-' would read it again, or share it */
			if (stdin_seen++) {
				fprintf(stderr, "egresswatch replay: '-' (standard input) is given "
						"more than once\n");
				return -1;
			}
			continue;
		}
		if (stat(paths[i], &st) < 0 || access(paths[i], R_OK) < 0) {
			fprintf(stderr, "egresswatch replay: %s: %s\n", paths[i], strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* The files a replay reads before its first packet (the first; with
 * --merge, every one), when they are regular files: one that is not a
 * capture would end the run before a packet, so it does so before the
 * database is created, with the words the capture reader would use. */
static int check_first_bytes(char *const *paths, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct stat st;
		size_t got = 0;
		if (!strcmp(paths[i], "-") || stat(paths[i], &st) < 0 || !S_ISREG(st.st_mode) ||
		    inputs_sniff(paths[i], &got) != 0)
			continue;
		if (got < 4)
			fprintf(stderr, "egresswatch replay: %s: truncated dump file; tried to read 4 "
					"file header bytes, only got %zu\n", paths[i], got);
		else
			fprintf(stderr, "egresswatch replay: %s: unknown file format\n", paths[i]);
		return -1;
	}
	return 0;
}

/* `egresswatch version`: ours, then each library's own idea of its version,
 * read at run time (what is loaded, not what was built against). */
static void print_version(void)
{
	const char *psl_list = psl_dist_filename();
	printf("egresswatch %s\n", EGRESSWATCH_VERSION);
	printf("  database schema %d\n", store_schema_version());
	printf("  %s\n", pcap_lib_version());
	printf("  ldns %s\n", ldns_version());
	printf("  SQLite %s\n", sqlite3_libversion());
	printf("  libmicrohttpd %s\n", MHD_get_version());
	printf("  jansson %s\n", jansson_version_str());
	printf("  libyaml %s\n", yaml_get_version_string());
	if (psl_list && *psl_list) /* what psl_latest() chooses from */
		printf("  libpsl %s; public suffix list: the newer of %s and the built-in one\n",
		       psl_get_version(), psl_list);
	else
		printf("  libpsl %s; public suffix list: the built-in one\n", psl_get_version());
	printf("  zlib %s, zstd %s\n", zlibVersion(), ZSTD_versionString());
	printf("  %s\n", OpenSSL_version(OPENSSL_VERSION));
	printf("  libsodium %s\n", sodium_version_string());
	printf("  allocator: %s\n", EW_ALLOCATOR);
}

/* An interface's kernel counters over the whole run: those of the handles
 * closed when it went away (gone), and the open one's. */
struct iface_counts {
	uint64_t recv, drop, ifdrop;
};

static void iface_counts(struct capture *cap, const struct iface_counts *gone,
			 struct iface_counts *out)
{
	uint64_t r, d, fd;

	*out = *gone;
	if (cap && capture_stats(cap, &r, &d, &fd) == 0) {
		out->recv += r;
		out->drop += d;
		out->ifdrop += fd;
	}
}

/*
 * The journal's account of a watch as it stops, after the last batch: what
 * the kernel delivered and dropped (all interfaces, every handle the run
 * opened on each), the events stored and those dropped from a full writer
 * queue, and the alerts by class. As Suricata's and Zeek's last lines, the
 * numbers that say whether the run saw everything.
 */
static void log_stop_summary(struct core *core, struct capture *const *caps,
			     const struct iface_counts *gone, unsigned n)
{
	uint64_t recv = 0, drop = 0, ifdrop = 0;
	const struct store_stats *ss = core_store_stats(core);
	char classes[512];

	for (unsigned i = 0; i < n; i++) {
		struct iface_counts c;
		iface_counts(caps[i], &gone[i], &c);
		recv += c.recv;
		drop += c.drop;
		ifdrop += c.ifdrop;
	}
	alert_classes(core, classes, sizeof(classes));
	log_info("capture", "%" PRIu64 " packets decoded; the kernel received %" PRIu64
			    " and dropped %" PRIu64 " (%" PRIu64 " by the interface); %" PRIu64
			    " events stored, %" PRIu64 " dropped (queue full); alerts: %s",
		 core_stats(core)->packets, recv, drop, ifdrop, ss ? ss->events : 0,
		 ss ? ss->dropped : 0, classes);
}

static int cmd_replay(int argc, char **argv)
{
	static const struct option opts[] = {
		{"rules", required_argument, NULL, 'c'},
		{"db", required_argument, NULL, 'd'},
		{"quiet", no_argument, NULL, 'q'},
		{"no-progress", no_argument, NULL, 'P'},
		{"no-store", no_argument, NULL, 'S'},
		{"filter", required_argument, NULL, 'f'},
		{"eve", required_argument, NULL, 'E'},
		{"from", required_argument, NULL, 'F'},
		{"to", required_argument, NULL, 'T'},
		{"merge", no_argument, NULL, 'M'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct core_config cfg = {0};
	struct core *core = NULL;
	struct rules *rules = NULL;
	struct eve *eve = NULL;
	const char *db = DEFAULT_DB, *rules_path = NULL, *bpf = NULL, *eve_path = NULL;
	uint64_t filtered = 0, outside = 0;
	struct replay_window win = {.from_us = 0, .to_us = UINT64_MAX};
	int64_t from = INT64_MIN, to = INT64_MAX;
	int quiet = 0, progress, no_store = 0, opt, rc = 0;
	char err[512];
	struct inputs in = {0};
	double t0;

	progress = isatty(STDERR_FILENO);
	while ((opt = getopt_long(argc, argv, "c:d:f:qh", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			rules_path = optarg;
			break;
		case 'f':
			bpf = optarg;
			break;
		case 'd':
			db = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'P':
			progress = 0;
			break;
		case 'S':
			no_store = 1;
			break;
		case 'E':
			eve_path = optarg;
			break;
		case 'M':
			win.merge = 1;
			break;
		case 'F':
		case 'T':
			if (text_parse_time(optarg, opt == 'F' ? &from : &to) < 0) {
				fprintf(stderr, "egresswatch replay: --%s %s: want a time as "
						"2026-11-29T10:00:08Z (RFC 3339), 2026-11-29 or seconds "
						"since 1970\n", opt == 'F' ? "from" : "to", optarg);
				return EXIT_USAGE;
			}
			win.timed = 1;
			break;
		case 'h':
			usage_replay(stdout);
			return 0;
		default:
			usage_replay(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "egresswatch replay: no capture file given (see --help)\n");
		return EXIT_USAGE;
	}
	if (win.timed) {
		if (from >= to) {
			fprintf(stderr, "egresswatch replay: --from is not before --to: nothing lies "
					"between\n");
			return EXIT_USAGE;
		}
		/* packet times are never before 1970 */
		win.from_us = from < 0 ? 0 : (uint64_t)from;
		win.to_us = to < 0 ? 0 : (uint64_t)to;
	}
	if (eve_path && no_store) {
		fprintf(stderr, "egresswatch replay: --eve is written from the database; it cannot "
				"go with --no-store\n");
		return EXIT_USAGE;
	}
	if (bpf && reader_check_filter(bpf, err, sizeof(err)) < 0) {
		fprintf(stderr, "egresswatch replay: bad filter \"%s\": %s\n", bpf, err);
		return EXIT_USAGE;
	}
	if (inputs_expand(argv + optind, (unsigned)(argc - optind), "egresswatch replay", &in, err,
			  sizeof(err)) < 0) {
		fprintf(stderr, "egresswatch replay: %s\n", err);
		return EXIT_USAGE;
	}
	if (check_inputs(in.paths, in.n) < 0 || check_first_bytes(in.paths, win.merge ? in.n : 1) < 0) {
		rc = EXIT_USAGE;
		goto out;
	}
	if (rules_path && rules_load(rules_path, &rules, err, sizeof(err)) < 0) {
		fprintf(stderr, "egresswatch replay: %s\n", err);
		rc = EXIT_USAGE;
		goto out;
	}
	cfg.rules = rules;
	cfg.db_path = no_store ? NULL : db;
	cfg.store.bulk = 1;
	cfg.copies = win.merge; /* merged files: one capture's interfaces */
	if (core_open(&core, &cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "egresswatch replay: %s\n", err);
		rules_free(rules);
		rc = EXIT_RUNTIME;
		goto out;
	}
	/* The events go to the file as they are committed (a follower reads
	 * them back); the alerts once, at the end, in their final state. */
	if (eve_path) {
		const struct eve_config ecfg = {.path = eve_path, .db_path = db, .interval_ms = 250};
		if (eve_open(&eve, &ecfg, err, sizeof(err)) < 0 ||
		    eve_start(eve, err, sizeof(err)) < 0) {
			fprintf(stderr, "egresswatch replay: %s\n", err);
			eve_close(eve);
			core_close(core);
			rules_free(rules);
			rc = EXIT_RUNTIME;
			goto out;
		}
	}
	signal(SIGINT, on_stop_signal);
	signal(SIGTERM, on_stop_signal);
	t0 = sync_now();
	unsigned replayed = 0;
	rc = replay_files(core, in.paths, in.n, progress, t0, bpf, &win, &filtered, &outside,
			  &replayed);
	if (stop_requested) {
		fprintf(stderr, "egresswatch replay: interrupted; what was read is stored\n");
		rc = EXIT_RUNTIME;
	}
	/* Judge what waits for fragments that will not come, end the flows,
	 * write the alerts' final state and commit, so the summary and
	 * --eve count what is on disk. */
	if (core_finish(core) < 0)
		rc = rc ? rc : EXIT_RUNTIME;
	if (eve && progress && core_store_stats(core))
		eve_progress(eve, eve_path, core_store_stats(core)->events);
	if (eve && eve_finish(eve) < 0) {
		fprintf(stderr, "egresswatch replay: %s: not every event or alert could be written "
				"(see above)\n", eve_path);
		rc = rc ? rc : EXIT_RUNTIME;
	}
	double elapsed = sync_now() - t0;
	/* no summary of a run that stopped at its first file, before a packet */
	if (rc == EXIT_USAGE && core_stats(core)->packets == 0)
		quiet = 1;
	if (!quiet)
		print_summary(eve_path && !strcmp(eve_path, "-") ? stderr : stdout, core, db,
			      replayed, elapsed, bpf, filtered, win.timed, outside, eve, eve_path);
	eve_close(eve);
	if (core_close(core) < 0) {
		fprintf(stderr, "egresswatch replay: %s: not every row could be written (see "
				"above)\n", db);
		rc = rc ? rc : EXIT_RUNTIME;
	}
	rules_free(rules);
out:
	inputs_free(&in);
	return rc;
}

/* ---- watch ------------------------------------------------------------- */

static void usage_watch(FILE *f)
{
	fputs("usage: egresswatch watch [-c RULES] [-d DB] -i IFACE [-i IFACE]... [-f BPF] [-B MB] [-s SNAPLEN]\n"
	      "                         [--immediate] [--retain DURATION] [--eve FILE]\n"
	      "                         [--api ADDR:PORT [--token-file FILE]] [--user NAME]\n"
	      "\n"
	      "Capture live on one or more interfaces (a bridge, veths) into one flow table\n"
	      "and store events in DB until SIGINT or SIGTERM, which flush and exit 0.\n"
	      "\n"
	      "  -c, --rules RULES    rules file (default: the built-in rules)\n"
	      "  -d, --db DB          SQLite database (default ./" DEFAULT_DB ")\n"
	      "  -i, --interface IF   interface to capture on (repeatable, each once, at\n"
	      "                       most 16; a UDP or ICMP datagram that two of them\n"
	      "                       both see is read once)\n"
	      "  -f, --filter BPF     capture filter (pcap-filter(7) syntax)\n"
	      "  -B, --buffer MB      kernel ring buffer per interface in MiB, 1..2047\n"
	      "                       (default 64)\n"
	      "  -s, --snaplen N      bytes kept per packet (default 65535)\n"
	      "      --immediate      hand each packet over as it arrives (libpcap's\n"
	      "                       immediate mode: a TPACKET_V2 ring of snap-length\n"
	      "                       frames, which holds far fewer packets than the\n"
	      "                       default TPACKET_V3 ring, whose blocks come every\n"
	      "                       10 ms)\n"
	      "      --retain D       keep the events of the last D of packet time, deleting\n"
	      "                       older ones as new ones come (D: N[s|m|h|d|w], e.g. 7d;\n"
	      "                       1s..36600d; default: keep every event); alerts are kept\n"
	      "      --eve FILE       also append events and alerts to FILE as they are\n"
	      "                       stored, one JSON object a line (docs/eve.md); an alert\n"
	      "                       comes again as it grows; SIGHUP reopens FILE\n"
	      "      --api ADDR:PORT  also serve the HTTP API and dashboard (docs/api.md) on\n"
	      "                       ADDR:PORT, e.g. 127.0.0.1:8080 (port 0: any free port)\n"
	      "      --token-file F   bearer token clients must send (required when ADDR is\n"
	      "                       not loopback)\n"
	      "      --user NAME      after opening the interfaces and the database, run as\n"
	      "                       NAME keeping only CAP_NET_RAW\n"
	      "  -h, --help           this text\n"
	      "\n"
	      "SIGHUP reloads the rules file (a bad file keeps the rules in force and logs\n"
	      "why) and reopens the --eve file.\n"
	      "An interface that goes down or disappears is logged (and retried every 5 s\n"
	      "when it disappears); the others go on.\n"
	      "Under systemd (Type=notify) it reports readiness, reloads and stopping, and\n"
	      "pings the watchdog when WatchdogSec= is set.\n"
	      "\n"
	      "Exit status: 0 stopped by SIGINT or SIGTERM; 1 a runtime failure (an\n"
	      "interface or the database cannot be opened); 2 a usage error (a bad option,\n"
	      "filter, rules file or --user).\n",
	      f);
}

/* The --eve counters, as stats rows (eve.events, ...: /api/v1/stats). */
static void put_eve_stats(struct core *core, const struct eve *eve)
{
	struct eve_stats es;

	eve_get_stats(eve, &es);
	core_put_stat(core, "eve.events", (int64_t)es.events);
	core_put_stat(core, "eve.alerts", (int64_t)es.alerts);
	core_put_stat(core, "eve.missed", (int64_t)es.missed);
	core_put_stat(core, "eve.errors", (int64_t)es.errors);
	core_put_stat(core, "eve.reopens", (int64_t)es.reopens);
}

/* SIGHUP: load the rules again; a bad file keeps the old rules and says why. */
static void watch_reload(struct core *core, const char *path, struct rules **cur)
{
	struct rules *fresh = NULL;
	char err[512];

	if (!path) {
		log_info("rules", "SIGHUP: no rules file given (-c); the built-in rules stay");
		return;
	}
	if (rules_load(path, &fresh, err, sizeof(err)) < 0) {
		log_err("rules", "reload failed, keeping the rules in force: %s", err);
		return;
	}
	if (core_set_rules(core, fresh, err, sizeof(err)) < 0) {
		log_err("rules", "reload failed, keeping the rules in force: %s", err);
		rules_free(fresh);
		return;
	}
	rules_free(*cur);
	*cur = fresh;
	log_info("rules", "reloaded %s", path);
}

static int cmd_watch(int argc, char **argv)
{
	static const struct option opts[] = {
		{"rules", required_argument, NULL, 'c'},
		{"db", required_argument, NULL, 'd'},
		{"interface", required_argument, NULL, 'i'},
		{"filter", required_argument, NULL, 'f'},
		{"buffer", required_argument, NULL, 'B'},
		{"snaplen", required_argument, NULL, 's'},
		{"api", required_argument, NULL, 'A'},
		{"token-file", required_argument, NULL, 'T'},
		{"user", required_argument, NULL, 'U'},
		{"retain", required_argument, NULL, 'R'},
		{"eve", required_argument, NULL, 'E'},
		{"immediate", no_argument, NULL, 'I'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct api_config acfg = {0};
	uint64_t retain_us = 0;
	const char *retain_arg = NULL, *eve_path = NULL;
	struct eve *eve = NULL;
	struct api *api = NULL;
	int want_api = 0;
	const char *run_as = NULL;
	double retry_at[MAX_IFACES] = {0}, last_ping = 0;
	uint64_t watchdog_us = daemon_watchdog_usec();
	const char *ifaces[MAX_IFACES];
	struct capture *caps[MAX_IFACES] = {0};
	struct iface_counts gone[MAX_IFACES] = {0}; /* of the handles closed */
	int link_up[MAX_IFACES];                    /* as last seen: 1, 0, -1 unknown */
	struct pollfd pfd[MAX_IFACES];
	struct capture_live_opts lo = {.immediate = 0, .timeout_ms = CAPTURE_TIMEOUT_MS};
	int bad_filter = 0;
	struct core_config cfg = {0};
	struct core *core = NULL;
	struct rules *rules = NULL;
	const char *db = DEFAULT_DB, *rules_path = NULL;
	unsigned n = 0;
	int opt, rc = 0;
	char err[512];
	double last_flush;

	while ((opt = getopt_long(argc, argv, "c:d:i:f:B:s:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			rules_path = optarg;
			break;
		case 'd':
			db = optarg;
			break;
		case 'i':
			if (n == MAX_IFACES) {
				fprintf(stderr, "egresswatch watch: at most %d interfaces\n",
					MAX_IFACES);
				return EXIT_USAGE;
			}
			for (unsigned k = 0; k < n; k++)
				if (!strcmp(ifaces[k], optarg)) {
					/* each packet would be decoded and stored twice */
					char shown[256];
					text_escape(shown, sizeof(shown), (const uint8_t *)optarg,
						    strlen(optarg), NULL);
					fprintf(stderr, "egresswatch watch: -i %s is given more than "
							"once\n", shown);
					return EXIT_USAGE;
				}
			ifaces[n++] = optarg;
			break;
		case 'f':
			lo.bpf = optarg;
			break;
		case 'I':
			lo.immediate = 1;
			break;
		case 'B': {
			char *end;
			errno = 0;
			long mb = strtol(optarg, &end, 10);
			/* libpcap takes the size in bytes as an int */
			if (errno || end == optarg || *end || mb < 1 || mb > CAPTURE_BUFFER_MAX_MB) {
				fprintf(stderr, "egresswatch watch: --buffer %s: want 1..%d MiB\n",
					optarg, CAPTURE_BUFFER_MAX_MB);
				return EXIT_USAGE;
			}
			lo.buffer_bytes = (int)(mb << 20);
			break;
		}
		case 's': {
			char *end;
			long s = strtol(optarg, &end, 10);
			if (*end || s < 64 || s > 262144) {
				fprintf(stderr, "egresswatch watch: --snaplen %s: want 64..262144\n",
					optarg);
				return EXIT_USAGE;
			}
			lo.snaplen = (int)s;
			break;
		}
		case 'A':
			acfg.addr = optarg;
			want_api = 1;
			break;
		case 'T':
			acfg.token_file = optarg;
			break;
		case 'U':
			run_as = optarg;
			break;
		case 'R':
			if (text_duration(optarg, 1000000, STORE_RETAIN_MAX_US, &retain_us) < 0) {
				fprintf(stderr,
					"egresswatch watch: --retain %s: want N[s|m|h|d|w] from 1s "
					"to 36600d, e.g. 7d\n",
					optarg);
				return EXIT_USAGE;
			}
			retain_arg = optarg;
			break;
		case 'E':
			eve_path = optarg;
			break;
		case 'h':
			usage_watch(stdout);
			return 0;
		default:
			usage_watch(stderr);
			return EXIT_USAGE;
		}
	}
	if (n == 0) {
		fprintf(stderr, "egresswatch watch: no interface given (-i IFACE) (see --help)\n");
		return EXIT_USAGE;
	}
	if (optind != argc) {
		char shown[256];
		text_escape(shown, sizeof(shown), (const uint8_t *)argv[optind],
			    strlen(argv[optind]), NULL);
		fprintf(stderr, "egresswatch watch: unexpected argument %s (see --help)\n", shown);
		return EXIT_USAGE;
	}
	if (acfg.token_file && !want_api) {
		fprintf(stderr, "egresswatch watch: --token-file needs --api ADDR:PORT\n");
		return EXIT_USAGE;
	}
	if (want_api && api_check_config(&acfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "egresswatch watch: %s\n", err);
		return EXIT_USAGE;
	}
	/* Usage errors before anything is opened or created: the filter (as
	 * replay checks it; the interface's own link type is tried at open),
	 * the user to run as. */
	if (lo.bpf && reader_check_filter(lo.bpf, err, sizeof(err)) < 0) {
		fprintf(stderr, "egresswatch watch: bad filter \"%s\": %s\n", lo.bpf, err);
		return EXIT_USAGE;
	}
	if (run_as) {
		errno = 0;
		if (!getpwnam(run_as)) {
			fprintf(stderr, "egresswatch watch: --user %s: %s\n", run_as,
				errno ? strerror(errno) : "no such user");
			return EXIT_USAGE;
		}
	}
	if (rules_path && rules_load(rules_path, &rules, err, sizeof(err)) < 0) {
		fprintf(stderr, "egresswatch watch: %s\n", err);
		return EXIT_USAGE;
	}
	cfg.rules = rules;
	for (unsigned i = 0; i < n; i++) {
		caps[i] = capture_open_live(ifaces[i], &lo, &bad_filter, err, sizeof(err));
		if (!caps[i]) {
			fprintf(stderr, "egresswatch watch: %s\n", err);
			rc = bad_filter ? EXIT_USAGE : EXIT_RUNTIME;
			goto out;
		}
		link_up[i] = 1; /* libpcap opens only an interface that is up */
		if (!decode_linktype_supported(capture_datalink(caps[i]))) {
			fprintf(stderr, "egresswatch watch: %s: unsupported link type %s\n",
				ifaces[i], capture_datalink_name(caps[i]));
			rc = EXIT_USAGE;
			goto out;
		}
		pfd[i].fd = capture_fd(caps[i]);
		pfd[i].events = POLLIN;
	}
	cfg.db_path = db;
	cfg.copies = n > 1; /* a packet that crosses two of them is read once */
	cfg.store.drop_when_full = 1; /* never stall the capture on a slow disk */
	cfg.store.retain_us = retain_us;
	if (core_open(&core, &cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "egresswatch watch: %s\n", err);
		rc = EXIT_RUNTIME;
		goto out;
	}
	/* --eve and the API read the database the store just opened, on their
	 * own threads and their own read-only connections. */
	if (eve_path) {
		const struct eve_config ecfg = {.path = eve_path, .db_path = db, .live = 1};
		if (eve_open(&eve, &ecfg, err, sizeof(err)) < 0 ||
		    eve_start(eve, err, sizeof(err)) < 0) {
			fprintf(stderr, "egresswatch watch: %s\n", err);
			rc = EXIT_RUNTIME;
			goto out;
		}
	}
	if (want_api) {
		int arc;
		acfg.db_path = db;
		if ((arc = api_start(&api, &acfg, err, sizeof(err))) < 0) {
			fprintf(stderr, "egresswatch watch: %s\n", err);
			rc = arc == API_EUSAGE ? EXIT_USAGE : EXIT_RUNTIME;
			goto out;
		}
	}
	/* Everything that needs root is open: drop it (keeping CAP_NET_RAW to
	 * reopen an interface that comes back). */
	if (run_as && daemon_drop_privileges(run_as, err, sizeof(err)) < 0) {
		fprintf(stderr, "egresswatch watch: %s\n", err);
		rc = EXIT_RUNTIME;
		goto out;
	}
	signal(SIGINT, on_stop_signal);
	signal(SIGTERM, on_stop_signal);
	signal(SIGHUP, on_hup_signal);
	log_info("capture", "watching %u interface%s, database %s", n, n == 1 ? "" : "s", db);
	if (lo.immediate)
		log_info("capture", "immediate mode: a TPACKET_V2 ring of %d-byte frames per "
			 "interface", lo.snaplen > 0 ? lo.snaplen : 65535);
	if (retain_us)
		log_info("store", "keeping the events of the last %s of packet time", retain_arg);
	daemon_notify("READY=1\nSTATUS=capturing");
	last_flush = sync_now();
	while (!stop_requested) {
		int pr = poll(pfd, n, 200);
		if (pr < 0 && errno != EINTR) {
			log_err("capture", "poll: %s", strerror(errno));
			rc = EXIT_RUNTIME;
			break;
		}
		for (unsigned i = 0; i < n; i++) {
			struct capture_pkt cp;
			enum capture_rc r = CAP_EOF;
			int budget = 4096; /* fairness between interfaces */
			if (!caps[i]) {
				/* An interface that went away: try again every 5 s. */
				if (sync_now() < retry_at[i])
					continue;
				caps[i] = capture_open_live(ifaces[i], &lo, NULL, err, sizeof(err));
				if (!caps[i]) {
					retry_at[i] = sync_now() + 5.0;
					continue;
				}
				pfd[i].fd = capture_fd(caps[i]);
				link_up[i] = 1;
				log_info("capture", "%s: capturing again", ifaces[i]);
			}
			while (budget-- > 0 && (r = capture_next(caps[i], &cp)) == CAP_PACKET)
				core_packet(core, cp.dlt, cp.ts_us, cp.data, cp.caplen, cp.wirelen, i);
			if (budget > 0 && r == CAP_ERROR) {
				/* Down or gone (a veth deleted, a bridge taken down):
				 * not fatal; the other interfaces go on. */
				log_warn("capture", "%s; retrying every 5 s", capture_error(caps[i]));
				/* its counts go on in the next handle's */
				iface_counts(caps[i], &gone[i], &gone[i]);
				capture_close(caps[i]);
				caps[i] = NULL;
				pfd[i].fd = -1;
				retry_at[i] = sync_now() + 5.0;
			}
		}
		if (reload_requested) {
			reload_requested = 0;
			daemon_notify("RELOADING=1");
			watch_reload(core, rules_path, &rules);
			eve_reopen(eve);
			daemon_notify("READY=1");
		}
		if (watchdog_us && (sync_now() - last_ping) * 1e6 >= (double)watchdog_us / 2) {
			daemon_notify("WATCHDOG=1");
			last_ping = sync_now();
		}
		if (sync_now() - last_flush >= 1.0) {
			for (unsigned i = 0; i < n; i++) {
				struct iface_counts c;
				char name[96];
				/* a link taken down (or its carrier lost): libpcap
				 * says nothing, its socket simply gets no packets */
				int up = caps[i] ? capture_link_up(ifaces[i]) : -1;
				if (up == 0 && link_up[i] != 0)
					log_warn("capture", "%s: interface down (not up, or no carrier); "
						 "capturing resumes when it comes back", ifaces[i]);
				else if (up == 1 && link_up[i] == 0)
					log_info("capture", "%s: interface up again", ifaces[i]);
				if (up >= 0)
					link_up[i] = up;
				iface_counts(caps[i], &gone[i], &c);
				snprintf(name, sizeof(name), "capture.%s.received", ifaces[i]);
				core_put_stat(core, name, (int64_t)c.recv);
				snprintf(name, sizeof(name), "capture.%s.dropped", ifaces[i]);
				core_put_stat(core, name, (int64_t)c.drop);
			}
			if (eve)
				put_eve_stats(core, eve);
			core_write_counters(core);
			core_flush(core);
			last_flush = sync_now();
		}
	}
	daemon_notify("STOPPING=1");
	/* First the flows' ends, the alerts' final state and the last batch,
	 * committed; only then the log lines (stderr may be a pipe whose reader
	 * has gone: SIGPIPE is ignored, and a failed write is no failure). */
	uint64_t stopped_at = core_stats(core)->packets;
	core_finish(core);
	log_info("capture", "stopping; %" PRIu64 " packets", stopped_at);
	log_stop_summary(core, caps, gone, n);
	if (retain_us) {
		const struct store_stats *ss = core_store_stats(core);
		if (ss)
			log_info("store", "%" PRIu64 " events stored, %" PRIu64
				 " older ones deleted (--retain %s)", ss->events, ss->expired,
				 retain_arg);
	}
	if (eve) {
		struct eve_stats es;
		if (eve_finish(eve) < 0)
			rc = EXIT_RUNTIME;
		eve_get_stats(eve, &es);
		log_info("eve", "%" PRIu64 " events and %" PRIu64 " alert lines %s to %s, %"
			 PRIu64 " lines lost, %" PRIu64 " events deleted before they were written",
			 es.events, es.alerts, es.errors ? "rendered" : "written", eve_path,
			 es.errors, es.missed);
		put_eve_stats(core, eve);
		core_flush(core);
	}
out:
	eve_close(eve);
	api_stop(api);
	if (core && core_close(core) < 0) /* the store has said why */
		rc = rc ? rc : EXIT_RUNTIME;
	for (unsigned i = 0; i < n; i++)
		capture_close(caps[i]);
	rules_free(rules);
	return rc;
}

/* ---- serve ------------------------------------------------------------- */

static void usage_serve(FILE *f)
{
	fputs("usage: egresswatch serve [-d DB] [--api ADDR:PORT] [--token-file FILE]\n"
	      "\n"
	      "Serve the HTTP API and the dashboard (docs/api.md) over an existing database,\n"
	      "read-only, until SIGINT or SIGTERM (exit 0). A running `watch` may write the\n"
	      "same database meanwhile.\n"
	      "\n"
	      "  -d, --db DB           SQLite database (default ./" DEFAULT_DB ")\n"
	      "  -a, --api ADDR:PORT   address to listen on (default " API_DEFAULT_ADDR ";\n"
	      "                        [::1]:8080 for IPv6; port 0 picks a free port)\n"
	      "  -t, --token-file F    bearer token (first line of F) every request but\n"
	      "                        /healthz must send; required when ADDR is not loopback\n"
	      "  -h, --help            this text\n"
	      "\n"
	      "Exit status: 0 stopped by a signal; 1 the database is missing or unusable, or\n"
	      "the address cannot be bound; 2 a usage error or an unreadable token file.\n",
	      f);
}

static int cmd_serve(int argc, char **argv)
{
	static const struct option opts[] = {
		{"db", required_argument, NULL, 'd'},
		{"api", required_argument, NULL, 'a'},
		{"token-file", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct api_config acfg = {0};
	struct api *api = NULL;
	char err[1024];
	int opt, rc;

	acfg.db_path = DEFAULT_DB;
	while ((opt = getopt_long(argc, argv, "d:a:t:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			acfg.db_path = optarg;
			break;
		case 'a':
			acfg.addr = optarg;
			break;
		case 't':
			acfg.token_file = optarg;
			break;
		case 'h':
			usage_serve(stdout);
			return 0;
		default:
			usage_serve(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "egresswatch serve: unexpected argument %s\n", argv[optind]);
		return EXIT_USAGE;
	}
	if ((rc = api_start(&api, &acfg, err, sizeof(err))) < 0) {
		fprintf(stderr, "egresswatch serve: %s\n", err);
		return rc == API_EUSAGE ? EXIT_USAGE : EXIT_RUNTIME;
	}
	signal(SIGINT, on_stop_signal);
	signal(SIGTERM, on_stop_signal);
	while (!stop_requested)
		poll(NULL, 0, 200);
	log_info("api", "stopping");
	api_stop(api);
	return 0;
}

/* ---- events / alerts ---------------------------------------------------- */

static int parse_i64(const char *cmd, const char *opt, const char *s, int64_t lo, int64_t hi,
		     int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || end == s || v < lo || v > hi) {
		fprintf(stderr, "egresswatch %s: --%s %s: want a number in %lld..%lld\n", cmd, opt,
			s, (long long)lo, (long long)hi);
		return -1;
	}
	*out = v;
	return 0;
}

static void usage_events(FILE *f)
{
	fputs("usage: egresswatch events [-d DB] [--json] [--kind K] [--host ADDR] [--name NAME]\n"
	      "                          [--from TIME] [--to TIME] [--alert ID] [--since-id N]\n"
	      "                          [--limit N]\n"
	      "\n"
	      "List stored events in id order: a table, or with --json one JSON object per\n"
	      "line, each field as docs/events.md describes it.\n"
	      "\n"
	      "  -d, --db DB       SQLite database (default ./" DEFAULT_DB ")\n"
	      "  -j, --json        JSON lines\n"
	      "  -k, --kind K      only events of kind K: dns, http, tls or icmp\n"
	      "      --host ADDR   only events to or from address ADDR (read through all\n"
	      "                    the events: seconds for millions)\n"
	      "      --name NAME   only events whose name (DNS qname, HTTP Host, TLS SNI,\n"
	      "                    an ICMP error's quoted destination) is NAME or a name\n"
	      "                    under it, with or without a port, case ignored:\n"
	      "                    --name example.com gives a.example.com and\n"
	      "                    example.com:8080, not badexample.com; an address\n"
	      "                    matches itself only (read through all the events too)\n"
	      "      --from TIME   only events at or after TIME (packet time): RFC 3339 as\n"
	      "                    the events show it (2026-11-29T10:00:08Z, any fraction,\n"
	      "                    Z or +01:00), a date (its midnight UTC) or seconds\n"
	      "                    since 1970 (1795946408.5)\n"
	      "      --to TIME     only events before TIME\n"
	      "      --alert ID    what alert ID's source sent and received from 5 s before\n"
	      "                    its first hit to 5 s after its last (--host, --from and\n"
	      "                    --to from the alert)\n"
	      "      --since-id N  only events with id > N\n"
	      "  -n, --limit N     at most N events (default: all)\n"
	      "  -h, --help        this text\n"
	      "\n"
	      "Writing to a file or a pipe with stderr a terminal, it shows its progress\n"
	      "there every 50,000 events.\n",
	      f);
}

/* What `events` and `alerts` share: the same options, one filter each. */
struct list_opts {
	const char *db, *filter;     /* filter: the --kind or --class value */
	const char *severity, *src;  /* alerts only: a minimum level, a source address;
				      * events: src is the --host address */
	char src_buf[64];            /* src in inet_ntop's spelling */
	const char *name;            /* events: --name, as query_canon_name gives it */
	char name_buf[QUERY_NAME_MAX + 1];
	int64_t since_id, limit;
	int timed;                   /* --from or --to: [from_us, to_us) */
	int64_t from_us, to_us;
	int64_t alert;               /* events: --alert ID, 0 for none */
	int json;
};

/* events --alert ID: what the alert's source sent and received from
 * AROUND_ALERT_S before its first hit to AROUND_ALERT_S after its last, as
 * the dashboard's alert panel shows it: o's host and time range. 0, or the
 * exit status after a message. */
#define AROUND_ALERT_S 5
static int around_alert(struct list_opts *o)
{
	struct query *q = NULL;
	json_t *a = NULL;
	char err[512];
	int rc = 0;

	if (query_open(&q, o->db, err, sizeof(err)) < 0) {
		fprintf(stderr, "egresswatch events: %s\n", err);
		return EXIT_RUNTIME;
	}
	int r = query_alert_get(q, o->alert, &a, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "egresswatch events: %s\n", err);
		rc = EXIT_RUNTIME;
	} else if (r > 0) {
		fprintf(stderr, "egresswatch events: --alert %lld: %s has no such alert\n",
			(long long)o->alert, o->db);
		rc = EXIT_USAGE;
	} else {
		const char *src = json_string_value(json_object_get(a, "src_ip"));
		const char *first = json_string_value(json_object_get(a, "first_ts"));
		const char *last = json_string_value(json_object_get(a, "last_ts"));
		if (!src || !first || !last || text_parse_time(first, &o->from_us) < 0 ||
		    text_parse_time(last, &o->to_us) < 0 ||
		    query_canon_addr(src, o->src_buf, sizeof(o->src_buf)) < 0) {
			fprintf(stderr, "egresswatch events: --alert %lld: the alert has no source "
					"or times to look around\n", (long long)o->alert);
			rc = EXIT_RUNTIME;
		} else {
			o->src = o->src_buf;
			o->timed = 1;
			o->from_us -= AROUND_ALERT_S * 1000000ll;
			o->to_us += AROUND_ALERT_S * 1000000ll;
		}
	}
	json_decref(a);
	query_close(q);
	return rc;
}

struct list_cmd {
	const char *name;            /* "events" or "alerts" */
	const char *filter;          /* the filter option: "kind" or "class" */
	int alert_filters;           /* --severity and --src too */
	void (*usage)(FILE *f);
	int (*valid)(const char *v); /* the filter's value is one we know */
	const char *want;            /* what valid() accepts, for the message */
	int (*print)(const struct list_opts *o);
};

static int valid_kind(const char *v)
{
	return !strcmp(v, "dns") || !strcmp(v, "http") || !strcmp(v, "tls") || !strcmp(v, "icmp");
}

static int valid_class(const char *v)
{
	return alerts_class_index(v) >= 0;
}

/* An export to a file or a pipe: 64 KiB writes rather than stdio's 4 KiB
 * (nothing has been written to stdout yet, so setvbuf may be called). */
static void stdout_bulk(void)
{
	if (!isatty(STDOUT_FILENO))
		(void)setvbuf(stdout, NULL, _IOFBF, 1 << 16);
}

static int print_events(const struct list_opts *o)
{
	struct event_filter f = {.kind = o->filter, .host = o->src, .name = o->name,
				 .since_id = o->since_id,
				 .limit = o->limit, .timed = o->timed, .from_us = o->from_us,
				 .to_us = o->to_us};
	stdout_bulk();
	return query_print_events(o->db, &f, stdout, o->json);
}

static int print_alerts(const struct list_opts *o)
{
	struct alert_filter f = {.class_name = o->filter, .severity = o->severity, .src = o->src,
				 .since_id = o->since_id, .limit = o->limit, .timed = o->timed,
				 .from_us = o->from_us, .to_us = o->to_us};
	stdout_bulk();
	return query_print_alerts(o->db, &f, stdout, o->json);
}

static int cmd_list(const struct list_cmd *lc, int argc, char **argv)
{
	const struct option opts[] = {
		{"db", required_argument, NULL, 'd'},
		{"json", no_argument, NULL, 'j'},
		{lc->filter, required_argument, NULL, 'F'},
		{"since-id", required_argument, NULL, 'S'},
		{"limit", required_argument, NULL, 'n'},
		{"from", required_argument, NULL, 'f'},
		{"to", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		/* alerts only */
		{"severity", required_argument, NULL, 'V'},
		{"src", required_argument, NULL, 'R'},
		/* events only */
		{"host", required_argument, NULL, 'H'},
		{"alert", required_argument, NULL, 'A'},
		{"name", required_argument, NULL, 'N'},
		{NULL, 0, NULL, 0},
	};
	struct option used[sizeof(opts) / sizeof(opts[0])];
	struct list_opts o = {.db = DEFAULT_DB, .limit = -1, .from_us = INT64_MIN,
			      .to_us = INT64_MAX};
	char shorts[16];
	int opt;
	size_t nused = 0;

	for (size_t i = 0; opts[i].name; i++) {
		int alerts_only = opts[i].val == 'V' || opts[i].val == 'R';
		int events_only = opts[i].val == 'H' || opts[i].val == 'A' || opts[i].val == 'N';
		if ((alerts_only && !lc->alert_filters) || (events_only && lc->alert_filters))
			continue;
		used[nused++] = opts[i];
	}
	memset(&used[nused], 0, sizeof(used[nused]));
	/* -k for --kind, -c for --class */
	snprintf(shorts, sizeof(shorts), "d:j%c:n:h", lc->filter[0]);
	while ((opt = getopt_long(argc, argv, shorts, used, NULL)) != -1) {
		if (opt == lc->filter[0])
			opt = 'F';
		switch (opt) {
		case 'd':
			o.db = optarg;
			break;
		case 'j':
			o.json = 1;
			break;
		case 'F':
			if (!lc->valid(optarg)) {
				fprintf(stderr, "egresswatch %s: --%s %s: want %s\n", lc->name,
					lc->filter, optarg, lc->want);
				return EXIT_USAGE;
			}
			o.filter = optarg;
			break;
		case 'V':
			if (query_severity_level(optarg) < 0) {
				fprintf(stderr, "egresswatch %s: --severity %s: want info, low, "
						"medium, high or critical, or 1..5\n", lc->name, optarg);
				return EXIT_USAGE;
			}
			o.severity = optarg;
			break;
		case 'R':
		case 'H':
			if (query_canon_addr(optarg, o.src_buf, sizeof(o.src_buf)) < 0) {
				fprintf(stderr, "egresswatch %s: --%s %s: not an IPv4 or IPv6 "
						"address\n", lc->name, opt == 'R' ? "src" : "host",
					optarg);
				return EXIT_USAGE;
			}
			o.src = o.src_buf;
			break;
		case 'N':
			if (query_canon_name(optarg, o.name_buf, sizeof(o.name_buf)) < 0) {
				char shown[256]; /* a control byte shown as \xNN, not sent */
				text_escape(shown, sizeof(shown), (const uint8_t *)optarg,
					    strlen(optarg), NULL);
				fprintf(stderr, "egresswatch %s: --name %s: want a name such as "
						"example.com (not empty, no leading dot, no control "
						"character, at most %d characters)\n", lc->name, shown,
					QUERY_NAME_MAX);
				return EXIT_USAGE;
			}
			o.name = o.name_buf;
			break;
		case 'S':
			if (parse_i64(lc->name, "since-id", optarg, 0, INT64_MAX, &o.since_id) < 0)
				return EXIT_USAGE;
			break;
		case 'A':
			if (parse_i64(lc->name, "alert", optarg, 1, INT64_MAX, &o.alert) < 0)
				return EXIT_USAGE;
			break;
		case 'n':
			if (parse_i64(lc->name, "limit", optarg, 0, INT64_MAX, &o.limit) < 0)
				return EXIT_USAGE;
			break;
		case 'f':
		case 't':
			if (text_parse_time(optarg, opt == 'f' ? &o.from_us : &o.to_us) < 0) {
				fprintf(stderr, "egresswatch %s: --%s %s: want a time as "
						"2026-11-29T10:00:08Z (RFC 3339), 2026-11-29 or "
						"seconds since 1970\n", lc->name,
					opt == 'f' ? "from" : "to", optarg);
				return EXIT_USAGE;
			}
			o.timed = 1;
			break;
		case 'h':
			lc->usage(stdout);
			return 0;
		default:
			lc->usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "egresswatch %s: unexpected argument %s\n", lc->name, argv[optind]);
		return EXIT_USAGE;
	}
	if (o.alert) {
		if (o.src || o.timed) {
			fprintf(stderr, "egresswatch %s: --alert sets the address and the time range: "
					"not with --host, --from or --to\n", lc->name);
			return EXIT_USAGE;
		}
		int r = around_alert(&o);
		if (r)
			return r;
	}
	if (o.timed && o.from_us >= o.to_us) {
		fprintf(stderr, "egresswatch %s: --from is not before --to: nothing lies between\n",
			lc->name);
		return EXIT_USAGE;
	}
	return lc->print(&o) < 0 ? EXIT_RUNTIME : 0;
}

static int cmd_events(int argc, char **argv)
{
	static const struct list_cmd lc = {
		.name = "events", .filter = "kind", .usage = usage_events,
		.valid = valid_kind, .want = "dns, http, tls or icmp", .print = print_events,
	};
	return cmd_list(&lc, argc, argv);
}

static void usage_alerts(FILE *f)
{
	fputs("usage: egresswatch alerts [-d DB] [--json] [--class C] [--severity S] [--src ADDR]\n"
	      "                          [--from TIME] [--to TIME] [--since-id N] [--limit N]\n"
	      "\n"
	      "List stored alerts in id order: a table, or with --json one JSON object per\n"
	      "line, the shape GET /api/v1/alerts gives (docs/api.md).\n"
	      "\n"
	      "  -d, --db DB       SQLite database (default ./" DEFAULT_DB ")\n"
	      "  -j, --json        JSON lines\n"
	      "  -c, --class C     only alerts of class C (dns_tunnel, metadata_probe, ...)\n"
	      "      --severity S  only alerts of severity S or higher (info, low, medium,\n"
	      "                    high, critical, or their numbers 1..5)\n"
	      "      --src ADDR    only alerts from source address ADDR\n"
	      "      --from TIME   only alerts hit at or after TIME (their last hit, packet\n"
	      "                    time), TIME as for `events --from`\n"
	      "      --to TIME     only alerts hit before TIME (their first hit)\n"
	      "      --since-id N  only alerts with id > N\n"
	      "  -n, --limit N     at most N alerts (default: all)\n"
	      "  -h, --help        this text\n"
	      "\n"
	      "Writing to a file or a pipe with stderr a terminal, it shows its progress\n"
	      "there every 50,000 alerts.\n",
	      f);
}

static int cmd_alerts(int argc, char **argv)
{
	static const struct list_cmd lc = {
		.name = "alerts", .filter = "class", .alert_filters = 1, .usage = usage_alerts,
		.valid = valid_class, .want = "one of the classes of docs/detection.md",
		.print = print_alerts,
	};
	return cmd_list(&lc, argc, argv);
}

/* ---- rules ------------------------------------------------------------- */

static void usage_rules(FILE *f)
{
	fputs("usage: egresswatch rules check RULES...\n"
	      "\n"
	      "Validate rules files (docs/rules.md) as start-up would: print\n"
	      "\"RULES: ok (...)\" with what each holds, or the first error as\n"
	      "\"RULES:LINE: message\" on stderr.\n"
	      "\n"
	      "  -h, --help   this text\n"
	      "\n"
	      "Exit status: 0 every file is valid; 2 a usage error, or a file is missing or\n"
	      "invalid.\n",
	      f);
}

static int cmd_rules(int argc, char **argv)
{
	int rc = 0;

	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage_rules(stdout);
			return 0;
		}
	}
	if (argc < 2 || strcmp(argv[1], "check") != 0) {
		if (argc < 2)
			fprintf(stderr, "egresswatch rules: no action given (see --help)\n");
		else
			fprintf(stderr, "egresswatch rules: unknown action '%s' (see --help)\n",
				argv[1]);
		return EXIT_USAGE;
	}
	/* files, and options before "--" (none but --help): what follows
	 * "--" is a file whatever its name; the files are gathered in place,
	 * argv[2 .. 2 + nf) */
	char **files = argv + 2;
	int nf = 0, opts = 1;
	for (int i = 2; i < argc; i++) {
		if (opts && !strcmp(argv[i], "--")) {
			opts = 0;
		} else if (opts && argv[i][0] == '-' && argv[i][1]) {
			char shown[256];
			text_escape(shown, sizeof(shown), (const uint8_t *)argv[i], strlen(argv[i]),
				    NULL);
			fprintf(stderr, "egresswatch rules check: unknown option '%s'\n", shown);
			usage_rules(stderr);
			return EXIT_USAGE;
		} else {
			files[nf++] = argv[i];
		}
	}
	if (nf == 0) {
		fprintf(stderr, "egresswatch rules check: no rules file given (see --help)\n");
		return EXIT_USAGE;
	}
	for (int k = 0; k < nf; k++) {
		const char *file = files[k];
		struct rules *r = NULL;
		char err[1024], sum[512];

		if (rules_load(file, &r, err, sizeof(err)) < 0) {
			fprintf(stderr, "%s\n", err);
			rc = EXIT_USAGE;
			continue;
		}
		rules_summary(r, sum, sizeof(sum));
		printf("%s: ok (%s)\n", file, sum);
		rules_free(r);
	}
	return rc;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{"replay", cmd_replay},
		{"watch", cmd_watch},
		{"serve", cmd_serve},
		{"events", cmd_events},
		{"alerts", cmd_alerts},
		{"rules", cmd_rules},
	};

	/* before any thread: SIGURG wakes replay's reader thread alone */
	instream_wake_init();
	if (argc < 2) {
		usage_main(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage_main(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("egresswatch %s\n", EGRESSWATCH_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "version")) {
		if (argc > 2 && (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help"))) {
			fputs("usage: egresswatch version\n\nPrint the version, the database schema "
			      "it writes, and the version of each\nlibrary it runs with (for a bug "
			      "report). `egresswatch --version` prints the\nfirst line only.\n",
			      stdout);
			return 0;
		}
		if (argc > 2) {
			char shown[256];
			text_escape(shown, sizeof(shown), (const uint8_t *)argv[2], strlen(argv[2]),
				    NULL);
			fprintf(stderr, "egresswatch version: unexpected argument %s (see --help)\n",
				shown);
			return EXIT_USAGE;
		}
		print_version();
		return 0;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name)) {
			/* getopt names argv[0] in its messages: "egresswatch replay:
			 * unrecognized option '--x'", as every other message */
			char prog[32];
			snprintf(prog, sizeof(prog), "egresswatch %s", cmds[i].name);
			argv[1] = prog;
			/*
			 * A write to a pipe whose reader has gone (`watch 2>&1 |
			 * tee log` and Ctrl-C to the whole group) fails with EPIPE
			 * rather than killing the process before it has settled
			 * and committed what it holds: a failed log or summary
			 * write is never fatal. `events` and `alerts` hold
			 * nothing and keep the default, as cat and grep do: a
			 * reader that stops reading (`events --json | head -1`)
			 * ends them quietly.
			 */
			if (strcmp(cmds[i].name, "events") && strcmp(cmds[i].name, "alerts"))
				signal(SIGPIPE, SIG_IGN);
			return cmds[i].fn(argc - 1, argv + 1);
		}
	fprintf(stderr, "egresswatch: unknown command '%s' (see egresswatch --help)\n", argv[1]);
	return EXIT_USAGE;
}
