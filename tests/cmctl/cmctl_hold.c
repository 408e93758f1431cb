// SPDX-License-Identifier: MIT
/*
 * cmctl_hold: one established RC connection between two daemons on the
 * simulated fabric, held open for cmctl to look at.
 *
 *   cmctl_hold SERVER_SOCKET CLIENT_SOCKET LID|GID
 *
 * Listens on service id 0x1234 through SERVER_SOCKET, connects to it
 * from CLIENT_SOCKET over lid:LID (no GRH), or by GID when the argument
 * is one (it has a ':'; on IB the daemon asks the SA), with made-up QP
 * numbers
 * 0x000abc (client) and 0x000def (server), accepts, sends the RTU, waits
 * for the server's ESTABLISHED, prints "established" and holds the
 * connection until its standard input closes. Exit 0, or 1 with why.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmclient.h"

#define WAIT_MS 60000 /* a hang guard, not a bound on speed */
#define SERVICE_ID 0x1234

static int die(const char *what, int err)
{
	fprintf(stderr, "cmctl_hold: %s: %s\n", what, cmc_strerror(err));
	exit(1);
}

/* The next event on ch that is not an MRA (a slow peer may send one). */
static struct cmc_event *next(struct cmc_channel *ch, enum cmc_event_type want)
{
	struct cmc_event *ev;
	int rc;

	for (;;) {
		rc = cmc_get_event(ch, &ev, WAIT_MS);
		if (rc)
			die("event", rc);
		if (ev->type != CMC_EVENT_MRA_RECEIVED)
			break;
		cmc_ack_event(ev);
	}
	if (ev->type != want) {
		fprintf(stderr, "cmctl_hold: event %d, want %d\n", ev->type,
			want);
		exit(1);
	}
	return ev;
}

int main(int argc, char **argv)
{
	struct cmc_channel *srv, *cli;
	struct cmc_id *l, *c, *s;
	struct cmc_conn_param p;
	struct cmc_accept_param ap;
	struct cmc_event *ev;
	char buf[64];
	int rc;

	if (argc != 4) {
		fprintf(stderr, "usage: cmctl_hold SERVER_SOCKET "
				"CLIENT_SOCKET LID|GID\n");
		return 2;
	}
	if ((rc = cmc_open(argv[1], "hold-server", &srv)) ||
	    (rc = cmc_open(argv[2], "hold-client", &cli)))
		die("open", rc);
	if ((rc = cmc_create_id(srv, NULL, CMC_QP_RC, &l)) ||
	    (rc = cmc_listen(l, SERVICE_ID, ~0ull, 4, NULL)))
		die("listen", rc);
	if ((rc = cmc_create_id(cli, NULL, CMC_QP_RC, &c)))
		die("create", rc);
	memset(&p, 0, sizeof(p));
	p.service_id = SERVICE_ID;
	if (strchr(argv[3], ':')) {
		p.dst.family = CMC_AF_GID;
		if (inet_pton(AF_INET6, argv[3], p.dst.addr) != 1)
			die("GID", -EINVAL);
	} else {
		p.dst.family = CMC_AF_LID;
		p.dst.lid = (uint16_t)atoi(argv[3]);
	}
	p.src.kind = CMC_SEL_ANY;
	p.qp_num = 0xabc;
	p.start_psn = 1;
	p.retry_count = 7;
	p.rnr_retry_count = 7;
	p.local_cm_response_timeout = 20;
	p.remote_cm_response_timeout = 20;
	p.max_cm_retries = 15;
	if ((rc = cmc_connect(c, &p)))
		die("connect", rc);
	ev = next(srv, CMC_EVENT_REQ_RECEIVED);
	s = ev->id;
	memset(&ap, 0, sizeof(ap));
	ap.qp_num = 0xdef;
	ap.start_psn = 2;
	ap.rnr_retry_count = 7;
	if ((rc = cmc_accept(s, &ap)))
		die("accept", rc);
	cmc_ack_event(ev);
	ev = next(cli, CMC_EVENT_REP_RECEIVED);
	if ((rc = cmc_rtu(c, NULL, 0)))
		die("rtu", rc);
	cmc_ack_event(ev);
	ev = next(srv, CMC_EVENT_ESTABLISHED);
	cmc_ack_event(ev);
	printf("established\n");
	fflush(stdout);
	while (read(STDIN_FILENO, buf, sizeof(buf)) > 0)
		;
	cmc_close(cli);
	cmc_close(srv);
	return 0;
}
