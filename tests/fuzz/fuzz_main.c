// SPDX-License-Identifier: MIT
/*
 * main() of the replay build of a fuzz target (-DFUZZ_STANDALONE, any
 * compiler, no libFuzzer):
 *
 *   fuzz-replay-X PATH...              run each file, and each file in each
 *                                      directory, through the target
 *   fuzz-replay-X --write-seeds DIR    write the target's golden seeds
 *
 * Directories are read at run time, so a crash file dropped into
 * tests/fuzz/corpus/<target>/ is replayed by the next `meson test` without
 * reconfiguring. A directory with no files is an error: it means the test
 * points at the wrong place, not that everything passed.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static const char *seed_dir;
static unsigned int nseeds;

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	size_t len;
	long end;

	if (!f || fseek(f, 0, SEEK_END) || (end = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	/*
	 * A buffer of exactly the file's size, as libFuzzer gives, so that
	 * ASan in a sanitized replay build sees any over-read.
	 */
	len = (size_t)end;
	buf = malloc(len ? len : 1);
	if (!buf || fread(buf, 1, len, f) != len) {
		fprintf(stderr, "%s: short read\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file of dir, in name order so that runs are repeatable. */
static int run_dir(const char *dir, unsigned int *nrun)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (!d) {
		fprintf(stderr, "%s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **p = realloc(names, cap * sizeof(*names));

			if (!p) {
				rc = -1;
				break;
			}
			names = p;
		}
		names[n++] = strdup(e->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), name_cmp);
	for (size_t i = 0; i < n; i++) {
		char path[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (!rc && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			if (run_file(path))
				rc = -1;
			else
				(*nrun)++;
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

void fuzz_seed(const char *name, const void *buf, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", seed_dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		exit(1);
	}
	LLVMFuzzerTestOneInput(buf, len);
	nseeds++;
}

int main(int argc, char **argv)
{
	unsigned int nrun = 0;
	int rc = 0;

	if (argc == 3 && !strcmp(argv[1], "--write-seeds")) {
		seed_dir = argv[2];
		fuzz_write_seeds();
		printf("wrote %u seeds to %s\n", nseeds, seed_dir);
		return 0;
	}
	if (argc < 2) {
		fprintf(stderr,
			"usage: %s PATH... | --write-seeds DIR\n"
			"Runs each file (and each file in each directory) "
			"through the fuzz target.\n",
			argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;
		unsigned int before = nrun;

		if (stat(argv[i], &st)) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
			rc = 1;
		} else if (S_ISDIR(st.st_mode)) {
			if (run_dir(argv[i], &nrun))
				rc = 1;
			if (nrun == before) {
				fprintf(stderr, "%s: no files\n", argv[i]);
				rc = 1;
			}
		} else if (run_file(argv[i])) {
			rc = 1;
		} else {
			nrun++;
		}
	}
	printf("replayed %u inputs\n", nrun);
	return rc;
}
