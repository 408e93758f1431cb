// SPDX-License-Identifier: MIT
/*
 * The SA client (daemon/sa_client.h) on a fake clock and a recording send
 * function: what it sends (decoded with sa_mad_decode, strict), TID
 * matching, timeouts and retries, BUSY back-off, error statuses,
 * ClassPortInfo (RespTimeValue, redirection), the redirect status, SM
 * change and port down, cancel, the bound on queries in flight. Answers
 * are built here with sa_path_mad_encode as an SA builds them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sa_client.h"

#define MS 1000000ull
#define SM_LID 7
#define PORT 3

struct sent {
	uint16_t port;
	struct sa_dest to;
	uint8_t mad[SA_MAD_SIZE];
	unsigned int timeout_ms;
};

static struct sent sent[64];
static unsigned int n_sent;
static int send_rc;

static int fake_send(void *ctx, uint16_t port, const struct sa_dest *to,
		     const uint8_t mad[SA_MAD_SIZE], unsigned int timeout_ms)
{
	(void)ctx;
	assert_true(n_sent < 64);
	sent[n_sent].port = port;
	sent[n_sent].to = *to;
	memcpy(sent[n_sent].mad, mad, SA_MAD_SIZE);
	sent[n_sent].timeout_ms = timeout_ms;
	n_sent++;
	return send_rc;
}

static const struct sa_client_ops ops = { .send = fake_send };

struct answer {
	int calls;
	int status;
	unsigned int n;
	struct sa_path_rec recs[4];
	char why[128];
};

static void on_path(void *ctx, int status, const struct sa_path_rec *recs,
		    unsigned int n, const char *why)
{
	struct answer *a = ctx;

	a->calls++;
	a->status = status;
	a->n = n;
	for (unsigned int i = 0; i < n && i < 4; i++)
		a->recs[i] = recs[i];
	snprintf(a->why, sizeof(a->why), "%s", why ? why : "");
}

static const uint8_t sgid[16] = { 0xfe, 0x80, [15] = 0x11 };
static const uint8_t dgid[16] = { 0xfe, 0x80, [15] = 0x22 };

static struct sa_path_want want(void)
{
	struct sa_path_want w;

	memset(&w, 0, sizeof(w));
	memcpy(w.sgid, sgid, 16);
	memcpy(w.dgid, dgid, 16);
	w.pkey = 0xffff;
	return w;
}

static void decode_sent(unsigned int i, struct sa_msg *m)
{
	assert_true(i < n_sent);
	assert_int_equal(sa_mad_decode(sent[i].mad, SA_MAD_SIZE,
				       SA_DECODE_STRICT, m, NULL),
			 0);
}

/* The index of the last MAD sent of record type rec. */
static unsigned int last_of(enum sa_rec_type rec)
{
	struct sa_msg m;

	for (unsigned int i = n_sent; i-- > 0;) {
		decode_sent(i, &m);
		if (m.rec == rec)
			return i;
	}
	fail_msg("no MAD of record type %d sent", rec);
	return 0;
}

static struct sa_path_rec path_rec(uint16_t dlid)
{
	struct sa_path_rec r;

	memset(&r, 0, sizeof(r));
	memcpy(r.dgid, dgid, 16);
	memcpy(r.sgid, sgid, 16);
	r.dlid = dlid;
	r.slid = 1;
	r.reversible = 1;
	r.numb_path = 1;
	r.pkey = 0xffff;
	r.sl = 4;
	r.mtu_selector = 2;
	r.mtu = 4;
	r.rate_selector = 2;
	r.rate = 7;
	r.plt_selector = 2;
	r.packet_life_time = 14;
	return r;
}

