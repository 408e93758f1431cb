// SPDX-License-Identifier: MIT
/*
 * SA MAD encode and decode, driven by sa_fields.def; the common MAD header
 * and the bit packing are cm_mad.c's. No field offset is written twice.
 */
#include "sa_mad.h"

#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/*
 * The descriptors' member offsets need each row's struct, but a row names
 * only its record's short prefix: one unused object per record gives the
 * prefix a type to take offsetof in.
 */
#define SA_REC(NAME, name, PFX, size, ref)                                     \
	__attribute__((unused)) static const struct sa_##name sa_shape_##PFX;
#define SA_FIELD(PFX, NAME, field, byte, bit, width, kind)
#define SA_END(PFX)
#include "sa_fields.def"
#undef SA_REC
#undef SA_FIELD
#undef SA_END

#define SA_OFFSET_u8(PFX, field) offsetof(__typeof__(sa_shape_##PFX), field)
#define SA_OFFSET_u16 SA_OFFSET_u8
#define SA_OFFSET_u32 SA_OFFSET_u8
#define SA_OFFSET_u64 SA_OFFSET_u8
#define SA_OFFSET_bytes SA_OFFSET_u8
#define SA_OFFSET_rsvd(PFX, field) 0

#define SA_REC(NAME, name, PFX, size, ref)                                     \
	static const struct cm_field_desc sa_##name##_fields[] = {
#define SA_FIELD(PFX, NAME, field, byte, bit, width, kind)                     \
	{                                                                      \
		#field, byte,		bit,                                   \
		width,	CM_KIND_##kind, SA_OFFSET_##kind(PFX, field)           \
	},
#define SA_END(PFX)                                                            \
	}                                                                      \
	;
#include "sa_fields.def"
#undef SA_REC
#undef SA_FIELD
#undef SA_END

