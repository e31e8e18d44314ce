/* test_text.c - text.c (escaping, addresses, time, entropy) and record.c. */
#include <arpa/inet.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "sensor/record.h"
#include "sensor/text.h"

static void test_escape(void)
{
	char out[64];
	int cut;
	const uint8_t raw[] = {'a', '.', 0x00, 0xff, '\\', ' ', '~', 0x7f, 0x1f};

	CHECK_EQ(text_escape(out, sizeof(out), raw, sizeof(raw), &cut), 22);
	CHECK_STR(out, "a.\\x00\\xff\\\\ ~\\x7f\\x1f");
	CHECK_EQ(cut, 0);
	/* Cut at a whole escape, never in the middle of one. */
	CHECK_EQ(text_escape(out, 5, raw, sizeof(raw), &cut), 2);
	CHECK_STR(out, "a.");
	CHECK_EQ(cut, 1);
	CHECK_EQ(text_escape(out, 7, raw, sizeof(raw), &cut), 6);
	CHECK_STR(out, "a.\\x00");
	CHECK_EQ(text_escape(out, 0, raw, 1, &cut), 0);
	CHECK_EQ(cut, 1);
	CHECK_EQ(text_escape(out, 8, raw, 0, &cut), 0);
	CHECK_STR(out, "");
	/* No separator byte of record.h survives escaping. */
	const uint8_t seps[] = {0x1d, 0x1e, 0x1f, '\n', '"'};
	text_escape(out, sizeof(out), seps, sizeof(seps), NULL);
	CHECK_STR(out, "\\x1d\\x1e\\x1f\\x0a\"");
}

static void test_addr_time(void)
{
	char out[64];
	const uint8_t v4[4] = {169, 254, 169, 254};
	const uint8_t v6[16] = {0xfd, 0, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54};

	text_addr(out, sizeof(out), 4, v4);
	CHECK_STR(out, "169.254.169.254");
	text_addr(out, sizeof(out), 6, v6);
	CHECK_STR(out, "fd00:ec2::254");
	CHECK_EQ(text_time(out, sizeof(out), 1796032865861204ull), 27);
	CHECK_STR(out, "2026-11-30T10:01:05.861204Z");
	text_time(out, sizeof(out), 0);
	CHECK_STR(out, "1970-01-01T00:00:00.000000Z");
	/* four-digit years only (RFC 3339): the last microsecond of 9999, and
	 * anything after it, which a pcapng timestamp can say */
	CHECK_EQ(text_time(out, sizeof(out), 253402300799999999ull), 27);
	CHECK_STR(out, "9999-12-31T23:59:59.999999Z");
	CHECK_EQ(text_time(out, sizeof(out), 253402300800000000ull), 27);
	CHECK_STR(out, "9999-12-31T23:59:59.999999Z");
	text_time(out, sizeof(out), UINT64_MAX);
	CHECK_STR(out, "9999-12-31T23:59:59.999999Z");
}

/* text_addr formats by itself: the same text as inet_ntop for every shape
 * of zero runs, IPv4-mapped and -compatible forms, and random addresses. */
static void test_addr_vs_inet_ntop(void)
{
	uint32_t x = 777;
	char got[64], want[64];

	for (int t = 0; t < 20000; t++) {
		uint8_t a[16];
		for (int i = 0; i < 16; i++) {
			x = x * 1103515245u + 12345u;
			a[i] = (uint8_t)(x >> 16);
		}
		/* zero the words of a random mask: runs of every length and place */
		x = x * 1103515245u + 12345u;
		unsigned zmask = t % 3 ? (x >> 8) & 0xff : 0;
		for (int w = 0; w < 8; w++)
			if (zmask >> w & 1)
				a[2 * w] = a[2 * w + 1] = 0;
		if (t % 7 == 0) { /* ::ffff:a.b.c.d and ::a.b.c.d */
			memset(a, 0, 10);
			a[10] = a[11] = (uint8_t)(t % 14 ? 0xff : 0);
		}
		CHECK(inet_ntop(AF_INET6, a, want, sizeof(want)) != NULL);
		CHECK_EQ(text_addr(got, sizeof(got), 6, a), strlen(want));
		CHECK_STR(got, want);
		CHECK(inet_ntop(AF_INET, a, want, sizeof(want)) != NULL);
		CHECK_EQ(text_addr(got, sizeof(got), 4, a), strlen(want));
		CHECK_STR(got, want);
	}
	const uint8_t zero[16] = {0};
	CHECK_EQ(text_addr(got, sizeof(got), 6, zero), 2);
	CHECK_STR(got, "::");
	CHECK_EQ(text_addr(got, 4, 4, zero), 0); /* "0.0.0.0" does not fit in 4 */
	CHECK_STR(got, "");
}

