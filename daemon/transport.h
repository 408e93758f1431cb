/* SPDX-License-Identifier: MIT */
/*
 * The transport: where CM MADs enter and leave the daemon. Two backends
 * implement it, so that the daemon treats them alike:
 *   - umad (xport_umad.c): the product path, /dev/infiniband/umadN for
 *     MADs and libibverbs for port attributes and port events;
 *   - sim (xport_sim.c): a simulated fabric for machines with no RDMA
 *     device, through the hub process tools/cmhub (see sim_proto.h).
 *
 * Both move whole 256-byte MADs (IBTA 13.4.2) and address them with
 * struct eng_addr, the CM engine's address type; nothing here parses CM
 * message bodies.
 *
 * Errors: 0 or -errno. Send errors are returned to the caller (who counts
 * them; the engine retransmits) and are never fatal. The sim backend
 * queues a send (0) and writes it later; it refuses one (-ENOBUFS) only
 * when its bounded queue is full, and counts a queued MAD it could not
 * write (the hub gone) in tx_errors. The umad backend queues likewise,
 * but only a send the kernel refused as a duplicate TID and later sends
 * of that TID (tx_busy; given up after ~1 s: tx_busy_failed and
 * tx_errors). On RoCE the kernel
 * resolves the destination inside the umad write, and an unresolved
 * neighbour held a send for up to ~1 s (measured on rxe): so the umad
 * backend asks the kernel first (neigh.h) and holds a send whose
 * destination is still being resolved (XPORT_SEND_DEFERRED), reporting
 * later whether it left or failed (xport_sent_fn).
 *
 * Loop integration: xport_fd() becomes readable when MADs are waiting;
 * call xport_recv() (both fds are level triggered: what one call leaves
 * keeps the fd readable). xport_event_fd() (-1 when the backend has none)
 * becomes readable on port events; call xport_process_events(). The event
 * callback may also run from xport_recv(): the sim backend reports the
 * hub going away there (DEVICE_REMOVED for each port, then -ENOTCONN for
 * good: stop watching the fd).
 */
#ifndef CMD_TRANSPORT_H
#define CMD_TRANSPORT_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "cm_engine.h"
#include "cm_mad.h"
#include "util.h"

struct ev_loop; /* <ev.h>: only the sim backend hooks into the loop */

#define XPORT_DEV_NAME_MAX 64 /* IBV_SYSFS_NAME_MAX */
#define XPORT_MAX_GIDS 256 /* kept: the valid entries of the table */
#define XPORT_MAX_PKEYS 128
#define XPORT_MAX_PORTS 64 /* per backend */
#define XPORT_MSG_MAX 320

/*
 * GRH hop limit when none is given: 64, the IPv6 default (RFC 8200), as the
 * kernel's rdma_cm puts in RoCE paths; a RoCE v2 GRH becomes the IP header.
 */
#define XPORT_DEFAULT_HOP_LIMIT 64

/*
 * What the umad backend says when the kernel's ib_cm holds CM class 0x07
 * on a device. The full message is
 * "<dev> port <n>: " XPORT_MSG_IB_CM_OWNS "; " XPORT_MSG_IB_CM_TODO
 * (tests compare it byte for byte).
 */
#define XPORT_MSG_IB_CM_OWNS "the kernel ib_cm module owns the CM class here"
#define XPORT_MSG_IB_CM_TODO                                                   \
	"unload ib_cm and its users (rdma_ucm, rdma_cm, ib_ipoib, ...) or "    \
	"start cmd before they load; see README"

enum xport_kind {
	XPORT_KIND_UMAD,
	XPORT_KIND_SIM,
};

enum xport_link {
	XPORT_LINK_IB,
	XPORT_LINK_ROCE,
};

/* IBTA 14.2.5.6 PortInfo:PortState values, as verbs reports them. */
enum xport_port_state {
	XPORT_PORT_NOP = 0,
	XPORT_PORT_DOWN = 1,
	XPORT_PORT_INIT = 2,
	XPORT_PORT_ARMED = 3,
	XPORT_PORT_ACTIVE = 4,
	XPORT_PORT_ACTIVE_DEFER = 5,
};

