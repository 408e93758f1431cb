/* SPDX-License-Identifier: MIT */
/*
 * IB CM MADs: the common MAD header and the eleven CM messages of IBTA Vol 1
 * chapter 12, decoded to host-order structs and encoded back to wire bytes.
 *
 * Every message is described once, in cm_fields.def. This header expands
 * that table into
 *   - one struct per message (struct cm_req, struct cm_rep, ...), whose
 *     members are the table's fields less the reserved ones;
 *   - get/set accessors over raw message bytes (cm_req_get_local_qpn(p),
 *     cm_req_set_local_qpn(p, v)), for the rare code that wants one field;
 *   - a descriptor array per message that drives the generic encoder,
 *     decoder, validator and dump in cm_mad.c.
 *
 * Nothing outside proto/ touches MAD bytes.
 */
#ifndef CMD_PROTO_CM_MAD_H
#define CMD_PROTO_CM_MAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* IBTA 13.4.2: the MAD is 256 bytes; 24 of header, 232 of class data. */
#define CM_MAD_SIZE 256
#define CM_MAD_HDR_SIZE 24
#define CM_MSG_SIZE (CM_MAD_SIZE - CM_MAD_HDR_SIZE)

#define CM_MAD_BASE_VERSION 1
#define CM_MGMT_CLASS 0x07
#define CM_CLASS_VERSION 2

/* IBTA 13.4.5: methods. Every CM message is sent with Send. */
#define CM_METHOD_GET 0x01
#define CM_METHOD_SEND 0x03
#define CM_METHOD_GET_RESP 0x81

#define CM_ATTR_CLASS_PORT_INFO 0x0001

/* Private data sizes (the wire carries them whole, zero padded). */
#define CM_REQ_PRIVATE_DATA_SIZE 92
#define CM_MRA_PRIVATE_DATA_SIZE 222
#define CM_REJ_PRIVATE_DATA_SIZE 148
#define CM_REJ_ARI_SIZE 72
#define CM_REP_PRIVATE_DATA_SIZE 196
#define CM_RTU_PRIVATE_DATA_SIZE 224
#define CM_DREQ_PRIVATE_DATA_SIZE 220
#define CM_DREP_PRIVATE_DATA_SIZE 224
#define CM_LAP_PRIVATE_DATA_SIZE 168
#define CM_APR_PRIVATE_DATA_SIZE 148
#define CM_APR_INFO_SIZE 72
#define CM_SIDR_REQ_PRIVATE_DATA_SIZE 216
#define CM_SIDR_REP_PRIVATE_DATA_SIZE 136
#define CM_SIDR_REP_INFO_SIZE 72
#define CM_GID_SIZE 16

/* IBTA 13.4.3, Table 144 (common MAD header), in host order. */
struct cm_mad_hdr {
	uint8_t base_version;
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t method; /* 7 bits; the top bit is the R (response) bit */
	uint16_t status;
	uint16_t class_specific;
	uint64_t tid;
	uint16_t attr_id;
	uint16_t rsvd;
	uint32_t attr_mod;
};

enum cm_msg_type {
#define CM_MSG(NAME, name, attr, table) CM_MSG_##NAME,
#define CM_FIELD(name, field, byte, bit, width, kind)
#define CM_END(name)
#include "cm_fields.def"
#undef CM_MSG
#undef CM_FIELD
#undef CM_END
	CM_MSG__COUNT,
};

/* The host type of each field kind. */
#define CM_MEMBER_u8(field, width) uint8_t field;
#define CM_MEMBER_u16(field, width) uint16_t field;
#define CM_MEMBER_u32(field, width) uint32_t field;
#define CM_MEMBER_u64(field, width) uint64_t field;
#define CM_MEMBER_bytes(field, width) uint8_t field[(width) / 8];
#define CM_MEMBER_rsvd(field, width)

#define CM_MSG(NAME, name, attr, table) struct cm_##name {
#define CM_FIELD(name, field, byte, bit, width, kind)                          \
	CM_MEMBER_##kind(field, width)
#define CM_END(name)                                                           \
	}                                                                      \
	;
#include "cm_fields.def"
#undef CM_MSG
#undef CM_FIELD
#undef CM_END

/* One decoded CM MAD. */
struct cm_msg {
	struct cm_mad_hdr hdr;
	enum cm_msg_type type;
	union {
		struct cm_req req;
		struct cm_mra mra;
		struct cm_rej rej;
		struct cm_rep rep;
		struct cm_rtu rtu;
		struct cm_dreq dreq;
		struct cm_drep drep;
		struct cm_lap lap;
		struct cm_apr apr;
		struct cm_sidr_req sidr_req;
		struct cm_sidr_rep sidr_rep;
	};
};

