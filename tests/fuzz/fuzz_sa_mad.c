// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the SA MAD codec (proto/sa_mad.c).
 *
 * Every input is a received SA MAD (one MAD, or a reassembled table) for
 * sa_mad_decode(), with and without SA_DECODE_STRICT:
 *
 *  - both return 0 or -EBADMSG, and agree: strict refuses exactly what
 *    lenient accepts with SA_FAULT_RESERVED, naming the same field;
 *  - a decoded MAD's records lie inside the input, each header field and
 *    each record field equals the bits this file reads on its own, and
 *    SA_FAULT_RESERVED is reported exactly when a reserved bit this file
 *    finds (common header word, SA header, any record) is set;
 *  - decode -> encode -> decode is stable: the records and headers encode
 *    to a MAD of the input's length that decodes strictly to the same
 *    headers and records, and encodes again to the same bytes.
 *
 * Field positions come from sa_rec_desc(); the bits are read here with
 * code of this file's own, so a packing bug shows up as a disagreement.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "sa_mad.h"

static uint64_t bits_get(const uint8_t *p, const struct cm_field_desc *f)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < f->width; i++) {
		unsigned int pos = f->byte * 8u + f->bit + i;

		v = (v << 1) | ((p[pos / 8] >> (7 - pos % 8)) & 1);
	}
	return v;
}

static uint64_t member(const void *s, const struct cm_field_desc *f)
{
	const uint8_t *p = (const uint8_t *)s + f->offset;
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	switch (f->kind) {
	case CM_KIND_u8:
		memcpy(&u8, p, 1);
		return u8;
	case CM_KIND_u16:
		memcpy(&u16, p, 2);
		return u16;
	case CM_KIND_u32:
		memcpy(&u32, p, 4);
		return u32;
	case CM_KIND_u64:
		memcpy(&u64, p, 8);
		return u64;
	case CM_KIND_bytes:
	case CM_KIND_rsvd:
		break;
	}
	return 0;
}

/*
 * A decoded struct against the record bytes it came from; true when one
 * of the record's reserved rows is set.
 */
static bool check_rec(enum sa_rec_type t, const void *s, const uint8_t *p)
{
	const struct sa_rec_desc *d = sa_rec_desc(t);
	bool rsvd = false;

	FUZZ_CHECK(d);
	for (unsigned int i = 0; i < d->nfields; i++) {
		const struct cm_field_desc *f = &d->fields[i];

		if (f->kind == CM_KIND_rsvd)
			rsvd |= bits_get(p, f) != 0;
		else if (f->kind == CM_KIND_bytes)
			FUZZ_CHECK(!memcmp((const uint8_t *)s + f->offset,
					   p + f->byte, f->width / 8));
		else
			FUZZ_CHECK(member(s, f) == bits_get(p, f));
	}
	return rsvd;
}

/* Encode m's records (as decoded) into out[0..size). */
static int encode(const struct sa_msg *m, uint8_t *out, size_t size)
{
	struct sa_path_rec *recs;
	struct sa_class_port_info cpi;
	int n;

	if (m->rec == SA_REC_CLASS_PORT_INFO) {
		FUZZ_CHECK(m->nrec == 1);
		FUZZ_CHECK(sa_msg_class_port_info(m, &cpi) == 0);
		FUZZ_CHECK(size == SA_MAD_SIZE);
		return sa_cpi_mad_encode(m, &cpi, out);
	}
	FUZZ_CHECK(m->rec == SA_REC_PATH_REC);
	recs = calloc(m->nrec + 1, sizeof(*recs));
	FUZZ_CHECK(recs);
	for (unsigned int i = 0; i < m->nrec; i++)
		FUZZ_CHECK(sa_msg_path_rec(m, i, &recs[i]) == 0);
	FUZZ_CHECK(sa_msg_path_rec(m, m->nrec, &recs[m->nrec]) == -ERANGE);
	n = sa_path_mad_encode(m, recs, m->nrec, out, size);
	free(recs);
	return n;
}