enum xport_gid_type {
	XPORT_GID_IB,
	XPORT_GID_ROCE_V1,
	XPORT_GID_ROCE_V2,
};

struct xport_gid {
	uint8_t raw[CM_GID_SIZE]; /* network order */
	uint16_t index; /* in the port's GID table */
	enum xport_gid_type type;
	int ifindex; /* RoCE: the netdev the GID belongs to; 0 unknown */
};

/* One port as the daemon sees it; addresses and GUIDs in host order. */
struct xport_port {
	char dev[XPORT_DEV_NAME_MAX];
	uint8_t port_num; /* the device's port number, from 1 */
	uint16_t index; /* port index, as given to eng_port_set */
	bool up; /* false after DEVICE_REMOVED: sends fail */
	uint64_t node_guid; /* the CA GUID the CM puts in REQ/REP */
	uint64_t port_guid;
	uint16_t lid;
	uint8_t lmc;
	uint16_t sm_lid;
	uint8_t sm_sl;
	enum xport_port_state state;
	unsigned int active_mtu; /* bytes: 256..4096 */
	enum xport_link link;
	bool sa; /* IB: SA MADs go out and come back (xport_send_sa) */
	uint16_t pkey_tbl_len;
	uint16_t pkeys[XPORT_MAX_PKEYS]; /* by index; 0 = invalid entry */
	uint16_t n_gids;
	struct xport_gid gids[XPORT_MAX_GIDS]; /* valid entries only */
};

/* umad: one selected port; port_num 0 = every port of the device. */
struct xport_port_sel {
	char dev[XPORT_DEV_NAME_MAX];
	uint8_t port_num;
};

#define XPORT_SIM_MAX_GIDS 4

/* sim: one virtual port; all-zero fields are derived from the node. */
struct xport_sim_port {
	uint64_t guid;
	uint16_t lid;
	uint8_t n_gids;
	uint8_t gids[XPORT_SIM_MAX_GIDS][CM_GID_SIZE];
};

struct xport_config {
	enum xport_kind kind;
	uint16_t first_index; /* port indices are first_index, +1, ... */
	/* GRH defaults for sends (RoCE always, IB when to->grh). */
	uint8_t hop_limit; /* 0: XPORT_DEFAULT_HOP_LIMIT */
	uint8_t traffic_class;
	uint32_t flow_label;

	/* umad: which ports; none = every port of every device. */
	const struct xport_port_sel *sel;
	unsigned int n_sel;

	/*
	 * sim: the hub's socket, this daemon's node number (1..65535) and
	 * its ports. With n_sim_ports 0, sim_port_count ports are derived
	 * from the node alone (see xport_sim.c).
	 */
	const char *hub_path;
	uint16_t node;
	bool sim_roce;
	const struct xport_sim_port *sim_ports;
	unsigned int n_sim_ports;
	unsigned int sim_port_count;

	/*
	 * The caller's libev loop. sim (required): sends are queued and
	 * written in one sendmmsg per loop iteration, from a prepare watcher
	 * of the backend's own that runs after every other one, so a MAD
	 * queued in an iteration leaves before the loop sleeps. umad
	 * (optional): a send the kernel refuses as a duplicate TID is queued
	 * and retried from a timer (xport_umad.c); with no loop it fails at
	 * once. Close the backend before the loop is destroyed.
	 */
	struct ev_loop *loop;
};

/* What open did with each port it looked at. */
struct xport_port_result {
	char dev[XPORT_DEV_NAME_MAX];
	uint8_t port_num;
	bool served;
	uint16_t index; /* when served */
	int error; /* -errno when not served */
	char message[XPORT_MSG_MAX]; /* why not served: one plain sentence */
};

struct xport_open_report {
	unsigned int n;
	struct xport_port_result port[XPORT_MAX_PORTS];
};

