/* SPDX-License-Identifier: MIT */
/*
 * The harness of the rcsim tests: unmodified-style librdmacm programs
 * (compiled against the system's <rdma/rdma_cma.h>, linked against our
 * librdmacm) on the simulated fabric of tests/integ/sim_harness.c, with
 * RoCE ports: node 1 (daemon a) is 127.0.1.1, node 2 (daemon b)
 * 127.0.2.1. No verbs device carries these addresses, so the library
 * uses the daemons' own ports, and the programs are CM-only (no QP: the
 * QP numbers are made up, rdma_establish() after CONNECT_RESPONSE).
 *
 * One process holds one connection to one daemon (the library's state
 * is process-wide and CMD_SOCKET is read once), so every case runs its
 * two sides in two children of the cmocka process, forked before
 * anything in them touches the library: the server with CMD_SOCKET on
 * node 2's daemon, the client on node 1's. The cmocka process itself
 * never calls librdmacm. The two sides talk through a pair of pipes
 * (rcs_tell/rcs_hear), to say "I am listening" or "I am done".
 *
 * In a child a failed check prints "server: file:line: what" and exits
 * 1; the parent then stops the other side and fails the case. Every wait
 * is for a condition, bounded by a hang guard (RCS_WAIT_MS, RCS_HANG_S)
 * that only turns a hang into a failure: none decides a verdict by how
 * fast the machine is. Under valgrind the guards grow tenfold.
 */
#ifndef CMD_TESTS_RDMACM_RCSIM_H
#define CMD_TESTS_RDMACM_RCSIM_H

#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

#include <rdma/rdma_cma.h>

/*
 * Hang guards. An event the peer's action makes due normally comes
 * within milliseconds; 30 s covers a loaded two-core machine, a daemon
 * MRA's wait and a peer under valgrind. A whole case (at most a few
 * hundred connections) gets 120 s, inside meson's 300 s.
 */
#define RCS_WAIT_MS 30000
#define RCS_HANG_S 120

/* The port the servers listen on, and one nobody listens on. */
#define RCS_PORT 7471
#define RCS_PORT_NOBODY 7472

/* Made-up QP numbers of a CM-only connection. rcs_connect() gives a
 * side's nth connection RCS_CLIENT_QPN + n (n from 0), rcs_accept()
 * RCS_SERVER_QPN + n: a REQ or REP that reuses a live connection's (QPN,
 * CA GUID) is stale (IBTA 12.9.8.3), REJ 10. */
#define RCS_CLIENT_QPN 0x1234
#define RCS_SERVER_QPN 0x5678

/* Private data areas as rdma_cm reports them: a REQ's 92 bytes less the
 * 36-byte CMA header, a REP's 196, a REJ's 148. */
#define RCS_REQ_PD 56
#define RCS_REP_PD 196
#define RCS_REJ_PD 148

/* 1 for node 1 (daemon a, the client's), 2 for node 2 (the server's). */
extern const char *rcs_sock[3];
/* The hang guards, scaled under valgrind. */
extern int rcs_wait_ms;

/* ---- In the cmocka process -------------------------------------- */

/*
 * A cmocka group setup: checks that rdma_* resolve to our library
 * ($RCS_LIBRDMACM, never the system's), then starts the hub and two
 * RoCE daemons (sim_fabric_start), node 2's with the extra arguments
 * extra_b (NULL terminated; may be NULL). 0 or -1.
 */
int rcs_setup(const char *tag, unsigned int seed, const char *const *extra_b);

/* The same with InfiniBand ports (no --sim-roce): node 1's port has LID
 * 17, node 2's LID 33, and the hub is their SM and SA. Addresses are
 * AF_INET6 with the ports' GIDs (no verbs device has them either). */
int rcs_setup_ib(const char *tag, unsigned int seed);

/*
 * Call first in main(): with the argument --valgrind, and not under
 * valgrind yet, the program runs itself again under memcheck (its sides
 * with it: valgrind follows fork, not the daemons' exec) and exits as
 * that run does, 77 (meson's "skipped") when there is no valgrind or
 * the program is built with AddressSanitizer.
 */
void rcs_main(int argc, char **argv);

/* The matching teardown (sim_group_teardown). */
int rcs_teardown(void **state);

/* What a side runs, in its own child process. */
typedef void rcs_role_fn(void *arg);

/*
 * Run server (CMD_SOCKET on node 2's daemon) and client (node 1's) in
 * two children, either of them NULL for a one-sided case, and fail the
 * case unless both exit 0 within RCS_HANG_S. Afterwards both daemons
 * must get back to no ids and no connection records.
 */
void rcs_run(rcs_role_fn *server, rcs_role_fn *client, void *arg);

/* As rcs_run, one side only, on the daemon at sock (any path). */
void rcs_run_one(rcs_role_fn *fn, const char *sock, void *arg);

/* ---- In a side ---------------------------------------------------- */

/* "server" or "client". */
extern const char *rcs_side;

void rcs_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));

#define RCS_CHECK(cond, ...)                                                   \
	do {                                                                   \
		if (!(cond))                                                   \
			rcs_fail(__FILE__, __LINE__, __VA_ARGS__);             \
	} while (0)

/* A librdmacm call that must succeed. */
#define RCS_OK(call)                                                           \
	do {                                                                   \
		errno = 0;                                                     \
		if ((call) != 0)                                               \
			rcs_fail(__FILE__, __LINE__, "%s failed: %s", #call,   \
				 strerror(errno));                             \
	} while (0)