/* The SA's GetTableResp to sent[i], one RMPP segment of n records. */
static void answer_table(struct sa_client *sa, unsigned int i,
			 const struct sa_path_rec *recs, unsigned int n,
			 uint16_t status, uint64_t now)
{
	struct sa_msg q, m;
	uint8_t out[SA_MAD_SIZE];

	decode_sent(i, &q);
	sa_msg_init(&m, SA_REC_PATH_REC, SA_METHOD_GET_TABLE_RESP, q.hdr.tid,
		    q.sa.comp_mask);
	m.hdr.status = status;
	if (!status) {
		m.sa.rmpp_version = SA_RMPP_VERSION;
		m.sa.rmpp_type = SA_RMPP_TYPE_DATA;
		m.sa.rmpp_flags = SA_RMPP_FLAG_ACTIVE | SA_RMPP_FLAG_FIRST |
				  SA_RMPP_FLAG_LAST;
		m.sa.segment_number = 1;
		m.sa.payload_length = SA_RMPP_PAYLOAD_HDR + 64 * n;
		m.sa.attr_offset = 8;
	}
	assert_int_equal(sa_path_mad_encode(&m, recs, n, out, sizeof(out)),
			 SA_MAD_SIZE);
	sa_client_recv(sa, sent[i].port, out, sizeof(out), now);
}

/* The SA's GetResp(ClassPortInfo) to sent[i]. */
static void answer_cpi(struct sa_client *sa, unsigned int i, uint8_t rtv,
		       uint16_t redirect_lid, uint32_t redirect_qp,
		       uint16_t status, uint64_t now)
{
	struct sa_msg q, m;
	struct sa_class_port_info cpi;
	uint8_t out[SA_MAD_SIZE];

	decode_sent(i, &q);
	memset(&cpi, 0, sizeof(cpi));
	cpi.base_version = 1;
	cpi.class_version = 2;
	cpi.resp_time_value = rtv;
	cpi.redirect_lid = redirect_lid;
	cpi.redirect_qp = redirect_qp;
	cpi.redirect_qkey = SA_QP1_QKEY;
	cpi.redirect_pkey = 0xffff;
	sa_msg_init(&m, SA_REC_CLASS_PORT_INFO, SA_METHOD_GET_RESP, q.hdr.tid,
		    0);
	m.hdr.status = status;
	assert_int_equal(sa_cpi_mad_encode(&m, &cpi, out), SA_MAD_SIZE);
	sa_client_recv(sa, sent[i].port, out, sizeof(out), now);
}

static struct sa_client *setup_client(const struct sa_client_config *cfg)
{
	struct sa_client *sa;

	n_sent = 0;
	send_rc = 0;
	sa = sa_client_new(cfg, &ops, NULL);
	assert_non_null(sa);
	assert_int_equal(sa_client_port_set(sa, PORT, SM_LID, 2, 5, 0), 0);
	return sa;
}

/* The port's ClassPortInfo Get goes to the SM; its answer is kept. */
static void test_cpi_first(void **state)
{
	struct sa_client *sa = setup_client(NULL);
	struct sa_port_view v;
	struct sa_msg m;

	(void)state;
	assert_int_equal(n_sent, 1);
	decode_sent(0, &m);
	assert_int_equal(m.rec, SA_REC_CLASS_PORT_INFO);
	assert_int_equal(m.hdr.method, SA_METHOD_GET);
	assert_int_equal(sent[0].port, PORT);
	assert_int_equal(sent[0].to.lid, SM_LID);
	assert_int_equal(sent[0].to.sl, 2);
	assert_int_equal(sent[0].to.qpn, 1);
	assert_int_equal(sent[0].to.qkey, SA_QP1_QKEY);
	assert_int_equal(sent[0].to.pkey_index, 5);
	assert_int_equal(sa_client_port_view(sa, PORT, &v), 0);
	assert_int_equal(v.resp_time_value, 0xff);
	/* RespTimeValue 20: 4.096 us * 2^20 = 4.3 s, waited twice. */
	answer_cpi(sa, 0, 20, 0, 0, 0, 1 * MS);
	assert_int_equal(sa_client_port_view(sa, PORT, &v), 0);
	assert_int_equal(v.resp_time_value, 20);
	assert_int_equal(v.in_flight, 0);
	assert_int_equal(sa_client_next_due(sa), 0);
	sa_client_free(sa);
}

