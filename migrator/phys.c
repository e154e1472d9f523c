/* SPDX-License-Identifier: Apache-2.0 */
#include "migrator/phys.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/bytes.h"
#include "common/clock.h"
#include "common/grow.h"
#include "common/scsi_proto.h"
#include "common/vtl_error.h"

/* The calling thread's last failure: one per thread, because calls for different drives of one library run
 * at the same time (phys.h) and a library-wide buffer would give one job the words of another's failure. */
static _Thread_local struct {
	const struct phys_lib *lib;
	char err[PHYS_ERR_MAX];
} last_failure;

int phys_fail(struct phys_lib *l, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_failure.err, sizeof last_failure.err, fmt, ap);
	va_end(ap);
	last_failure.lib = l;
	return rc;
}

const char *phys_error(const struct phys_lib *l)
{
	return last_failure.lib == l ? last_failure.err : "";
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
	for (size_t i = 0; i < VTL_ARRAY_SIZE(ascs); i++)
		if (ascs[i].asc == asc && ascs[i].ascq == ascq)
			what = ascs[i].what;
	if (what)
		snprintf(out, cap, "%s, %s (%02X/%02Xh)", sense_keys[key & 0x0F], what, asc, ascq);
	else
		snprintf(out, cap, "%s, ASC/ASCQ %02X/%02Xh", sense_keys[key & 0x0F], asc, ascq);
}

int phys_check_drive(struct phys_lib *l, unsigned d)
{
	if (d < l->drives)
		return VTL_OK;
	return phys_fail(l, VTL_E_INVAL, "no drive %u: the library has %u", d, l->drives);
}

void phys_sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

void phys_wait_start(struct phys_wait *w, unsigned timeout_s, unsigned first_ms, unsigned max_ms)
{
	w->deadline_ms = vtl_mono_ms() + (uint64_t)timeout_s * 1000u;
	w->pause_ms = first_ms;
	w->max_ms = max_ms;
}

