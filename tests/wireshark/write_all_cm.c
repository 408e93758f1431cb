// SPDX-License-Identifier: MIT
/*
 * Write a capture of every CM message type (REQ, MRA, REJ, REP, RTU, DREQ,
 * DREP, LAP, APR, SIDR_REQ, SIDR_REP), with cmd's own encoder and framing
 * (proto/cm_mad.c, proto/pcap.c), for tests/wireshark/dissector.sh to
 * decode with tshark and with cmmad and compare field by field.
 *
 *   write_all_cm --ib FILE --roce FILE
 *
 * --ib writes LINKTYPE_USER0, the link type the daemon's IB captures use;
 * --roce writes RoCE v2 over Ethernet (IPv4).
 *
 * Every integer field gets a value of its own, all bits of its width in
 * play (so a dissector that reads a field at the wrong place, or with the
 * wrong mask, disagrees with cmmad), and every byte string a pattern; an
 * enumerated field whose value cm_msg_validate refuses is stepped to the
 * first value it accepts. The REQ's flow labels use all 20 bits and its
 * packet rates all 6 (tshark 4.0's own REQ dissector misreads both).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cm_mad.h"
#include "pcap.h"

static uint64_t lcg = 0x9e3779b97f4a7c15ULL;

static uint64_t next_value(void)
{
	lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
	return lcg >> 11;
}

static uint64_t mask(unsigned int width)
{
	return width >= 64 ? ~0ULL : (1ULL << width) - 1;
}

static const struct cm_field_desc *field_named(const struct cm_msg_desc *d,
					       const char *name)
{
	for (unsigned int i = 0; i < d->nfields; i++)
		if (!strcmp(d->fields[i].name, name))
			return &d->fields[i];
	return NULL;
}

static int fill(struct cm_msg *m, enum cm_msg_type type)
{
	const struct cm_msg_desc *d = cm_msg_desc(type);
	struct cm_fault fault;
	const struct cm_field_desc *last = NULL;

	cm_msg_init(m, type, 0x0000cafe00000000ULL | type);
	for (unsigned int i = 0; i < d->nfields; i++) {
		const struct cm_field_desc *f = &d->fields[i];

		switch (f->kind) {
		case CM_KIND_bytes:
			for (unsigned int b = 0; b < f->width / 8; b++)
				((uint8_t *)&m->req)[f->offset + b] =
					(uint8_t)(0x11 * (type + 1) + b);
			break;
		case CM_KIND_rsvd:
			break;
		case CM_KIND_u8:
		case CM_KIND_u16:
		case CM_KIND_u32:
		case CM_KIND_u64:
			cm_field_set(m, f, next_value() & mask(f->width));
			break;
		}
	}
	if (type == CM_MSG_REQ) {
		m->req.primary_flow_label = 0xabcde;
		m->req.primary_packet_rate = 0x07;
		m->req.alt_flow_label = 0x54321;
		m->req.alt_packet_rate = 0x10;
	}
	/*
	 * Step each refused enumerated field to the smallest nonzero value
	 * validate takes.
	 */
	for (int tries = 0; cm_msg_validate(m, &fault); tries++) {
		const struct cm_field_desc *f =
			fault.field ? field_named(d, fault.field) : NULL;

		if (f && f != last) {
			last = f;
			cm_field_set(m, f, 0);
		}

		if (!f || tries > 4096) {
			fprintf(stderr, "%s: cannot satisfy %s\n",
				cm_msg_type_name(type),
				fault.field ? fault.field : "validate");
			return -EINVAL;
		}
		cm_field_set(m, f, (cm_field_get(m, f) + 1) & mask(f->width));
	}
	return 0;
}

static int write_file(const char *path, bool roce)
{
	uint8_t buf[PCAP_RECORD_MAX], mad[CM_MAD_SIZE];
	FILE *out = fopen(path, "wb");
	int len;

	if (!out) {
		perror(path);
		return 1;
	}
	len = pcap_file_header(buf, sizeof(buf),
			       roce ? PCAP_LINKTYPE_ETHERNET :
				      PCAP_LINKTYPE_USER0);
	fwrite(buf, 1, (size_t)len, out);
	for (unsigned int t = 0; t < CM_MSG__COUNT; t++) {
		struct cm_msg m;
		struct pcap_ib_addr a = {
			.slid = 1,
			.dlid = 2,
			.pkey = 0xffff,
			.sqpn = PCAP_GSI_QPN,
			.dqpn = PCAP_GSI_QPN,
			.qkey = PCAP_GSI_QKEY,
			.hop_limit = 64,
		};
		struct timespec ts = { 1700000000, (long)t * 1000 };

		/* IPv4-mapped GIDs 192.0.2.1 and 192.0.2.2 (RFC 5737). */
		a.sgid[10] = a.sgid[11] = a.dgid[10] = a.dgid[11] = 0xff;
		a.sgid[12] = a.dgid[12] = 192;
		a.sgid[14] = a.dgid[14] = 2;
		a.sgid[15] = 1;
		a.dgid[15] = 2;
		if (fill(&m, (enum cm_msg_type)t) || cm_mad_encode(&m, mad))
			goto fail;
		len = roce ? pcap_roce_record(buf, sizeof(buf), &a, mad, &ts) :
			     pcap_ib_record(buf, sizeof(buf), &a, mad, &ts);
		if (len < 0)
			goto fail;
		fwrite(buf, 1, (size_t)len, out);
	}
	if (fclose(out)) {
		perror(path);
		return 1;
	}
	return 0;
fail:
	fclose(out);
	fprintf(stderr, "%s: cannot encode\n", path);
	return 1;
}

int main(int argc, char **argv)
{
	int err = 0;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--ib"))
			err |= write_file(argv[i + 1], false);
		else if (!strcmp(argv[i], "--roce"))
			err |= write_file(argv[i + 1], true);
		else
			err = 2;
	}
	if (argc < 3 || argc % 2 == 0 || err == 2) {
		fprintf(stderr, "usage: write_all_cm --ib FILE --roce FILE\n");
		return 2;
	}
	return err;
}
