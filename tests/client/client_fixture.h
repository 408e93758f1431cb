/* SPDX-License-Identifier: MIT */
/*
 * The fixture of most libcmclient tests: a fake daemon (fake_daemon.h) and
 * a channel open on it, made by a cmocka setup and undone by its teardown.
 * An alarm() turns a hang into a failure (SIGALRM ends the test).
 */
#ifndef CMD_TESTS_CLIENT_FIXTURE_H
#define CMD_TESTS_CLIENT_FIXTURE_H

#include "cmclient.h"
#include "fake_daemon.h"

struct fx {
	struct fake *f;
	struct cmc_channel *ch;
};

/*
 * How long a test waits for an event or request the fake daemon is sure to
 * send: a hang guard only (natively it takes microseconds; valgrind on a
 * loaded 2-core machine is the slowest case, and 30 s is far beyond it).
 */
#define FX_WAIT_MS 30000

/*
 * Arm alarm(alarm_s), start a fake daemon, give it hook (may be NULL)
 * before the client says anything, and open a channel named name on it.
 * *state becomes the struct fx. Fails the test when something does not
 * work.
 */
int fx_setup(void **state, const char *name, unsigned int alarm_s,
	     fake_hook_fn hook);

/* Close the channel, stop the fake daemon, free *state, disarm the alarm. */
int fx_teardown(void **state);

#endif
