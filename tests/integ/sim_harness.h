/* SPDX-License-Identifier: MIT */
/*
 * The simulated fabric of the integration tests: a cmhub process and up to
 * four cmd daemons, daemon i on node i + 1 (node 1's port has LID 17, node
 * 2's LID 33: see daemon/xport_sim.c) with its socket at <dir>/a.sock,
 * b.sock... The programs come from $CMHUB and $CMD; everything lives in a
 * temporary directory.
 *
 * Every daemon runs with a short packet life time (2^8 * 4.096 us, about a
 * millisecond) so that retransmissions and timewait take milliseconds, and
 * logs at $CMD_LOG_LEVEL (warn by default); a test adds its own arguments
 * per daemon.
 */
#ifndef CMD_TESTS_INTEG_SIM_HARNESS_H
#define CMD_TESTS_INTEG_SIM_HARNESS_H

#include <sys/types.h>

#define SIM_MAX_DAEMONS 4

/* A number as a string literal, for a daemon's arguments. */
#define SIM_STR_(x) #x
#define SIM_STR(x) SIM_STR_(x)

struct sim_fabric {
	char dir[64];
	char hub_sock[96];
	pid_t hub_pid;
	unsigned int n;
	char sock[SIM_MAX_DAEMONS][96];
	char state[SIM_MAX_DAEMONS][96]; /* the daemon's handoff state */
	pid_t pid[SIM_MAX_DAEMONS];
	const char *const *extra[SIM_MAX_DAEMONS];
};

extern struct sim_fabric sim_fab;

/*
 * Start the hub (cmhub --seed seed) in a new /tmp/cmd-<tag>-XXXXXX, then n
 * daemons; daemon i gets the NULL terminated extra[i] after the common
 * arguments (extra, or extra[i], may be NULL). Returns 0 once every socket
 * accepts connections, or -1 (and nothing is left running).
 */
int sim_fabric_start(const char *tag, unsigned int seed, unsigned int n,
		     const char *const *const extra[]);

/*
 * SIGTERM every daemon and then the hub, wait for each (10 s, then
 * SIGKILL), and remove the directory. Anything but exit status 0 counts
 * as a failure: a sanitizer report in a daemon (an ASan/UBSan abort, or
 * LeakSanitizer's non-zero exit at the end) reaches the test's stderr but
 * would not change its result by itself. Returns 0 when all was well.
 */
int sim_fabric_stop(void);

/*
 * Restart daemon i with the arguments it had: stop it with sig (SIGTERM:
 * it hands its state over; SIGKILL: a crash, nothing is handed over;
 * SIGINT: it tears everything down), wait for it (an exit status other
 * than 0 after SIGTERM or SIGINT is a failure), and start it again.
 * SIGUSR2 instead asks it to exec itself in place (same pid); 0 starts
 * it when it is not running (the test stopped it itself). Returns 0
 * once its socket accepts connections again, with *gap_ms (may be NULL)
 * the time from the signal until then; -1 on failure.
 */
int sim_daemon_restart(unsigned int i, int sig, double *gap_ms);

/*
 * `cmhub --ctl <the hub's socket> opts` (the hub's faults and its SA's
 * settings, docs/SA.md): 0, or -1 when it failed or could not run.
 */
int sim_hub_ctl(const char *opts);

/*
 * A cmocka group teardown that runs sim_fabric_stop() and exits with
 * status 1 when it failed: cmocka reports a failed group teardown but
 * still exits 0.
 */
int sim_group_teardown(void **state);

#endif