static void test_path_answered(void **state)
{
	struct sa_client *sa = setup_client(NULL);
	struct sa_path_want w = want();
	struct sa_path_rec r = path_rec(9);
	struct answer a = { 0 };
	struct sa_msg m;
	unsigned int i;

	(void)state;
	answer_cpi(sa, 0, 16, 0, 0, 0, 0);
	assert_true(sa_client_path(sa, PORT, &w, on_path, &a, 0) > 0);
	i = last_of(SA_REC_PATH_REC);
	decode_sent(i, &m);
	assert_int_equal(m.hdr.method, SA_METHOD_GET_TABLE);
	assert_int_equal(m.sa.comp_mask,
			 SA_PR_COMP_DGID | SA_PR_COMP_SGID | SA_PR_COMP_PKEY |
				 SA_PR_COMP_NUMB_PATH | SA_PR_COMP_REVERSIBLE);
	/* RespTimeValue 16 (0.27 s, twice: 537 ms) is above the least. */
	assert_int_equal(sent[i].timeout_ms, 537);
	/* A Get answer (wrong method), and a wrong TID: not ours. */
	answer_cpi(sa, i, 16, 0, 0, 0, 0);
	assert_int_equal(a.calls, 0);
	answer_table(sa, i, &r, 1, 0, 1 * MS);
	assert_int_equal(a.calls, 1);
	assert_int_equal(a.status, 0);
	assert_int_equal(a.n, 1);
	assert_int_equal(a.recs[0].dlid, 9);
	assert_int_equal(a.recs[0].sl, 4);
	/* The same answer again: a duplicate, counted, not called back. */
	answer_table(sa, i, &r, 1, 0, 2 * MS);
	assert_int_equal(a.calls, 1);
	assert_int_equal(sa_client_counters(sa)->rx_unmatched, 2);
	assert_int_equal(sa_client_counters(sa)->answered, 1);
	assert_int_equal(sa_client_counters(sa)->in_flight, 0);
	sa_client_free(sa);
}

/* numb_path 2: the records the callback gets skip the unusable ones. */
static void test_path_two_records(void **state)
{
	struct sa_client *sa = setup_client(NULL);
	struct sa_path_want w = want();
	struct sa_path_rec r[3] = { path_rec(9), path_rec(0), path_rec(10) };
	struct answer a = { 0 };
	struct sa_msg m;

	(void)state;
	w.numb_path = 2;
	assert_true(sa_client_path(sa, PORT, &w, on_path, &a, 0) > 0);
	decode_sent(last_of(SA_REC_PATH_REC), &m);
	assert_true(m.sa.comp_mask & SA_PR_COMP_NUMB_PATH);
	answer_table(sa, last_of(SA_REC_PATH_REC), r, 3, 0, 0);
	assert_int_equal(a.status, 0);
	assert_int_equal(a.n, 2);
	assert_int_equal(a.recs[0].dlid, 9);
	assert_int_equal(a.recs[1].dlid, 10);
	sa_client_free(sa);
}

/* No answer: retries (each a new TID) at the timeout, then -ETIMEDOUT. */
static void test_timeout_retries(void **state)
{
	struct sa_client_config cfg = { .timeout_ms = 100, .retries = 2 };
	struct sa_client *sa = setup_client(&cfg);
	struct sa_path_want w = want();
	struct answer a = { 0 };
	struct sa_msg m1, m2;
	unsigned int first;
	uint64_t t = 0;

	(void)state;
	answer_cpi(sa, 0, 0, 0, 0, 0, 0);
	assert_true(sa_client_path(sa, PORT, &w, on_path, &a, t) > 0);
	first = n_sent - 1;
	assert_int_equal(sent[first].timeout_ms, 100);
	assert_int_equal(sa_client_next_due(sa), 100 * MS);
	sa_client_tick(sa, 99 * MS);
	assert_int_equal(n_sent, first + 1);
	sa_client_tick(sa, 100 * MS);
	assert_int_equal(n_sent, first + 2);
	decode_sent(first, &m1);
	decode_sent(first + 1, &m2);
	assert_true((uint32_t)m1.hdr.tid != (uint32_t)m2.hdr.tid);
	/* A late answer to the first attempt matches nothing. */
	{
		struct sa_path_rec r = path_rec(9);

		answer_table(sa, first, &r, 1, 0, 150 * MS);
	}
	assert_int_equal(a.calls, 0);
	sa_client_tick(sa, 200 * MS);
	assert_int_equal(n_sent, first + 3);
	sa_client_tick(sa, 300 * MS);
	assert_int_equal(a.calls, 1);
	assert_int_equal(a.status, -ETIMEDOUT);
	assert_int_equal(sa_client_counters(sa)->timeouts, 3);
	assert_int_equal(sa_client_counters(sa)->failed, 1);
	assert_int_equal(sa_client_next_due(sa), 0);
	sa_client_free(sa);
}

