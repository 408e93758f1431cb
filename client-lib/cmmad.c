// SPDX-License-Identifier: MIT
/*
 * cmmad: decode and print IB CM MADs (class 0x07) and SA MADs (class 0x03:
 * PathRecord, ClassPortInfo), field by field, as IBTA names them.
 *
 *   cmmad decode [--strict] [--no-rmpp] [FILE]
 *                                    MADs from FILE (or stdin): a pcap
 *                                    capture (cmd --capture's included),
 *                                    raw 256-byte records, or hex text
 *                                    ('#' comments)
 *   cmmad example TYPE               build a sample TYPE (req, rep, ...),
 *                                    print its bytes and its decode
 */
#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cm_mad.h"
#include "pcap.h"
#include "sa_mad.h"
#include "cmd_config.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: cmmad decode [--strict] [--no-rmpp] [FILE]\n"
		   "       cmmad example TYPE   (TYPE: req mra rej rep rtu "
		   "dreq drep lap apr sidr_req sidr_rep)\n"
		   "       cmmad --version\n");
}

static void print_hex(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i += 16) {
		printf("%04zx ", i);
		for (size_t j = i; j < i + 16 && j < n; j++)
			printf(" %02x", p[j]);
		printf("\n");
	}
}

/* cmmad's decode options, mapped onto each codec's flags in show(). */
enum {
	CMMAD_STRICT = 1 << 0, /* refuse reserved fields that are not zero */
	CMMAD_NO_RMPP = 1 << 1, /* SA tables from a transport without RMPP */
};

/*
 * An SA MAD: sa_mad_decode and sa_msg_dump. --no-rmpp is for captures
 * where RMPP never ran (saquery under ibsim/umad2sim): one-MAD tables of
 * RMPP version 0, framed by the attribute offset.
 */
static int show_sa(const uint8_t *mad, size_t len, unsigned int opts)
{
	unsigned int flags = (opts & CMMAD_STRICT ? SA_DECODE_STRICT : 0) |
			     (opts & CMMAD_NO_RMPP ? SA_DECODE_NO_RMPP : 0);
	struct sa_msg m;
	struct sa_fault f;
	char *text;
	size_t n;

	if (sa_mad_decode(mad, len, flags, &m, &f)) {
		printf("malformed SA MAD: %s%s%s (value 0x%llx)\n",
		       sa_fault_str(f.code), f.field ? ", field " : "",
		       f.field ? f.field : "", (unsigned long long)f.value);
		if (f.code == SA_FAULT_RMPP && !(opts & CMMAD_NO_RMPP) &&
		    m.sa.rmpp_version == 0)
			printf("note: RMPP version 0: a capture from a "
			       "transport without RMPP (ibsim) decodes with "
			       "--no-rmpp\n");
		return 1;
	}
	/* A reassembled table has any number of records: size the text. */
	n = sa_msg_dump(&m, NULL, 0) + 1;
	if (!(text = malloc(n))) {
		printf("cannot print the SA MAD: out of memory\n");
		return 1;
	}
	sa_msg_dump(&m, text, n);
	fputs(text, stdout);
	free(text);
	if (f.code == SA_FAULT_RESERVED)
		printf("note: reserved field %s is not zero (ignored)\n",
		       f.field);
	return 0;
}

static int show(const uint8_t *mad, size_t len, unsigned int opts)
{
	unsigned int flags = opts & CMMAD_STRICT ? CM_DECODE_STRICT : 0;
	struct cm_msg m;
	struct cm_fault f;
	char text[8192];

	if (len >= 2 && mad[1] == SA_MGMT_CLASS)
		return show_sa(mad, len, opts);
	if (cm_mad_decode(mad, len, flags, &m, &f)) {
		printf("malformed: %s%s%s (value 0x%llx)\n",
		       cm_fault_str(f.code), f.field ? ", field " : "",
		       f.field ? f.field : "", (unsigned long long)f.value);
		return 1;
	}
	cm_msg_dump(&m, text, sizeof(text));
	fputs(text, stdout);
	if (f.code == CM_FAULT_RESERVED)
		printf("note: reserved field %s is 0x%llx (ignored)\n", f.field,
		       (unsigned long long)f.value);
	return 0;
}

