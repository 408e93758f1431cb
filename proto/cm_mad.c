// SPDX-License-Identifier: MIT
/*
 * CM MAD encode, decode, validate and dump, all driven by the descriptor
 * arrays that cm_fields.def expands into. No field offset is written twice.
 */
#include "cm_mad.h"

#include "util.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Descriptor arrays, one per message. */
#define CM_OFFSET_u8(name, field) offsetof(struct cm_##name, field)
#define CM_OFFSET_u16(name, field) offsetof(struct cm_##name, field)
#define CM_OFFSET_u32(name, field) offsetof(struct cm_##name, field)
#define CM_OFFSET_u64(name, field) offsetof(struct cm_##name, field)
#define CM_OFFSET_bytes(name, field) offsetof(struct cm_##name, field)
#define CM_OFFSET_rsvd(name, field) 0

#define CM_MSG(NAME, name, attr, table)                                        \
	static const struct cm_field_desc cm_##name##_fields[] = {
#define CM_FIELD(name, field, byte, bit, width, kind)                          \
	{ #field, byte,		  bit,                                         \
	  width,  CM_KIND_##kind, CM_OFFSET_##kind(name, field) },
#define CM_END(name)                                                           \
	}                                                                      \
	;
#include "cm_fields.def"
#undef CM_MSG
#undef CM_FIELD
#undef CM_END

