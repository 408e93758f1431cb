// SPDX-License-Identifier: MIT
/*
 * MAD capture framing: see pcap.h.
 *
 * Wire headers are big-endian (network order) as IBTA and the RFCs print
 * them; the pcap file and record headers are written little-endian whatever
 * the host, so that a capture's bytes do not depend on the machine that
 * wrote it (readers learn the order from the magic number). The CRCs are
 * stored least significant byte first, the order in which the link sends
 * the bits of a reflected CRC (as Ethernet does its FCS).
 */
#include <errno.h>
#include <string.h>

#include "pcap.h"
#include "rdmacm.h"

/*
 * Classic pcap (tcpdump.org "pcap savefile format"). The nanosecond magic
 * 0xA1B23C4D is chosen over the microsecond 0xA1B2C3D4: the daemon reads
 * CLOCK_REALTIME in nanoseconds anyway, and a MAD received and the answer
 * sent back within the same microsecond keep their order and spacing.
 * libpcap >= 1.5, tcpdump and Wireshark/tshark read it.
 */
#define PCAP_MAGIC_NSEC 0xA1B23C4Du
#define PCAP_VERSION_MAJOR 2
#define PCAP_VERSION_MINOR 4

#define LRH_SIZE 8
#define GRH_SIZE 40
#define BTH_SIZE 12
#define DETH_SIZE 8
#define ICRC_SIZE 4
#define VCRC_SIZE 2
#define ETH_SIZE 14
#define IPV4_SIZE 20
#define IPV6_SIZE 40
#define UDP_SIZE 8

/* IBTA 7.7: Link Next Header values. */
#define LRH_LNH_IBA_LOCAL 0x2 /* BTH follows */
#define LRH_LNH_IBA_GLOBAL 0x3 /* GRH follows */

/* IBTA 8.3: GRH IPVer is 6; NxtHdr 0x1B says an IBA transport follows. */
#define GRH_IPVER 6
#define GRH_NXTHDR_IBA 0x1B

/* IBTA 9.2 (OpCode): UD (prefix 011) SEND Only (00100). */
#define BTH_OPCODE_UD_SEND_ONLY 0x64

/* IBTA Annex A17 (RoCE v2): the IANA-assigned destination port. */
#define ROCEV2_UDP_PORT 4791
/* Source ports for RoCE v2 come from the dynamic range, RFC 6335. */
#define ROCEV2_SPORT_MIN 0xC000

#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_IPV6 0x86DD
#define IPPROTO_UDP_NUM 17
#define IPV4_FLAG_DF 0x4000

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	put24(p + 1, v);
}

