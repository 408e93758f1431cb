// SPDX-License-Identifier: MIT
/*
 * The path cache (path_cache.h): a hash table of entries by the bytes of
 * (port, want). Wants are compared whole, so a caller builds them from
 * zero (memset), as sa_paths.c does.
 */
#include "path_cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "util.h"

#define PC_DEF_MAX 4096
#define PC_NS_PER_S 1000000000ull

struct pc_node {
	struct path_cache_entry e;
	struct hnode hnode;
};

struct path_cache {
	struct htable t;
	uint64_t lifetime_ns;
	unsigned int max;
	struct path_cache_counters c;
};

static uint64_t key_hash(uint16_t port, const struct sa_path_want *w)
{
	const uint8_t *p = (const uint8_t *)w;
	uint64_t h = hash_u64(port + 1);

	for (size_t i = 0; i < sizeof(*w); i++)
		h = hash_u64(h ^ p[i]);
	return h;
}

static uint64_t node_hash(const struct hnode *n)
{
	const struct pc_node *pn = htable_entry(n, struct pc_node, hnode);

	return key_hash(pn->e.port, &pn->e.want);
}

struct path_cache *path_cache_new(unsigned int lifetime_s, unsigned int max)
{
	struct path_cache *pc = calloc(1, sizeof(*pc));

	if (!pc)
		return NULL;
	if (htable_init(&pc->t, 64, node_hash)) {
		free(pc);
		return NULL;
	}
	pc->lifetime_ns = (uint64_t)lifetime_s * PC_NS_PER_S;
	pc->max = max ? max : PC_DEF_MAX;
	return pc;
}

static void drop(struct path_cache *pc, struct pc_node *n)
{
	htable_remove(&pc->t, &n->hnode);
	free(n);
	pc->c.entries = pc->t.n;
}

/* Call fn on every node; fn may drop the node it is given. */
static void
each(struct path_cache *pc,
     void (*fn)(struct path_cache *pc, struct pc_node *n, void *ctx), void *ctx)
{
	for (size_t b = 0; pc->t.b && b <= pc->t.mask; b++) {
		struct hnode *h = pc->t.b[b], *next;

		for (; h; h = next) {
			next = h->next;
			fn(pc, htable_entry(h, struct pc_node, hnode), ctx);
		}
	}
}

static void free_one(struct path_cache *pc, struct pc_node *n, void *ctx)
{
	(void)ctx;
	drop(pc, n);
}

void path_cache_free(struct path_cache *pc)
{
	if (!pc)
		return;
	each(pc, free_one, NULL);
	htable_fini(&pc->t);
	free(pc);
}

static struct pc_node *find(struct path_cache *pc, uint16_t port,
			    const struct sa_path_want *w)
{
	uint64_t h = key_hash(port, w);

	if (!pc->t.b)
		return NULL;
	for (struct hnode *n = pc->t.b[h & pc->t.mask]; n; n = n->next) {
		struct pc_node *pn = htable_entry(n, struct pc_node, hnode);

		if (pn->e.port == port && !memcmp(&pn->e.want, w, sizeof(*w)))
			return pn;
	}
	return NULL;
}

static bool expired(const struct path_cache *pc, const struct pc_node *n,
		    uint64_t now)
{
	return pc->lifetime_ns && now >= n->e.expires;
}

const struct path_cache_entry *path_cache_get(struct path_cache *pc,
					      uint16_t port,
					      const struct sa_path_want *w,
					      uint64_t now)
{
	struct pc_node *n = find(pc, port, w);

	if (n && expired(pc, n, now)) {
		pc->c.expired++;
		drop(pc, n);
		n = NULL;
	}
	if (!n) {
		pc->c.misses++;
		return NULL;
	}
	pc->c.hits++;
	n->e.hits++;
	return &n->e;
}

struct oldest {
	struct pc_node *n;
	uint64_t now;
	unsigned int expired;
};

static void find_oldest(struct path_cache *pc, struct pc_node *n, void *ctx)
{
	struct oldest *o = ctx;

	if (expired(pc, n, o->now)) {
		o->expired++;
		pc->c.expired++;
		drop(pc, n);
		return;
	}
	if (!o->n || n->e.born < o->n->e.born)
		o->n = n;
}

int path_cache_put(struct path_cache *pc, uint16_t port,
		   const struct sa_path_want *w, const struct sa_path_rec *recs,
		   unsigned int n, uint64_t now)
{
	struct pc_node *pn = find(pc, port, w);

	if (!n)
		return -EINVAL;
	if (!pn) {
		if (pc->t.n >= pc->max) {
			struct oldest o = { .now = now };

			each(pc, find_oldest, &o);
			if (!o.expired && o.n) {
				pc->c.evicted++;
				drop(pc, o.n);
			}
		}
		pn = calloc(1, sizeof(*pn));
		if (!pn)
			return -ENOMEM;
		pn->e.port = port;
		pn->e.want = *w;
		htable_insert(&pc->t, &pn->hnode);
	}
	pn->e.n = n > PATH_CACHE_RECS ? PATH_CACHE_RECS : n;
	memcpy(pn->e.recs, recs, pn->e.n * sizeof(*recs));
	pn->e.born = now;
	pn->e.expires = now + pc->lifetime_ns;
	pn->e.hits = 0;
	pc->c.inserted++;
	pc->c.entries = pc->t.n;
	return 0;
}

struct flush_ctx {
	int port;
	unsigned int n;
};

static void flush_one(struct path_cache *pc, struct pc_node *n, void *ctx)
{
	struct flush_ctx *f = ctx;

	if (f->port >= 0 && n->e.port != (uint16_t)f->port)
		return;
	f->n++;
	pc->c.flushed++;
	drop(pc, n);
}

unsigned int path_cache_flush(struct path_cache *pc, int port)
{
	struct flush_ctx f = { .port = port };

	each(pc, flush_one, &f);
	return f.n;
}

void path_cache_walk(struct path_cache *pc, uint64_t now,
		     int (*fn)(void *ctx, const struct path_cache_entry *e),
		     void *ctx)
{
	for (size_t b = 0; pc->t.b && b <= pc->t.mask; b++)
		for (struct hnode *h = pc->t.b[b]; h; h = h->next) {
			struct pc_node *pn =
				htable_entry(h, struct pc_node, hnode);

			if (!expired(pc, pn, now) && fn(ctx, &pn->e))
				return;
		}
}

const struct path_cache_counters *
path_cache_counters(const struct path_cache *pc)
{
	return &pc->c;
}
