// SPDX-License-Identifier: MIT
/* Shared by the rxe test programs; see rxe_common.h. */
#include "rxe_common.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

int rxe_failures;

double rxe_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int64_t rxe_counter(struct cmc_channel *ch, const char *name)
{
	struct cmc_counter c[CMC_COUNTERS_BATCH_MAX];
	uint64_t cursor = 0;
	int n;

	do {
		n = cmc_counters(ch, CMC_COUNTERS_GLOBAL, NULL, 0, &cursor, c);
		if (n < 0)
			return -1;
		for (int i = 0; i < n; i++)
			if (!strcmp(c[i].name, name))
				return (int64_t)c[i].value;
	} while (cursor);
	return -1;
}

struct cmc_event *rxe_next_event(struct cmc_channel *ch, struct cmc_id *id,
				 int ms)
{
	struct cmc_event *ev;
	int r;

	for (;;) {
		r = id ? cmc_get_event_id(ch, id, &ev, ms) :
			 cmc_get_event(ch, &ev, ms);
		if (r)
			return NULL;
		if (ev->type != CMC_EVENT_MRA_RECEIVED)
			return ev;
		cmc_ack_event(ev);
	}
}

struct cmc_event *rxe_expect(struct cmc_channel *ch, struct cmc_id *id,
			     enum cmc_event_type type, int ms, const char *what)
{
	struct cmc_event *ev = rxe_next_event(ch, id, ms);

	if (!ev) {
		CHECK(0, "%s: want %s, got nothing within %d ms", what,
		      cmc_event_str(type), ms);
		return NULL;
	}
	if (ev->type != type) {
		CHECK(0, "%s: want %s, got %s (status %d)", what,
		      cmc_event_str(type), cmc_event_str(ev->type), ev->status);
		cmc_ack_event(ev);
		return NULL;
	}
	printf("  %s: %s\n", what, cmc_event_str(type));
	return ev;
}

void rxe_conn_param(struct cmc_conn_param *p, uint32_t qpn)
{
	memset(p, 0, sizeof(*p));
	p->qp_num = qpn;
	p->start_psn = (uint32_t)lrand48() & 0xffffff;
	p->retry_count = 7;
	p->rnr_retry_count = 7;
}

void rxe_accept_param(struct cmc_accept_param *ap, uint32_t qpn)
{
	memset(ap, 0, sizeof(*ap));
	ap->qp_num = qpn;
	ap->start_psn = (uint32_t)lrand48() & 0xffffff;
	ap->rnr_retry_count = 7;
}

void rxe_loopback_addrs(struct sockaddr_in *dst, struct sockaddr_in *src,
			uint16_t port)
{
	memset(dst, 0, sizeof(*dst));
	memset(src, 0, sizeof(*src));
	dst->sin_family = src->sin_family = AF_INET;
	dst->sin_port = htons(port);
	inet_pton(AF_INET, "127.0.0.1", &dst->sin_addr);
	inet_pton(AF_INET, "127.0.0.1", &src->sin_addr);
}

int rxe_accept_establish(struct cmc_channel *sv, struct cmc_id *sid,
			 uint32_t qpn, struct cmc_channel *cl,
			 struct cmc_id **cid, int ms, const char *what)
{
	struct cmc_accept_param ap;
	struct cmc_event *ev;
	int r;

	rxe_accept_param(&ap, qpn);
	r = cmc_accept(sid, &ap);
	CHECK(!r, "%s: accept: %s", what, cmc_strerror(r));
	ev = rxe_expect(cl, *cid, CMC_EVENT_REP_RECEIVED, ms, what);
	if (!ev)
		return -1;
	*cid = ev->id;
	cmc_ack_event(ev);
	r = cmc_rtu(*cid, NULL, 0);
	CHECK(!r, "%s: rtu: %s", what, cmc_strerror(r));
	ev = rxe_expect(sv, sid, CMC_EVENT_ESTABLISHED, ms, what);
	if (!ev)
		return -1;
	cmc_ack_event(ev);
	return 0;
}
