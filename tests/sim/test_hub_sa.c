// SPDX-License-Identifier: MIT
/*
 * cmhub as the simulated subnet's SM/SA (tools/cmhub_sa.c): a real hub is
 * forked on a temporary socket ($CMHUB), two fake daemons speak
 * sim_proto.h to it directly (a hello with one IB port each, then SIM_MADs)
 * and send SA queries to the SM LID, as the daemon's SA client will.
 * Every answer is decoded with SA_DECODE_STRICT. Faults are set through
 * the control protocol (SIM_CTL_SA) and once through the command line.
 *
 * No timing bound is asserted: an answer that must not come is waited for
 * QUIET_MS (long for a hub that answers in microseconds) and the hub's
 * counters confirm why it did not; an answer that must come gets WAIT_MS.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cm_mad.h"
#include "sa_mad.h"
#include "sa_path.h"
#include "sim_proto.h"
#include "hub_ctl.h"

#define WAIT_MS 5000
#define QUIET_MS 300
#define SM_LID 1
#define LID_A 17
#define LID_B 33
#define REDIRECT_LID 40
#define REDIRECT_QPN 7

static char dir[64];
static char sock_path[128];
static pid_t hub_pid;
static int fd_a = -1, fd_b = -1;
static uint64_t next_tid = 0x5a000000;

/* Node 1's port has two GIDs; queries name the second one too. */
static const uint8_t gid_a[SIM_GID_SIZE] = { 0xfe, 0x80, 0,    0,    0,	   0,
					     0,	   0,	 0x00, 0x02, 0xc9, 0x03,
					     0,	   0,	 0x01, 0x01 };
static const uint8_t gid_a2[SIM_GID_SIZE] = {
	0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0xc9, 0x03, 0, 0, 0x01, 0x99
};
static const uint8_t gid_b[SIM_GID_SIZE] = { 0xfe, 0x80, 0,    0,    0,	   0,
					     0,	   0,	 0x00, 0x02, 0xc9, 0x03,
					     0,	   0,	 0x02, 0x01 };
static const uint8_t gid_unknown[SIM_GID_SIZE] = { 0xfe, 0x80, 0,    0,	  0, 0,
						   0,	 0,    0,    0,	  0, 0,
						   0,	 0,    0x77, 0x77 };

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int ctl_connect(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	strcpy(sun.sun_path, sock_path);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* One SIM_CTL_SA; the reply's status (or -errno), *rep filled. */
static int ctl_sa(const struct sim_ctl_sa *req, struct sim_ctl_sa_reply *rep)
{
	struct sim_ctl_sa m = *req;
	struct sim_ctl_sa_reply r;
	int fd = ctl_connect();
	int err;

	if (fd < 0)
		return -errno;
	m.hdr.type = SIM_CTL_SA;
	m.hdr.version = SIM_PROTO_VERSION;
	if (send(fd, &m, sizeof(m), MSG_NOSIGNAL) != (ssize_t)sizeof(m) ||
	    recv(fd, &r, sizeof(r), 0) != (ssize_t)sizeof(r))
		err = errno ? -errno : -EIO;
	else
		err = r.status;
	close(fd);
	if (rep)
		*rep = r;
	return err;
}

static void sa_set(const struct sim_ctl_sa *req)
{
	assert_int_equal(ctl_sa(req, NULL), 0);
}

static struct sim_sa_stats sa_stats(void)
{
	struct sim_ctl_sa q = { .flags = 0 };
	struct sim_ctl_sa_reply r;

	assert_int_equal(ctl_sa(&q, &r), 0);
	return r.stats;
}

static struct sim_stats hub_stats(void)
{
	struct sim_ctl_stats q = { { SIM_CTL_STATS, SIM_PROTO_VERSION } };
	struct sim_ctl_reply r;
	int fd = ctl_connect();

	assert_true(fd >= 0);
	assert_int_equal(send(fd, &q, sizeof(q), MSG_NOSIGNAL), sizeof(q));
	assert_int_equal(recv(fd, &r, sizeof(r), 0), sizeof(r));
	close(fd);
	return r.stats;
}

/* The next packet on fd within ms: its length, or -ETIMEDOUT. */
static ssize_t recv_pkt(int fd, void *buf, size_t size, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, ms) <= 0)
		return -ETIMEDOUT;
	n = recv(fd, buf, size, MSG_DONTWAIT);
	return n < 0 ? -errno : n;
}

static void expect_sm_change(int fd, uint16_t lid)
{
	struct sim_sm_change sm;

	assert_int_equal(recv_pkt(fd, &sm, sizeof(sm), WAIT_MS), sizeof(sm));
	assert_int_equal(sm.hdr.type, SIM_SM_CHANGE);
	assert_int_equal(sm.hdr.version, SIM_PROTO_VERSION);
	assert_int_equal(sm.sm_lid, lid);
	assert_int_equal(sm.sm_sl, 0);
}

/* A fake daemon with one IB port: hello, ack, then the SM's LID. */
static int fake_node(uint16_t node, uint16_t lid, const uint8_t *g0,
		     const uint8_t *g1)
{
	struct sim_hello h;
	struct sim_hello_ack ack;
	int fd = ctl_connect();

	assert_true(fd >= 0);
	memset(&h, 0, sizeof(h));
	h.hdr.type = SIM_HELLO;
	h.hdr.version = SIM_PROTO_VERSION;
	h.node = node;
	h.n_ports = 1;
	h.port[0].guid = 0x0002c90300000001ULL + node;
	h.port[0].lid = lid;
	memcpy(h.port[0].gids[h.port[0].n_gids++], g0, SIM_GID_SIZE);
	if (g1)
		memcpy(h.port[0].gids[h.port[0].n_gids++], g1, SIM_GID_SIZE);
	assert_int_equal(send(fd, &h, sizeof(h), MSG_NOSIGNAL), sizeof(h));
	assert_int_equal(recv_pkt(fd, &ack, sizeof(ack), WAIT_MS), sizeof(ack));
	assert_int_equal(ack.hdr.type, SIM_HELLO_ACK);
	assert_int_equal(ack.status, 0);
	expect_sm_change(fd, SM_LID);
	return fd;
}

