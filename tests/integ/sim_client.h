/* SPDX-License-Identifier: MIT */
/*
 * What the integration tests that use libcmclient share (test_pipeline.c
 * speaks raw cmp and does without).
 */
#ifndef CMD_TESTS_INTEG_SIM_CLIENT_H
#define CMD_TESTS_INTEG_SIM_CLIENT_H

#include <stdint.h>

#include "cmclient.h"

/*
 * The ids that filter (CMC_LIST_*) selects on ch's daemon: those of every
 * client when we run as root (CI does), otherwise only ours. Fails the
 * test when LIST fails.
 */
int sim_count_ids(struct cmc_channel *ch, enum cmc_list_filter filter);

/* A global counter of ch's daemon by name; fails the test when there is
 * no such counter. */
uint64_t sim_counter(struct cmc_channel *ch, const char *name);

#endif
