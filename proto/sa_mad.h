/* SPDX-License-Identifier: MIT */
/*
 * Subnet Administration MADs (management class 0x03, IBTA Vol 1 ch. 15):
 * PathRecord queries and their answers, ClassPortInfo, decoded to host
 * order structs and encoded back to wire bytes.
 *
 * Every record is described once, in sa_fields.def, which this header
 * expands into
 *   - one struct per record (struct sa_hdr, struct sa_path_rec,
 *     struct sa_class_port_info), the table's fields less the reserved ones;
 *   - the index of each row (SA_PR_BIT_DGID) and its component mask bit
 *     (SA_PR_COMP_DGID): IBTA 15.2.4 numbers the mask by the record's rows;
 *   - a descriptor array per record (struct cm_field_desc, the same
 *     descriptor type the CM table uses) for tests and dumps.
 * The common MAD header is cm_mad.h's (cm_mad_hdr_encode/decode).
 *
 * Layout of an SA MAD: bytes 0-23 common header, 24-55 struct sa_hdr (RMPP
 * header, SM_Key, AttributeOffset, ComponentMask), 56-255 the SA data: one
 * record, or for SubnAdmGetTableResp as many as fit at the attribute
 * offset's stride. A GetTableResp longer than one MAD reaches userspace
 * reassembled by the kernel's RMPP code: the 56 header bytes of the first
 * segment, then the data of every segment back to back. sa_mad_decode
 * takes either.
 */
#ifndef CMD_PROTO_SA_MAD_H
#define CMD_PROTO_SA_MAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cm_mad.h"

#define SA_MAD_SIZE 256
/* SA_HDR_SIZE (32, struct sa_hdr on the wire, MAD bytes 24-55) and the
 * other record sizes are generated from sa_fields.def below. */
#define SA_DATA_OFFSET (CM_MAD_HDR_SIZE + SA_HDR_SIZE) /* 56 */
#define SA_DATA_SIZE (SA_MAD_SIZE - SA_DATA_OFFSET) /* 200 */
/* IBTA 13.6.2: RMPP payload length counts from MAD byte 36 (the SA header
 * of SM_Key, AttributeOffset, reserved and ComponentMask, then data). */
#define SA_RMPP_PAYLOAD_OFFSET 36
#define SA_RMPP_PAYLOAD_HDR (SA_DATA_OFFSET - SA_RMPP_PAYLOAD_OFFSET) /* 20 */

#define SA_MGMT_CLASS 0x03
#define SA_CLASS_VERSION 2

/* IBTA 13.4.5 and 15.2.2 (Table 192): SA methods. */
#define SA_METHOD_GET 0x01
#define SA_METHOD_GET_RESP 0x81
#define SA_METHOD_GET_TABLE 0x12
#define SA_METHOD_GET_TABLE_RESP 0x92

/* IBTA 15.2.5 (Table 193): attribute ids. */
#define SA_ATTR_CLASS_PORT_INFO 0x0001
#define SA_ATTR_PATH_REC 0x0035

/* IBTA 13.6.2.1: RMPP. */
#define SA_RMPP_VERSION 1
#define SA_RMPP_TYPE_DATA 1
#define SA_RMPP_FLAG_ACTIVE 0x1
#define SA_RMPP_FLAG_FIRST 0x2
#define SA_RMPP_FLAG_LAST 0x4

/*
 * IBTA 13.4.7 (Table 141), the MAD status word in host order: bit 0 busy,
 * bit 1 redirect required, bits 2-4 the invalid field code, bits 8-15
 * class specific, which for the SA is Table 194's code.
 */
#define SA_STATUS_BUSY 0x0001
#define SA_STATUS_REDIRECT 0x0002