static void send_mad(int fd, uint16_t dlid, uint32_t qpn,
		     const uint8_t mad[SIM_MAD_SIZE])
{
	struct sim_mad m;

	memset(&m, 0, sizeof(m));
	m.hdr.type = SIM_MAD;
	m.hdr.version = SIM_PROTO_VERSION;
	m.port = 0;
	m.addr.lid = dlid;
	m.addr.qpn = qpn;
	memcpy(m.mad, mad, SIM_MAD_SIZE);
	assert_int_equal(send(fd, &m, sizeof(m), MSG_NOSIGNAL), sizeof(m));
}

/* The next SIM_MAD on fd: true within ms. */
static bool recv_mad(int fd, struct sim_mad *m, int ms)
{
	ssize_t n = recv_pkt(fd, m, sizeof(*m), ms);

	if (n == -ETIMEDOUT)
		return false;
	assert_int_equal(n, sizeof(*m));
	assert_int_equal(m->hdr.type, SIM_MAD);
	return true;
}

static void expect_quiet(int fd)
{
	struct sim_mad m;

	assert_false(recv_mad(fd, &m, QUIET_MS));
}

/* A GetTable (or Get) of PathRecord for w; returns its TID. */
static uint64_t send_path(int fd, uint16_t dlid, uint32_t qpn,
			  const struct sa_path_want *w, uint8_t method)
{
	uint8_t mad[SIM_MAD_SIZE];
	uint64_t tid = next_tid++;

	assert_int_equal(sa_path_query_encode(w, tid, mad), SA_MAD_SIZE);
	if (method != SA_METHOD_GET_TABLE) {
		struct sa_msg m;
		struct sa_path_rec q;

		assert_int_equal(sa_mad_decode(mad, SA_MAD_SIZE, 0, &m, NULL),
				 0);
		assert_int_equal(sa_msg_path_rec(&m, 0, &q), 0);
		m.hdr.method = method;
		assert_int_equal(
			sa_path_mad_encode(&m, &q, 1, mad, sizeof(mad)),
			SA_MAD_SIZE);
	}
	send_mad(fd, dlid, qpn, mad);
	return tid;
}

static uint64_t send_cpi(int fd, uint16_t dlid, uint32_t qpn)
{
	uint8_t mad[SIM_MAD_SIZE];
	struct sa_msg m;
	uint64_t tid = next_tid++;

	sa_msg_init(&m, SA_REC_CLASS_PORT_INFO, SA_METHOD_GET, tid, 0);
	assert_int_equal(sa_cpi_mad_encode(&m, NULL, mad), SA_MAD_SIZE);
	send_mad(fd, dlid, qpn, mad);
	return tid;
}

/*
 * The answer to tid: from the SA's address (lid, qpn, SL 0), a strict
 * decode, the response method; *m decoded over *raw (which it points into).
 */
static void expect_answer(int fd, uint64_t tid, uint16_t lid, uint32_t qpn,
			  uint8_t method, uint16_t status, struct sim_mad *raw,
			  struct sa_msg *m)
{
	struct sa_fault f;

	assert_true(recv_mad(fd, raw, WAIT_MS));
	assert_int_equal(raw->port, 0);
	assert_int_equal(raw->addr.lid, lid);
	assert_int_equal(raw->addr.qpn, qpn);
	assert_int_equal(raw->addr.sl, 0);
	assert_int_equal(raw->addr.grh, 0);
	assert_int_equal(
		sa_mad_decode(raw->mad, SIM_MAD_SIZE, SA_DECODE_STRICT, m, &f),
		0);
	assert_true(m->hdr.tid == tid);
	assert_int_equal(m->hdr.method, method);
	assert_int_equal(m->hdr.status, status);
}

static struct sa_path_want want_gids(const uint8_t *sgid, const uint8_t *dgid)
{
	struct sa_path_want w;

	memset(&w, 0, sizeof(w));
	memcpy(w.sgid, sgid, CM_GID_SIZE);
	memcpy(w.dgid, dgid, CM_GID_SIZE);
	return w;
}

/* The default attributes, between the given ends. */
static void check_rec(const struct sa_path_rec *r, const uint8_t *sgid,
		      uint16_t slid, const uint8_t *dgid, uint16_t dlid)
{
	assert_memory_equal(r->sgid, sgid, CM_GID_SIZE);
	assert_memory_equal(r->dgid, dgid, CM_GID_SIZE);
	assert_int_equal(r->slid, slid);
	assert_int_equal(r->dlid, dlid);
	assert_int_equal(r->hop_limit, 0);
	assert_int_equal(r->flow_label, 0);
	assert_int_equal(r->reversible, 1);
	assert_int_equal(r->numb_path, 1);
	assert_int_equal(r->mtu_selector, SA_SEL_EXACTLY);
	assert_int_equal(r->rate_selector, SA_SEL_EXACTLY);
	assert_int_equal(r->plt_selector, SA_SEL_EXACTLY);
	assert_int_equal(r->preference, 0);
	assert_int_equal(sa_path_check(r), 0);
}

static void check_default_attrs(const struct sa_path_rec *r)
{
	assert_int_equal(r->mtu, CM_MTU_2048);
	assert_int_equal(r->rate, 3);
	assert_int_equal(r->packet_life_time, 16);
	assert_int_equal(r->sl, 0);
	assert_int_equal(r->pkey, 0xffff);
	assert_int_equal(r->tclass, 0);
}