static void check_same(const struct sa_msg *a, const struct sa_msg *b)
{
	struct cm_mad_hdr h = a->hdr;

	h.rsvd = 0;
	FUZZ_CHECK(!memcmp(&h, &b->hdr, sizeof(h)));
	FUZZ_CHECK(!memcmp(&a->sa, &b->sa, sizeof(a->sa)));
	FUZZ_CHECK(a->rec == b->rec);
	FUZZ_CHECK(a->nrec == b->nrec);
	FUZZ_CHECK(a->stride == b->stride);
	for (unsigned int i = 0; i < a->nrec; i++) {
		struct sa_path_rec ra, rb;
		struct sa_class_port_info ca, cb;
		uint8_t ea[SA_CLASS_PORT_INFO_SIZE],
			eb[SA_CLASS_PORT_INFO_SIZE];

		if (a->rec == SA_REC_PATH_REC) {
			FUZZ_CHECK(sa_msg_path_rec(a, i, &ra) == 0);
			FUZZ_CHECK(sa_msg_path_rec(b, i, &rb) == 0);
			sa_path_rec_encode(&ra, ea);
			sa_path_rec_encode(&rb, eb);
			FUZZ_CHECK(!memcmp(ea, eb, SA_PATH_REC_SIZE));
		} else {
			FUZZ_CHECK(sa_msg_class_port_info(a, &ca) == 0);
			FUZZ_CHECK(sa_msg_class_port_info(b, &cb) == 0);
			sa_class_port_info_encode(&ca, ea);
			sa_class_port_info_encode(&cb, eb);
			FUZZ_CHECK(!memcmp(ea, eb, SA_CLASS_PORT_INFO_SIZE));
		}
	}
}

