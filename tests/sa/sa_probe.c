// SPDX-License-Identifier: MIT
/*
 * sa_probe: one PathRecord query through the daemon's SA client
 * (daemon/sa_client.h) over libibumad, driven by a poll(2) loop: the
 * loop that works under ibsim's umad2sim, which emulates poll(2) on its
 * own descriptors and has no epoll (so the daemon's libev loop is not
 * used there). tests/sa/opensm.sh runs it against opensm on ibsim and
 * compares what it prints with saquery's answer to the same query.
 *
 *   sa_probe [--ca NAME] [--port N] (--dgid GID | --dlid LID [--slid LID])
 *            [--pkey PKEY] [--no-rmpp] [--rmpp-version V]
 *            [--timeout-ms MS] [--retries N]
 *
 * --dgid asks DGID + SGID (the port's GID: subnet prefix + port GUID),
 * --dlid asks DLID (+ SLID when given); both ask NumbPath 1 and
 * Reversible 1, the query sa_path_query() builds. --no-rmpp decodes
 * answers with SA_DECODE_NO_RMPP (ibsim has no RMPP layer). --timeout-ms
 * (default 500) and --retries (default 3; 0 is the client's default too)
 * go to struct sa_client_config; --rmpp-version (default 1) to
 * umad_register (umad2sim accepts any value and ignores it).
 *
 * Prints the port's facts, the query, every SA MAD received decoded with
 * sa_msg_dump() (the last ClassPortInfo and the last PathRecord answer,
 * raw as they arrived), the records the callback got ("record 0 dlid:
 * 0x0005", one row a line, every PathRecord row by its sa_fields.def
 * name), the SA client's counters, and a last line "result: ...".
 *
 * Exit status: 0 records; 1 another SA client error (-EPROTO, -EBUSY,
 * -ENETDOWN, ...); 2 usage; 3 no records (-ENOENT: ERR_NO_RECORDS or an
 * answer without a usable record); 4 no answer (-ETIMEDOUT); 5 the port
 * could not be opened or queried (umad).
 */
#include "sa_client.h"
#include "sa_mad.h"
#include "sa_path.h"

#include <infiniband/umad.h>

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
	EXIT_RECORDS = 0,
	EXIT_ERROR = 1,
	EXIT_USAGE = 2,
	EXIT_NO_RECORDS = 3,
	EXIT_TIMEOUT = 4,
	EXIT_UMAD = 5,
};

#define MAX_RECS 8
/* A reassembled table can be longer than one MAD. */
#define RECV_MAD_MAX 65536

struct saved_mad {
	uint8_t *buf;
	size_t len;
	bool have;
};

struct probe {
	int fd;
	int agent;
	uint16_t port_num;
	unsigned int decode_flags;
	void *send_buf;
	/* The callback's answer. */
	bool done;
	int status;
	unsigned int nrec;
	struct sa_path_rec recs[MAX_RECS];
	char why[256];
	/* The last SA MADs received, as they arrived. */
	struct saved_mad cpi;
	struct saved_mad path;
	struct saved_mad other;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sa_probe [--ca NAME] [--port N] (--dgid GID | --dlid "
		"LID [--slid LID])\n"
		"                [--pkey PKEY] [--no-rmpp] [--rmpp-version V]\n"
		"                [--timeout-ms MS] [--retries N]\n"
		"exit: 0 records, 1 SA client error, 2 usage, 3 no records,\n"
		"      4 no answer, 5 umad (port) error\n");
}

static int send_mad(void *ctx, uint16_t port, const struct sa_dest *to,
		    const uint8_t mad[SA_MAD_SIZE], unsigned int timeout_ms)
{
	struct probe *p = ctx;
	int rc;

	(void)port;
	memset(p->send_buf, 0, umad_size() + SA_MAD_SIZE);
	memcpy(umad_get_mad(p->send_buf), mad, SA_MAD_SIZE);
	umad_set_addr(p->send_buf, to->lid, (int)to->qpn, to->sl,
		      (int)to->qkey);
	umad_set_pkey(p->send_buf, to->pkey_index);
	rc = umad_send(p->fd, p->agent, p->send_buf, SA_MAD_SIZE,
		       (int)timeout_ms, 0);
	if (rc < 0) {
		fprintf(stderr, "sa_probe: umad_send: %s\n",
			strerror(errno ? errno : -rc));
		return errno ? -errno : rc;
	}
	return 0;
}

static void on_path(void *ctx, int status, const struct sa_path_rec *recs,
		    unsigned int n, const char *why)
{
	struct probe *p = ctx;

	p->done = true;
	p->status = status;
	p->nrec = n < MAX_RECS ? n : MAX_RECS;
	if (p->nrec)
		memcpy(p->recs, recs, p->nrec * sizeof(recs[0]));
	snprintf(p->why, sizeof(p->why), "%s", why ? why : "");
}