enum xport_event_type {
	XPORT_EV_PORT_ACTIVE,
	XPORT_EV_PORT_DOWN, /* left ACTIVE: fail the port's handshakes */
	XPORT_EV_LID_CHANGE,
	XPORT_EV_GID_CHANGE,
	XPORT_EV_PKEY_CHANGE,
	XPORT_EV_SM_CHANGE, /* sm_lid / sm_sl changed: paths may have too */
	XPORT_EV_DEVICE_REMOVED, /* the port is gone for good (up false) */
};

struct xport_event {
	enum xport_event_type type;
	uint16_t index; /* port index */
	const struct xport_port *port; /* attributes already refreshed */
};

typedef void (*xport_event_fn)(void *ctx, const struct xport_event *ev);

/*
 * One received MAD; the caller supplies arrays of these. CM MADs (class
 * 0x07) and, on IB ports, the SA's answers (class 0x03, byte 1) arrive
 * alike; len is 256, or for an SA answer the kernel's RMPP reassembly
 * (56 header bytes and the records) up to 256 bytes: the daemon asks
 * for at most two PathRecords (184 bytes), so nothing it asks for is
 * cut; a longer table is cut to whole records and counted (rx_sa_cut).
 */
struct xport_rx {
	uint16_t port; /* port index it arrived on */
	uint16_t len;
	struct eng_addr from; /* from.port == port */
	uint8_t mad[CM_MAD_SIZE];
};

/*
 * Where an SA MAD goes: a LID on an IB port (the SM's, or where its
 * ClassPortInfo redirected), a QP, its Q_Key and the P_Key index to send
 * with. timeout_ms: how long the kernel holds the request for its answer
 * (the MAD layer delivers a response only to a send still waiting).
 */
struct xport_sa_dest {
	uint16_t lid;
	uint8_t sl;
	uint32_t qpn;
	uint32_t qkey;
	uint16_t pkey_index;
	unsigned int timeout_ms;
};

/* GRH fields eng_addr does not carry; NULL: the configured defaults. */
struct xport_grh_opts {
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint32_t flow_label;
};

struct xport_counters {
	uint64_t rx;
	uint64_t rx_dropped; /* short, bad status, not for a known port */
	uint64_t tx;
	uint64_t tx_errors;
	/*
	 * umad: sends the kernel refused because a Send with the same TID was
	 * still waiting for its completion (see xport_umad.c), and of those
	 * the ones given up after the retries (also counted in tx_errors).
	 */
	uint64_t tx_busy;
	uint64_t tx_busy_failed;
	/* SA MADs: sent, answers received, send failures and timeouts the
	 * kernel reported back (umad), tables cut to 256 bytes. */
	uint64_t tx_sa;
	uint64_t rx_sa;
	uint64_t rx_sa_status;
	uint64_t rx_sa_cut;
	/*
	 * umad on RoCE (neigh.h): sends held while the kernel resolved the
	 * destination's neighbour, and of those the ones that failed
	 * (-EHOSTUNREACH, also in tx_errors); resolutions started, done,
	 * failed (one per destination, however many MADs it held).
	 */
	uint64_t tx_deferred;
	uint64_t tx_unreachable;
	uint64_t neigh_started;
	uint64_t neigh_resolved;
	uint64_t neigh_failed;
	uint64_t neigh_pending; /* a gauge: destinations being resolved */
};

/*
 * A send that returned XPORT_SEND_DEFERRED has left (err 0) or failed
 * (-EHOSTUNREACH, -ENETDOWN, ...): 'to' and 'mad' as they were handed to
 * xport_send. Called from the loop (the backend's own watchers), never
 * from inside xport_send, once per deferred send; not after xport_close.
 */
typedef void (*xport_sent_fn)(void *ctx, uint16_t port,
			      const struct eng_addr *to,
			      const uint8_t mad[CM_MAD_SIZE], int err);

/* xport_send: the MAD waits for its destination; the outcome follows. */
#define XPORT_SEND_DEFERRED 1

struct xport;