static void put16le(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32le(uint8_t *p, uint32_t v)
{
	put16le(p, (uint16_t)v);
	put16le(p + 2, (uint16_t)(v >> 16));
}

/*
 * Reflected CRCs, bit by bit rather than table driven: a capture CRCs a few
 * hundred bytes per MAD, and no table means no state to initialise.
 * 0xEDB88320 and 0xD008 are the polynomials 0x04C11DB7 and 0x100B with
 * their bits reversed.
 */
uint32_t pcap_crc32(uint32_t crc, const uint8_t *p, size_t len)
{
	uint32_t c = ~crc;

	while (len--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0xEDB88320u : c >> 1;
	}
	return ~c;
}

uint16_t pcap_crc16(uint16_t crc, const uint8_t *p, size_t len)
{
	uint16_t c = (uint16_t)~crc;

	while (len--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (uint16_t)((c >> 1) ^ 0xD008u) : c >> 1;
	}
	return (uint16_t)~c;
}

int pcap_file_header(uint8_t *buf, size_t size, uint32_t linktype)
{
	if (size < PCAP_FILE_HDR_SIZE)
		return -ENOSPC;
	put32le(buf + 0, PCAP_MAGIC_NSEC);
	put16le(buf + 4, PCAP_VERSION_MAJOR);
	put16le(buf + 6, PCAP_VERSION_MINOR);
	put32le(buf + 8, 0); /* thiszone: timestamps are UTC */
	put32le(buf + 12, 0); /* sigfigs: always 0 */
	put32le(buf + 16, PCAP_SNAPLEN);
	put32le(buf + 20, linktype); /* FCS bits (28..31) clear: no FCS */
	return PCAP_FILE_HDR_SIZE;
}

static int check_ts(const struct timespec *ts)
{
	/* pcap's ts_sec is unsigned 32 bits: enough until 2106. */
	if (ts->tv_sec < 0 || (unsigned long long)ts->tv_sec > UINT32_MAX)
		return -EINVAL;
	if (ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000L)
		return -EINVAL;
	return 0;
}

/* Record header: ts_sec, ts_nsec, captured length, original length. */
static void rec_hdr(uint8_t *p, const struct timespec *ts, size_t len)
{
	put32le(p + 0, (uint32_t)ts->tv_sec);
	put32le(p + 4, (uint32_t)ts->tv_nsec);
	put32le(p + 8, (uint32_t)len);
	put32le(p + 12, (uint32_t)len);
}

static int check_addr(const struct pcap_ib_addr *a)
{
	if (a->sl > 0xF || a->flow_label > 0xFFFFF || a->sqpn > 0xFFFFFF ||
	    a->dqpn > 0xFFFFFF || a->psn > 0xFFFFFF)
		return -EINVAL;
	return 0;
}

/* Check the address and time, then write the record header of a frame
 * of frame_len bytes: 0, -EINVAL, or -ENOSPC when buf is too small. */
static int rec_begin(uint8_t *buf, size_t size, const struct pcap_ib_addr *a,
		     const struct timespec *ts, size_t frame_len)
{
	int err = check_addr(a);

	if (!err)
		err = check_ts(ts);
	if (err)
		return err;
	if (size < PCAP_REC_HDR_SIZE + frame_len)
		return -ENOSPC;
	rec_hdr(buf, ts, frame_len);
	return 0;
}

/*
 * IBTA 7.7: Local Route Header.
 *   byte 0: VL (4) | LVer (4). VL 0: the VL is chosen per hop from the SL
 *           and is variant (7.8), so a capture cannot know it; LVer 0.
 *   byte 1: SL (4) | reserved (2) | LNH (2).
 *   2..3:   DLID.
 *   4..5:   reserved (5) | PktLen (11): the packet in 4-byte words from
 *           the first byte of the LRH to the last byte of the ICRC, the
 *           VCRC excluded.
 *   6..7:   SLID.
 */
static void lrh_write(uint8_t *p, const struct pcap_ib_addr *a, uint8_t lnh,
		      size_t pktlen)
{
	p[0] = 0x00;
	p[1] = (uint8_t)(a->sl << 4 | lnh);
	put16(p + 2, a->dlid);
	put16(p + 4, (uint16_t)(pktlen / 4));
	put16(p + 6, a->slid);
}

/*
 * IBTA 8.3: Global Route Header.
 *   0..3:   IPVer (4) = 6 | TClass (8) | FlowLabel (20).
 *   4..5:   PayLen: bytes after the GRH up to and including the ICRC.
 *   6:      NxtHdr = 0x1B, an IBA transport header follows.
 *   7:      HopLmt.
 *   8..23:  SGID; 24..39: DGID.
 */
static void grh_write(uint8_t *p, const struct pcap_ib_addr *a, size_t paylen)
{
	put32(p, (uint32_t)GRH_IPVER << 28 | (uint32_t)a->traffic_class << 20 |
			 a->flow_label);
	put16(p + 4, (uint16_t)paylen);
	p[6] = GRH_NXTHDR_IBA;
	p[7] = a->hop_limit;
	memcpy(p + 8, a->sgid, CM_GID_SIZE);
	memcpy(p + 24, a->dgid, CM_GID_SIZE);
}

/*
 * IBTA 9.2: Base Transport Header.
 *   0:      OpCode = 0x64, UD SEND Only: a MAD is always one packet.
 *   1:      SE (1) 0 | M (1) 0 | PadCnt (2) 0 | TVer (4) 0. No solicited
 *           event and no path migration on QP1; PadCnt 0 because a MAD
 *           is 256 bytes, a multiple of 4; TVer 0, the only transport
 *           header version.
 *   2..3:   P_Key.
 *   4:      reserved (Resv8a), 0; variant, masked for the ICRC.
 *   5..7:   DestQP.
 *   8:      A (1) 0 | reserved (7) 0: UD is never acknowledged.
 *   9..11:  PSN.
 */
static void bth_write(uint8_t *p, const struct pcap_ib_addr *a)
{
	p[0] = BTH_OPCODE_UD_SEND_ONLY;
	p[1] = 0x00;
	put16(p + 2, a->pkey);
	p[4] = 0x00;
	put24(p + 5, a->dqpn);
	p[8] = 0x00;
	put24(p + 9, a->psn);
}

/*
 * IBTA 9.3: Datagram Extended Transport Header.
 *   0..3:   Q_Key; 4: reserved, 0; 5..7: SrcQP.
 */
static void deth_write(uint8_t *p, const struct pcap_ib_addr *a)
{
	put32(p, a->qkey);
	p[4] = 0x00;
	put24(p + 5, a->sqpn);
}

/*
 * IBTA 7.8: the ICRC covers the packet from the first byte of the LRH to
 * the last byte of the payload, with the fields a switch or router may
 * change replaced by ones:
 *   - always: LRH VL and BTH Resv8a;
 *   - with a GRH: the whole LRH (a router rewrites it), and GRH TClass,
 *     FlowLabel and HopLmt.
 * 'hdr' points at the LRH, 'hdr_len' covers LRH [GRH] BTH; the rest (DETH
 * and MAD) is not variant and is summed in place.
 */
static uint32_t ib_icrc(const uint8_t *hdr, size_t hdr_len, bool grh,
			size_t rest_len)
{
	uint8_t m[LRH_SIZE + GRH_SIZE + BTH_SIZE];
	uint8_t *bth = m + hdr_len - BTH_SIZE;

	memcpy(m, hdr, hdr_len);
	if (grh) {
		memset(m, 0xFF, LRH_SIZE);
		m[LRH_SIZE + 0] |= 0x0F; /* TClass, high nibble */
		memset(m + LRH_SIZE + 1, 0xFF, 3); /* TClass low, FlowLabel */
		m[LRH_SIZE + 7] = 0xFF; /* HopLmt */
	} else {
		m[0] |= 0xF0; /* VL */
	}
	bth[4] = 0xFF; /* Resv8a */
	return pcap_crc32(pcap_crc32(0, m, hdr_len), hdr + hdr_len, rest_len);
}

int pcap_ib_record(uint8_t *buf, size_t size, const struct pcap_ib_addr *a,
		   const uint8_t mad[CM_MAD_SIZE], const struct timespec *ts)
{
	size_t hdr_len = LRH_SIZE + (a->grh ? GRH_SIZE : 0) + BTH_SIZE;
	size_t icrc_off = hdr_len + DETH_SIZE + CM_MAD_SIZE;
	size_t frame_len = icrc_off + ICRC_SIZE + VCRC_SIZE;
	uint8_t *f = buf + PCAP_REC_HDR_SIZE;
	int err;

	err = rec_begin(buf, size, a, ts, frame_len);
	if (err)
		return err;
	lrh_write(f, a, a->grh ? LRH_LNH_IBA_GLOBAL : LRH_LNH_IBA_LOCAL,
		  icrc_off + ICRC_SIZE);
	if (a->grh)
		grh_write(f + LRH_SIZE, a,
			  icrc_off + ICRC_SIZE - LRH_SIZE - GRH_SIZE);
	bth_write(f + hdr_len - BTH_SIZE, a);
	deth_write(f + hdr_len, a);
	memcpy(f + hdr_len + DETH_SIZE, mad, CM_MAD_SIZE);
	put32le(f + icrc_off,
		ib_icrc(f, hdr_len, a->grh, DETH_SIZE + CM_MAD_SIZE));
	/* IBTA 7.8: the VCRC covers everything before it, unmasked. */
	put16le(f + icrc_off + ICRC_SIZE,
		pcap_crc16(0, f, icrc_off + ICRC_SIZE));
	return (int)(PCAP_REC_HDR_SIZE + frame_len);
}

/*
 * RFC 1071: the Internet checksum is the one's complement of the one's
 * complement sum of 16-bit words. csum_add sums a run of bytes (a trailing
 * odd byte is padded with zero, so only the last run may be odd);
 * csum_fold folds the carries and complements.
 */
static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return (uint16_t)~sum;
}