static void save_mad(struct saved_mad *s, const uint8_t *mad, size_t len)
{
	memcpy(s->buf, mad, len);
	s->len = len;
	s->have = true;
}

/* Keep a copy of every SA MAD as it arrived (by attribute), then hand it
 * to the client. */
static void recv_one(struct probe *p, struct sa_client *sa, const uint8_t *mad,
		     size_t len)
{
	uint16_t attr = len >= 18 ? (uint16_t)(mad[16] << 8 | mad[17]) : 0;

	if (len >= 2 && mad[1] != SA_MGMT_CLASS)
		return;
	if (attr == SA_ATTR_PATH_REC)
		save_mad(&p->path, mad, len);
	else if (attr == SA_ATTR_CLASS_PORT_INFO)
		save_mad(&p->cpi, mad, len);
	else
		save_mad(&p->other, mad, len);
	sa_client_recv(sa, p->port_num, mad, len, mono_ns());
}

/* Drain the descriptor: umad_recv until nothing is queued. */
static int drain(struct probe *p, struct sa_client *sa, void *rbuf)
{
	for (;;) {
		int len = RECV_MAD_MAX;
		int rc = umad_recv(p->fd, rbuf, &len, 0);

		if (rc < 0) {
			if (errno == EWOULDBLOCK || errno == EAGAIN ||
			    rc == -EWOULDBLOCK)
				return 0;
			fprintf(stderr, "sa_probe: umad_recv: %s\n",
				strerror(errno ? errno : -rc));
			return -1;
		}
		/* A send that timed out in the kernel (ETIMEDOUT) comes
		 * back with a status: the SA client times out itself. */
		if (umad_status(rbuf))
			continue;
		if (len > 0)
			recv_one(p, sa, umad_get_mad(rbuf), (size_t)len);
	}
}

static void print_gid(const char *label, const uint8_t gid[16])
{
	printf("%s", label);
	for (unsigned int i = 0; i < 16; i += 2)
		printf("%s%02x%02x", i ? ":" : "", gid[i], gid[i + 1]);
	printf("\n");
}

static void dump_mad(const char *what, const struct saved_mad *s,
		     unsigned int flags)
{
	struct sa_msg m;
	struct sa_fault f;
	static char text[65536];

	if (!s->have)
		return;
	printf("== %s (%zu bytes)\n", what, s->len);
	if (sa_mad_decode(s->buf, s->len, flags, &m, &f)) {
		printf("malformed SA MAD: %s, field %s (value 0x%" PRIx64 ")\n",
		       sa_fault_str(f.code), f.field ? f.field : "-", f.value);
		for (size_t i = 0; i < s->len; i++)
			printf("%02x%s", s->buf[i],
			       (i % 16 == 15 || i + 1 == s->len) ? "\n" : " ");
		return;
	}
	sa_msg_dump(&m, text, sizeof(text));
	fputs(text, stdout);
	if (f.code != SA_FAULT_NONE)
		printf("note: %s, field %s\n", sa_fault_str(f.code),
		       f.field ? f.field : "-");
}

/* Every PathRecord row by its sa_fields.def name, one a line. */
static void print_rec(unsigned int i, const struct sa_path_rec *r)
{
	const struct sa_rec_desc *d = sa_rec_desc(SA_REC_PATH_REC);

	for (unsigned int k = 0; k < d->nfields; k++) {
		const struct cm_field_desc *f = &d->fields[k];
		char label[64];

		if (f->kind == CM_KIND_rsvd)
			continue;
		snprintf(label, sizeof(label), "record %u %s: ", i, f->name);
		if (f->kind == CM_KIND_bytes) {
			print_gid(label, (const uint8_t *)r + f->offset);
			continue;
		}
		if (f->width >= 16)
			printf("%s0x%0*" PRIx64 "\n", label,
			       (int)((f->width + 3) / 4), cm_field_load(r, f));
		else
			printf("%s%" PRIu64 "\n", label, cm_field_load(r, f));
	}
}

static void print_counters(const struct sa_client_counters *c)
{
	printf("== counters\n");
#define C(name) printf("%s: %" PRIu64 "\n", #name, c->name)
	C(queries);
	C(answered);
	C(failed);
	C(sent);
	C(send_errors);
	C(timeouts);
	C(busy);
	C(redirects);
	C(sa_errors);
	C(no_records);
	C(rx);
	C(rx_malformed);
	C(rx_unmatched);
	C(cpi_queries);
	C(in_flight);
#undef C
}