enum sa_status_code {
	SA_ERR_NONE = 0,
	SA_ERR_NO_RESOURCES = 1,
	SA_ERR_REQ_INVALID = 2,
	SA_ERR_NO_RECORDS = 3,
	SA_ERR_TOO_MANY_RECORDS = 4,
	SA_ERR_REQ_INVALID_GID = 5,
	SA_ERR_REQ_INSUFFICIENT_COMPONENTS = 6,
	SA_ERR_REQ_DENIED = 7,
	/* opensm's IB_SA_MAD_STATUS_PRIO_SUGGESTED (QoS annex) */
	SA_ERR_PRIO_SUGGESTED = 8,
};
#define SA_ERR_MAX 8

static inline bool sa_status_busy(uint16_t status)
{
	return status & SA_STATUS_BUSY;
}

static inline bool sa_status_redirect(uint16_t status)
{
	return status & SA_STATUS_REDIRECT;
}

/* IBTA Table 141 bits 2-4: 1 bad version, 2 method, 3 method/attribute,
 * 7 invalid value in an attribute or modifier. */
static inline unsigned int sa_status_invalid_field(uint16_t status)
{
	return (status >> 2) & 7u;
}

static inline unsigned int sa_status_sa_code(uint16_t status)
{
	return status >> 8;
}

/* Text for an SA status code ("no records"); "unknown" beyond SA_ERR_MAX. */
const char *sa_status_str(unsigned int code);

/* The records of sa_fields.def. */
enum sa_rec_type {
#define SA_REC(NAME, name, PFX, size, ref) SA_REC_##NAME,
#define SA_FIELD(PFX, NAME, field, byte, bit, width, kind)
#define SA_END(PFX)
#include "sa_fields.def"
#undef SA_REC
#undef SA_FIELD
#undef SA_END
	SA_REC__COUNT,
};

/*
 * Row indices (SA_PR_BIT_DGID = 2, SA_PR_BIT__COUNT) and component mask
 * bits (SA_PR_COMP_DGID = 1 << 2), generated from the rows' order. Masks
 * are 64 bits on the wire; every record here has fewer than 31 rows
 * (test_sa_fields checks), so they are plain enum constants.
 */
#define SA_REC(NAME, name, PFX, size, ref)                                     \
	enum sa_##name##_bit                                                   \
	{
#define SA_FIELD(PFX, NAME, field, byte, bit, width, kind)                     \
	SA_##PFX##_BIT_##NAME,
#define SA_END(PFX)                                                            \
	SA_##PFX##_BIT__COUNT                                                  \
	}                                                                      \
	;
#include "sa_fields.def"
#undef SA_REC
#undef SA_FIELD
#undef SA_END

#define SA_REC(NAME, name, PFX, size, ref)                                     \
	enum sa_##name##_comp                                                  \
	{
#define SA_FIELD(PFX, NAME, field, byte, bit, width, kind)                     \
	SA_##PFX##_COMP_##NAME = (int)(1u << SA_##PFX##_BIT_##NAME),
#define SA_END(PFX)                                                            \
	}                                                                      \
	;
#include "sa_fields.def"
#undef SA_REC
#undef SA_FIELD
#undef SA_END

/* ServiceID is two rows, so two mask bits (IBTA Table 205). */
#define SA_PR_COMP_SERVICE_ID                                                  \
	(SA_PR_COMP_SERVICE_ID_MSB | SA_PR_COMP_SERVICE_ID_LSB)

/* Structs, one member per non-reserved row (cm_mad.h's CM_MEMBER_*). */
#define SA_REC(NAME, name, PFX, size, ref) struct sa_##name {
#define SA_FIELD(PFX, NAME, field, byte, bit, width, kind)                     \
	CM_MEMBER_##kind(field, width)
#define SA_END(PFX)                                                            \
	}                                                                      \
	;
#include "sa_fields.def"
#undef SA_REC
#undef SA_FIELD
#undef SA_END

