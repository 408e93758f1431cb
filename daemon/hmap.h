/* SPDX-License-Identifier: MIT */
/*
 * A hash map from 64-bit keys to pointers: open addressing with linear
 * probing and backward-shift deletion, grown at 50% load. The daemon's
 * front end uses it for ids and clients; lookups are O(1) at any size.
 */
#ifndef CMD_HMAP_H
#define CMD_HMAP_H

#include <stddef.h>
#include <stdint.h>

struct hmap_slot {
	uint64_t key;
	void *val; /* NULL: empty slot */
};

struct hmap {
	struct hmap_slot *slots;
	size_t cap; /* a power of two, or 0 */
	size_t n;
};

/* 0, or -ENOMEM; an existing key's value is replaced. val != NULL. */
int hmap_put(struct hmap *m, uint64_t key, void *val);
void *hmap_get(const struct hmap *m, uint64_t key);
/* Returns the value removed, or NULL. */
void *hmap_del(struct hmap *m, uint64_t key);
void hmap_free(struct hmap *m);

/*
 * Walk: start with *pos = 0; returns the next value and advances *pos, or
 * NULL at the end. The map must not change during a walk except through
 * hmap_del of the value just returned... which may move a later entry
 * backwards, so a walk that deletes restarts from 0.
 */
void *hmap_next(const struct hmap *m, size_t *pos, uint64_t *key);

#endif