/* The backend's functions; the inline wrappers below call them. */
struct xport_ops {
	const char *name;
	void (*close)(struct xport *x);
	int (*recv)(struct xport *x, struct xport_rx *rx, unsigned int max);
	int (*send)(struct xport *x, uint16_t port, const struct eng_addr *to,
		    const struct xport_grh_opts *grh,
		    const uint8_t mad[CM_MAD_SIZE]);
	int (*process_events)(struct xport *x);
	/* SA MADs (class 0x03) from an IB port; -EOPNOTSUPP elsewhere. */
	int (*send_sa)(struct xport *x, uint16_t port,
		       const struct xport_sa_dest *to,
		       const uint8_t mad[CM_MAD_SIZE]);
};

/* Common state; each backend embeds it first. */
struct xport {
	const struct xport_ops *ops;
	int fd;
	int event_fd;
	uint16_t first_index;
	unsigned int n_ports;
	struct xport_port *ports; /* n_ports, by index - first_index */
	xport_event_fn event_cb;
	void *event_ctx;
	xport_sent_fn sent_cb; /* NULL: deferred outcomes go unreported */
	void *sent_ctx;
	struct xport_counters counters;
};

/*
 * Open a backend. 'report' (may be NULL) receives one entry per port
 * looked at, served or not. Fails (-ENODEV or the one port's error) only
 * when no port could be served; *out is then NULL and the report says why.
 */
int xport_umad_open(const struct xport_config *cfg, xport_event_fn cb,
		    void *ctx, struct xport_open_report *report,
		    struct xport **out);
int xport_sim_open(const struct xport_config *cfg, xport_event_fn cb, void *ctx,
		   struct xport_open_report *report, struct xport **out);

static inline int xport_open(const struct xport_config *cfg, xport_event_fn cb,
			     void *ctx, struct xport_open_report *report,
			     struct xport **out)
{
	switch (cfg->kind) {
	case XPORT_KIND_UMAD:
		return xport_umad_open(cfg, cb, ctx, report, out);
	case XPORT_KIND_SIM:
		return xport_sim_open(cfg, cb, ctx, report, out);
	}
	return -EINVAL;
}

static inline void xport_close(struct xport *x)
{
	if (x)
		x->ops->close(x);
}

static inline int xport_fd(const struct xport *x)
{
	return x->fd;
}

static inline int xport_event_fd(const struct xport *x)
{
	return x->event_fd;
}

static inline unsigned int xport_port_count(const struct xport *x)
{
	return x->n_ports;
}

/* The port with this index, or NULL. */
static inline const struct xport_port *xport_port(const struct xport *x,
						  uint16_t index)
{
	if (index < x->first_index ||
	    (unsigned int)(index - x->first_index) >= x->n_ports)
		return NULL;
	return &x->ports[index - x->first_index];
}

/*
 * Receive up to 'max' MADs without blocking. Returns how many (0: none
 * waiting) or -errno (-ENOTCONN: the sim hub went away).
 */
static inline int xport_recv(struct xport *x, struct xport_rx *rx,
			     unsigned int max)
{
	return x->ops->recv(x, rx, max);
}

/* Where the outcome of deferred sends goes (see xport_sent_fn). */
static inline void xport_set_sent_cb(struct xport *x, xport_sent_fn fn,
				     void *ctx)
{
	x->sent_cb = fn;
	x->sent_ctx = ctx;
}

/*
 * Send one MAD from port index 'port' to 'to' (its port field ignored).
 * 0: written; XPORT_SEND_DEFERRED: held until its destination is
 * resolved (umad on RoCE), the outcome comes through the sent callback;
 * -errno: not sent.
 */
static inline int xport_send(struct xport *x, uint16_t port,
			     const struct eng_addr *to,
			     const uint8_t mad[CM_MAD_SIZE])
{
	return x->ops->send(x, port, to, NULL, mad);
}

static inline int xport_send_grh(struct xport *x, uint16_t port,
				 const struct eng_addr *to,
				 const struct xport_grh_opts *grh,
				 const uint8_t mad[CM_MAD_SIZE])
{
	return x->ops->send(x, port, to, grh, mad);
}

/*
 * Send one SA MAD (a SubnAdmGet/GetTable or ClassPortInfo Get) from IB
 * port index 'port'; its answer comes through xport_recv. 0 or -errno.
 */
