// SPDX-License-Identifier: MIT
/*
 * devremove: DEVICE_REMOVAL on real soft-RoCE (issue 14, item 5). Run by
 * devremove.sh in the VM against a cmd serving rxe0 (on lo) and the
 * test's own rxe1/rxe2 (on the veth pair dr0/dr1, RoCE v2 link-local
 * GIDs), with the delete command as arguments:
 *
 *   devremove SOCKET DEV_A DEV_B DELETE-COMMAND...
 *
 * This one process plays a client on DEV_A and a server on DEV_B, each
 * with its own channel, verbs context, PD, CQ and RC QPs, as two
 * applications would:
 *   1. one connection DEV_A -> DEV_B established (QPs in RTS), and a
 *      second one left at the server's REQ_RECEIVED (REQ_RCVD);
 *   2. the delete command is started in the background ("rdma link
 *      delete DEV_B"): rxe cannot disassociate verbs contexts, so the
 *      kernel's delete waits for every one of DEV_B's to close, the
 *      daemon's included. The server channel must get DEVICE_REMOVAL
 *      -ENODEV, naming DEV_B port 1, once for each of its two ids, with
 *      the id IDLE; nothing else comes for them;
 *   3. the server destroys the ids, its QPs, CQ, PD and closes DEV_B;
 *      then the delete must complete (exit 0) within DELETE_WAIT_S, a
 *      hang guard, and DEV_B is gone from the verbs device list;
 *   4. the daemon still serves: a new loopback connection on rxe0
 *      (127.0.0.1), with real QPs, is established on the same listener;
 *   5. counters: device_removed 1, device_removed_ids 2.
 * Exit 0 when every check passed, 1 otherwise.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "cmc_common.h"
#include "rxe_common.h"

#define PORT 7472
#define WAIT_MS 30000 /* an event that must come: a hang guard */
#define QUIET_MS 500 /* "nothing more comes": how long we look */
#define DELETE_WAIT_S 120 /* the delete, once DEV_B is closed: a hang guard */

/* One application's verbs side on one device. */
struct app {
	const char *dev;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp[2];
};

static int app_open(struct app *a, const char *dev)
{
	struct ibv_device **l;
	int n;

	memset(a, 0, sizeof(*a));
	a->dev = dev;
	l = ibv_get_device_list(&n);
	for (int i = 0; l && i < n; i++)
		if (!strcmp(ibv_get_device_name(l[i]), dev))
			a->ctx = ibv_open_device(l[i]);
	if (l)
		ibv_free_device_list(l);
	if (!a->ctx)
		return -1;
	a->pd = ibv_alloc_pd(a->ctx);
	a->cq = a->pd ? ibv_create_cq(a->ctx, 16, NULL, NULL, 0) : NULL;
	if (!a->cq)
		return -1;
	for (int i = 0; i < 2; i++)
		if (!(a->qp[i] = ex_rc_qp(a->pd, a->cq, 4, 4)))
			return -1;
	return 0;
}

static void app_close(struct app *a)
{
	for (int i = 0; i < 2; i++)
		if (a->qp[i])
			ibv_destroy_qp(a->qp[i]);
	if (a->cq)
		ibv_destroy_cq(a->cq);
	if (a->pd)
		ibv_dealloc_pd(a->pd);
	if (a->ctx)
		ibv_close_device(a->ctx);
	memset(a, 0, sizeof(*a));
}

static bool dev_listed(const char *dev)
{
	struct ibv_device **l;
	bool found = false;
	int n;

	l = ibv_get_device_list(&n);
	for (int i = 0; l && i < n; i++)
		found |= !strcmp(ibv_get_device_name(l[i]), dev);
	if (l)
		ibv_free_device_list(l);
	return found;
}

static struct cmc_event *expect(struct cmc_channel *ch, struct cmc_id *id,
				enum cmc_event_type type, const char *what)
{
	return rxe_expect(ch, id, type, WAIT_MS, what);
}