static const struct cm_msg_desc cm_msgs[CM_MSG__COUNT] = {
#define CM_MSG(NAME, name, attr, table)                                        \
	[CM_MSG_##NAME] = { #NAME, attr, table,                                \
			    ARRAY_SIZE(cm_##name##_fields),                    \
			    cm_##name##_fields },
#define CM_FIELD(name, field, byte, bit, width, kind)
#define CM_END(name)
#include "cm_fields.def"
#undef CM_MSG
#undef CM_FIELD
#undef CM_END
};

/* Every message struct lives in the union at the same offset. */
_Static_assert(offsetof(struct cm_msg, req) == offsetof(struct cm_msg, rej),
	       "message union");

const struct cm_msg_desc *cm_msg_desc(enum cm_msg_type type)
{
	if ((unsigned int)type >= CM_MSG__COUNT)
		return NULL;
	return &cm_msgs[type];
}

int cm_msg_type_from_attr(uint16_t attr_id)
{
	for (unsigned int i = 0; i < CM_MSG__COUNT; i++)
		if (cm_msgs[i].attr_id == attr_id)
			return (int)i;
	return -1;
}

const char *cm_msg_type_name(enum cm_msg_type type)
{
	const struct cm_msg_desc *d = cm_msg_desc(type);

	return d ? d->name : "?";
}

/*
 * n big-endian bytes (n <= 8) as a number, and back. The loads and stores
 * of 2, 4 and 8 bytes are single byte-swapped moves; n is a constant
 * wherever it matters, so the switch folds away.
 */
static inline uint64_t be_get(const uint8_t *p, unsigned int n)
{
	uint16_t v16;
	uint32_t v32;
	uint64_t v = 0;

	switch (n) {
	case 2:
		memcpy(&v16, p, 2);
		return be16toh(v16);
	case 4:
		memcpy(&v32, p, 4);
		return be32toh(v32);
	case 8:
		memcpy(&v, p, 8);
		return be64toh(v);
	}
	for (unsigned int i = 0; i < n; i++)
		v = (v << 8) | p[i];
	return v;
}

static inline void be_put(uint8_t *p, unsigned int n, uint64_t v)
{
	uint16_t v16;
	uint32_t v32;

	switch (n) {
	case 2:
		v16 = htobe16((uint16_t)v);
		memcpy(p, &v16, 2);
		return;
	case 4:
		v32 = htobe32((uint32_t)v);
		memcpy(p, &v32, 4);
		return;
	case 8:
		v = htobe64(v);
		memcpy(p, &v, 8);
		return;
	}
	for (unsigned int i = n; i-- > 0;) {
		p[i] = (uint8_t)v;
		v >>= 8;
	}
}

/*
 * A field of width bits starting bit bits into byte byte (bit 0 the most
 * significant), big-endian, as the IBTA draws it. Every CM field fits in
 * the eight bytes from its first (a 64-bit field starts on a byte): read
 * those bytes as one number and shift and mask, rather than walk bits.
 * A field that would need a ninth byte is walked bit by bit. Inline, so
 * that where byte, bit and width are constants (the codecs below) each
 * field compiles to a few loads, shifts and stores.
 */
static inline uint64_t bits_get(const uint8_t *buf, unsigned int byte,
				unsigned int bit, unsigned int width)
{
	unsigned int nbytes = (bit % 8 + width + 7) / 8;
	unsigned int tail = nbytes * 8 - bit % 8 - width;
	uint64_t v = 0;

	byte += bit / 8;
	if (nbytes > 8) {
		for (unsigned int pos = byte * 8 + bit % 8;
		     pos < byte * 8 + bit % 8 + width; pos++)
			v = (v << 1) | ((buf[pos / 8] >> (7 - pos % 8)) & 1);
		return v;
	}
	v = be_get(buf + byte, nbytes) >> tail;
	return width >= 64 ? v : v & ((UINT64_C(1) << width) - 1);
}

static inline void bits_set(uint8_t *buf, unsigned int byte, unsigned int bit,
			    unsigned int width, uint64_t value)
{
	unsigned int nbytes = (bit % 8 + width + 7) / 8;
	unsigned int tail = nbytes * 8 - bit % 8 - width;
	uint64_t mask = width >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << width) - 1;

	byte += bit / 8;
	if (nbytes > 8) {
		/* From the least significant end of the field backwards. */
		for (unsigned int pos = byte * 8 + bit % 8 + width;
		     pos-- > byte * 8 + bit % 8; value >>= 1) {
			uint8_t m = (uint8_t)(1u << (7 - pos % 8));

			buf[pos / 8] =
				(uint8_t)((value & 1) ? buf[pos / 8] | m :
							buf[pos / 8] & ~m);
		}
		return;
	}
	mask <<= tail;
	if (bit % 8 == 0 && width % 8 == 0) /* whole bytes: no merge */
		be_put(buf + byte, nbytes, value);
	else
		be_put(buf + byte, nbytes,
		       (be_get(buf + byte, nbytes) & ~mask) |
			       ((value << tail) & mask));
}

uint64_t cm_bits_get(const uint8_t *buf, unsigned int byte, unsigned int bit,
		     unsigned int width)
{
	return bits_get(buf, byte, bit, width);
}

void cm_bits_set(uint8_t *buf, unsigned int byte, unsigned int bit,
		 unsigned int width, uint64_t value)
{
	bits_set(buf, byte, bit, width, value);
}

/*
 * The codec proper: one encoder and one decoder per message, expanded from
 * cm_fields.def like the descriptor arrays above, so both follow the one
 * table. Walking the descriptors cost ~1,700 instructions per MAD encoded;
 * with every field's place a constant it is a few per field. The encoder
 * writes into a zeroed data area (reserved fields stay zero); the decoder
 * notes the first non-zero reserved field in *rsvd, in table order.
 */
#define CM_ENC_u8(name, field, byte, bit, width)                               \
	bits_set(p, byte, bit, width, m->name.field);
#define CM_ENC_u16 CM_ENC_u8
#define CM_ENC_u32 CM_ENC_u8
#define CM_ENC_u64 CM_ENC_u8
#define CM_ENC_bytes(name, field, byte, bit, width)                            \
	memcpy(p + (byte), m->name.field, (width) / 8);
#define CM_ENC_rsvd(name, field, byte, bit, width)

#define CM_MSG(NAME, name, attr, table)                                        \
	static void cm_enc_##name(const struct cm_msg *m, uint8_t *p)          \
	{
#define CM_FIELD(name, field, byte, bit, width, kind)                          \
	CM_ENC_##kind(name, field, byte, bit, width)
#define CM_END(name) }
#include "cm_fields.def"
#undef CM_MSG
#undef CM_FIELD
#undef CM_END

#define CM_DEC_INT(name, field, byte, bit, width, type)                        \
	m->name.field = (type)bits_get(p, byte, bit, width);
#define CM_DEC_u8(n, f, by, bi, w) CM_DEC_INT(n, f, by, bi, w, uint8_t)
#define CM_DEC_u16(n, f, by, bi, w) CM_DEC_INT(n, f, by, bi, w, uint16_t)
#define CM_DEC_u32(n, f, by, bi, w) CM_DEC_INT(n, f, by, bi, w, uint32_t)
#define CM_DEC_u64(n, f, by, bi, w) CM_DEC_INT(n, f, by, bi, w, uint64_t)
#define CM_DEC_bytes(name, field, byte, bit, width)                            \
	memcpy(m->name.field, p + (byte), (width) / 8);
#define CM_DEC_rsvd(name, field, byte, bit, width)                             \
	do {                                                                   \
		uint64_t v = bits_get(p, byte, bit, width);                    \
		if (v && rsvd->code == CM_FAULT_NONE)                          \
			*rsvd = (struct cm_fault){ CM_FAULT_RESERVED, #field,  \
						   v, -1 };                    \
	} while (0);

#define CM_MSG(NAME, name, attr, table)                                        \
	static void cm_dec_##name(struct cm_msg *m, const uint8_t *p,          \
				  struct cm_fault *rsvd)                       \
	{
#define CM_FIELD(name, field, byte, bit, width, kind)                          \
	CM_DEC_##kind(name, field, byte, bit, width)
#define CM_END(name) }
#include "cm_fields.def"
#undef CM_MSG
#undef CM_FIELD
#undef CM_END

static const struct {
	void (*enc)(const struct cm_msg *m, uint8_t *p);
	void (*dec)(struct cm_msg *m, const uint8_t *p, struct cm_fault *rsvd);
} cm_codecs[CM_MSG__COUNT] = {
#define CM_MSG(NAME, name, attr, table)                                        \
	[CM_MSG_##NAME] = { cm_enc_##name, cm_dec_##name },
#define CM_FIELD(name, field, byte, bit, width, kind)
#define CM_END(name)
#include "cm_fields.def"
#undef CM_MSG
#undef CM_FIELD
#undef CM_END
};

uint64_t cm_field_load(const void *body, const struct cm_field_desc *f)
{
	const uint8_t *p = (const uint8_t *)body + f->offset;
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	switch (f->kind) {
	case CM_KIND_u8:
		memcpy(&u8, p, sizeof(u8));
		return u8;
	case CM_KIND_u16:
		memcpy(&u16, p, sizeof(u16));
		return u16;
	case CM_KIND_u32:
		memcpy(&u32, p, sizeof(u32));
		return u32;
	case CM_KIND_u64:
		memcpy(&u64, p, sizeof(u64));
		return u64;
	case CM_KIND_bytes:
	case CM_KIND_rsvd:
		break;
	}
	return 0;
}

static void field_store(void *body, const struct cm_field_desc *f, uint64_t v)
{
	uint8_t *p = (uint8_t *)body + f->offset;
	uint8_t u8 = (uint8_t)v;
	uint16_t u16 = (uint16_t)v;
	uint32_t u32 = (uint32_t)v;

	switch (f->kind) {
	case CM_KIND_u8:
		memcpy(p, &u8, sizeof(u8));
		break;
	case CM_KIND_u16:
		memcpy(p, &u16, sizeof(u16));
		break;
	case CM_KIND_u32:
		memcpy(p, &u32, sizeof(u32));
		break;
	case CM_KIND_u64:
		memcpy(p, &v, sizeof(v));
		break;
	case CM_KIND_bytes:
	case CM_KIND_rsvd:
		break;
	}
}

uint64_t cm_field_get(const struct cm_msg *msg, const struct cm_field_desc *f)
{
	return cm_field_load(&msg->req, f);
}

void cm_field_set(struct cm_msg *msg, const struct cm_field_desc *f, uint64_t v)
{
	field_store(&msg->req, f, v);
}

const char *cm_fault_str(enum cm_fault_code code)
{
	switch (code) {
	case CM_FAULT_NONE:
		return "ok";
	case CM_FAULT_LENGTH:
		return "MAD is not 256 bytes";
	case CM_FAULT_BASE_VERSION:
		return "base version is not 1";
	case CM_FAULT_CLASS:
		return "management class is not CM (0x07)";
	case CM_FAULT_CLASS_VERSION:
		return "CM class version is not 2";
	case CM_FAULT_METHOD:
		return "method is not Send";
	case CM_FAULT_ATTR_ID:
		return "attribute id is no CM message";
	case CM_FAULT_RESERVED:
		return "reserved field is not zero";
	case CM_FAULT_RANGE:
		return "field value is reserved by the spec";
	case CM_FAULT_TYPE:
		return "message type out of range";
	}
	return "unknown fault";
}

static int fault(struct cm_fault *out, enum cm_fault_code code,
		 const char *field, uint64_t value)
{
	if (out) {
		out->code = code;
		out->field = field;
		out->value = value;
	}
	return code == CM_FAULT_NONE ? 0 : -EBADMSG;
}

static void hdr_decode(const uint8_t *p, struct cm_mad_hdr *h)
{
	h->base_version = p[0];
	h->mgmt_class = p[1];
	h->class_version = p[2];
	h->method = p[3];
	h->status = (uint16_t)be_get(p + 4, 2);
	h->class_specific = (uint16_t)be_get(p + 6, 2);
	h->tid = be_get(p + 8, 8);
	h->attr_id = (uint16_t)be_get(p + 16, 2);
	h->rsvd = (uint16_t)be_get(p + 18, 2);
	h->attr_mod = (uint32_t)be_get(p + 20, 4);
}

static void hdr_encode(const struct cm_mad_hdr *h, uint8_t *p)
{
	p[0] = h->base_version;
	p[1] = h->mgmt_class;
	p[2] = h->class_version;
	p[3] = h->method;
	be_put(p + 4, 2, h->status);
	be_put(p + 6, 2, h->class_specific);
	be_put(p + 8, 8, h->tid);
	be_put(p + 16, 2, h->attr_id);
	be_put(p + 18, 2, 0);
	be_put(p + 20, 4, h->attr_mod);
}

void cm_mad_hdr_decode(const uint8_t *p, struct cm_mad_hdr *h)
{
	hdr_decode(p, h);
}

void cm_mad_hdr_encode(const struct cm_mad_hdr *h, uint8_t *p)
{
	hdr_encode(h, p);
}

/* Range check one enumerated value: valid when lo <= v <= hi. */
static int check_range(struct cm_fault *out, const char *field, uint64_t v,
		       uint64_t lo, uint64_t hi)
{
	if (v < lo || v > hi) {
		fault(out, CM_FAULT_RANGE, field, v);
		return -EINVAL;
	}
	return 0;
}

int cm_msg_validate(const struct cm_msg *m, struct cm_fault *out)
{
	int rc = 0;

	fault(out, CM_FAULT_NONE, NULL, 0);
	switch (m->type) {
	case CM_MSG_REQ:
		/* IBTA 12.7.9/12.7.40: RC, UC, RD, or 3 = see extended. */
		if (m->req.transport_type == CM_TRANSPORT_EXTENDED)
			rc = check_range(out, "ext_transport_type",
					 m->req.ext_transport_type,
					 CM_EXT_TRANSPORT_XRC,
					 CM_EXT_TRANSPORT_XRC);
		if (!rc)
			rc = check_range(out, "path_mtu", m->req.path_mtu,
					 CM_MTU_256, CM_MTU_4096);
		break;
	case CM_MSG_MRA:
		rc = check_range(out, "message_mraed", m->mra.message_mraed,
				 CM_MSG_REF_REQ, CM_MSG_REF_OTHER);
		break;
	case CM_MSG_REJ:
		rc = check_range(out, "message_rejected",
				 m->rej.message_rejected, CM_MSG_REF_REQ,
				 CM_MSG_REF_OTHER);
		if (!rc)
			rc = check_range(out, "ari_length", m->rej.ari_length,
					 0, CM_REJ_ARI_SIZE);
		if (!rc)
			rc = check_range(out, "reason", m->rej.reason, 1,
					 CM_REJ_REASON_MAX);
		break;
	case CM_MSG_APR:
		rc = check_range(out, "info_length", m->apr.info_length, 0,
				 CM_APR_INFO_SIZE);
		if (!rc)
			rc = check_range(out, "status", m->apr.status, 0,
					 CM_APR_STATUS_MAX);
		break;
	case CM_MSG_SIDR_REP:
		rc = check_range(out, "status", m->sidr_rep.status, 0,
				 CM_SIDR_STATUS_MAX);
		if (!rc)
			rc = check_range(out, "info_length",
					 m->sidr_rep.info_length, 0,
					 CM_SIDR_REP_INFO_SIZE);
		break;
	case CM_MSG_REP:
	case CM_MSG_RTU:
	case CM_MSG_DREQ:
	case CM_MSG_DREP:
	case CM_MSG_LAP:
	case CM_MSG_SIDR_REQ:
		break;
	case CM_MSG__COUNT:
		fault(out, CM_FAULT_TYPE, NULL, m->type);
		return -EINVAL;
	}
	return rc;
}

static int mad_decode(const void *buf, size_t len, unsigned int flags,
		      struct cm_msg *m, struct cm_fault *out)
{
	const uint8_t *p = buf;
	struct cm_fault rsvd = { CM_FAULT_NONE, NULL, 0, -1 };
	int type;

	fault(out, CM_FAULT_NONE, NULL, 0);
	if (len != CM_MAD_SIZE)
		return fault(out, CM_FAULT_LENGTH, NULL, len);

	memset(m, 0, sizeof(*m));
	hdr_decode(p, &m->hdr);
	if (m->hdr.base_version != CM_MAD_BASE_VERSION)
		return fault(out, CM_FAULT_BASE_VERSION, "base_version",
			     m->hdr.base_version);
	if (m->hdr.mgmt_class != CM_MGMT_CLASS)
		return fault(out, CM_FAULT_CLASS, "mgmt_class",
			     m->hdr.mgmt_class);
	if (m->hdr.class_version != CM_CLASS_VERSION)
		return fault(out, CM_FAULT_CLASS_VERSION, "class_version",
			     m->hdr.class_version);
	if (m->hdr.method != CM_METHOD_SEND)
		return fault(out, CM_FAULT_METHOD, "method", m->hdr.method);
	type = cm_msg_type_from_attr(m->hdr.attr_id);
	if (type < 0)
		return fault(out, CM_FAULT_ATTR_ID, "attr_id", m->hdr.attr_id);
	m->type = (enum cm_msg_type)type;
	if (m->hdr.rsvd)
		rsvd = (struct cm_fault){ CM_FAULT_RESERVED, "mad_rsvd",
					  m->hdr.rsvd, -1 };

	cm_codecs[type].dec(m, p + CM_MAD_HDR_SIZE, &rsvd);

	if (rsvd.code != CM_FAULT_NONE && (flags & CM_DECODE_STRICT))
		return fault(out, rsvd.code, rsvd.field, rsvd.value);
	if (cm_msg_validate(m, out))
		return -EBADMSG;
	if (out)
		*out = rsvd; /* success, but say what was ignored */
	return 0;
}

int cm_mad_decode(const void *buf, size_t len, unsigned int flags,
		  struct cm_msg *m, struct cm_fault *out)
{
	int rc = mad_decode(buf, len, flags, m, out);

	if (out && len == CM_MAD_SIZE) {
		/* The attribute id, MAD bytes 16-17, even when m was not
		 * filled. */
		out->msg_type = cm_msg_type_from_attr(
			(uint16_t)be_get((const uint8_t *)buf + 16, 2));
	} else if (out) {
		out->msg_type = -1;
	}
	return rc;
}

void cm_msg_init(struct cm_msg *m, enum cm_msg_type type, uint64_t tid)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	m->hdr.base_version = CM_MAD_BASE_VERSION;
	m->hdr.mgmt_class = CM_MGMT_CLASS;
	m->hdr.class_version = CM_CLASS_VERSION;
	m->hdr.method = CM_METHOD_SEND;
	m->hdr.tid = tid;
	if ((unsigned int)type < CM_MSG__COUNT)
		m->hdr.attr_id = cm_msgs[type].attr_id;
}

int cm_mad_encode(const struct cm_msg *m, uint8_t out[CM_MAD_SIZE])
{
	const struct cm_msg_desc *d = cm_msg_desc(m->type);
	struct cm_mad_hdr h = m->hdr;
	uint8_t *p = out + CM_MAD_HDR_SIZE;

	if (!d)
		return -EINVAL;
	memset(out, 0, CM_MAD_SIZE);
	h.base_version = CM_MAD_BASE_VERSION;
	h.mgmt_class = CM_MGMT_CLASS;
	h.class_version = CM_CLASS_VERSION;
	h.attr_id = d->attr_id;
	hdr_encode(&h, out);

	cm_codecs[m->type].enc(m, p);
	return 0;
}

static const char *const rej_reason_text[CM_REJ_REASON_MAX + 1] = {
	[CM_REJ_NO_QP] = "no QP available",
	[CM_REJ_NO_EEC] = "no EEC available",
	[CM_REJ_NO_RESOURCES] = "no resources available",
	[CM_REJ_TIMEOUT] = "timeout",
	[CM_REJ_UNSUPPORTED] = "unsupported request",
	[CM_REJ_INVALID_COMM_ID] = "invalid communication id",
	[CM_REJ_INVALID_COMM_INSTANCE] = "invalid communication instance",
	[CM_REJ_INVALID_SERVICE_ID] = "invalid service id",
	[CM_REJ_INVALID_TRANSPORT_TYPE] = "invalid transport service type",
	[CM_REJ_STALE_CONN] = "stale connection",
	[CM_REJ_RDC_NOT_EXIST] = "RDC does not exist",
	[CM_REJ_INVALID_GID] = "primary remote port GID rejected",
	[CM_REJ_INVALID_LID] = "primary remote port LID rejected",
	[CM_REJ_INVALID_SL] = "invalid primary SL",
	[CM_REJ_INVALID_TRAFFIC_CLASS] = "invalid primary traffic class",
	[CM_REJ_INVALID_HOP_LIMIT] = "invalid primary hop limit",
	[CM_REJ_INVALID_PACKET_RATE] = "invalid primary packet rate",
	[CM_REJ_INVALID_ALT_GID] = "alternate remote port GID rejected",
	[CM_REJ_INVALID_ALT_LID] = "alternate remote port LID rejected",
	[CM_REJ_INVALID_ALT_SL] = "invalid alternate SL",
	[CM_REJ_INVALID_ALT_TRAFFIC_CLASS] = "invalid alternate traffic class",
	[CM_REJ_INVALID_ALT_HOP_LIMIT] = "invalid alternate hop limit",
	[CM_REJ_INVALID_ALT_PACKET_RATE] = "invalid alternate packet rate",
	[CM_REJ_PORT_CM_REDIRECT] = "port and CM redirection",
	[CM_REJ_PORT_REDIRECT] = "port redirection",
	[CM_REJ_INVALID_MTU] = "invalid path MTU",
	[CM_REJ_INSUFFICIENT_RESP_RESOURCES] =
		"insufficient responder resources",
	[CM_REJ_CONSUMER_DEFINED] = "consumer reject",
	[CM_REJ_INVALID_RNR_RETRY] = "invalid RNR NAK retry count",
	[CM_REJ_DUPLICATE_LOCAL_COMM_ID] = "duplicate local communication id",
	[CM_REJ_INVALID_CLASS_VERSION] = "unsupported class version",
	[CM_REJ_INVALID_FLOW_LABEL] = "invalid primary flow label",
	[CM_REJ_INVALID_ALT_FLOW_LABEL] = "invalid alternate flow label",
	[CM_REJ_INVALID_ALT_PORT_CM_REDIRECT] =
		"alternate port and CM redirection",
	[CM_REJ_VENDOR_OPTION_NOT_SUPPORTED] = "vendor option not supported",
};

const char *cm_rej_reason_str(unsigned int reason)
{
	if (reason > CM_REJ_REASON_MAX || !rej_reason_text[reason])
		return "unknown";
	return rej_reason_text[reason];
}

static void dump_bytes(struct strbuf *d, const char *name, const uint8_t *p,
		       size_t n)
{
	size_t used = n;

	/* Private data is mostly zero padding: print up to the last non-zero
	 * byte and say how much was left out. */
	while (used > 0 && p[used - 1] == 0)
		used--;
	strbuf_printf(d, "%s:", name);
	if (n == CM_GID_SIZE) {
		for (size_t i = 0; i < n; i += 2)
			strbuf_printf(d, "%s%02x%02x", i ? ":" : " ", p[i],
				      p[i + 1]);
		strbuf_printf(d, "\n");
		return;
	}
	/* 32 bytes a line, formatted by hand: one printf per line, not per
	 * byte, keeps a dump of every MAD affordable at debug level. */
	for (size_t i = 0; i < used; i += 32) {
		static const char hex[] = "0123456789abcdef";
		char line[2 * 32 + 1];
		size_t k = 0;

		for (size_t j = i; j < used && j < i + 32; j++) {
			line[k++] = hex[p[j] >> 4];
			line[k++] = hex[p[j] & 15];
		}
		line[k] = '\0';
		strbuf_printf(d, "\n  %s", line);
	}
	if (used < n)
		strbuf_printf(d, "%s(%zu zero bytes)", used ? "\n  " : " ",
			      n - used);
	strbuf_printf(d, "\n");
}

size_t cm_msg_dump(const struct cm_msg *m, char *buf, size_t size)
{
	struct strbuf d = { buf, size, 0 };
	const struct cm_msg_desc *desc = cm_msg_desc(m->type);

	if (size)
		buf[0] = '\0';
	strbuf_printf(&d,
		      "%s (attr 0x%04x, IBTA table %u)\n"
		      "base_version: %u\nmgmt_class: 0x%02x\n"
		      "class_version: %u\nmethod: 0x%02x\nstatus: 0x%04x\n"
		      "tid: 0x%016" PRIx64 "\nattr_mod: 0x%08x\n",
		      desc ? desc->name : "?", m->hdr.attr_id,
		      desc ? desc->ibta_table : 0, m->hdr.base_version,
		      m->hdr.mgmt_class, m->hdr.class_version, m->hdr.method,
		      m->hdr.status, m->hdr.tid, m->hdr.attr_mod);
	if (!desc)
		return d.len;
	for (unsigned int i = 0; i < desc->nfields; i++) {
		const struct cm_field_desc *f = &desc->fields[i];
		uint64_t v;

		switch (f->kind) {
		case CM_KIND_bytes:
			dump_bytes(&d, f->name,
				   (const uint8_t *)&m->req + f->offset,
				   f->width / 8);
			break;
		case CM_KIND_rsvd:
			break;
		case CM_KIND_u8:
		case CM_KIND_u16:
		case CM_KIND_u32:
		case CM_KIND_u64:
			v = cm_field_load(&m->req, f);
			if (f->width >= 16)
				strbuf_printf(&d, "%s: 0x%0*" PRIx64 "\n",
					      f->name, (f->width + 3) / 4, v);
			else
				strbuf_printf(&d, "%s: %" PRIu64 "\n", f->name,
					      v);
			break;
		}
	}
	if (m->type == CM_MSG_REJ)
		strbuf_printf(&d, "reason_text: %s\n",
			      cm_rej_reason_str(m->rej.reason));
	return d.len;
}