/* A one-record GetTableResp as the kernel delivers one RMPP segment. */
static void check_table_one(const struct sa_msg *m)
{
	assert_int_equal(m->sa.rmpp_version, SA_RMPP_VERSION);
	assert_int_equal(m->sa.rmpp_type, SA_RMPP_TYPE_DATA);
	assert_int_equal(m->sa.rmpp_flags, SA_RMPP_FLAG_ACTIVE |
						   SA_RMPP_FLAG_FIRST |
						   SA_RMPP_FLAG_LAST);
	assert_int_equal(m->sa.segment_number, 1);
	assert_int_equal(m->sa.payload_length, 20 + 64);
	assert_int_equal(m->sa.attr_offset, 8);
	assert_int_equal(m->nrec, 1);
}

static uint16_t sa_status(unsigned int code)
{
	return (uint16_t)(code << 8);
}

/* A plain answer to a by-GID query from A to B, with its checks. */
static void expect_path_ab(uint64_t tid, uint16_t lid, uint32_t qpn)
{
	struct sim_mad raw;
	struct sa_msg m;
	struct sa_path_rec r;

	expect_answer(fd_a, tid, lid, qpn, SA_METHOD_GET_TABLE_RESP, 0, &raw,
		      &m);
	check_table_one(&m);
	assert_int_equal(sa_msg_path_rec(&m, 0, &r), 0);
	check_rec(&r, gid_a, LID_A, gid_b, LID_B);
}