/*
 * RFC 791 section 3.1: IPv4 header, no options.
 *   0: Version 4 | IHL 5; 1: TOS = traffic class (DSCP and ECN, RFC 2474,
 *   RFC 3168); 2..3: Total Length; 4..5: Identification 0, meaningless with
 *   DF set (RFC 6864); 6..7: flags DF, fragment offset 0 (RoCE v2 is never
 *   fragmented); 8: TTL = hop limit; 9: Protocol 17 (UDP); 10..11: header
 *   checksum (RFC 1071); 12..15: source, 16..19: destination, the last
 *   four bytes of the IPv4-mapped GIDs (RFC 4291 section 2.5.5.2).
 */
static void ipv4_write(uint8_t *p, const struct pcap_ib_addr *a,
		       size_t total_len)
{
	p[0] = 0x45;
	p[1] = a->traffic_class;
	put16(p + 2, (uint16_t)total_len);
	put16(p + 4, 0);
	put16(p + 6, IPV4_FLAG_DF);
	p[8] = a->hop_limit;
	p[9] = IPPROTO_UDP_NUM;
	put16(p + 10, 0);
	memcpy(p + 12, a->sgid + 12, 4);
	memcpy(p + 16, a->dgid + 12, 4);
	put16(p + 10, csum_fold(csum_add(0, p, IPV4_SIZE)));
}

