// SPDX-License-Identifier: MIT
/*
 * The loop: MADs from the transport into the engine, MADs from the engine
 * out through the transport, the engine's one deadline as one ev_timer,
 * port events, and the client server. The only place that reads the clock.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "capture.h"
#include "cmd.h"
#include "handoff.h"
#include "log.h"
#include "util.h"

/* MADs taken from the transport per wake-up: one read batch. */
#define CMD_RX_BATCH 64

uint64_t cmd_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Operations: a REJ is the one CM message that says something went wrong,
 * so each one sent or received is logged at notice with its reason (IBTA
 * Table 109), whatever the engine's state change logs at debug. A REJ we
 * send with reason 1 (timeout) means our retries ran out, or an app gave
 * up on a REQ it had sent; reason 10 is a stale connection.
 */
static void cmd_log_rej(struct cmd *cmd, const char *dir, uint16_t port,
			const struct eng_addr *peer, const struct cm_msg *msg)
{
	const struct xport_port *xp = xport_port(cmd->xport, port);
	/* Our comm id is the local one of a REJ we send, the remote one of
	 * a REJ we receive. */
	bool sent = !strcmp(dir, "sent to");
	const struct log_ctx ctx = {
		.has_comm = true,
		.local_comm_id =
			sent ? msg->rej.local_comm_id : msg->rej.remote_comm_id,
		.remote_comm_id =
			sent ? msg->rej.remote_comm_id : msg->rej.local_comm_id,
		.device = xp ? xp->dev : NULL,
		.port = xp ? xp->port_num : 0,
	};
	char gid[INET6_ADDRSTRLEN], where[64];

	if (peer->grh && inet_ntop(AF_INET6, peer->gid, gid, sizeof(gid)))
		snprintf(where, sizeof(where), "GID %s", gid);
	else
		snprintf(where, sizeof(where), "LID %u", peer->lid);
	log_ctx_at(LOG_LVL_NOTICE, &ctx,
		   "port %u: REJ %s %s: comm %08x/%08x, reason %u (%s), "
		   "rejects %s",
		   port, dir, where, msg->rej.local_comm_id,
		   msg->rej.remote_comm_id, msg->rej.reason,
		   cm_rej_reason_str(msg->rej.reason),
		   msg->rej.message_rejected == CM_MSG_REF_REQ	 ? "REQ" :
		   msg->rej.message_rejected == CM_MSG_REF_REP	 ? "REP" :
		   msg->rej.message_rejected == CM_MSG_REF_OTHER ? "other" :
								   "?");
}

struct cmd_port_counters *cmd_port_counters(struct cmd *cmd, uint16_t port)
{
	unsigned int i;

	if (!cmd->xport || !cmd->port_cnt || port < cmd->xport->first_index)
		return NULL;
	i = port - cmd->xport->first_index;
	return i < cmd->n_ports ? &cmd->port_cnt[i] : NULL;
}

/* A MAD left (rc 0) or could not: counted, captured and logged. */
static void count_tx(struct cmd *cmd, uint16_t port, const struct eng_addr *to,
		     const struct cm_msg *msg, const uint8_t *mad, int rc)
{
	struct cmd_port_counters *pc = cmd_port_counters(cmd, port);

	if (rc) {
		cmd->counters.mad_tx_errors++;
		if (pc)
			pc->mad_tx_errors++;
		log_debug("send %s on port %u: %s", cm_msg_type_name(msg->type),
			  port, strerror(-rc));
		return;
	}
	cmd->counters.mad_tx++;
	if (pc)
		pc->mad_tx++;
	/* ops: capture and log what went out (see capture.h) */
	capture_mad(cmd->cap, CAPTURE_TX, xport_port(cmd->xport, port), to, mad,
		    CM_MAD_SIZE);
	if (msg->type == CM_MSG_REJ)
		cmd_log_rej(cmd, "sent to", port, to, msg);
}