enum cm_field_kind {
	CM_KIND_u8,
	CM_KIND_u16,
	CM_KIND_u32,
	CM_KIND_u64,
	CM_KIND_bytes,
	CM_KIND_rsvd,
};

/* One row of cm_fields.def. */
struct cm_field_desc {
	const char *name;
	uint16_t byte;
	uint8_t bit;
	uint16_t width;
	enum cm_field_kind kind;
	uint16_t offset; /* of the member in the message struct */
};

struct cm_msg_desc {
	const char *name; /* "REQ" */
	uint16_t attr_id;
	uint16_t ibta_table;
	uint16_t nfields;
	const struct cm_field_desc *fields;
};

/* The descriptor of a message type; NULL for an out-of-range type. */
const struct cm_msg_desc *cm_msg_desc(enum cm_msg_type type);

/*
 * The integer field f of msg's body, by its descriptor, whatever the
 * member's type (0 for byte strings and reserved fields); and its setter,
 * which stores v cut to the member's type (not to f->width).
 */
/* An integer field's value from a struct the descriptor describes (its
 * member at f->offset; SA records too: proto/sa_mad.c); 0 for bytes. */
uint64_t cm_field_load(const void *body, const struct cm_field_desc *f);
uint64_t cm_field_get(const struct cm_msg *msg, const struct cm_field_desc *f);
void cm_field_set(struct cm_msg *msg, const struct cm_field_desc *f,
		  uint64_t v);

/*
 * The 24-byte common MAD header of IBTA 13.4.3, shared by every management
 * class (the SA codec in sa_mad.c uses it too): decode from p[0..23], and
 * encode into p[0..23] with the reserved word written as zero.
 */
void cm_mad_hdr_decode(const uint8_t *p, struct cm_mad_hdr *h);
void cm_mad_hdr_encode(const struct cm_mad_hdr *h, uint8_t *p);

/* Message type for a MAD attribute id; -1 when it is no CM message. */
int cm_msg_type_from_attr(uint16_t attr_id);

const char *cm_msg_type_name(enum cm_msg_type type);

/*
 * Raw bit access in IBTA numbering: 'bit' 0 is the most significant bit of
 * byte 'byte'; width 1..64. The field must lie inside buf.
 */
uint64_t cm_bits_get(const uint8_t *buf, unsigned int byte, unsigned int bit,
		     unsigned int width);
void cm_bits_set(uint8_t *buf, unsigned int byte, unsigned int bit,
		 unsigned int width, uint64_t value);

/* Typed accessors over the 232 message bytes (MAD byte 24 onwards). */
#define CM_ACC_TYPE_u8 uint8_t
#define CM_ACC_TYPE_u16 uint16_t
#define CM_ACC_TYPE_u32 uint32_t
#define CM_ACC_TYPE_u64 uint64_t

#define CM_ACCESSORS_u8(name, field, byte, bit, width)                         \
	CM_ACCESSORS_INT(name, field, byte, bit, width, uint8_t)
#define CM_ACCESSORS_u16(name, field, byte, bit, width)                        \
	CM_ACCESSORS_INT(name, field, byte, bit, width, uint16_t)
#define CM_ACCESSORS_u32(name, field, byte, bit, width)                        \
	CM_ACCESSORS_INT(name, field, byte, bit, width, uint32_t)
#define CM_ACCESSORS_u64(name, field, byte, bit, width)                        \
	CM_ACCESSORS_INT(name, field, byte, bit, width, uint64_t)
#define CM_ACCESSORS_bytes(name, field, byte, bit, width)                      \
	static inline const uint8_t *cm_##name##_##field(const uint8_t *msg)   \
	{                                                                      \
		return msg + (byte);                                           \
	}
#define CM_ACCESSORS_rsvd(name, field, byte, bit, width)
#define CM_ACCESSORS_INT(name, field, byte, bit, width, type)                  \
	static inline type cm_##name##_get_##field(const uint8_t *msg)         \
	{                                                                      \
		return (type)cm_bits_get(msg, byte, bit, width);               \
	}                                                                      \
	static inline void cm_##name##_set_##field(uint8_t *msg, type v)       \
	{                                                                      \
		cm_bits_set(msg, byte, bit, width, v);                         \
	}

#define CM_MSG(NAME, name, attr, table)
#define CM_FIELD(name, field, byte, bit, width, kind)                          \
	CM_ACCESSORS_##kind(name, field, byte, bit, width)
#define CM_END(name)
#include "cm_fields.def"
#undef CM_MSG
#undef CM_FIELD
#undef CM_END