/* A librdmacm call that must fail with -1 and errno e. */
#define RCS_FAILS(call, e)                                                     \
	do {                                                                   \
		errno = 0;                                                     \
		int rcs_r_ = (call);                                           \
		if (rcs_r_ != -1 || errno != (e))                              \
			rcs_fail(__FILE__, __LINE__,                           \
				 "%s returned %d, errno %s: expected -1, %s",  \
				 #call, rcs_r_, strerror(errno), strerror(e)); \
	} while (0)

/* Send the peer a word; wait for the peer's next word, which must be
 * this one (within RCS_WAIT_MS; rcs_hear_long: RCS_HANG_S). */
void rcs_tell(const char *word);
void rcs_hear(const char *word);
void rcs_hear_long(const char *word);

/* 127.0.node.1:port */
struct sockaddr *rcs_addr(struct sockaddr_in *sin, unsigned int node,
			  uint16_t port);

/*
 * The next event on ch, within RCS_WAIT_MS (a poll() on the channel's
 * fd first, so a missing event fails rather than hangs). rcs_expect: it
 * must be of this type (and of id, unless id is NULL) with status 0;
 * the event is returned unacked.
 */
struct rdma_cm_event *rcs_next(struct rdma_event_channel *ch);
struct rdma_cm_event *rcs_expect(struct rdma_event_channel *ch,
				 enum rdma_cm_event_type type,
				 struct rdma_cm_id *id);
/* rcs_expect, then ack. */
void rcs_expect_ack(struct rdma_event_channel *ch, enum rdma_cm_event_type type,
		    struct rdma_cm_id *id);

/* Nothing is queued on ch: poll() says not readable, and (with the fd
 * made O_NONBLOCK for the call) rdma_get_cm_event fails with EAGAIN. */
void rcs_expect_empty(struct rdma_event_channel *ch);

/* Set or clear O_NONBLOCK on the channel's fd. */
void rcs_nonblock(struct rdma_event_channel *ch, bool on);

/* A conn_param with a made-up QP number and pd/len as private data. */
struct rdma_conn_param rcs_param(uint32_t qpn, const void *pd, uint8_t len);

/* A new id (context ctx) on ch resolves 127.0.node.1:port; its
 * ADDR_RESOLVED, the next event on ch, is returned unacked. */
struct rdma_cm_event *rcs_addr_resolved(struct rdma_event_channel *ch,
					void *ctx, unsigned int node,
					uint16_t port);

/*
 * The client's usual start: a new id (context ctx) on ch resolves
 * 127.0.node.1:port, address and route, taking ADDR_RESOLVED and
 * ROUTE_RESOLVED (they must be the next events on ch); then
 * rcs_connect() connects with private data pd (len bytes).
 */
struct rdma_cm_id *rcs_resolved_id(struct rdma_event_channel *ch, void *ctx,
				   unsigned int node, uint16_t port);
void rcs_connect(struct rdma_cm_id *id, const void *pd, uint8_t len);

/* rdma_accept() with private data pd (len bytes). */
void rcs_accept(struct rdma_cm_id *id, const void *pd, uint8_t len);

/* The server's usual start: a new id (context ctx) on ch bound to
 * 127.0.2.1:port and listening with backlog. */
struct rdma_cm_id *rcs_listener(struct rdma_event_channel *ch, void *ctx,
				uint16_t port, int backlog);

/*
 * The tail of an established CM-only connection, on the side that
 * disconnects first (rdma_disconnect, DISCONNECTED, TIMEWAIT_EXIT) and
 * on the other (DISCONNECTED, rdma_disconnect, TIMEWAIT_EXIT); id is
 * destroyed at the end.
 */
void rcs_hang_up(struct rdma_event_channel *ch, struct rdma_cm_id *id);
void rcs_hung_up(struct rdma_event_channel *ch, struct rdma_cm_id *id);

/*
 * Nothing for ch but what we make next: it is empty (rcs_expect_empty),
 * and a round trip through both daemons (an id connects to
 * 127.0.node.1:RCS_PORT_NOBODY) yields exactly its own events, the last
 * REJECTED 8. The daemon sends a client's events in order, so anything
 * it had for ch before (an event of a destroyed id, say) would come
 * first. node is the other side's.
 */
void rcs_quiet(struct rdma_event_channel *ch, unsigned int node);

/*
 * Wait until the side's daemon has handed the library n connection
 * requests for a listener of ours (the daemon then holds an id for
 * each, besides the ids it had: its ids counter reads ids + n) and the
 * first is queued on ch, not taken. Any still on their way from the
 * daemon to the queue get there after the caller's next call.
 */
void rcs_wait_requests(struct rdma_event_channel *ch, uint64_t ids,
		       unsigned int n);

/* A global counter of the daemon at sock ("ids", "records"...). */
uint64_t rcs_counter(const char *sock, const char *name);
/* Wait until the counter is value (RCS_WAIT_MS in a side, RCS_HANG_S
 * in the cmocka process); fails otherwise. */
void rcs_wait_counter(const char *sock, const char *name, uint64_t value);
/* The same, until the counter is at least min. */
void rcs_wait_counter_min(const char *sock, const char *name, uint64_t min);

#endif