static int eng_send_cb(void *ctx, const struct eng_addr *to,
		       const struct cm_msg *msg)
{
	struct cmd *cmd = ctx;
	uint8_t mad[CM_MAD_SIZE];
	int rc = cm_mad_encode(msg, mad);

	if (!rc)
		rc = xport_send(cmd->xport, to->port, to, mad);
	if (rc == XPORT_SEND_DEFERRED) {
		/* Counted, captured and logged when it leaves (sent_cb). */
		cmd->counters.mad_tx_deferred++;
		return ENG_SEND_DEFERRED;
	}
	count_tx(cmd, to->port, to, msg, mad, rc);
	return rc;
}

/*
 * A deferred MAD left or failed (transport.h, xport_sent_fn): count it,
 * and tell the engine, which restarts the record's retransmission from now
 * or fails the record (eng_send_done). proto/ reads the MAD back.
 */
static void xport_sent_cb(void *ctx, uint16_t port, const struct eng_addr *to,
			  const uint8_t mad[CM_MAD_SIZE], int err)
{
	struct cmd *cmd = ctx;
	struct cm_msg msg;
	struct cm_fault f;

	if (cm_mad_decode(mad, CM_MAD_SIZE, 0, &msg, &f)) {
		/* We encoded it: cannot happen; counted as a failed send. */
		cmd->counters.mad_tx_errors++;
		return;
	}
	if (xport_err_unreachable(err))
		cmd->counters.mad_tx_unreachable++;
	count_tx(cmd, port, to, &msg, mad, err);
	eng_send_done(cmd->eng, port, &msg, err, cmd_now());
}

/*
 * Comm ids must be unpredictable (a guessable id lets an off-path peer
 * forge a REJ or DREQ): draw them from the kernel's CSPRNG, a batch at a
 * time.
 */
static uint32_t eng_random_cb(void *ctx)
{
	struct cmd *cmd = ctx;

	if (!cmd->nrnd) {
		ssize_t n = getrandom(cmd->rnd, sizeof(cmd->rnd), 0);

		if (n != (ssize_t)sizeof(cmd->rnd)) {
			/* getrandom of 256 bytes does not fail once the
			 * pool is up; never hand out a fixed id if it did. */
			for (unsigned int i = 0; i < 64; i++)
				cmd->rnd[i] ^=
					(uint32_t)cmd_now() * 2654435761u;
		}
		cmd->nrnd = 64;
	}
	return cmd->rnd[--cmd->nrnd];
}

static void mad_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct cmd *cmd = container_of(w, struct cmd, mad_io);
	static struct xport_rx rx[CMD_RX_BATCH];
	uint64_t now = cmd_now();
	int n = xport_recv(cmd->xport, rx, CMD_RX_BATCH);

	if (n < 0) {
		log_err("transport: %s", strerror(-n));
		if (n == -ENOTCONN)
			ev_io_stop(loop, w);
		return;
	}
	for (int i = 0; i < n; i++) {
		struct cmd_port_counters *pc =
			cmd_port_counters(cmd, rx[i].port);
		struct cm_msg msg;
		struct cm_fault f;

		if (rx[i].mad[1] == SA_MGMT_CLASS) {
			/* The SA's answers: the SA client's (sa_paths.h),
			 * which counts them (sa_rx). */
			sa_paths_recv(cmd->sa, rx[i].port, rx[i].mad,
				      rx[i].len);
			continue;
		}
		cmd->counters.mad_rx++;
		if (pc)
			pc->mad_rx++;
		/* ops: every MAD that arrived, malformed ones too */
		capture_mad(cmd->cap, CAPTURE_RX,
			    xport_port(cmd->xport, rx[i].port), &rx[i].from,
			    rx[i].mad, CM_MAD_SIZE);
		if (cm_mad_decode(rx[i].mad, CM_MAD_SIZE, 0, &msg, &f)) {
			int type = f.msg_type;

			cmd->counters.mad_malformed++;
			if (pc)
				pc->mad_malformed++;
			if (type >= 0)
				eng_count_malformed(cmd->eng, rx[i].port,
						    (enum cm_msg_type)type);
			log_debug("port %u: dropped malformed MAD: %s%s%s",
				  rx[i].port, cm_fault_str(f.code),
				  f.field ? " in " : "",
				  f.field ? f.field : "");
			continue;
		}
		if (f.code == CM_FAULT_RESERVED)
			cmd->counters.mad_reserved_set++;
		if (msg.type == CM_MSG_REJ)
			cmd_log_rej(cmd, "from", rx[i].port, &rx[i].from, &msg);
		/* The transports set from.port to the port it arrived on;
		 * the engine charges what it makes of the MAD to it. */
		eng_recv(cmd->eng, &rx[i].from, &msg, now);
	}
}

