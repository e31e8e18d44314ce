/*
 * pcapng.c - the pcapng reader of pcapng.h.
 *
 * One block at a time: its 8-byte header (the type, and the total length in
 * the section's byte order, which an SHB sets from its byte-order magic),
 * then the rest of it into one buffer, read through a cursor. A stream that
 * ends between blocks has ended; one that ends inside a block, or whose
 * lengths lie (out of bounds, or not the same at both ends), is damaged
 * there.
 */
#include "pcapng.h"

#include <pcap/dlt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cursor.h"
#include "text.h" /* TEXT_TIME_MAX_US */

enum {
	BT_PB = 2,     /* Packet Block (obsolete) */
	BT_SPB = 3,    /* Simple Packet Block */
	BT_IDB = 1,    /* Interface Description Block */
	BT_EPB = 6,    /* Enhanced Packet Block */
	BOM = 0x1A2B3C4D,
	OPT_END = 0,
	OPT_TSRESOL = 9,
	OPT_TSOFFSET = 14,
	LINKTYPE_RAW = 101,
	LINKTYPE_ATM_RFC1483 = 100,
};

struct iface {
	int dlt;
	uint32_t snaplen;
	uint64_t units;  /* timestamp units per second (if_tsresol; default 10^6) */
	int64_t offset;  /* seconds added (if_tsoffset) */
};

struct pcapng {
	FILE *f;
	uint8_t pre[4];   /* bytes the caller read before us */
	size_t npre, ipre;
	int be;           /* the current section's byte order */
	struct iface *ifs;
	uint32_t nif, capif;
	uint8_t *buf;     /* the current block */
	size_t cap;
	int first_dlt;
	uint64_t last_ts; /* for Simple Packet Blocks, which have none */
	uint64_t off;     /* bytes of the stream read so far (pre included) */
	uint64_t blk;     /* where the block read last starts */
	int lost_section; /* a section header could not be read: what follows it
			   * is another section, whose interfaces are not ours */
	uint32_t nif_open; /* the interfaces described before the first packet */
	/* pcapng_open reads on to the first block that is neither an interface
	 * nor one to skip; its reading is held for pcapng_next to take first */
	int held;
	int held_r;
	uint32_t held_type;
	struct cur held_body;
	char held_err[256];
};

static size_t read_n(struct pcapng *g, uint8_t *dst, size_t n)
{
	size_t got = 0;
	while (got < n && g->ipre < g->npre)
		dst[got++] = g->pre[g->ipre++];
	if (got < n)
		got += fread(dst + got, 1, n - got, g->f);
	g->off += got;
	return got;
}

static uint32_t rd32(struct cur *c, int be)
{
	return be ? cur_be32(c) : cur_le32(c);
}

static uint16_t rd16(struct cur *c, int be)
{
	return be ? cur_be16(c) : cur_le16(c);
}

/* Read the next block into g->buf. 1 with its type and body (between the
 * header and the trailing length); 0 at a clean end; -1 damaged. */
