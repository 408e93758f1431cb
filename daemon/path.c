// SPDX-License-Identifier: MIT
#include "path.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "refuse.h"

/* IBTA 12.7.x: a LID of 0xFFFF (permissive) in a RoCE REQ, as the kernel
 * sends when the path is routed (hop limit > 1). */
#define PATH_LID_PERMISSIVE 0xffff
#define PATH_DEFAULT_PKEY 0xffff

uint8_t path_mtu_enum(unsigned int bytes)
{
	switch (bytes) {
	case 256:
		return CM_MTU_256;
	case 512:
		return CM_MTU_512;
	case 1024:
		return CM_MTU_1024;
	case 2048:
		return CM_MTU_2048;
	case 4096:
		return CM_MTU_4096;
	}
	return 0;
}

static const struct xport_port *port_at(const struct xport *x, unsigned int i)
{
	return xport_port(x, (uint16_t)(x->first_index + i));
}

static int pkey_index(const struct xport_port *p, uint16_t pkey)
{
	/* The membership bit (0x8000) aside, a P_Key names a partition. */
	for (unsigned int i = 0; i < p->pkey_tbl_len && i < XPORT_MAX_PKEYS;
	     i++)
		if (p->pkeys[i] && (p->pkeys[i] & 0x7fff) == (pkey & 0x7fff))
			return (int)i;
	return -1;
}

static const struct xport_gid *gid_find(const struct xport_port *p,
					const uint8_t gid[CM_GID_SIZE])
{
	for (unsigned int i = 0; i < p->n_gids; i++)
		if (!memcmp(p->gids[i].raw, gid, CM_GID_SIZE))
			return &p->gids[i];
	return NULL;
}

static bool port_selected(const struct xport_port *p,
			  const struct cmp_port_sel *sel)
{
	switch ((enum cmp_sel)sel->kind) {
	case CMP_SEL_ANY:
		return true;
	case CMP_SEL_PORT:
		return !strcmp(p->dev, sel->dev_name) &&
		       (!sel->port_num || sel->port_num == p->port_num);
	case CMP_SEL_GID:
		return gid_find(p, sel->gid) != NULL;
	}
	return false;
}

/* Can port p reach an address of this family at all? */
static bool port_fits(const struct xport_port *p, uint8_t family)
{
	switch ((enum cmp_af)family) {
	case CMP_AF_GID:
		return true;
	case CMP_AF_IPV4:
	case CMP_AF_IPV6:
		return p->link == XPORT_LINK_ROCE;
	case CMP_AF_LID:
		return p->link == XPORT_LINK_IB;
	case CMP_AF_NONE:
		break;
	}
	return false;
}

