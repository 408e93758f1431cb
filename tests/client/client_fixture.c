// SPDX-License-Identifier: MIT
/*
 * The fixture of most libcmclient tests (see client_fixture.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "client_fixture.h"

int fx_setup(void **state, const char *name, unsigned int alarm_s,
	     fake_hook_fn hook)
{
	struct fx *x = calloc(1, sizeof(*x));

	assert_non_null(x);
	/*
	 * A hang guard: the test fails rather than waits forever. Four
	 * times the test's own figure, so valgrind on a loaded machine
	 * (meson gives it ten times the timeout) is not mistaken for a hang.
	 */
	alarm(alarm_s * 4);
	x->f = fake_start();
	assert_non_null(x->f);
	if (hook)
		x->f->hook = hook;
	assert_int_equal(cmc_open_fd(x->f->client_fd, name, &x->ch), 0);
	*state = x;
	return 0;
}

int fx_teardown(void **state)
{
	struct fx *x = *state;

	cmc_close(x->ch);
	fake_stop(x->f);
	free(x);
	alarm(0);
	return 0;
}