static const struct sa_rec_desc sa_recs[SA_REC__COUNT] = {
#define SA_REC(NAME, name, PFX, size, ref)                                     \
	[SA_REC_##NAME] = { #NAME, ref, size, ARRAY_SIZE(sa_##name##_fields),  \
			    sa_##name##_fields },
#define SA_FIELD(PFX, NAME, field, byte, bit, width, kind)
#define SA_END(PFX)
#include "sa_fields.def"
#undef SA_REC
#undef SA_FIELD
#undef SA_END
};

const struct sa_rec_desc *sa_rec_desc(enum sa_rec_type type)
{
	if ((unsigned int)type >= SA_REC__COUNT)
		return NULL;
	return &sa_recs[type];
}

/* Record codecs, one pair per record, every row a constant place. */
#define SA_ENC_u8(field, byte, bit, width)                                     \
	cm_bits_set(p, byte, bit, width, r->field);
#define SA_ENC_u16 SA_ENC_u8
#define SA_ENC_u32 SA_ENC_u8
#define SA_ENC_u64 SA_ENC_u8
#define SA_ENC_bytes(field, byte, bit, width)                                  \
	memcpy(p + (byte), r->field, (width) / 8);
#define SA_ENC_rsvd(field, byte, bit, width)                                   \
	cm_bits_set(p, byte, bit, width, 0);

#define SA_REC(NAME, name, PFX, size, ref)                                     \
	void sa_##name##_encode(const struct sa_##name *r, uint8_t *p)         \
	{
#define SA_FIELD(PFX, NAME, field, byte, bit, width, kind)                     \
	SA_ENC_##kind(field, byte, bit, width)
#define SA_END(PFX) }
#include "sa_fields.def"
#undef SA_REC
#undef SA_FIELD
#undef SA_END

#define SA_DEC_INT(field, byte, bit, width)                                    \
	r->field = (__typeof__(r->field))cm_bits_get(p, byte, bit, width);
#define SA_DEC_u8 SA_DEC_INT
#define SA_DEC_u16 SA_DEC_INT
#define SA_DEC_u32 SA_DEC_INT
#define SA_DEC_u64 SA_DEC_INT
#define SA_DEC_bytes(field, byte, bit, width)                                  \
	memcpy(r->field, p + (byte), (width) / 8);
#define SA_DEC_rsvd(field, byte, bit, width)                                   \
	if (!rsvd && cm_bits_get(p, byte, bit, width))                         \
		rsvd = #field;

#define SA_REC(NAME, name, PFX, size, ref)                                     \
	const char *sa_##name##_decode(const uint8_t *p, struct sa_##name *r)  \
	{                                                                      \
		const char *rsvd = NULL;
#define SA_FIELD(PFX, NAME, field, byte, bit, width, kind)                     \
	SA_DEC_##kind(field, byte, bit, width)
#define SA_END(PFX)                                                            \
	return rsvd;                                                           \
	}
#include "sa_fields.def"
#undef SA_REC
#undef SA_FIELD
#undef SA_END

static const char *const sa_status_text[SA_ERR_MAX + 1] = {
	[SA_ERR_NONE] = "success",
	[SA_ERR_NO_RESOURCES] = "no resources",
	[SA_ERR_REQ_INVALID] = "request invalid",
	[SA_ERR_NO_RECORDS] = "no records",
	[SA_ERR_TOO_MANY_RECORDS] = "too many records",
	[SA_ERR_REQ_INVALID_GID] = "invalid GID",
	[SA_ERR_REQ_INSUFFICIENT_COMPONENTS] = "insufficient components",
	[SA_ERR_REQ_DENIED] = "request denied",
	[SA_ERR_PRIO_SUGGESTED] = "priority suggested",
};

const char *sa_status_str(unsigned int code)
{
	if (code > SA_ERR_MAX || !sa_status_text[code])
		return "unknown";
	return sa_status_text[code];
}

static const char *const sa_fault_text[] = {
	[SA_FAULT_NONE] = "ok",
	[SA_FAULT_LENGTH] = "SA MAD is not 256 bytes (nor a reassembled table)",
	[SA_FAULT_BASE_VERSION] = "base version is not 1",
	[SA_FAULT_CLASS] = "management class is not SA (0x03)",
	[SA_FAULT_CLASS_VERSION] = "SA class version is not 2",
	[SA_FAULT_METHOD] = "method is no SA Get/GetTable for this attribute",
	[SA_FAULT_ATTR_ID] =
		"attribute is neither PathRecord nor ClassPortInfo",
	[SA_FAULT_ATTR_OFFSET] = "attribute offset is smaller than a record",
	[SA_FAULT_RMPP] = "RMPP header does not frame a table response",
	[SA_FAULT_RESERVED] = "reserved field is not zero",
};

const char *sa_fault_str(enum sa_fault_code code)
{
	if ((unsigned int)code >= ARRAY_SIZE(sa_fault_text) ||
	    !sa_fault_text[code])
		return "unknown fault";
	return sa_fault_text[code];
}

static int fault(struct sa_fault *out, enum sa_fault_code code,
		 const char *field, uint64_t value)
{
	if (out)
		*out = (struct sa_fault){ code, field, value };
	return code == SA_FAULT_NONE ? 0 : -EBADMSG;
}

static int rec_from_attr(uint16_t attr_id)
{
	switch (attr_id) {
	case SA_ATTR_PATH_REC:
		return SA_REC_PATH_REC;
	case SA_ATTR_CLASS_PORT_INFO:
		return SA_REC_CLASS_PORT_INFO;
	}
	return -1;
}

/* IBTA 15.2.5 Table 193: ClassPortInfo is Get only; PathRecord Get and
 * GetTable. Requests decode too, for tests, captures and fuzzing. */
static bool method_ok(enum sa_rec_type rec, uint8_t method)
{
	switch (method) {
	case SA_METHOD_GET:
	case SA_METHOD_GET_RESP:
		return true;
	case SA_METHOD_GET_TABLE:
	case SA_METHOD_GET_TABLE_RESP:
		return rec == SA_REC_PATH_REC;
	}
	return false;
}

/* The first non-zero reserved row of any record, in order. */
static const char *records_rsvd(const struct sa_msg *m)
{
	for (unsigned int i = 0; i < m->nrec; i++) {
		const uint8_t *p = m->data + (size_t)i * m->stride;
		struct sa_path_rec pr;
		struct sa_class_port_info cpi;
		const char *r = NULL;

		switch (m->rec) {
		case SA_REC_PATH_REC:
			r = sa_path_rec_decode(p, &pr);
			break;
		case SA_REC_CLASS_PORT_INFO:
			r = sa_class_port_info_decode(p, &cpi);
			break;
		case SA_REC_HDR:
		case SA_REC__COUNT:
			break;
		}
		if (r)
			return r;
	}
	return NULL;
}

/*
 * Where a successful GetTableResp's records are (IBTA 15.2.1.1, 13.6.2):
 * it must be RMPP DATA. In one MAD the payload length (counted from MAD
 * byte 36) says how much of the 200 data bytes are records; a reassembled
 * message is exactly as long as its data (the kernel's get_mad_len() trims
 * the last segment's padding). Records sit AttributeOffset 8-byte words
 * apart; with no records opensm sends an offset of 0.
 */
static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * SA_DECODE_NO_RMPP: one MAD whose RMPP header nobody filled (opensm
 * leaves version, type and payload length to the kernel's RMPP layer,
 * which ibsim does not have). The attribute offset gives the stride; the
 * records are the non-zero slots before the first zero one.
 */
static int no_rmpp_layout(struct sa_msg *m, size_t rec_size,
			  struct sa_fault *out)
{
	unsigned int max, n = 0;

	m->stride = (unsigned int)rec_size;
	if (all_zero(m->data, SA_DATA_SIZE))
		return 0;
	if (m->sa.attr_offset * 8u < rec_size)
		return fault(out, SA_FAULT_ATTR_OFFSET, "attr_offset",
			     m->sa.attr_offset);
	m->stride = m->sa.attr_offset * 8u;
	max = SA_DATA_SIZE / m->stride;
	while (n < max && !all_zero(m->data + (size_t)n * m->stride, m->stride))
		n++;
	for (unsigned int i = n + 1; i < max; i++)
		if (!all_zero(m->data + (size_t)i * m->stride, m->stride))
			return fault(out, SA_FAULT_LENGTH, "data", i);
	m->nrec = n;
	return 0;
}

static int table_layout(struct sa_msg *m, size_t len, size_t rec_size,
			unsigned int flags, struct sa_fault *out)
{
	size_t dlen;

	if ((flags & SA_DECODE_NO_RMPP) && len <= SA_MAD_SIZE &&
	    m->sa.rmpp_version == 0) {
		if (len == SA_MAD_SIZE)
			return no_rmpp_layout(m, rec_size, out);
		/* Shorter than a MAD: the length the SA sent it with, which
		 * umad2sim passes on (56 bytes and the records). */
		dlen = len - SA_DATA_OFFSET;
		goto records;
	}

	if (!(m->sa.rmpp_flags & SA_RMPP_FLAG_ACTIVE))
		return fault(out, SA_FAULT_RMPP, "rmpp_flags",
			     m->sa.rmpp_flags);
	if (m->sa.rmpp_version != SA_RMPP_VERSION)
		return fault(out, SA_FAULT_RMPP, "rmpp_version",
			     m->sa.rmpp_version);
	if (m->sa.rmpp_type != SA_RMPP_TYPE_DATA)
		return fault(out, SA_FAULT_RMPP, "rmpp_type", m->sa.rmpp_type);
	/* A later segment on its own: the agent was registered without
	 * RMPP and the kernel passed segments through unassembled. */
	if (m->sa.segment_number != 1)
		return fault(out, SA_FAULT_RMPP, "segment_number",
			     m->sa.segment_number);
	if (len == SA_MAD_SIZE) {
		uint32_t pl = m->sa.payload_length;

		if (pl < SA_RMPP_PAYLOAD_HDR ||
		    pl > SA_MAD_SIZE - SA_RMPP_PAYLOAD_OFFSET)
			return fault(out, SA_FAULT_RMPP, "payload_length", pl);
		dlen = pl - SA_RMPP_PAYLOAD_HDR;
	} else {
		/* The kernel's reassembly: 56 bytes and the records, shorter
		 * than a MAD for up to three PathRecords. */
		dlen = len - SA_DATA_OFFSET;
	}
records:
	m->stride = (unsigned int)rec_size;
	if (dlen == 0)
		return 0;
	if (m->sa.attr_offset * 8u < rec_size)
		return fault(out, SA_FAULT_ATTR_OFFSET, "attr_offset",
			     m->sa.attr_offset);
	m->stride = m->sa.attr_offset * 8u;
	if (dlen % m->stride) {
		if (len == SA_MAD_SIZE)
			return fault(out, SA_FAULT_RMPP, "payload_length",
				     m->sa.payload_length);
		return fault(out, SA_FAULT_LENGTH, NULL, len);
	}
	if (dlen / m->stride > UINT_MAX)
		return fault(out, SA_FAULT_LENGTH, NULL, len);
	m->nrec = (unsigned int)(dlen / m->stride);
	return 0;
}

int sa_mad_decode(const void *buf, size_t len, unsigned int flags,
		  struct sa_msg *m, struct sa_fault *out)
{
	const uint8_t *p = buf;
	const char *rsvd = NULL;
	uint64_t rsvd_value = 0;
	size_t rec_size;
	int rec, rc;

	fault(out, SA_FAULT_NONE, NULL, 0);
	/* Only a successful table response may be shorter than a MAD
	 * (checked below); every MAD has its 56 header bytes. */
	if (len < SA_DATA_OFFSET)
		return fault(out, SA_FAULT_LENGTH, NULL, len);
	memset(m, 0, sizeof(*m));
	cm_mad_hdr_decode(p, &m->hdr);
	if (m->hdr.base_version != CM_MAD_BASE_VERSION)
		return fault(out, SA_FAULT_BASE_VERSION, "base_version",
			     m->hdr.base_version);
	if (m->hdr.mgmt_class != SA_MGMT_CLASS)
		return fault(out, SA_FAULT_CLASS, "mgmt_class",
			     m->hdr.mgmt_class);
	if (m->hdr.class_version != SA_CLASS_VERSION)
		return fault(out, SA_FAULT_CLASS_VERSION, "class_version",
			     m->hdr.class_version);
	rec = rec_from_attr(m->hdr.attr_id);
	if (rec < 0)
		return fault(out, SA_FAULT_ATTR_ID, "attr_id", m->hdr.attr_id);
	m->rec = (enum sa_rec_type)rec;
	if (!method_ok(m->rec, m->hdr.method))
		return fault(out, SA_FAULT_METHOD, "method", m->hdr.method);
	/* Reserved fields in MAD order; the fault's value is the common
	 * header's reserved word, else 0 (a record's row may be 48 bits). */
	rsvd = sa_hdr_decode(p + CM_MAD_HDR_SIZE, &m->sa);
	if (m->hdr.rsvd) {
		rsvd = "mad_rsvd";
		rsvd_value = m->hdr.rsvd;
	}

	rec_size = sa_recs[m->rec].size;
	m->data = p + SA_DATA_OFFSET;
	m->stride = (unsigned int)rec_size;
	if (m->hdr.method != SA_METHOD_GET_TABLE_RESP || m->hdr.status) {
		/* One MAD, one record (a query's template, a Get's answer);
		 * a failed table response carries none. */
		if (len != SA_MAD_SIZE)
			return fault(out, SA_FAULT_LENGTH, NULL, len);
		m->nrec = m->hdr.method == SA_METHOD_GET_TABLE_RESP ? 0 : 1;
	} else {
		rc = table_layout(m, len, rec_size, flags, out);
		if (rc)
			return rc;
	}
	if (!rsvd)
		rsvd = records_rsvd(m);
	if (rsvd && (flags & SA_DECODE_STRICT))
		return fault(out, SA_FAULT_RESERVED, rsvd, rsvd_value);
	if (rsvd)
		fault(out, SA_FAULT_RESERVED, rsvd, rsvd_value);
	return 0;
}

int sa_msg_path_rec(const struct sa_msg *m, unsigned int i,
		    struct sa_path_rec *rec)
{
	if (m->rec != SA_REC_PATH_REC)
		return -EINVAL;
	if (i >= m->nrec)
		return -ERANGE;
	sa_path_rec_decode(m->data + (size_t)i * m->stride, rec);
	return 0;
}

int sa_msg_class_port_info(const struct sa_msg *m,
			   struct sa_class_port_info *cpi)
{
	if (m->rec != SA_REC_CLASS_PORT_INFO)
		return -EINVAL;
	if (m->nrec < 1)
		return -ERANGE;
	sa_class_port_info_decode(m->data, cpi);
	return 0;
}

static uint16_t attr_of(enum sa_rec_type rec)
{
	return rec == SA_REC_CLASS_PORT_INFO ? SA_ATTR_CLASS_PORT_INFO :
					       SA_ATTR_PATH_REC;
}

void sa_msg_init(struct sa_msg *m, enum sa_rec_type rec, uint8_t method,
		 uint64_t tid, uint64_t comp_mask)
{
	memset(m, 0, sizeof(*m));
	m->rec = rec;
	m->hdr.base_version = CM_MAD_BASE_VERSION;
	m->hdr.mgmt_class = SA_MGMT_CLASS;
	m->hdr.class_version = SA_CLASS_VERSION;
	m->hdr.method = method;
	m->hdr.tid = tid;
	m->hdr.attr_id = attr_of(rec);
	m->sa.comp_mask = comp_mask;
	m->nrec = 1;
}

/* Headers, and the place of each of nrec records; the caller writes them. */
static int mad_frame(const struct sa_msg *m, enum sa_rec_type rec,
		     unsigned int nrec, uint8_t *out, size_t size,
		     size_t *stride)
{
	bool table = m->hdr.method == SA_METHOD_GET_TABLE_RESP;
	size_t rec_size = sa_recs[rec].size;
	struct cm_mad_hdr h = m->hdr;
	size_t need;

	if (!table && nrec > 1)
		return -EINVAL;
	*stride = table && m->sa.attr_offset * 8u >= rec_size ?
			  m->sa.attr_offset * 8u :
			  rec_size;
	need = SA_DATA_OFFSET + nrec * *stride;
	/* A table that fits one MAD is a whole MAD, unless the caller's
	 * buffer is the reassembled length (56 bytes and the records), the
	 * short form the decoder takes from the kernel and umad2sim. */
	if (need < SA_MAD_SIZE && (!table || size >= SA_MAD_SIZE))
		need = SA_MAD_SIZE;
	if (size < need)
		return -ENOSPC;
	memset(out, 0, need);
	h.base_version = CM_MAD_BASE_VERSION;
	h.mgmt_class = SA_MGMT_CLASS;
	h.class_version = SA_CLASS_VERSION;
	h.attr_id = attr_of(rec);
	cm_mad_hdr_encode(&h, out);
	sa_hdr_encode(&m->sa, out + CM_MAD_HDR_SIZE);
	return (int)need;
}

int sa_path_mad_encode(const struct sa_msg *m, const struct sa_path_rec *recs,
		       unsigned int nrec, uint8_t *out, size_t size)
{
	size_t stride;
	int n = mad_frame(m, SA_REC_PATH_REC, nrec, out, size, &stride);

	for (unsigned int i = 0; n > 0 && i < nrec; i++)
		sa_path_rec_encode(&recs[i], out + SA_DATA_OFFSET + i * stride);
	return n;
}

int sa_cpi_mad_encode(const struct sa_msg *m,
		      const struct sa_class_port_info *cpi,
		      uint8_t out[SA_MAD_SIZE])
{
	size_t stride;
	int n = mad_frame(m, SA_REC_CLASS_PORT_INFO, cpi ? 1 : 0, out,
			  SA_MAD_SIZE, &stride);

	if (n > 0 && cpi)
		sa_class_port_info_encode(cpi, out + SA_DATA_OFFSET);
	return n;
}

static const char *const sa_method_names[256] = {
	[SA_METHOD_GET] = "SubnAdmGet",
	[SA_METHOD_GET_RESP] = "SubnAdmGetResp",
	[SA_METHOD_GET_TABLE] = "SubnAdmGetTable",
	[SA_METHOD_GET_TABLE_RESP] = "SubnAdmGetTableResp",
};

const char *sa_method_name(uint8_t method)
{
	return sa_method_names[method];
}

/*
 * Every row of one record: the decoded struct r for the values, the wire
 * bytes w for reserved rows (which have no member), indented by ind.
 */
static void dump_rec(struct strbuf *d, enum sa_rec_type t, const void *r,
		     const uint8_t *w, const char *ind)
{
	const struct sa_rec_desc *desc = &sa_recs[t];

	for (unsigned int i = 0; i < desc->nfields; i++) {
		const struct cm_field_desc *f = &desc->fields[i];
		const uint8_t *b = (const uint8_t *)r + f->offset;
		uint64_t v;

		switch (f->kind) {
		case CM_KIND_bytes:
			strbuf_printf(d, "%s%s:", ind, f->name);
			for (unsigned int k = 0; k < f->width / 8; k += 2)
				strbuf_printf(d, "%s%02x%02x", k ? ":" : " ",
					      b[k], b[k + 1]);
			strbuf_printf(d, "\n");
			break;
		case CM_KIND_rsvd:
			v = cm_bits_get(w, f->byte, f->bit, f->width);
			if (v)
				strbuf_printf(d,
					      "%s%s: 0x%" PRIx64
					      " (reserved, not zero)\n",
					      ind, f->name, v);
			break;
		case CM_KIND_u8:
		case CM_KIND_u16:
		case CM_KIND_u32:
		case CM_KIND_u64:
			v = cm_field_load(r, f);
			if (f->width >= 16)
				strbuf_printf(d, "%s%s: 0x%0*" PRIx64 "\n", ind,
					      f->name, (f->width + 3) / 4, v);
			else
				strbuf_printf(d, "%s%s: %" PRIu64 "\n", ind,
					      f->name, v);
			break;
		}
	}
}

size_t sa_msg_dump(const struct sa_msg *m, char *buf, size_t size)
{
	struct strbuf d = { buf, size, 0 };
	const struct sa_rec_desc *desc = sa_rec_desc(m->rec);
	const char *method = sa_method_name(m->hdr.method);
	unsigned int code = sa_status_sa_code(m->hdr.status);

	if (size)
		buf[0] = '\0';
	if (!desc || m->rec == SA_REC_HDR)
		return 0;
	strbuf_printf(&d,
		      "SA %s (attr 0x%04x, IBTA %s)\n"
		      "base_version: %u\nmgmt_class: 0x%02x\n"
		      "class_version: %u\nmethod: 0x%02x (%s)\n"
		      "status: 0x%04x",
		      desc->name, m->hdr.attr_id, desc->ibta,
		      m->hdr.base_version, m->hdr.mgmt_class,
		      m->hdr.class_version, m->hdr.method,
		      method ? method : "?", m->hdr.status);
	if (m->hdr.status) {
		const char *sep = " (";

		if (code) {
			strbuf_printf(&d, "%s%s", sep, sa_status_str(code));
			sep = ", ";
		}
		if (sa_status_busy(m->hdr.status)) {
			strbuf_printf(&d, "%sbusy", sep);
			sep = ", ";
		}
		if (sa_status_redirect(m->hdr.status)) {
			strbuf_printf(&d, "%sredirect", sep);
			sep = ", ";
		}
		if (sa_status_invalid_field(m->hdr.status)) {
			strbuf_printf(&d, "%sinvalid field %u", sep,
				      sa_status_invalid_field(m->hdr.status));
			sep = ", ";
		}
		strbuf_printf(&d, "%s", sep[0] == ',' ? ")" : "");
	}
	strbuf_printf(&d, "\ntid: 0x%016" PRIx64 "\nattr_mod: 0x%08x\n",
		      m->hdr.tid, m->hdr.attr_mod);
	/* The SA header rows; reserved ones come from the decoded struct
	 * here, which has none, so they are not printed. */
	for (unsigned int i = 0; i < sa_recs[SA_REC_HDR].nfields; i++) {
		const struct cm_field_desc *f = &sa_recs[SA_REC_HDR].fields[i];
		uint64_t v = cm_field_load(&m->sa, f);

		switch (f->kind) {
		case CM_KIND_rsvd:
		case CM_KIND_bytes:
			break;
		case CM_KIND_u8:
		case CM_KIND_u16:
		case CM_KIND_u32:
		case CM_KIND_u64:
			if (f->width >= 16)
				strbuf_printf(&d, "%s: 0x%0*" PRIx64, f->name,
					      (f->width + 3) / 4, v);
			else
				strbuf_printf(&d, "%s: %" PRIu64, f->name, v);
			break;
		}
		if (f->kind == CM_KIND_rsvd)
			continue;
		if (!strcmp(f->name, "comp_mask") && v) {
			const char *sep = " (";

			for (unsigned int b = 0; b < 64; b++) {
				if (!(v >> b & 1))
					continue;
				if (b < desc->nfields)
					strbuf_printf(&d, "%s%s", sep,
						      desc->fields[b].name);
				else
					strbuf_printf(&d, "%sbit %u", sep, b);
				sep = " ";
			}
			strbuf_printf(&d, ")");
		}
		strbuf_printf(&d, "\n");
	}
	strbuf_printf(&d, "records: %u, %u bytes apart\n", m->nrec, m->stride);
	for (unsigned int i = 0; i < m->nrec; i++) {
		const uint8_t *w = m->data + (size_t)i * m->stride;
		struct sa_path_rec pr;
		struct sa_class_port_info cpi;

		strbuf_printf(&d, "record %u:\n", i);
		switch (m->rec) {
		case SA_REC_PATH_REC:
			sa_path_rec_decode(w, &pr);
			dump_rec(&d, m->rec, &pr, w, "  ");
			break;
		case SA_REC_CLASS_PORT_INFO:
			sa_class_port_info_decode(w, &cpi);
			dump_rec(&d, m->rec, &cpi, w, "  ");
			break;
		case SA_REC_HDR:
		case SA_REC__COUNT:
			break;
		}
	}
	return d.len;
}