int path_resolve(const struct xport *x, const struct cmp_addr *dst,
		 const struct cmp_port_sel *src, const struct cmp_path_set *set,
		 const struct path_defaults *def, struct path *out)
{
	const struct xport_port *p = NULL;
	const struct xport_gid *sgid = NULL;
	struct cmp_path *v = &out->view;
	uint8_t dgid[CM_GID_SIZE] = { 0 };
	bool any_selected = false;
	int pi;

	memset(out, 0, sizeof(*out));
	switch ((enum cmp_af)dst->family) {
	case CMP_AF_GID:
	case CMP_AF_IPV6:
		memcpy(dgid, dst->addr, CM_GID_SIZE);
		break;
	case CMP_AF_IPV4:
		/* rdma_cm's RoCE GID of an IPv4 address: ::ffff:a.b.c.d. */
		dgid[10] = dgid[11] = 0xff;
		memcpy(dgid + 12, dst->addr, 4);
		break;
	case CMP_AF_LID:
		break;
	case CMP_AF_NONE:
		return refuse(-EINVAL, "no destination address");
	}

	for (unsigned int i = 0; i < xport_port_count(x); i++) {
		const struct xport_port *c = port_at(x, i);

		if (!c || !port_selected(c, src))
			continue;
		any_selected = true;
		if (!c->up || c->state != XPORT_PORT_ACTIVE ||
		    !port_fits(c, dst->family))
			continue;
		if (dst->family != CMP_AF_LID &&
		    !(sgid = xport_pick_sgid(c, dgid)))
			continue;
		p = c;
		break;
	}
	if (!p && !any_selected)
		return refuse(-ENODEV, "no port the daemon serves matches the "
				       "source selector");
	if (!p)
		return refuse(-ENETUNREACH, "no active port of the selected "
					    "ones can reach the destination");

	v->pkey = set->flags & CMP_PATH_FLAG_PKEY ? set->pkey :
		  p->pkeys[0]			  ? p->pkeys[0] :
						    PATH_DEFAULT_PKEY;
	pi = pkey_index(p, v->pkey);
	if (pi < 0) {
		/* rxe has a one-entry table with the default P_Key. */
		if (set->flags & CMP_PATH_FLAG_PKEY)
			return refuse(-EINVAL,
				      "P_Key %#06x is not in %s/%u's "
				      "P_Key table",
				      set->pkey, p->dev, p->port_num);
		pi = 0;
	}
	v->pkey_index = (uint16_t)pi;
	v->port_num = p->port_num;
	str_copy(v->dev_name, sizeof(v->dev_name), p->dev);
	v->mtu = path_mtu_enum(p->active_mtu);
	if (set->flags & CMP_PATH_FLAG_MTU) {
		if (set->mtu > v->mtu)
			return refuse(-EINVAL,
				      "path MTU code %u is above %s/%u's "
				      "active MTU code %u",
				      set->mtu, p->dev, p->port_num, v->mtu);
		v->mtu = set->mtu;
	}
	v->sl = set->flags & CMP_PATH_FLAG_SL ? set->sl : 0;
	v->traffic_class = set->flags & CMP_PATH_FLAG_TRAFFIC_CLASS ?
				   set->traffic_class :
				   0;
	v->flow_label =
		set->flags & CMP_PATH_FLAG_FLOW_LABEL ? set->flow_label : 0;
	v->packet_rate = set->flags & CMP_PATH_FLAG_PACKET_RATE ?
				 set->packet_rate :
				 def->packet_rate;
	v->packet_life_time = def->packet_life_time;
	/* IBTA 12.7.34: the local ACK timeout covers a round trip, so
	 * at least twice the packet life time: one more in the exponent. */
	v->local_ack_timeout = set->flags & CMP_PATH_FLAG_LOCAL_ACK_TIMEOUT ?
				       set->local_ack_timeout :
				       (uint8_t)(def->packet_life_time + 1);

	out->dest.port = p->index;
	out->dest.qpn = 1;
	out->dest.pkey_index = v->pkey_index;
	out->dest.sl = v->sl;
	if (dst->family == CMP_AF_LID) {
		v->local_lid = p->lid;
		v->remote_lid = dst->lid;
		out->dest.lid = dst->lid;
		v->hop_limit = 0;
		return 0;
	}
	v->grh = 1;
	v->hop_limit = set->flags & CMP_PATH_FLAG_HOP_LIMIT ? set->hop_limit :
							      def->hop_limit;
	v->sgid_index = (uint8_t)sgid->index;
	memcpy(v->local_gid, sgid->raw, CM_GID_SIZE);
	memcpy(v->remote_gid, dgid, CM_GID_SIZE);
	out->dest.grh = true;
	memcpy(out->dest.gid, dgid, CM_GID_SIZE);
	if (p->link == XPORT_LINK_IB) {
		/* Routed IB: the LIDs of the local subnet's ends; the
		 * destination's subnet manager fills in its own. */
		v->local_lid = p->lid;
		v->remote_lid = dst->lid;
		out->dest.lid = dst->lid;
	}
	return 0;
}

const struct xport_port *path_sel_port(const struct xport *x,
				       const struct cmp_port_sel *sel)
{
	for (unsigned int i = 0; i < xport_port_count(x); i++) {
		const struct xport_port *c = port_at(x, i);

		if (c && port_selected(c, sel))
			return c;
	}
	return NULL;
}

int path_listen_sel(const struct xport *x, const struct cmp_port_sel *sel,
		    struct eng_listen_sel *out, struct cmp_path *where)
{
	bool any = false;

