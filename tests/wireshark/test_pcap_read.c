// SPDX-License-Identifier: MIT
/*
 * The pcap reader (proto/pcap.c): file headers written by hand in both
 * byte orders and both stamp units, records and their errors, and the MAD
 * found in each frame form, from frames built by the writer (whose bytes
 * tests/unit/test_pcap.c checks against golden ones) and edited here.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cm_mad.h"
#include "pcap.h"

/* clang-format off */
static const uint8_t hdr_le_nsec[24] = {
	0x4d, 0x3c, 0xb2, 0xa1, 0x02, 0x00, 0x04, 0x00,
	0, 0, 0, 0, 0, 0, 0, 0,
	0xff, 0xff, 0x00, 0x00,		/* snaplen 65535 */
	0x93, 0x00, 0x00, 0x00,		/* USER0 */
};
static const uint8_t hdr_be_usec[24] = {
	0xa1, 0xb2, 0xc3, 0xd4, 0x00, 0x02, 0x00, 0x04,
	0, 0, 0, 0, 0, 0, 0, 0,
	0x00, 0x00, 0x01, 0x00,		/* snaplen 256 */
	0x10, 0x00, 0x00, 0x01,		/* Ethernet, FCS bits 0x1 set */
};
/* clang-format on */

static void test_file_headers(void **state)
{
	struct pcap_reader r;
	uint8_t b[24];

	(void)state;
	assert_int_equal(pcap_read_file_header(&r, hdr_le_nsec, 24), 0);
	assert_false(r.swap);
	assert_true(r.nsec);
	assert_int_equal(r.version_major, 2);
	assert_int_equal(r.version_minor, 4);
	assert_int_equal(r.snaplen, 65535);
	assert_int_equal(r.linktype, PCAP_LINKTYPE_USER0);

	assert_int_equal(pcap_read_file_header(&r, hdr_be_usec, 24), 0);
	assert_true(r.swap);
	assert_false(r.nsec);
	assert_int_equal(r.version_major, 2);
	assert_int_equal(r.version_minor, 4);
	assert_int_equal(r.snaplen, 256);
	assert_int_equal(r.linktype, PCAP_LINKTYPE_ETHERNET);

	/* the writer's header reads back */
	assert_int_equal(
		pcap_file_header(b, sizeof(b), PCAP_LINKTYPE_INFINIBAND), 24);
	assert_int_equal(pcap_read_file_header(&r, b, 24), 0);
	assert_int_equal(r.linktype, PCAP_LINKTYPE_INFINIBAND);

	assert_int_equal(pcap_read_file_header(&r, hdr_le_nsec, 23), -ENODATA);
	assert_int_equal(pcap_read_file_header(&r, hdr_le_nsec, 3), -ENODATA);
	memcpy(b, hdr_le_nsec, 24);
	b[0] = 0xd5;
	assert_int_equal(pcap_read_file_header(&r, b, 24), -EBADMSG);
	assert_false(pcap_is_pcap(b, 24));
	memcpy(b, hdr_le_nsec, 24);
	b[20] = 105; /* IEEE 802.11 */
	assert_int_equal(pcap_read_file_header(&r, b, 24), -EPROTONOSUPPORT);
	assert_int_equal(r.linktype, 105);
}

static void test_records(void **state)
{
	struct pcap_reader r;
	struct pcap_record rec;
	/* BE usec: 1700000000 s, 999999 us, caplen 4, origlen 8, 4 bytes */
	uint8_t b[20] = {
		0x65, 0x53, 0xf1, 0x00, 0x00, 0x0f, 0x42, 0x3f, 0, 0,
		0,    4,    0,	  0,	0,    8,    1,	  2,	3, 4
	};

	(void)state;
	assert_int_equal(pcap_read_file_header(&r, hdr_be_usec, 24), 0);
	assert_int_equal(pcap_read_record(&r, b, sizeof(b), &rec), 20);
	assert_int_equal(rec.ts_sec, 1700000000);
	assert_int_equal(rec.ts_nsec, 999999000);
	assert_int_equal(rec.caplen, 4);
	assert_int_equal(rec.origlen, 8);
	assert_ptr_equal(rec.frame, b + 16);

	assert_int_equal(pcap_read_record(&r, b, 19, &rec), -ENODATA);
	assert_int_equal(pcap_read_record(&r, b, 15, &rec), -ENODATA);
	b[7] = 0x40; /* 1000000 us */
	assert_int_equal(pcap_read_record(&r, b, sizeof(b), &rec), -EINVAL);
	b[7] = 0x3f;
	b[15] = 3; /* origlen < caplen */
	assert_int_equal(pcap_read_record(&r, b, sizeof(b), &rec), -EMSGSIZE);
	b[15] = 8;
	r.snaplen = 3;
	assert_int_equal(pcap_read_record(&r, b, sizeof(b), &rec), -EMSGSIZE);
}