bool phys_wait_more(struct phys_wait *w)
{
	if (vtl_mono_ms() >= w->deadline_ms)
		return false;
	phys_sleep_ms(w->pause_ms);
	w->pause_ms = w->pause_ms * 2 < w->max_ms ? w->pause_ms * 2 : w->max_ms;
	return true;
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

/* READ ELEMENT STATUS (SMC-3 6.11): headers, page flags, descriptor layout. */
#define ESH_LEN 8      /* element status data header */
#define ESP_LEN 8      /* element status page header */
#define ESP_PVOLTAG 0x80
#define ESP_AVOLTAG 0x40
#define ED_MIN_LEN 12  /* a descriptor without tags or identifier */
#define ED_FULL 0x01
#define VOLTAG_LEN 36  /* 32-byte volume identifier, 2 reserved, 2-byte sequence number */
#define VOLTAG_ID_LEN 32
#define DVCID_HDR 4    /* code set, identifier type, reserved, identifier length */
#define ID_TYPE_MASK 0x0F
#define ID_TYPE_T10_VENDOR 0x01 /* SPC-5 table "designator type": vendor (8), product (16), then the serial */
#define T10_VENDOR_PRODUCT_LEN 24
#define ADDR_MAX 0xFFFFu

static uint32_t be(const uint8_t *p, unsigned n)
{
	uint32_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

void phys_text_field(char *out, size_t cap, const uint8_t *p, size_t n)
{
	while (n && (p[0] == ' ' || p[0] == 0)) {
		p++;
		n--;
	}
	size_t len = 0;
	while (len < n && p[len])
		len++;
	while (len && p[len - 1] == ' ')
		len--;
	if (len >= cap)
		len = cap - 1;
	memcpy(out, p, len);
	out[len] = 0;
}

static void parse_descriptor(const uint8_t *p, size_t dl, uint8_t type, uint8_t page_flags, bool dvcid,
			     struct phys_element_desc *d)
{
	memset(d, 0, sizeof *d);
	d->e.type = (enum phys_elem_type)type;
	d->e.address = (uint16_t)be(p, 2);
	d->e.full = p[2] & ED_FULL;
	size_t at = ED_MIN_LEN;
	if (page_flags & ESP_PVOLTAG) {
		if (d->e.full && at + VOLTAG_ID_LEN <= dl)
			phys_text_field(d->e.barcode, sizeof d->e.barcode, p + at, VOLTAG_ID_LEN);
		at += VOLTAG_LEN;
	}
	if (page_flags & ESP_AVOLTAG)
		at += VOLTAG_LEN;
	if (dvcid && at + DVCID_HDR <= dl) {
		size_t n = p[at + 3];
		if (at + DVCID_HDR + n > dl)
			n = dl - at - DVCID_HDR;
		const uint8_t *id = p + at + DVCID_HDR;
		phys_text_field(d->id, sizeof d->id, id, n);
		if ((p[at + 1] & ID_TYPE_MASK) == ID_TYPE_T10_VENDOR && n > T10_VENDOR_PRODUCT_LEN)
			phys_text_field(d->id_serial, sizeof d->id_serial, id + T10_VENDOR_PRODUCT_LEN,
					n - T10_VENDOR_PRODUCT_LEN);
	}
}

int phys_element_status_parse(struct phys_lib *l, const char *who, const uint8_t *b, size_t got, bool dvcid,
			      phys_element_fn *fn, void *arg, uint32_t *next)
{
	*next = 0;
	if (got == 0)
		return VTL_OK;
	if (got < ESH_LEN)
		return phys_fail(l, VTL_E_IO, "%s: READ ELEMENT STATUS: %zu bytes, short of a header", who, got);
	size_t report = ESH_LEN + be(b + 5, 3); /* the whole report, whatever the allocation cut */
	size_t have = report < got ? report : got;
	long last = -1;
	for (size_t at = ESH_LEN; at + ESP_LEN <= have;) {
		uint8_t page_type = b[at] & 0x0F, page_flags = b[at + 1];
		size_t dl = be(b + at + 2, 2), bytes = be(b + at + 5, 3);
		size_t page_end = at + ESP_LEN + bytes;
		if (dl < ED_MIN_LEN)
			return phys_fail(l, VTL_E_IO, "%s: READ ELEMENT STATUS: descriptors of %zu bytes", who, dl);
		for (at += ESP_LEN; at + dl <= page_end && at + dl <= have; at += dl) {
			struct phys_element_desc d;
			parse_descriptor(b + at, dl, page_type, page_flags, dvcid, &d);
			if (last >= 0 && d.e.address <= last)
				return phys_fail(l, VTL_E_IO, "%s: READ ELEMENT STATUS: element %u reported after %ld", who,
						 d.e.address, last);
			last = d.e.address;
			fn(&d, arg);
		}
		if (page_end > have)
			break;
		at = page_end;
	}
	if (report <= got)
		return VTL_OK;
	if (last < 0)
		return phys_fail(l, VTL_E_IO, "%s: READ ELEMENT STATUS: one descriptor exceeds the %zu bytes asked", who,
				 got);
	if ((unsigned long)last < ADDR_MAX)
		*next = (uint32_t)last + 1;
	return VTL_OK;
}

/* READ ELEMENT STATUS CDB (SMC-3 6.11): byte 1 VOLTAG and type, 2-3 start, 4-5 count, 6 DVCID, 7-9 allocation. */
#define RES_CDB_LEN 12
#define RES_VOLTAG 0x10
#define RES_DVCID 0x01
#define RES_ALLOC_MAX 0xFFFFFFu

int phys_read_elements(struct phys_lib *l, const struct phys_changer *c, enum phys_elem_type type, bool dvcid,
		       phys_element_fn *fn, void *arg)
{
	size_t alloc = c->len < RES_ALLOC_MAX ? c->len : RES_ALLOC_MAX;
	uint32_t start = 0;
	for (;;) {
		uint8_t cdb[RES_CDB_LEN] = {SCSI_OP_READ_ELEMENT_STATUS, (uint8_t)(RES_VOLTAG | type)};
		be_put(cdb + 2, start, 2);
		be_put(cdb + 4, ADDR_MAX, 2); /* as many as fit: the count is the answer's business */
		cdb[6] = dvcid ? RES_DVCID : 0;
		be_put(cdb + 7, (uint32_t)alloc, 3);
		size_t got;
		int rc = c->read(l, cdb, sizeof cdb, c->buf, alloc, &got);
		if (rc != VTL_OK)
			return rc;
		uint32_t next;
		rc = phys_element_status_parse(l, c->name, c->buf, got, dvcid, fn, arg, &next);
		if (rc != VTL_OK || next == 0)
			return rc;
		start = next;
	}
}

struct inventory_arg {
	struct phys_element *out;
	unsigned cap, n;
};

static void add_element(const struct phys_element_desc *e, void *arg)
{
	struct inventory_arg *a = arg;
	if (a->n < a->cap)
		a->out[a->n] = e->e;
	a->n++;
}

int phys_inventory(struct phys_lib *l, const struct phys_changer *c, struct phys_element *out, unsigned cap,
		   unsigned *n)
{
	static const enum phys_elem_type types[] = {PHYS_ELEM_TRANSPORT, PHYS_ELEM_SLOT, PHYS_ELEM_IE, PHYS_ELEM_DRIVE};
	struct inventory_arg a = {out, cap, 0};
	*n = 0;
	for (size_t i = 0; i < VTL_ARRAY_SIZE(types); i++) {
		int rc = phys_read_elements(l, c, types[i], false, add_element, &a);
		if (rc != VTL_OK)
			return rc;
	}
	*n = a.n;
	return VTL_OK;
}

bool phys_element_is_drive(const struct phys_element_desc *e, const char *s)
{
	if (!s[0] || !e->id[0])
		return false;
	if (strcmp(e->id, s) == 0 || (e->id_serial[0] && strcmp(e->id_serial, s) == 0))
		return true;
	/* Other forms end with the serial number after a space (vendor, product, serial). */
	size_t n = strlen(e->id), k = strlen(s);
	return n > k && e->id[n - k - 1] == ' ' && strcmp(e->id + n - k, s) == 0;
}

/* TapeAlert log page (SSC-4, TapeAlert log page): 4-byte header, parameters 0001h..0040h of one flag byte each. */
#define LOG_PAGE_MASK 0x3F
#define LOG_TAPEALERT 0x2E
#define LOG_HDR 4
#define LOG_PARAM_HDR 4
#define TAPEALERT_FLAGS 64

uint64_t phys_tapealert_parse(const uint8_t *b, size_t got)
{
	uint64_t flags = 0;
	if (got < LOG_HDR || (b[0] & LOG_PAGE_MASK) != LOG_TAPEALERT)
		return 0;
	size_t end = LOG_HDR + be(b + 2, 2);
	if (end > got)
		end = got;
	for (size_t at = LOG_HDR; at + LOG_PARAM_HDR <= end;) {
		unsigned code = be(b + at, 2), plen = b[at + 3];
		if (plen >= 1 && at + LOG_PARAM_HDR < end && code >= 1 && code <= TAPEALERT_FLAGS &&
		    (b[at + LOG_PARAM_HDR] & 1))
			flags |= 1ull << (code - 1);
		at += LOG_PARAM_HDR + plen;
	}
	return flags;
}

void phys_move_cdb(uint8_t cdb[PHYS_MOVE_CDB_LEN], uint16_t transport, uint16_t from, uint16_t to, char *name,
		   size_t namelen)
{
	memset(cdb, 0, PHYS_MOVE_CDB_LEN);
	cdb[0] = SCSI_OP_MOVE_MEDIUM;
	be_put(cdb + 2, transport, 2);
	be_put(cdb + 4, from, 2);
	be_put(cdb + 6, to, 2);
	snprintf(name, namelen, "MOVE MEDIUM %u -> %u", from, to);
}
