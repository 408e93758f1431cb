/* SPDX-License-Identifier: MIT */
/*
 * The few helpers every part of the tree uses, defined once: the daemon,
 * the library, the tools and the tests include this rather than keeping
 * copies.
 */
#ifndef CMD_PROTO_UTIL_H
#define CMD_PROTO_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The struct that embeds 'ptr' as its 'member' (libev watchers, lists). */
#define container_of(ptr, type, member)                                        \
	((type *)(void *)((char *)(ptr)-offsetof(type, member)))

/* Elements of an array (not a pointer). */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * The entry for index i of a designated-initialiser name table, or "?" for
 * an index outside it or a hole in it.
 */
#define NAME_AT(names, i)                                                      \
	((size_t)(i) < ARRAY_SIZE(names) && (names)[(size_t)(i)] ?             \
		 (names)[(size_t)(i)] :                                        \
		 "?")

/*
 * Copy the string src into dst[size] (size > 0), cut to size - 1 bytes,
 * always NUL-terminated; the bytes after the NUL are left as they were.
 * What snprintf(dst, size, "%s", src) does, without the format machinery
 * (it was ~550 instructions per connection in the daemon's path code).
 */
static inline void str_copy(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/*
 * Text appended to buf[size] with a running total, never past its end:
 * len says how much the whole text needed (the decoders' dumps).
 */
struct strbuf {
	char *buf;
	size_t size;
	size_t len;
};

__attribute__((format(printf, 2, 3))) static inline void
strbuf_printf(struct strbuf *d, const char *fmt, ...)
{
	va_list ap;
	size_t room = d->len < d->size ? d->size - d->len : 0;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? d->buf + d->len : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		d->len += (size_t)n;
}

#endif
