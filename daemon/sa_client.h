/* SPDX-License-Identifier: MIT */
/*
 * The SA client: PathRecord queries to the subnet administrator
 * (management class 0x03) and their answers, per port. It owns the
 * transactions (TIDs, timeouts, retries, the SA's busy and redirect
 * statuses, ClassPortInfo) and nothing else: no loop, no socket, no
 * clock. Its owner hands it
 *   - a send function (where the MAD goes: the SM's LID on QP1 with the
 *     GSI Q_Key, or where ClassPortInfo redirected to),
 *   - every SA MAD that arrives (sa_client_recv),
 *   - the time (every call takes 'now', CLOCK_MONOTONIC ns) and a tick
 *     at sa_client_next_due(),
 * so that the daemon's libev loop and a poll(2) test program under ibsim's
 * umad2sim drive the same code.
 *
 * Per port: sa_client_port_set() says where the SM is (from the port
 * attributes: SMLID, SMSL) and starts a ClassPortInfo Get, whose
 * RespTimeValue lengthens the timeout and whose RedirectLID, when set,
 * moves later queries there (IBTA 13.5.3.3). A new SM LID (SM change)
 * forgets the redirection and ClassPortInfo and sends the port's queries
 * in flight again, to the new SM, with a fresh budget;
 * sa_client_port_down() fails them.
 *
 * A query (sa_client_path) is one SubnAdmGetTable(PathRecord) built by
 * sa_path_query_encode(); its answer goes to the callback exactly once:
 * the usable records (sa_path_check()), or a negative errno:
 *   -ETIMEDOUT  no answer after the retries;
 *   -EBUSY      the SA stayed busy after the busy retries;
 *   -ENOENT     the SA has no such path (ERR_NO_RECORDS, or no usable
 *               record in the answer);
 *   -EPROTO     another SA error status (named in 'why');
 *   -ENETDOWN   the port went down or its SM changed;
 *   -ECANCELED  never: a cancelled query is not called back.
 * Each attempt has a TID of its own; an answer to an earlier attempt, a
 * duplicate, or one that matches nothing is counted and dropped.
 */
#ifndef CMD_SA_CLIENT_H
#define CMD_SA_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "sa_mad.h"
#include "sa_path.h"

/* IBTA 13.5 (the GSI): QP1's well-known Q_Key. */
#define SA_QP1_QKEY 0x80010000u

/* Where an SA MAD goes. */
struct sa_dest {
	uint16_t lid;
	uint8_t sl;
	uint32_t qpn; /* 1, or ClassPortInfo's RedirectQP */
	uint32_t qkey;
	uint16_t pkey_index;
};

struct sa_client_ops {
	/*
	 * Send one 256-byte SA MAD from port 'port' to 'to'. timeout_ms is
	 * how long this attempt waits for its answer (the umad backend
	 * passes it to the kernel, which must hold a request's send to match
	 * its response). 0 or -errno; a failed send counts as an attempt.
	 */
	int (*send)(void *ctx, uint16_t port, const struct sa_dest *to,
		    const uint8_t mad[SA_MAD_SIZE], unsigned int timeout_ms);
};

struct sa_client_config {
	unsigned int timeout_ms; /* an attempt's least wait; 0: 500 */
	unsigned int retries; /* after the first attempt; 0: 3 */
	unsigned int busy_retries; /* BUSY answers tolerated; 0: 8 */
	unsigned int busy_backoff_ms; /* first wait after BUSY; 0: 20 */
	unsigned int decode_flags; /* SA_DECODE_*: NO_RMPP under umad2sim */
	unsigned int max_queries; /* in flight, all ports; 0: 1024 */
};

struct sa_client_counters {
	uint64_t queries; /* path queries started */
	uint64_t answered; /* called back with records */
	uint64_t failed; /* called back with an error */
	uint64_t sent; /* MADs sent, retries included */
	uint64_t send_errors;
	uint64_t timeouts; /* attempts that got no answer */
	uint64_t busy; /* BUSY answers */
	uint64_t redirects; /* redirections followed */
	uint64_t sa_errors; /* answers with an SA error status */
	uint64_t no_records; /* of those, ERR_NO_RECORDS */
	uint64_t rx; /* SA MADs handed to sa_client_recv */
	uint64_t rx_malformed; /* refused by sa_mad_decode */
	uint64_t rx_unmatched; /* no query waits for that TID (late, dup) */
	uint64_t cpi_queries; /* ClassPortInfo Gets sent */
	uint64_t in_flight; /* a gauge */
};

/*
 * The answer: n usable records (n >= 1, status 0), or status < 0, n 0,
 * and a sentence in why. Records and why live only during the call.
 */
typedef void (*sa_path_fn)(void *ctx, int status,
			   const struct sa_path_rec *recs, unsigned int n,
			   const char *why);

struct sa_client;

/* NULL on out of memory. */
struct sa_client *sa_client_new(const struct sa_client_config *cfg,
				const struct sa_client_ops *ops, void *ops_ctx);
/* Frees everything; queries in flight are not called back. */
void sa_client_free(struct sa_client *sa);

/*
 * Port 'port' (any uint16_t the owner uses) has its SM at sm_lid/sm_sl and
 * sends with P_Key index pkey_index. A first call, or a new sm_lid, forgets
 * the redirection and ClassPortInfo, resends the port's queries in flight
 * to the new SM and starts a ClassPortInfo Get. sm_lid 0: no SM (queries
 * in flight fail with -ENETDOWN, new ones at once with ENETUNREACH).
 */
int sa_client_port_set(struct sa_client *sa, uint16_t port, uint16_t sm_lid,
		       uint8_t sm_sl, uint16_t pkey_index, uint64_t now);
/* The port went down or away: its queries fail with -ENETDOWN. */
void sa_client_port_down(struct sa_client *sa, uint16_t port, uint64_t now);

/*
 * Ask for the paths w describes from port 'port' (w->numb_path records
 * at most: 2 asks for an alternate, which the SA may not have).
 * Returns a query handle (> 0), or 0 with errno set (ENETUNREACH: no SM
 * known for the port; ENOBUFS: max_queries in flight; ENOMEM).
 */
uint64_t sa_client_path(struct sa_client *sa, uint16_t port,
			const struct sa_path_want *w, sa_path_fn fn, void *ctx,
			uint64_t now);
/* Forget a query: its callback will not run. Unknown handles: no-op. */
void sa_client_cancel(struct sa_client *sa, uint64_t handle);

/*
 * One SA MAD that arrived on 'port' (len: 256, or the kernel's RMPP
 * reassembly). Callbacks may run from here; they may call any function of
 * this API, sa_client_free excepted.
 */
void sa_client_recv(struct sa_client *sa, uint16_t port, const uint8_t *mad,
		    size_t len, uint64_t now);

/* When sa_client_tick is next due (ns, CLOCK_MONOTONIC), 0: nothing. */
uint64_t sa_client_next_due(struct sa_client *sa);
/* Resend or fail what timed out. Callbacks may run from here. */
void sa_client_tick(struct sa_client *sa, uint64_t now);

const struct sa_client_counters *sa_client_counters(const struct sa_client *sa);

/* What the port's ClassPortInfo said (0: not known yet). */
struct sa_port_view {
	uint16_t sm_lid;
	uint8_t resp_time_value; /* 0xff: no ClassPortInfo yet */
	struct sa_dest dest; /* where queries go now */
	unsigned int in_flight;
};
int sa_client_port_view(const struct sa_client *sa, uint16_t port,
			struct sa_port_view *out);

#endif
