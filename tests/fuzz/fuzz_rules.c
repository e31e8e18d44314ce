/*
 * fuzz_rules.c - fuzz target over the rules loader (sensor/rules.c, libyaml
 * under it): the input is written to a memory file and loaded as a rules
 * file. Any input gives rules or one error line that names the file and a
 * line ("PATH:LINE: ...") or the file alone, never a crash, a leak or an
 * empty message; rules that load are used for a domain match, and freed.
 *
 * Built with tests/fuzz/driver.c (main() replays tests/fuzz/corpus-rules/,
 * seeded with the YAML files of rules/ and tests/rules/) or with
 * -fsanitize=fuzzer.
 */
#define _GNU_SOURCE /* memfd_create (memfile.h) */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memfile.h"
#include "sensor/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], err[1024];
	struct rules *r = NULL;
	int fd = memfile(data, size, "fuzz-rules", path);

	err[0] = '\0';
	if (rules_load(path, &r, err, sizeof(err)) < 0) {
		/* one line that names the file */
		if (r || strncmp(err, path, strlen(path)) != 0 || strchr(err, '\n'))
			abort();
	} else {
		if (!r)
			abort();
		(void)rules_domain_match(&r->trusted_domains, "a.b.example.com", 15);
		rules_free(r);
	}
	close(fd);
	return 0;
}
