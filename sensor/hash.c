/*
 * hash.c - the keyed hash of the tables whose keys come from packets
 * (hash.h): libsodium's SipHash-2-4 under one random key per process.
 */
#include "hash.h"

#include <pthread.h>
#include <sodium.h>

static unsigned char key[crypto_shorthash_KEYBYTES];
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int key_ok;

static void key_draw(void)
{
	if (sodium_init() < 0)
		return;
	crypto_shorthash_keygen(key);
	key_ok = 1;
}

int hash_init(void)
{
	pthread_once(&key_once, key_draw);
	return key_ok ? 0 : -1;
}

uint64_t hash_keyed(const void *p, size_t n)
{
	unsigned char out[crypto_shorthash_BYTES];
	uint64_t h = 0;

	crypto_shorthash(out, p, n, key);
	for (int i = crypto_shorthash_BYTES - 1; i >= 0; i--)
		h = h << 8 | out[i];
	return h;
}