static int read_block(struct pcapng *g, uint32_t *type, struct cur *body, char *err,
		      size_t errlen)
{
	uint8_t h[12];
	size_t got, have = 8;
	struct cur c;

	g->blk = g->off;
	got = read_n(g, h, 8);
	if (got == 0 && !ferror(g->f))
		return 0;
	if (got == 0) {
		/* a read that failed (a decompressor's error, EIO) at a block
		 * boundary: not the stream's end */
		snprintf(err, errlen, "the stream could not be read on");
		return -1;
	}
	if (got < 8) {
		snprintf(err, errlen, "truncated pcapng block header (%zu of 8 bytes)", got);
		return -1;
	}
	c = cur_init(h, 8);
	*type = rd32(&c, g->be); /* an SHB's type reads the same either way */
	if (*type == PCAPNG_MAGIC) {
		g->lost_section = 1; /* until on_shb has read it */
		if ((got = read_n(g, h + 8, 4)) < 4) {
			snprintf(err, errlen, "truncated section header block (%zu of 12 bytes)",
				 8 + got);
			return -1;
		}
		c = cur_init(h + 8, 4);
		uint32_t bom = cur_le32(&c);
		if (bom != BOM && bom != __builtin_bswap32(BOM)) {
			snprintf(err, errlen, "section header block with a bad byte-order magic 0x%08x",
				 bom);
			return -1;
		}
		g->be = bom != BOM;
		have = 12;
	}
	c = cur_init(h + 4, 4);
	uint32_t len = rd32(&c, g->be);
	uint32_t least = *type == PCAPNG_MAGIC ? 28 : 12;
	if (len < least || len % 4 || len > PCAPNG_MAX_BLOCK) {
		snprintf(err, errlen, "block of type 0x%08x with a bad length %u (want %u..%u, a multiple of 4)",
			 *type, len, least, PCAPNG_MAX_BLOCK);
		return -1;
	}
	if (g->cap < len) {
		size_t ncap = g->cap ? g->cap : 65536;
		while (ncap < len)
			ncap *= 2;
		uint8_t *nb = realloc(g->buf, ncap);
		if (!nb) {
			snprintf(err, errlen, "out of memory for a block of %u bytes", len);
			return -1;
		}
		g->buf = nb;
		g->cap = ncap;
	}
	memcpy(g->buf, h, have);
	got = read_n(g, g->buf + have, len - have);
	if (got < len - have) {
		snprintf(err, errlen, "truncated pcapng block: %u bytes declared, %zu read", len,
			 have + got);
		return -1;
	}
	/* the length again at the block's end: where the two differ, one of
	 * them lies, and the block may hold the next ones (or be cut) */
	c = cur_init(g->buf + len - 4, 4);
	uint32_t trail = rd32(&c, g->be);
	if (trail != len) {
		snprintf(err, errlen, "block of type 0x%08x with a length of %u at its start and %u "
			 "at its end", *type, len, trail);
		return -1;
	}
	*body = cur_init(g->buf + 8, len - 12);
	return 1;
}

static int is_packet(uint32_t type)
{
	return type == BT_EPB || type == BT_PB || type == BT_SPB;
}

static int on_shb(struct pcapng *g, struct cur *b, char *err, size_t errlen)
{
	cur_skip(b, 4); /* the byte-order magic, read already */
	uint16_t major = rd16(b, g->be), minor = rd16(b, g->be);
	if (b->err || major != 1 || (minor != 0 && minor != 2)) {
		snprintf(err, errlen, "unsupported pcapng version %u.%u", major, minor);
		return -1;
	}
	g->nif = 0; /* a new section: its interfaces start over */
	g->lost_section = 0;
	return 0;
}

static int on_idb(struct pcapng *g, struct cur *b, char *err, size_t errlen)
{
	struct iface i = {.units = 1000000};
	uint16_t lt = rd16(b, g->be);

	cur_skip(b, 2);
	i.snaplen = rd32(b, g->be);
	if (b->err) {
		snprintf(err, errlen, "interface description block shorter than 8 bytes");
		return -1;
	}
	/* LINKTYPE_* values are libpcap's DLT_* values but for these two */
	i.dlt = lt == LINKTYPE_RAW ? DLT_RAW : lt == LINKTYPE_ATM_RFC1483 ? DLT_ATM_RFC1483 : lt;
	/* Options: code, length, value padded to 4. One that runs past the
	 * block ends them (what came before stands). */
	while (cur_left(b) >= 4) {
		uint16_t code = rd16(b, g->be), olen = rd16(b, g->be);
		struct cur v = cur_take(b, olen);
		cur_skip(b, (4u - olen % 4u) % 4u);
		if (code == OPT_END || v.err)
			break;
		if (code == OPT_TSRESOL && olen >= 1) {
			uint8_t r = cur_u8(&v), e = r & 0x7f;
			if ((r & 0x80) ? e > 63 : e > 19) {
				snprintf(err, errlen, "interface %u: if_tsresol 0x%02x is out of range",
					 g->nif, r);
				return -1;
			}
			i.units = 1;
			for (unsigned k = 0; k < e; k++)
				i.units *= (r & 0x80) ? 2 : 10;
		} else if (code == OPT_TSOFFSET && olen == 8) {
			uint64_t w0 = rd32(&v, g->be), w1 = rd32(&v, g->be);
			i.offset = (int64_t)(g->be ? w0 << 32 | w1 : w1 << 32 | w0);
		}
	}
	if (g->nif == PCAPNG_MAX_IFACES) {
		snprintf(err, errlen, "more than %u interfaces in one section", PCAPNG_MAX_IFACES);
		return -1;
	}
	if (g->nif == g->capif) {
		uint32_t ncap = g->capif ? g->capif * 2 : 8;
		struct iface *n = realloc(g->ifs, ncap * sizeof(*n));
		if (!n) {
			snprintf(err, errlen, "out of memory for %u interfaces", ncap);
			return -1;
		}
		g->ifs = n;
		g->capif = ncap;
	}
	g->ifs[g->nif++] = i;
	return 0;
}