static int parse_u(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 0);
	return (errno || end == s || *end || *out > max) ? -1 : 0;
}

/* The P_Key index to send with: the default partition's (full or
 * limited member), else 0. */
static uint16_t pkey_index_of(const umad_port_t *up, uint16_t want)
{
	for (unsigned int i = 0; i < up->pkeys_size; i++)
		if (up->pkeys[i] &&
		    ((up->pkeys[i] & 0x7fff) == (want & 0x7fff)))
			return (uint16_t)i;
	return 0;
}

static int run(struct probe *p, struct sa_client *sa, void *rbuf,
	       uint64_t limit_ns)
{
	uint64_t start = mono_ns();

	while (!p->done) {
		uint64_t now = mono_ns(), due = sa_client_next_due(sa);
		struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
		int ms = 1000;

		if (now - start > limit_ns) {
			fprintf(stderr,
				"sa_probe: no callback after %" PRIu64
				" ms: giving up\n",
				(now - start) / 1000000u);
			return -1;
		}
		if (due) {
			if (due <= now) {
				sa_client_tick(sa, now);
				continue;
			}
			ms = (int)((due - now + 999999u) / 1000000u);
		}
		if (poll(&pfd, 1, ms) < 0) {
			if (errno == EINTR)
				continue;
			perror("sa_probe: poll");
			return -1;
		}
		if ((pfd.revents & POLLIN) && drain(p, sa, rbuf))
			return -1;
		due = sa_client_next_due(sa);
		now = mono_ns();
		if (due && due <= now)
			sa_client_tick(sa, now);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ca", required_argument, NULL, 'c' },
		{ "port", required_argument, NULL, 'p' },
		{ "dgid", required_argument, NULL, 'g' },
		{ "dlid", required_argument, NULL, 'l' },
		{ "slid", required_argument, NULL, 's' },
		{ "pkey", required_argument, NULL, 'k' },
		{ "no-rmpp", no_argument, NULL, 'n' },
		{ "rmpp-version", required_argument, NULL, 'r' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "retries", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sa_client_config cfg = { 0 };
	struct sa_client_ops ops = { .send = send_mad };
	struct sa_path_want w = { 0 };
	struct probe p = { .fd = -1, .agent = -1 };
	const char *ca = NULL, *dgid = NULL;
	unsigned long v, port = 0, rmpp_version = 1;
	unsigned long timeout_ms = 500, retries = 3;
	bool have_dlid = false;
	umad_port_t up;
	struct sa_client *sa = NULL;
	void *rbuf = NULL;
	uint16_t pkey_index;
	uint64_t gid_prefix, guid, handle;
	int c, rc = EXIT_ERROR;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			ca = optarg;
			break;
		case 'p':
			if (parse_u(optarg, 255, &port))
				goto bad;
			break;
		case 'g':
			dgid = optarg;
			if (inet_pton(AF_INET6, optarg, w.dgid) != 1)
				goto bad;
			break;
		case 'l':
			if (parse_u(optarg, 0xffff, &v) || !v)
				goto bad;
			w.dlid = (uint16_t)v;
			have_dlid = true;
			break;
		case 's':
			if (parse_u(optarg, 0xffff, &v))
				goto bad;
			w.slid = (uint16_t)v;
			break;
		case 'k':
			if (parse_u(optarg, 0xffff, &v))
				goto bad;
			w.pkey = (uint16_t)v;
			break;
		case 'n':
			cfg.decode_flags |= SA_DECODE_NO_RMPP;
			break;
		case 'r':
			if (parse_u(optarg, 255, &rmpp_version))
				goto bad;
			break;
		case 't':
			if (parse_u(optarg, 600000, &timeout_ms) || !timeout_ms)
				goto bad;
			break;
		case 'R':
			if (parse_u(optarg, 100, &retries))
				goto bad;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (optind != argc || !!dgid == have_dlid)
		goto bad;

	if (umad_init() < 0) {
		fprintf(stderr, "sa_probe: umad_init failed\n");
		return EXIT_UMAD;
	}
	if (umad_get_port(ca, (int)port, &up) < 0) {
		fprintf(stderr, "sa_probe: umad_get_port(%s, %lu) failed\n",
			ca ? ca : "(first)", port);
		return EXIT_UMAD;
	}
	p.port_num = (uint16_t)up.portnum;
	gid_prefix = be64toh(up.gid_prefix);
	guid = be64toh(up.port_guid);
	for (unsigned int i = 0; i < 8; i++) {
		w.sgid[i] = (uint8_t)(gid_prefix >> (56 - 8 * i));
		w.sgid[8 + i] = (uint8_t)(guid >> (56 - 8 * i));
	}
	pkey_index = pkey_index_of(&up, w.pkey ? w.pkey : 0xffff);
	printf("port: ca %s port %d lid 0x%04x sm_lid 0x%04x sm_sl %u state %u "
	       "pkey_index %u\n",
	       up.ca_name, up.portnum, up.base_lid, up.sm_lid, up.sm_sl,
	       up.state, pkey_index);
	print_gid("port gid: ", w.sgid);
	w.numb_path = 1;
	if (have_dlid) {
		memset(w.sgid, 0, sizeof(w.sgid));
		printf("query: dlid 0x%04x slid 0x%04x\n", w.dlid, w.slid);
	} else {
		print_gid("query: dgid ", w.dgid);
	}

	p.fd = umad_open_port(up.ca_name, up.portnum);
	if (p.fd < 0) {
		fprintf(stderr, "sa_probe: umad_open_port(%s, %d): %s\n",
			up.ca_name, up.portnum, strerror(-p.fd));
		rc = EXIT_UMAD;
		goto out;
	}
	p.agent = umad_register(p.fd, SA_MGMT_CLASS, SA_CLASS_VERSION,
				(uint8_t)rmpp_version, NULL);
	if (p.agent < 0) {
		fprintf(stderr,
			"sa_probe: umad_register(class 0x03, version 2, rmpp "
			"%lu): %s\n",
			rmpp_version, strerror(-p.agent));
		rc = EXIT_UMAD;
		goto out;
	}
	printf("agent: %d (rmpp_version %lu)\n", p.agent, rmpp_version);

	p.send_buf = calloc(1, umad_size() + SA_MAD_SIZE);
	rbuf = calloc(1, umad_size() + RECV_MAD_MAX);
	p.cpi.buf = malloc(RECV_MAD_MAX);
	p.path.buf = malloc(RECV_MAD_MAX);
	p.other.buf = malloc(RECV_MAD_MAX);
	if (!p.send_buf || !rbuf || !p.cpi.buf || !p.path.buf || !p.other.buf) {
		fprintf(stderr, "sa_probe: out of memory\n");
		goto out;
	}
	p.decode_flags = cfg.decode_flags;
	cfg.timeout_ms = (unsigned int)timeout_ms;
	cfg.retries = (unsigned int)retries;
	sa = sa_client_new(&cfg, &ops, &p);
	if (!sa) {
		fprintf(stderr, "sa_probe: sa_client_new: out of memory\n");
		goto out;
	}
	if (sa_client_port_set(sa, p.port_num, (uint16_t)up.sm_lid,
			       (uint8_t)up.sm_sl, pkey_index, mono_ns()) < 0) {
		fprintf(stderr, "sa_probe: sa_client_port_set failed\n");
		goto out;
	}
	handle = sa_client_path(sa, p.port_num, &w, on_path, &p, mono_ns());
	if (!handle) {
		p.done = true;
		p.status = -errno;
		snprintf(p.why, sizeof(p.why), "sa_client_path: %s",
			 strerror(errno));
	}
	/* The client ends every query itself; this bound only catches a
	 * client that never calls back: every attempt, twice over. */
	if (!p.done &&
	    run(&p, sa, rbuf,
		2 * (retries + 1) * (timeout_ms + 5000) * 1000000ull) < 0)
		goto out;

	dump_mad("ClassPortInfo answer", &p.cpi, cfg.decode_flags);
	dump_mad("PathRecord answer", &p.path, cfg.decode_flags);
	dump_mad("other SA MAD", &p.other, cfg.decode_flags);
	printf("== records: %u\n", p.nrec);
	for (unsigned int i = 0; i < p.nrec; i++)
		print_rec(i, &p.recs[i]);
	print_counters(sa_client_counters(sa));
	if (p.status == 0) {
		printf("result: %u record%s\n", p.nrec, p.nrec == 1 ? "" : "s");
		rc = EXIT_RECORDS;
	} else {
		printf("result: error %d (%s): %s\n", p.status,
		       strerror(-p.status), p.why);
		rc = p.status == -ENOENT    ? EXIT_NO_RECORDS :
		     p.status == -ETIMEDOUT ? EXIT_TIMEOUT :
					      EXIT_ERROR;
	}
out:
	if (sa)
		sa_client_free(sa);
	if (p.agent >= 0)
		umad_unregister(p.fd, p.agent);
	if (p.fd >= 0)
		umad_close_port(p.fd);
	umad_release_port(&up);
	free(p.send_buf);
	free(rbuf);
	free(p.cpi.buf);
	free(p.path.buf);
	free(p.other.buf);
	return rc;
bad:
	usage(stderr);
	return EXIT_USAGE;
}
