// SPDX-License-Identifier: MIT
/*
 * MAD capture: the files behind cmd --pcap. See capture.h for what goes
 * where; proto/pcap.c for the bytes of each record.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "log.h"
#include "pcap.h"
#include "util.h"

/* stdio buffer per file: some 170 records between flushes. */
#define CAPTURE_BUF_SIZE 65536

struct capture_file {
	FILE *f; /* NULL: not in use, or failed */
	bool dirty; /* records since the last flush */
	uint32_t linktype;
	char path[PATH_MAX];
	char *buf; /* setvbuf's buffer */
};

struct capture {
	struct ev_loop *loop;
	ev_timer flush_timer;
	struct capture_file ib;
	struct capture_file roce;
	struct capture_stats stats;
	bool write_error_logged;
	bool frame_error_logged;
	int first_errno;
};

/*
 * The first failure of any file is logged; later ones are only counted,
 * so a full disk does not flood the journal. A file that failed is closed
 * for good: a record cut short in the middle would make every later
 * record unreadable.
 */
static void capture_fail(struct capture *cap, struct capture_file *cf,
			 const char *what, int err)
{
	cap->stats.write_errors++;
	if (!cap->first_errno)
		cap->first_errno = err;
	if (!cap->write_error_logged) {
		log_err("capture: %s %s: %s; capture stops for this file, "
			"further errors are only counted",
			what, cf->path, strerror(err));
		cap->write_error_logged = true;
	}
	if (cf->f) {
		fclose(cf->f);
		cf->f = NULL;
	}
}

static void capture_file_open(struct capture *cap, struct capture_file *cf,
			      const char *path, const char *suffix,
			      uint32_t linktype)
{
	uint8_t hdr[PCAP_FILE_HDR_SIZE];
	int fd;

	cf->linktype = linktype;
	if ((size_t)snprintf(cf->path, sizeof(cf->path), "%s%s", path,
			     suffix) >= sizeof(cf->path)) {
		capture_fail(cap, cf, "path too long:", ENAMETOOLONG);
		return;
	}
	/* A capture holds peers' addresses and private data: not for
	 * everyone to read. */
	fd = open(cf->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0) {
		capture_fail(cap, cf, "cannot create", errno);
		return;
	}
	cf->f = fdopen(fd, "w");
	if (!cf->f) {
		capture_fail(cap, cf, "cannot open", errno);
		close(fd);
		return;
	}
	cf->buf = malloc(CAPTURE_BUF_SIZE);
	if (cf->buf)
		setvbuf(cf->f, cf->buf, _IOFBF, CAPTURE_BUF_SIZE);
	if (pcap_file_header(hdr, sizeof(hdr), linktype) != sizeof(hdr) ||
	    fwrite(hdr, sizeof(hdr), 1, cf->f) != 1 || fflush(cf->f)) {
		capture_fail(cap, cf, "cannot write to", errno ? errno : EIO);
		return;
	}
	log_info("capture: CM MADs of %s ports to %s",
		 linktype == PCAP_LINKTYPE_ETHERNET ? "RoCE" : "IB", cf->path);
}

static void capture_file_flush(struct capture *cap, struct capture_file *cf)
{
	if (!cf->f || !cf->dirty)
		return;
	cf->dirty = false;
	if (fflush(cf->f))
		capture_fail(cap, cf, "cannot write to", errno);
}

static void capture_file_close(struct capture *cap, struct capture_file *cf)
{
	capture_file_flush(cap, cf);
	if (cf->f && fclose(cf->f))
		capture_fail(cap, cf, "cannot close", errno);
	cf->f = NULL;
	free(cf->buf);
	cf->buf = NULL;
}

static void capture_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	capture_flush(container_of(w, struct capture, flush_timer));
}

struct capture *capture_new(struct ev_loop *loop, const char *path, bool ib,
			    bool roce)
{
	struct capture *cap = calloc(1, sizeof(*cap));

	if (!cap)
		return NULL;
	cap->loop = loop;
	if (roce)
		capture_file_open(cap, &cap->roce, path, "",
				  PCAP_LINKTYPE_ETHERNET);
	if (ib)
		capture_file_open(cap, &cap->ib, path,
				  roce ? CAPTURE_IB_SUFFIX : "",
				  PCAP_LINKTYPE_USER0);
	ev_timer_init(&cap->flush_timer, capture_timer_cb,
		      CAPTURE_FLUSH_INTERVAL, CAPTURE_FLUSH_INTERVAL);
	ev_timer_start(loop, &cap->flush_timer);
	/* The flush timer alone must not keep the loop running. */
	ev_unref(loop);
	return cap;
}