static void port_event_cb(void *ctx, const struct xport_event *ev)
{
	struct cmd *cmd = ctx;
	const struct xport_port *p = ev->port;

	const struct log_ctx lc = { .device = p ? p->dev : NULL,
				    .port = p ? p->port_num : 0 };

	cmd->counters.port_events++;
	log_ctx_msg(ev->type == XPORT_EV_PORT_DOWN ||
				    ev->type == XPORT_EV_DEVICE_REMOVED ?
			    LOG_LVL_NOTICE :
			    LOG_LVL_INFO,
		    &lc, "%s port %u: %s", p ? p->dev : "?",
		    p ? p->port_num : 0, xport_event_name(ev->type));
	sa_paths_port_event(cmd->sa, ev);
	switch (ev->type) {
	case XPORT_EV_PORT_DOWN:
		api_port_down(cmd, ev->index);
		break;
	case XPORT_EV_DEVICE_REMOVED:
		api_device_removed(cmd, ev->index);
		break;
	case XPORT_EV_PORT_ACTIVE:
	case XPORT_EV_LID_CHANGE:
	case XPORT_EV_GID_CHANGE:
	case XPORT_EV_PKEY_CHANGE:
	case XPORT_EV_SM_CHANGE:
		/* Attributes are refreshed in the transport; the SA's
		 * cached paths of the port were flushed above. */
		break;
	}
}

/*
 * ops: the engine's failures that no REJ shows (our DREQ or LAP
 * unanswered) and the timeouts of our own handshakes, logged at notice
 * as they reach their owner; then the client API as usual.
 */
static void eng_deliver_cb(void *ctx, const struct eng_event *ev)
{
	switch (ev->type) {
	case ENG_EV_REQ_ERROR:
	case ENG_EV_REP_ERROR:
	case ENG_EV_DREQ_ERROR:
	case ENG_EV_LAP_ERROR:
	case ENG_EV_SIDR_REQ_ERROR:
	case ENG_EV_PORT_ERROR:
	case ENG_EV_DEVICE_REMOVAL:
		/*
		 * An unreachable destination already had its one notice line
		 * (neigh.c, per destination, however many ids it failed).
		 */
		log_msg(ev->status == -EHOSTUNREACH ? LOG_LVL_INFO :
						      LOG_LVL_NOTICE,
			"id %u: %s: %s%s", ev->id, eng_event_name(ev->type),
			strerror(-ev->status),
			ev->status == -ETIMEDOUT ? " (retries exhausted)" :
			ev->status == -ESTALE	 ? " (stale connection)" :
						   "");
		break;
	case ENG_EV_REQ_RECEIVED:
	case ENG_EV_REP_RECEIVED:
	case ENG_EV_RTU_RECEIVED:
	case ENG_EV_REJ_RECEIVED:
	case ENG_EV_DREQ_RECEIVED:
	case ENG_EV_DREP_RECEIVED:
	case ENG_EV_TIMEWAIT_EXIT:
	case ENG_EV_LAP_RECEIVED:
	case ENG_EV_APR_RECEIVED:
	case ENG_EV_SIDR_REQ_RECEIVED:
	case ENG_EV_SIDR_REP_RECEIVED:
	case ENG_EV_MRA_RECEIVED:
	case ENG_EV__COUNT:
		break;
	}
	api_deliver(ctx, ev);
}

static void port_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct cmd *cmd = container_of(w, struct cmd, port_io);

	xport_process_events(cmd->xport);
}