/* BUSY: wait (doubling), ask again; too many: -EBUSY. */
static void test_busy(void **state)
{
	struct sa_client_config cfg = { .busy_retries = 2,
					.busy_backoff_ms = 10 };
	struct sa_client *sa = setup_client(&cfg);
	struct sa_path_want w = want();
	struct sa_path_rec r = path_rec(9);
	struct answer a = { 0 };
	unsigned int n;

	(void)state;
	assert_true(sa_client_path(sa, PORT, &w, on_path, &a, 0) > 0);
	answer_table(sa, last_of(SA_REC_PATH_REC), NULL, 0, SA_STATUS_BUSY, 0);
	n = n_sent;
	assert_int_equal(sa_client_next_due(sa), 10 * MS);
	sa_client_tick(sa, 9 * MS);
	assert_int_equal(n_sent, n);
	sa_client_tick(sa, 10 * MS);
	assert_int_equal(n_sent, n + 1);
	answer_table(sa, n, NULL, 0, SA_STATUS_BUSY, 10 * MS);
	assert_int_equal(sa_client_next_due(sa), 30 * MS);
	sa_client_tick(sa, 30 * MS);
	answer_table(sa, n + 1, &r, 1, 0, 31 * MS);
	assert_int_equal(a.calls, 1);
	assert_int_equal(a.status, 0);
	assert_int_equal(sa_client_counters(sa)->busy, 2);

	/* Busy three times with two allowed. */
	memset(&a, 0, sizeof(a));
	assert_true(sa_client_path(sa, PORT, &w, on_path, &a, 100 * MS) > 0);
	for (int k = 0; k < 3; k++) {
		answer_table(sa, n_sent - 1, NULL, 0, SA_STATUS_BUSY,
			     (100 + 100 * (uint64_t)k) * MS);
		sa_client_tick(sa, (150 + 100 * (uint64_t)k) * MS);
	}
	assert_int_equal(a.calls, 1);
	assert_int_equal(a.status, -EBUSY);
	sa_client_free(sa);
}

static void test_error_status(void **state)
{
	struct sa_client *sa = setup_client(NULL);
	struct sa_path_want w = want();
	struct answer a = { 0 };

	(void)state;
	assert_true(sa_client_path(sa, PORT, &w, on_path, &a, 0) > 0);
	answer_table(sa, last_of(SA_REC_PATH_REC), NULL, 0,
		     SA_ERR_NO_RECORDS << 8, 0);
	assert_int_equal(a.status, -ENOENT);
	assert_int_equal(sa_client_counters(sa)->no_records, 1);

	memset(&a, 0, sizeof(a));
	assert_true(sa_client_path(sa, PORT, &w, on_path, &a, 0) > 0);
	answer_table(sa, last_of(SA_REC_PATH_REC), NULL, 0,
		     SA_ERR_REQ_INVALID_GID << 8, 0);
	assert_int_equal(a.status, -EPROTO);
	assert_non_null(strstr(a.why, "0x0500"));

	/* An empty table with status 0, as opensm answers a GetTable it
	 * has nothing for: no records too. */
	memset(&a, 0, sizeof(a));
	assert_true(sa_client_path(sa, PORT, &w, on_path, &a, 0) > 0);
	answer_table(sa, last_of(SA_REC_PATH_REC), NULL, 0, 0, 0);
	assert_int_equal(a.status, -ENOENT);
	assert_int_equal(sa_client_counters(sa)->no_records, 2);

	/* Success with only an unusable record (DLID 0). */
	memset(&a, 0, sizeof(a));
	{
		struct sa_path_rec r = path_rec(0);

		assert_true(sa_client_path(sa, PORT, &w, on_path, &a, 0) > 0);
		answer_table(sa, last_of(SA_REC_PATH_REC), &r, 1, 0, 0);
	}
	assert_int_equal(a.status, -ENOENT);
	sa_client_free(sa);
}

/* ClassPortInfo's RedirectLID moves later queries; a redirect status
 * moves a query in flight. */
