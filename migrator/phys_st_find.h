/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Finding an st-attached library's drives: the changer names each data
 * transfer element's drive by its device identifier (READ ELEMENT STATUS
 * with DVCID, SMC-3), and sysfs names each st drive's serial number (the
 * unit serial number page, INQUIRY VPD 80h, which the kernel reads at scan
 * time and shows as device/vpd_pg80) and its SCSI generic sibling. Matching
 * the two puts the drives in the changer's order: drive i is element i.
 * Everything here reads files, never a device, so a test gives it a fake
 * sysfs tree.
 */
#ifndef VTL_MIGRATOR_PHYS_ST_FIND_H
#define VTL_MIGRATOR_PHYS_ST_FIND_H

#include <stddef.h>

#include "migrator/phys.h"

#define PHYS_ST_SYSFS_DEFAULT "/sys"
#define PHYS_ST_DEV "/dev"
#define PHYS_ST_NODE_MAX 64   /* st drives one host may show; more is refused (list the drives instead) */
#define PHYS_ST_PATH_MAX 64   /* "/dev/nst12345", "/dev/sg12345" and room to spare */

/* One st drive sysfs shows. */
struct phys_st_node {
	unsigned index;                /* N of nstN */
	char st[PHYS_ST_PATH_MAX];     /* its non-rewinding node, /dev/nstN */
	char sg[PHYS_ST_PATH_MAX];     /* its SCSI generic node, /dev/sgM; "" when sysfs shows none */
	char serial[PHYS_ID_MAX];      /* its unit serial number; "" when sysfs has no vpd_pg80 */
};

/* The unit serial number in a VPD page 80h of got bytes (SPC-4: 4-byte header, the length at bytes 2-3,
 * then the number) into serial (cap bytes): true, or false when the bytes are no such page. */
bool phys_st_vpd80_serial(const uint8_t *b, size_t got, char *serial, size_t cap);

/* Lists the st drives under sysfs (sysfs/class/scsi_tape/nstN), in the order of N, into out (at most
 * PHYS_ST_NODE_MAX): VTL_OK and *n, else the error set on l. */
VTL_MUST_CHECK int phys_st_find_nodes(struct phys_lib *l, const char *sysfs, struct phys_st_node *out, unsigned *n);

/* For each of the ne drive elements (in the changer's order), the index into nodes of the node whose
 * serial number its identifier names, into order[]: VTL_OK, else the error set on l naming the element
 * and the serial no node has. who names the changer. */
VTL_MUST_CHECK int phys_st_match(struct phys_lib *l, const char *who, const struct phys_element_desc *e, unsigned ne,
				 const struct phys_st_node *nodes, unsigned nn, unsigned *order);

#endif
