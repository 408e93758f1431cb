/* SPDX-License-Identifier: MIT */
/*
 * MAD capture: classic pcap framing for CM MADs, so that Wireshark's
 * InfiniBand dissector decodes a capture down to the CM message fields.
 *
 * The daemon never sees the packet headers of the MADs it sends and
 * receives (umad hands it the MAD and an address handle), so these
 * functions rebuild a plausible wire packet around each MAD from that
 * address information, in one of two forms:
 *
 *   - LINKTYPE_INFINIBAND (247): LRH [GRH] BTH DETH MAD ICRC VCRC, as the
 *     packet would cross an IB link;
 *   - LINKTYPE_ETHERNET (1): Ethernet, IPv4 or IPv6, UDP to port 4791,
 *     BTH DETH MAD ICRC, as a RoCE v2 packet would cross Ethernet.
 *
 * A classic pcap file carries a single link type, so a capture of one port
 * uses one form; a daemon serving IB and RoCE ports at once needs one file
 * per form.
 *
 * Pure functions over bytes: no I/O, no allocation, no clock. Every
 * function writes a whole unit (file header or record) into the caller's
 * buffer and returns its length, or a negative errno and writes nothing:
 * -ENOSPC when the buffer is too small, -EINVAL for a field that does not
 * fit its wire width. Byte order and field placement are documented field
 * by field in pcap.c.
 */
#ifndef CMD_PROTO_PCAP_H
#define CMD_PROTO_PCAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "cm_mad.h"

/*
 * tcpdump.org link-layer header types. Wireshark (4.0 at least) cannot open
 * a LINKTYPE_INFINIBAND file: its wiretap maps no pcap link type to the
 * InfiniBand dissector. The same records under LINKTYPE_USER0 decode once
 * Wireshark is told that USER0 is "infiniband" (Preferences > Protocols >
 * DLT_USER, or tshark -o 'uat:user_dlts:"User 0 (DLT=147)","infiniband",
 * "0","","0",""'); pcap_file_header takes either.
 */
#define PCAP_LINKTYPE_ETHERNET 1
#define PCAP_LINKTYPE_USER0 147
#define PCAP_LINKTYPE_INFINIBAND 247

#define PCAP_FILE_HDR_SIZE 24
#define PCAP_REC_HDR_SIZE 16

/*
 * Frame sizes (without the 16-byte record header):
 *   IB without GRH: LRH 8 + BTH 12 + DETH 8 + MAD 256 + ICRC 4 + VCRC 2
 *   IB with GRH:    the same plus GRH 40
 *   RoCE v2/IPv4:   Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + DETH 8 + MAD 256
 *                   + ICRC 4 (no Ethernet FCS: LINKTYPE_ETHERNET omits it)
 *   RoCE v2/IPv6:   the same with IPv6 40 instead of IPv4 20
 */
#define PCAP_IB_LOCAL_FRAME_SIZE 290
#define PCAP_IB_GLOBAL_FRAME_SIZE 330
#define PCAP_ROCE_V4_FRAME_SIZE 322
#define PCAP_ROCE_V6_FRAME_SIZE 342
#define PCAP_RECORD_MAX (PCAP_REC_HDR_SIZE + PCAP_ROCE_V6_FRAME_SIZE)

/* The snapshot length written in the file header; every record fits. */
#define PCAP_SNAPLEN 65535

/* The well-known Q_Key and QP of the GSI (QP1), which carries the CM. */
#define PCAP_GSI_QKEY 0x80010000u
#define PCAP_GSI_QPN 1

/*
 * The addressing of one packet, as it crossed the wire: "source" is the
 * sender of this MAD (the peer for a received MAD, this port for a sent
 * one). The same struct serves both forms; each uses what it needs.
 */
struct pcap_ib_addr {
	uint16_t slid; /* IB form only */
	uint16_t dlid; /* IB form only */
	/*
	 * IB form: put a GRH after the LRH. The RoCE form always has the
	 * GIDs (as the IP addresses) and ignores this flag.
	 */
	bool grh;
	uint8_t sgid[CM_GID_SIZE];
	uint8_t dgid[CM_GID_SIZE];
	uint8_t sl; /* 4 bits; IB form only */
	uint8_t traffic_class; /* GRH TClass / IPv4 TOS / IPv6 Traffic Class */
	uint32_t flow_label; /* 20 bits */
	uint8_t hop_limit; /* GRH HopLmt / IPv4 TTL / IPv6 Hop Limit */
	uint16_t pkey;
	uint32_t sqpn; /* 24 bits; 1 for the GSI */
	uint32_t dqpn; /* 24 bits; 1 for the GSI */
	uint32_t qkey; /* PCAP_GSI_QKEY for the GSI */
	uint32_t psn; /* 24 bits; the sender's send PSN, 0 if unknown */
	uint8_t smac[6]; /* RoCE form only; zero when unknown */
	uint8_t dmac[6]; /* RoCE form only; zero when unknown */
};

