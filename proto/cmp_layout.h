/* SPDX-License-Identifier: MIT */
/*
 * The client protocol's wire layout, pinned at compile time: the size of
 * every struct in cmp.h and the offsets where a mistake would be easy or
 * costly. A change here is a change of the protocol (a new version, see
 * cmp.h "Versions"). Included once, by cmp.c.
 */
#ifndef CMD_CMP_LAYOUT_H
#define CMD_CMP_LAYOUT_H

#include <stddef.h>

#include "cmp.h"

#define CMP_ASSERT_SIZE(type, size)                                            \
	_Static_assert(sizeof(struct type) == (size), #type " size")
#define CMP_ASSERT_OFF(type, member, off)                                      \
	_Static_assert(offsetof(struct type, member) == (off),                 \
		       #type "." #member " offset")

CMP_ASSERT_SIZE(cmp_hdr, 16);
CMP_ASSERT_OFF(cmp_hdr, version, 0);
CMP_ASSERT_OFF(cmp_hdr, type, 2);
CMP_ASSERT_OFF(cmp_hdr, length, 4);
CMP_ASSERT_OFF(cmp_hdr, seq, 8);
CMP_ASSERT_OFF(cmp_hdr, flags, 12);
CMP_ASSERT_OFF(cmp_hdr, rsvd0, 14);

CMP_ASSERT_SIZE(cmp_path, 120);
CMP_ASSERT_OFF(cmp_path, port_num, 12);
CMP_ASSERT_OFF(cmp_path, packet_life_time, 21);
CMP_ASSERT_OFF(cmp_path, local_gid, 24);
CMP_ASSERT_OFF(cmp_path, remote_gid, 40);
CMP_ASSERT_OFF(cmp_path, dev_name, 56);
CMP_ASSERT_SIZE(cmp_port_sel, 88);
CMP_ASSERT_OFF(cmp_port_sel, gid, 8);
CMP_ASSERT_OFF(cmp_port_sel, dev_name, 24);
CMP_ASSERT_SIZE(cmp_addr, 24);
CMP_ASSERT_OFF(cmp_addr, lid, 2);
CMP_ASSERT_OFF(cmp_addr, addr, 8);
CMP_ASSERT_SIZE(cmp_path_set, 16);
CMP_ASSERT_OFF(cmp_path_set, local_ack_timeout, 15);

CMP_ASSERT_SIZE(cmp_hello, 40);
CMP_ASSERT_OFF(cmp_hello, name, 8);
CMP_ASSERT_SIZE(cmp_hello_reply, 56);
CMP_ASSERT_OFF(cmp_hello_reply, version, 4);
CMP_ASSERT_OFF(cmp_hello_reply, max_ids, 12);
CMP_ASSERT_OFF(cmp_hello_reply, daemon_version, 24);
CMP_ASSERT_SIZE(cmp_create_id, 16);
CMP_ASSERT_SIZE(cmp_create_id_reply, 8);
CMP_ASSERT_SIZE(cmp_id_ref, 8);
CMP_ASSERT_SIZE(cmp_set_context, 16);
CMP_ASSERT_OFF(cmp_set_context, context, 8);
CMP_ASSERT_SIZE(cmp_listen, 112);
CMP_ASSERT_OFF(cmp_listen, service_id, 8);
CMP_ASSERT_OFF(cmp_listen, port, 24);
CMP_ASSERT_SIZE(cmp_connect, 264);
CMP_ASSERT_OFF(cmp_connect, qp_type, 22);
CMP_ASSERT_OFF(cmp_connect, context, 256);
CMP_ASSERT_OFF(cmp_connect, private_data_len, 21);
CMP_ASSERT_OFF(cmp_connect, service_id, 24);
CMP_ASSERT_OFF(cmp_connect, dst, 32);
CMP_ASSERT_OFF(cmp_connect, src, 56);
CMP_ASSERT_OFF(cmp_connect, path, 144);
CMP_ASSERT_OFF(cmp_connect, private_data, 160);
CMP_ASSERT_SIZE(cmp_accept, 216);
CMP_ASSERT_OFF(cmp_accept, private_data, 20);
CMP_ASSERT_SIZE(cmp_reject, 232);
CMP_ASSERT_OFF(cmp_reject, ari, 8);
CMP_ASSERT_OFF(cmp_reject, private_data, 80);
CMP_ASSERT_SIZE(cmp_rtu, 232);
CMP_ASSERT_OFF(cmp_rtu, private_data, 8);
CMP_ASSERT_SIZE(cmp_mra, 232);
CMP_ASSERT_OFF(cmp_mra, private_data, 8);
CMP_ASSERT_SIZE(cmp_disconnect, 232);
CMP_ASSERT_OFF(cmp_disconnect, private_data, 8);
CMP_ASSERT_SIZE(cmp_lap, 296);
CMP_ASSERT_OFF(cmp_lap, alt_path, 8);
CMP_ASSERT_OFF(cmp_lap, private_data, 128);
CMP_ASSERT_SIZE(cmp_apr, 232);
CMP_ASSERT_OFF(cmp_apr, info, 8);
CMP_ASSERT_OFF(cmp_apr, private_data, 80);
CMP_ASSERT_SIZE(cmp_sidr_req, 352);
CMP_ASSERT_OFF(cmp_sidr_req, dst, 16);
CMP_ASSERT_OFF(cmp_sidr_req, src, 40);
CMP_ASSERT_OFF(cmp_sidr_req, private_data, 136);
CMP_ASSERT_SIZE(cmp_sidr_rep, 152);
CMP_ASSERT_OFF(cmp_sidr_rep, private_data, 16);
CMP_ASSERT_SIZE(cmp_ack_event, 8);
CMP_ASSERT_SIZE(cmp_id_info, 336);
CMP_ASSERT_OFF(cmp_id_info, local_comm_id, 40);
CMP_ASSERT_OFF(cmp_id_info, state, 80);
CMP_ASSERT_OFF(cmp_id_info, sel, 95);
CMP_ASSERT_OFF(cmp_id_info, path, 96);
CMP_ASSERT_OFF(cmp_id_info, alt_path, 216);
CMP_ASSERT_SIZE(cmp_query_id_reply, 344);
CMP_ASSERT_OFF(cmp_query_id_reply, info, 8);
CMP_ASSERT_SIZE(cmp_list, 16);
CMP_ASSERT_SIZE(cmp_list_entry, 104);
CMP_ASSERT_OFF(cmp_list_entry, owner_pid, 32);
CMP_ASSERT_OFF(cmp_list_entry, backlog, 40);
CMP_ASSERT_OFF(cmp_list_entry, sel, 7);
CMP_ASSERT_OFF(cmp_list_entry, held_reqs, 48);
CMP_ASSERT_OFF(cmp_list_entry, sel_port_index, 52);
CMP_ASSERT_OFF(cmp_list_entry, remote_gid, 56);
CMP_ASSERT_OFF(cmp_list_entry, listen_gid, 56);
CMP_ASSERT_OFF(cmp_list_entry, port_index, 72);
CMP_ASSERT_OFF(cmp_list_entry, remote_lid, 74);
CMP_ASSERT_OFF(cmp_list_entry, local_qpn, 76);
CMP_ASSERT_OFF(cmp_list_entry, remote_qpn, 80);
CMP_ASSERT_OFF(cmp_list_entry, port_num, 84);
CMP_ASSERT_OFF(cmp_list_entry, rsvd2, 86);
CMP_ASSERT_OFF(cmp_list_entry, owner_comm, 88);
CMP_ASSERT_OFF(cmp_list_reply, entries, 16);
CMP_ASSERT_SIZE(cmp_counters, 80);
CMP_ASSERT_OFF(cmp_counters, dev_name, 16);
CMP_ASSERT_SIZE(cmp_counter, 40);
CMP_ASSERT_OFF(cmp_counters_reply, entries, 16);
CMP_ASSERT_SIZE(cmp_ports, 8);
CMP_ASSERT_SIZE(cmp_port_gid, 20);
CMP_ASSERT_OFF(cmp_port_gid, gid, 4);
CMP_ASSERT_SIZE(cmp_port_entry, 176);
CMP_ASSERT_OFF(cmp_port_entry, node_guid, 64);
CMP_ASSERT_OFF(cmp_port_entry, port_index, 80);
CMP_ASSERT_OFF(cmp_port_entry, n_gids, 86);
CMP_ASSERT_OFF(cmp_port_entry, port_num, 88);
CMP_ASSERT_OFF(cmp_port_entry, rsvd0, 95);
CMP_ASSERT_OFF(cmp_port_entry, gids, 96);
CMP_ASSERT_OFF(cmp_ports_reply, entries, 16);
CMP_ASSERT_SIZE(cmp_capture, 264);
CMP_ASSERT_OFF(cmp_capture, path, 8);
CMP_ASSERT_SIZE(cmp_session, 8);
CMP_ASSERT_SIZE(cmp_session_reply, 24);
CMP_ASSERT_OFF(cmp_session_reply, resume_ms, 4);
CMP_ASSERT_OFF(cmp_session_reply, token, 8);
CMP_ASSERT_SIZE(cmp_resume, 16);
CMP_ASSERT_SIZE(cmp_reply, 8);

CMP_ASSERT_SIZE(cmp_ev_req, 256);
CMP_ASSERT_OFF(cmp_ev_req, path, 40);
CMP_ASSERT_OFF(cmp_ev_req, private_data, 160);
CMP_ASSERT_SIZE(cmp_ev_rep, 344);
CMP_ASSERT_OFF(cmp_ev_rep, path, 24);
CMP_ASSERT_OFF(cmp_ev_rep, private_data, 144);
CMP_ASSERT_SIZE(cmp_ev_established, 232);
CMP_ASSERT_SIZE(cmp_ev_rej, 232);
CMP_ASSERT_OFF(cmp_ev_rej, private_data, 80);
CMP_ASSERT_SIZE(cmp_ev_connect_error, 8);
CMP_ASSERT_SIZE(cmp_ev_mra, 8);
CMP_ASSERT_SIZE(cmp_ev_dreq, 232);
CMP_ASSERT_SIZE(cmp_ev_drep, 232);
CMP_ASSERT_SIZE(cmp_ev_lap, 296);
CMP_ASSERT_OFF(cmp_ev_lap, private_data, 128);
CMP_ASSERT_SIZE(cmp_ev_apr, 232);
CMP_ASSERT_OFF(cmp_ev_apr, private_data, 80);
CMP_ASSERT_SIZE(cmp_ev_sidr_req, 352);
CMP_ASSERT_OFF(cmp_ev_sidr_req, path, 16);
CMP_ASSERT_SIZE(cmp_ev_sidr_rep, 272);
CMP_ASSERT_OFF(cmp_ev_sidr_rep, path, 16);
CMP_ASSERT_SIZE(cmp_ev_port, 72);
CMP_ASSERT_OFF(cmp_event, type, 4);
CMP_ASSERT_OFF(cmp_event, status, 8);
CMP_ASSERT_OFF(cmp_event, context, 16);
CMP_ASSERT_OFF(cmp_event, req_received, 24);

CMP_ASSERT_SIZE(cmp_paths, 16);
CMP_ASSERT_SIZE(cmp_path_entry, 160);
CMP_ASSERT_OFF(cmp_path_entry, hits, 112);
CMP_ASSERT_OFF(cmp_path_entry, port_index, 132);
CMP_ASSERT_OFF(cmp_path_entry, port_num, 146);
CMP_ASSERT_OFF(cmp_path_entry, rsvd0, 154);
CMP_ASSERT_OFF(cmp_paths_reply, entries, 24);
CMP_ASSERT_OFF(cmp_msg, body, 16);
CMP_ASSERT_SIZE(cmp_msg, CMP_MSG_MAX);
/* A full batch fits; one entry more would not. */
#define CMP_BATCH_BYTES(reply, entry, n)                                       \
	(sizeof(struct cmp_hdr) + offsetof(struct reply, entries) +            \
	 (n) * sizeof(struct entry))
_Static_assert(CMP_BATCH_BYTES(cmp_list_reply, cmp_list_entry,
			       CMP_LIST_BATCH_MAX) <= CMP_MSG_MAX,
	       "a full LIST batch fits");
_Static_assert(CMP_BATCH_BYTES(cmp_list_reply, cmp_list_entry,
			       CMP_LIST_BATCH_MAX + 1) > CMP_MSG_MAX,
	       "LIST batches are as large as they can be");
_Static_assert(CMP_BATCH_BYTES(cmp_counters_reply, cmp_counter,
			       CMP_COUNTERS_BATCH_MAX) <= CMP_MSG_MAX,
	       "a full COUNTERS batch fits");
_Static_assert(CMP_BATCH_BYTES(cmp_counters_reply, cmp_counter,
			       CMP_COUNTERS_BATCH_MAX + 1) > CMP_MSG_MAX,
	       "COUNTERS batches are as large as they can be");
_Static_assert(CMP_BATCH_BYTES(cmp_ports_reply, cmp_port_entry,
			       CMP_PORTS_BATCH_MAX) <= CMP_MSG_MAX,
	       "a full PORTS batch fits");
_Static_assert(CMP_BATCH_BYTES(cmp_ports_reply, cmp_port_entry,
			       CMP_PORTS_BATCH_MAX + 1) > CMP_MSG_MAX,
	       "PORTS batches are as large as they can be");
_Static_assert(CMP_BATCH_BYTES(cmp_paths_reply, cmp_path_entry,
			       CMP_PATHS_BATCH_MAX) <= CMP_MSG_MAX,
	       "a full PATHS batch fits");
_Static_assert(CMP_BATCH_BYTES(cmp_paths_reply, cmp_path_entry,
			       CMP_PATHS_BATCH_MAX + 1) > CMP_MSG_MAX,
	       "PATHS batches are as large as they can be");
#undef CMP_BATCH_BYTES

#undef CMP_ASSERT_SIZE
#undef CMP_ASSERT_OFF

#endif
