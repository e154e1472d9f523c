/* SPDX-License-Identifier: Apache-2.0 */
#include "migrator/phys.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int phys_fail(struct phys_lib *l, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(l->err, sizeof l->err, fmt, ap);
	va_end(ap);
	return rc;
}

/* Sense keys, SPC-5 table 52. */
static const char *const sense_keys[16] = {
	"NO SENSE", "RECOVERED ERROR", "NOT READY", "MEDIUM ERROR", "HARDWARE ERROR", "ILLEGAL REQUEST",
	"UNIT ATTENTION", "DATA PROTECT", "BLANK CHECK", "VENDOR SPECIFIC", "COPY ABORTED", "ABORTED COMMAND",
	"RESERVED", "VOLUME OVERFLOW", "MISCOMPARE", "COMPLETED",
};

/* The ASC/ASCQ pairs a tape migrator meets most (SPC-5 table 54), in words. */
static const struct {
	uint8_t asc, ascq;
	const char *what;
} ascs[] = {
	{0x00, 0x00, "no additional sense"},
	{0x00, 0x01, "filemark detected"},
	{0x00, 0x02, "end of partition/medium detected"},
	{0x00, 0x04, "beginning of partition/medium detected"},
	{0x00, 0x05, "end of data detected"},
	{0x04, 0x01, "becoming ready"},
	{0x0C, 0x00, "write error"},
	{0x11, 0x00, "unrecovered read error"},
	{0x14, 0x00, "recorded entity not found"},
	{0x21, 0x01, "invalid element address"},
	{0x24, 0x00, "invalid field in CDB"},
	{0x27, 0x00, "write protected"},
	{0x28, 0x00, "medium may have changed"},
	{0x29, 0x00, "power on or reset"},
	{0x30, 0x00, "incompatible medium"},
	{0x3A, 0x00, "medium not present"},
	{0x3B, 0x0E, "medium source element empty"},
	{0x3B, 0x0D, "medium destination element full"},
	{0x3B, 0x11, "medium magazine not accessible"},
	{0x44, 0x00, "internal target failure"},
	{0x53, 0x02, "medium removal prevented"},
};

void phys_sense_text(uint8_t key, uint8_t asc, uint8_t ascq, char *out, size_t cap)
{
	const char *what = NULL;
	for (size_t i = 0; i < sizeof ascs / sizeof ascs[0]; i++)
		if (ascs[i].asc == asc && ascs[i].ascq == ascq)
			what = ascs[i].what;
	if (what)
		snprintf(out, cap, "%s, %s (%02X/%02Xh)", sense_keys[key & 0x0F], what, asc, ascq);
	else
		snprintf(out, cap, "%s, ASC/ASCQ %02X/%02Xh", sense_keys[key & 0x0F], asc, ascq);
}

int phys_drive_of(const struct phys_lib *l, uint16_t addr)
{
	for (unsigned i = 0; i < l->drives; i++)
		if (l->drive_addr[i] == addr)
			return (int)i;
	return -1;
}

int phys_find(const struct phys_element *e, unsigned n, const char *barcode)
{
	for (unsigned i = 0; i < n; i++)
		if (e[i].full && strcmp(e[i].barcode, barcode) == 0)
			return (int)i;
	return -1;
}