static void check_decoded(const uint8_t *data, size_t size,
			  const struct sa_msg *m,
			  const struct sa_fault *lenient)
{
	struct sa_msg again, third;
	struct sa_fault f;
	uint8_t *out, *out2;
	bool rsvd;
	int n;

	FUZZ_CHECK(m->hdr.mgmt_class == SA_MGMT_CLASS);
	FUZZ_CHECK(m->data == data + SA_DATA_OFFSET);
	FUZZ_CHECK(m->stride >= sa_rec_desc(m->rec)->size);
	FUZZ_CHECK(SA_DATA_OFFSET + (size_t)m->nrec * m->stride <= size);
	rsvd = data[18] || data[19];
	rsvd |= check_rec(SA_REC_HDR, &m->sa, data + CM_MAD_HDR_SIZE);
	for (unsigned int i = 0; i < m->nrec; i++) {
		const uint8_t *p = m->data + (size_t)i * m->stride;
		struct sa_path_rec pr;
		struct sa_class_port_info cpi;

		if (m->rec == SA_REC_PATH_REC) {
			FUZZ_CHECK(sa_msg_path_rec(m, i, &pr) == 0);
			rsvd |= check_rec(m->rec, &pr, p);
		} else {
			FUZZ_CHECK(sa_msg_class_port_info(m, &cpi) == 0);
			rsvd |= check_rec(m->rec, &cpi, p);
		}
	}
	FUZZ_CHECK(rsvd == (lenient->code == SA_FAULT_RESERVED));

	out = malloc(size);
	out2 = malloc(size);
	FUZZ_CHECK(out && out2);
	n = encode(m, out, size);
	FUZZ_CHECK(n == (int)size);
	FUZZ_CHECK(sa_mad_decode(out, size, SA_DECODE_STRICT, &again, &f) == 0);
	FUZZ_CHECK(f.code == SA_FAULT_NONE);
	check_same(m, &again);
	FUZZ_CHECK(encode(&again, out2, size) == (int)size);
	FUZZ_CHECK(!memcmp(out, out2, size));
	FUZZ_CHECK(sa_mad_decode(out2, size, 0, &third, &f) == 0);
	check_same(&again, &third);
	free(out);
	free(out2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sa_msg lenient, strict, norm;
	struct sa_fault fl, fs, fn;
	int rl, rs, rn;

	rl = sa_mad_decode(data, size, 0, &lenient, &fl);
	rs = sa_mad_decode(data, size, SA_DECODE_STRICT, &strict, &fs);
	FUZZ_CHECK(rl == 0 || rl == -EBADMSG);
	FUZZ_CHECK(rs == 0 || rs == -EBADMSG);
	FUZZ_CHECK(sa_fault_str(fl.code) && sa_fault_str(fs.code));
	/* A transport without RMPP: the decode still ends in 0 or
	 * -EBADMSG and its records stay inside the buffer. */
	rn = sa_mad_decode(data, size, SA_DECODE_NO_RMPP, &norm, &fn);
	FUZZ_CHECK(rn == 0 || rn == -EBADMSG);
	if (rn == 0) {
		static char text[65536];
		size_t n;

		FUZZ_CHECK(norm.stride == 0 ||
			   (size_t)norm.nrec * norm.stride <=
				   size - SA_DATA_OFFSET);
		/* The dump reads every record and prints within its room. */
		n = sa_msg_dump(&norm, text, sizeof(text));
		FUZZ_CHECK(n >= sizeof(text) || strlen(text) == n);
	}
	/* Shorter than a MAD: only a successful table response (the
	 * kernel's reassembly of up to three records, or umad2sim's MAD
	 * as the SA sent it), and never shorter than its headers. */
	if (size < SA_DATA_OFFSET)
		FUZZ_CHECK(rl && fl.code == SA_FAULT_LENGTH);
	if (size < SA_MAD_SIZE && !rl)
		FUZZ_CHECK(lenient.hdr.method == SA_METHOD_GET_TABLE_RESP &&
			   !lenient.hdr.status);
	if (size < SA_MAD_SIZE && !rn)
		FUZZ_CHECK(norm.hdr.method == SA_METHOD_GET_TABLE_RESP &&
			   !norm.hdr.status);
	if (rl) {
		FUZZ_CHECK(rs && fs.code == fl.code);
		FUZZ_CHECK(fl.code != SA_FAULT_NONE &&
			   fl.code != SA_FAULT_RESERVED);
		return 0;
	}
	if (fl.code == SA_FAULT_RESERVED) {
		FUZZ_CHECK(rs && fs.code == SA_FAULT_RESERVED);
		FUZZ_CHECK(fs.field && fl.field && !strcmp(fs.field, fl.field));
	} else {
		FUZZ_CHECK(fl.code == SA_FAULT_NONE);
		FUZZ_CHECK(rs == 0 && fs.code == SA_FAULT_NONE);
		FUZZ_CHECK(!memcmp(&lenient, &strict, sizeof(lenient)));
	}
	check_decoded(data, size, &lenient, &fl);
	return 0;
}

#ifdef FUZZ_STANDALONE
/*
 * Seeds, built with the encoder: a PathRecord query, its table answer in
 * one MAD and reassembled, a failed Get and a failed table, ClassPortInfo
 * Get and GetResp, a table with reserved bits set, and a table as ibsim
 * delivers it (no RMPP).
 */
static void seed_recs(struct sa_path_rec r[5])
{
	memset(r, 0, 5 * sizeof(*r));
	for (unsigned int i = 0; i < 5; i++) {
		sa_path_rec_set_service_id(&r[i], 0x1c2d3e4f5a6b7c8dULL + i);
		r[i].dgid[0] = 0xfe;
		r[i].dgid[1] = 0x80;
		r[i].dgid[15] = (uint8_t)(i + 1);
		r[i].sgid[0] = 0xfe;
		r[i].sgid[1] = 0x80;
		r[i].sgid[15] = 0x42;
		r[i].dlid = (uint16_t)(0x11 + i);
		r[i].slid = 0x22;
		r[i].raw_traffic = (uint8_t)(i & 1);
		r[i].flow_label = 0xabcde;
		r[i].hop_limit = 0x40;
		r[i].tclass = 0x0b;
		r[i].reversible = 1;
		r[i].numb_path = 5;
		r[i].pkey = 0xffff;
		r[i].qos_class = 0x123;
		r[i].sl = 10;
		r[i].mtu_selector = 2;
		r[i].mtu = 4;
		r[i].rate_selector = 2;
		r[i].rate = 7;
		r[i].plt_selector = 2;
		r[i].packet_life_time = 18;
		r[i].preference = (uint8_t)i;
	}
}

static void table(struct sa_msg *m, unsigned int n, bool one_mad)
{
	sa_msg_init(m, SA_REC_PATH_REC, SA_METHOD_GET_TABLE_RESP, 0x77,
		    SA_PR_COMP_DGID | SA_PR_COMP_SGID | SA_PR_COMP_NUMB_PATH);
	m->sa.rmpp_version = SA_RMPP_VERSION;
	m->sa.rmpp_type = SA_RMPP_TYPE_DATA;
	m->sa.rmpp_resp_time = 18;
	m->sa.rmpp_flags = SA_RMPP_FLAG_ACTIVE | SA_RMPP_FLAG_FIRST |
			   (one_mad ? SA_RMPP_FLAG_LAST : 0);
	m->sa.segment_number = 1;
	m->sa.payload_length =
		one_mad ? SA_RMPP_PAYLOAD_HDR + n * SA_PATH_REC_SIZE : 0;
	m->sa.attr_offset = SA_PATH_REC_SIZE / 8;
}

void fuzz_write_seeds(void)
{
	struct sa_path_rec r[5];
	struct sa_class_port_info cpi = { .base_version = 1,
					  .class_version = 2,
					  .capability_mask = 0x0602,
					  .resp_time_value = 18,
					  .redirect_qp = 1,
					  .redirect_qkey = 0x80010000,
					  .trap_lid = 1 };
	struct sa_msg m;
	uint8_t mad[SA_DATA_OFFSET + 5 * SA_PATH_REC_SIZE];
	int n;

	seed_recs(r);
	sa_msg_init(&m, SA_REC_PATH_REC, SA_METHOD_GET_TABLE, 0x77,
		    SA_PR_COMP_DGID | SA_PR_COMP_SGID | SA_PR_COMP_NUMB_PATH);
	n = sa_path_mad_encode(&m, r, 1, mad, sizeof(mad));
	fuzz_seed("pr-gettable.mad", mad, (size_t)n);

	m.hdr.method = SA_METHOD_GET;
	n = sa_path_mad_encode(&m, r, 1, mad, sizeof(mad));
	fuzz_seed("pr-get.mad", mad, (size_t)n);

	m.hdr.method = SA_METHOD_GET_RESP;
	m.hdr.status = SA_ERR_NO_RECORDS << 8;
	n = sa_path_mad_encode(&m, r, 1, mad, sizeof(mad));
	fuzz_seed("pr-getresp-norecords.mad", mad, (size_t)n);

	table(&m, 2, true);
	n = sa_path_mad_encode(&m, r, 2, mad, sizeof(mad));
	fuzz_seed("pr-table-2.mad", mad, (size_t)n);

	table(&m, 3, true);
	n = sa_path_mad_encode(&m, r, 3, mad, sizeof(mad));
	mad[SA_DATA_OFFSET + 44] |= 0x40; /* PathRecord rsvd44 */
	fuzz_seed("pr-table-3-rsvd.mad", mad, (size_t)n);

	table(&m, 0, true);
	m.sa.attr_offset = 0;
	n = sa_path_mad_encode(&m, r, 0, mad, sizeof(mad));
	fuzz_seed("pr-table-empty.mad", mad, (size_t)n);

	/* As opensm's answer arrives through ibsim: RMPP never ran, so
	 * version, type, segment and payload length are 0, Active alone
	 * (SA_DECODE_NO_RMPP counts two records up to the zero slot). */
	table(&m, 2, true);
	m.sa.rmpp_version = 0;
	m.sa.rmpp_type = 0;
	m.sa.rmpp_resp_time = 0;
	m.sa.rmpp_flags = SA_RMPP_FLAG_ACTIVE;
	m.sa.segment_number = 0;
	m.sa.payload_length = 0;
	n = sa_path_mad_encode(&m, r, 2, mad, sizeof(mad));
	fuzz_seed("pr-table-no-rmpp.mad", mad, (size_t)n);

	table(&m, 5, false);
	n = sa_path_mad_encode(&m, r, 5, mad, sizeof(mad));
	fuzz_seed("pr-table-5-reassembled.mad", mad, (size_t)n);

	table(&m, 0, true);
	m.hdr.status = SA_ERR_REQ_INSUFFICIENT_COMPONENTS << 8;
	m.sa.rmpp_flags = 0;
	n = sa_path_mad_encode(&m, r, 0, mad, sizeof(mad));
	fuzz_seed("pr-table-error.mad", mad, (size_t)n);

	sa_msg_init(&m, SA_REC_CLASS_PORT_INFO, SA_METHOD_GET, 0x78, 0);
	n = sa_cpi_mad_encode(&m, NULL, mad);
	fuzz_seed("cpi-get.mad", mad, (size_t)n);

	m.hdr.method = SA_METHOD_GET_RESP;
	n = sa_cpi_mad_encode(&m, &cpi, mad);
	fuzz_seed("cpi-getresp.mad", mad, (size_t)n);
}
#endif