/* The MAD at want_off: found in a frame that ends with it, not in one a
 * byte shorter. */
static void mad_at(uint32_t lt, const uint8_t *frame, size_t want_off)
{
	const uint8_t *mad = NULL;
	size_t len = want_off + CM_MAD_SIZE;

	assert_int_equal(pcap_frame_mad(lt, frame, len, &mad), 0);
	assert_ptr_equal(mad, frame + want_off);
	assert_int_equal(pcap_frame_mad(lt, frame, len - 1, &mad), -ENODATA);
}

static void test_frames(void **state)
{
	uint8_t buf[PCAP_RECORD_MAX + 4], mad[CM_MAD_SIZE], *f = buf + 16;
	struct pcap_ib_addr a = { .sqpn = 1, .dqpn = 1, .qkey = PCAP_GSI_QKEY };
	struct timespec ts = { 1, 0 };
	const uint8_t *m;
	int n;

	(void)state;
	memset(mad, 0x5a, sizeof(mad));
	n = pcap_ib_record(buf, sizeof(buf), &a, mad, &ts);
	mad_at(PCAP_LINKTYPE_USER0, f, 8 + 12 + 8);
	mad_at(PCAP_LINKTYPE_INFINIBAND, f, 8 + 12 + 8);
	f[8 + 7] = 2; /* DestQP 2: not the GSI */
	assert_int_equal(pcap_frame_mad(PCAP_LINKTYPE_USER0, f, 290, &m),
			 -ENOMSG);
	assert_int_equal(
		pcap_frame_mad(PCAP_LINKTYPE_ETHERNET + 104, f, 290, &m),
		-EPROTONOSUPPORT);

	a.grh = true;
	n = pcap_ib_record(buf, sizeof(buf), &a, mad, &ts);
	mad_at(PCAP_LINKTYPE_USER0, f, 8 + 40 + 12 + 8);

	a.sgid[10] = a.sgid[11] = a.dgid[10] = a.dgid[11] = 0xff;
	n = pcap_roce_record(buf, sizeof(buf), &a, mad, &ts);
	mad_at(PCAP_LINKTYPE_ETHERNET, f, 14 + 20 + 8 + 12 + 8);
	/* the same with an 802.1Q tag */
	memmove(f + 16, f + 12, (size_t)n - 16 - 12);
	f[12] = 0x81;
	f[13] = 0x00;
	f[14] = 0x00;
	f[15] = 0x05;
	mad_at(PCAP_LINKTYPE_ETHERNET, f, 18 + 20 + 8 + 12 + 8);
	f[18 + 20 + 2] = 0x13; /* UDP destination port 0x13b7: not 4791 */
	assert_int_equal(pcap_frame_mad(PCAP_LINKTYPE_ETHERNET, f,
					(size_t)n - 16 + 4, &m),
			 -ENOMSG);

	memset(a.sgid, 0, sizeof(a.sgid));
	memset(a.dgid, 0, sizeof(a.dgid));
	a.sgid[0] = a.dgid[0] = 0xfe;
	n = pcap_roce_record(buf, sizeof(buf), &a, mad, &ts);
	mad_at(PCAP_LINKTYPE_ETHERNET, f, 14 + 40 + 8 + 12 + 8);
	f[12] = 0x88; /* EtherType 0x88DD: not IP */
	assert_int_equal(
		pcap_frame_mad(PCAP_LINKTYPE_ETHERNET, f, (size_t)n - 16, &m),
		-ENOMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_headers),
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_frames),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
