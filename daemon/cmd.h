/* SPDX-License-Identifier: MIT */
/*
 * The running daemon: the engine, the transport and the client server
 * wired into one libev loop (cmd.c), and the client API on top of the
 * engine (api.c). main.c only parses arguments and configuration.
 */
#ifndef CMD_CMD_H
#define CMD_CMD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <ev.h>

#include "authz.h"
#include "cm_engine.h"
#include "hash.h"
#include "path.h"
#include "sa_paths.h"
#include "server.h"
#include "transport.h"

struct cmd_config {
	const char *socket_path;
	int listen_fd; /* inherited (socket activation), or -1 */
	struct xport_config xport;
	struct eng_config eng;
	struct path_defaults path;
	/* Paths from the SA on IB ports (sa_paths.h). */
	struct sa_paths_config sa;
	/* For CONNECT fields the app leaves 0 (cmclient.h): rdma_cm's
	 * CMA_CM_RESPONSE_TIMEOUT and CMA_MAX_CM_RETRIES. */
	uint8_t cm_response_timeout;
	uint8_t max_cm_retries;
	unsigned int max_clients;
	unsigned int max_ids; /* per client */
	unsigned int max_queued; /* messages queued per client */
	const char *pcap_path; /* --pcap: capture CM MADs here, or NULL */
	/* LISTEN policy and per-user limits (authz.h); NULL: none. */
	struct authz *authz;
	/*
	 * ops: --admin-group / admin-group: members (primary or
	 * supplementary) may read every client's ids and the GLOBAL and
	 * PORT counters and run CAPTURE, as root may. Resolved at start.
	 */
	const char *admin_group;
	bool has_admin_gid;
	gid_t admin_gid;
	/*
	 * Handoff (handoff.h): the state file a stop that hands over writes
	 * and a start reads (NULL: none, a stop tears everything down), and
	 * how long a restored session waits for its client (ms).
	 */
	const char *state_path;
	unsigned int resume_ms;
};

struct capture;

/*
 * A path ids were told (by CONNECT's resolution or their events), shared
 * by every id told the same: the connections between two ports have one
 * path, not a copy each (api.c, api_id_set_path).
 */
struct api_path {
	struct cmp_path p;
	unsigned int refs;
	struct hnode hnode; /* in cmd->paths, by its bytes */
};

/* One id as the client API sees it (the engine keeps the protocol). */
struct api_id {
	uint32_t id;
	uint32_t ev_seq; /* last event sequence number sent */
	uint32_t unacked_seq; /* 0: nothing outstanding */
	uint8_t qp_type; /* enum cmp_qp_type */
	bool listener;
	uint8_t sel; /* listeners: enum cmp_sel of their selector */
	struct srv_client *client;
	/* ops: when the handshake began (REQ sent or received), for the
	 * setup latency histogram; 0 when not timing. */
	uint64_t setup_start;
	/* The path the id's owner was told, for QUERY_ID and LIST (read
	 * it with api_id_path); all else an id has negotiated is the
	 * engine's (eng_id_info). A listener's is its selector as the
	 * client named it (path_listen_sel). NULL: none yet (all zero). */
	struct api_path *path;
	/* A CONNECT, SIDR_REQ or RESOLVE_ROUTE waiting for the SA's path
	 * (api.c), or NULL. */
	struct api_wait *wait;
	/* The unacked event was the daemon's own (ROUTE_RESOLVED, or a
	 * CONNECT_ERROR for a path the SA did not give), not the engine's:
	 * its ack is ours. */
	bool local_unacked;
	LIST_ENTRY(api_id) link; /* in its client's list */
	struct hnode hnode; /* in cmd->ids, by id */
};

/* Per client: its ids, so that a client that goes away is cleaned up. */
struct api_client {
	struct srv_client *client;
	unsigned int nids;
	LIST_HEAD(, api_id) ids;
	/* ops: COUNTERS scope CLIENT */
	uint64_t requests; /* after HELLO */
	uint64_t events_sent;
	int8_t admin; /* -1: not looked up yet, else 0 or 1 */
	/* In cmd->clients by the client's serial, kept here: the table's
	 * walk at exit must not need the srv_client. */
	uint64_t serial;
	struct hnode hnode;
};

/*
 * ops: connection setup latency, log2 buckets of microseconds: bucket i
 * counts setups of at most 2^i us (and more than 2^(i-1)); the last one
 * everything slower than 2^(CMD_SETUP_BUCKETS - 2) us (about 33 s).
 */
#define CMD_SETUP_BUCKETS 27

/* ops: per port, as the loop sees MADs (cmd.c); per CM message type the
 * engine counts (eng_port_counters). */