	memset(out, 0, sizeof(*out));
	memset(where, 0, sizeof(*where));
	out->kind = ENG_SEL_ANY;
	if (sel->kind == CMP_SEL_ANY)
		return 0;
	for (unsigned int i = 0; i < xport_port_count(x); i++) {
		const struct xport_port *c = port_at(x, i);

		if (!c || !port_selected(c, sel) || c->index >= ENG_MAX_PORTS)
			continue;
		any = true;
		out->ports[c->index / 64] |= 1ULL << (c->index % 64);
	}
	switch ((enum cmp_sel)sel->kind) {
	case CMP_SEL_ANY:
		return 0;
	case CMP_SEL_PORT:
		if (!any)
			return refuse(-ENODEV,
				      "the daemon serves no port %.*s/%u",
				      (int)sizeof(sel->dev_name), sel->dev_name,
				      sel->port_num);
		out->kind = ENG_SEL_PORTS;
		where->port_num = sel->port_num;
		snprintf(where->dev_name, sizeof(where->dev_name), "%s",
			 sel->dev_name);
		return 0;
	case CMP_SEL_GID:
		/* As rdma_bind_addr() to an address no device has. */
		if (!any)
			return refuse(-EADDRNOTAVAIL, "no port the daemon "
						      "serves has that GID");
		/* Matched by the GID, not by the ports holding it now. */
		memset(out->ports, 0, sizeof(out->ports));
		out->kind = ENG_SEL_GID;
		memcpy(out->gid, sel->gid, CM_GID_SIZE);
		memcpy(where->local_gid, sel->gid, CM_GID_SIZE);
		return 0;
	}
	return -EINVAL;
}

void path_sa_want(const struct path *p, const struct cmp_addr *dst,
		  const struct cmp_path_set *set, uint64_t service_id,
		  struct sa_path_want *w)
{
	const struct cmp_path *v = &p->view;

	memset(w, 0, sizeof(*w)); /* the cache compares wants whole */
	if (dst->family == CMP_AF_LID) {
		w->dlid = dst->lid;
		w->slid = v->local_lid;
	} else {
		memcpy(w->sgid, v->local_gid, CM_GID_SIZE);
		memcpy(w->dgid, v->remote_gid, CM_GID_SIZE);
	}
	w->pkey = v->pkey;
	w->service_id = service_id;
	w->flags = set->flags & (CMP_PATH_FLAG_SL | CMP_PATH_FLAG_MTU |
				 CMP_PATH_FLAG_TRAFFIC_CLASS);
	w->sl = set->sl;
	w->mtu = set->mtu;
	w->traffic_class = set->traffic_class;
	w->numb_path = 2;
}

int path_apply_sa(struct path *p, const struct sa_path_rec *rec,
		  const struct cmp_path_set *set, uint8_t ca_ack_delay)
{
	struct cmp_path *v = &p->view;
	const struct cmp_path keep = *v;

	if (sa_path_to_cmp(rec, ca_ack_delay, v))
		return -EINVAL;
	v->port_num = keep.port_num;
	memcpy(v->dev_name, keep.dev_name, sizeof(v->dev_name));
	v->pkey_index = keep.pkey_index;
	v->sgid_index = keep.sgid_index;
	/* A LID query's answer names the GIDs too; a GID query's, the
	 * GIDs asked. */
	if (set->flags & CMP_PATH_FLAG_HOP_LIMIT)
		v->hop_limit = set->hop_limit;
	if (set->flags & CMP_PATH_FLAG_FLOW_LABEL)
		v->flow_label = set->flow_label;
	if (set->flags & CMP_PATH_FLAG_PACKET_RATE)
		v->packet_rate = set->packet_rate;
	if (set->flags & CMP_PATH_FLAG_LOCAL_ACK_TIMEOUT)
		v->local_ack_timeout = set->local_ack_timeout;
	p->dest.lid = rec->dlid;
	p->dest.sl = rec->sl;
	p->dest.grh = v->grh;
	if (v->grh)
		memcpy(p->dest.gid, v->remote_gid, CM_GID_SIZE);
	return 0;
}

