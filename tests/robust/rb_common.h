/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the robustness tests: a private simulated fabric (one
 * cmhub and up to four cmd daemons in a temporary directory), counters and
 * memory of a daemon, and a CHECK macro that names the failing line.
 *
 * Every wait here is bounded; every process started is stopped by
 * rb_fabric_stop(), also when a check fails (rb_fail() calls it).
 */
#ifndef CMD_TESTS_ROBUST_RB_COMMON_H
#define CMD_TESTS_ROBUST_RB_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cmclient.h"

#define RB_MAX_DAEMONS 4
/* daemon/xport_sim.c: node N's first port has LID N * 16 + 1 and its
 * node GUID is XPORT_SIM_GUID_BASE | N << 8. */
#define RB_NODE_LID(n) ((uint16_t)((n)*16 + 1))

struct rb_daemon {
	pid_t pid;
	unsigned int node;
	char sock[128];
	char log[128];
};

struct rb_fabric {
	char dir[64];
	char hub_sock[96];
	pid_t hub_pid;
	unsigned int n;
	struct rb_daemon d[RB_MAX_DAEMONS];
};

extern struct rb_fabric rb_fab;

__attribute__((noreturn, format(printf, 3, 4))) void
rb_fail(const char *file, int line, const char *fmt, ...);

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond))                                                   \
			rb_fail(__FILE__, __LINE__,                            \
				"check '" #cond "' failed: " __VA_ARGS__);     \
	} while (0)

/* Milliseconds on the monotonic clock. */
double rb_now_ms(void);
/* An unsigned number from the environment, or def. */
unsigned long rb_env_ulong(const char *name, unsigned long def);

/* Start the hub (seeded) in a fresh temporary directory. */
void rb_fabric_start(const char *tag, uint64_t seed);
/*
 * Start a daemon on node 'node' with extra arguments (NULL terminated
 * array, may be NULL). Returns its index in rb_fab.d. Waits until its
 * socket answers.
 */
unsigned int rb_daemon_start(unsigned int node, const char *const *extra);
/*
 * The usual fabric: the hub, daemon A on node 1 (index 0) and daemon B on
 * node 2 (index 1) with their extra arguments, and a monitor channel on
 * each ("rb-mon-a", "rb-mon-b") for counters.
 */
void rb_pair_start(const char *tag, uint64_t seed, const char *const *extra_a,
		   const char *const *extra_b, struct cmc_channel **mon_a,
		   struct cmc_channel **mon_b);
/* The end of the usual fabric: both daemons must still run; closes the
 * monitors and stops everything. */
void rb_pair_stop(struct cmc_channel *mon_a, struct cmc_channel *mon_b);
/* True while the daemon's process exists (it did not crash or exit). */
bool rb_daemon_alive(unsigned int idx);
/*
 * Stop everything (SIGTERM, then SIGKILL after 30 s; a program that does
 * not exit 0 fails the test) and remove the directory. Safe to call twice.
 */
void rb_fabric_stop(void);
/* Print the tail of every daemon log (for failures). */
void rb_dump_logs(void);

/* cmhub --ctl set/stats; settings like "loss=10 dup=5". */
void rb_hub_set(const char *settings);
/* One value of `cmhub --ctl stats` ("overflow", "dropped"...). */
uint64_t rb_hub_stat(const char *name);

/* A daemon's VmRSS in KiB, or 0 if it cannot be read. */
unsigned long rb_vmrss_kb(pid_t pid);

/* A global counter of the daemon behind ch; fails the test if absent. */
uint64_t rb_counter(struct cmc_channel *ch, const char *name);
/* Print every nonzero global counter whose name matches one of the
 * comma-separated prefixes (NULL: all), one "name value" a line. */
void rb_print_counters(struct cmc_channel *ch, const char *label,
		       const char *prefixes);
/* Number of ids the daemon lists (cmc_list, all clients: tests run as
 * root; as another user, the caller's own). */
unsigned int rb_list_count(struct cmc_channel *ch);
/* Open a channel with a 30 s request timeout (a hang guard: a reply never
 * takes that long but on a stalled daemon); fails the test on error. */
struct cmc_channel *rb_open(unsigned int idx, const char *name);

/*
 * cmc_get_event() within ms, but an MRA_RECEIVED is acked and passed over:
 * a peer daemon MRAs a REQ or REP its app has not answered within half
 * the wait, which under ASan or on a busy machine a test's app may not.
 */
int rb_next_event(struct cmc_channel *ch, struct cmc_event **ev, int ms);

/*
 * The connection parameters the tests share: an RC connect to LID lid,
 * QP qpn starting at psn, 7 retries and RNR retries, 15 CM retries, both
 * CM response timeouts 'timeout' (a 5-bit exponent of 4.096 us) and
 * responder resources and initiator depth 'rd'; everything else zero, for
 * the caller to set where its test differs.
 */
void rb_conn_param(struct cmc_conn_param *p, uint64_t sid, uint16_t lid,
		   uint32_t qpn, uint32_t psn, uint8_t rd, uint8_t timeout);

struct cm_msg;
struct sim_mad;
/*
 * A fake node on the hub, speaking daemon/sim_proto.h itself: node 'node'
 * with one port of LID RB_NODE_LID(node), port GUID guid and the link
 * local GID made from it. sndbuf, when nonzero, is the socket's SO_SNDBUF.
 * Returns the connected socket; fails the test when the hub refuses.
 */
int rb_fake_node(unsigned int node, uint64_t guid, int sndbuf);
/* msg, encoded, as the fake node's MAD to QP 1 of LID dlid. */
void rb_fake_mad(struct sim_mad *m, const struct cm_msg *msg, uint16_t dlid);

/*
 * Wait up to ms for the daemon behind ch to hold no more than max_ids ids
 * and max_records records. Returns true when it got there.
 */
bool rb_wait_drained(struct cmc_channel *ch, uint64_t max_ids,
		     uint64_t max_records, double ms);

#endif