struct cmd_port_counters {
	uint64_t mad_rx;
	uint64_t mad_tx;
	uint64_t mad_tx_errors;
	uint64_t mad_malformed; /* unknown attribute ids included */
};

struct cmd_counters {
	uint64_t mad_rx;
	uint64_t mad_malformed;
	uint64_t mad_reserved_set; /* accepted, reserved bits not zero */
	uint64_t mad_tx;
	uint64_t mad_tx_errors;
	uint64_t mad_tx_deferred; /* held by the transport (neighbour) */
	/* of those, failed: no neighbour (-EHOSTUNREACH), no route
	 * (-ENETUNREACH) */
	uint64_t mad_tx_unreachable;
	uint64_t port_events;
	uint64_t setup_us[CMD_SETUP_BUCKETS];
	uint64_t setup_count;
	uint64_t setup_us_sum;
	uint64_t captures_started; /* --pcap and CAPTURE START */
	/* Handoff (handoff.c): states restored at start, and refused. */
	uint64_t handoffs_restored;
	uint64_t handoffs_refused;
};

struct cmd {
	struct ev_loop *loop;
	struct cmd_config cfg;
	struct eng *eng;
	struct xport *xport;
	struct srv *srv;
	ev_io mad_io;
	ev_io port_io;
	ev_timer timer;
	ev_prepare prepare; /* re-arms 'timer' before the loop sleeps */
	uint64_t timer_deadline; /* what 'timer' is armed for, while active */
	struct htable ids; /* struct api_id by id */
	struct htable paths; /* struct api_path by its bytes */
	struct htable clients; /* struct api_client by client serial */
	struct cmd_counters counters;
	struct capture *cap; /* --pcap or CAPTURE (capture.h), or NULL */
	struct sa_paths *sa; /* the SA client and the path cache */
	bool has_ib, has_roce; /* link layers served, for capture_new */
	/* Per port, by index - xport->first_index; n_ports of them. */
	struct cmd_port_counters *port_cnt;
	unsigned int n_ports;
	/* The engine's retransmitted counts already charged to a port. */
	uint32_t rnd[64];
	unsigned int nrnd;
	/* handoff_save() wrote the state: cmd_fini releases no id. */
	bool handed_over;
};

/*
 * Create the daemon: open the transport, start the engine and the server.
 * Returns 0 or -errno; 'report' (may be NULL) says what happened to each
 * port.
 */
int cmd_init(struct cmd *cmd, struct ev_loop *loop,
	     const struct cmd_config *cfg, struct xport_open_report *report);
void cmd_fini(struct cmd *cmd);
/*
 * A restore that was refused (handoff.c): drop what it built (sessions,
 * ids, records, counters) and start again with an empty engine on the
 * same ports, as if nothing had been handed over.
 */
void cmd_reset(struct cmd *cmd);

/* Monotonic nanoseconds: the engine's clock, read only by the loop. */
uint64_t cmd_now(void);

/* api.c: the id and client tables: 0 or -ENOMEM; fini frees them all. */
int api_init(struct cmd *cmd);
void api_fini(struct cmd *cmd);
/* api.c: the path an id was told, all zero if none. */
const struct cmp_path *api_id_path(const struct api_id *a);
/*
 * api.c: a's path := *p (shared with the ids told the same). Without
 * memory a keeps the one it had (logged).
 */
void api_id_set_path(struct cmd *cmd, struct api_id *a,
		     const struct cmp_path *p);
/* api.c: the server's hooks and the engine's deliver callback. */
void api_request(void *ctx, struct srv_client *c, const struct cmp_msg *req,
		 struct cmp_msg *reply);
void api_client_gone(void *ctx, struct srv_client *c);
void api_deliver(void *ctx, const struct eng_event *ev);
/* api_event.c: an event of the daemon's own making for a, e's header
 * and body filled (no engine event is outstanding: an IDLE id). */
void api_deliver_local(struct cmd *cmd, struct api_id *a,
		       const struct cmp_event *e);
/* The engine's owner_has_room op: the client is below --max-ids. */
bool api_owner_has_room(void *ctx, uint64_t owner);
/* Fail the handshakes of ids on a port that went down. */
void api_port_down(struct cmd *cmd, uint16_t port);
/* A port's device went away: DEVICE_REMOVAL to every id on it. */
void api_device_removed(struct cmd *cmd, uint16_t port);

/* ops: the counters of a port index, or NULL for one not served. */
struct cmd_port_counters *cmd_port_counters(struct cmd *cmd, uint16_t port);
/*
 * ops: start capturing into path (NULL: stop). Returns 0 or -errno (the
 * files could not be created); a running capture is closed first.
 */
int cmd_capture(struct cmd *cmd, const char *path);

#endif
