// SPDX-License-Identifier: MIT
/*
 * cmhub's SA responder (cmhub_sa.h): PathRecord (IBTA 15.2.5.16) and
 * ClassPortInfo (13.4.8.1) answers, the redirect of 13.5.3.3 and the
 * faults a test asks for. One request in, one answer (or none) out.
 */
#include "cmhub_sa.h"

#include <errno.h>
#include <string.h>

#include "sa_mad.h"
#include "sa_path.h"

void hub_sa_init(struct hub_sa *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->c.on = 1;
	sa->c.sm_lid = HUB_SA_SM_LID;
	sa->c.mtu = HUB_SA_MTU;
	sa->c.rate = HUB_SA_RATE;
	sa->c.plt = HUB_SA_PLT;
	sa->c.sl = HUB_SA_SL;
	sa->c.resp_time_value = HUB_SA_RESP_TIME;
}

/* IBTA 4.1.3: unicast LIDs. */
static bool lid_ok(uint16_t lid)
{
	return lid >= 1 && lid <= 0xbfff;
}

int hub_sa_apply(struct hub_sa *sa, const struct sim_ctl_sa *m, bool *sm_moved)
{
	uint32_t f = m->flags;

	*sm_moved = false;
	if (((f & SIM_SA_SET_MTU) && (m->mtu < 1 || m->mtu > 5)) ||
	    ((f & SIM_SA_SET_SL) && m->sl > 15) ||
	    ((f & SIM_SA_SET_RATE) && (m->rate < 2 || m->rate > 63)) ||
	    ((f & SIM_SA_SET_PLT) && m->plt > 63) ||
	    ((f & SIM_SA_SET_LMC) && m->lmc > 2) ||
	    ((f & SIM_SA_SET_REDIRECT) && m->redirect_lid &&
	     (!lid_ok(m->redirect_lid) || !m->redirect_qpn ||
	      m->redirect_qpn > 0xffffff)) ||
	    ((f & SIM_SA_SET_SM_LID) && !lid_ok(m->sm_lid)))
		return -EINVAL;
	if (f & SIM_SA_SET_BUSY)
		sa->c.busy_left = m->busy;
	if (f & SIM_SA_SET_DROP)
		sa->c.drop_left = m->drop;
	if (f & SIM_SA_SET_ERROR) {
		sa->c.error_code = m->error_code;
		sa->c.error_left = m->error_code ? m->error_count : 0;
	}
	if (f & SIM_SA_SET_DELAY)
		sa->c.delay_ms = m->delay_ms;
	if (f & SIM_SA_SET_MTU)
		sa->c.mtu = m->mtu;
	if (f & SIM_SA_SET_SL)
		sa->c.sl = m->sl;
	if (f & SIM_SA_SET_RATE)
		sa->c.rate = m->rate;
	if (f & SIM_SA_SET_PLT)
		sa->c.plt = m->plt;
	if (f & SIM_SA_SET_LMC)
		sa->c.lmc = m->lmc;
	if (f & SIM_SA_SET_REDIRECT) {
		sa->c.redirect_lid = m->redirect_lid;
		sa->c.redirect_qpn = m->redirect_lid ? m->redirect_qpn : 0;
	}
	if (f & SIM_SA_SET_ON)
		sa->c.on = !!m->on;
	if ((f & SIM_SA_SET_SM_LID) && m->sm_lid != sa->c.sm_lid) {
		sa->c.sm_lid = m->sm_lid;
		*sm_moved = true;
	}
	if (f & SIM_SA_SET_RESET) {
		uint64_t pending = sa->st.pending;

		memset(&sa->st, 0, sizeof(sa->st));
		sa->st.pending = pending; /* a gauge, not a counter */
	}
	return 0;
}

bool hub_sa_mine(const struct hub_sa *sa, const struct sim_addr *to,
		 const uint8_t mad[SIM_MAD_SIZE], bool *at_redirect)
{
	*at_redirect = false;
	if (!sa->c.on || mad[1] != SA_MGMT_CLASS)
		return false;
	if (sa->c.redirect_lid && to->lid == sa->c.redirect_lid &&
	    to->qpn == sa->c.redirect_qpn) {
		*at_redirect = true;
		return true;
	}
	return to->lid == sa->c.sm_lid && to->qpn == 1;
}