/*
 * RFC 8200 section 3: IPv6 header.
 *   0..3: Version 6 | Traffic Class (8) | Flow Label (20); 4..5: Payload
 *   Length; 6: Next Header 17 (UDP); 7: Hop Limit; 8..23: source = SGID,
 *   24..39: destination = DGID. The GRH and the IPv6 header share their
 *   layout (IBTA 8.3), which is what lets RoCE v2 carry GIDs as addresses.
 */
static void ipv6_write(uint8_t *p, const struct pcap_ib_addr *a,
		       size_t payload_len)
{
	put32(p, 6u << 28 | (uint32_t)a->traffic_class << 20 | a->flow_label);
	put16(p + 4, (uint16_t)payload_len);
	p[6] = IPPROTO_UDP_NUM;
	p[7] = a->hop_limit;
	memcpy(p + 8, a->sgid, CM_GID_SIZE);
	memcpy(p + 24, a->dgid, CM_GID_SIZE);
}

/*
 * The UDP source port. IBTA Annex A17 leaves it to the sender, asking only
 * that one flow keep one port so that ECMP keeps it on one path; like
 * Linux, fold the 20-bit flow label into 14 bits on top of the dynamic
 * range. Flow label 0 gives 0xC000.
 */
static uint16_t rocev2_sport(uint32_t flow_label)
{
	return (uint16_t)(ROCEV2_SPORT_MIN |
			  ((flow_label & 0x3FFF) ^ (flow_label >> 14)));
}

/*
 * RFC 768: UDP header. 0..1: source port; 2..3: destination port 4791;
 * 4..5: Length (header and payload); 6..7: checksum, 0 here and filled in
 * by udp6_csum for IPv6.
 */
static void udp_write(uint8_t *p, const struct pcap_ib_addr *a, size_t len)
{
	put16(p, rocev2_sport(a->flow_label));
	put16(p + 2, ROCEV2_UDP_PORT);
	put16(p + 4, (uint16_t)len);
	put16(p + 6, 0);
}