/* Why a MAD was refused; one code per check, with the field at fault. */
enum cm_fault_code {
	CM_FAULT_NONE,
	CM_FAULT_LENGTH, /* not exactly 256 bytes */
	CM_FAULT_BASE_VERSION, /* base version is not 1 */
	CM_FAULT_CLASS, /* management class is not 0x07 */
	CM_FAULT_CLASS_VERSION, /* class version is not 2 */
	CM_FAULT_METHOD, /* not Send (or a response bit set) */
	CM_FAULT_ATTR_ID, /* attribute id is no CM message */
	CM_FAULT_RESERVED, /* a reserved field is not zero */
	CM_FAULT_RANGE, /* a field holds a value the spec reserves */
	CM_FAULT_TYPE, /* encode: message type out of range */
};

struct cm_fault {
	enum cm_fault_code code;
	const char *field; /* the field at fault, or NULL */
	uint64_t value; /* the offending value */
	/*
	 * cm_mad_decode: the message its attribute id names (enum
	 * cm_msg_type), also when another check failed (a wrong base or
	 * class version too), so a caller can count a malformed MAD by type
	 * without reading MAD bytes; -1 for a wrong length or an attribute
	 * id that names no CM message.
	 */
	int msg_type;
};

const char *cm_fault_str(enum cm_fault_code code);

/* Decode flags. */
enum {
	/*
	 * Treat a non-zero reserved field as malformed. Without it a decode
	 * succeeds, and fault->code is CM_FAULT_RESERVED so that the caller
	 * can count it: IBTA asks receivers to ignore reserved fields, and
	 * peers that implement later additions of the spec may set bits
	 * this table still calls reserved.
	 */
	CM_DECODE_STRICT = 1 << 0,
};

/*
 * Decode and validate one received MAD of 'len' bytes. Returns 0 and fills
 * *msg, or -EBADMSG with the first problem in *fault. Never reads outside
 * buf[0..len).
 */
int cm_mad_decode(const void *buf, size_t len, unsigned int flags,
		  struct cm_msg *msg, struct cm_fault *fault);

/*
 * Validate a decoded message's enumerated fields (transport type, MTU,
 * REJ reason, MRA/REJ message type, lengths of ARI and additional
 * information, APR and SIDR status). Returns 0 or -EINVAL with *fault set.
 * cm_mad_decode calls it; encoders may too.
 */
int cm_msg_validate(const struct cm_msg *msg, struct cm_fault *fault);

/*
 * Encode msg (header and body) into out[256]. The header's base version,
 * class, class version and attribute id are taken from msg->type, not from
 * msg->hdr; method, status, TID and attribute modifier from msg->hdr.
 * Returns 0 or -EINVAL for an out-of-range type. Reserved fields are zero.
 */
int cm_mad_encode(const struct cm_msg *msg, uint8_t out[CM_MAD_SIZE]);

/* Fill msg->hdr for a CM Send of 'type' with the given TID. */
void cm_msg_init(struct cm_msg *msg, enum cm_msg_type type, uint64_t tid);

/*
 * Print every header and message field, one "name: value" line each, into
 * buf (always NUL terminated when size > 0). Byte strings print as hex;
 * trailing zero bytes of private data are summarised. Returns the length the
 * full dump needs, as snprintf does.
 */
size_t cm_msg_dump(const struct cm_msg *msg, char *buf, size_t size);

/* IBTA Table 109: REJ reason codes. */
enum cm_rej_reason {
	CM_REJ_NO_QP = 1,
	CM_REJ_NO_EEC = 2,
	CM_REJ_NO_RESOURCES = 3,
	CM_REJ_TIMEOUT = 4,
	CM_REJ_UNSUPPORTED = 5,
	CM_REJ_INVALID_COMM_ID = 6,
	CM_REJ_INVALID_COMM_INSTANCE = 7,
	CM_REJ_INVALID_SERVICE_ID = 8,
	CM_REJ_INVALID_TRANSPORT_TYPE = 9,
	CM_REJ_STALE_CONN = 10,
	CM_REJ_RDC_NOT_EXIST = 11,
	CM_REJ_INVALID_GID = 12,
	CM_REJ_INVALID_LID = 13,
	CM_REJ_INVALID_SL = 14,
	CM_REJ_INVALID_TRAFFIC_CLASS = 15,
	CM_REJ_INVALID_HOP_LIMIT = 16,
	CM_REJ_INVALID_PACKET_RATE = 17,
	CM_REJ_INVALID_ALT_GID = 18,
	CM_REJ_INVALID_ALT_LID = 19,
	CM_REJ_INVALID_ALT_SL = 20,
	CM_REJ_INVALID_ALT_TRAFFIC_CLASS = 21,
	CM_REJ_INVALID_ALT_HOP_LIMIT = 22,
	CM_REJ_INVALID_ALT_PACKET_RATE = 23,
	CM_REJ_PORT_CM_REDIRECT = 24,
	CM_REJ_PORT_REDIRECT = 25,
	CM_REJ_INVALID_MTU = 26,
	CM_REJ_INSUFFICIENT_RESP_RESOURCES = 27,
	CM_REJ_CONSUMER_DEFINED = 28,
	CM_REJ_INVALID_RNR_RETRY = 29,
	CM_REJ_DUPLICATE_LOCAL_COMM_ID = 30,
	CM_REJ_INVALID_CLASS_VERSION = 31,
	CM_REJ_INVALID_FLOW_LABEL = 32,
	CM_REJ_INVALID_ALT_FLOW_LABEL = 33,
	CM_REJ_INVALID_ALT_PORT_CM_REDIRECT = 34,
	CM_REJ_VENDOR_OPTION_NOT_SUPPORTED = 35,
};
#define CM_REJ_REASON_MAX 35