/* IBTA Table 224 (the rate codes, not in order of speed) in 0.5 Gb/s. */
static unsigned int rate_halves(uint8_t code)
{
	static const uint16_t halves[] = {
		[2] = 5,     [3] = 20,	 [4] = 60,   [5] = 10,	 [6] = 40,
		[7] = 80,    [8] = 120,	 [9] = 160,  [10] = 240, [11] = 28,
		[12] = 112,  [13] = 224, [14] = 336, [15] = 50,	 [16] = 200,
		[17] = 400,  [18] = 600, [19] = 56,  [20] = 100, [21] = 800,
		[22] = 1200,
	};

	return code < sizeof(halves) / sizeof(halves[0]) ? halves[code] : 0;
}

/*
 * Does the path's value 'have' satisfy the query's (selector, want)?
 * IBTA Table 204: 0 greater than, 1 less than, 2 exactly, 3 the largest
 * available (the path's, whatever it is).
 */
static bool select_ok(unsigned int have, unsigned int sel, unsigned int want)
{
	switch (sel) {
	case SA_SEL_GREATER:
		return have > want;
	case SA_SEL_LESS:
		return have < want;
	case SA_SEL_EXACTLY:
		return have == want;
	default:
		return true;
	}
}

/*
 * A value row with its selector: asked when the value's mask bit is set
 * (without the selector's bit the value is taken as EXACTLY).
 */
static bool sel_row_ok(uint64_t mask, uint64_t val_bit, uint64_t sel_bit,
		       unsigned int sel, unsigned int have, unsigned int want)
{
	if (!(mask & val_bit))
		return true;
	return select_ok(have, mask & sel_bit ? sel : SA_SEL_EXACTLY, want);
}

/*
 * One end of the path: by GID and/or LID as asked (both must name the same
 * port), else 'dflt' (the requester, for the source), else none.
 */
static int path_end(bool by_gid, const uint8_t *gid, bool by_lid, uint16_t lid,
		    const struct hub_sa_port *dflt, hub_sa_find_fn find,
		    void *ctx, struct hub_sa_port *out)
{
	struct hub_sa_port p;

	if (by_gid) {
		if (!find(ctx, gid, 0, out))
			return SA_ERR_NO_RECORDS;
		if (by_lid && out->lid != lid)
			return SA_ERR_NO_RECORDS;
		return 0;
	}
	if (by_lid) {
		if (!find(ctx, NULL, lid, &p))
			return SA_ERR_NO_RECORDS;
		*out = p;
		return 0;
	}
	if (!dflt)
		return SA_ERR_REQ_INSUFFICIENT_COMPONENTS;
	*out = *dflt;
	return 0;
}

/*
 * The PathRecords for the query's template q under mask: 0 and *n records,
 * or an SA status code. Every GID and LID names one port, so there is one
 * source and one destination: one record, or with --sa-lmc L and NumbPath
 * k > 1 up to min(k, 2^L, 3) (the most one MAD holds), record i from base
 * LID + i to base LID + i, as an SA offers the LMC paths of two ports
 * (their other fields alike).
 */