void path_fill_req(const struct path *p, struct cm_req *req)
{
	const struct cmp_path *v = &p->view;
	bool roce = v->grh && !v->local_lid;

	req->pkey = v->pkey;
	req->path_mtu = v->mtu;
	req->primary_local_lid = roce ? PATH_LID_PERMISSIVE : v->local_lid;
	req->primary_remote_lid = roce ? PATH_LID_PERMISSIVE : v->remote_lid;
	memcpy(req->primary_local_gid, v->local_gid, CM_GID_SIZE);
	memcpy(req->primary_remote_gid, v->remote_gid, CM_GID_SIZE);
	req->primary_flow_label = v->flow_label;
	req->primary_packet_rate = v->packet_rate;
	req->primary_traffic_class = v->traffic_class;
	req->primary_hop_limit = v->hop_limit;
	req->primary_sl = v->sl;
	/* The kernel's cm_format_req: subnet local when not routed. */
	req->primary_subnet_local = v->hop_limit <= 1;
	req->primary_local_ack_timeout = v->local_ack_timeout;
}

static void path_port(const struct xport *x, uint16_t port, uint16_t pkey,
		      struct cmp_path *v)
{
	const struct xport_port *p = xport_port(x, port);
	int pi;

	if (!p)
		return;
	v->port_num = p->port_num;
	str_copy(v->dev_name, sizeof(v->dev_name), p->dev);
	pi = pkey_index(p, pkey);
	v->pkey_index = pi < 0 ? 0 : (uint16_t)pi;
	if (p->link == XPORT_LINK_IB)
		v->local_lid = p->lid;
}

void path_from_req(const struct xport *x, const struct eng_addr *from,
		   const struct cm_req *req, struct cmp_path *v)
{
	const struct xport_port *p = xport_port(x, from->port);
	const struct xport_gid *g = NULL;

	memset(v, 0, sizeof(*v));
	v->pkey = req->pkey;
	v->mtu = req->path_mtu;
	v->sl = req->primary_sl;
	v->traffic_class = req->primary_traffic_class;
	v->hop_limit = req->primary_hop_limit;
	v->flow_label = req->primary_flow_label;
	v->packet_rate = req->primary_packet_rate;
	v->local_ack_timeout = req->primary_local_ack_timeout;
	v->packet_life_time = cm_req_packet_life_time(req);
	memcpy(v->local_gid, req->primary_remote_gid, CM_GID_SIZE);
	memcpy(v->remote_gid, req->primary_local_gid, CM_GID_SIZE);
	path_port(x, from->port, req->pkey, v);
	if (p && p->link == XPORT_LINK_ROCE) {
		v->grh = 1;
		v->local_lid = 0;
		v->remote_lid = 0;
		g = gid_find(p, v->local_gid);
		if (!g)
			g = xport_pick_sgid(p, v->remote_gid);
	} else {
		v->grh = from->grh;
		v->remote_lid = req->primary_local_lid;
		if (p && v->grh)
			g = gid_find(p, v->local_gid);
	}
	if (g)
		v->sgid_index = (uint8_t)g->index;
}

void path_from_addr(const struct xport *x, const struct eng_addr *from,
		    uint16_t pkey, struct cmp_path *v)
{
	const struct xport_port *p = xport_port(x, from->port);
	const struct xport_gid *g;

	memset(v, 0, sizeof(*v));
	v->pkey = pkey;
	v->sl = from->sl;
	v->remote_lid = from->lid;
	path_port(x, from->port, pkey, v);
	if (p)
		v->mtu = path_mtu_enum(p->active_mtu);
	if (!from->grh)
		return;
	v->grh = 1;
	memcpy(v->remote_gid, from->gid, CM_GID_SIZE);
	/* The GID the requester addressed, else one of its family. */
	if (p && ((g = gid_find(p, from->local_gid)) ||
		  (g = xport_pick_sgid(p, from->gid)))) {
		v->sgid_index = (uint8_t)g->index;
		memcpy(v->local_gid, g->raw, CM_GID_SIZE);
	}
}

/* One formula, cm_mad.h's, for the REQ's path and the QP's timeout. */
uint8_t path_ack_timeout(uint8_t ack_delay, uint8_t plt)
{
	return cm_ack_timeout(ack_delay, plt);
}
