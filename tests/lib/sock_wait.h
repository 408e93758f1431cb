/* SPDX-License-Identifier: MIT */
/*
 * Waiting for a test's daemon or hub to listen, shared by the harnesses
 * that start them (tests/integ/sim_harness.c, tests/robust/rb_common.c).
 */
#ifndef CMD_TESTS_LIB_SOCK_WAIT_H
#define CMD_TESTS_LIB_SOCK_WAIT_H

#include <sys/types.h>

/*
 * 0 once the Unix seqpacket socket at path accepts a connection, -1 after
 * 30 s (a hang guard: a daemon under valgrind or on a loaded machine
 * starts slowly) or as soon as process pid (when not 0) has exited.
 */
int sock_wait(const char *path, pid_t pid);

#endif
