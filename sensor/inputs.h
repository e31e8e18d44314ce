/*
 * inputs.h - the capture arguments of `replay`: a file, '-' (stdin), or a
 * directory, which stands for the capture files in it (pcap, pcapng, gzip
 * or zstd by their first bytes; not its subdirectories, nor names that
 * start with a dot), in name order as `ls -v` sorts (glibc's versionsort:
 * "ring_9" before "ring_10", as dumpcap's ring buffer and tcpdump -C and -G
 * name their files).
 */
#ifndef EW_INPUTS_H
#define EW_INPUTS_H

#include <stddef.h>

struct inputs {
	char **paths; /* malloc'd, each malloc'd */
	unsigned n;
};

/* args[0..n) into *in, each directory replaced by its capture files. What
 * a directory holds that is not a capture file is named on stderr (prefix
 * who) and left out. 0, or -1 with the reason in err (a directory that
 * cannot be read or holds no capture file; out of memory); *in is then
 * empty. */
int inputs_expand(char *const *args, unsigned n, const char *who, struct inputs *in, char *err,
		  size_t errlen);

void inputs_free(struct inputs *in);

/* Whether the file at path starts as a capture file does (its first four
 * bytes: pcap, pcapng, gzip, zstd): 1, 0 when it does not, -1 when it
 * cannot be read. *got (if not NULL) gets the bytes read, at most 4. */
int inputs_sniff(const char *path, size_t *got);

#endif