static void timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct cmd *cmd = container_of(w, struct cmd, timer);

	eng_run_timers(cmd->eng, cmd_now());
}

/*
 * Before the loop sleeps, point the one timer at the engine's next
 * deadline. Doing it here means no entry point into the engine can forget
 * to re-arm it.
 */
static void prepare_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct cmd *cmd = container_of(w, struct cmd, prepare);
	uint64_t deadline = eng_next_deadline(cmd->eng);
	uint64_t now;

	sa_paths_arm(cmd->sa);
	/* Most iterations leave the earliest deadline where it was: no
	 * clock read and no timer heap work then. */
	if (ev_is_active(&cmd->timer) && deadline == cmd->timer_deadline)
		return;
	ev_timer_stop(loop, &cmd->timer);
	if (deadline == ENG_NO_DEADLINE)
		return;
	now = cmd_now();
	ev_timer_set(&cmd->timer,
		     deadline > now ? (double)(deadline - now) / 1e9 : 0., 0.);
	ev_timer_start(loop, &cmd->timer);
	cmd->timer_deadline = deadline;
}

static const struct eng_ops cmd_eng_ops = {
	.send = eng_send_cb,
	.deliver = eng_deliver_cb,
	.random = eng_random_cb,
	.owner_has_room = api_owner_has_room,
};

/* The transport's ports, to the engine. */
static void declare_ports(struct cmd *cmd)
{
	for (unsigned int i = 0; i < xport_port_count(cmd->xport); i++) {
		const struct xport_port *p = xport_port(
			cmd->xport, (uint16_t)(cmd->xport->first_index + i));

		eng_port_set(cmd->eng, p->index, p->node_guid,
			     p->link == XPORT_LINK_ROCE);
	}
}

void cmd_reset(struct cmd *cmd)
{
	struct eng *eng = eng_new(&cmd_eng_ops, cmd, &cmd->cfg.eng);

	srv_restore_abort(cmd->srv);
	api_fini(cmd);
	if (api_init(cmd) || !eng) {
		/* Nothing works without these; say so and stop. */
		log_err("out of memory after a refused state");
		abort();
	}
	eng_free(cmd->eng);
	cmd->eng = eng;
	declare_ports(cmd);
	memset(&cmd->counters, 0, sizeof(cmd->counters));
	memset(cmd->port_cnt, 0, cmd->n_ports * sizeof(*cmd->port_cnt));
}

