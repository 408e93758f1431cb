/* SPDX-License-Identifier: MIT */
/*
 * cmd's librdmacm: private state.
 *
 * One process-wide state (struct rc_proc) owns the connection to the cmd
 * daemon (one libcmclient channel, asynchronous mode), the devices, and a
 * reader thread that turns the daemon's events into rdma_cm events and
 * queues them on the application's event channels. Every piece of state
 * below is guarded by the one mutex rc.mu; nothing blocks on the daemon
 * while holding it except the few calls whose answer the caller needs
 * (LISTEN, the port list).
 *
 * An event channel's fd is an eventfd that is readable exactly while the
 * channel's queue holds an event: the queue and the eventfd change
 * together, under rc.mu.
 *
 * docs/RDMACM.md tells the design; rdma_cm(7) and the rdma_*(3) man pages
 * of librdmacm-dev tell the API this implements.
 */
#ifndef CMD_RDMACM_RC_INT_H
#define CMD_RDMACM_RC_INT_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "cmclient.h"
#include "hash.h"
#include "rc_addr.h"

#ifndef RC_EXPORT
#define RC_EXPORT __attribute__((visibility("default")))
#endif

/* Set errno and return -1, as every librdmacm call reports failure. */
static inline int rc_err(int e)
{
	errno = e;
	return -1;
}
/* A libcmclient negative errno as librdmacm's -1/errno. */
static inline int rc_cmc(int r)
{
	return r < 0 ? rc_err(-r) : 0;
}

/* The rdma_cm id states that decide which call is allowed (the kernel's
 * enum rdma_cm_state, the ones a user can observe). */
enum rc_state {
	RC_IDLE,
	RC_ADDR_BOUND,
	RC_ADDR_RESOLVED,
	RC_ROUTE_RESOLVED,
	RC_LISTEN,
	RC_CONNECT, /* REQ sent (active) or received (passive) */
	RC_ESTABLISHED,
	RC_DISCONNECT, /* DISCONNECTED reported */
	RC_ERROR, /* REJECTED / UNREACHABLE / CONNECT_ERROR reported */
	RC_REMOVED, /* DEVICE_REMOVAL reported */
};

/* A device as librdmacm shares it: one verbs context and one PD per
 * device per process, opened when an id first lands on it. */
struct rc_dev {
	char name[IBV_SYSFS_NAME_MAX];
	struct ibv_device *dev;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	unsigned int refs; /* ids on it */
	uint8_t max_init_depth, max_resp_res;
	bool cmd; /* served by the cmd daemon (else the kernel's CM) */
	/* The P_Key index last looked up on one of its RoCE ports (a RoCE
	 * port's P_Key table is the kernel's fixed default; an IB port's is
	 * the SM's to change, so it is looked up every time). */
	bool pkey_known;
	uint8_t pkey_port;
	uint16_t pkey, pkey_index;
};

struct rc_chan;
struct rc_id;

/* One queued or delivered event. */
struct rc_ev {
	struct rdma_cm_event pub; /* first */
	struct rc_ev *next;
	struct hnode held; /* rc.held: delivered, not yet acked */
	struct rc_id *id; /* holds a reference while the event lives */
	struct rc_id *listen; /* CONNECT_REQUEST: the listener (ref) */
	uint8_t pd[256]; /* private data the event points to */
};

struct rc_chan {
	struct rdma_event_channel pub; /* first; fd is an eventfd */
	struct rc_ev *head, **tail;
	unsigned int queued;
	bool lit; /* the eventfd's counter is not 0 */
	unsigned int ids; /* ids on it (destroy keeps it while any is) */
	bool sync; /* the private channel of a synchronous id */
	bool dead;
	struct rc_chan *knext; /* rc.chans */
	/* The system librdmacm's channel for the kernel's ids on this one. */
	struct rdma_event_channel *kch;
};

struct rc_id {
	struct rdma_cm_id pub; /* first: the application's rdma_cm_id */
	struct hnode live; /* rc.ids until destroyed */
	struct rc_chan *ch;
	struct cmc_id *cid; /* the daemon's id, once one is needed */
	struct rc_dev *dev;
	enum rc_state st;
	unsigned int refs; /* 1 for the app until destroy, + events */
	bool destroyed;
	bool sync;
	bool connect_error; /* CONNECT_ERROR reported: drop later REJ etc. */
	bool server; /* passive side (a listener's child) */
	bool bound_any; /* bound to the wildcard address */
	bool has_route;
	bool reuseaddr, afonly, afonly_set;
	bool tos_set, ack_timeout_set;
	bool ib_path; /* RDMA_OPTION_IB_PATH set the path: connect forces it */
	uint8_t tos, ack_timeout;
	uint8_t init_depth, resp_res; /* what we use, as librdmacm keeps them */
	uint16_t gid_index;
	uint32_t gid_type;
	uint32_t remote_qpn;
	uint32_t qkey;
	struct ibv_sa_path_rec path; /* route.path_rec points here */
	struct ibv_qp_init_attr *ep_qp_attr; /* rdma_create_ep, passive */
	/* The kernel's id, when a kernel-owned device carries this one. */
	struct rdma_cm_id *kid;
};

/* The process-wide state. */
struct rc_proc {
	pthread_mutex_t mu;
	struct cmc_channel *ch; /* the daemon, or NULL */
	int open_err; /* why it could not be opened (negative errno) */
	bool opened; /* tried */
	pthread_t reader;
	int wake_fd; /* eventfd: wakes the reader (new kernel channel) */
	struct ibv_device **dev_list;
	struct rc_dev *devs;
	int n_devs;
	bool ports_known;
	struct cmc_port_info ports[CMC_PORTS_BATCH_MAX];
	unsigned int n_ports;
	struct rc_chan
		*chans; /* every channel (the reader polls kernel ones) */
	struct htable ids; /* ids not yet destroyed: calls check them */
	struct htable held; /* events delivered and not acked */
	int log_level; /* CMD_RDMACM_DEBUG: 0 quiet, 1 errors, 2 notes,
			* 3 every daemon event */
};