/* The P_Key behind the engine's index; the default P_Key if unknown. */
static uint16_t capture_pkey(const struct xport_port *p, uint16_t index)
{
	if (index < p->pkey_tbl_len && index < XPORT_MAX_PKEYS &&
	    p->pkeys[index])
		return p->pkeys[index];
	return 0xffff;
}

/*
 * Rebuild the addressing of the packet from what the engine knows: the
 * port's own LID and GID on one side, the peer's on the other. The QPs
 * are the GSI's on both ends (IBTA 12.11: CM MADs go QP1 to QP1); the PSN
 * is unknown and written as 0.
 */
static void capture_addr(struct pcap_ib_addr *a, enum capture_dir dir,
			 const struct xport_port *p,
			 const struct eng_addr *peer)
{
	const struct xport_gid *mine = xport_pick_sgid(p, peer->gid);
	uint8_t local_gid[CM_GID_SIZE] = { 0 };

	if (mine)
		memcpy(local_gid, mine->raw, CM_GID_SIZE);
	memset(a, 0, sizeof(*a));
	a->grh = peer->grh;
	a->sl = peer->sl & 0xf;
	a->hop_limit = XPORT_DEFAULT_HOP_LIMIT;
	a->pkey = capture_pkey(p, peer->pkey_index);
	a->sqpn = PCAP_GSI_QPN;
	a->dqpn = PCAP_GSI_QPN;
	a->qkey = PCAP_GSI_QKEY;
	switch (dir) {
	case CAPTURE_RX:
		a->slid = peer->lid;
		a->dlid = p->lid;
		memcpy(a->sgid, peer->gid, CM_GID_SIZE);
		memcpy(a->dgid, local_gid, CM_GID_SIZE);
		break;
	case CAPTURE_TX:
		a->slid = p->lid;
		a->dlid = peer->lid;
		memcpy(a->sgid, local_gid, CM_GID_SIZE);
		memcpy(a->dgid, peer->gid, CM_GID_SIZE);
		break;
	}
}

void capture_mad(struct capture *cap, enum capture_dir dir,
		 const struct xport_port *p, const struct eng_addr *addr,
		 const uint8_t *mad, size_t len)
{
	uint8_t rec[PCAP_RECORD_MAX];
	struct capture_file *cf;
	struct pcap_ib_addr a;
	struct timespec ts;
	int n;

	if (!cap)
		return;
	if (!p || len != CM_MAD_SIZE) {
		cap->stats.frame_errors++;
		return;
	}
	cf = p->link == XPORT_LINK_ROCE ? &cap->roce : &cap->ib;
	if (!cf->f) {
		cap->stats.dropped++;
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	capture_addr(&a, dir, p, addr);
	if (p->link == XPORT_LINK_ROCE)
		n = pcap_roce_record(rec, sizeof(rec), &a, mad, &ts);
	else
		n = pcap_ib_record(rec, sizeof(rec), &a, mad, &ts);
	if (n < 0) {
		/* e.g. a RoCE peer with an IPv4 GID and no IPv4 GID here */
		cap->stats.frame_errors++;
		if (!cap->frame_error_logged) {
			log_warn("capture: %s port %u: cannot frame a MAD: %s "
				 "(counted from now on, not logged)",
				 p->dev, p->port_num, strerror(-n));
			cap->frame_error_logged = true;
		}
		return;
	}
	if (fwrite(rec, (size_t)n, 1, cf->f) != 1) {
		capture_fail(cap, cf, "cannot write to", errno ? errno : EIO);
		cap->stats.dropped++;
		return;
	}
	cf->dirty = true;
	cap->stats.records++;
}

void capture_flush(struct capture *cap)
{
	if (!cap)
		return;
	capture_file_flush(cap, &cap->ib);
	capture_file_flush(cap, &cap->roce);
}

const struct capture_stats *capture_stats(const struct capture *cap)
{
	return &cap->stats;
}

void capture_free(struct capture *cap)
{
	if (!cap)
		return;
	ev_ref(cap->loop);
	ev_timer_stop(cap->loop, &cap->flush_timer);
	capture_file_close(cap, &cap->ib);
	capture_file_close(cap, &cap->roce);
	log_info("capture: %llu MADs written, %llu dropped, %llu not framed, "
		 "%llu file errors",
		 (unsigned long long)cap->stats.records,
		 (unsigned long long)cap->stats.dropped,
		 (unsigned long long)cap->stats.frame_errors,
		 (unsigned long long)cap->stats.write_errors);
	free(cap);
}

int capture_error(const struct capture *cap)
{
	return cap && cap->first_errno ? -cap->first_errno : 0;
}
