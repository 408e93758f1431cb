// SPDX-License-Identifier: MIT
/*
 * cmd's librdmacm: ids on devices the kernel's CM owns go to the system's
 * librdmacm.
 *
 * It is loaded by path ($CMD_RDMACM_KERNEL, else the build's
 * RC_SYSTEM_LIBRDMACM) with RTLD_DEEPBIND, so that its calls to its own
 * rdma_* functions stay inside it rather than binding to ours. An id that
 * lands on a kernel-owned device (rdma_bind_addr, rdma_resolve_addr) gets a
 * kernel id ("kid") on a kernel event channel paired with its own channel;
 * every later call on the id is the kernel library's, and its events are
 * read by our reader thread (which polls the kernel channels too), copied
 * into our events and acked at once. A wildcard listener listens on both
 * CMs. The application sees one rdma_cm_id whose public fields mirror the
 * kernel id's (verbs: the kernel library's context for that device, the
 * one rdma_get_devices() returns).
 */
#include "rc_int.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#ifndef RC_SYSTEM_LIBRDMACM
#define RC_SYSTEM_LIBRDMACM "/usr/lib/x86_64-linux-gnu/librdmacm.so.1"
#endif

/* The system library's functions we call, by name. */
#define RC_KERN_FUNCS(X)                                                       \
	X(struct rdma_event_channel *, rdma_create_event_channel, (void))      \
	X(void, rdma_destroy_event_channel, (struct rdma_event_channel *))     \
	X(int, rdma_create_id,                                                 \
	  (struct rdma_event_channel *, struct rdma_cm_id **, void *,          \
	   enum rdma_port_space))                                              \
	X(int, rdma_destroy_id, (struct rdma_cm_id *))                         \
	X(int, rdma_bind_addr, (struct rdma_cm_id *, struct sockaddr *))       \
	X(int, rdma_resolve_addr,                                              \
	  (struct rdma_cm_id *, struct sockaddr *, struct sockaddr *, int))    \
	X(int, rdma_resolve_route, (struct rdma_cm_id *, int))                 \
	X(int, rdma_create_qp_ex,                                              \
	  (struct rdma_cm_id *, struct ibv_qp_init_attr_ex *))                 \
	X(void, rdma_destroy_qp, (struct rdma_cm_id *))                        \
	X(int, rdma_create_srq_ex,                                             \
	  (struct rdma_cm_id *, struct ibv_srq_init_attr_ex *))                \
	X(void, rdma_destroy_srq, (struct rdma_cm_id *))                       \
	X(int, rdma_connect, (struct rdma_cm_id *, struct rdma_conn_param *))  \
	X(int, rdma_listen, (struct rdma_cm_id *, int))                        \
	X(int, rdma_accept, (struct rdma_cm_id *, struct rdma_conn_param *))   \
	X(int, rdma_reject, (struct rdma_cm_id *, const void *, uint8_t))      \
	X(int, rdma_reject_ece, (struct rdma_cm_id *, const void *, uint8_t))  \
	X(int, rdma_notify, (struct rdma_cm_id *, enum ibv_event_type))        \
	X(int, rdma_disconnect, (struct rdma_cm_id *))                         \
	X(int, rdma_establish, (struct rdma_cm_id *))                          \
	X(int, rdma_get_cm_event,                                              \
	  (struct rdma_event_channel *, struct rdma_cm_event **))              \
	X(int, rdma_ack_cm_event, (struct rdma_cm_event *))                    \
	X(struct ibv_context **, rdma_get_devices, (int *))                    \
	X(void, rdma_free_devices, (struct ibv_context **))                    \
	X(int, rdma_set_option,                                                \
	  (struct rdma_cm_id *, int, int, void *, size_t))                     \
	X(int, rdma_migrate_id,                                                \
	  (struct rdma_cm_id *, struct rdma_event_channel *))                  \
	X(int, rdma_init_qp_attr,                                              \
	  (struct rdma_cm_id *, struct ibv_qp_attr *, int *))                  \
	X(int, rdma_set_local_ece, (struct rdma_cm_id *, struct ibv_ece *))    \
	X(int, rdma_get_remote_ece, (struct rdma_cm_id *, struct ibv_ece *))

