/* SPDX-License-Identifier: MIT */
/*
 * The client server: the daemon's Unix SOCK_SEQPACKET socket, one struct
 * srv_client per connected application, framing and HELLO. It knows nothing
 * of the CM: every other decoded request goes to the hooks, which answer it
 * and send events through srv_send().
 *
 * Ordering (proto/cmp.h, "Conversation"): a request's reply is sent before
 * any event the request itself caused. The server guarantees it: while a
 * request of client C is being handled, messages srv_send() gets for C wait
 * and follow the reply. A request sent with CMP_HDR_NOREPLY that succeeds
 * gets no reply at all; the server drops it, so the hooks answer every
 * request alike.
 *
 * Back-pressure: a client's requests are not read while many messages
 * wait for it to read them, so pipelining clients are slowed down, never
 * dropped; see server.c.
 */
#ifndef CMD_SERVER_H
#define CMD_SERVER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <ev.h>

#include "cmp.h"

struct srv;
struct srv_client;

struct srv_config {
	const char *path; /* socket path; unused when listen_fd >= 0 */
	int listen_fd; /* an inherited listening socket, or -1 */
	unsigned int max_clients;
	unsigned int max_ids; /* per client, reported in HELLO_REPLY */
	/* Events queued for one slow client (its replies are bounded by
	 * back-pressure instead: server.c). */
	unsigned int max_queued;
	/* How long a restored session waits for RESUME (SESSION_REPLY's
	 * resume_ms); 0: this daemon hands nothing over. */
	unsigned int resume_ms;
};

struct srv_hooks {
	/*
	 * Answer one decoded request of a client that said HELLO: fill
	 * *reply, whose header the server has initialised with the reply
	 * type and seq (status 0), and a plain reply's id with the id the
	 * request named (the hook names the new id of a CONNECT that
	 * creates one).
	 */
	void (*request)(void *ctx, struct srv_client *c,
			const struct cmp_msg *req, struct cmp_msg *reply);
	/* The client is going away: release everything it owns. */
	void (*gone)(void *ctx, struct srv_client *c);
};

struct srv_counters {
	uint64_t clients_accepted;
	uint64_t clients_refused; /* over max_clients */
	uint64_t clients_dropped; /* did not read their socket */
	uint64_t requests;
	/* NOREPLY requests that succeeded, so got no reply. */
	uint64_t replies_omitted;
	/* Times a client's requests were left unread because SRV_OUT_HIGH
	 * messages waited for it to read (back-pressure, server.c). */
	uint64_t reads_paused;
	uint64_t malformed; /* refused by cmp_decode, or not a request */
	uint64_t events_sent;
	uint64_t send_errors;
	uint64_t spare_bytes; /* small datagram buffers kept for reuse */
	/* Handoff: restored sessions their clients resumed, and those that
	 * ended because none came back in time. */
	uint64_t sessions_resumed;
	uint64_t sessions_expired;
};

/* Returns NULL with errno set; logs why. */
struct srv *srv_new(struct ev_loop *loop, const struct srv_config *cfg,
		    const struct srv_hooks *hooks, void *ctx);
/* Disconnects every client (calling hooks->gone) and closes the socket. */
void srv_free(struct srv *srv);

/*
 * Queue one message (a reply is sent by the server itself; this is for
 * events) for a client. Returns 0, or -errno when it could not be encoded;
 * a client whose queue overflows is disconnected (after this returns).
 */
int srv_send(struct srv_client *c, const struct cmp_msg *msg);

/* Who the client is (SO_PEERCRED) and what it called itself. */
pid_t srv_client_pid(const struct srv_client *c);
uid_t srv_client_uid(const struct srv_client *c);
gid_t srv_client_gid(const struct srv_client *c);
const char *srv_client_name(const struct srv_client *c);
/* Its process name (/proc/PID/comm when it connected), or "". */
const char *srv_client_comm(const struct srv_client *c);
/* A number that names the client for as long as the daemon runs. */
uint64_t srv_client_serial(const struct srv_client *c);

unsigned int srv_client_count(const struct srv *srv);
const struct srv_counters *srv_counters(const struct srv *srv);

/*
 * Handing over to a successor (proto/cmp.h, "Restarts"). drain: stop
 * accepting, shut the reading side of every client socket, read and
 * answer every request already sent, and write what the sockets take,
 * waiting at most max_wait_s for slow readers. save: the SERVER record and
 * per client its CLIENT record, client_cb's records (the API's), and what
 * is still queued for it (OUT). close: free everything without releasing
 * any id (no hooks->gone): the successor has them.
 */
struct state_w;
struct state_r;
void srv_handoff_drain(struct srv *srv, double max_wait_s);
void srv_state_save(struct srv *srv, struct state_w *w,
		    void (*save_cb)(void *ctx, struct srv_client *c,
				    struct state_w *w),
		    void *ctx);
void srv_handoff_close(struct srv *srv);

/*
 * Restoring a predecessor's sessions, record by record (0 or -EINVAL with
 * *why; a client, or NULL with *why). Restored clients are detached: no
 * socket, their messages queue, and unless RESUME claims them within
 * resume_ms of srv_restore_done they end as clients that went away. abort:
 * free the restored clients without touching the engine (it is rebuilt).
 */
int srv_restore_server(struct srv *srv, struct state_r *r, const char **why);
struct srv_client *srv_restore_client(struct srv *srv, struct state_r *r,
				      const char **why);
int srv_restore_out(struct srv_client *c, struct state_r *r, const char **why);
struct state_counters_rec;
void srv_restore_counters(struct srv *srv, const struct state_counters_rec *c);
/* Starts the sessions' clocks; returns how many wait. */
unsigned int srv_restore_done(struct srv *srv);
void srv_restore_abort(struct srv *srv);
bool srv_client_detached(const struct srv_client *c);
/* The listening socket, which srv_free then leaves open (and its path in
 * place) for a program exec'd to inherit. */
int srv_listen_fd(struct srv *srv);
/* Restored sessions not resumed yet. */
unsigned int srv_sessions_waiting(const struct srv *srv);

#endif
