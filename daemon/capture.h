/* SPDX-License-Identifier: MIT */
/*
 * MAD capture (cmd --pcap FILE): every CM MAD the daemon sends and
 * receives, written as a classic pcap file that Wireshark and tshark
 * decode with their InfiniBand CM dissector. proto/pcap.c builds the
 * bytes; this module owns the files, the clock of the records and the
 * flushing.
 *
 * A pcap file holds one link type, so the ports' link layers decide the
 * files:
 *   - RoCE ports: RoCE v2 packets over Ethernet (LINKTYPE_ETHERNET), which
 *     Wireshark opens as it is;
 *   - IB ports: LRH [GRH] BTH DETH MAD ICRC VCRC under LINKTYPE_USER0
 *     (147), because Wireshark 4.0 opens no LINKTYPE_INFINIBAND (247)
 *     file; tell it USER0 is "infiniband" (see docs/OPERATIONS.md).
 * With ports of one kind, FILE holds them. With both, FILE holds the RoCE
 * ports and FILE.ib the IB ports.
 *
 * Capture never stops the daemon: a file that cannot be opened or written
 * is logged once and its records are counted as dropped from then on.
 */
#ifndef CMD_CAPTURE_H
#define CMD_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ev.h>

#include "cm_engine.h"
#include "transport.h"

/* Suffix of the IB file when RoCE ports take FILE. */
#define CAPTURE_IB_SUFFIX ".ib"

/* Buffered records reach the file at least this often (seconds). */
#define CAPTURE_FLUSH_INTERVAL 1.0

enum capture_dir {
	CAPTURE_RX, /* from the peer 'addr' to port 'p' */
	CAPTURE_TX, /* from port 'p' to the peer 'addr' */
};

struct capture_stats {
	uint64_t records; /* written (buffered or on disk) */
	uint64_t dropped; /* not written: file not open or failed earlier */
	uint64_t frame_errors; /* no frame could be built from the address */
	uint64_t write_errors; /* open, write or flush failures */
};

struct capture;

/*
 * Start capturing into 'path' (and path CAPTURE_IB_SUFFIX, see above) for
 * ports with IB ('ib') and/or RoCE ('roce') link layers; the files are
 * created (truncated) now. Returns NULL only without memory; a file that
 * cannot be created is logged and counted, and capture_mad() drops its
 * records.
 */
struct capture *capture_new(struct ev_loop *loop, const char *path, bool ib,
			    bool roce);

/*
 * Write one MAD of 'len' bytes (CM_MAD_SIZE) that crossed port 'p' in
 * direction 'dir'; 'addr' is the peer as the engine addresses it.
 * Timestamped with CLOCK_REALTIME. Never fails; see struct capture_stats.
 */
void capture_mad(struct capture *cap, enum capture_dir dir,
		 const struct xport_port *p, const struct eng_addr *addr,
		 const uint8_t *mad, size_t len);

/* Push buffered records to the files (the timer does so every second). */
void capture_flush(struct capture *cap);

const struct capture_stats *capture_stats(const struct capture *cap);
/* The first failure to create or write a file as -errno, or 0. */
int capture_error(const struct capture *cap);

/* Flush, close the files and free; NULL is a no-op. */
void capture_free(struct capture *cap);

#endif
