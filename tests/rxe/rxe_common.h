/* SPDX-License-Identifier: MIT */
/*
 * What the libcmclient programs of the rxe tests (cm_edge, devremove,
 * neigh_stall) share: the CHECK that counts failures, the daemon's
 * counters, waiting for one event, and the connection parameters that
 * only differ in their QP numbers.
 */
#ifndef CMD_TESTS_RXE_COMMON_H
#define CMD_TESTS_RXE_COMMON_H

#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>

#include "cmclient.h"

/* The failed CHECKs so far: the program's exit status is 1 unless 0. */
extern int rxe_failures;

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			rxe_failures++;                                        \
			printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			printf(__VA_ARGS__);                                   \
			printf("\n");                                          \
		}                                                              \
	} while (0)

/* CLOCK_MONOTONIC in seconds. */
double rxe_now_s(void);

/* A global counter of the daemon by name; -1 if it cannot be read. */
int64_t rxe_counter(struct cmc_channel *ch, const char *name);

/*
 * The next event of id (or of any id when id is NULL) on ch within ms,
 * skipping the informational MRA_RECEIVED; NULL on timeout or error.
 */
struct cmc_event *rxe_next_event(struct cmc_channel *ch, struct cmc_id *id,
				 int ms);

/*
 * The next event (rxe_next_event) must be of this type: it is returned,
 * unacked, and logged; otherwise a failed CHECK naming what, and NULL.
 */
struct cmc_event *rxe_expect(struct cmc_channel *ch, struct cmc_id *id,
			     enum cmc_event_type type, int ms,
			     const char *what);

/* An RC connect with QP qpn, a random PSN and retries 7/7; the rest 0. */
void rxe_conn_param(struct cmc_conn_param *p, uint32_t qpn);

/* Accept with QP qpn, a random PSN, RNR retries 7; the rest 0. */
void rxe_accept_param(struct cmc_accept_param *ap, uint32_t qpn);

/* dst 127.0.0.1:port, src 127.0.0.1: a connection on rxe0 (lo). */
void rxe_loopback_addrs(struct sockaddr_in *dst, struct sockaddr_in *src,
			uint16_t port);

/*
 * The passive side accepts sid's REQ with QP qpn; then the client's
 * REP_RECEIVED on cl (for *cid, or for any id if *cid is NULL: then *cid
 * is set to the id it came for), its RTU and the server's
 * ESTABLISHED for sid. 0 when both events came, else -1 (a failed CHECK
 * says which).
 */
int rxe_accept_establish(struct cmc_channel *sv, struct cmc_id *sid,
			 uint32_t qpn, struct cmc_channel *cl,
			 struct cmc_id **cid, int ms, const char *what);

#endif
