// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the SA client (daemon/sa_client.c): what a hostile or
 * broken SA, or a fabric that reorders and duplicates, can send it.
 *
 * The input is a program of steps; each step's first byte says what:
 *   0  start a path query on port 1 or 2 (the next byte picks)
 *   1  the next up to 256 bytes arrive as an SA MAD on port 1, with the
 *      TID of a query in flight written in (the next byte picks which),
 *      so that answers reach the matching code, not only the TID check
 *   2  the same, the bytes as they are
 *   3  the clock moves by (next byte) x 16 ms, and the client ticks
 *   4  the SM of port 1 moves (a LID from the next byte; 0: no SM)
 *   5  port 2 goes down
 *   6  cancel a query in flight (the next byte picks)
 * Invariants: every query started is answered at most once, and exactly
 * once unless cancelled, by the time the client is freed or the clock has
 * run past every deadline; a callback's status is 0 with records, or a
 * negative errno without; the in-flight gauge counts what is in flight;
 * sends happen only to a port with an SM. ASan/UBSan catch the rest.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "sa_client.h"

#define MAXQ 64

struct q {
	uint64_t handle;
	int calls;
	bool cancelled;
};

static struct q qs[MAXQ];
static unsigned int nq;
static uint32_t last_tid[MAXQ];
static unsigned int ntid;
static uint16_t sm_lid[3];

static int fake_send(void *ctx, uint16_t port, const struct sa_dest *to,
		     const uint8_t mad[SA_MAD_SIZE], unsigned int timeout_ms)
{
	uint32_t tid;

	(void)ctx;
	(void)timeout_ms;
	FUZZ_CHECK(port == 1 || port == 2);
	FUZZ_CHECK(sm_lid[port] != 0);
	FUZZ_CHECK(to->lid != 0);
	memcpy(&tid, mad + 12, 4);
	last_tid[ntid++ % MAXQ] = tid;
	return 0;
}

static void on_path(void *ctx, int status, const struct sa_path_rec *recs,
		    unsigned int n, const char *why)
{
	struct q *q = ctx;

	FUZZ_CHECK(!q->cancelled);
	FUZZ_CHECK(q->calls == 0);
	q->calls++;
	if (status == 0) {
		FUZZ_CHECK(n >= 1 && n <= 2 && recs);
		for (unsigned int i = 0; i < n; i++)
			FUZZ_CHECK(sa_path_check(&recs[i]) == 0);
	} else {
		FUZZ_CHECK(status < 0 && n == 0 && why && *why);
	}
}

static unsigned int open_count(void)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < nq; i++)
		if (!qs[i].calls && !qs[i].cancelled)
			n++;
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct sa_client_ops ops = { .send = fake_send };
	const struct sa_client_config cfg = { .timeout_ms = 10,
					      .retries = 1,
					      .busy_retries = 2,
					      .busy_backoff_ms = 5,
					      .max_queries = 32 };
	struct sa_client *sa = sa_client_new(&cfg, &ops, NULL);
	uint64_t now = 1000000000ull;
	size_t i = 0;

	FUZZ_CHECK(sa);
	nq = ntid = 0;
	memset(qs, 0, sizeof(qs));
	sm_lid[1] = 1;
	sm_lid[2] = 2;
	FUZZ_CHECK(!sa_client_port_set(sa, 1, 1, 0, 0, now));
	FUZZ_CHECK(!sa_client_port_set(sa, 2, 2, 0, 0, now));
	while (i < size) {
		uint8_t op = data[i++] % 7;
		uint8_t arg = i < size ? data[i++] : 0;

		switch (op) {
		case 0: {
			struct sa_path_want w;
			uint16_t port = arg & 1 ? 2 : 1;
			uint64_t h;

			if (nq == MAXQ)
				break;
			memset(&w, 0, sizeof(w));
			w.dgid[0] = 0xfe;
			w.dgid[15] = arg;
			w.numb_path = (arg >> 1) & 1 ? 2 : 1;
			h = sa_client_path(sa, port, &w, on_path, &qs[nq], now);
			if (h)
				qs[nq++].handle = h;
			else
				FUZZ_CHECK(errno == ENETUNREACH ||
					   errno == ENOBUFS);
			break;
		}
		case 1:
		case 2: {
			uint8_t mad[SA_MAD_SIZE];
			size_t n =
				size - i < SA_MAD_SIZE ? size - i : SA_MAD_SIZE;

			memcpy(mad, data + i, n);
			i += n;
			if (op == 1 && n >= 16 && ntid)
				memcpy(mad + 12,
				       &last_tid[arg %
						 (ntid < MAXQ ? ntid : MAXQ)],
				       4);
			sa_client_recv(sa, 1, mad, n, now);
			break;
		}
		case 3:
			now += (uint64_t)arg * 16000000ull;
			sa_client_tick(sa, now);
			break;
		case 4:
			sm_lid[1] = arg;
			FUZZ_CHECK(!sa_client_port_set(sa, 1, arg, 0, 0, now));
			break;
		case 5:
			sa_client_port_down(sa, 2, now);
			sm_lid[2] = 0;
			break;
		case 6:
			if (nq) {
				struct q *q = &qs[arg % nq];

				sa_client_cancel(sa, q->handle);
				if (!q->calls)
					q->cancelled = true;
			}
			break;
		}
		FUZZ_CHECK(sa_client_counters(sa)->in_flight >= open_count());
	}
	/* Far past every deadline (an attempt waits at most 60 s, and a
	 * busy back-off at most 1 s): everything is answered. */
	for (int k = 0; k < 8 && open_count(); k++) {
		now += 61000000000ull;
		sa_client_tick(sa, now);
	}
	FUZZ_CHECK(open_count() == 0);
	sa_client_free(sa);
	return 0;
}

