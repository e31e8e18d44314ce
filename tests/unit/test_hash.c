/*
 * test_hash.c - the keyed hash of the tables that hash packet data
 * (sensor/hash.h): SipHash-2-4 under a random key, the same within a
 * process and different in another one; and keys made to collide in
 * text_fnv64's low bits (the hash those tables used, whose collisions anyone
 * can compute) spread over the buckets under it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "collide.h"
#include "sensor/hash.h"
#include "sensor/text.h"

#define NKEYS 4096
#define BITS 13 /* 8192 buckets: the domain table's and the alert table's */

static char keys[NKEYS][COLLIDE_LEN];

/* The largest bucket when keys[0..n) go into 2^BITS buckets by h. */
static unsigned most_in_bucket(unsigned n, uint64_t (*h)(const char *, size_t))
{
	static unsigned count[1u << BITS];
	unsigned most = 0;

	memset(count, 0, sizeof(count));
	for (unsigned i = 0; i < n; i++) {
		unsigned b = (unsigned)(h(keys[i], strlen(keys[i])) & ((1u << BITS) - 1));
		if (++count[b] > most)
			most = count[b];
	}
	return most;
}

static uint64_t by_fnv(const char *s, size_t n)
{
	return text_fnv64(s, n);
}

static uint64_t by_keyed(const char *s, size_t n)
{
	return hash_keyed(s, n);
}

/* hash_keyed("egresswatch") in another process, or 0. */
static uint64_t other_process(const char *self)
{
	char cmd[4200];
	uint64_t v = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "'%s' print", self);
	f = popen(cmd, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llx", (unsigned long long *)&v) != 1)
		v = 0;
	pclose(f);
	return v;
}

int main(int argc, char **argv)
{
	char self[4096];
	ssize_t n;

	CHECK_EQ(hash_init(), 0);
	CHECK_EQ(hash_init(), 0); /* once: the same key after */
	if (argc == 2 && strcmp(argv[1], "print") == 0) {
		printf("%llx\n", (unsigned long long)hash_keyed("egresswatch", 11));
		return 0;
	}

	/* The same bytes, the same hash; one byte more or changed, another. */
	uint64_t h = hash_keyed("egresswatch", 11);
	CHECK(h == hash_keyed("egresswatch", 11));
	CHECK(h != hash_keyed("egresswatch.", 12));
	CHECK(h != hash_keyed("egresswatcH", 11));
	CHECK(hash_keyed("", 0) != hash_keyed("\0", 1));

	/* Another process draws another key (2^-64 that it does not). */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	CHECK(n > 0);
	if (n > 0) {
		self[n] = '\0';
		uint64_t a = other_process(self), b = other_process(self);
		CHECK(a != 0 && b != 0);
		CHECK(a != h);
		CHECK(b != h && b != a);
	}

	/* 4096 keys an attacker computes for text_fnv64: one bucket of 8192
	 * under it (so the generator does what it says), spread under the keyed
	 * hash (4096 keys in 8192 buckets: the fullest holds ~5; more than 12
	 * has a chance under 1e-9). Also behind a common suffix, as domains. */
	unsigned made = collide_fnv(TEXT_FNV64_BASIS, TEXT_FNV64_PRIME, 64, BITS, keys, NKEYS);
	CHECK_EQ(made, NKEYS);
	CHECK_EQ(most_in_bucket(made, by_fnv), NKEYS);
	unsigned most = most_in_bucket(made, by_keyed);
	printf("4096 keys colliding under FNV-1a: the fullest of 8192 buckets holds %u under hash_keyed\n",
	       most);
	CHECK(most <= 12);
	for (unsigned i = 0; i < made; i++)
		strcat(keys[i], ".com") ; /* 10 + 4 < COLLIDE_LEN */
	CHECK_EQ(most_in_bucket(made, by_fnv), NKEYS);
	CHECK(most_in_bucket(made, by_keyed) <= 12);
	return check_done();
}
