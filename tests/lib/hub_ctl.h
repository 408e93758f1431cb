/* SPDX-License-Identifier: MIT */
/*
 * Running the hub's control client (`cmhub --ctl SOCKET ...`, the
 * simulated fabric's faults and SA settings) from a test and reading what
 * it printed; shared by tests/sim's test_xport_sim and test_hub_sa.
 */
#ifndef CMD_TESTS_LIB_HUB_CTL_H
#define CMD_TESTS_LIB_HUB_CTL_H

#include <stddef.h>

/*
 * Run `hub --ctl sock args...` (args NULL terminated, at most 12), its
 * standard output into out (len bytes, NUL terminated). Returns its exit
 * status, or -1 when it could not be run or did not exit.
 */
int hub_ctl_run(const char *hub, const char *sock, char *const args[],
		char *out, size_t len);

#endif