/* Hex text when the input holds only hex digits, blanks and comments. */
static size_t parse_hex(const char *in, size_t n, uint8_t *out, size_t max)
{
	size_t len = 0;
	int hi = -1;

	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)in[i], v;

		if (c == '#') {
			while (i < n && in[i] != '\n')
				i++;
			continue;
		}
		if (isspace(c) || c == ',')
			continue;
		if (c == '0' && i + 1 < n &&
		    (in[i + 1] == 'x' || in[i + 1] == 'X')) {
			i++;
			continue;
		}
		if (!isxdigit(c))
			return (size_t)-1;
		v = isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
		if (hi < 0) {
			hi = v;
		} else {
			if (len == max)
				return (size_t)-1;
			out[len++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	return len;
}

/* The whole of f, in a buffer that grows; NULL (errno set) on failure. */
static uint8_t *slurp(FILE *f, size_t *len)
{
	size_t cap = 1 << 16, n = 0, got;
	uint8_t *buf = malloc(cap), *nb;

	if (!buf)
		return NULL;
	while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			if (!(nb = realloc(buf, cap *= 2))) {
				free(buf);
				return NULL;
			}
			buf = nb;
		}
	}
	if (ferror(f)) {
		free(buf);
		errno = EIO;
		return NULL;
	}
	*len = n;
	return buf;
}

static const char *linktype_name(uint32_t lt)
{
	switch (lt) {
	case PCAP_LINKTYPE_ETHERNET:
		return "ETHERNET (RoCE v2)";
	case PCAP_LINKTYPE_USER0:
		return "USER0 (InfiniBand)";
	case PCAP_LINKTYPE_INFINIBAND:
		return "INFINIBAND";
	default:
		return "unknown";
	}
}

/*
 * A pcap file: every record's number (from 1, as Wireshark counts frames),
 * UTC stamp and MAD decode. A broken file header or record stops the
 * decode with a message naming the file and record (exit 2); a frame
 * that holds no CM MAD is reported and skipped (exit 1).
 */
