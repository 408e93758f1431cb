// SPDX-License-Identifier: MIT
#include "alloc_count.h"

#include <stddef.h>
#include <stdlib.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AC_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define AC_ASAN 1
#endif

static __thread bool ac_on;
static __thread struct ac_count ac_now;

#ifndef AC_ASAN

/* glibc's allocator under names that interposing cannot take. */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void __libc_free(void *p);

void *malloc(size_t size)
{
	void *p = __libc_malloc(size);

	if (ac_on && p)
		ac_now.allocs++;
	return p;
}

void *calloc(size_t n, size_t size)
{
	void *p = __libc_calloc(n, size);

	if (ac_on && p)
		ac_now.allocs++;
	return p;
}

void *realloc(void *old, size_t size)
{
	void *p = __libc_realloc(old, size);

	if (!ac_on)
		return p;
	if (!old)
		ac_now.allocs += p != NULL;
	else if (size)
		ac_now.resizes++;
	else
		ac_now.frees++;
	return p;
}

void free(void *p)
{
	if (ac_on && p)
		ac_now.frees++;
	__libc_free(p);
}

#endif

void ac_begin(void)
{
	ac_now = (struct ac_count){ 0 };
	ac_on = true;
}

struct ac_count ac_end(void)
{
	ac_on = false;
	return ac_now;
}

/*
 * Ask rather than assume: valgrind replaces malloc in the executable as
 * well as in libc, and then these definitions never run. The volatile
 * pointers keep the compiler from eliding the pair.
 */
bool ac_enabled(void)
{
#ifdef AC_ASAN
	return false;
#else
	void *(*volatile m)(size_t) = malloc;
	void (*volatile f)(void *) = free;
	struct ac_count n;

	ac_begin();
	f(m(1));
	n = ac_end();
	return n.allocs == 1 && n.frees == 1;
#endif
}