/*
 * The UDP checksum over IPv6 (RFC 8200 section 8.1): the pseudo-header of
 * source and destination address, upper-layer length and next header 17,
 * then the UDP header and payload; a result of 0 is sent as 0xFFFF.
 *
 * RoCE v2 NICs send a zero UDP checksum and rely on the ICRC (IBTA Annex
 * A17). Over IPv4 zero means "no checksum" (RFC 768) and stays; over IPv6
 * it is only allowed to tunnels that opt in (RFC 6935, RFC 6936), and
 * Wireshark reports it as an error, so the IPv6 form carries the real
 * checksum. The ICRC masks the checksum field, so it is unaffected.
 */
static uint16_t udp6_csum(const uint8_t *ip6, size_t udp_len)
{
	uint8_t tail[8] = { 0 };
	uint32_t sum;

	put32(tail, (uint32_t)udp_len);
	tail[7] = IPPROTO_UDP_NUM;
	sum = csum_add(0, ip6 + 8, 2 * CM_GID_SIZE);
	sum = csum_add(sum, tail, sizeof(tail));
	sum = csum_add(sum, ip6 + IPV6_SIZE, udp_len);
	return csum_fold(sum) ?: 0xFFFF;
}

/*
 * IBTA Annex A17: the RoCE v2 ICRC is the IB ICRC of a global packet
 * with the IP and UDP headers in place of the GRH: 8 bytes of ones stand
 * for the LRH, then the IP header with its variant fields as ones (IPv4:
 * TOS, TTL, header checksum; IPv6: Traffic Class, Flow Label, Hop Limit),
 * the UDP header with its checksum as ones, the BTH with Resv8a as ones,
 * and the rest of the packet. 'ip' points at the IP header and 'hdr_len'
 * covers IP, UDP and BTH.
 */
static uint32_t roce_icrc(const uint8_t *ip, size_t hdr_len, bool v4,
			  size_t rest_len)
{
	uint8_t m[LRH_SIZE + IPV6_SIZE + UDP_SIZE + BTH_SIZE];
	uint8_t *ip_m = m + LRH_SIZE;
	size_t ip_len = v4 ? IPV4_SIZE : IPV6_SIZE;

	memset(m, 0xFF, LRH_SIZE);
	memcpy(ip_m, ip, hdr_len);
	if (v4) {
		ip_m[1] = 0xFF; /* TOS */
		ip_m[8] = 0xFF; /* TTL */
		ip_m[10] = ip_m[11] = 0xFF; /* header checksum */
	} else {
		ip_m[0] |= 0x0F; /* Traffic Class, high nibble */
		memset(ip_m + 1, 0xFF, 3); /* Traffic Class low, Flow Label */
		ip_m[7] = 0xFF; /* Hop Limit */
	}
	ip_m[ip_len + 6] = ip_m[ip_len + 7] = 0xFF; /* UDP checksum */
	ip_m[ip_len + UDP_SIZE + 4] = 0xFF; /* BTH Resv8a */
	return pcap_crc32(pcap_crc32(0, m, LRH_SIZE + hdr_len), ip + hdr_len,
			  rest_len);
}

