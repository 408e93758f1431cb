// SPDX-License-Identifier: MIT
/*
 * A connection record's life outside the table: its comm id (unguessable,
 * never reused while a MAD may still name it), its allocation, and its
 * end once its protocol tail is over.
 */
#include <stdlib.h>

#include "conn.h"

void conn_rec_init(struct eng *eng)
{
	int i;

	eng->id_next = conn_random(eng);
	for (i = 0; i < 4; i++)
		eng->id_key[i] = conn_random(eng);
	spare_init(&eng->last_spare, CONN_LAST_SPARE_MAX, sizeof(struct cm_msg),
		   &eng->cnt.spare_bytes);
}

void conn_rec_fini(struct eng *eng)
{
	spare_drain(&eng->last_spare);
}

/* A 4-round Feistel network on 16-bit halves: a bijection of 32 bits. */
static uint32_t conn_id_perm(const struct eng *eng, uint32_t x)
{
	uint16_t l = x >> 16, r = x & 0xffff, t;
	uint32_t f;
	int i;

	for (i = 0; i < 4; i++) {
		f = (r ^ eng->id_key[i]) * 0x45d9f3bU;
		f ^= f >> 16;
		t = l ^ (uint16_t)f;
		l = r;
		r = t;
	}
	return (uint32_t)l << 16 | r;
}

struct conn *conn_new(struct eng *eng)
{
	struct conn *c = calloc(1, sizeof(*c));
	uint32_t id;

	if (!c)
		return NULL;
	/*
	 * Comm ids are a counter from a random start, sent through a
	 * permutation keyed at random: a peer cannot guess the next id from
	 * the last (not cryptographically, but no longer trivially), and no
	 * id comes back before 2^32 others were handed out. Should one still
	 * be held by a record then, timewait included, it is skipped: none
	 * is reused while it may still arrive in a MAD.
	 */
	do
		id = conn_id_perm(eng, eng->id_next++);
	while (!id || ctab_local_find(&eng->by_local, id));
	c->eng = eng;
	c->local_id = id;
	c->state = ENG_STATE_IDLE;
	STAILQ_INIT(&c->evq.items);
	c->evq.next_state = ENG_STATE__COUNT;
	ctab_local_add(&eng->by_local, c);
	LIST_INSERT_HEAD(&eng->all, c, all_link);
	eng->nconn++;
	return c;
}

void conn_free(struct conn *c)
{
	struct eng *eng = c->eng;

	timer_cancel(c);
	conn_remote_unlink(c);
	ctab_local_del(&eng->by_local, c);
	LIST_REMOVE(c, all_link);
	evq_clear(c);
	free(c->held_req);
	conn_last_drop(c);
	eng->nconn--;
	free(c);
}

/* A destroyed (or never owned) record lives only for its protocol tail. */
void conn_reap(struct conn *c)
{
	if (c->destroyed && c->state == ENG_STATE_IDLE)
		conn_free(c);
}
