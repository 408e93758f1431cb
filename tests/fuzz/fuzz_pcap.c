// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the pcap reader (proto/pcap.c: pcap_read_file_header,
 * pcap_read_record, pcap_frame_mad), which cmmad runs over files from
 * anywhere.
 *
 * Every input is a whole file. The header either parses or is refused
 * with one of the documented errors; each record either parses, taking
 * no more than what is left and at least its own header, with its frame
 * inside the input, or stops the walk with a documented error; every MAD
 * found lies wholly inside its frame. The found MADs go through
 * cm_mad_decode, as cmmad sends them.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "cm_mad.h"
#include "fuzz.h"
#include "pcap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pcap_reader r;
	size_t off = PCAP_FILE_HDR_SIZE;
	int err = pcap_read_file_header(&r, data, size);

	FUZZ_CHECK(err == 0 || err == -ENODATA || err == -EBADMSG ||
		   err == -EPROTONOSUPPORT);
	FUZZ_CHECK(!err == (pcap_is_pcap(data, size) && size >= 24 &&
			    err != -EPROTONOSUPPORT));
	if (err)
		return 0;
	while (off < size) {
		struct pcap_record rec;
		const uint8_t *mad;
		struct cm_msg m;
		struct cm_fault f;

		err = pcap_read_record(&r, data + off, size - off, &rec);
		if (err < 0) {
			FUZZ_CHECK(err == -ENODATA || err == -EMSGSIZE ||
				   err == -EINVAL);
			return 0;
		}
		FUZZ_CHECK((size_t)err >= PCAP_REC_HDR_SIZE &&
			   (size_t)err <= size - off);
		FUZZ_CHECK(rec.frame == data + off + PCAP_REC_HDR_SIZE);
		FUZZ_CHECK(rec.caplen == (size_t)err - PCAP_REC_HDR_SIZE);
		FUZZ_CHECK(rec.caplen <= r.snaplen &&
			   rec.caplen <= rec.origlen);
		FUZZ_CHECK(rec.ts_nsec < 1000000000u);
		err = pcap_frame_mad(r.linktype, rec.frame, rec.caplen, &mad);
		FUZZ_CHECK(err == 0 || err == -ENODATA || err == -ENOMSG);
		if (!err) {
			FUZZ_CHECK(mad >= rec.frame &&
				   mad + CM_MAD_SIZE <= rec.frame + rec.caplen);
			(void)cm_mad_decode(mad, CM_MAD_SIZE, 0, &m, &f);
		}
		off += PCAP_REC_HDR_SIZE + rec.caplen;
	}
	return 0;
}

#ifdef FUZZ_STANDALONE
/* One capture of each form: a REQ over IB (LRH only and with a GRH),
 * over RoCE v2 IPv4 and IPv6. */
void fuzz_write_seeds(void)
{
	static const struct {
		const char *name;
		uint32_t linktype;
		bool roce, grh, v4;
	} forms[] = {
		{ "ib-local.pcap", PCAP_LINKTYPE_USER0, false, false, false },
		{ "ib-global.pcap", PCAP_LINKTYPE_INFINIBAND, false, true,
		  false },
		{ "roce-v4.pcap", PCAP_LINKTYPE_ETHERNET, true, false, true },
		{ "roce-v6.pcap", PCAP_LINKTYPE_ETHERNET, true, false, false },
	};
	struct cm_msg m;
	uint8_t mad[CM_MAD_SIZE];

	cm_msg_init(&m, CM_MSG_REQ, 0x1234);
	m.req.local_comm_id = 0x1a2b3c4d;
	m.req.path_mtu = CM_MTU_1024;
	m.req.primary_flow_label = 0xabcde;
	if (cm_mad_encode(&m, mad))
		return;
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		uint8_t buf[PCAP_FILE_HDR_SIZE + 2 * PCAP_RECORD_MAX];
		struct pcap_ib_addr a = { .slid = 1,
					  .dlid = 2,
					  .pkey = 0xffff,
					  .sqpn = 1,
					  .dqpn = 1,
					  .qkey = PCAP_GSI_QKEY,
					  .grh = forms[i].grh };
		struct timespec ts = { 1700000000, 1 };
		int h = pcap_file_header(buf, sizeof(buf), forms[i].linktype);
		int n;

		if (forms[i].v4) {
			a.sgid[10] = a.sgid[11] = a.dgid[10] = a.dgid[11] =
				0xff;
		}
		a.sgid[15] = 1;
		a.dgid[15] = 2;
		n = forms[i].roce ? pcap_roce_record(buf + h, sizeof(buf) - h,
						     &a, mad, &ts) :
				    pcap_ib_record(buf + h, sizeof(buf) - h, &a,
						   mad, &ts);
		if (h > 0 && n > 0)
			fuzz_seed(forms[i].name, buf, (size_t)(h + n));
	}
}
#endif