static void test_entropy(void)
{
	const uint8_t same[] = "aaaaaaaa";
	const uint8_t two[] = "abababab";
	uint8_t all[256];

	for (int i = 0; i < 256; i++)
		all[i] = (uint8_t)i;
	CHECK(text_entropy(same, 8) == 0.0);
	CHECK(fabs(text_entropy(two, 8) - 1.0) < 1e-9);
	CHECK(fabs(text_entropy(all, 256) - 8.0) < 1e-9);
	CHECK(text_entropy(all, 0) == 0.0);

	/* Bit for bit the plain definition (sum over all 256 byte values in
	 * order), which the ICMP entropy x100 rounding depends on. */
	uint32_t x = 12345;
	for (int t = 0; t < 2000; t++) {
		uint8_t buf[300];
		size_t n = 1 + (size_t)(t * 7 % 300);
		unsigned alpha = 1 + (unsigned)(t % 256);
		unsigned counts[256] = {0};
		double ref = 0.0;
		for (size_t i = 0; i < n; i++) {
			x = x * 1103515245u + 12345u;
			buf[i] = (uint8_t)((x >> 16) % alpha);
			counts[buf[i]]++;
		}
		for (int i = 0; i < 256; i++)
			if (counts[i])
				ref -= (double)counts[i] / (double)n *
				       log2((double)counts[i] / (double)n);
		CHECK(text_entropy(buf, n) == ref);
	}
}

static void test_record(void)
{
	char buf[32];
	struct rec r;
	const char *s, *piece;
	size_t n, len;

	rec_init(&r, buf, sizeof(buf));
	rec_str(&r, "a");
	rec_u64(&r, 42);
	rec_end(&r);
	rec_str(&r, "b");
	CHECK_STR(buf, "a\x1f" "42\x1e" "b");
	CHECK_EQ(r.overflow, 0);
	s = buf;
	n = strlen(buf);
	CHECK(rec_split(&s, &n, REC_RS, &piece, &len));
	CHECK_EQ(len, 4);
	CHECK(rec_split(&s, &n, REC_RS, &piece, &len));
	CHECK_EQ(len, 1);
	CHECK(piece[0] == 'b');
	CHECK(!rec_split(&s, &n, REC_RS, &piece, &len));
	/* Overflow is sticky and never writes past the buffer. */
	rec_init(&r, buf, 8);
	rec_str(&r, "1234567");
	CHECK_EQ(r.overflow, 0);
	rec_str(&r, "x");
	CHECK_EQ(r.overflow, 1);
	CHECK_STR(buf, "1234567");
	rec_i64(&r, -5);
	CHECK_EQ(r.len, 7);
}

/* rec_fields_*: every field counts, an empty last one too; past the end a
 * field reads ""; numbers of up to 10 digits. */
