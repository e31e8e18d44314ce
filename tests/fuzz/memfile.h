/*
 * memfile.h - the fuzz input as a file, for the targets whose code under
 * test opens a path (capture files, rules files): a memfd holding the
 * bytes, named by /proc/self/fd/N. Plain and seekable, as a file on disk
 * is; nothing touches the disk.
 */
#ifndef EW_FUZZ_MEMFILE_H
#define EW_FUZZ_MEMFILE_H

/* (the includer defines _GNU_SOURCE first, for memfd_create) */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* A memfd holding data[0..size), its path in path (64 bytes); aborts when
 * it cannot be made. Close the returned descriptor when done. */
static int memfile(const uint8_t *data, size_t size, const char *name, char path[64])
{
	size_t w = 0;
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0)
		abort();
	while (w < size) {
		ssize_t k = write(fd, data + w, size - w);
		if (k <= 0)
			abort();
		w += (size_t)k;
	}
	snprintf(path, 64, "/proc/self/fd/%d", fd);
	return fd;
}

#endif