/* A timestamp in the interface's units, plus its if_tsoffset, to
 * microseconds since the epoch. A nonsense timestamp (64 bits, and an
 * offset of either sign) is held to the times RFC 3339 can write: before
 * 1970 is 0, after 9999 is TEXT_TIME_MAX_US. So every packet time is a
 * positive 64-bit integer in the database, in order with the others. */
static uint64_t ts_us(const struct iface *i, uint64_t t)
{
	uint64_t sec = t / i->units, frac = t % i->units;
	uint64_t us = (uint64_t)((unsigned __int128)frac * 1000000u / i->units);
	__int128 v = ((__int128)sec + i->offset) * 1000000 + us;
	if (v < 0)
		return 0;
	return v > (__int128)TEXT_TIME_MAX_US ? TEXT_TIME_MAX_US : (uint64_t)v;
}

static const struct iface *iface_of(struct pcapng *g, uint32_t id, char *err, size_t errlen)
{
	if (id < g->nif)
		return &g->ifs[id];
	snprintf(err, errlen, "a packet block for interface %u, but the section has %u", id,
		 g->nif);
	return NULL;
}

/* Enhanced (EPB) and obsolete (PB) packet blocks into *out. */
static int on_packet(struct pcapng *g, uint32_t type, struct cur *b, struct pcapng_pkt *out,
		     char *err, size_t errlen)
{
	uint32_t id = type == BT_EPB ? rd32(b, g->be) : rd16(b, g->be);
	if (type == BT_PB)
		cur_skip(b, 2); /* drops count */
	uint64_t hi = rd32(b, g->be), lo = rd32(b, g->be);
	uint32_t caplen = rd32(b, g->be), wirelen = rd32(b, g->be);
	const struct iface *i;

	if (b->err) {
		snprintf(err, errlen, "%s shorter than its fixed fields",
			 type == BT_EPB ? "enhanced packet block" : "packet block");
		return -1;
	}
	if (caplen > cur_left(b)) {
		snprintf(err, errlen, "a captured length of %u past its block (%zu bytes left)",
			 caplen, cur_left(b));
		return -1;
	}
	if (!(i = iface_of(g, id, err, errlen)))
		return -1;
	out->ts_us = g->last_ts = ts_us(i, hi << 32 | lo);
	out->caplen = caplen;
	out->wirelen = wirelen;
	out->dlt = i->dlt;
	out->data = cur_ptr(b, caplen);
	return 1;
}

/* A Simple Packet Block: interface 0, no timestamp (the last one seen is
 * used, so packet time does not jump back to 1970), the captured part is
 * what the block holds, at most the interface's snaplen. */
static int on_simple(struct pcapng *g, struct cur *b, struct pcapng_pkt *out, char *err,
		     size_t errlen)
{
	uint32_t wirelen = rd32(b, g->be);
	const struct iface *i;

	if (b->err) {
		snprintf(err, errlen, "simple packet block shorter than 4 bytes");
		return -1;
	}
	if (!(i = iface_of(g, 0, err, errlen)))
		return -1;
	size_t caplen = cur_left(b);
	if (caplen > wirelen)
		caplen = wirelen;
	if (i->snaplen && caplen > i->snaplen)
		caplen = i->snaplen;
	out->ts_us = g->last_ts;
	out->caplen = (uint32_t)caplen;
	out->wirelen = wirelen;
	out->dlt = i->dlt;
	out->data = cur_ptr(b, caplen);
	return 1;
}

