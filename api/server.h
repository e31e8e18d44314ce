/*
 * server.h - the HTTP API and dashboard (docs/api.md, architecture.md
 * section 5), served by libmicrohttpd over a read-only SQLite connection.
 *
 * The server runs on its own threads (one per connection, bounded), never on
 * the capture thread, and reads the database only through api/query.h: its
 * connections are SQLITE_OPEN_READONLY and the writer keeps the file in WAL,
 * so neither side blocks the other. It binds 127.0.0.1:8080 by default; any
 * other (non-loopback) address needs a bearer token read from a file, which
 * every request but /healthz must then present.
 *
 * Limits: connections in total and per client address, an idle timeout per
 * connection, the memory a request may use (which bounds its header size),
 * and a bounded number of server-sent-event streams with a maximum lifetime.
 */
#ifndef EW_API_SERVER_H
#define EW_API_SERVER_H

#include <stddef.h>
#include <stdint.h>

#define API_DEFAULT_ADDR "127.0.0.1:8080"

/* api_check_config()/api_start() result for a usage or input error (bad
 * address, unreadable or empty token file, non-loopback without a token):
 * the CLI exits 2. Other failures are -1 (exit 1). */
#define API_EUSAGE (-2)

struct api_config {
	const char *db_path;     /* the database to serve (must exist) */
	const char *addr;        /* "ADDR:PORT", "[V6]:PORT", ":PORT" or NULL for
				  * API_DEFAULT_ADDR; port 0 picks a free port */
	const char *token_file;  /* NULL: no token (loopback only) */
	/* Limits; 0 picks the default in brackets. */
	unsigned max_connections;   /* [128] */
	unsigned per_ip_connections;/* [64]: a reverse proxy is one address */
	unsigned timeout_s;         /* idle timeout per connection [10] */
	size_t request_memory;      /* bytes per connection, bounds the header [32768] */
	unsigned max_streams;       /* concurrent /api/v1/stream clients [16] */
	unsigned stream_max_s;      /* lifetime of one stream [3600] */
	unsigned stream_poll_ms;    /* database poll interval of a stream [500] */
	unsigned keepalive_s;       /* stream keep-alive comment interval [15] */
};

struct api;

/*
 * Check the address and read the token file without binding anything, so a
 * command can refuse a bad configuration before it opens its captures.
 * Returns 0, or API_EUSAGE with a one-line reason naming the option or file
 * in err.
 */
int api_check_config(const struct api_config *cfg, char *err, size_t errlen);

/*
 * Check the configuration, open the database read-only, bind and start
 * serving on internal threads. Logs "serving API on http://ADDR:PORT/" with
 * the bound port. On success *out is the running server (api_stop() frees
 * it) and 0 is returned; otherwise API_EUSAGE or -1 with a one-line reason
 * naming the option or file in err. cfg's strings are copied.
 */
int api_start(struct api **out, const struct api_config *cfg, char *err, size_t errlen);

/* The bound port (useful when cfg.addr asked for port 0). */
unsigned api_port(const struct api *a);

/* The base URL, "http://127.0.0.1:8080/", owned by a. */
const char *api_url(const struct api *a);

/* Stop accepting, end the streams, wait for the connection threads and free
 * everything. NULL is fine. */
void api_stop(struct api *a);

/* The dashboard's files, compiled in by api/embed_static.py from
 * api/dashboard/ (name is the file name, without a directory). The table
 * ends with a NULL name. */
struct api_static_file {
	const char *name;
	const char *content_type;
	const unsigned char *data;
	size_t len;
};
extern const struct api_static_file api_static_files[];

#endif
