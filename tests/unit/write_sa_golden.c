// SPDX-License-Identifier: MIT
/*
 * Write the SA golden MADs of sa_golden_bytes.h as files for cmmad:
 *
 *   write_sa_golden DIR
 *
 * DIR/pr_query.mad      GetTable(PathRecord), raw 256 bytes
 * DIR/pr_table.hex      the two-record GetTableResp, hex text
 * DIR/ibsim.mad         opensm's answer on ibsim (no RMPP), raw
 * DIR/reassembled.mad   the table's header and its two records twice:
 *                       a four-record table as the kernel reassembles it
 * DIR/sa.pcap           ClassPortInfo Get and GetResp, ERR_NO_RECORDS,
 *                       as IB packets to QP1 (link type USER0)
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "pcap.h"
#include "sa_golden_bytes.h"

static FILE *open_in(const char *dir, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "wb")))
		perror(path);
	return f;
}

static int write_raw(const char *dir, const char *name, const uint8_t *mad)
{
	FILE *f = open_in(dir, name);

	if (!f)
		return 1;
	fwrite(mad, 1, SA_MAD_SIZE, f);
	return fclose(f) != 0;
}

static int write_hex(const char *dir, const char *name, const uint8_t *mad)
{
	FILE *f = open_in(dir, name);

	if (!f)
		return 1;
	fprintf(f, "# SubnAdmGetTableResp(PathRecord), two records\n");
	for (unsigned int i = 0; i < SA_MAD_SIZE; i++)
		fprintf(f, "%02x%s", mad[i], i % 16 == 15 ? "\n" : " ");
	return fclose(f) != 0;
}

static int write_pcap(const char *dir, const char *name)
{
	const uint8_t *mads[] = { cpi_get_golden, cpi_resp_golden,
				  pr_no_records_golden };
	uint8_t buf[PCAP_RECORD_MAX];
	FILE *f = open_in(dir, name);
	int len;

	if (!f)
		return 1;
	len = pcap_file_header(buf, sizeof(buf), PCAP_LINKTYPE_USER0);
	fwrite(buf, 1, (size_t)len, f);
	for (unsigned int i = 0; i < sizeof(mads) / sizeof(mads[0]); i++) {
		/* Requests from LID 2 to the SM at LID 1, answers back. */
		struct pcap_ib_addr a = {
			.slid = i % 2 ? 1 : 2,
			.dlid = i % 2 ? 2 : 1,
			.pkey = 0xffff,
			.sqpn = PCAP_GSI_QPN,
			.dqpn = PCAP_GSI_QPN,
			.qkey = PCAP_GSI_QKEY,
		};
		struct timespec ts = { 1764748800 + (time_t)i, 0 };

		len = pcap_ib_record(buf, sizeof(buf), &a, mads[i], &ts);
		if (len < 0) {
			fclose(f);
			return 1;
		}
		fwrite(buf, 1, (size_t)len, f);
	}
	return fclose(f) != 0;
}

static int write_reassembled(const char *dir, const char *name)
{
	FILE *f = open_in(dir, name);

	if (!f)
		return 1;
	fwrite(pr_table_golden, 1, SA_DATA_OFFSET + 128, f);
	fwrite(pr_table_golden + SA_DATA_OFFSET, 1, 128, f);
	return fclose(f) != 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: write_sa_golden DIR\n");
		return 2;
	}
	return write_raw(argv[1], "pr_query.mad", pr_query_golden) |
	       write_hex(argv[1], "pr_table.hex", pr_table_golden) |
	       write_raw(argv[1], "ibsim.mad", opensm_ibsim_capture) |
	       write_pcap(argv[1], "sa.pcap") |
	       write_reassembled(argv[1], "reassembled.mad");
}