struct pcapng *pcapng_open(FILE *f, const uint8_t *pre, size_t npre, char *err, size_t errlen)
{
	struct pcapng *g = calloc(1, sizeof(*g));
	uint32_t type;
	struct cur b;
	int r;

	if (!g) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	g->f = f;
	g->npre = npre > sizeof(g->pre) ? sizeof(g->pre) : npre;
	if (g->npre)
		memcpy(g->pre, pre, g->npre);
	if ((r = read_block(g, &type, &b, err, errlen)) <= 0 || type != PCAPNG_MAGIC) {
		if (r == 0 || (r > 0 && type != PCAPNG_MAGIC))
			snprintf(err, errlen, "not a pcapng file (no section header block)");
		goto fail;
	}
	if (on_shb(g, &b, err, errlen) < 0)
		goto fail;
	/* up to the first interface, as libpcap does */
	for (;;) {
		r = read_block(g, &type, &b, err, errlen);
		if (r == 0) {
			snprintf(err, errlen, "the capture file has no Interface Description Blocks");
			goto fail;
		}
		if (r < 0)
			goto fail;
		if (type == PCAPNG_MAGIC && on_shb(g, &b, err, errlen) < 0)
			goto fail;
		if (is_packet(type)) {
			snprintf(err, errlen, "the capture file has a packet block before any "
					      "Interface Description Blocks");
			goto fail;
		}
		if (type == BT_IDB) {
			if (on_idb(g, &b, err, errlen) < 0)
				goto fail;
			break;
		}
	}
	g->first_dlt = g->ifs[0].dlt;
	/* On over the interfaces that follow (dumpcap describes them all before
	 * its first packet) and the blocks skipped, so the caller knows every
	 * link type the file starts with (pcapng_dlts); the block that stops
	 * this, or its damage, or the end, is held for pcapng_next. */
	for (;;) {
		r = read_block(g, &type, &b, g->held_err, sizeof(g->held_err));
		if (r > 0 && type == BT_IDB) {
			if (on_idb(g, &b, g->held_err, sizeof(g->held_err)) == 0)
				continue;
			r = -1; /* damage there, which pcapng_next tells */
		} else if (r > 0 && type != PCAPNG_MAGIC && !is_packet(type)) {
			continue; /* name resolution, statistics ...: skipped */
		}
		break;
	}
	g->held = 1;
	g->held_r = r;
	g->held_type = type;
	g->held_body = b;
	g->nif_open = g->nif;
	return g;
fail:
	pcapng_close(g);
	return NULL;
}

void pcapng_rebase(struct pcapng *g, uint64_t base)
{
	g->off += base;
	g->blk += base;
}

int pcapng_first_dlt(const struct pcapng *g)
{
	return g->first_dlt;
}

size_t pcapng_dlts(const struct pcapng *g, int *dlts, size_t max)
{
	size_t n = 0;

	for (uint32_t k = 0; k < g->nif_open && n < max; k++)
		dlts[n++] = g->ifs[k].dlt;
	return n;
}

/* The next block: the one pcapng_open held, then read_block's. */
static int next_block(struct pcapng *g, uint32_t *type, struct cur *body, char *err,
		      size_t errlen)
{
	if (!g->held)
		return read_block(g, type, body, err, errlen);
	g->held = 0;
	*type = g->held_type;
	*body = g->held_body;
	if (g->held_r < 0)
		snprintf(err, errlen, "%s", g->held_err);
	return g->held_r;
}

int pcapng_next(struct pcapng *g, struct pcapng_pkt *out, char *err, size_t errlen)
{
	uint32_t type;
	struct cur b;
	int r;

	while ((r = next_block(g, &type, &b, err, errlen)) > 0) {
		switch (type) {
		case PCAPNG_MAGIC:
			if (on_shb(g, &b, err, errlen) < 0)
				return -1;
			break;
		case BT_IDB:
			if (on_idb(g, &b, err, errlen) < 0)
				return -1;
			break;
		case BT_EPB:
		case BT_PB:
			return on_packet(g, type, &b, out, err, errlen);
		case BT_SPB:
			return on_simple(g, &b, out, err, errlen);
		default: /* name resolution, statistics, secrets, custom ... */
			break;
		}
	}
	return r;
}