int pcap_roce_record(uint8_t *buf, size_t size, const struct pcap_ib_addr *a,
		     const uint8_t mad[CM_MAD_SIZE], const struct timespec *ts)
{
	bool v4 = rdmacm_gid_is_v4(a->sgid);
	size_t ip_len = v4 ? IPV4_SIZE : IPV6_SIZE;
	size_t udp_len =
		UDP_SIZE + BTH_SIZE + DETH_SIZE + CM_MAD_SIZE + ICRC_SIZE;
	size_t frame_len = ETH_SIZE + ip_len + udp_len;
	uint8_t *f = buf + PCAP_REC_HDR_SIZE;
	uint8_t *ip = f + ETH_SIZE;
	uint8_t *bth = ip + ip_len + UDP_SIZE;
	int err;

	if (v4 != rdmacm_gid_is_v4(a->dgid))
		return -EINVAL;
	err = rec_begin(buf, size, a, ts, frame_len);
	if (err)
		return err;
	/* IEEE 802.3 clause 3.2 (Ethernet II): DA, SA, EtherType. */
	memcpy(f, a->dmac, 6);
	memcpy(f + 6, a->smac, 6);
	put16(f + 12, v4 ? ETHERTYPE_IPV4 : ETHERTYPE_IPV6);
	if (v4)
		ipv4_write(ip, a, IPV4_SIZE + udp_len);
	else
		ipv6_write(ip, a, udp_len);
	udp_write(ip + ip_len, a, udp_len);
	bth_write(bth, a);
	deth_write(bth + BTH_SIZE, a);
	memcpy(bth + BTH_SIZE + DETH_SIZE, mad, CM_MAD_SIZE);
	put32le(bth + BTH_SIZE + DETH_SIZE + CM_MAD_SIZE,
		roce_icrc(ip, ip_len + UDP_SIZE + BTH_SIZE, v4,
			  DETH_SIZE + CM_MAD_SIZE));
	if (!v4)
		put16(ip + ip_len + 6, udp6_csum(ip, udp_len));
	return (int)(PCAP_REC_HDR_SIZE + frame_len);
}

/* ---- reading ---- */

#define PCAP_MAGIC_USEC 0xA1B2C3D4u
#define PCAP_LINKTYPE_MASK 0x0FFFFFFFu /* bits 28..31: FCS length */
#define ETHERTYPE_VLAN 0x8100
#define VLAN_SIZE 4

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static uint32_t get32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint32_t rd32(const struct pcap_reader *r, const uint8_t *p)
{
	uint32_t v = get32le(p);

	return r->swap ? __builtin_bswap32(v) : v;
}

static uint16_t rd16(const struct pcap_reader *r, const uint8_t *p)
{
	return r->swap ? get16(p) : (uint16_t)(p[0] | p[1] << 8);
}

bool pcap_is_pcap(const uint8_t *buf, size_t len)
{
	uint32_t m;

	if (len < 4)
		return false;
	m = get32le(buf);
	return m == PCAP_MAGIC_NSEC || m == PCAP_MAGIC_USEC ||
	       m == __builtin_bswap32(PCAP_MAGIC_NSEC) ||
	       m == __builtin_bswap32(PCAP_MAGIC_USEC);
}

int pcap_read_file_header(struct pcap_reader *r, const uint8_t *buf, size_t len)
{
	uint32_t m;

	memset(r, 0, sizeof(*r));
	if (len < 4)
		return -ENODATA;
	if (!pcap_is_pcap(buf, len))
		return -EBADMSG;
	m = get32le(buf);
	r->swap = m == __builtin_bswap32(PCAP_MAGIC_NSEC) ||
		  m == __builtin_bswap32(PCAP_MAGIC_USEC);
	r->nsec =
		m == PCAP_MAGIC_NSEC || m == __builtin_bswap32(PCAP_MAGIC_NSEC);
	if (len < PCAP_FILE_HDR_SIZE)
		return -ENODATA;
	r->version_major = rd16(r, buf + 4);
	r->version_minor = rd16(r, buf + 6);
	r->snaplen = rd32(r, buf + 16);
	r->linktype = rd32(r, buf + 20) & PCAP_LINKTYPE_MASK;
	switch (r->linktype) {
	case PCAP_LINKTYPE_ETHERNET:
	case PCAP_LINKTYPE_USER0:
	case PCAP_LINKTYPE_INFINIBAND:
		return 0;
	default:
		return -EPROTONOSUPPORT;
	}
}