static void test_record_fields(void)
{
	struct rec_fields f;
	size_t n;
	const char *s;
	char many[64];

	rec_fields_split(&f, "a\x1f\x1f" "42\x1f", 6);
	CHECK_EQ(f.count, 4);
	s = rec_fields_str(&f, 0, &n);
	CHECK(n == 1 && s[0] == 'a');
	CHECK(rec_fields_empty(&f, 1));
	CHECK_EQ(rec_fields_num(&f, 2), 42);
	CHECK(rec_fields_empty(&f, 3));
	CHECK(rec_fields_is(&f, 3, ""));
	CHECK(rec_fields_empty(&f, 4));
	CHECK(rec_fields_empty(&f, -1));
	CHECK(rec_fields_is(&f, 0, "a"));
	CHECK(!rec_fields_is(&f, 0, "ab"));
	CHECK(!rec_fields_is(&f, 2, "4"));
	CHECK_EQ(rec_fields_num(&f, 0), -1);
	CHECK_EQ(rec_fields_num(&f, 1), -1);
	CHECK_EQ(rec_fields_num(&f, 9), -1);

	rec_fields_split(&f, "", 0);
	CHECK_EQ(f.count, 1);
	CHECK(rec_fields_empty(&f, 0));

	rec_fields_split(&f, "4294967295\x1f" "99999999999\x1f-1\x1f 1", 28);
	CHECK_EQ(f.count, 4);
	CHECK_EQ(rec_fields_num(&f, 0), 4294967295LL);
	CHECK_EQ(rec_fields_num(&f, 1), -1);
	CHECK_EQ(rec_fields_num(&f, 2), -1);
	CHECK_EQ(rec_fields_num(&f, 3), -1);

	/* REC_FIELDS_MAX fields are read; one more is no known layout */
	memset(many, REC_US, sizeof(many));
	rec_fields_split(&f, many, REC_FIELDS_MAX - 1);
	CHECK_EQ(f.count, REC_FIELDS_MAX);
	rec_fields_split(&f, many, REC_FIELDS_MAX);
	CHECK_EQ(f.count, REC_FIELDS_MAX + 1);
	CHECK(rec_fields_empty(&f, REC_FIELDS_MAX));
	rec_fields_split(&f, many, sizeof(many));
	CHECK_EQ(f.count, REC_FIELDS_MAX + 1);
}

static void test_duration(void)
{
	const uint64_t S = 1000000, MAX = 100ull * 366 * 86400 * S;
	uint64_t us = 0;

	CHECK_EQ(text_duration("90", S, MAX, &us), 0);
	CHECK_EQ(us, 90 * S);
	CHECK_EQ(text_duration("90s", S, MAX, &us), 0);
	CHECK_EQ(us, 90 * S);
	CHECK_EQ(text_duration("30m", S, MAX, &us), 0);
	CHECK_EQ(us, 1800 * S);
	CHECK_EQ(text_duration("12h", S, MAX, &us), 0);
	CHECK_EQ(us, 12 * 3600 * S);
	CHECK_EQ(text_duration("7d", S, MAX, &us), 0);
	CHECK_EQ(us, 7 * 86400 * S);
	CHECK_EQ(text_duration("2w", S, MAX, &us), 0);
	CHECK_EQ(us, 14 * 86400 * S);
	CHECK_EQ(text_duration("036600d", S, MAX, &us), 0); /* 100 years of 366 days */
	CHECK_EQ(us, MAX);
	us = 42;
	/* not a duration, or out of range: *us untouched */
	const char *bad[] = {"", "s", "d7", "7dd", "7 d", " 7d", "7D", "7x", "-1", "+1", "1.5h",
			     "0", "0s", "36601d", "99999999999999999999", "9999999999999999999w",
			     "18446744073709551616"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (text_duration(bad[i], S, MAX, &us) != -1)
			fprintf(stderr, "  accepted \"%s\"\n", bad[i]);
		CHECK_EQ(text_duration(bad[i], S, MAX, &us), -1);
	}
	CHECK_EQ(us, 42);
	CHECK_EQ(text_duration("1", 2 * S, MAX, &us), -1);
	CHECK_EQ(text_duration("2", 2 * S, MAX, &us), 0);
}

static int64_t ptime(const char *s)
{
	int64_t us = -777;
	return text_parse_time(s, &us) == 0 ? us : -777;
}

/* text_parse_time: the forms it takes, against known instants and against
 * text_time (every time it writes, it reads back), and what it refuses. */