static int decode_pcap(const char *name, const uint8_t *buf, size_t len,
		       unsigned int flags)
{
	struct pcap_reader r;
	size_t off = PCAP_FILE_HDR_SIZE;
	int bad = 0, err;

	err = pcap_read_file_header(&r, buf, len);
	if (err == -ENODATA) {
		fprintf(stderr,
			"cmmad: %s: truncated pcap file header (%zu of %d "
			"bytes)\n",
			name, len, PCAP_FILE_HDR_SIZE);
		return 2;
	}
	if (err == -EPROTONOSUPPORT) {
		fprintf(stderr,
			"cmmad: %s: unsupported pcap link type %u (cmmad "
			"reads %u ETHERNET, %u USER0 and %u INFINIBAND)\n",
			name, r.linktype, PCAP_LINKTYPE_ETHERNET,
			PCAP_LINKTYPE_USER0, PCAP_LINKTYPE_INFINIBAND);
		return 2;
	}
	if (err) {
		fprintf(stderr, "cmmad: %s: not a pcap file\n", name);
		return 2;
	}
	printf("# %s: pcap %u.%u, %s-endian, %s stamps, link type %u %s, "
	       "snaplen %u\n",
	       name, r.version_major, r.version_minor,
	       r.swap ? "big" : "little", r.nsec ? "nanosecond" : "microsecond",
	       r.linktype, linktype_name(r.linktype), r.snaplen);
	for (unsigned long rec_no = 1; off < len; rec_no++) {
		struct pcap_record rec;
		const uint8_t *mad;
		char when[64];
		time_t t;
		struct tm tm;

		err = pcap_read_record(&r, buf + off, len - off, &rec);
		if (err == -ENODATA && len - off < PCAP_REC_HDR_SIZE) {
			fprintf(stderr,
				"cmmad: %s: record %lu truncated: %zu bytes "
				"left at offset %zu, record needs a 16-byte "
				"header\n",
				name, rec_no, len - off, off);
			return 2;
		}
		if (err == -ENODATA) {
			fprintf(stderr,
				"cmmad: %s: record %lu truncated: %zu bytes "
				"left at offset %zu, record needs %zu (16-byte "
				"header + captured length %u)\n",
				name, rec_no, len - off, off,
				(size_t)PCAP_REC_HDR_SIZE + rec.caplen,
				rec.caplen);
			return 2;
		}
		if (err == -EMSGSIZE) {
			fprintf(stderr,
				"cmmad: %s: record %lu at offset %zu: captured "
				"length %u exceeds snaplen %u or original "
				"length %u\n",
				name, rec_no, off, rec.caplen, r.snaplen,
				rec.origlen);
			return 2;
		}
		if (err < 0) {
			fprintf(stderr,
				"cmmad: %s: record %lu at offset %zu: "
				"timestamp fraction %u out of range\n",
				name, rec_no, off, rec.ts_nsec);
			return 2;
		}
		off += (size_t)err;
		t = (time_t)rec.ts_sec;
		gmtime_r(&t, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
		printf("%s# record %lu, %s.%0*uZ, %u bytes\n",
		       rec_no > 1 ? "\n" : "", rec_no, when, r.nsec ? 9 : 6,
		       r.nsec ? rec.ts_nsec : rec.ts_nsec / 1000, rec.caplen);
		err = pcap_frame_mad(r.linktype, rec.frame, rec.caplen, &mad);
		if (err) {
			printf("no MAD: %s\n",
			       err == -ENODATA ? "frame cut short (snapped or "
						 "truncated)" :
						 "not a UD packet to QP1");
			bad = 1;
			continue;
		}
		bad |= show(mad, CM_MAD_SIZE, flags);
	}
	return bad;
}

/* A file named *.pcap or *.cap is meant as a capture, whatever it holds. */
static bool has_pcap_suffix(const char *path)
{
	size_t l = strlen(path);

	return (l > 5 && !strcasecmp(path + l - 5, ".pcap")) ||
	       (l > 4 && !strcasecmp(path + l - 4, ".cap"));
}

static int decode(int argc, char **argv)
{
	unsigned int flags = 0;
	const char *path = NULL;
	FILE *f = stdin;
	uint8_t *in, *bytes;
	size_t n, len;
	int bad = 0;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--strict"))
			flags |= CMMAD_STRICT;
		else if (!strcmp(argv[i], "--no-rmpp"))
			flags |= CMMAD_NO_RMPP;
		else
			path = argv[i];
	}
	if (path && !(f = fopen(path, "rb"))) {
		fprintf(stderr, "cmmad: %s: %s\n", path, strerror(errno));
		return 2;
	}
	in = slurp(f, &n);
	if (f != stdin)
		fclose(f);
	if (!in) {
		fprintf(stderr, "cmmad: %s: %s\n", path ? path : "stdin",
			strerror(errno));
		return 2;
	}
	if (n >= 4 && in[0] == 0x0a && in[1] == 0x0d && in[2] == 0x0d &&
	    in[3] == 0x0a) {
		fprintf(stderr,
			"cmmad: %s: a pcapng file; cmmad reads classic pcap "
			"(convert with: editcap -F pcap IN OUT)\n",
			path ? path : "stdin");
		free(in);
		return 2;
	}
	if (!pcap_is_pcap(in, n) && path && has_pcap_suffix(path)) {
		fprintf(stderr,
			"cmmad: %s: not a pcap file: magic %02x%02x%02x%02x "
			"is neither a1b2c3d4 nor a1b23c4d in either byte "
			"order\n",
			path, n > 0 ? in[0] : 0, n > 1 ? in[1] : 0,
			n > 2 ? in[2] : 0, n > 3 ? in[3] : 0);
		free(in);
		return 2;
	}
	if (pcap_is_pcap(in, n)) {
		bad = decode_pcap(path ? path : "stdin", in, n, flags);
		free(in);
		return bad;
	}
	if (!(bytes = malloc(n ? n : 1))) {
		free(in);
		return 2;
	}
	len = parse_hex((const char *)in, n, bytes, n);
	if (len == (size_t)-1) { /* not hex text: raw records */
		memcpy(bytes, in, n);
		len = n;
	}
	free(in);
	/* An SA table as the kernel's RMPP reassembly hands it to umad:
	 * 56 header bytes and every record, one message. */
	if (len > CM_MAD_SIZE && len % CM_MAD_SIZE &&
	    bytes[1] == SA_MGMT_CLASS) {
		bad = show(bytes, len, flags);
		free(bytes);
		return bad;
	}
	if (len == 0 || len % CM_MAD_SIZE) {
		fprintf(stderr,
			"cmmad: %zu bytes is not a whole number of "
			"256-byte MADs\n",
			len);
		bad = show(bytes, len, flags) ? 1 : 0;
		free(bytes);
		return bad;
	}
	for (size_t off = 0; off < len; off += CM_MAD_SIZE) {
		if (off)
			printf("\n");
		bad |= show(bytes + off, CM_MAD_SIZE, flags);
	}
	free(bytes);
	return bad;
}