/* Wire sizes of the records, from the table. */
enum {
#define SA_REC(NAME, name, PFX, size, ref) SA_##NAME##_SIZE = (size),
#define SA_FIELD(PFX, NAME, field, byte, bit, width, kind)
#define SA_END(PFX)
#include "sa_fields.def"
#undef SA_REC
#undef SA_FIELD
#undef SA_END
};

static inline uint64_t sa_path_rec_service_id(const struct sa_path_rec *r)
{
	return (uint64_t)r->service_id_msb << 32 | r->service_id_lsb;
}

static inline void sa_path_rec_set_service_id(struct sa_path_rec *r,
					      uint64_t id)
{
	r->service_id_msb = (uint32_t)(id >> 32);
	r->service_id_lsb = (uint32_t)id;
}

struct sa_rec_desc {
	const char *name; /* "PATH_REC" */
	const char *ibta; /* "15.2.5.16" */
	uint16_t size; /* bytes on the wire */
	uint16_t nfields;
	const struct cm_field_desc *fields; /* offset: in struct sa_<name> */
};

/* The descriptor of a record type; NULL out of range. */
const struct sa_rec_desc *sa_rec_desc(enum sa_rec_type type);

/*
 * Record codecs over raw record bytes (p[0..size)). decode returns the
 * name of the first non-zero reserved row, or NULL; encode writes every
 * row, reserved ones as zero.
 */
#define SA_REC(NAME, name, PFX, size, ref)                                     \
	const char *sa_##name##_decode(const uint8_t *p, struct sa_##name *r); \
	void sa_##name##_encode(const struct sa_##name *r, uint8_t *p);
#define SA_FIELD(PFX, NAME, field, byte, bit, width, kind)
#define SA_END(PFX)
#include "sa_fields.def"
#undef SA_REC
#undef SA_FIELD
#undef SA_END

/* Why an SA MAD was refused; one code per check, with the field at fault. */
enum sa_fault_code {
	SA_FAULT_NONE,
	SA_FAULT_LENGTH, /* not 256 bytes (nor a reassembled table) */
	SA_FAULT_BASE_VERSION, /* base version is not 1 */
	SA_FAULT_CLASS, /* management class is not 0x03 */
	SA_FAULT_CLASS_VERSION, /* class version is not 2 */
	SA_FAULT_METHOD, /* not Get/GetTable(Resp), or not for this attr */
	SA_FAULT_ATTR_ID, /* neither PathRecord nor ClassPortInfo */
	SA_FAULT_ATTR_OFFSET, /* records carried at a stride below a record */
	SA_FAULT_RMPP, /* table response without RMPP, or bad RMPP fields */
	SA_FAULT_RESERVED, /* a reserved field is not zero */
};

struct sa_fault {
	enum sa_fault_code code;
	const char *field; /* the field at fault, or NULL */
	uint64_t value; /* the offending value */
};

const char *sa_fault_str(enum sa_fault_code code);

/* Decode flags. */
enum {
	/* Refuse a non-zero reserved field (in the header or in any record);
	 * without it the decode succeeds and fault->code says
	 * SA_FAULT_RESERVED, as cm_mad_decode does. */
	SA_DECODE_STRICT = 1 << 0,
	/*
	 * The transport does no RMPP (ibsim's umad2sim): a successful
	 * GetTableResp of one MAD with RMPP version 0 is framed by its
	 * attribute offset alone. Records are the slots of the 200 data
	 * bytes at the offset's stride (at most 200 / stride: what does not
	 * fit cannot arrive), counted up to the first all-zero slot, which
	 * is padding: a PathRecord from the SA (the only record with table
	 * answers) has a non-zero DGID and DLID. A non-zero slot
	 * after a zero one is refused (SA_FAULT_LENGTH, field "data").
	 * Shorter than 256 bytes (umad2sim hands the MAD over at the
	 * length opensm sent it: 56 bytes and the records), the length
	 * frames it. A MAD with RMPP version 1 is decoded as without the
	 * flag.
	 */
	SA_DECODE_NO_RMPP = 1 << 1,
};