static void test_parse_time(void)
{
	const int64_t t = 1796032808661204ll; /* 2026-11-30T10:00:08.661204Z */
	char buf[40];

	CHECK_EQ(ptime("2026-11-30T10:00:08.661204Z"), t);
	CHECK_EQ(ptime("2026-11-30t10:00:08.661204z"), t);
	CHECK_EQ(ptime("2026-11-30 10:00:08.661204Z"), t);
	CHECK_EQ(ptime("2026-11-30T11:30:08.661204+01:30"), t);
	CHECK_EQ(ptime("2026-11-30T05:00:08.661204-05:00"), t);
	CHECK_EQ(ptime("2026-11-30T10:00:08.6612049999Z"), t); /* past the microsecond: dropped */
	CHECK_EQ(ptime("2026-11-30T10:00:08.66Z"), t - 1204);
	CHECK_EQ(ptime("2026-11-30T10:00:08Z"), t - 661204);
	CHECK_EQ(ptime("2026-11-30"), t - 661204 - 36008ll * 1000000);
	CHECK_EQ(ptime("1796032808.661204"), t);
	CHECK_EQ(ptime("1796032808"), t - 661204);
	CHECK_EQ(ptime("1796032808.5"), t - 161204);
	CHECK_EQ(ptime("1970-01-01T00:00:00Z"), 0);
	CHECK_EQ(ptime("0"), 0);
	CHECK_EQ(ptime("1969-12-31T23:59:59Z"), -1000000);
	CHECK_EQ(ptime("0000-01-01T00:00:00Z"), -62167219200ll * 1000000);
	CHECK_EQ(ptime("9999-12-31T23:59:59.999999Z"), (int64_t)TEXT_TIME_MAX_US);
	CHECK_EQ(ptime("2024-02-29"), 1709164800ll * 1000000);
	CHECK_EQ(ptime("2000-02-29"), 951782400ll * 1000000);
	CHECK_EQ(ptime("2016-12-31T23:59:60Z"), 1483228800ll * 1000000); /* the leap second */
	/* what it refuses */
	const char *bad[] = {
		"", "x", "2026-11-30T10:00:08", "2026-11-30T10:00Z", "2026-11-30T24:00:00Z",
		"2026-11-30T10:60:00Z", "2026-11-30T10:00:61Z", "2026-13-01", "2026-00-01",
		"2026-11-31", "2026-02-29", "1900-02-29", "2100-02-29", "2026-11-30T10:00:08.Z",
		"2026-11-30T10:00:08+1:00", "2026-11-30T10:00:08+01:00x", "2026-11-30T10:00:08ZZ",
		"2026-11-30X10:00:08Z", "26-11-30", "2026-1-30", "1796032808.", "1796032808.5x",
		"-1", "+5", "12345678901234", " 2026-11-30", "2026-11-30T10:00:08+24:00",
		"1796032808 ", "0x10", "1e9",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int64_t us;
		if (text_parse_time(bad[i], &us) == 0) {
			fprintf(stderr, "text_parse_time took \"%s\"\n", bad[i]);
			CHECK(0);
		}
	}
	CHECK(text_parse_time(NULL, &(int64_t){0}) < 0);
	/* what text_time writes reads back: 200,000 times over 1970..9999 */
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < 200000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint64_t v = i < 3 ? (uint64_t[]){0, 1, TEXT_TIME_MAX_US}[i] : x % (TEXT_TIME_MAX_US + 1);
		text_time(buf, sizeof(buf), v);
		if (ptime(buf) != (int64_t)v) {
			fprintf(stderr, "%s read back as %lld, not %llu\n", buf, (long long)ptime(buf),
				(unsigned long long)v);
			CHECK(0);
			break;
		}
	}
}

int main(void)
{
	test_escape();
	test_addr_time();
	test_addr_vs_inet_ntop();
	test_entropy();
	test_record();
	test_record_fields();
	test_duration();
	test_parse_time();
	return check_done();
}