#ifdef FUZZ_STANDALONE
/* A query, then step bytes and an answer MAD appended to prog. */
static size_t step(uint8_t *prog, size_t at, uint8_t op, uint8_t arg,
		   const uint8_t *mad, size_t len)
{
	prog[at++] = op;
	prog[at++] = arg;
	if (mad) {
		memcpy(prog + at, mad, len);
		at += len;
	}
	return at;
}

static size_t answer(uint8_t *out, uint16_t status, bool redirect)
{
	struct sa_path_rec r;
	struct sa_msg m;

	memset(&r, 0, sizeof(r));
	r.dgid[0] = 0xfe;
	r.dlid = 9;
	r.slid = 1;
	r.mtu = 4;
	r.rate = 3;
	r.packet_life_time = 16;
	r.pkey = 0xffff;
	sa_msg_init(&m, SA_REC_PATH_REC, SA_METHOD_GET_TABLE_RESP, 0,
		    SA_PR_COMP_DGID | SA_PR_COMP_NUMB_PATH);
	m.hdr.status = status;
	if (redirect) {
		struct sa_class_port_info cpi = { .base_version = 1,
						  .class_version = 2,
						  .redirect_lid = 40,
						  .redirect_qp = 7,
						  .redirect_qkey =
							  SA_QP1_QKEY };

		sa_msg_init(&m, SA_REC_CLASS_PORT_INFO, SA_METHOD_GET_RESP, 0,
			    0);
		m.hdr.status = SA_STATUS_REDIRECT;
		return (size_t)sa_cpi_mad_encode(&m, &cpi, out);
	}
	if (!status) {
		m.sa.rmpp_version = SA_RMPP_VERSION;
		m.sa.rmpp_type = SA_RMPP_TYPE_DATA;
		m.sa.rmpp_flags = SA_RMPP_FLAG_ACTIVE | SA_RMPP_FLAG_FIRST |
				  SA_RMPP_FLAG_LAST;
		m.sa.segment_number = 1;
		m.sa.payload_length = SA_RMPP_PAYLOAD_HDR + SA_PATH_REC_SIZE;
		m.sa.attr_offset = SA_PATH_REC_SIZE / 8;
	}
	return (size_t)sa_path_mad_encode(&m, &r, status ? 0 : 1, out,
					  SA_MAD_SIZE);
}

void fuzz_write_seeds(void)
{
	uint8_t prog[4 * (2 + SA_MAD_SIZE)], mad[SA_MAD_SIZE];
	size_t n, at;

	/* Query 0 (port 1), answered: TID slot 1 (slot 0 is ClassPortInfo
	 * of port 1, slot 1 of port 2, then the query's). */
	n = answer(mad, 0, false);
	at = step(prog, 0, 0, 0, NULL, 0);
	at = step(prog, at, 1, 2, mad, n);
	fuzz_seed("answered", prog, at);
	/* BUSY, a tick past the back-off, then the answer. */
	n = answer(mad, SA_STATUS_BUSY, false);
	at = step(prog, 0, 0, 0, NULL, 0);
	at = step(prog, at, 1, 2, mad, n);
	at = step(prog, at, 3, 1, NULL, 0);
	n = answer(mad, 0, false);
	at = step(prog, at, 1, 3, mad, n);
	fuzz_seed("busy-then-answer", prog, at);
	/* A redirect, then no records. */
	n = answer(mad, 0, true);
	at = step(prog, 0, 0, 0, NULL, 0);
	at = step(prog, at, 1, 2, mad, n);
	n = answer(mad, SA_ERR_NO_RECORDS << 8, false);
	at = step(prog, at, 1, 3, mad, n);
	fuzz_seed("redirect-no-records", prog, at);
	/* An SM move and a port down with queries in flight; a cancel. */
	at = step(prog, 0, 0, 0, NULL, 0);
	at = step(prog, at, 0, 1, NULL, 0);
	at = step(prog, at, 4, 9, NULL, 0);
	at = step(prog, at, 5, 0, NULL, 0);
	at = step(prog, at, 0, 0, NULL, 0);
	at = step(prog, at, 6, 2, NULL, 0);
	at = step(prog, at, 3, 200, NULL, 0);
	fuzz_seed("sm-move-down-cancel", prog, at);
}
#endif
