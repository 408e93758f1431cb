/* SPDX-License-Identifier: MIT */
/*
 * Allocation counting for tests that prove a path allocates nothing in
 * steady state. alloc_count.c defines malloc, calloc, realloc and free in
 * the test executable, which takes them over for the whole process (the
 * shared libcmclient too), and forwards them to glibc's own entry points.
 * Counts are per thread, so a helper thread (the fake daemon) does not
 * disturb what the test's thread measures.
 *
 * Under AddressSanitizer the sanitizer owns malloc and the file defines
 * none of them; under valgrind its own malloc replaces these. ac_enabled()
 * then says false: skip the counting, keep the rest of the test.
 */
#ifndef CMD_TESTS_ALLOC_COUNT_H
#define CMD_TESTS_ALLOC_COUNT_H

#include <stdbool.h>

struct ac_count {
	unsigned long allocs; /* new blocks: malloc, calloc, realloc(NULL) */
	unsigned long resizes; /* realloc of a block to a non-zero size */
	unsigned long frees; /* free or realloc(p, 0) of a block */
};

bool ac_enabled(void);
/* Start counting this thread's calls from zero. */
void ac_begin(void);
/* Stop counting; what this thread did since ac_begin(). */
struct ac_count ac_end(void);

#endif
