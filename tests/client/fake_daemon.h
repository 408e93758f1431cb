/* SPDX-License-Identifier: MIT */
/*
 * A fake cmd daemon for libcmclient's tests: a thread at the far end of a
 * socketpair that speaks proto/cmp.h. By default it answers every request
 * as a well-behaved daemon would (ids, per-id event serialization with
 * ACK_EVENT, destroy dropping queued events); a test hook may take over any
 * request to misbehave (die, stay silent, send garbage, slip events in
 * before the reply). It speaks the pipelining part of the protocol too:
 * CMP_HDR_NOREPLY (a reply only on failure), CONNECT with id CMP_ID_NONE
 * creating its id, plain replies naming their id.
 *
 * Started with fake_start_at() it listens on a path instead, gives
 * SESSION a token, and restarts as cmd hands over to its successor
 * (cmp.h, "Restarts"), in steps a test drives: fake_shut() shuts the
 * client socket's reading side and answers what it had read, writing
 * only so much; fake_close() closes the socket and stops listening (the
 * gap); fake_up() listens again, and the next connection may RESUME the
 * session and gets what was kept. Its ids and their events are the
 * session's and carry over.
 */
#ifndef CMD_TESTS_FAKE_DAEMON_H
#define CMD_TESTS_FAKE_DAEMON_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "cmp.h"

#define FAKE_MAX_REQS 256
#define FAKE_MAX_IDS 64
#define FAKE_MAX_PENDING 8
#define FAKE_MAX_KEPT 64

struct fake;

/* Return true when the hook has dealt with the request (replied or not). */
typedef bool (*fake_hook_fn)(struct fake *f, const struct cmp_msg *req);

struct fake_id {
	uint32_t id;
	uint32_t next_seq;
	uint32_t outstanding; /* seq of the unacked event, or 0 */
	unsigned int npending;
	struct cmp_msg pending[FAKE_MAX_PENDING];
};

struct fake {
	int fd; /* the daemon's end */
	int client_fd; /* hand to cmc_open_fd() */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* signalled on every request and on pause */
	bool stop;
	bool dead; /* the daemon's end was closed */
	bool pause; /* fake_pause(): stop reading */
	bool paused; /* the thread saw it and reads no more */

	/* Behaviour. */
	uint16_t min_version, max_version;
	int32_t status[CMP_TYPE_REQUEST_MAX + 1];
	fake_hook_fn hook;
	void *hook_arg;
	struct cmp_id_info query_info; /* QUERY_ID answers this */

	/* What happened. */
	uint32_t next_id;
	struct fake_id ids[FAKE_MAX_IDS];
	unsigned int nids;
	struct cmp_msg *reqs; /* FAKE_MAX_REQS of them */
	unsigned int nreqs;
	unsigned int total_reqs; /* also those beyond FAKE_MAX_REQS */
	unsigned int bad_reqs; /* requests that did not decode */
	unsigned int acks;

	/* fake_start_at(): listening on path (lfd -1 while down). */
	char path[108];
	int lfd;
	bool hold_accept; /* leave connections in the listener's backlog */
	uint32_t resume_ms; /* what SESSION answers (token: token) */
	uint8_t token[CMP_TOKEN_SIZE];
	int32_t resume_status; /* RESUME's answer; 0: the token decides */
	/* The restart: after fake_shut(), nwrite more messages go out and
	 * the rest is kept, as is everything once closed, until a RESUME. */
	bool shutting, keeping;
	unsigned int nwrite, nwritten;
	struct cmp_msg *kept; /* FAKE_MAX_KEPT of them */
	unsigned int nkept;
	unsigned int accepted; /* connections */
	unsigned int resumed; /* RESUMEs answered 0 */
};

/* Create the socketpair and start the thread. */
struct fake *fake_start(void);
/* Listen on path (removed first, and at fake_stop()): cmc_open(path). */
struct fake *fake_start_at(const char *path);
/* The restart's steps (see the top). fake_shut() returns once every
 * request the socket held is answered or kept; fake_up() once listening. */
void fake_shut(struct fake *f, unsigned int nwrite);
void fake_close(struct fake *f);
void fake_up(struct fake *f);
/* Stop the thread and free everything (the client end is the test's). */
void fake_stop(struct fake *f);

/* Send a reply (seq and type from req) with status; body from *body if
 * not NULL (its header is overwritten). A plain reply (body NULL) names
 * the request's id. A request sent with NOREPLY gets nothing on success. */
int fake_reply(struct fake *f, const struct cmp_msg *req, int32_t status,
	       struct cmp_msg *body);
/* Send raw bytes as one datagram. */
int fake_send_raw(struct fake *f, const void *buf, size_t len);
/* Send an encoded message as it is (no serialization). */
int fake_send_msg(struct fake *f, const struct cmp_msg *m);
/* Close the daemon's end: the client sees the daemon die. */
void fake_die(struct fake *f);

/*
 * Queue an event for its id, honouring rule 2: sent now when the id has no
 * unacked event, else after the ACK_EVENT of the previous one. The seq is
 * assigned here. ev was built with fake_event().
 */
int fake_push(struct fake *f, struct cmp_msg *ev);
/* An EVENT message for id with type, status and context; body zero. */
void fake_event(struct cmp_msg *m, uint32_t id, enum cmp_event_type type,
		uint64_t context);

/*
 * Stop reading requests (returns once the thread has stopped), and
 * start again. While paused, what the client sends stays in the socket.
 */
void fake_pause(struct fake *f);
void fake_resume(struct fake *f);
/* Wait until n requests in all were read; false after timeout_ms. */
bool fake_wait_reqs(struct fake *f, unsigned int n, int timeout_ms);

/* Count recorded requests of a type; the last one of a type, or NULL. */
unsigned int fake_count(struct fake *f, enum cmp_type type);
const struct cmp_msg *fake_last(struct fake *f, enum cmp_type type);

#endif