int cmd_init(struct cmd *cmd, struct ev_loop *loop,
	     const struct cmd_config *cfg, struct xport_open_report *report)
{
	const struct srv_hooks hooks = {
		.request = api_request,
		.gone = api_client_gone,
	};
	struct srv_config scfg = {
		.path = cfg->socket_path,
		.listen_fd = cfg->listen_fd,
		.max_clients = cfg->max_clients,
		.max_ids = cfg->max_ids,
		.max_queued = cfg->max_queued,
		.resume_ms = cfg->state_path ? cfg->resume_ms : 0,
	};
	struct xport_config xcfg;
	bool has_ib = false, has_roce = false;
	int rc;

	memset(cmd, 0, sizeof(*cmd));
	cmd->loop = loop;
	cmd->cfg = *cfg;
	rc = api_init(cmd);
	if (rc)
		return rc;
	cmd->eng = eng_new(&cmd_eng_ops, cmd, &cfg->eng);
	if (!cmd->eng) {
		api_fini(cmd);
		return -ENOMEM;
	}
	xcfg = cfg->xport;
	xcfg.loop = loop;
	rc = xport_open(&xcfg, port_event_cb, cmd, report, &cmd->xport);
	if (rc)
		goto fail;
	xport_set_sent_cb(cmd->xport, xport_sent_cb, cmd);
	declare_ports(cmd);
	for (unsigned int i = 0; i < xport_port_count(cmd->xport); i++) {
		const struct xport_port *p = xport_port(
			cmd->xport, (uint16_t)(cmd->xport->first_index + i));

		has_ib |= p->link == XPORT_LINK_IB;
		has_roce |= p->link == XPORT_LINK_ROCE;
	}
	cmd->has_ib = has_ib;
	cmd->has_roce = has_roce;
	cmd->n_ports = xport_port_count(cmd->xport);
	cmd->port_cnt =
		calloc(cmd->n_ports ? cmd->n_ports : 1, sizeof(*cmd->port_cnt));
	if (!cmd->port_cnt) {
		rc = -ENOMEM;
		goto fail;
	}
	/* ops: capture failures are logged and counted, never fatal */
	if (cfg->pcap_path) {
		cmd->cap = capture_new(loop, cfg->pcap_path, has_ib, has_roce);
		if (!cmd->cap)
			log_err("capture: %s: out of memory", cfg->pcap_path);
		else
			cmd->counters.captures_started++;
	}
	cmd->sa = sa_paths_new(cmd, &cfg->sa);
	if (!cmd->sa) {
		rc = -ENOMEM;
		goto fail;
	}
	cmd->srv = srv_new(loop, &scfg, &hooks, cmd);
	if (!cmd->srv) {
		rc = -errno;
		goto fail;
	}
	ev_io_init(&cmd->mad_io, mad_cb, xport_fd(cmd->xport), EV_READ);
	ev_io_start(loop, &cmd->mad_io);
	if (xport_event_fd(cmd->xport) >= 0) {
		ev_io_init(&cmd->port_io, port_io_cb,
			   xport_event_fd(cmd->xport), EV_READ);
		ev_io_start(loop, &cmd->port_io);
	}
	ev_init(&cmd->timer, timer_cb);
	ev_prepare_init(&cmd->prepare, prepare_cb);
	ev_prepare_start(loop, &cmd->prepare);
	/* What a predecessor handed over, before anybody is served (the
	 * loop has not run: no client is accepted yet). */
	if (cfg->state_path) {
		struct handoff_stats st;

		handoff_restore(cmd, cfg->state_path, &st);
	}
	return 0;
fail:
	sa_paths_free(cmd->sa);
	cmd->sa = NULL;
	free(cmd->port_cnt);
	cmd->port_cnt = NULL;
	xport_close(cmd->xport);
	eng_free(cmd->eng);
	cmd->xport = NULL;
	cmd->eng = NULL;
	api_fini(cmd);
	return rc;
}

void cmd_fini(struct cmd *cmd)
{
	/* Clients first: their ids' protocol tails still go out -- unless
	 * handed over, when the successor has them and nothing goes out. */
	if (cmd->handed_over)
		srv_handoff_close(cmd->srv);
	else
		srv_free(cmd->srv);
	ev_prepare_stop(cmd->loop, &cmd->prepare);
	ev_timer_stop(cmd->loop, &cmd->timer);
	ev_io_stop(cmd->loop, &cmd->mad_io);
	ev_io_stop(cmd->loop, &cmd->port_io);
	api_fini(cmd);
	sa_paths_free(cmd->sa);
	cmd->sa = NULL;
	eng_free(cmd->eng);
	capture_free(cmd->cap); /* after the tails above went out */
	cmd->cap = NULL;
	xport_close(cmd->xport);
	free(cmd->port_cnt);
	cmd->port_cnt = NULL;
}

/*
 * ops: CAPTURE at run time. The loop is the only thread and capture_mad()
 * reads cmd->cap afresh for every MAD, so swapping it here is safe; the
 * old capture is flushed and closed before the new file is created, so
 * both may name the same file.
 */
int cmd_capture(struct cmd *cmd, const char *path)
{
	struct capture *cap;
	int err;

	if (cmd->cap) {
		log_info("capture: stopped");
		capture_free(cmd->cap);
		cmd->cap = NULL;
	}
	if (!path)
		return 0;
	cap = capture_new(cmd->loop, path, cmd->has_ib, cmd->has_roce);
	if (!cap)
		return -ENOMEM;
	err = capture_error(cap);
	if (err) {
		capture_free(cap);
		return err;
	}
	cmd->cap = cap;
	cmd->counters.captures_started++;
	return 0;
}
