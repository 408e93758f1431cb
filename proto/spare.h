/* SPDX-License-Identifier: MIT */
/*
 * The tree's one spare list: fixed-size blocks (event items, output
 * datagrams) that were malloc'd, are done with, and are kept to be reused
 * instead of going back to free(). Bounded, so the memory of a burst goes
 * back after it; last in, first out, so the next user gets a warm block.
 * A block on the list holds the list's link in its first bytes: blocks
 * are at least a pointer long, and what a taken block held is gone.
 *
 * The bytes kept are added to a counter of the owner's (heap_cached).
 */
#ifndef CMD_PROTO_SPARE_H
#define CMD_PROTO_SPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

struct spare_block {
	struct spare_block *next;
};

struct spare {
	struct spare_block *head;
	unsigned int n, max;
	size_t size; /* of one block, for the counter */
	uint64_t *bytes; /* the owner's count of bytes kept, or NULL */
};

static inline void spare_init(struct spare *s, unsigned int max, size_t size,
			      uint64_t *bytes)
{
	s->head = NULL;
	s->n = 0;
	s->max = max;
	s->size = size;
	s->bytes = bytes;
}

/* A block to reuse (its contents are stale), or NULL: malloc one. */
static inline void *spare_take(struct spare *s)
{
	struct spare_block *b = s->head;

	if (!b)
		return NULL;
	s->head = b->next;
	s->n--;
	if (s->bytes)
		*s->bytes -= s->size;
	return b;
}

/* Keep 'p' for reuse, or free it when the list is full. */
static inline void spare_give(struct spare *s, void *p)
{
	struct spare_block *b = p;

	if (s->n >= s->max) {
		free(p);
		return;
	}
	b->next = s->head;
	s->head = b;
	s->n++;
	if (s->bytes)
		*s->bytes += s->size;
}

/* Free every block kept. */
static inline void spare_drain(struct spare *s)
{
	void *p;

	while ((p = spare_take(s)))
		free(p);
}

#endif