int pcap_read_record(const struct pcap_reader *r, const uint8_t *buf,
		     size_t len, struct pcap_record *rec)
{
	if (len < PCAP_REC_HDR_SIZE)
		return -ENODATA;
	rec->ts_sec = rd32(r, buf + 0);
	rec->ts_nsec = rd32(r, buf + 4);
	rec->caplen = rd32(r, buf + 8);
	rec->origlen = rd32(r, buf + 12);
	rec->frame = buf + PCAP_REC_HDR_SIZE;
	if (rec->ts_nsec >= (r->nsec ? 1000000000u : 1000000u))
		return -EINVAL;
	if (!r->nsec)
		rec->ts_nsec *= 1000;
	if (rec->caplen > r->snaplen || rec->caplen > rec->origlen)
		return -EMSGSIZE;
	if (len - PCAP_REC_HDR_SIZE < rec->caplen)
		return -ENODATA;
	return (int)(PCAP_REC_HDR_SIZE + rec->caplen);
}

/* BTH (UD SEND Only to QP1) and DETH at p, then the MAD. */
static int bth_mad(const uint8_t *p, size_t len, const uint8_t **mad)
{
	if (len < BTH_SIZE)
		return -ENODATA;
	if (p[0] != BTH_OPCODE_UD_SEND_ONLY || get24(p + 5) != PCAP_GSI_QPN)
		return -ENOMSG;
	if (len < BTH_SIZE + DETH_SIZE + CM_MAD_SIZE)
		return -ENODATA;
	*mad = p + BTH_SIZE + DETH_SIZE;
	return 0;
}

static int ib_frame_mad(const uint8_t *f, size_t len, const uint8_t **mad)
{
	size_t off = LRH_SIZE;

	if (len < LRH_SIZE)
		return -ENODATA;
	switch (f[1] & 0x3) {
	case LRH_LNH_IBA_LOCAL:
		break;
	case LRH_LNH_IBA_GLOBAL:
		if (len < LRH_SIZE + GRH_SIZE)
			return -ENODATA;
		if (f[LRH_SIZE + 6] != GRH_NXTHDR_IBA)
			return -ENOMSG;
		off += GRH_SIZE;
		break;
	default: /* raw packets */
		return -ENOMSG;
	}
	return bth_mad(f + off, len - off, mad);
}

static int roce_frame_mad(const uint8_t *f, size_t len, const uint8_t **mad)
{
	size_t off = ETH_SIZE;
	uint16_t type;

	if (len < ETH_SIZE)
		return -ENODATA;
	type = get16(f + 12);
	if (type == ETHERTYPE_VLAN) {
		if (len < ETH_SIZE + VLAN_SIZE)
			return -ENODATA;
		type = get16(f + 16);
		off += VLAN_SIZE;
	}
	if (type == ETHERTYPE_IPV4) {
		size_t ihl;

		if (len < off + IPV4_SIZE)
			return -ENODATA;
		ihl = (size_t)(f[off] & 0xF) * 4;
		if (f[off] >> 4 != 4 || ihl < IPV4_SIZE ||
		    f[off + 9] != IPPROTO_UDP_NUM ||
		    (get16(f + off + 6) & 0x3FFF)) /* MF or an offset */
			return -ENOMSG;
		off += ihl;
	} else if (type == ETHERTYPE_IPV6) {
		if (len < off + IPV6_SIZE)
			return -ENODATA;
		if (f[off] >> 4 != 6 || f[off + 6] != IPPROTO_UDP_NUM)
			return -ENOMSG; /* extension headers: not RoCE v2 */
		off += IPV6_SIZE;
	} else {
		return -ENOMSG;
	}
	if (len < off + UDP_SIZE)
		return -ENODATA;
	if (get16(f + off + 2) != ROCEV2_UDP_PORT)
		return -ENOMSG;
	off += UDP_SIZE;
	return bth_mad(f + off, len - off, mad);
}

int pcap_frame_mad(uint32_t linktype, const uint8_t *frame, size_t len,
		   const uint8_t **mad)
{
	switch (linktype & PCAP_LINKTYPE_MASK) {
	case PCAP_LINKTYPE_USER0:
	case PCAP_LINKTYPE_INFINIBAND:
		return ib_frame_mad(frame, len, mad);
	case PCAP_LINKTYPE_ETHERNET:
		return roce_frame_mad(frame, len, mad);
	default:
		return -EPROTONOSUPPORT;
	}
}