static int start_hub(void)
{
	const char *hub = getenv("CMHUB");
	uint64_t t0;

	if (!hub) {
		fprintf(stderr, "CMHUB (path of cmhub) not set\n");
		return -1;
	}
	strcpy(dir, "/tmp/cmhub-sa.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(sock_path, sizeof(sock_path), "%s/hub.sock", dir);
	hub_pid = fork();
	if (hub_pid < 0)
		return -1;
	if (hub_pid == 0) {
		execl(hub, hub, sock_path, (char *)NULL);
		_exit(127);
	}
	for (t0 = now_ms(); now_ms() - t0 < WAIT_MS;) {
		int fd = ctl_connect();

		if (fd >= 0) {
			close(fd);
			return 0;
		}
		usleep(5000);
	}
	return -1;
}

static int group_setup(void **state)
{
	if (start_hub())
		return -1;
	fd_a = fake_node(1, LID_A, gid_a, gid_a2);
	fd_b = fake_node(2, LID_B, gid_b, NULL);
	return 0;
}

static int group_teardown(void **state)
{
	if (fd_a >= 0)
		close(fd_a);
	if (fd_b >= 0)
		close(fd_b);
	if (hub_pid > 0) {
		kill(hub_pid, SIGTERM);
		waitpid(hub_pid, NULL, 0);
	}
	unlink(sock_path);
	rmdir(dir);
	return 0;
}

static void test_path_by_gid(void **state)
{
	struct sa_path_want w = want_gids(gid_a, gid_b);
	struct sim_sa_stats before = sa_stats(), after;
	struct sim_mad raw;
	struct sa_msg m;
	struct sa_path_rec r;
	uint64_t tid = send_path(fd_a, SM_LID, 1, &w, SA_METHOD_GET_TABLE);

	expect_answer(fd_a, tid, SM_LID, 1, SA_METHOD_GET_TABLE_RESP, 0, &raw,
		      &m);
	check_table_one(&m);
	assert_int_equal(m.hdr.attr_id, SA_ATTR_PATH_REC);
	assert_int_equal(m.hdr.class_version, SA_CLASS_VERSION);
	assert_true(m.sa.comp_mask ==
		    (SA_PR_COMP_DGID | SA_PR_COMP_SGID | SA_PR_COMP_NUMB_PATH |
		     SA_PR_COMP_REVERSIBLE));
	assert_true(m.sa.sm_key == 0);
	assert_int_equal(sa_msg_path_rec(&m, 0, &r), 0);
	check_rec(&r, gid_a, LID_A, gid_b, LID_B);
	check_default_attrs(&r);

	/* The other way, and from A's second GID (the record keeps it). */
	w = want_gids(gid_b, gid_a2);
	tid = send_path(fd_b, SM_LID, 1, &w, SA_METHOD_GET_TABLE);
	expect_answer(fd_b, tid, SM_LID, 1, SA_METHOD_GET_TABLE_RESP, 0, &raw,
		      &m);
	assert_int_equal(sa_msg_path_rec(&m, 0, &r), 0);
	check_rec(&r, gid_b, LID_B, gid_a2, LID_A);

	after = sa_stats();
	assert_true(after.queries == before.queries + 2);
	assert_true(after.answered == before.answered + 2);
}

static void test_path_by_lid(void **state)
{
	struct sa_path_want w;
	struct sim_mad raw;
	struct sa_msg m;
	struct sa_path_rec r;
	uint64_t tid;

	memset(&w, 0, sizeof(w));
	w.dlid = LID_B;
	w.slid = LID_A;
	tid = send_path(fd_a, SM_LID, 1, &w, SA_METHOD_GET_TABLE);
	expect_answer(fd_a, tid, SM_LID, 1, SA_METHOD_GET_TABLE_RESP, 0, &raw,
		      &m);
	check_table_one(&m);
	assert_int_equal(sa_msg_path_rec(&m, 0, &r), 0);
	/* By LID: each port's first GID. */
	check_rec(&r, gid_a, LID_A, gid_b, LID_B);
	check_default_attrs(&r);

	/* DLID alone: the source is the requester's port. */
	w.dlid = LID_A;
	w.slid = 0;
	tid = send_path(fd_b, SM_LID, 1, &w, SA_METHOD_GET_TABLE);
	expect_answer(fd_b, tid, SM_LID, 1, SA_METHOD_GET_TABLE_RESP, 0, &raw,
		      &m);
	assert_int_equal(sa_msg_path_rec(&m, 0, &r), 0);
	check_rec(&r, gid_b, LID_B, gid_a, LID_A);

	/* DLID and DGID naming two ports: no such path. */
	w = want_gids(gid_a, gid_b);
	tid = next_tid++;
	{
		struct sa_path_rec q;
		uint64_t mask = sa_path_query(&w, &q) | SA_PR_COMP_DLID;
		uint8_t mad[SIM_MAD_SIZE];

		q.dlid = LID_A;
		sa_msg_init(&m, SA_REC_PATH_REC, SA_METHOD_GET_TABLE, tid,
			    mask);
		assert_int_equal(
			sa_path_mad_encode(&m, &q, 1, mad, sizeof(mad)),
			SA_MAD_SIZE);
		send_mad(fd_a, SM_LID, 1, mad);
	}
	expect_answer(fd_a, tid, SM_LID, 1, SA_METHOD_GET_TABLE_RESP,
		      sa_status(SA_ERR_NO_RECORDS), &raw, &m);
	assert_int_equal(m.nrec, 0);
}

/* SubnAdmGet(PathRecord): one record in a GetResp. */
static void test_path_get(void **state)
{
	struct sa_path_want w = want_gids(gid_a, gid_b);
	struct sim_mad raw;
	struct sa_msg m;
	struct sa_path_rec r;
	uint64_t tid = send_path(fd_a, SM_LID, 1, &w, SA_METHOD_GET);

	expect_answer(fd_a, tid, SM_LID, 1, SA_METHOD_GET_RESP, 0, &raw, &m);
	assert_int_equal(m.nrec, 1);
	assert_int_equal(m.sa.rmpp_version, 0);
	assert_int_equal(sa_msg_path_rec(&m, 0, &r), 0);
	check_rec(&r, gid_a, LID_A, gid_b, LID_B);
	check_default_attrs(&r);

	w = want_gids(gid_a, gid_unknown);
	tid = send_path(fd_a, SM_LID, 1, &w, SA_METHOD_GET);
	expect_answer(fd_a, tid, SM_LID, 1, SA_METHOD_GET_RESP,
		      sa_status(SA_ERR_NO_RECORDS), &raw, &m);
}

static void test_no_records(void **state)
{
	struct sa_path_want w = want_gids(gid_a, gid_unknown);
	struct sim_sa_stats before = sa_stats(), after;
	struct sim_mad raw;
	struct sa_msg m;
	uint64_t tid = send_path(fd_a, SM_LID, 1, &w, SA_METHOD_GET_TABLE);

	expect_answer(fd_a, tid, SM_LID, 1, SA_METHOD_GET_TABLE_RESP,
		      sa_status(SA_ERR_NO_RECORDS), &raw, &m);
	assert_int_equal(m.nrec, 0);

	/* An unknown source, and an unknown DLID. */
	w = want_gids(gid_unknown, gid_b);
	tid = send_path(fd_a, SM_LID, 1, &w, SA_METHOD_GET_TABLE);
	expect_answer(fd_a, tid, SM_LID, 1, SA_METHOD_GET_TABLE_RESP,
		      sa_status(SA_ERR_NO_RECORDS), &raw, &m);
	memset(&w, 0, sizeof(w));
	w.dlid = 999;
	tid = send_path(fd_a, SM_LID, 1, &w, SA_METHOD_GET_TABLE);
	expect_answer(fd_a, tid, SM_LID, 1, SA_METHOD_GET_TABLE_RESP,
		      sa_status(SA_ERR_NO_RECORDS), &raw, &m);

	/* Neither DGID nor DLID: insufficient components (Table 194). */
	tid = next_tid++;
	{
		struct sa_path_rec q;
		uint8_t mad[SIM_MAD_SIZE];

		memset(&q, 0, sizeof(q));
		memcpy(q.sgid, gid_a, CM_GID_SIZE);
		sa_msg_init(&m, SA_REC_PATH_REC, SA_METHOD_GET_TABLE, tid,
			    SA_PR_COMP_SGID);
		assert_int_equal(
			sa_path_mad_encode(&m, &q, 1, mad, sizeof(mad)),
			SA_MAD_SIZE);
		send_mad(fd_a, SM_LID, 1, mad);
	}
	expect_answer(fd_a, tid, SM_LID, 1, SA_METHOD_GET_TABLE_RESP,
		      sa_status(SA_ERR_REQ_INSUFFICIENT_COMPONENTS), &raw, &m);
	after = sa_stats();
	assert_true(after.no_records == before.no_records + 3);
	assert_true(after.invalid == before.invalid + 1);
}

/* SL, P_Key, TClass asked are echoed; an MTU asked EXACTLY must match. */
static void test_components(void **state)
{
	struct sa_path_want w = want_gids(gid_a, gid_b);
	struct sim_mad raw;
	struct sa_msg m;
	struct sa_path_rec r;
	uint64_t tid;

	w.flags = CMP_PATH_FLAG_SL | CMP_PATH_FLAG_TRAFFIC_CLASS |
		  CMP_PATH_FLAG_MTU;
	w.sl = 7;
	w.traffic_class = 0x20;
	w.pkey = 0x8001;
	w.service_id = 0x0000000001060000ULL | 4791;
	w.mtu = CM_MTU_2048;
	tid = send_path(fd_a, SM_LID, 1, &w, SA_METHOD_GET_TABLE);
	expect_answer(fd_a, tid, SM_LID, 1, SA_METHOD_GET_TABLE_RESP, 0, &raw,
		      &m);
	assert_int_equal(sa_msg_path_rec(&m, 0, &r), 0);
	check_rec(&r, gid_a, LID_A, gid_b, LID_B);
	assert_int_equal(r.sl, 7);
	assert_int_equal(r.tclass, 0x20);
	assert_int_equal(r.pkey, 0x8001);
	assert_int_equal(r.mtu, CM_MTU_2048);
	assert_true(sa_path_rec_service_id(&r) == w.service_id);

	w.mtu = CM_MTU_4096;
	tid = send_path(fd_a, SM_LID, 1, &w, SA_METHOD_GET_TABLE);
	expect_answer(fd_a, tid, SM_LID, 1, SA_METHOD_GET_TABLE_RESP,
		      sa_status(SA_ERR_NO_RECORDS), &raw, &m);
}

/* --sa-mtu/-rate/-plt/-sl change what the records say. */
static void test_attributes(void **state)
{
	struct sim_ctl_sa set = {
		.flags = SIM_SA_SET_MTU | SIM_SA_SET_RATE | SIM_SA_SET_PLT |
			 SIM_SA_SET_SL,
		.mtu = CM_MTU_4096,
		.rate = 7,
		.plt = 18,
		.sl = 3,
	};
	struct sim_ctl_sa bad = { .flags = SIM_SA_SET_MTU, .mtu = 6 };
	struct sim_ctl_sa back = {
		.flags = SIM_SA_SET_MTU | SIM_SA_SET_RATE | SIM_SA_SET_PLT |
			 SIM_SA_SET_SL,
		.mtu = CM_MTU_2048,
		.rate = 3,
		.plt = 16,
		.sl = 0,
	};
	struct sa_path_want w = want_gids(gid_a, gid_b);
	struct sim_ctl_sa_reply rep;
	struct sim_mad raw;
	struct sa_msg m;
	struct sa_path_rec r;
	uint64_t tid;

	assert_int_equal(ctl_sa(&bad, &rep), -EINVAL);
	assert_int_equal(rep.config.mtu, CM_MTU_2048);
	sa_set(&set);
	tid = send_path(fd_a, SM_LID, 1, &w, SA_METHOD_GET_TABLE);
	expect_answer(fd_a, tid, SM_LID, 1, SA_METHOD_GET_TABLE_RESP, 0, &raw,
		      &m);
	assert_int_equal(sa_msg_path_rec(&m, 0, &r), 0);
	assert_int_equal(r.mtu, CM_MTU_4096);
	assert_int_equal(r.rate, 7);
	assert_int_equal(r.packet_life_time, 18);
	assert_int_equal(r.sl, 3);
	sa_set(&back);
}

static void test_class_port_info(void **state)
{
	struct sim_mad raw;
	struct sa_msg m;
	struct sa_class_port_info cpi;
	uint64_t tid = send_cpi(fd_a, SM_LID, 1);

	expect_answer(fd_a, tid, SM_LID, 1, SA_METHOD_GET_RESP, 0, &raw, &m);
	assert_int_equal(m.hdr.attr_id, SA_ATTR_CLASS_PORT_INFO);
	assert_int_equal(sa_msg_class_port_info(&m, &cpi), 0);
	assert_int_equal(cpi.base_version, 1);
	assert_int_equal(cpi.class_version, 2);
	assert_int_equal(cpi.capability_mask, 0);
	assert_int_equal(cpi.resp_time_value, 16);
	assert_int_equal(cpi.redirect_lid, 0);
	assert_int_equal(cpi.redirect_qp, 0);
}

static void test_busy(void **state)
{
	struct sim_ctl_sa set = { .flags = SIM_SA_SET_BUSY, .busy = 2 };
	struct sa_path_want w = want_gids(gid_a, gid_b);
	struct sim_sa_stats before = sa_stats(), after;
	struct sim_mad raw;
	struct sa_msg m;
	uint64_t tid;

	sa_set(&set);
	tid = send_path(fd_a, SM_LID, 1, &w, SA_METHOD_GET_TABLE);
	expect_answer(fd_a, tid, SM_LID, 1, SA_METHOD_GET_TABLE_RESP,
		      SA_STATUS_BUSY, &raw, &m);
	assert_int_equal(m.nrec, 0);
	tid = send_cpi(fd_a, SM_LID, 1);
	expect_answer(fd_a, tid, SM_LID, 1, SA_METHOD_GET_RESP, SA_STATUS_BUSY,
		      &raw, &m);
	tid = send_path(fd_a, SM_LID, 1, &w, SA_METHOD_GET_TABLE);
	expect_path_ab(tid, SM_LID, 1);
	after = sa_stats();
	assert_true(after.busy == before.busy + 2);
}

static void test_drop(void **state)
{
	struct sim_ctl_sa set = { .flags = SIM_SA_SET_DROP, .drop = 1 };
	struct sa_path_want w = want_gids(gid_a, gid_b);
	struct sim_sa_stats before = sa_stats(), after;
	uint64_t tid;

	sa_set(&set);
	send_path(fd_a, SM_LID, 1, &w, SA_METHOD_GET_TABLE);
	expect_quiet(fd_a);
	after = sa_stats();
	assert_true(after.dropped == before.dropped + 1);
	/* The next is answered, and the dropped one never comes. */
	tid = send_path(fd_a, SM_LID, 1, &w, SA_METHOD_GET_TABLE);
	expect_path_ab(tid, SM_LID, 1);
	expect_quiet(fd_a);
}

static void test_error(void **state)
{
	struct sim_ctl_sa set = {
		.flags = SIM_SA_SET_ERROR,
		.error_code = SA_ERR_TOO_MANY_RECORDS,
		.error_count = 2,
	};
	struct sa_path_want w = want_gids(gid_a, gid_b);
	struct sim_sa_stats before = sa_stats(), after;
	struct sim_mad raw;
	struct sa_msg m;
	uint64_t tid;

	sa_set(&set);
	for (int i = 0; i < 2; i++) {
		tid = send_path(fd_a, SM_LID, 1, &w, SA_METHOD_GET_TABLE);
		expect_answer(fd_a, tid, SM_LID, 1, SA_METHOD_GET_TABLE_RESP,
			      sa_status(SA_ERR_TOO_MANY_RECORDS), &raw, &m);
		assert_int_equal(m.nrec, 0);
	}
	tid = send_path(fd_a, SM_LID, 1, &w, SA_METHOD_GET_TABLE);
	expect_path_ab(tid, SM_LID, 1);
	after = sa_stats();
	assert_true(after.errors == before.errors + 2);
}

/* Answers wait while the delay is set, and come in order when lifted. */
static void test_delay(void **state)
{
	struct sim_ctl_sa hold = { .flags = SIM_SA_SET_DELAY,
				   .delay_ms = 600000 };
	struct sim_ctl_sa lift = { .flags = SIM_SA_SET_DELAY, .delay_ms = 0 };
	struct sa_path_want w = want_gids(gid_a, gid_b);
	struct sim_sa_stats st;
	uint64_t t1, t2, t0 = now_ms();

	sa_set(&hold);
	t1 = send_path(fd_a, SM_LID, 1, &w, SA_METHOD_GET_TABLE);
	t2 = send_path(fd_a, SM_LID, 1, &w, SA_METHOD_GET_TABLE);
	while ((st = sa_stats()).pending < 2 && now_ms() - t0 < WAIT_MS)
		usleep(2000);
	assert_true(st.pending == 2);
	expect_quiet(fd_a);
	sa_set(&lift);
	expect_path_ab(t1, SM_LID, 1);
	expect_path_ab(t2, SM_LID, 1);
	st = sa_stats();
	assert_true(st.pending == 0);
	assert_true(st.delayed >= 2);

	/* A short delay: the answer still comes, on its own. */
	hold.delay_ms = 50;
	sa_set(&hold);
	t1 = send_path(fd_a, SM_LID, 1, &w, SA_METHOD_GET_TABLE);
	expect_path_ab(t1, SM_LID, 1);
	sa_set(&lift);
}

/*
 * A daemon that goes away while its answers wait: they are forgotten,
 * the others' still come, in order.
 */
static void test_delay_disconnect(void **state)
{
	static const uint8_t gid_c[SIM_GID_SIZE] = { 0xfe, 0x80, 0, 0, 0, 0,
						     0,	   0,	 0, 0, 0, 0,
						     0,	   0,	 4, 1 };
	struct sim_ctl_sa hold = { .flags = SIM_SA_SET_DELAY,
				   .delay_ms = 600000 };
	struct sim_ctl_sa lift = { .flags = SIM_SA_SET_DELAY, .delay_ms = 0 };
	struct sa_path_want w = want_gids(gid_a, gid_b);
	struct sa_path_want wc = want_gids(gid_c, gid_b);
	struct sim_sa_stats st;
	uint64_t t1, t2, t0 = now_ms();
	int fd_c = fake_node(4, 65, gid_c, NULL);

	sa_set(&hold);
	t1 = send_path(fd_a, SM_LID, 1, &w, SA_METHOD_GET_TABLE);
	send_path(fd_c, SM_LID, 1, &wc, SA_METHOD_GET_TABLE);
	send_path(fd_c, SM_LID, 1, &wc, SA_METHOD_GET_TABLE);
	while ((st = sa_stats()).pending < 3 && now_ms() - t0 < WAIT_MS)
		usleep(2000);
	assert_true(st.pending == 3);
	close(fd_c);
	while ((st = sa_stats()).pending > 1 && now_ms() - t0 < WAIT_MS)
		usleep(2000);
	assert_true(st.pending == 1);
	/* One more behind the survivor: the queue's tail is still right. */
	t2 = send_path(fd_a, SM_LID, 1, &w, SA_METHOD_GET_TABLE);
	while ((st = sa_stats()).pending < 2 && now_ms() - t0 < WAIT_MS)
		usleep(2000);
	assert_true(st.pending == 2);
	sa_set(&lift);
	expect_path_ab(t1, SM_LID, 1);
	expect_path_ab(t2, SM_LID, 1);
	assert_true(sa_stats().pending == 0);
}

/* IBTA 13.5.3.3: redirect status with ClassPortInfo, then the new QP. */
static void test_redirect(void **state)
{
	struct sim_ctl_sa on = {
		.flags = SIM_SA_SET_REDIRECT,
		.redirect_lid = REDIRECT_LID,
		.redirect_qpn = REDIRECT_QPN,
	};
	struct sim_ctl_sa off = { .flags = SIM_SA_SET_REDIRECT };
	struct sa_path_want w = want_gids(gid_a, gid_b);
	struct sim_sa_stats before = sa_stats(), after;
	struct sim_stats hs;
	struct sim_mad raw;
	struct sa_msg m;
	struct sa_class_port_info cpi;
	uint64_t tid, unroutable;

	sa_set(&on);
	for (int get = 0; get < 2; get++) {
		uint8_t method = get ? SA_METHOD_GET : SA_METHOD_GET_TABLE;

		tid = send_path(fd_a, SM_LID, 1, &w, method);
		expect_answer(fd_a, tid, SM_LID, 1,
			      get ? SA_METHOD_GET_RESP :
				    SA_METHOD_GET_TABLE_RESP,
			      SA_STATUS_REDIRECT, &raw, &m);
		/* The attribute stays PathRecord; the data is ClassPortInfo. */
		assert_int_equal(m.hdr.attr_id, SA_ATTR_PATH_REC);
		assert_null(sa_class_port_info_decode(m.data, &cpi));
		assert_int_equal(cpi.base_version, 1);
		assert_int_equal(cpi.class_version, 2);
		assert_int_equal(cpi.redirect_lid, REDIRECT_LID);
		assert_int_equal(cpi.redirect_qp, REDIRECT_QPN);
		assert_true(cpi.redirect_qkey == 0x80010000u);
		assert_int_equal(cpi.redirect_pkey, 0xffff);
	}
	/* ClassPortInfo itself is answered at the SM, redirect fields set. */
	tid = send_cpi(fd_a, SM_LID, 1);
	expect_answer(fd_a, tid, SM_LID, 1, SA_METHOD_GET_RESP, 0, &raw, &m);
	assert_int_equal(sa_msg_class_port_info(&m, &cpi), 0);
	assert_int_equal(cpi.redirect_lid, REDIRECT_LID);
	assert_int_equal(cpi.redirect_qp, REDIRECT_QPN);

	/* At the redirect LID and QP: answered, from there. */
	tid = send_path(fd_a, REDIRECT_LID, REDIRECT_QPN, &w,
			SA_METHOD_GET_TABLE);
	expect_path_ab(tid, REDIRECT_LID, REDIRECT_QPN);
	tid = send_cpi(fd_a, REDIRECT_LID, REDIRECT_QPN);
	expect_answer(fd_a, tid, REDIRECT_LID, REDIRECT_QPN, SA_METHOD_GET_RESP,
		      0, &raw, &m);

	/* The redirect LID on another QP is no SA: routed, and nobody has
	 * that LID. */
	unroutable = hub_stats().unroutable;
	send_path(fd_a, REDIRECT_LID, 1, &w, SA_METHOD_GET_TABLE);
	expect_quiet(fd_a);
	hs = hub_stats();
	assert_true(hs.unroutable == unroutable + 1);
	after = sa_stats();
	assert_true(after.redirected == before.redirected + 2);

	sa_set(&off);
	tid = send_path(fd_a, SM_LID, 1, &w, SA_METHOD_GET_TABLE);
	expect_path_ab(tid, SM_LID, 1);
}

/* Not decodable or not a request: counted, never answered. */
static void test_malformed(void **state)
{
	struct sa_path_want w = want_gids(gid_a, gid_b);
	struct sim_sa_stats before = sa_stats(), after;
	uint8_t mad[SIM_MAD_SIZE];
	uint64_t tid;

	assert_int_equal(sa_path_query_encode(&w, next_tid++, mad),
			 SA_MAD_SIZE);
	mad[2] = 1; /* class version 1 */
	send_mad(fd_a, SM_LID, 1, mad);
	assert_int_equal(sa_path_query_encode(&w, next_tid++, mad),
			 SA_MAD_SIZE);
	mad[3] = SA_METHOD_GET_TABLE_RESP; /* an answer sent to the SA */
	send_mad(fd_a, SM_LID, 1, mad);
	expect_quiet(fd_a);
	tid = send_path(fd_a, SM_LID, 1, &w, SA_METHOD_GET_TABLE);
	expect_path_ab(tid, SM_LID, 1);
	after = sa_stats();
	assert_true(after.malformed == before.malformed + 2);
}

/* --sa-off: SA MADs to the SM LID are routed like any (nobody has it). */
static void test_sa_off(void **state)
{
	struct sim_ctl_sa off = { .flags = SIM_SA_SET_ON, .on = 0 };
	struct sim_ctl_sa on = { .flags = SIM_SA_SET_ON, .on = 1 };
	struct sa_path_want w = want_gids(gid_a, gid_b);
	uint64_t queries = sa_stats().queries;
	uint64_t unroutable = hub_stats().unroutable;
	uint64_t tid;

	sa_set(&off);
	send_path(fd_a, SM_LID, 1, &w, SA_METHOD_GET_TABLE);
	expect_quiet(fd_a);
	assert_true(sa_stats().queries == queries);
	assert_true(hub_stats().unroutable == unroutable + 1);
	sa_set(&on);
	tid = send_path(fd_a, SM_LID, 1, &w, SA_METHOD_GET_TABLE);
	expect_path_ab(tid, SM_LID, 1);
}

/*
 * The SM moves to node B's LID: both daemons hear it; SA MADs to the old
 * LID are no SA's any more, SA MADs to B's LID are the hub's and CM MADs
 * to it still reach B.
 */
static void test_sm_change(void **state)
{
	struct sim_ctl_sa move = { .flags = SIM_SA_SET_SM_LID,
				   .sm_lid = LID_B };
	struct sim_ctl_sa back = { .flags = SIM_SA_SET_SM_LID,
				   .sm_lid = SM_LID };
	struct sim_ctl_sa bad = { .flags = SIM_SA_SET_SM_LID, .sm_lid = 0 };
	struct sa_path_want w = want_gids(gid_a, gid_b);
	struct sim_ctl_sa_reply rep;
	struct sim_mad raw;
	struct cm_msg cm;
	uint8_t mad[SIM_MAD_SIZE];
	uint64_t queries, unroutable, tid;

	assert_int_equal(ctl_sa(&bad, &rep), -EINVAL);
	assert_int_equal(ctl_sa(&move, &rep), 0);
	assert_int_equal(rep.config.sm_lid, LID_B);
	expect_sm_change(fd_a, LID_B);
	expect_sm_change(fd_b, LID_B);

	queries = sa_stats().queries;
	unroutable = hub_stats().unroutable;
	send_path(fd_a, SM_LID, 1, &w, SA_METHOD_GET_TABLE);
	expect_quiet(fd_a);
	assert_true(sa_stats().queries == queries);
	assert_true(hub_stats().unroutable == unroutable + 1);

	tid = send_path(fd_a, LID_B, 1, &w, SA_METHOD_GET_TABLE);
	expect_path_ab(tid, LID_B, 1);
	expect_quiet(fd_b);

	memset(&cm, 0, sizeof(cm));
	cm_msg_init(&cm, CM_MSG_DREQ, 42);
	cm.dreq.local_comm_id = 1;
	cm.dreq.remote_comm_id = 2;
	cm.dreq.remote_qpn = 3;
	assert_int_equal(cm_mad_encode(&cm, mad), 0);
	send_mad(fd_a, LID_B, 1, mad);
	assert_true(recv_mad(fd_b, &raw, WAIT_MS));
	assert_memory_equal(raw.mad, mad, SIM_MAD_SIZE);
	assert_int_equal(raw.addr.lid, LID_A);

	/* The same LID again: no change, nothing sent. */
	sa_set(&move);
	sa_set(&back);
	expect_sm_change(fd_a, SM_LID);
	expect_sm_change(fd_b, SM_LID);
	tid = send_path(fd_a, SM_LID, 1, &w, SA_METHOD_GET_TABLE);
	expect_path_ab(tid, SM_LID, 1);
}

/* A daemon that joins later hears the SM's LID right after its ack. */
static void test_sm_lid_on_join(void **state)
{
	static const uint8_t gid_c[SIM_GID_SIZE] = { 0xfe, 0x80, 0, 0, 0, 0,
						     0,	   0,	 0, 0, 0, 0,
						     0,	   0,	 3, 1 };
	struct sim_ctl_sa move = { .flags = SIM_SA_SET_SM_LID, .sm_lid = 5 };
	struct sim_ctl_sa back = { .flags = SIM_SA_SET_SM_LID,
				   .sm_lid = SM_LID };
	struct sim_hello h;
	struct sim_hello_ack ack;
	int fd;

	sa_set(&move);
	expect_sm_change(fd_a, 5);
	expect_sm_change(fd_b, 5);
	fd = ctl_connect();
	assert_true(fd >= 0);
	memset(&h, 0, sizeof(h));
	h.hdr.type = SIM_HELLO;
	h.hdr.version = SIM_PROTO_VERSION;
	h.node = 3;
	h.n_ports = 1;
	h.port[0].lid = 49;
	h.port[0].n_gids = 1;
	memcpy(h.port[0].gids[0], gid_c, SIM_GID_SIZE);
	assert_int_equal(send(fd, &h, sizeof(h), MSG_NOSIGNAL), sizeof(h));
	assert_int_equal(recv_pkt(fd, &ack, sizeof(ack), WAIT_MS), sizeof(ack));
	assert_int_equal(ack.status, 0);
	expect_sm_change(fd, 5);
	close(fd);
	sa_set(&back);
	expect_sm_change(fd_a, SM_LID);
	expect_sm_change(fd_b, SM_LID);
}

/* cmhub --ctl on the test's hub (tests/lib/hub_ctl.h). */
static int run_ctl(char *const args[], char *out, size_t len)
{
	return hub_ctl_run(getenv("CMHUB"), sock_path, args, out, len);
}

static void test_ctl_cli(void **state)
{
	char *busy[] = { "--sa-busy",  "1", "--sa-error", "2",
			 "--sa-count", "3", NULL };
	char *clear[] = { "--sa-busy", "0", "--sa-error", "0", NULL };
	char *redirect[] = { "--sa-redirect", "40:7", NULL };
	char *no_redirect[] = { "--sa-redirect", "off", NULL };
	char *bad[] = { "--sa-redirect", "40", NULL };
	char *bad_mtu[] = { "--sa-mtu", "6", NULL };
	char *stats[] = { "--stats", NULL };
	char *stats2[] = { "stats", NULL };
	char out[4096];

	assert_int_equal(run_ctl(busy, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "sa_busy_left 1\n"));
	assert_non_null(strstr(out, "sa_error_code 2\n"));
	assert_non_null(strstr(out, "sa_error_left 3\n"));
	assert_int_equal(run_ctl(clear, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "sa_busy_left 0\n"));
	assert_non_null(strstr(out, "sa_error_left 0\n"));
	assert_int_equal(run_ctl(redirect, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "sa_redirect_lid 40\n"));
	assert_non_null(strstr(out, "sa_redirect_qpn 7\n"));
	assert_int_equal(run_ctl(no_redirect, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "sa_redirect_lid 0\n"));
	assert_int_equal(run_ctl(bad, out, sizeof(out)), 2);
	assert_int_equal(run_ctl(bad_mtu, out, sizeof(out)), 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(run_ctl(i ? stats2 : stats, out, sizeof(out)),
				 0);
		assert_non_null(strstr(out, "routed "));
		assert_non_null(strstr(out, "daemons "));
		assert_non_null(strstr(out, "sa_queries "));
		assert_non_null(strstr(out, "sa_malformed 2\n"));
		assert_non_null(strstr(out, "sm_lid 1\n"));
		assert_non_null(strstr(out, "sa_mtu 4\n"));
		assert_non_null(strstr(out, "sa_plt 16\n"));
		assert_non_null(strstr(out, "sa_resp_time 16\n"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_by_gid),
		cmocka_unit_test(test_path_by_lid),
		cmocka_unit_test(test_path_get),
		cmocka_unit_test(test_no_records),
		cmocka_unit_test(test_components),
		cmocka_unit_test(test_attributes),
		cmocka_unit_test(test_class_port_info),
		cmocka_unit_test(test_busy),
		cmocka_unit_test(test_drop),
		cmocka_unit_test(test_error),
		cmocka_unit_test(test_delay),
		cmocka_unit_test(test_delay_disconnect),
		cmocka_unit_test(test_redirect),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_sa_off),
		cmocka_unit_test(test_sm_change),
		cmocka_unit_test(test_sm_lid_on_join),
		cmocka_unit_test(test_ctl_cli),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
