/* SPDX-License-Identifier: MIT */
/*
 * Shared by the fuzz targets. Each target is one fuzz_<name>.c that defines
 * LLVMFuzzerTestOneInput() and, for the plain (non-libFuzzer) build,
 * fuzz_write_seeds(). Built with clang -fsanitize=fuzzer it is a libFuzzer
 * target (scripts/fuzz.sh); built by meson with -DFUZZ_STANDALONE and
 * fuzz_main.c it is a replay program that runs every corpus file through
 * the same checks, so that each crash file kept in the corpus is a
 * regression test.
 */
#ifndef CMD_TESTS_FUZZ_H
#define CMD_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * An invariant failed: say which, then trap so that libFuzzer (and a core
 * dump, or meson's test log, in the replay build) records the input.
 */
#define FUZZ_CHECK(cond)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: invariant failed: %s\n",       \
				__FILE__, __LINE__, #cond);                    \
			fflush(stderr);                                        \
			__builtin_trap();                                      \
		}                                                              \
	} while (0)

#ifdef FUZZ_STANDALONE
/*
 * Seed generation (fuzz_main.c's --write-seeds): the target builds its
 * golden messages with the proto/ API and hands each to fuzz_seed(), which
 * writes it as one corpus file and runs it through the target once, so a
 * seed that fails its own target's checks is caught when it is made.
 */
void fuzz_write_seeds(void);
void fuzz_seed(const char *name, const void *buf, size_t len);
#endif

#endif