extern struct rc_proc rc;

#define RC_LOCK() pthread_mutex_lock(&rc.mu)
#define RC_UNLOCK() pthread_mutex_unlock(&rc.mu)

/* rc_proc.c */
void rc_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int rc_daemon(void); /* open the daemon channel once; 0 or -errno */
int rc_devices(void); /* the verbs device list, once; 0 or -errno */
struct rc_dev *rc_dev_by_name(const char *name);
struct rc_dev *rc_dev_by_ctx(const struct ibv_context *ctx);
int rc_dev_open(struct rc_dev *d); /* its context, once */
int rc_dev_get(struct rc_id *id, struct rc_dev *d); /* open, ref */
void rc_dev_put(struct rc_id *id);
int rc_ports(void); /* the daemon's ports, once */
bool rc_port_is_roce(const char *dev, uint8_t port); /* a daemon RoCE port */
void rc_warm(void); /* daemon, devices, GID tables: before the first call */
const struct cmc_port_info *rc_port_gid(const union ibv_gid *gid,
					const struct cmc_port_gid **gp);
void rc_wake_reader(void);
void rc_flush(void);

/* rc_chan.c */
struct rc_chan *rc_chan_new(bool sync);
void rc_chan_free(struct rc_chan *c);
struct rc_ev *rc_ev_new(struct rc_id *id, enum rdma_cm_event_type type,
			int status);
void rc_ev_queue(struct rc_ev *ev); /* on ev->id's channel */
void rc_ev_drop_id(struct rc_chan *c, const struct rc_id *id);
int rc_complete(struct rc_id *id); /* synchronous ids: wait for the event */
void rc_id_ref(struct rc_id *id);
/* The id behind an application's pointer, or NULL (and errno EINVAL, one
 * log line) for NULL, a destroyed id or a pointer that is no id of ours. */
struct rc_id *rc_id_live(struct rdma_cm_id *pub, const char *call);
void rc_id_track(struct rc_id *id, bool on);
void rc_id_unref(struct rc_id *id);

void rc_ev_free(struct rc_ev *ev);
bool rc_ev_release(struct rdma_cm_event *event);
void rc_ev_set_pd(struct rc_ev *ev, const void *pd, size_t len, bool ud);
void rc_ev_set_listener(struct rc_ev *ev, struct rc_id *lst);
void rc_id_free(struct rc_id *id);
void rc_id_destroy_child(struct rc_id *child);

/* rc_event.c */
void rc_on_daemon_event(const struct cmc_event *e);

/* rc_id.c */
struct rc_id *rc_id_new(struct rc_chan *ch, void *context,
			enum rdma_port_space ps, enum ibv_qp_type qp_type);
void rc_id_set_path(struct rc_id *id, const struct cmc_path *p);
void rc_id_reject_new(struct cmc_id *cid, unsigned int reason, bool sidr);
bool rc_listener_takes(const struct rc_id *lst, const struct sockaddr *dst);

/* rc_qp.c */
int rc_qp_move(struct rc_id *id, enum ibv_qp_state target, int override);
void rc_qp_err(struct rc_id *id);
void rc_ud_ah(const struct rc_id *id, const struct cmc_path *p,
	      struct ibv_ah_attr *ah);

/* rc_kern.c: the system librdmacm for the kernel's devices. */
enum rc_kern_opcode {
	RC_KOP_RESOLVE_ROUTE, /* n: timeout */
	RC_KOP_CONNECT, /* a: conn_param */
	RC_KOP_ACCEPT, /* a: conn_param */
	RC_KOP_REJECT, /* a, n: private data */
	RC_KOP_REJECT_ECE,
	RC_KOP_NOTIFY, /* n: event */
	RC_KOP_DISCONNECT,
	RC_KOP_ESTABLISH,
	RC_KOP_SET_OPTION, /* a, n: value; b: int[2] level, name */
	RC_KOP_INIT_QP_ATTR, /* a: attr, b: mask */
	RC_KOP_CREATE_QP, /* a: ibv_qp_init_attr_ex */
	RC_KOP_DESTROY_QP,
	RC_KOP_CREATE_SRQ, /* a: ibv_srq_init_attr_ex */
	RC_KOP_DESTROY_SRQ,
	RC_KOP_SET_ECE, /* a: ibv_ece */
	RC_KOP_GET_ECE,
	RC_KOP_MIGRATE, /* a: struct rc_chan */
};
bool rc_kern_available(void);
struct ibv_context *rc_kern_ctx(const char *dev_name);
int rc_kern_adopt(struct rc_id *id);
void rc_kern_destroy(struct rc_id *id);
void rc_kern_sync(struct rc_id *id);
int rc_kern_bind(struct rc_id *id, struct sockaddr *sa);
int rc_kern_resolve_addr(struct rc_id *id, struct sockaddr *src,
			 struct sockaddr *dst, int timeout_ms);
int rc_kern_listen(struct rc_id *id, int backlog);
int rc_kern_op(struct rc_id *id, enum rc_kern_opcode op, void *a, void *b,
	       size_t n);
struct pollfd;
void rc_kern_poll_fds(struct pollfd *fds, unsigned int *n, unsigned int max);
void rc_kern_drain(void);
void rc_kern_chan_free(struct rc_chan *c);

static inline struct rc_id *rc_id_of(struct rdma_cm_id *id)
{
	return (struct rc_id *)id;
}

#endif