static int example(const char *name)
{
	struct cm_msg m;
	uint8_t mad[CM_MAD_SIZE];
	int type = -1;
	static const char pd[] = "hello from cmmad";

	for (unsigned int i = 0; i < CM_MSG__COUNT; i++)
		if (!strcasecmp(name, cm_msg_type_name(i)))
			type = (int)i;
	if (type < 0) {
		usage(stderr);
		return 2;
	}
	cm_msg_init(&m, (enum cm_msg_type)type, 0x00000001deadbeefULL);
	switch ((enum cm_msg_type)type) {
	case CM_MSG_REQ:
		m.req.local_comm_id = 0x1a2b3c4d;
		m.req.service_id = 0x0000000001061c06ULL; /* rdma_cm TCP 7174 */
		m.req.local_ca_guid = 0x0002c90300a1b2c3ULL;
		m.req.local_qpn = 0x000123;
		m.req.responder_resources = 4;
		m.req.initiator_depth = 4;
		m.req.remote_cm_resp_timeout = 20;
		m.req.starting_psn = 0xabcdef;
		m.req.local_cm_resp_timeout = 20;
		m.req.retry_count = 7;
		m.req.pkey = 0xffff;
		m.req.path_mtu = CM_MTU_1024;
		m.req.rnr_retry_count = 7;
		m.req.max_cm_retries = 15;
		m.req.primary_local_lid = 0xffff;
		m.req.primary_remote_lid = 0xffff;
		m.req.primary_local_gid[10] = 0xff;
		m.req.primary_local_gid[11] = 0xff;
		m.req.primary_local_gid[12] = 127;
		m.req.primary_local_gid[15] = 1;
		memcpy(m.req.primary_remote_gid, m.req.primary_local_gid, 16);
		m.req.primary_hop_limit = 64;
		m.req.primary_packet_rate = 3;
		m.req.primary_local_ack_timeout = 14;
		memcpy(m.req.private_data, pd, sizeof(pd));
		break;
	case CM_MSG_REJ:
		m.rej.local_comm_id = 0x11111111;
		m.rej.remote_comm_id = 0x1a2b3c4d;
		m.rej.reason = CM_REJ_CONSUMER_DEFINED;
		memcpy(m.rej.private_data, pd, sizeof(pd));
		break;
	default:
		/* Every other message begins with the two comm ids or the
		 * SIDR request id: enough to show the layout. */
		m.rtu.local_comm_id = 0x11111111;
		m.rtu.remote_comm_id = 0x1a2b3c4d;
		break;
	}
	if (cm_mad_encode(&m, mad))
		return 1;
	printf("%s as 256 wire bytes (24-byte MAD header, then the message):\n",
	       cm_msg_type_name((enum cm_msg_type)type));
	print_hex(mad, sizeof(mad));
	printf("\ndecoded:\n");
	return show(mad, sizeof(mad), CMMAD_STRICT);
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "--version")) {
		printf("cmmad %s\n", CMD_VERSION);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "decode"))
		return decode(argc - 2, argv + 2);
	if (argc == 3 && !strcmp(argv[1], "example"))
		return example(argv[2]);
	usage(argc >= 2 && !strcmp(argv[1], "--help") ? stdout : stderr);
	return argc >= 2 && !strcmp(argv[1], "--help") ? 0 : 2;
}
