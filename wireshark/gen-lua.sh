#!/bin/sh
# SPDX-License-Identifier: MIT
#
# gen-lua.sh TEMPLATE OUTPUT FIELDS_C INCDIR CC [CC_ARGS...]
#
# Preprocess FIELDS_C (cm_fields_lua.c, which includes cm_fields.def from
# INCDIR) with the C compiler and write TEMPLATE to OUTPUT with its
# "-- @CM_FIELDS@" line replaced by the result: one Lua call per field.
set -eu
template=$1 output=$2 fields_c=$3 incdir=$4
shift 4
tmp="$output.fields"
"$@" -E -P -x c -I "$incdir" "$fields_c" | grep -v '^[[:space:]]*$' >"$tmp"
grep -q '^cm_field(' "$tmp" || { echo "gen-lua.sh: no fields from $fields_c" >&2; exit 1; }
awk -v f="$tmp" '
	/^-- @CM_FIELDS@$/ { while ((getline l < f) > 0) print l; n++; next }
	{ print }
	END { if (n != 1) exit 1 }' "$template" >"$output"
rm -f "$tmp"
