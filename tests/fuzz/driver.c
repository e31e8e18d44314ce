/*
 * driver.c - a plain main() for the fuzz targets (libpcap's onefile.c
 * pattern): runs LLVMFuzzerTestOneInput once per file named on the command
 * line, or per file in each directory named, so the committed corpus is
 * replayed as a normal test without libFuzzer.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;
	int rc = -1;

	if (!f) {
		perror(path);
		return -1;
	}
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fprintf(stderr, "%s: cannot size\n", path);
		goto out;
	}
	buf = malloc((size_t)n ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "%s: cannot read\n", path);
		goto out;
	}
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	rc = 0;
out:
	free(buf);
	fclose(f);
	return rc;
}

int main(int argc, char **argv)
{
	unsigned files = 0, failed = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			perror(argv[i]);
			failed++;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			files++;
			failed += run_file(argv[i]) != 0;
			continue;
		}
		DIR *d = opendir(argv[i]);
		struct dirent *e;
		if (!d) {
			perror(argv[i]);
			failed++;
			continue;
		}
		while ((e = readdir(d)) != NULL) {
			char path[4096];
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			files++;
			failed += run_file(path) != 0;
		}
		closedir(d);
	}
	printf("%u passed, %u failed\n", files - failed, failed);
	return failed || files == 0 ? 1 : 0;
}
