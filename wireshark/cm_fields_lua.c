/* SPDX-License-Identifier: MIT */
/*
 * Not compiled: run through the C preprocessor (cc -E -P) by
 * wireshark/meson.build, which turns every line of proto/cm_fields.def
 * into a Lua call, spliced into cmd_cm.lua.in at its "@CM_FIELDS@" line,
 * so that the dissector's field layout has the one owner the C codec has.
 */
#define CM_MSG(NAME, name, attr, table) cm_msg(#NAME, #name, attr, table)
#define CM_FIELD(name, field, byte, bit, width, kind)                          \
	cm_field(#field, byte, bit, width, #kind)
#define CM_END(name) cm_end(#name)
#include "cm_fields.def"