struct rc_kops {
#define X(ret, name, args) ret(*name) args;
	RC_KERN_FUNCS(X)
#undef X
};

static struct rc_kops k;
static bool k_tried, k_ok;
static struct ibv_context **k_devs;
static int k_n_devs;

/* Load the system library once (under rc.mu). */
bool rc_kern_available(void)
{
	const char *path = getenv("CMD_RDMACM_KERNEL");
	void *h;

	if (k_tried)
		return k_ok;
	k_tried = true;
	if (!path || !*path)
		path = RC_SYSTEM_LIBRDMACM;
	if (!strcmp(path, "none"))
		return false;
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
	if (!h) {
		rc_log(2, "no system librdmacm for the kernel's devices: %s",
		       dlerror());
		return false;
	}
#define X(ret, name, args)                                                     \
	k.name = (ret(*) args)dlsym(h, #name);                                 \
	if (!k.name) {                                                         \
		rc_log(1, "%s has no %s: kernel devices not handed over",      \
		       path, #name);                                           \
		return false;                                                  \
	}
	RC_KERN_FUNCS(X)
#undef X
	k_devs = k.rdma_get_devices(&k_n_devs);
	if (!k_devs) {
		/* No rdma_ucm (/dev/infiniband/rdma_cm): the kernel's CM
		 * serves nothing from user space. */
		rc_log(2, "the system librdmacm has no devices (rdma_ucm not "
			  "loaded?): kernel devices not handed over");
		return false;
	}
	k_ok = true;
	return true;
}

/* The kernel library's context for a device, the one its ids carry. */
struct ibv_context *rc_kern_ctx(const char *dev_name)
{
	if (!rc_kern_available())
		return NULL;
	for (int i = 0; i < k_n_devs; i++)
		if (k_devs[i] &&
		    !strcmp(ibv_get_device_name(k_devs[i]->device), dev_name))
			return k_devs[i];
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Kernel ids */

static struct rdma_event_channel *rc_kern_chan(struct rc_chan *c)
{
	int fl;

	if (c->kch)
		return c->kch;
	c->kch = k.rdma_create_event_channel();
	if (!c->kch)
		return NULL;
	fl = fcntl(c->kch->fd, F_GETFL);
	fcntl(c->kch->fd, F_SETFL, fl | O_NONBLOCK);
	rc_wake_reader();
	return c->kch;
}

void rc_kern_chan_free(struct rc_chan *c)
{
	if (c->kch) {
		k.rdma_destroy_event_channel(c->kch);
		c->kch = NULL;
		rc_wake_reader();
	}
}

/* The public fields of id mirror its kernel id's. */
void rc_kern_sync(struct rc_id *id)
{
	struct rdma_cm_id *kid = id->kid;

	if (!kid)
		return;
	id->pub.verbs = kid->verbs;
	id->pub.qp = kid->qp;
	id->pub.route = kid->route;
	id->pub.port_num = kid->port_num;
	id->pub.send_cq_channel = kid->send_cq_channel;
	id->pub.send_cq = kid->send_cq;
	id->pub.recv_cq_channel = kid->recv_cq_channel;
	id->pub.recv_cq = kid->recv_cq;
	id->pub.srq = kid->srq;
	if (kid->pd)
		id->pub.pd = kid->pd;
}

/* Give id a kernel id (its first call on a kernel-owned device). */
int rc_kern_adopt(struct rc_id *id)
{
	struct rdma_event_channel *kch;

	if (id->kid)
		return 0;
	if (!rc_kern_available()) {
		rc_log(1,
		       "%s is the kernel CM's (cmd does not serve it) and "
		       "the system librdmacm cannot be used (see "
		       "CMD_RDMACM_DEBUG=2)",
		       id->dev ? id->dev->name : "the device");
		return -EADDRNOTAVAIL;
	}
	kch = rc_kern_chan(id->ch);
	if (!kch)
		return -errno;
	if (k.rdma_create_id(kch, &id->kid, id, id->pub.ps))
		return -errno;
	/* Options set before the id had a device. */
	if (id->tos_set)
		k.rdma_set_option(id->kid, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS,
				  &id->tos, sizeof(id->tos));
	if (id->ack_timeout_set)
		k.rdma_set_option(id->kid, RDMA_OPTION_ID,
				  RDMA_OPTION_ID_ACK_TIMEOUT, &id->ack_timeout,
				  sizeof(id->ack_timeout));
	if (id->reuseaddr) {
		int on = 1;

		k.rdma_set_option(id->kid, RDMA_OPTION_ID,
				  RDMA_OPTION_ID_REUSEADDR, &on, sizeof(on));
	}
	if (id->afonly_set) {
		int v = id->afonly;

		k.rdma_set_option(id->kid, RDMA_OPTION_ID,
				  RDMA_OPTION_ID_AFONLY, &v, sizeof(v));
	}
	return 0;
}

void rc_kern_destroy(struct rc_id *id)
{
	if (id->kid) {
		k.rdma_destroy_id(id->kid);
		id->kid = NULL;
	}
}

/* The calls, on ids that have a kernel id: -errno as rc_id.c wants. */
#define RC_K(call) ((call) ? -errno : 0)

int rc_kern_bind(struct rc_id *id, struct sockaddr *sa)
{
	int r = rc_kern_adopt(id);

	if (!r)
		r = RC_K(k.rdma_bind_addr(id->kid, sa));
	rc_kern_sync(id);
	return r;
}

int rc_kern_resolve_addr(struct rc_id *id, struct sockaddr *src,
			 struct sockaddr *dst, int timeout_ms)
{
	int r = rc_kern_adopt(id);

	if (!r)
		r = RC_K(k.rdma_resolve_addr(id->kid, src, dst, timeout_ms));
	rc_kern_sync(id);
	return r;
}

int rc_kern_listen(struct rc_id *id, int backlog)
{
	int r = rc_kern_adopt(id);

	/* A wildcard listener's kernel id is made here: bind it first. */
	if (!r && id->bound_any)
		r = RC_K(k.rdma_bind_addr(id->kid,
					  &id->pub.route.addr.src_addr));
	if (!r)
		r = RC_K(k.rdma_listen(id->kid, backlog));
	return r;
}

/* Every other call, by name: the kernel's verdict, fields synced. */
#define RC_KCALL(id, call)                                                     \
	({                                                                     \
		int r_ = RC_K(call);                                           \
		rc_kern_sync(id);                                              \
		r_;                                                            \
	})

int rc_kern_op(struct rc_id *id, enum rc_kern_opcode op, void *a, void *b,
	       size_t n)
{
	struct rdma_cm_id *kid = id->kid;

	switch (op) {
	case RC_KOP_RESOLVE_ROUTE:
		return RC_KCALL(id, k.rdma_resolve_route(kid, (int)n));
	case RC_KOP_CONNECT:
		return RC_KCALL(id, k.rdma_connect(kid, a));
	case RC_KOP_ACCEPT:
		return RC_KCALL(id, k.rdma_accept(kid, a));
	case RC_KOP_REJECT:
		return RC_KCALL(id, k.rdma_reject(kid, a, (uint8_t)n));
	case RC_KOP_REJECT_ECE:
		return RC_KCALL(id, k.rdma_reject_ece(kid, a, (uint8_t)n));
	case RC_KOP_NOTIFY:
		return RC_KCALL(id, k.rdma_notify(kid, (enum ibv_event_type)n));
	case RC_KOP_DISCONNECT:
		return RC_KCALL(id, k.rdma_disconnect(kid));
	case RC_KOP_ESTABLISH:
		return RC_KCALL(id, k.rdma_establish(kid));
	case RC_KOP_SET_OPTION: {
		const int *lv = b;

		return RC_KCALL(id, k.rdma_set_option(kid, lv[0], lv[1], a, n));
	}
	case RC_KOP_INIT_QP_ATTR:
		return RC_KCALL(id, k.rdma_init_qp_attr(kid, a, b));
	case RC_KOP_CREATE_QP:
		return RC_KCALL(id, k.rdma_create_qp_ex(kid, a));
	case RC_KOP_DESTROY_QP:
		k.rdma_destroy_qp(kid);
		rc_kern_sync(id);
		return 0;
	case RC_KOP_CREATE_SRQ:
		return RC_KCALL(id, k.rdma_create_srq_ex(kid, a));
	case RC_KOP_DESTROY_SRQ:
		k.rdma_destroy_srq(kid);
		rc_kern_sync(id);
		return 0;
	case RC_KOP_SET_ECE:
		return RC_KCALL(id, k.rdma_set_local_ece(kid, a));
	case RC_KOP_GET_ECE:
		return RC_KCALL(id, k.rdma_get_remote_ece(kid, a));
	case RC_KOP_MIGRATE: {
		struct rdma_event_channel *kch = rc_kern_chan(a);

		return kch ? RC_KCALL(id, k.rdma_migrate_id(kid, kch)) : -errno;
	}
	}
	return -EINVAL;
}

/* ------------------------------------------------------------------ */
/* Events (the reader thread, under rc.mu) */

void rc_kern_poll_fds(struct pollfd *fds, unsigned int *n, unsigned int max)
{
	for (struct rc_chan *c = rc.chans; c && *n < max; c = c->knext)
		if (c->kch)
			fds[(*n)++] = (struct pollfd){ .fd = c->kch->fd,
						       .events = POLLIN };
}

/* A kernel CONNECT_REQUEST: a new id of ours around the kernel's. */
static struct rc_id *rc_kern_child(struct rc_id *lst, struct rdma_cm_id *kid)
{
	struct rc_id *id;

	if (lst->destroyed) {
		k.rdma_destroy_id(kid);
		return NULL;
	}
	id = rc_id_new(lst->ch, lst->pub.context, lst->pub.ps,
		       lst->pub.qp_type);
	if (!id) {
		k.rdma_reject(kid, NULL, 0);
		k.rdma_destroy_id(kid);
		return NULL;
	}
	id->kid = kid;
	id->server = true;
	id->st = RC_CONNECT;
	kid->context = id;
	if (lst->sync) {
		/* As rc_on_req: a synchronous listener's requests get
		 * private channels. */
		struct rc_chan *c = rc_chan_new(true);

		if (c && rc_kern_chan(c) &&
		    k.rdma_migrate_id(kid, c->kch) == 0) {
			id->ch->ids--;
			id->ch = c;
			c->ids++;
			id->sync = true;
			id->pub.channel = &c->pub;
		} else if (c) {
			rc_chan_free(c);
		}
	}
	return id;
}

static void rc_kern_event(const struct rdma_cm_event *ke)
{
	struct rc_id *id = ke->id ? ke->id->context : NULL;
	struct rc_id *lst = NULL;
	struct rc_ev *ev;
	bool ud;

	if (ke->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		lst = ke->listen_id ? ke->listen_id->context : NULL;
		id = lst ? rc_kern_child(lst, ke->id) : NULL;
		if (!lst)
			k.rdma_destroy_id(ke->id);
	}
	if (!id || (id->destroyed && !lst))
		return;
	rc_kern_sync(id);
	ev = rc_ev_new(id, ke->event, ke->status);
	if (!ev)
		return;
	/* The kernel library's event is acked (freed) right after: its
	 * private data is copied into ours. */
	ev->pub.param = ke->param;
	ud = id->pub.qp_type == IBV_QPT_UD;
	rc_ev_set_pd(ev,
		     ud ? ke->param.ud.private_data :
			  ke->param.conn.private_data,
		     ud ? ke->param.ud.private_data_len :
			  ke->param.conn.private_data_len,
		     ud);
	if (lst)
		rc_ev_set_listener(ev, lst);
	rc_ev_queue(ev);
}

void rc_kern_drain(void)
{
	for (struct rc_chan *c = rc.chans; c; c = c->knext) {
		struct rdma_cm_event *ke;

		while (c->kch && k.rdma_get_cm_event(c->kch, &ke) == 0) {
			rc_kern_event(ke);
			k.rdma_ack_cm_event(ke);
		}
	}
}