static int path_records(const struct hub_sa *sa, const struct sa_path_rec *q,
			uint64_t mask, const struct hub_sa_port *requester,
			hub_sa_find_fn find, void *ctx, struct sa_path_rec *rec,
			unsigned int *n)
{
	struct hub_sa_port src, dst;
	int rc;

	*n = 0;
	rc = path_end(mask & SA_PR_COMP_DGID, q->dgid, mask & SA_PR_COMP_DLID,
		      q->dlid, NULL, find, ctx, &dst);
	if (rc)
		return rc;
	rc = path_end(mask & SA_PR_COMP_SGID, q->sgid, mask & SA_PR_COMP_SLID,
		      q->slid, requester, find, ctx, &src);
	if (rc)
		return rc;
	if (!sel_row_ok(mask, SA_PR_COMP_MTU, SA_PR_COMP_MTU_SELECTOR,
			q->mtu_selector, sa->c.mtu, q->mtu) ||
	    !sel_row_ok(mask, SA_PR_COMP_RATE, SA_PR_COMP_RATE_SELECTOR,
			q->rate_selector, rate_halves(sa->c.rate),
			rate_halves(q->rate)) ||
	    !sel_row_ok(mask, SA_PR_COMP_PACKET_LIFE_TIME,
			SA_PR_COMP_PLT_SELECTOR, q->plt_selector, sa->c.plt,
			q->packet_life_time) ||
	    /* No raw (non-IBA) traffic paths on this fabric. */
	    ((mask & SA_PR_COMP_RAW_TRAFFIC) && q->raw_traffic) ||
	    /* NumbPath 0 asks for no path. */
	    ((mask & SA_PR_COMP_NUMB_PATH) && !q->numb_path))
		return SA_ERR_NO_RECORDS;

	memset(rec, 0, sizeof(*rec));
	if (mask & SA_PR_COMP_SERVICE_ID)
		sa_path_rec_set_service_id(rec, sa_path_rec_service_id(q));
	memcpy(rec->dgid, dst.gid, SIM_GID_SIZE);
	memcpy(rec->sgid, src.gid, SIM_GID_SIZE);
	rec->dlid = dst.lid;
	rec->slid = src.lid;
	/* One subnet: hop limit and flow label 0 unless asked (echoed). */
	rec->flow_label = mask & SA_PR_COMP_FLOW_LABEL ? q->flow_label : 0;
	rec->hop_limit = mask & SA_PR_COMP_HOP_LIMIT ? q->hop_limit : 0;
	rec->tclass = mask & SA_PR_COMP_TCLASS ? q->tclass : 0;
	rec->reversible = 1;
	rec->numb_path = 1;
	rec->pkey = mask & SA_PR_COMP_PKEY ? q->pkey : 0xffff;
	rec->qos_class = mask & SA_PR_COMP_QOS_CLASS ? q->qos_class : 0;
	rec->sl = mask & SA_PR_COMP_SL ? q->sl : sa->c.sl;
	rec->mtu_selector = SA_SEL_EXACTLY;
	rec->mtu = sa->c.mtu;
	rec->rate_selector = SA_SEL_EXACTLY;
	rec->rate = sa->c.rate;
	rec->plt_selector = SA_SEL_EXACTLY;
	rec->packet_life_time = sa->c.plt;
	rec->preference = 0;
	*n = 1;
	if (sa->c.lmc && (mask & SA_PR_COMP_NUMB_PATH) && q->numb_path > 1) {
		unsigned int want = q->numb_path < (1u << sa->c.lmc) ?
					    q->numb_path :
					    1u << sa->c.lmc;

		for (; *n < want && *n < HUB_SA_MAX_RECS; (*n)++) {
			rec[*n] = rec[0];
			rec[*n].dlid = (uint16_t)(rec[0].dlid + *n);
			rec[*n].slid = (uint16_t)(rec[0].slid + *n);
		}
	}
	return 0;
}

static void sa_cpi(const struct hub_sa *sa, struct sa_class_port_info *cpi)
{
	memset(cpi, 0, sizeof(*cpi));
	cpi->base_version = CM_MAD_BASE_VERSION;
	cpi->class_version = SA_CLASS_VERSION;
	cpi->resp_time_value = sa->c.resp_time_value;
	if (sa->c.redirect_lid) {
		cpi->redirect_lid = sa->c.redirect_lid;
		cpi->redirect_qp = sa->c.redirect_qpn;
		cpi->redirect_qkey = HUB_SA_QKEY;
		cpi->redirect_pkey = 0xffff;
	}
}

/* An answer with no data: busy, or an error code (no records). */
static void answer_status(const struct sa_msg *r, uint16_t status,
			  uint8_t out[SIM_MAD_SIZE])
{
	struct sa_msg m = *r;

	m.hdr.status = status;
	m.sa.attr_offset = 0;
	if (m.rec == SA_REC_CLASS_PORT_INFO)
		sa_cpi_mad_encode(&m, NULL, out);
	else
		sa_path_mad_encode(&m, NULL, 0, out, SIM_MAD_SIZE);
}

/*
 * IBTA 13.5.3.3: status "redirect required", the data ClassPortInfo with
 * the redirect fields; the attribute stays the request's (PathRecord),
 * which sa_mad_decode takes (docs/SA.md).
 */
