// SPDX-License-Identifier: MIT
/*
 * What the integration tests that use libcmclient share (see
 * sim_client.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sim_client.h"

int sim_count_ids(struct cmc_channel *ch, enum cmc_list_filter filter)
{
	struct cmc_list_entry e[CMC_LIST_BATCH_MAX];
	uint64_t cursor = 0;
	int n = 0, rc;

	do {
		rc = cmc_list(ch, filter, &cursor, e);
		assert_true(rc >= 0);
		n += rc;
	} while (cursor);
	return n;
}

uint64_t sim_counter(struct cmc_channel *ch, const char *name)
{
	struct cmc_counter c[CMC_COUNTERS_BATCH_MAX];
	uint64_t cursor = 0, value = UINT64_MAX;
	int n;

	do {
		n = cmc_counters(ch, CMC_COUNTERS_GLOBAL, NULL, 0, &cursor, c);
		assert_true(n >= 0);
		for (int i = 0; i < n; i++)
			if (!strcmp(c[i].name, name))
				value = c[i].value;
	} while (cursor);
	assert_true(value != UINT64_MAX);
	return value;
}