static inline int xport_send_sa(struct xport *x, uint16_t port,
				const struct xport_sa_dest *to,
				const uint8_t mad[CM_MAD_SIZE])
{
	if (!x->ops->send_sa)
		return -EOPNOTSUPP;
	return x->ops->send_sa(x, port, to, mad);
}

/* Handle what event_fd reported; callbacks run from here. */
static inline int xport_process_events(struct xport *x)
{
	return x->ops->process_events(x);
}

static inline const struct xport_counters *xport_counters(const struct xport *x)
{
	return &x->counters;
}

static inline const char *xport_port_state_name(enum xport_port_state state)
{
	static const char *const names[] = {
		[XPORT_PORT_NOP] = "NOP",
		[XPORT_PORT_DOWN] = "DOWN",
		[XPORT_PORT_INIT] = "INIT",
		[XPORT_PORT_ARMED] = "ARMED",
		[XPORT_PORT_ACTIVE] = "ACTIVE",
		[XPORT_PORT_ACTIVE_DEFER] = "ACTIVE_DEFER",
	};
	unsigned int i = (unsigned int)state;

	return i < sizeof(names) / sizeof(names[0]) && names[i] ? names[i] :
								  "?";
}

static inline const char *xport_event_name(enum xport_event_type type)
{
	static const char *const names[] = {
		[XPORT_EV_PORT_ACTIVE] = "port active",
		[XPORT_EV_PORT_DOWN] = "port down",
		[XPORT_EV_LID_CHANGE] = "LID change",
		[XPORT_EV_GID_CHANGE] = "GID change",
		[XPORT_EV_PKEY_CHANGE] = "P_Key change",
		[XPORT_EV_SM_CHANGE] = "SM change",
		[XPORT_EV_DEVICE_REMOVED] = "device removed",
	};
	unsigned int i = (unsigned int)type;

	return i < sizeof(names) / sizeof(names[0]) && names[i] ? names[i] :
								  "?";
}

/* A send failed because its destination cannot be reached. */
static inline bool xport_err_unreachable(int err)
{
	return err == -EHOSTUNREACH || err == -ENETUNREACH;
}

/* RFC 4291 2.5.5.2: ::ffff:a.b.c.d carries an IPv4 address. */
static inline bool xport_gid_is_v4(const uint8_t g[CM_GID_SIZE])
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0,	   0,
					 0, 0, 0, 0, 0xff, 0xff };

	for (unsigned int i = 0; i < sizeof(pfx); i++)
		if (g[i] != pfx[i])
			return false;
	return true;
}

/* RFC 4291 2.5.6 (and IBTA 4.1.1's default GID prefix): fe80::/10. */
static inline bool xport_gid_is_link_local(const uint8_t g[CM_GID_SIZE])
{
	return g[0] == 0xfe && (g[1] & 0xc0) == 0x80;
}

/*
 * The source GID for a GRH to 'dgid': on RoCE the entry of the same IP
 * family as the destination (the kernel's rxe routes the UDP packet by the
 * source and destination addresses, so a v4-mapped destination needs a
 * v4-mapped source), RoCE v2 before v1, link-local for a link-local
 * destination. On IB the port GID (index 0, IBTA 4.1.1). NULL: none fits.
 */
static inline const struct xport_gid *
xport_pick_sgid(const struct xport_port *p, const uint8_t dgid[CM_GID_SIZE])
{
	const struct xport_gid *best = NULL;
	int best_score = -1;
	bool v4 = xport_gid_is_v4(dgid);
	bool ll = xport_gid_is_link_local(dgid);

	if (p->link == XPORT_LINK_IB)
		return p->n_gids ? &p->gids[0] : NULL;
	for (unsigned int i = 0; i < p->n_gids; i++) {
		const struct xport_gid *g = &p->gids[i];
		int score;

		if (xport_gid_is_v4(g->raw) != v4)
			continue;
		score = g->type == XPORT_GID_ROCE_V2 ? 2 : 0;
		if (!v4 && xport_gid_is_link_local(g->raw) == ll)
			score += 1;
		if (score > best_score) {
			best = g;
			best_score = score;
		}
	}
	return best;
}

#endif