static void conn_param(struct cmc_conn_param *p, struct ibv_qp *qp)
{
	rxe_conn_param(p, qp->qp_num);
	p->max_cm_retries = 5;
	/* The REQ_RCVD id must stay unanswered without an MRA race. */
	p->local_cm_response_timeout = 20;
	p->remote_cm_response_timeout = 20;
}

/* The server's side of a REQ: QP to RTR, accept, RTS. */
static void serve(struct cmc_id *sid, struct ibv_qp *qp)
{
	struct cmc_accept_param ap;
	int r;

	r = cmc_modify_qp(sid, qp, IBV_QPS_INIT);
	r = r ? r : cmc_modify_qp(sid, qp, IBV_QPS_RTR);
	CHECK(!r, "server QP to RTR: %s", cmc_strerror(r));
	rxe_accept_param(&ap, qp->qp_num);
	r = cmc_accept(sid, &ap);
	CHECK(!r, "accept: %s", cmc_strerror(r));
	r = cmc_modify_qp(sid, qp, IBV_QPS_RTS);
	CHECK(!r, "server QP to RTS: %s", cmc_strerror(r));
}

/* The client's side after the REQ: REP, QP to RTS, RTU; the server's
 * ESTABLISHED. */
static void finish(struct cmc_channel *cl, struct cmc_id *cid,
		   struct ibv_qp *qp, struct cmc_channel *sv,
		   struct cmc_id *sid, const char *what)
{
	struct cmc_event *ev = expect(cl, cid, CMC_EVENT_REP_RECEIVED, what);
	int r;

	if (!ev)
		return;
	cmc_ack_event(ev);
	r = cmc_modify_qp(cid, qp, IBV_QPS_INIT);
	r = r ? r : cmc_modify_qp(cid, qp, IBV_QPS_RTR);
	r = r ? r : cmc_modify_qp(cid, qp, IBV_QPS_RTS);
	CHECK(!r, "%s: client QP to RTS: %s", what, cmc_strerror(r));
	r = cmc_rtu(cid, NULL, 0);
	CHECK(!r, "%s: rtu: %s", what, cmc_strerror(r));
	ev = expect(sv, sid, CMC_EVENT_ESTABLISHED, what);
	if (ev)
		cmc_ack_event(ev);
}

static struct cmc_id *req_at(struct cmc_channel *sv, const char *what)
{
	struct cmc_event *ev = expect(sv, NULL, CMC_EVENT_REQ_RECEIVED, what);
	struct cmc_id *id;

	if (!ev)
		return NULL;
	id = ev->id;
	cmc_ack_event(ev);
	return id;
}

/* Connect from dev_a port 1 to DEV_B's link-local GID. */
static struct cmc_id *connect_gid(struct cmc_channel *cl, const char *dev_a,
				  const union ibv_gid *dgid, struct ibv_qp *qp)
{
	struct cmc_conn_param p;
	struct cmc_id *id = NULL;
	int r;

	conn_param(&p, qp);
	p.service_id = 0x0000000001060000ULL | PORT; /* RDMA_PS_TCP */
	p.dst.family = CMC_AF_GID;
	memcpy(p.dst.addr, dgid->raw, 16);
	p.src.kind = CMC_SEL_PORT;
	p.src.port_num = 1;
	snprintf(p.src.dev_name, sizeof(p.src.dev_name), "%s", dev_a);
	if (cmc_create_id(cl, NULL, CMC_QP_RC, &id))
		return NULL;
	r = cmc_connect(id, &p);
	CHECK(!r, "connect to %s: %s", dev_a, cmc_strerror(r));
	return id;
}

/* RoCE v2 link-local GID index of dev port 1, or -1. */
static int fe80_gid(struct ibv_context *ctx, union ibv_gid *gid)
{
	for (int i = 0; i < 16; i++) {
		struct ibv_gid_entry e;

		if (ibv_query_gid_ex(ctx, 1, (uint32_t)i, &e, 0))
			continue;
		if (e.gid_type == IBV_GID_TYPE_ROCE_V2 &&
		    e.gid.raw[0] == 0xfe && e.gid.raw[1] == 0x80) {
			*gid = e.gid;
			return i;
		}
	}
	return -1;
}

