# SPDX-License-Identifier: Apache-2.0
#
# Sourced by the integration, bench and kernel scripts that write a vtld
# configuration: the sections every one-library test file has, so that a key
# they all need changes in one place.

# library_conf NAME SERIAL SLOTS MAIL_SLOTS DRIVES PORT [IQN [ADVERTISE]]: prints the [library], [pool],
# [catalog] and [iscsi] sections of a one-library configuration whose pool member and catalog lie beside
# the file's folder (../pool/m0, ../var/catalog.db), served on 127.0.0.1:PORT. An empty MAIL_SLOTS, IQN
# or ADVERTISE leaves the key to its default. [iscsi] comes last: the caller may append more of its
# keys, then its own sections.
library_conf() {
	cat <<CONF
[library]
name = $1
serial = $2
slots = $3
CONF
	[ -z "$4" ] || echo "mail_slots = $4"
	cat <<CONF
drives = $5

[pool]
member = ../pool/m0

[catalog]
path = ../var/catalog.db

[iscsi]
listen = 127.0.0.1
port = $6
CONF
	[ -z "${7:-}" ] || echo "target_iqn = $7"
	[ -z "${8:-}" ] || echo "advertise = $8"
}
