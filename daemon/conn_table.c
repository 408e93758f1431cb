// SPDX-License-Identifier: MIT
/*
 * The engine's lookups (IBTA 12.9.8): by local comm id, by (remote comm id,
 * remote CA GUID) for duplicate REQs and REPs, and by (remote QPN, remote CA
 * GUID) for stale connections. Three tables of proto/hash.h, so every
 * lookup is O(1) expected at 100,000+ records; their links are embedded in
 * struct conn: no allocation per insertion.
 */
#include <errno.h>

#include "conn.h"
#include "util.h"

#define CTAB_INITIAL 1024

/* The remote tables' key: a 32-bit number (comm id or QPN) and a GUID. */
struct ctab_remote_key {
	uint32_t v;
	uint64_t guid;
};

static uint64_t ctab_remote_hash(uint32_t v, uint64_t guid)
{
	return hash_u64(guid ^ ((uint64_t)v << 7));
}

static uint64_t ctab_local_node_hash(const struct hnode *n)
{
	return hash_u64(container_of(n, struct conn, h_local)->local_id);
}

static uint64_t ctab_rid_node_hash(const struct hnode *n)
{
	const struct conn *c = container_of(n, struct conn, h_rid);

	return ctab_remote_hash(c->remote_id, c->remote_guid);
}

static uint64_t ctab_rqpn_node_hash(const struct hnode *n)
{
	const struct conn *c = container_of(n, struct conn, h_rqpn);

	return ctab_remote_hash(c->remote_qpn, c->remote_guid);
}

static bool ctab_local_eq(const struct hnode *n, const void *key)
{
	return container_of(n, struct conn, h_local)->local_id ==
	       *(const uint32_t *)key;
}

static bool ctab_rid_eq(const struct hnode *n, const void *key)
{
	const struct conn *c = container_of(n, struct conn, h_rid);
	const struct ctab_remote_key *k = key;

	return c->remote_id == k->v && c->remote_guid == k->guid;
}

static bool ctab_rqpn_eq(const struct hnode *n, const void *key)
{
	const struct conn *c = container_of(n, struct conn, h_rqpn);
	const struct ctab_remote_key *k = key;

	return c->remote_qpn == k->v && c->remote_guid == k->guid;
}

int ctab_init(struct eng *eng)
{
	/* Out of memory later on: longer chains, lookups stay correct. */
	if (htable_init(&eng->by_local, CTAB_INITIAL, ctab_local_node_hash) ||
	    htable_init(&eng->by_rid, CTAB_INITIAL, ctab_rid_node_hash) ||
	    htable_init(&eng->by_rqpn, CTAB_INITIAL, ctab_rqpn_node_hash)) {
		ctab_fini(eng);
		return -ENOMEM;
	}
	return 0;
}

void ctab_fini(struct eng *eng)
{
	htable_fini(&eng->by_local);
	htable_fini(&eng->by_rid);
	htable_fini(&eng->by_rqpn);
}

struct conn *ctab_local_find(const struct htable *t, uint32_t id)
{
	return htable_entry(htable_find(t, hash_u64(id), ctab_local_eq, &id),
			    struct conn, h_local);
}

struct conn *ctab_rid_find(const struct htable *t, uint32_t rid, uint64_t guid)
{
	struct ctab_remote_key k = { rid, guid };

	return htable_entry(
		htable_find(t, ctab_remote_hash(rid, guid), ctab_rid_eq, &k),
		struct conn, h_rid);
}

struct conn *ctab_rqpn_find(const struct htable *t, uint32_t qpn, uint64_t guid)
{
	struct ctab_remote_key k = { qpn, guid };

	return htable_entry(
		htable_find(t, ctab_remote_hash(qpn, guid), ctab_rqpn_eq, &k),
		struct conn, h_rqpn);
}

void ctab_local_add(struct htable *t, struct conn *c)
{
	htable_insert(t, &c->h_local);
}

void ctab_local_del(struct htable *t, struct conn *c)
{
	htable_remove(t, &c->h_local);
}

/*
 * A record enters the remote tables once it knows its peer (REQ received,
 * REP received) and leaves them when it returns to IDLE: through timewait the
 * pair still identifies it, which is what makes a reused QPN "stale".
 */
void conn_remote_link(struct conn *c, bool qpn)
{
	if (!c->in_remote_id) {
		htable_insert(&c->eng->by_rid, &c->h_rid);
		c->in_remote_id = true;
	}
	if (qpn && !c->in_remote_qpn) {
		htable_insert(&c->eng->by_rqpn, &c->h_rqpn);
		c->in_remote_qpn = true;
	}
}

void conn_remote_unlink(struct conn *c)
{
	if (c->in_remote_id) {
		htable_remove(&c->eng->by_rid, &c->h_rid);
		c->in_remote_id = false;
	}
	if (c->in_remote_qpn) {
		htable_remove(&c->eng->by_rqpn, &c->h_rqpn);
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
