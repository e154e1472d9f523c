/* SPDX-License-Identifier: Apache-2.0 */
#include "migrator/phys_st_find.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/bytes.h"
#include "common/vtl_error.h"

/* The unit serial number VPD page (SPC-4 7.8.18): byte 1 the page code, bytes 2-3 the page length. */
#define VPD_SERIAL 0x80
#define VPD_HDR 4
#define VPD_PAGE_CODE 1
#define VPD_LEN_AT 2
#define VPD_FILE_MAX (VPD_HDR + 255) /* sysfs shows the page as read at scan time; more is no serial */

#define SYSFS_PATH_MAX 512
#define ST_PREFIX "nst"
#define SG_PREFIX "sg"
#define SG_LEGACY_PREFIX "scsi_generic:" /* kernels before the scsi_generic/ folder link the node so */

bool phys_st_vpd80_serial(const uint8_t *b, size_t got, char *serial, size_t cap)
{
	serial[0] = 0;
	if (got < VPD_HDR || b[VPD_PAGE_CODE] != VPD_SERIAL)
		return false;
	size_t n = be_get(b + VPD_LEN_AT, 2);
	if (n > got - VPD_HDR)
		n = got - VPD_HDR; /* a length that says more than the file holds: what is there */
	phys_text_field(serial, cap, b + VPD_HDR, n);
	return true;
}

/* N when name is exactly "<prefix>N" (decimal, no sign, no leading zero but "0"), else -1. */
static long numbered(const char *name, const char *prefix)
{
	size_t k = strlen(prefix);
	if (strncmp(name, prefix, k) != 0)
		return -1;
	const char *p = name + k;
	if (!*p || (p[0] == '0' && p[1]) || strspn(p, "0123456789") != strlen(p) || strlen(p) > 6)
		return -1;
	return strtol(p, NULL, 10);
}

/* The serial number in file path (a vpd_pg80), "" when there is none or it is no such page. */
static void read_serial(const char *path, char *serial, size_t cap)
{
	serial[0] = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	uint8_t b[VPD_FILE_MAX];
	size_t got = 0;
	while (got < sizeof b) {
		ssize_t r = read(fd, b + got, sizeof b - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	(void)phys_st_vpd80_serial(b, got, serial, cap); /* false leaves "": the node cannot be matched */
}

/* The first "sgM" in dir whose name starts with prefix + "sg", as /dev/sgM into out; false when none. */
static bool find_sg(const char *dir, const char *prefix, char *out, size_t cap)
{
	DIR *d = opendir(dir);
	if (!d)
		return false;
	long best = -1;
	for (struct dirent *e; (e = readdir(d));) {
		size_t k = strlen(prefix);
		if (strncmp(e->d_name, prefix, k) != 0)
			continue;
		long m = numbered(e->d_name + k, SG_PREFIX);
		if (m >= 0 && (best < 0 || m < best))
			best = m;
	}
	closedir(d);
	if (best < 0)
		return false;
	snprintf(out, cap, PHYS_ST_DEV "/" SG_PREFIX "%ld", best);
	return true;
}

static int by_index(const void *a, const void *b)
{
	const struct phys_st_node *x = a, *y = b;
	return (x->index > y->index) - (x->index < y->index);
}

int phys_st_find_nodes(struct phys_lib *l, const char *sysfs, struct phys_st_node *out, unsigned *n)
{
	*n = 0;
	char dir[SYSFS_PATH_MAX];
	if (snprintf(dir, sizeof dir, "%s/class/scsi_tape", sysfs) >= (int)sizeof dir)
		return phys_fail(l, VTL_E_CONFIG, "st drives: the sysfs path %s is too long", sysfs);
	DIR *d = opendir(dir);
	if (!d)
		return phys_fail(l, VTL_E_NOTFOUND, "st drives: %s: %s (is the st driver loaded?)", dir, strerror(errno));
	int rc = VTL_OK;
	for (struct dirent *e; rc == VTL_OK && (e = readdir(d));) {
		long idx = numbered(e->d_name, ST_PREFIX); /* nstN only: not stN, nor the mode nodes nstNl/m/a */
		if (idx < 0)
			continue;
		if (*n == PHYS_ST_NODE_MAX) {
			rc = phys_fail(l, VTL_E_CONFIG, "st drives: more than %d under %s: list the library's drives "
				       "(drive = /dev/nstN lines)", PHYS_ST_NODE_MAX, dir);
			break;
		}
		struct phys_st_node *p = &out[(*n)++];
		memset(p, 0, sizeof *p);
		p->index = (unsigned)idx;
		snprintf(p->st, sizeof p->st, PHYS_ST_DEV "/" ST_PREFIX "%u", p->index);
		char path[SYSFS_PATH_MAX];
		if (snprintf(path, sizeof path, "%s/%s/device/vpd_pg80", dir, e->d_name) < (int)sizeof path)
			read_serial(path, p->serial, sizeof p->serial);
		char dev[SYSFS_PATH_MAX], sgdir[SYSFS_PATH_MAX];
		if (snprintf(dev, sizeof dev, "%s/%s/device", dir, e->d_name) >= (int)sizeof dev)
			continue;
		if (snprintf(sgdir, sizeof sgdir, "%s/scsi_generic", dev) < (int)sizeof sgdir &&
		    find_sg(sgdir, "", p->sg, sizeof p->sg))
			continue;
		(void)find_sg(dev, SG_LEGACY_PREFIX, p->sg, sizeof p->sg); /* none: SG_IO goes to the st node */
	}
	closedir(d);
	if (rc == VTL_OK)
		qsort(out, *n, sizeof *out, by_index);
	return rc;
}

int phys_st_match(struct phys_lib *l, const char *who, const struct phys_element_desc *e, unsigned ne,
		  const struct phys_st_node *nodes, unsigned nn, unsigned *order)
{
	if (ne == 0)
		return phys_fail(l, VTL_E_NOTFOUND, "%s: reports no data transfer elements (drives)", who);
	if (ne > PHYS_MAX_DRIVES)
		return phys_fail(l, VTL_E_CONFIG, "%s: reports %u drives; at most %d are used: list them (drive = lines)",
				 who, ne, PHYS_MAX_DRIVES);
	for (unsigned i = 0; i < ne; i++) {
		if (!e[i].id[0])
			return phys_fail(l, VTL_E_NOTFOUND,
					 "%s: drive element %u gives no device identifier (DVCID), so its st node cannot be "
					 "found: list the drives (drive = /dev/nstN lines, in element order)",
					 who, e[i].e.address);
		unsigned j = 0;
		while (j < nn && !phys_element_is_drive(&e[i], nodes[j].serial))
			j++;
		if (j == nn)
			return phys_fail(l, VTL_E_NOTFOUND,
					 "%s: drive element %u is the drive of serial number %s, and no st drive of this "
					 "host (%u found) has it",
					 who, e[i].e.address, e[i].id_serial[0] ? e[i].id_serial : e[i].id, nn);
		for (unsigned k = 0; k < i; k++)
			if (order[k] == j)
				return phys_fail(l, VTL_E_IO, "%s: drive elements %u and %u both name %s (serial %s)", who,
						 e[k].e.address, e[i].e.address, nodes[j].st, nodes[j].serial);
		order[i] = j;
	}
	return VTL_OK;
}
