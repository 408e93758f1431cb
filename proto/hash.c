// SPDX-License-Identifier: MIT
#include "hash.h"

#include <errno.h>
#include <stdlib.h>

int htable_init(struct htable *t, size_t buckets,
		uint64_t (*hash)(const struct hnode *node))
{
	t->b = calloc(buckets, sizeof(*t->b));
	t->mask = buckets - 1;
	t->n = 0;
	t->hash = hash;
	return t->b ? 0 : -ENOMEM;
}

void htable_fini(struct htable *t)
{
	free(t->b);
	t->b = NULL;
	t->mask = 0;
	t->n = 0;
}

static int htable_grow(struct htable *t)
{
	size_t nsize = (t->mask + 1) * 2, i;
	struct hnode **nb = calloc(nsize, sizeof(*nb));

	if (!nb)
		return -ENOMEM;
	for (i = 0; i <= t->mask; i++) {
		struct hnode *n = t->b[i], *next;

		for (; n; n = next) {
			size_t h = t->hash(n) & (nsize - 1);

			next = n->next;
			n->next = nb[h];
			nb[h] = n;
		}
	}
	free(t->b);
	t->b = nb;
	t->mask = nsize - 1;
	return 0;
}

int htable_reserve(struct htable *t)
{
	if (!t->b)
		return -ENOMEM;
	return t->n >= t->mask + 1 ? htable_grow(t) : 0;
}

void htable_insert(struct htable *t, struct hnode *node)
{
	struct hnode **head;

	/* Out of memory: keep the longer chains. */
	(void)htable_reserve(t);
	head = &t->b[t->hash(node) & t->mask];
	node->next = *head;
	*head = node;
	t->n++;
}

void htable_remove(struct htable *t, struct hnode *node)
{
	struct hnode **pp;

	if (!t->b)
		return;
	for (pp = &t->b[t->hash(node) & t->mask]; *pp; pp = &(*pp)->next) {
		if (*pp == node) {
			*pp = node->next;
			node->next = NULL;
			t->n--;
			return;
		}
	}
}

struct hnode *htable_next(const struct htable *t, const struct hnode *node)
{
	size_t i = 0;

	if (!t->b)
		return NULL;
	if (node) {
		if (node->next)
			return node->next;
		i = (t->hash(node) & t->mask) + 1;
	}
	for (; i <= t->mask; i++)
		if (t->b[i])
			return t->b[i];
	return NULL;
}

struct hnode *htable_walk(const struct htable *t, uint64_t *pos)
{
	uint64_t i = *pos >> 32, depth = *pos & UINT32_MAX, d;
	struct hnode *n;

	if (!t->b)
		return NULL;
	for (; i <= t->mask; i++, depth = 0) {
		for (n = t->b[i], d = 0; n && d < depth; d++)
			n = n->next;
		if (n) {
			*pos = i << 32 | (depth + 1);
			return n;
		}
	}
	return NULL;
}
