// SPDX-License-Identifier: MIT
/*
 * The tree's one hash table (proto/hash.h) and one spare list
 * (proto/spare.h): lookups across growth, removal while iterating, the
 * resumable walk LIST pages with, and the spare list's cap and bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hash.h"
#include "spare.h"
#include "util.h"

#define N 1000

struct elem {
	uint32_t key;
	unsigned int seen;
	struct hnode node;
};

static uint64_t elem_hash(const struct hnode *n)
{
	return hash_u64(container_of(n, struct elem, node)->key);
}

static bool elem_eq(const struct hnode *n, const void *key)
{
	return container_of(n, struct elem, node)->key ==
	       *(const uint32_t *)key;
}

static struct elem *elem_find(const struct htable *t, uint32_t key)
{
	return htable_entry(htable_find(t, hash_u64(key), elem_eq, &key),
			    struct elem, node);
}

/* N sequential keys into a table of 4 buckets: it doubles at load one. */
static void fill(struct htable *t, struct elem *e)
{
	assert_int_equal(htable_init(t, 4, elem_hash), 0);
	for (uint32_t i = 0; i < N; i++) {
		e[i].key = i * 7 + 1;
		e[i].seen = 0;
		assert_int_equal(htable_reserve(t), 0);
		htable_insert(t, &e[i].node);
		assert_true(t->n <= t->mask + 1);
	}
	assert_int_equal(t->n, N);
}

static void test_find_across_growth(void **state)
{
	static struct elem e[N];
	struct htable t;

	(void)state;
	fill(&t, e);
	assert_int_equal(t.mask + 1, 1024);
	for (uint32_t i = 0; i < N; i++)
		assert_ptr_equal(elem_find(&t, e[i].key), &e[i]);
	assert_null(elem_find(&t, 0));
	assert_null(elem_find(&t, 2));
	htable_remove(&t, &e[5].node);
	htable_remove(&t, &e[5].node); /* not in it: left alone */
	assert_int_equal(t.n, N - 1);
	assert_null(elem_find(&t, e[5].key));
	assert_ptr_equal(elem_find(&t, e[6].key), &e[6]);
	htable_fini(&t);
	assert_null(elem_find(&t, e[6].key)); /* safe after fini */
	assert_null(htable_next(&t, NULL));
}

static void test_foreach_removes(void **state)
{
	static struct elem e[N];
	struct hnode *n, *next;
	struct htable t;

	(void)state;
	fill(&t, e);
	HTABLE_FOREACH_SAFE(n, next, &t) {
		container_of(n, struct elem, node)->seen++;
		htable_remove(&t, n);
	}
	assert_int_equal(t.n, 0);
	for (unsigned int i = 0; i < N; i++)
		assert_int_equal(e[i].seen, 1);
	htable_fini(&t);
}

/* Pages of 13 from a cursor see every element once; a bad one ends. */
static void test_walk_resumes(void **state)
{
	static struct elem e[N];
	struct htable t;
	uint64_t pos = 0;
	unsigned int total = 0;
	struct hnode *n = NULL;

	(void)state;
	fill(&t, e);
	do {
		unsigned int page = 0;

		while (page < 13 && (n = htable_walk(&t, &pos))) {
			assert_int_not_equal(pos, 0);
			container_of(n, struct elem, node)->seen++;
			page++;
		}
		total += page;
	} while (n);
	assert_int_equal(total, N);
	for (unsigned int i = 0; i < N; i++)
		assert_int_equal(e[i].seen, 1);
	pos = UINT64_MAX;
	assert_null(htable_walk(&t, &pos));
	htable_fini(&t);
}

static void test_spare_cap_and_bytes(void **state)
{
	struct spare s;
	uint64_t bytes = 0;
	void *p[5];

	(void)state;
	spare_init(&s, 3, 64, &bytes);
	assert_null(spare_take(&s));
	for (int i = 0; i < 5; i++) {
		p[i] = malloc(64);
		assert_non_null(p[i]);
	}
	for (int i = 0; i < 5; i++)
		spare_give(&s, p[i]); /* the last two are freed */
	assert_int_equal(s.n, 3);
	assert_int_equal(bytes, 3 * 64);
	/* Last in, first out. */
	assert_ptr_equal(spare_take(&s), p[2]);
	assert_int_equal(bytes, 2 * 64);
	free(p[2]);
	spare_drain(&s);
	assert_int_equal(s.n, 0);
	assert_int_equal(bytes, 0);
	assert_null(spare_take(&s));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find_across_growth),
		cmocka_unit_test(test_foreach_removes),
		cmocka_unit_test(test_walk_resumes),
		cmocka_unit_test(test_spare_cap_and_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
