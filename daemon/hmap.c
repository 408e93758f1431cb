// SPDX-License-Identifier: MIT
#include "hmap.h"

#include <errno.h>
#include <stdlib.h>

/* splitmix64's finaliser: keys are ids and serials, often sequential. */
static size_t hmap_hash(uint64_t k, size_t cap)
{
	k ^= k >> 30;
	k *= UINT64_C(0xbf58476d1ce4e5b9);
	k ^= k >> 27;
	k *= UINT64_C(0x94d049bb133111eb);
	k ^= k >> 31;
	return (size_t)k & (cap - 1);
}

static int hmap_grow(struct hmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 16;
	struct hmap_slot *old = m->slots, *s = calloc(cap, sizeof(*s));
	size_t oldcap = m->cap;

	if (!s)
		return -ENOMEM;
	m->slots = s;
	m->cap = cap;
	m->n = 0;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].val)
			hmap_put(m, old[i].key, old[i].val);
	free(old);
	return 0;
}

int hmap_put(struct hmap *m, uint64_t key, void *val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap && hmap_grow(m))
		return -ENOMEM;
	for (i = hmap_hash(key, m->cap); m->slots[i].val;
	     i = (i + 1) & (m->cap - 1)) {
		if (m->slots[i].key == key) {
			m->slots[i].val = val;
			return 0;
		}
	}
	m->slots[i].key = key;
	m->slots[i].val = val;
	m->n++;
	return 0;
}

void *hmap_get(const struct hmap *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = hmap_hash(key, m->cap); m->slots[i].val;
	     i = (i + 1) & (m->cap - 1))
		if (m->slots[i].key == key)
			return m->slots[i].val;
	return NULL;
}

void *hmap_del(struct hmap *m, uint64_t key)
{
	size_t i, j, mask = m->cap - 1;
	void *val;

	if (!m->cap)
		return NULL;
	for (i = hmap_hash(key, m->cap); m->slots[i].key != key;
	     i = (i + 1) & mask)
		if (!m->slots[i].val)
			return NULL;
	if (!m->slots[i].val)
		return NULL;
	val = m->slots[i].val;
	/* Backward shift: move later members of the probe run into the hole
	 * when their home slot allows it, so lookups never stop early. */
	for (j = (i + 1) & mask; m->slots[j].val; j = (j + 1) & mask) {
		size_t home = hmap_hash(m->slots[j].key, m->cap);

		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	m->slots[i].val = NULL;
	m->slots[i].key = 0;
	m->n--;
	return val;
}

void *hmap_next(const struct hmap *m, size_t *pos, uint64_t *key)
{
	for (; *pos < m->cap; (*pos)++) {
		if (m->slots[*pos].val) {
			if (key)
				*key = m->slots[*pos].key;
			return m->slots[(*pos)++].val;
		}
	}
	return NULL;
}

void hmap_free(struct hmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->n = 0;
}