/* Text for a REJ reason ("stale connection"); "unknown" outside 1..35. */
const char *cm_rej_reason_str(unsigned int reason);

/* IBTA Table 108: "Message REJected" / Table 107 "Message MRAed". */
enum cm_msg_ref {
	CM_MSG_REF_REQ = 0,
	CM_MSG_REF_REP = 1,
	CM_MSG_REF_OTHER = 2, /* REJ: no message; MRA: LAP */
};

/* IBTA 12.7.9: REQ transport service type. */
enum cm_transport {
	CM_TRANSPORT_RC = 0,
	CM_TRANSPORT_UC = 1,
	CM_TRANSPORT_RD = 2,
	CM_TRANSPORT_EXTENDED = 3, /* see ext_transport_type */
};

/*
 * The packet life time exponent a REQ's path implies: its local ACK
 * timeout is 2 x PLT, one more in the exponent (the same estimate the
 * kernel's CM makes).
 */
static inline uint8_t cm_req_packet_life_time(const struct cm_req *req)
{
	uint8_t ack = req->primary_local_ack_timeout;

	return ack ? (uint8_t)(ack - 1) : 0;
}

/*
 * The local ACK timeout exponent for a QP whose peer acks within
 * 4.096 us * 2^ack_delay over a path of packet life time plt: the round
 * trip (plt + 1) or the peer's delay, whichever dominates, plus one when
 * the two are close; at most 31 (5 bits). The kernel's cm_ack_timeout()
 * computes the same, for the REQ's local ACK timeout from the CA's ack
 * delay and the path record's packet life time, and for the QP's from
 * the REP's target ACK delay.
 */
static inline uint8_t cm_ack_timeout(uint8_t ack_delay, uint8_t plt)
{
	int t = plt + 1;

	if (t >= ack_delay)
		t += ack_delay >= t - 1;
	else
		t = ack_delay + (t >= ack_delay - 1);
	return (uint8_t)(t > 31 ? 31 : t);
}

/* IBTA 12.7.40: extended transport type when transport_type is 3. */
enum cm_ext_transport {
	CM_EXT_TRANSPORT_XRC = 1,
};

/* IBTA 9.7.4 (MTU encoding): 1 = 256 ... 5 = 4096. */
enum cm_mtu {
	CM_MTU_256 = 1,
	CM_MTU_512 = 2,
	CM_MTU_1024 = 3,
	CM_MTU_2048 = 4,
	CM_MTU_4096 = 5,
};

/* IBTA Table 117: APR AP status. */
enum cm_apr_status {
	CM_APR_SUCCESS = 0,
	CM_APR_INVALID_COMM_ID = 1,
	CM_APR_UNSUPPORTED = 2,
	CM_APR_REJECTED = 3,
	CM_APR_REDIRECT = 4,
	CM_APR_IS_CURRENT = 5,
	CM_APR_INVALID_QPN = 6,
	CM_APR_INVALID_LID = 7,
	CM_APR_INVALID_GID = 8,
	CM_APR_INVALID_FLOW_LABEL = 9,
	CM_APR_INVALID_TCLASS = 10,
	CM_APR_INVALID_HOP_LIMIT = 11,
	CM_APR_INVALID_PACKET_RATE = 12,
	CM_APR_INVALID_SL = 13,
};
#define CM_APR_STATUS_MAX 13

/* IBTA Table 121: SIDR_REP status. */
enum cm_sidr_status {
	CM_SIDR_SUCCESS = 0,
	CM_SIDR_UNSUPPORTED = 1,
	CM_SIDR_REJECT = 2,
	CM_SIDR_NO_QP = 3,
	CM_SIDR_REDIRECT = 4,
	CM_SIDR_UNSUPPORTED_VERSION = 5,
};
#define CM_SIDR_STATUS_MAX 5

#endif
