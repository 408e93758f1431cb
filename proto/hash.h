/* SPDX-License-Identifier: MIT */
/*
 * The tree's one hash table: intrusive, chained, with a power-of-two
 * bucket array that doubles when the load reaches one, so lookups stay
 * O(1) expected at any size. An element embeds one struct hnode per
 * table it is in (one pointer per key) and is never allocated for by the
 * table; the table's hash callback says what an element's key hashes to,
 * which is what growth and removal need. Lookups hash the key they look
 * for with the same function (hash_u64 for every key in the tree) and
 * compare with a callback of the caller's.
 *
 * The engine's record and listener tables, the daemon's ids, clients and
 * users, and the client library's ids all use it.
 */
#ifndef CMD_PROTO_HASH_H
#define CMD_PROTO_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hnode {
	struct hnode *next; /* in its bucket's chain */
};

struct htable {
	struct hnode **b; /* NULL before htable_init and after htable_fini */
	size_t mask; /* buckets - 1 */
	size_t n; /* elements in the table */
	uint64_t (*hash)(const struct hnode *node);
};

/*
 * The mixer: splitmix64's finaliser. Keys are comm ids (random), serials
 * (sequential) and GUIDs (a shared OUI); all come out uniform.
 */
static inline uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 30;
	x *= UINT64_C(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64_C(0x94d049bb133111eb);
	x ^= x >> 31;
	return x;
}

/*
 * 'buckets': a power of two. 0 or -ENOMEM; the table is empty either way,
 * and htable_fini is safe on it.
 */
int htable_init(struct htable *t, size_t buckets,
		uint64_t (*hash)(const struct hnode *node));
/* Frees the buckets, not the elements (walk them first). */
void htable_fini(struct htable *t);

/*
 * Room for one more element: grows the table if the next insert would
 * take the load past one. 0, or -ENOMEM for a caller that would rather
 * fail than have longer chains.
 */
int htable_reserve(struct htable *t);
/*
 * Links 'node', growing the table first when it is full. A growth that
 * fails for want of memory leaves the chains longer; lookups stay right.
 */
void htable_insert(struct htable *t, struct hnode *node);
/* Unlinks 'node'; one not in the table is left alone. */
void htable_remove(struct htable *t, struct hnode *node);

/*
 * The element that embeds 'node' as 'member', or NULL for NULL: what a
 * typed find returns.
 */
#define htable_entry(node, type, member)                                       \
	((type *)hnode_owner((node), offsetof(type, member)))

static inline void *hnode_owner(const struct hnode *node, size_t offset)
{
	return node ? (void *)((char *)(uintptr_t)node - offset) : NULL;
}

/* The chain where elements of key hash 'h' are, or NULL. */
static inline struct hnode *htable_bucket(const struct htable *t, uint64_t h)
{
	return t->b ? t->b[h & t->mask] : NULL;
}

/*
 * The element of key hash 'h' for which eq(node, key) holds, or NULL.
 * Inline, so that a static 'eq' is too.
 */
static inline struct hnode *htable_find(const struct htable *t, uint64_t h,
					bool (*eq)(const struct hnode *node,
						   const void *key),
					const void *key)
{
	struct hnode *n;

	for (n = htable_bucket(t, h); n; n = n->next)
		if (eq(n, key))
			return n;
	return NULL;
}

/*
 * Iteration in bucket order: the first element (node NULL) or the one
 * after 'node', or NULL at the end. No insert may happen meanwhile (it
 * may grow the table); removing the element just returned is fine once
 * the next one is known, as HTABLE_FOREACH_SAFE does.
 */
struct hnode *htable_next(const struct htable *t, const struct hnode *node);

#define HTABLE_FOREACH_SAFE(node, tmp, t)                                      \
	for ((node) = htable_next((t), NULL);                                  \
	     (node) && ((tmp) = htable_next((t), (node)), 1); (node) = (tmp))

/*
 * A walk that may stop and resume later, across changes to the table (a
 * LIST reply batch): *pos 0 starts it; returns the element at *pos and
 * moves *pos past it (never to 0), or NULL at the end. A position is a
 * bucket and a depth in its chain, so any value is safe to pass; elements
 * added or removed between calls may be missed or seen twice.
 */
struct hnode *htable_walk(const struct htable *t, uint64_t *pos);

#endif