/* Block types a block found after damage may have: those of the pcapng
 * specification (section, interface, packets, names, statistics, secrets,
 * systemd journal, custom). */
static int known_type(uint32_t t)
{
	return t == PCAPNG_MAGIC || (t >= 1 && t <= 6) || t == 0x0A || t == 9 ||
	       t == 0x80000001u || t == 0xBAD || t == 0x40000BAD;
}

/* The length of a plausible block at off of a file of size bytes, or 0: a
 * known type, a length of a whole number of words within bounds and the
 * file, the same length again at its end, and for a packet block an
 * interface the section has and data that fit. In g's byte order (a
 * section header sets its own). */
static uint32_t block_at(const struct pcapng *g, int fd, uint64_t off, uint64_t size)
{
	uint8_t h[20], t[4];
	int be = g->be;
	struct cur c;

	if (off + 12 > size || pread(fd, h, 12, (off_t)off) != 12)
		return 0;
	c = cur_init(h, 12);
	uint32_t type = rd32(&c, be);
	if (type == PCAPNG_MAGIC) {
		struct cur b = cur_init(h + 8, 4);
		uint32_t bom = cur_le32(&b);
		if (bom != BOM && bom != __builtin_bswap32(BOM))
			return 0;
		be = bom != BOM;
	}
	c = cur_init(h + 4, 4);
	uint32_t len = rd32(&c, be);
	if (!known_type(type) || len < 12 || len % 4 || len > PCAPNG_MAX_BLOCK || off + len > size ||
	    pread(fd, t, 4, (off_t)(off + len - 4)) != 4)
		return 0;
	c = cur_init(t, 4);
	if (rd32(&c, be) != len)
		return 0;
	if (type == BT_EPB || type == BT_PB) {
		/* interface (32 bits; 16 in a Packet Block), time, caplen */
		if (len < 32 || pread(fd, h, 20, (off_t)(off + 8)) != 20)
			return 0;
		c = cur_init(h, 20);
		uint32_t ifid = type == BT_EPB ? rd32(&c, be) : rd16(&c, be);
		if (type == BT_PB)
			cur_skip(&c, 2);
		cur_skip(&c, 8);
		if (ifid >= g->nif || rd32(&c, be) > len - 32)
			return 0;
	}
	return len;
}

int pcapng_resync(struct pcapng *g, uint64_t size, uint64_t *from, uint64_t *to)
{
	int fd = fileno(g->f);

	*from = g->blk;
	if (fd < 0 || g->npre != g->ipre)
		return -1;
	/* byte by byte (what was inserted need not be whole words), a window
	 * at a time; only a known block type is looked at further */
	enum { WIN = 1 << 16 };
	uint8_t *win = malloc(WIN + 4);
	if (!win)
		return -1;
	for (uint64_t base = g->blk + 1; base + 12 <= size; base += WIN) {
		size_t want = base + WIN + 4 <= size ? WIN + 4 : (size_t)(size - base);
		ssize_t got = pread(fd, win, want, (off_t)base);
		if (got < 4)
			break;
		for (size_t i = 0; i + 4 <= (size_t)got && i < WIN; i++) {
			struct cur c = cur_init(win + i, 4);
			uint64_t o = base + i;
			uint32_t len;
			if (!known_type(rd32(&c, g->be)) || !(len = block_at(g, fd, o, size)))
				continue;
			/* and one more after it, or the end of the file */
			if (o + len != size && !block_at(g, fd, o + len, size))
				continue;
			free(win);
			if (fseek(g->f, (long)o, SEEK_SET) != 0)
				return -1;
			g->off = o;
			*to = o;
			/* Past a section header that could not be read, the blocks
			 * are that section's: its interfaces start afresh (in the
			 * byte order its header gave, when that could be read), and
			 * its packets are never read with the last section's. (The
			 * search above took the old ones, so the new section's first
			 * interface, followed by a packet of it, could be found.) */
			if (g->lost_section) {
				g->nif = 0;
				g->lost_section = 0;
			}
			return 0;
		}
	}
	free(win);
	return -1;
}

void pcapng_close(struct pcapng *g)
{
	if (!g)
		return;
	free(g->ifs);
	free(g->buf);
	free(g);
}