static void test_redirect(void **state)
{
	struct sa_client *sa = setup_client(NULL);
	struct sa_path_want w = want();
	struct sa_path_rec r = path_rec(9);
	struct answer a = { 0 };
	struct sa_port_view v;
	unsigned int i;

	(void)state;
	answer_cpi(sa, 0, 0, 40, 0x123, 0, 0);
	assert_int_equal(sa_client_port_view(sa, PORT, &v), 0);
	assert_int_equal(v.dest.lid, 40);
	assert_int_equal(v.dest.qpn, 0x123);
	assert_true(sa_client_path(sa, PORT, &w, on_path, &a, 0) > 0);
	i = last_of(SA_REC_PATH_REC);
	assert_int_equal(sent[i].to.lid, 40);
	assert_int_equal(sent[i].to.qpn, 0x123);
	assert_int_equal(sent[i].to.qkey, SA_QP1_QKEY);
	answer_table(sa, i, &r, 1, 0, 0);
	assert_int_equal(a.status, 0);

	/* The redirected SA answers "redirect" with ClassPortInfo: go on
	 * to LID 50. */
	memset(&a, 0, sizeof(a));
	assert_true(sa_client_path(sa, PORT, &w, on_path, &a, 0) > 0);
	answer_cpi(sa, last_of(SA_REC_PATH_REC), 0, 50, 1, SA_STATUS_REDIRECT,
		   0);
	assert_int_equal(a.calls, 0);
	i = last_of(SA_REC_PATH_REC);
	assert_int_equal(sent[i].to.lid, 50);
	assert_int_equal(sent[i].to.qpn, 1);
	answer_table(sa, i, &r, 1, 0, 0);
	assert_int_equal(a.status, 0);
	assert_int_equal(sa_client_counters(sa)->redirects, 2);

	/* A redirect with no RedirectLID: -EPROTO. */
	memset(&a, 0, sizeof(a));
	assert_true(sa_client_path(sa, PORT, &w, on_path, &a, 0) > 0);
	answer_cpi(sa, last_of(SA_REC_PATH_REC), 0, 0, 0, SA_STATUS_REDIRECT,
		   0);
	assert_int_equal(a.status, -EPROTO);
	sa_client_free(sa);
}

/* SM change: queries go again to the new SM; port down fails them. */
static void test_sm_change_and_down(void **state)
{
	struct sa_client *sa = setup_client(NULL);
	struct sa_path_want w = want();
	struct sa_path_rec r = path_rec(9);
	struct answer a = { 0 }, b = { 0 };
	unsigned int old;
	struct sa_port_view v;

	(void)state;
	answer_cpi(sa, 0, 0, 40, 1, 0, 0); /* redirected to 40 */
	assert_true(sa_client_path(sa, PORT, &w, on_path, &a, 0) > 0);
	old = last_of(SA_REC_PATH_REC);
	assert_int_equal(sa_client_port_set(sa, PORT, 8, 0, 5, 1 * MS), 0);
	/* Resent to the new SM (the redirection is forgotten), and a new
	 * ClassPortInfo Get. */
	assert_int_equal(sent[last_of(SA_REC_PATH_REC)].to.lid, 8);
	assert_int_equal(sent[last_of(SA_REC_CLASS_PORT_INFO)].to.lid, 8);
	assert_int_equal(sa_client_port_view(sa, PORT, &v), 0);
	assert_int_equal(v.resp_time_value, 0xff);
	/* The old SM's answer to the old attempt: unmatched. */
	answer_table(sa, old, &r, 1, 0, 2 * MS);
	assert_int_equal(a.calls, 0);
	answer_table(sa, last_of(SA_REC_PATH_REC), &r, 1, 0, 2 * MS);
	assert_int_equal(a.calls, 1);
	assert_int_equal(a.status, 0);

	/* The same SM again: nothing is sent. */
	old = n_sent;
	assert_int_equal(sa_client_port_set(sa, PORT, 8, 0, 5, 3 * MS), 0);
	assert_int_equal(n_sent, old);

	assert_true(sa_client_path(sa, PORT, &w, on_path, &b, 0) > 0);
	sa_client_port_down(sa, PORT, 4 * MS);
	assert_int_equal(b.calls, 1);
	assert_int_equal(b.status, -ENETDOWN);
	/* Down: no SM until the port is set again. */
	errno = 0;
	assert_int_equal(sa_client_path(sa, PORT, &w, on_path, &b, 0), 0);
	assert_int_equal(errno, ENETUNREACH);
	errno = 0;
	assert_int_equal(sa_client_path(sa, PORT + 1, &w, on_path, &b, 0), 0);
	assert_int_equal(errno, ENETUNREACH);
	sa_client_free(sa);
}