/*
 * The 24-byte pcap file header for 'linktype', with the nanosecond magic.
 * Returns PCAP_FILE_HDR_SIZE or -ENOSPC.
 */
int pcap_file_header(uint8_t *buf, size_t size, uint32_t linktype);

/*
 * One record (16-byte record header and frame) for a file of link type
 * PCAP_LINKTYPE_INFINIBAND (or USER0, see above): LRH, GRH when a->grh, BTH, DETH, the MAD, ICRC
 * and VCRC. Returns the record length (PCAP_REC_HDR_SIZE plus
 * PCAP_IB_LOCAL_FRAME_SIZE or PCAP_IB_GLOBAL_FRAME_SIZE), -ENOSPC, or
 * -EINVAL when a field is too wide or ts->tv_nsec is out of range.
 */
int pcap_ib_record(uint8_t *buf, size_t size, const struct pcap_ib_addr *a,
		   const uint8_t mad[CM_MAD_SIZE], const struct timespec *ts);

/*
 * One record for a file of link type PCAP_LINKTYPE_ETHERNET: a RoCE v2
 * packet. IPv4 when both GIDs are IPv4-mapped (::ffff:a.b.c.d), IPv6 when
 * neither is; -EINVAL when only one is. Returns the record length
 * (PCAP_REC_HDR_SIZE plus PCAP_ROCE_V4_FRAME_SIZE or
 * PCAP_ROCE_V6_FRAME_SIZE), -ENOSPC or -EINVAL.
 */
int pcap_roce_record(uint8_t *buf, size_t size, const struct pcap_ib_addr *a,
		     const uint8_t mad[CM_MAD_SIZE], const struct timespec *ts);

/*
 * The two CRCs of IBTA 7.8, exposed for the tests. Both are reflected
 * (bit 0 of each byte first, as the link serialises it), start from all
 * ones and return the complemented remainder; pass 0 as 'crc' to start,
 * or a previous result to continue over more bytes.
 *   pcap_crc32: ICRC, polynomial 0x04C11DB7 (the Ethernet CRC-32);
 *   pcap_crc16: VCRC, polynomial 0x100B.
 */
uint32_t pcap_crc32(uint32_t crc, const uint8_t *p, size_t len);
uint16_t pcap_crc16(uint16_t crc, const uint8_t *p, size_t len);

/*
 * Reading captures back (cmmad decode, tests): the classic pcap format in
 * either byte order, with microsecond (0xA1B2C3D4) or nanosecond
 * (0xA1B23C4D) stamps, and the frames of the link types above.
 */
struct pcap_reader {
	bool swap; /* the file's byte order is not little-endian */
	bool nsec; /* stamps are in nanoseconds (else microseconds) */
	uint16_t version_major, version_minor;
	uint32_t snaplen;
	uint32_t linktype; /* the link type, FCS bits (28..31) removed */
};

struct pcap_record {
	uint32_t ts_sec;
	uint32_t ts_nsec; /* nanoseconds, whatever the file's resolution */
	uint32_t caplen; /* bytes of the frame in the file */
	uint32_t origlen; /* bytes of the frame on the wire */
	const uint8_t *frame; /* caplen bytes, inside the caller's buffer */
};

/* True when the first four bytes are a pcap magic (any order or unit). */
bool pcap_is_pcap(const uint8_t *buf, size_t len);

/*
 * Parse the 24-byte file header. Returns 0; -EBADMSG for a magic that is
 * not pcap's; -ENODATA when len < PCAP_FILE_HDR_SIZE; -EPROTONOSUPPORT
 * for a link type none of the frame readers below knows (r->linktype is
 * set, for the message).
 */
int pcap_read_file_header(struct pcap_reader *r, const uint8_t *buf,
			  size_t len);

/*
 * Parse the record at buf (len bytes left in the file). Returns the bytes
 * it takes (header and frame); -ENODATA when len is shorter than its
 * header or its captured length; -EMSGSIZE when its captured length
 * exceeds the file's snapshot length or its original length; -EINVAL for
 * a stamp's fraction of a second out of range.
 */
int pcap_read_record(const struct pcap_reader *r, const uint8_t *buf,
		     size_t len, struct pcap_record *rec);

/*
 * Find the MAD of a GSI (QP1) UD packet in a frame of 'linktype': the IB
 * form (USER0 or INFINIBAND: LRH [GRH] BTH DETH) or RoCE v2 (Ethernet
 * [802.1Q] IPv4/IPv6, UDP port 4791, BTH DETH). Returns 0 and *mad when
 * the frame holds all CM_MAD_SIZE bytes of it; -ENODATA for a frame cut
 * short; -ENOMSG for a frame that carries no MAD (another protocol, not
 * UD SEND Only, not QP1); -EPROTONOSUPPORT for an unknown link type.
 */
int pcap_frame_mad(uint32_t linktype, const uint8_t *frame, size_t len,
		   const uint8_t **mad);

#endif