/* One SA MAD: its headers and where its records are. */
struct sa_msg {
	struct cm_mad_hdr hdr;
	struct sa_hdr sa;
	enum sa_rec_type rec; /* SA_REC_PATH_REC or SA_REC_CLASS_PORT_INFO */
	/*
	 * Decode: how many records the MAD carries, the stride between them
	 * in bytes and the first of them, inside the caller's buffer (valid
	 * as long as it is). Get, GetTable and GetResp carry one (the
	 * template of a query, the answer of a Get); GetTableResp as many
	 * as its payload length (one MAD) or its length (reassembled) says,
	 * none when its status is an error.
	 */
	unsigned int nrec;
	unsigned int stride;
	const uint8_t *data;
};

/*
 * Decode and check one SA MAD of len bytes: 256, or for a successful
 * GetTableResp the kernel's RMPP reassembly (56 header bytes then the
 * records: shorter than 256 bytes for up to three PathRecords, longer for
 * more), or with SA_DECODE_NO_RMPP umad2sim's MAD at its sent length.
 * Returns 0 and fills *m, or -EBADMSG with the first problem in *fault.
 * Never reads outside buf[0..len).
 */
int sa_mad_decode(const void *buf, size_t len, unsigned int flags,
		  struct sa_msg *m, struct sa_fault *fault);

/* Record i (< m->nrec) of a decoded MAD; -ERANGE past the end, -EINVAL
 * for a record of the other type. */
int sa_msg_path_rec(const struct sa_msg *m, unsigned int i,
		    struct sa_path_rec *rec);
int sa_msg_class_port_info(const struct sa_msg *m,
			   struct sa_class_port_info *cpi);

/*
 * Print m for people: its common header, the SA header rows (method and
 * status named, the component mask's bits by their record's row names),
 * then every record, every row by its sa_fields.def name ("  dgid:
 * fe80:..."; rows of 16 bits or more in hex, narrower ones in decimal,
 * reserved rows only when not zero). Returns the length the whole text
 * needs, like snprintf; buf always ends in a NUL when size > 0.
 */
size_t sa_msg_dump(const struct sa_msg *m, char *buf, size_t size);

/* "SubnAdmGetTableResp", or NULL for a method this codec does not know. */
const char *sa_method_name(uint8_t method);

/*
 * Fill m for a request: a Get or GetTable of a PathRecord (comp_mask
 * selects the template's rows that the SA must match), or a Get of
 * ClassPortInfo (comp_mask 0). Base version, class and class version are
 * set; SM_Key, RMPP and attribute offset are zero, as IBTA 15.2.1.1 asks
 * of a request.
 */
void sa_msg_init(struct sa_msg *m, enum sa_rec_type rec, uint8_t method,
		 uint64_t tid, uint64_t comp_mask);

/*
 * Encode m's headers and nrec records into out[0..size): PathRecords from
 * recs[0..nrec), or one ClassPortInfo (cpi may be NULL for the empty
 * record of a Get). Base version, class, class version and attribute id
 * come from the record type; everything else from m->hdr and m->sa as
 * they are. Records are laid at m->sa.attr_offset * 8 bytes for a
 * GetTableResp whose offset is at least a record, else at the record's
 * size. Returns the bytes written (256, or 56 + records for a table
 * longer than one MAD, or for a GetTableResp into a buffer shorter than
 * 256: the reassembled form sa_mad_decode takes), -EINVAL for more than
 * one record outside a GetTableResp, or -ENOSPC when out is too small.
 */
int sa_path_mad_encode(const struct sa_msg *m, const struct sa_path_rec *recs,
		       unsigned int nrec, uint8_t *out, size_t size);
int sa_cpi_mad_encode(const struct sa_msg *m,
		      const struct sa_class_port_info *cpi,
		      uint8_t out[SA_MAD_SIZE]);

#endif