static void answer_redirect(const struct hub_sa *sa, const struct sa_msg *r,
			    uint8_t out[SIM_MAD_SIZE])
{
	struct sa_class_port_info cpi;
	struct sa_msg m = *r;
	struct cm_mad_hdr h;

	sa_cpi(sa, &cpi);
	m.hdr.status = SA_STATUS_REDIRECT;
	m.sa.attr_offset = 0;
	sa_cpi_mad_encode(&m, &cpi, out);
	h = m.hdr;
	h.base_version = CM_MAD_BASE_VERSION;
	h.mgmt_class = SA_MGMT_CLASS;
	h.class_version = SA_CLASS_VERSION;
	cm_mad_hdr_encode(&h, out); /* the request's attribute id */
}

bool hub_sa_query(struct hub_sa *sa, const uint8_t in[SIM_MAD_SIZE],
		  bool at_redirect, const struct hub_sa_port *requester,
		  hub_sa_find_fn find, void *ctx, uint8_t out[SIM_MAD_SIZE],
		  struct sim_addr *from)
{
	struct sa_path_rec q, rec[HUB_SA_MAX_RECS];
	struct sa_msg req, m;
	unsigned int n = 0;
	int code;

	sa->st.queries++;
	if (sa_mad_decode(in, SIM_MAD_SIZE, 0, &req, NULL) ||
	    (req.hdr.method != SA_METHOD_GET &&
	     req.hdr.method != SA_METHOD_GET_TABLE)) {
		sa->st.malformed++;
		return false;
	}
	if (sa->c.drop_left) {
		sa->c.drop_left--;
		sa->st.dropped++;
		return false;
	}

	memset(from, 0, sizeof(*from));
	from->lid = at_redirect ? sa->c.redirect_lid : sa->c.sm_lid;
	from->qpn = at_redirect ? sa->c.redirect_qpn : 1;

	/* The answer's headers: the request's, as a response (SM_Key 0). */
	m = req;
	m.hdr.method = req.hdr.method == SA_METHOD_GET ?
			       SA_METHOD_GET_RESP :
			       SA_METHOD_GET_TABLE_RESP;
	m.hdr.status = 0;
	memset(&m.sa, 0, sizeof(m.sa));
	m.sa.comp_mask = req.sa.comp_mask;
	sa->st.answered++;

	if (sa->c.busy_left) {
		sa->c.busy_left--;
		sa->st.busy++;
		answer_status(&m, SA_STATUS_BUSY, out);
		return true;
	}
	if (sa->c.error_left) {
		sa->c.error_left--;
		sa->st.errors++;
		answer_status(&m, (uint16_t)(sa->c.error_code << 8), out);
		return true;
	}
	if (req.rec == SA_REC_CLASS_PORT_INFO) {
		struct sa_class_port_info cpi;

		sa_cpi(sa, &cpi);
		sa_cpi_mad_encode(&m, &cpi, out);
		return true;
	}
	if (sa->c.redirect_lid && !at_redirect) {
		sa->st.redirected++;
		answer_redirect(sa, &m, out);
		return true;
	}

	sa_msg_path_rec(&req, 0, &q);
	code = path_records(sa, &q, req.sa.comp_mask, requester, find, ctx, rec,
			    &n);
	if (code) {
		if (code == SA_ERR_NO_RECORDS)
			sa->st.no_records++;
		else
			sa->st.invalid++;
		answer_status(&m, (uint16_t)(code << 8), out);
		return true;
	}
	if (m.hdr.method == SA_METHOD_GET_TABLE_RESP) {
		/* One segment, as the kernel's RMPP delivers it. */
		m.sa.rmpp_version = SA_RMPP_VERSION;
		m.sa.rmpp_type = SA_RMPP_TYPE_DATA;
		m.sa.rmpp_flags = SA_RMPP_FLAG_ACTIVE | SA_RMPP_FLAG_FIRST |
				  SA_RMPP_FLAG_LAST;
		m.sa.rmpp_resp_time = sa->c.resp_time_value;
		m.sa.segment_number = 1;
		m.sa.payload_length =
			SA_RMPP_PAYLOAD_HDR + n * SA_PATH_REC_SIZE;
		m.sa.attr_offset = SA_PATH_REC_SIZE / 8;
	}
	sa_path_mad_encode(&m, rec, n, out, SIM_MAD_SIZE);
	return true;
}
