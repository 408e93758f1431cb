// SPDX-License-Identifier: MIT
/*
 * cmd's librdmacm: the process-wide state. The daemon's channel (opened
 * on first need, asynchronous mode), the reader thread that drains it, the
 * devices shared by every id (one verbs context and PD per device, as
 * librdmacm shares them), rdma_get_devices()/rdma_free_devices(), and the
 * library's one log line per problem.
 */
#include "rc_int.h"

#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "rdmacm.h"

struct rc_proc rc = {
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.wake_fd = -1,
	.log_level = -1,
};

void rc_log(int level, const char *fmt, ...)
{
	va_list ap;

	if (rc.log_level < 0) {
		const char *e = getenv("CMD_RDMACM_DEBUG");

		rc.log_level = e && *e ? atoi(e) : 1;
	}
	if (level > rc.log_level)
		return;
	fputs("cmd-rdmacm: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ------------------------------------------------------------------ */
/* The reader thread */

void rc_wake_reader(void)
{
	if (rc.wake_fd >= 0)
		eventfd_write(rc.wake_fd, 1);
}

static void *rc_reader(void *arg)
{
	struct pollfd *fds = NULL;
	unsigned int cap = 0;
	bool daemon = true;

	(void)arg;
	for (;;) {
		struct cmc_event *e;
		unsigned int n = 0, want = 2;
		int r;

		RC_LOCK();
		for (struct rc_chan *c = rc.chans; c; c = c->knext)
			want += c->kch ? 1 : 0;
		if (want > cap) {
			struct pollfd *m = realloc(fds, want * sizeof(*fds));

			if (m) {
				fds = m;
				cap = want;
			}
		}
		fds[n++] =
			(struct pollfd){ .fd = rc.wake_fd, .events = POLLIN };
		fds[n++] = (struct pollfd){ .fd = daemon ? cmc_fd(rc.ch) : -1,
					    .events = POLLIN };
		rc_kern_poll_fds(fds, &n, cap);
		/* A request queued by the app must go out before we sleep. */
		if (daemon)
			cmc_flush(rc.ch);
		RC_UNLOCK();

		if (poll(fds, n, -1) < 0 && errno != EINTR)
			break;
		if (fds[0].revents & POLLIN) {
			eventfd_t v;

			eventfd_read(rc.wake_fd, &v);
		}
		RC_LOCK();
		while (daemon && (r = cmc_get_event(rc.ch, &e, 0)) == 0) {
			rc_on_daemon_event(e);
			cmc_ack_event(e);
		}
		if (daemon && r != -EAGAIN) {
			/* The kernel's ids carry on; cmd's are dead. */
			rc_log(1,
			       "the cmd daemon's channel failed: %s; ids on "
			       "cmd's devices no longer work",
			       cmc_strerror(r));
			daemon = false;
		}
		rc_kern_drain();
		if (daemon)
			cmc_flush(rc.ch);
		RC_UNLOCK();
	}
	free(fds);
	return NULL;
}

/* Open the daemon's channel once. Called under rc.mu. */
int rc_daemon(void)
{
	int r;

	if (rc.opened)
		return rc.ch ? 0 : rc.open_err;
	rc.opened = true;
	r = cmc_open(NULL, NULL, &rc.ch);
	if (r == 0)
		r = cmc_set_async(rc.ch, 1);
	if (r == 0) {
		rc.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (rc.wake_fd < 0)
			r = -errno;
	}
	if (r == 0 && pthread_create(&rc.reader, NULL, rc_reader, NULL))
		r = -EAGAIN;
	if (r) {
		const char *sock = getenv("CMD_SOCKET");

		rc_log(1,
		       "cannot use the cmd daemon at %s: %s (is cmd running? "
		       "$CMD_SOCKET names its socket)",
		       sock && *sock ? sock : CMC_DEFAULT_SOCKET,
		       /* The socket's own error: "No such file or directory"
			* reads better here than libcmclient's id wording. */
		       r == -ENOENT || r == -ECONNREFUSED || r == -EACCES ?
			       strerror(-r) :
			       cmc_strerror(r));
		cmc_close(rc.ch);
		rc.ch = NULL;
		rc.open_err = r;
		return r;
	}
	pthread_detach(rc.reader);
	return 0;
}

/* Send what the application's calls queued (under rc.mu). */
void rc_flush(void)
{
	if (rc.ch)
		cmc_flush(rc.ch);
}

/* ------------------------------------------------------------------ */
/* The daemon's ports */

int rc_ports(void)
{
	uint64_t cursor = 0;
	int r;

	if (rc.ports_known)
		return 0;
	r = rc_devices();
	if (r)
		return r;
	r = rc_daemon();
	if (r)
		return r;
	r = cmc_ports(rc.ch, &cursor, rc.ports);
	if (r < 0)
		return r;
	rc.n_ports = (unsigned int)r;
	rc.ports_known = true;
	for (unsigned int i = 0; i < rc.n_ports; i++) {
		struct rc_dev *d = rc_dev_by_name(rc.ports[i].dev_name);

		if (d)
			d->cmd = true;
	}
	return 0;
}

/* Whether the daemon serves dev's port as RoCE (else IB, or not its). */
bool rc_port_is_roce(const char *dev, uint8_t port)
{
	for (unsigned int i = 0; i < rc.n_ports; i++) {
		const struct cmc_port_info *p = &rc.ports[i];

		if (p->port_num == port && !strcmp(p->dev_name, dev))
			return p->link_layer == CMC_LINK_ROCE;
	}
	return false;
}

/* The daemon's port and GID entry holding gid, or with gid NULL the
 * first served active RoCE port's first IPv4 GID (what the daemon itself
 * would pick for an IPv4 destination); NULL when there is none. */
const struct cmc_port_info *rc_port_gid(const union ibv_gid *gid,
					const struct cmc_port_gid **gp)
{
	for (unsigned int i = 0; i < rc.n_ports; i++) {
		const struct cmc_port_info *p = &rc.ports[i];

		if (!gid && (!p->up || p->link_layer != CMC_LINK_ROCE))
			continue;
		for (unsigned int g = 0; g < CMC_PORT_GIDS && g < p->n_gids;
		     g++)
			if (gid ? !memcmp(p->gids[g].gid, gid->raw, 16) :
				  rdmacm_gid_is_v4(p->gids[g].gid)) {
				*gp = &p->gids[g];
				return p;
			}
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Devices */

int rc_devices(void)
{
	int n = 0;

	if (rc.dev_list)
		return 0;
	rc.dev_list = ibv_get_device_list(&n);
	if (!rc.dev_list) {
		/* No verbs at all (no uverbs device): ids still work for
		 * CM-only programs on the daemon's (simulated) ports. */
		static struct ibv_device *none[1];

		rc.dev_list = none;
		n = 0;
	}
	rc.devs = calloc((size_t)n + 1, sizeof(*rc.devs));
	if (!rc.devs)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		rc.devs[i].dev = rc.dev_list[i];
		snprintf(rc.devs[i].name, sizeof(rc.devs[i].name), "%s",
			 ibv_get_device_name(rc.dev_list[i]));
	}
	rc.n_devs = n;
	return 0;
}

struct rc_dev *rc_dev_by_name(const char *name)
{
	for (int i = 0; i < rc.n_devs; i++)
		if (!strcmp(rc.devs[i].name, name))
			return &rc.devs[i];
	return NULL;
}

struct rc_dev *rc_dev_by_ctx(const struct ibv_context *ctx)
{
	for (int i = 0; i < rc.n_devs; i++)
		if (rc.devs[i].ctx && rc.devs[i].ctx == ctx)
			return &rc.devs[i];
	return NULL;
}

int rc_dev_open(struct rc_dev *d)
{
	struct ibv_device_attr a;

	if (d->ctx)
		return 0;
	/* A kernel-owned device: the system librdmacm's context, which its
	 * ids carry, so that the process has one context per device. */
	if (!d->cmd)
		d->ctx = rc_kern_ctx(d->name);
	if (!d->ctx)
		d->ctx = ibv_open_device(d->dev);
	if (!d->ctx)
		return -(errno ? errno : ENODEV);
	if (ibv_query_device(d->ctx, &a) == 0) {
		d->max_init_depth = (uint8_t)a.max_qp_init_rd_atom;
		d->max_resp_res = (uint8_t)a.max_qp_rd_atom;
	}
	return 0;
}

/* Put id on device d: verbs and pd as librdmacm sets them. */
int rc_dev_get(struct rc_id *id, struct rc_dev *d)
{
	int r;

	if (id->dev == d)
		return 0;
	rc_dev_put(id);
	r = rc_dev_open(d);
	if (r)
		return r;
	if (!d->pd && d->cmd) {
		d->pd = ibv_alloc_pd(d->ctx);
		if (!d->pd)
			return -(errno ? errno : ENOMEM);
	}
	d->refs++;
	id->dev = d;
	id->pub.verbs = d->ctx;
	if (d->pd)
		id->pub.pd = d->pd;
	return 0;
}

void rc_dev_put(struct rc_id *id)
{
	struct rc_dev *d = id->dev;

	if (!d)
		return;
	id->dev = NULL;
	if (--d->refs == 0 && d->pd) {
		/* As librdmacm: the shared PD goes with the last id; the
		 * context stays for rdma_get_devices() callers. */
		if (ibv_dealloc_pd(d->pd) == 0)
			d->pd = NULL;
	}
}

RC_EXPORT struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct ibv_context **list;
	int n = 0, r;

	RC_LOCK();
	rc_ports(); /* which are cmd's: the others take the kernel's context */
	r = rc_devices();
	list = r ? NULL : calloc((size_t)rc.n_devs + 1, sizeof(*list));
	for (int i = 0; list && i < rc.n_devs; i++)
		if (rc_dev_open(&rc.devs[i]) == 0)
			list[n++] = rc.devs[i].ctx;
	RC_UNLOCK();
	if (num_devices)
		*num_devices = list ? n : 0;
	if (!list)
		errno = r ? -r : ENOMEM;
	return list;
}

RC_EXPORT void rdma_free_devices(struct ibv_context **list)
{
	free(list);
}
