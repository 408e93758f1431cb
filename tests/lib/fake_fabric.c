// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fake_fabric.h"

int ff_node_init(struct ff_node *n, const struct eng_ops *ops, void *ctx,
		 const struct eng_config *cfg, uint64_t guid, uint16_t lid,
		 bool roce, uint64_t seed)
{
	memset(n, 0, sizeof(*n));
	n->guid = guid;
	n->rnd = seed ? seed : 1;
	n->addr.port = 1;
	n->addr.lid = lid;
	n->addr.qpn = 1;
	n->eng = eng_new(ops, ctx, cfg);
	if (!n->eng)
		return -ENOMEM;
	return eng_port_set(n->eng, 1, guid, roce);
}

void ff_node_fini(struct ff_node *n)
{
	eng_free(n->eng);
	n->eng = NULL;
}

uint64_t ff_rand64(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dULL;
}

uint32_t ff_random(struct ff_node *n)
{
	return (uint32_t)(ff_rand64(&n->rnd) >> 32);
}

void ff_add(struct ff *f, struct ff_node *n)
{
	if (f->n < FF_MAX_NODES)
		f->node[f->n++] = n;
}

int ff_route(const struct ff *f, const struct eng_addr *to)
{
	int dest = -1;

	for (size_t i = 0; i < f->n; i++)
		if (to->lid == f->node[i]->addr.lid)
			dest = (int)i;
	return dest;
}

uint64_t ff_next_deadline(const struct ff *f)
{
	uint64_t d = ENG_NO_DEADLINE;

	for (size_t i = 0; i < f->n; i++) {
		uint64_t x = eng_next_deadline(f->node[i]->eng);

		d = x < d ? x : d;
	}
	return d;
}

void ff_run_timers(const struct ff *f, uint64_t now)
{
	for (size_t i = 0; i < f->n; i++)
		eng_run_timers(f->node[i]->eng, now);
}

int ff_wire(const struct cm_msg *msg, uint8_t buf[CM_MAD_SIZE],
	    struct cm_msg *back, unsigned int flags, struct cm_fault *f)
{
	int rc = cm_mad_encode(msg, buf);

	if (rc)
		return rc;
	return cm_mad_decode(buf, CM_MAD_SIZE, flags, back, f);
}

int ff_queue_push(struct ff_queue *q, const struct ff_mad *m)
{
	if (q->max && q->n - q->next >= q->max)
		return -ENOBUFS;
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 64;
		struct ff_mad *nm = realloc(q->m, cap * sizeof(*nm));

		if (!nm)
			return -ENOMEM;
		q->m = nm;
		q->cap = cap;
	}
	q->m[q->n++] = *m;
	return 0;
}

size_t ff_queue_len(const struct ff_queue *q)
{
	return q->n - q->next;
}

struct ff_mad *ff_queue_at(struct ff_queue *q, size_t i)
{
	return &q->m[q->next + i];
}

struct ff_mad ff_queue_pop(struct ff_queue *q)
{
	return q->m[q->next++];
}

size_t ff_queue_drop(struct ff_queue *q)
{
	size_t n = q->n - q->next;

	q->next = q->n;
	return n;
}

void ff_queue_forget(struct ff_queue *q)
{
	size_t left = q->n - q->next;

	if (!q->next)
		return;
	memmove(q->m, q->m + q->next, left * sizeof(*q->m));
	q->n = left;
	q->next = 0;
}

void ff_queue_free(struct ff_queue *q)
{
	free(q->m);
	memset(q, 0, sizeof(*q));
}

void ff_recv(struct ff_node *to, const struct ff_mad *m, uint64_t now)
{
	eng_recv(to->eng, &m->from, &m->msg, now);
}
