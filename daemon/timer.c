// SPDX-License-Identifier: MIT
/*
 * Connection deadlines in one binary min-heap: arm, cancel and pop are
 * O(log n), the next deadline O(1). The caller's loop keeps a single timer at
 * timer_next(). A connection has at most one deadline at a time: the one its
 * current state needs (retransmission, MRA due, or end of timewait).
 */
#include <stdlib.h>

#include "conn.h"
#include "log.h"

static void timer_swap(struct eng *eng, size_t a, size_t b)
{
	struct conn *t = eng->heap[a];

	eng->heap[a] = eng->heap[b];
	eng->heap[b] = t;
	eng->heap[a]->heap_idx = (uint32_t)a;
	eng->heap[b]->heap_idx = (uint32_t)b;
}

static void timer_up(struct eng *eng, size_t i)
{
	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (eng->heap[p]->deadline <= eng->heap[i]->deadline)
			break;
		timer_swap(eng, i, p);
		i = p;
	}
}

static void timer_down(struct eng *eng, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < eng->heap_n &&
		    eng->heap[l]->deadline < eng->heap[m]->deadline)
			m = l;
		if (r < eng->heap_n &&
		    eng->heap[r]->deadline < eng->heap[m]->deadline)
			m = r;
		if (m == i)
			return;
		timer_swap(eng, i, m);
		i = m;
	}
}

void timer_cancel(struct conn *c)
{
	struct eng *eng = c->eng;
	size_t i = c->heap_idx;

	if (c->timer == CONN_TIMER_NONE)
		return;
	c->timer = CONN_TIMER_NONE;
	eng->heap_n--;
	if (i != eng->heap_n) {
		eng->heap[i] = eng->heap[eng->heap_n];
		eng->heap[i]->heap_idx = (uint32_t)i;
		timer_up(eng, i);
		timer_down(eng, eng->heap[i]->heap_idx);
	}
}

void timer_arm(struct conn *c, enum conn_timer kind, uint64_t at)
{
	struct eng *eng = c->eng;

	timer_cancel(c);
	if (eng->heap_n == eng->heap_cap) {
		size_t ncap = eng->heap_cap ? eng->heap_cap * 2 : 1024;
		struct conn **nh = realloc(eng->heap, ncap * sizeof(*nh));

		/*
		 * Without memory the deadline is lost; the peer's own timers
		 * still end the exchange. Say so loudly.
		 */
		if (!nh) {
			log_err("conn %08x: no memory for a timer",
				c->local_id);
			return;
		}
		eng->heap = nh;
		eng->heap_cap = ncap;
	}
	c->timer = kind;
	c->deadline = at;
	c->heap_idx = (uint32_t)eng->heap_n++;
	eng->heap[c->heap_idx] = c;
	timer_up(eng, c->heap_idx);
}

uint64_t timer_next(const struct eng *eng)
{
	return eng->heap_n ? eng->heap[0]->deadline : ENG_NO_DEADLINE;
}

struct conn *timer_pop_due(struct eng *eng, uint64_t now, enum conn_timer *kind)
{
	struct conn *c;

	if (!eng->heap_n || eng->heap[0]->deadline > now)
		return NULL;
	c = eng->heap[0];
	*kind = c->timer;
	timer_cancel(c);
	return c;
}
