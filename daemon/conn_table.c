// SPDX-License-Identifier: MIT
/*
 * The engine's lookups (IBTA 12.9.8): by local comm id, by (remote comm id,
 * remote CA GUID) for duplicate REQs and REPs, and by (remote QPN, remote CA
 * GUID) for stale connections. Chained hash tables that double when their
 * load passes one, so every lookup is O(1) expected at 100,000+ records.
 * Links are embedded in struct conn: no allocation per insertion.
 */
#include <errno.h>
#include <stdlib.h>

#include "conn.h"

#define CTAB_INITIAL 1024

enum ctab_kind {
	CTAB_LOCAL,
	CTAB_RID,
	CTAB_RQPN,
};

static uint64_t ctab_mix(uint64_t x)
{
	/* A 64-bit finalizer: comm ids are random already, GUIDs are not. */
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static struct conn **ctab_next(struct conn *c, enum ctab_kind k)
{
	switch (k) {
	case CTAB_LOCAL:
		return &c->h_local;
	case CTAB_RID:
		return &c->h_rid;
	case CTAB_RQPN:
		return &c->h_rqpn;
	}
	return NULL;
}

static uint64_t ctab_hash(const struct conn *c, enum ctab_kind k)
{
	switch (k) {
	case CTAB_LOCAL:
		return ctab_mix(c->local_id);
	case CTAB_RID:
		return ctab_mix(c->remote_guid ^ ((uint64_t)c->remote_id << 7));
	case CTAB_RQPN:
		return ctab_mix(c->remote_guid ^
				((uint64_t)c->remote_qpn << 11) ^ 1);
	}
	return 0;
}

int ctab_init(struct ctab *t)
{
	t->b = calloc(CTAB_INITIAL, sizeof(*t->b));
	if (!t->b)
		return -ENOMEM;
	t->mask = CTAB_INITIAL - 1;
	t->n = 0;
	return 0;
}

void ctab_fini(struct ctab *t)
{
	free(t->b);
	t->b = NULL;
}

static void ctab_grow(struct ctab *t, enum ctab_kind k)
{
	size_t nsize = (t->mask + 1) * 2;
	struct conn **nb = calloc(nsize, sizeof(*nb));
	size_t i;

	/* Out of memory: keep the longer chains, lookups stay correct. */
	if (!nb)
		return;
	for (i = 0; i <= t->mask; i++) {
		struct conn *c = t->b[i];

		while (c) {
			struct conn *next = *ctab_next(c, k);
			size_t h = ctab_hash(c, k) & (nsize - 1);

			*ctab_next(c, k) = nb[h];
			nb[h] = c;
			c = next;
		}
	}
	free(t->b);
	t->b = nb;
	t->mask = nsize - 1;
}

static void ctab_add(struct ctab *t, struct conn *c, enum ctab_kind k)
{
	size_t h;

	if (t->n >= t->mask + 1)
		ctab_grow(t, k);
	h = ctab_hash(c, k) & t->mask;
	*ctab_next(c, k) = t->b[h];
	t->b[h] = c;
	t->n++;
}

static void ctab_del(struct ctab *t, struct conn *c, enum ctab_kind k)
{
	struct conn **pp = &t->b[ctab_hash(c, k) & t->mask];

	while (*pp) {
		if (*pp == c) {
			*pp = *ctab_next(c, k);
			*ctab_next(c, k) = NULL;
			t->n--;
			return;
		}
		pp = ctab_next(*pp, k);
	}
}

struct conn *ctab_local_find(const struct ctab *t, uint32_t id)
{
	struct conn *c = t->b[ctab_mix(id) & t->mask];

	while (c && c->local_id != id)
		c = c->h_local;
	return c;
}

void ctab_local_add(struct ctab *t, struct conn *c)
{
	ctab_add(t, c, CTAB_LOCAL);
}

void ctab_local_del(struct ctab *t, struct conn *c)
{
	ctab_del(t, c, CTAB_LOCAL);
}

struct conn *ctab_rid_find(const struct ctab *t, uint32_t rid, uint64_t guid)
{
	uint64_t h = ctab_mix(guid ^ ((uint64_t)rid << 7));
	struct conn *c = t->b[h & t->mask];

	while (c && (c->remote_id != rid || c->remote_guid != guid))
		c = c->h_rid;
	return c;
}

void ctab_rid_add(struct ctab *t, struct conn *c)
{
	ctab_add(t, c, CTAB_RID);
}

void ctab_rid_del(struct ctab *t, struct conn *c)
{
	ctab_del(t, c, CTAB_RID);
}

struct conn *ctab_rqpn_find(const struct ctab *t, uint32_t qpn, uint64_t guid)
{
	uint64_t h = ctab_mix(guid ^ ((uint64_t)qpn << 11) ^ 1);
	struct conn *c = t->b[h & t->mask];

	while (c && (c->remote_qpn != qpn || c->remote_guid != guid))
		c = c->h_rqpn;
	return c;
}

void ctab_rqpn_add(struct ctab *t, struct conn *c)
{
	ctab_add(t, c, CTAB_RQPN);
}

void ctab_rqpn_del(struct ctab *t, struct conn *c)
{
	ctab_del(t, c, CTAB_RQPN);
}

/*
 * A record enters the remote tables once it knows its peer (REQ received,
 * REP received) and leaves them when it returns to IDLE: through timewait the
 * pair still identifies it, which is what makes a reused QPN "stale".
 */
void conn_remote_link(struct conn *c, bool qpn)
{
	if (!c->in_remote_id) {
		ctab_rid_add(&c->eng->by_rid, c);
		c->in_remote_id = true;
	}
	if (qpn && !c->in_remote_qpn) {
		ctab_rqpn_add(&c->eng->by_rqpn, c);
		c->in_remote_qpn = true;
	}
}

void conn_remote_unlink(struct conn *c)
{
	if (c->in_remote_id) {
		ctab_rid_del(&c->eng->by_rid, c);
		c->in_remote_id = false;
	}
	if (c->in_remote_qpn) {
		ctab_rqpn_del(&c->eng->by_rqpn, c);
		c->in_remote_qpn = false;
	}
}

/*
 * SIDR_REQ carries no CA GUID (IBTA Table 119): duplicates are recognised by
 * (request id, sender's address), the address folded into the GUID slot.
 * The top bit keeps it apart from real GUIDs, whose OUI never sets it.
 */
uint64_t conn_addr_key(const struct eng_addr *a)
{
	uint64_t k = ((uint64_t)a->port << 16) | a->lid;
	int i;

	if (a->grh)
		for (i = 0; i < CM_GID_SIZE; i++)
			k = (k ^ a->gid[i]) * 0x100000001b3ULL;
	return k | (1ULL << 63);
}