static void test_cancel_and_bound(void **state)
{
	struct sa_client_config cfg = { .max_queries = 3 };
	struct sa_client *sa = setup_client(&cfg); /* CPI: one in flight */
	struct sa_path_want w = want();
	struct sa_path_rec r = path_rec(9);
	struct answer a = { 0 }, b = { 0 };
	uint64_t h;

	(void)state;
	h = sa_client_path(sa, PORT, &w, on_path, &a, 0);
	assert_true(h > 0);
	assert_true(sa_client_path(sa, PORT, &w, on_path, &b, 0) > 0);
	errno = 0;
	assert_int_equal(sa_client_path(sa, PORT, &w, on_path, &b, 0), 0);
	assert_int_equal(errno, ENOBUFS);
	sa_client_cancel(sa, h);
	sa_client_cancel(sa, 9999);
	answer_table(sa, n_sent - 2, &r, 1, 0, 0); /* the cancelled one */
	assert_int_equal(a.calls, 0);
	sa_client_tick(sa, 10000 * MS);
	assert_int_equal(a.calls, 0);
	sa_client_free(sa); /* b in flight: not called back, not leaked */
	assert_int_equal(b.calls, 0);
}

/* A malformed MAD is counted; a failed send still times out and retries. */
static void test_malformed_and_send_error(void **state)
{
	struct sa_client_config cfg = { .timeout_ms = 10, .retries = 1 };
	struct sa_client *sa = setup_client(&cfg);
	struct sa_path_want w = want();
	struct answer a = { 0 };
	uint8_t junk[SA_MAD_SIZE] = { 1, 3, 2, 0x81 };

	(void)state;
	sa_client_recv(sa, PORT, junk, 100, 0);
	assert_int_equal(sa_client_counters(sa)->rx_malformed, 1);
	send_rc = -EIO;
	assert_true(sa_client_path(sa, PORT, &w, on_path, &a, 0) > 0);
	sa_client_tick(sa, 10 * MS);
	sa_client_tick(sa, 20 * MS);
	assert_int_equal(a.status, -ETIMEDOUT);
	assert_true(sa_client_counters(sa)->send_errors >= 2);
	sa_client_free(sa);
}

/* By LID: DLID and SLID asked, not the GIDs. */
static void test_by_lid(void **state)
{
	struct sa_client *sa = setup_client(NULL);
	struct sa_path_want w;
	struct answer a = { 0 };
	struct sa_msg m;
	struct sa_path_rec t;

	(void)state;
	memset(&w, 0, sizeof(w));
	w.dlid = 9;
	w.slid = 1;
	assert_true(sa_client_path(sa, PORT, &w, on_path, &a, 0) > 0);
	decode_sent(last_of(SA_REC_PATH_REC), &m);
	assert_int_equal(m.sa.comp_mask, SA_PR_COMP_DLID | SA_PR_COMP_SLID |
						 SA_PR_COMP_NUMB_PATH |
						 SA_PR_COMP_REVERSIBLE);
	assert_int_equal(sa_msg_path_rec(&m, 0, &t), 0);
	assert_int_equal(t.dlid, 9);
	assert_int_equal(t.slid, 1);
	sa_client_free(sa);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpi_first),
		cmocka_unit_test(test_path_answered),
		cmocka_unit_test(test_path_two_records),
		cmocka_unit_test(test_timeout_retries),
		cmocka_unit_test(test_busy),
		cmocka_unit_test(test_error_status),
		cmocka_unit_test(test_redirect),
		cmocka_unit_test(test_sm_change_and_down),
		cmocka_unit_test(test_cancel_and_bound),
		cmocka_unit_test(test_malformed_and_send_error),
		cmocka_unit_test(test_by_lid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
