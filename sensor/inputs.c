/*
 * inputs.c - `replay`'s capture arguments, directories expanded (inputs.h).
 */
#define _GNU_SOURCE /* versionsort */
#include "inputs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "instream.h"

/* The first bytes of a file replay reads: classic pcap (either byte order,
 * micro- or nanoseconds), pcapng, gzip, zstd. */
static int capture_magic(const uint8_t *m, size_t n)
{
	static const uint8_t magics[][4] = {
		{0xd4, 0xc3, 0xb2, 0xa1}, {0xa1, 0xb2, 0xc3, 0xd4}, {0x4d, 0x3c, 0xb2, 0xa1},
		{0xa1, 0xb2, 0x3c, 0x4d}, {0x0a, 0x0d, 0x0d, 0x0a},
	};

	/* gzip or zstd (one that starts with a skippable frame, as pzstd
	 * writes, too): as capture.c tells them */
	if (instream_kind_of(m, n) != IN_PLAIN)
		return 1;
	for (size_t i = 0; n >= 4 && i < sizeof(magics) / sizeof(magics[0]); i++)
		if (!memcmp(m, magics[i], 4))
			return 1;
	return 0;
}

int inputs_sniff(const char *path, size_t *got)
{
	uint8_t m[4];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, m, sizeof(m));
	close(fd);
	if (n < 0)
		return -1;
	if (got)
		*got = (size_t)n;
	return capture_magic(m, (size_t)n);
}

/* 1 when path starts as a capture file does, 0 when it does not, -1 when it
 * cannot be read (left to the caller's checks, which name the error). */
static int looks_like_capture(const char *path)
{
	return inputs_sniff(path, NULL);
}

static int push(struct inputs *in, size_t *cap, char *p)
{
	if (!p)
		return -1;
	if (in->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		char **np = realloc(in->paths, nc * sizeof(*np));
		if (!np) {
			free(p);
			return -1;
		}
		in->paths = np;
		*cap = nc;
	}
	in->paths[in->n++] = p;
	return 0;
}

static int not_hidden(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* Entry name of directory dir: onto in when it is a capture file (*found
 * counts it), else named on stderr (*skipped). 0, or -1 out of memory. */
static int take(const char *dir, const char *name, const char *who, struct inputs *in,
		size_t *cap, unsigned *found, unsigned *skipped)
{
	size_t dl = strlen(dir), len = dl + 1 + strlen(name) + 1;
	const char *why = NULL;
	char *path = malloc(len);
	struct stat st;

	if (!path)
		return -1;
	snprintf(path, len, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", name);
	if (stat(path, &st) < 0)
		why = strerror(errno);
	else if (S_ISDIR(st.st_mode))
		why = "a directory (not read recursively)";
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (looks_like_capture(path) == 0)
		why = "not a capture file (pcap, pcapng, gzip or zstd)";
	if (why) {
		fprintf(stderr, "%s: %s: skipped: %s\n", who, path, why);
		(*skipped)++;
		free(path);
		return 0;
	}
	(*found)++;
	return push(in, cap, path);
}

/* The capture files of directory dir onto in. 0, or -1 with err set. */
static int expand_dir(const char *dir, const char *who, struct inputs *in, size_t *cap,
		      char *err, size_t errlen)
{
	struct dirent **names = NULL;
	int n = scandir(dir, &names, not_hidden, versionsort), rc = 0;
	unsigned found = 0, skipped = 0;

	if (n < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (rc == 0 && take(dir, names[i]->d_name, who, in, cap, &found, &skipped) < 0) {
			snprintf(err, errlen, "%s: out of memory", dir);
			rc = -1;
		}
		free(names[i]);
	}
	free(names);
	if (rc == 0 && found == 0) {
		snprintf(err, errlen, "%s: no capture file in it (pcap, pcapng, gzip or zstd)%s",
			 dir, skipped ? "; see above" : "");
		rc = -1;
	}
	return rc;
}

int inputs_expand(char *const *args, unsigned n, const char *who, struct inputs *in, char *err,
		  size_t errlen)
{
	size_t cap = 0;

	in->paths = NULL;
	in->n = 0;
	for (unsigned i = 0; i < n; i++) {
		struct stat st;
		if (strcmp(args[i], "-") != 0 && stat(args[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			if (expand_dir(args[i], who, in, &cap, err, errlen) < 0)
				goto fail;
		} else if (push(in, &cap, strdup(args[i])) < 0) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
	}
	return 0;
fail:
	inputs_free(in);
	return -1;
}

void inputs_free(struct inputs *in)
{
	for (unsigned i = 0; i < in->n; i++)
		free(in->paths[i]);
	free(in->paths);
	in->paths = NULL;
	in->n = 0;
}