static pid_t start(char **argv)
{
	pid_t pid = fork();

	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* The delete's exit status once it ended, -1 while it runs. */
static int reaped(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, WNOHANG) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int main(int argc, char **argv)
{
	struct cmc_channel *sv = NULL, *cl = NULL;
	struct cmc_id *lis = NULL, *c[2], *s[2], *gone[2], *lc, *ls;
	struct app A, B, L;
	union ibv_gid dgid;
	struct cmc_event *ev;
	struct cmc_id_info info;
	struct sockaddr_in dst, src;
	struct cmc_conn_param p;
	bool seen[2] = { false, false };
	double t0, t_closed;
	pid_t del;
	int r, st = -1;

	if (argc < 5) {
		fprintf(stderr, "usage: devremove SOCKET DEV_A DEV_B CMD...\n");
		return 2;
	}
	srand48(getpid());
	if (app_open(&A, argv[2]) || app_open(&B, argv[3]) ||
	    app_open(&L, "rxe0")) {
		printf("FAIL: cannot open %s, %s, rxe0 with QPs: %s\n", argv[2],
		       argv[3], strerror(errno));
		return 1;
	}
	if (fe80_gid(B.ctx, &dgid) < 0) {
		printf("FAIL: %s has no RoCE v2 link-local GID\n", argv[3]);
		return 1;
	}
	r = cmc_open(argv[1], "devremove-server", &sv);
	r = r ? r : cmc_open(argv[1], "devremove-client", &cl);
	if (r) {
		printf("FAIL: cmc_open: %s\n", cmc_strerror(r));
		return 1;
	}
	r = cmc_create_id(sv, NULL, CMC_QP_RC, &lis);
	r = r ? r :
		cmc_listen(lis, 0x0000000001060000ULL | PORT, ~0ULL, 8, NULL);
	CHECK(!r, "listen: %s", cmc_strerror(r));

	/* 1. One established DEV_A -> DEV_B, one left at REQ_RCVD. */
	c[0] = connect_gid(cl, argv[2], &dgid, A.qp[0]);
	s[0] = req_at(sv, "first connection");
	if (!c[0] || !s[0])
		return 1;
	serve(s[0], B.qp[0]);
	finish(cl, c[0], A.qp[0], sv, s[0], "first connection");
	c[1] = connect_gid(cl, argv[2], &dgid, A.qp[1]);
	s[1] = req_at(sv, "second connection");
	if (!c[1] || !s[1])
		return 1;
	CHECK(cmc_query_id(s[0], &info) == 0 &&
		      info.state == CMC_STATE_ESTABLISHED &&
		      !strcmp(info.path.dev_name, argv[3]),
	      "first connection: server id not ESTABLISHED on %s", argv[3]);
	printf("devremove: %s -> %s established, a second REQ unanswered\n",
	       argv[2], argv[3]);

	/* 2. The delete, in the background; DEVICE_REMOVAL once each. */
	t0 = rxe_now_s();
	del = start(argv + 4);
	CHECK(del > 0, "cannot start the delete");
	gone[0] = s[0];
	gone[1] = s[1];
	for (int n = 0; n < 2; n++) {
		int k;

		ev = rxe_next_event(sv, NULL, WAIT_MS);
		if (!ev) {
			CHECK(0, "no DEVICE_REMOVAL (%d of 2 seen)", n);
			break;
		}
		for (k = 0; k < 2 && ev->id != gone[k]; k++)
			;
		CHECK(ev->type == CMC_EVENT_DEVICE_REMOVAL && k < 2 && !seen[k],
		      "want DEVICE_REMOVAL for a server id, got %s (status %d)",
		      cmc_event_str(ev->type), ev->status);
		if (k < 2 && ev->type == CMC_EVENT_DEVICE_REMOVAL) {
			seen[k] = true;
			CHECK(ev->status == -ENODEV, "status %d", ev->status);
			CHECK(ev->u.port.port_num == 1 &&
				      !strcmp(ev->u.port.dev_name, argv[3]),
			      "port body names %s port %u", ev->u.port.dev_name,
			      ev->u.port.port_num);
		}
		cmc_ack_event(ev);
	}
	printf("devremove: DEVICE_REMOVAL x2 %.2f s after the delete started; "
	       "delete %s\n",
	       rxe_now_s() - t0,
	       reaped(del) < 0 ? "still waiting (our verbs context is open)" :
				 "already done");
	for (int k = 0; k < 2; k++)
		CHECK(cmc_query_id(gone[k], &info) == 0 &&
			      info.state == CMC_STATE_IDLE,
		      "server id %d not IDLE after DEVICE_REMOVAL", k);
	ev = rxe_next_event(sv, NULL, QUIET_MS);
	CHECK(!ev, "after DEVICE_REMOVAL: %s",
	      ev ? cmc_event_str(ev->type) : "");
	if (ev)
		cmc_ack_event(ev);

	/* 3. The server lets go of everything on DEV_B; the delete ends. */
	for (int k = 0; k < 2; k++)
		CHECK(cmc_destroy_id(gone[k]) == 0, "destroy server id %d", k);
	app_close(&B);
	t_closed = rxe_now_s();
	while ((st = reaped(del)) < 0 &&
	       rxe_now_s() - t_closed < DELETE_WAIT_S) {
		struct timespec ts = { 0, 20 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	if (st < 0) {
		kill(del, SIGKILL);
		waitpid(del, NULL, 0);
	}
	CHECK(st == 0, "the delete %s", st < 0 ? "did not complete" : "failed");
	printf("devremove: delete completed %.2f s after the server closed "
	       "%s\n",
	       rxe_now_s() - t_closed, argv[3]);
	CHECK(!dev_listed(argv[3]), "%s still listed", argv[3]);
	/* The client's ids (on DEV_A) were not told; destroy ends them. */
	ev = rxe_next_event(cl, NULL, 0);
	CHECK(!ev || ev->type != CMC_EVENT_DEVICE_REMOVAL,
	      "a client id on %s got DEVICE_REMOVAL", argv[2]);
	if (ev)
		cmc_ack_event(ev);
	for (int k = 0; k < 2; k++)
		cmc_destroy_id(c[k]);
	app_close(&A);

	/* 4. Still serving: a loopback connection on rxe0. */
	rxe_loopback_addrs(&dst, &src, PORT);
	r = cmc_create_id(cl, NULL, CMC_QP_RC, &lc);
	conn_param(&p, L.qp[0]);
	r = r ? r :
		cmc_connect_ip(lc, (struct sockaddr *)&dst,
			       (struct sockaddr *)&src, CMC_RDMA_PS_TCP, &p);
	CHECK(!r, "loopback connect: %s", cmc_strerror(r));
	ls = r ? NULL : req_at(sv, "loopback");
	if (ls) {
		serve(ls, L.qp[1]);
		finish(cl, lc, L.qp[0], sv, ls, "loopback");
		CHECK(cmc_query_id(ls, &info) == 0 &&
			      info.state == CMC_STATE_ESTABLISHED &&
			      !strcmp(info.path.dev_name, "rxe0"),
		      "loopback not ESTABLISHED on rxe0");
		printf("devremove: loopback on rxe0 established after the "
		       "removal\n");
		cmc_destroy_id(ls);
	}
	cmc_destroy_id(lc);

	/* 5. Counters. */
	CHECK(rxe_counter(sv, "device_removed") == 1, "device_removed %" PRId64,
	      rxe_counter(sv, "device_removed"));
	CHECK(rxe_counter(sv, "device_removed_ids") == 2,
	      "device_removed_ids %" PRId64,
	      rxe_counter(sv, "device_removed_ids"));
	cmc_destroy_id(lis);
	cmc_close(cl);
	cmc_close(sv);
	app_close(&L);
	printf("devremove: %s\n", rxe_failures ? "FAIL" : "PASS");
	return rxe_failures ? 1 : 0;
}
