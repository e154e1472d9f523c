/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Finding an st library's drives (migrator/phys_st_find.c) and reading the
 * changer's element status with device identifiers (phys_element_status_parse):
 * a fake sysfs tree of st drives with their serial numbers and sg nodes,
 * READ ELEMENT STATUS answers built byte by byte (SMC-3 6.11: the data
 * header, an element status page, data transfer element descriptors with
 * a primary volume tag and a device identifier), including answers whose
 * lengths are cut short or lie. What is checked is what the migrator would
 * open (drive i's st and sg nodes) and the error an operator reads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/bytes.h"
#include "migrator/phys.h"
#include "migrator/phys_st_find.h"

#define PAGE_MAX 1024
#define ID_FORM_T10 0x01    /* identifier type 1: T10 vendor identification (vendor 8, product 16, serial) */
#define ID_FORM_VENDOR 0x00 /* identifier type 0: vendor specific (here: the serial alone) */
#define CODE_SET_ASCII 0x02
#define ELEM_DRIVE 4
#define PVOLTAG 0x80
#define DESC_BASE 12
#define VOLTAG 36
#define ID_HDR 4

static const struct phys_ops no_ops = {.kind = "test"};

/* ------------------------------------------------------------ fake sysfs */

struct tree {
	char root[64];
};

static void put_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void mkdirs(const char *path)
{
	char p[512];
	snprintf(p, sizeof p, "%s", path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			(void)mkdir(p, 0755);
			*s = '/';
		}
	assert_true(mkdir(p, 0755) == 0 || access(p, F_OK) == 0);
}

/* A VPD page 80h holding serial, its length field saying len_field (the true length when -1). */
static size_t vpd80(uint8_t *b, const char *serial, int len_field)
{
	size_t n = strlen(serial);
	b[0] = 0x01; /* sequential-access device */
	b[1] = 0x80;
	be_put(b + 2, len_field < 0 ? n : (uint64_t)len_field, 2);
	memcpy(b + 4, serial, n);
	return 4 + n;
}

/* The device folder of st drive name (class/scsi_tape/<name>/device): its vpd_pg80 and its sg node, in the
 * form of the kernel (scsi_generic/sgM) or the legacy link (scsi_generic:sgM). */
static void add_drive(struct tree *t, const char *name, const char *serial, const char *sg, bool legacy)
{
	char p[512];
	snprintf(p, sizeof p, "%s/class/scsi_tape/%s/device", t->root, name);
	mkdirs(p);
	if (serial) {
		uint8_t b[300];
		size_t n = vpd80(b, serial, -1);
		snprintf(p, sizeof p, "%s/class/scsi_tape/%s/device/vpd_pg80", t->root, name);
		put_file(p, b, n);
	}
	if (sg) {
		if (legacy)
			snprintf(p, sizeof p, "%s/class/scsi_tape/%s/device/scsi_generic:%s", t->root, name, sg);
		else
			snprintf(p, sizeof p, "%s/class/scsi_tape/%s/device/scsi_generic/%s", t->root, name, sg);
		mkdirs(p);
	}
}

static void tree_new(struct tree *t)
{
	snprintf(t->root, sizeof t->root, "/tmp/vtl-stfind-XXXXXX");
	assert_non_null(mkdtemp(t->root));
}

static void tree_free(struct tree *t)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", t->root);
	assert_int_equal(system(cmd), 0);
}

/* --------------------------------------------------- element status pages */

struct page {
	uint8_t b[PAGE_MAX];
	size_t at;      /* bytes so far */
	size_t page_at; /* where the element status page header is */
	size_t dl;      /* descriptor length */
};

/* Starts an answer with one page of drive descriptors of dl bytes, with volume tags and identifiers. */
static void page_start(struct page *p, size_t dl)
{
	memset(p, 0, sizeof *p);
	p->dl = dl;
	p->at = 8;        /* element status data header, filled by page_end */
	p->page_at = p->at;
	p->b[p->at] = ELEM_DRIVE;
	p->b[p->at + 1] = PVOLTAG;
	be_put(p->b + p->at + 2, dl, 2);
	p->at += 8;
}

/* One drive element at addr, full (with barcode) or empty, whose identifier is id in form type. */
static void page_drive(struct page *p, uint16_t addr, const char *barcode, uint8_t type, const char *id,
		       int id_len_field)
{
	uint8_t *d = p->b + p->at;
	assert_true(p->at + p->dl <= PAGE_MAX);
	be_put(d, addr, 2);
	if (barcode) {
		d[2] = 0x01; /* FULL */
		memset(d + DESC_BASE, ' ', 32);
		memcpy(d + DESC_BASE, barcode, strlen(barcode));
	}
	uint8_t *idp = d + DESC_BASE + VOLTAG;
	size_t n = id ? strlen(id) : 0;
	idp[0] = CODE_SET_ASCII;
	idp[1] = type;
	idp[3] = (uint8_t)(id_len_field < 0 ? n : (size_t)id_len_field);
	if (n)
		memcpy(idp + ID_HDR, id, n);
	p->at += p->dl;
}

/* Fills in the byte counts: the page's and the report's (both true unless told). */
static void page_end(struct page *p)
{
	be_put(p->b + 2, 1, 2); /* elements reported: informational */
	be_put(p->b + p->page_at + 5, p->at - p->page_at - 8, 3);
	be_put(p->b + 5, p->at - 8, 3);
}

struct found {
	struct phys_element_desc e[8];
	unsigned n;
};

static void collect(const struct phys_element_desc *e, void *arg)
{
	struct found *f = arg;
	assert_true(f->n < 8);
	f->e[f->n++] = *e;
}

/* A T10 vendor identification: vendor (8), product (16), serial; in one of two buffers, used in turn, so
 * that two may be arguments of one call. */
static const char *t10(const char *serial)
{
	static char b[2][64];
	static unsigned turn;
	char *p = b[turn++ % 2];
	snprintf(p, sizeof b[0], "%-8s%-16s%s", "IBM", "ULT3580-TD8", serial);
	return p;
}

#define DL (DESC_BASE + VOLTAG + ID_HDR + 40)

/* An answer of two drive elements, 256 (full) and 257, identified as id0 and id1 in forms type0 and type1. */
static void two_drives(struct page *p, uint8_t type0, const char *id0, uint8_t type1, const char *id1)
{
	page_start(p, DL);
	page_drive(p, 256, "T00001L8", type0, id0, -1);
	page_drive(p, 257, NULL, type1, id1, -1);
	page_end(p);
}

/* The elements of answer p, parsed whole (no page left to ask for). */
static void parse_whole(struct phys_lib *lib, const struct page *p, struct found *f)
{
	uint32_t next = 1;
	f->n = 0;
	assert_int_equal(phys_element_status_parse(lib, "changer", p->b, p->at, true, collect, f, &next), VTL_OK);
	assert_int_equal(next, 0);
}

/* ----------------------------------------------------------------- tests */

/* Two drives the changer reports in the other order than st numbers them: drive i is element i. */
static void drives_follow_the_changer(void **state)
{
	(void)state;
	struct tree t;
	tree_new(&t);
	add_drive(&t, "nst0", "SER-B", "sg3", false);
	add_drive(&t, "nst1", "SER-A", "sg2", true);
	add_drive(&t, "st0", "SER-B", "sg3", false);   /* the rewinding node: not the migrator's */
	add_drive(&t, "nst0l", "SER-B", "sg3", false); /* a mode node */
	add_drive(&t, "nst2", "SER-C", NULL, false);   /* another library's drive, without an sg node */

	struct page p;
	two_drives(&p, ID_FORM_T10, t10("SER-A"), ID_FORM_VENDOR, "SER-B");
	struct phys_lib lib = {.ops = &no_ops};
	struct found f;
	parse_whole(&lib, &p, &f);
	assert_int_equal(f.n, 2);
	assert_string_equal(f.e[1].id, "SER-B");
	assert_string_equal(f.e[0].e.barcode, "T00001L8");
	assert_true(f.e[0].e.full);
	assert_string_equal(f.e[0].id_serial, "SER-A");

	struct phys_st_node nodes[PHYS_ST_NODE_MAX];
	unsigned nn = 0, order[2];
	assert_int_equal(phys_st_find_nodes(&lib, t.root, nodes, &nn), VTL_OK);
	assert_int_equal(nn, 3);
	assert_int_equal(phys_st_match(&lib, "changer", f.e, f.n, nodes, nn, order), VTL_OK);
	assert_string_equal(nodes[order[0]].st, "/dev/nst1");
	assert_string_equal(nodes[order[0]].sg, "/dev/sg2");
	assert_string_equal(nodes[order[1]].st, "/dev/nst0");
	assert_string_equal(nodes[order[1]].sg, "/dev/sg3");
	assert_string_equal(nodes[2].st, "/dev/nst2");
	assert_string_equal(nodes[2].sg, "");
	tree_free(&t);
}

/* A drive the changer reports that no st node has: the error names its element and serial number; so are
 * drives without identifiers and two elements that name one drive. */
static void unmatched_drive_is_named(void **state)
{
	(void)state;
	struct tree t;
	tree_new(&t);
	add_drive(&t, "nst0", "SER-A", "sg1", false);
	add_drive(&t, "nst1", NULL, "sg2", false); /* no vpd_pg80: never matches */
	struct page p;
	two_drives(&p, ID_FORM_T10, t10("SER-A"), ID_FORM_T10, t10("SER-Z"));
	struct phys_lib lib = {.ops = &no_ops};
	struct found f;
	parse_whole(&lib, &p, &f);
	struct phys_st_node nodes[PHYS_ST_NODE_MAX];
	unsigned nn, order[2];
	assert_int_equal(phys_st_find_nodes(&lib, t.root, nodes, &nn), VTL_OK);
	assert_int_equal(phys_st_match(&lib, "changer (/dev/sg9)", f.e, f.n, nodes, nn, order), VTL_E_NOTFOUND);
	assert_string_equal(phys_error(&lib), "changer (/dev/sg9): drive element 257 is the drive of serial number "
					      "SER-Z, and no st drive of this host (2 found) has it");

	/* A changer that gives no identifier (DVCID refused, or an empty one) cannot be matched: list the drives. */
	f.e[1].id[0] = f.e[1].id_serial[0] = 0;
	assert_int_equal(phys_st_match(&lib, "changer", f.e, f.n, nodes, nn, order), VTL_E_NOTFOUND);
	assert_non_null(strstr(phys_error(&lib), "drive element 257 gives no device identifier (DVCID)"));
	assert_int_equal(phys_st_match(&lib, "changer", f.e, 0, nodes, nn, order), VTL_E_NOTFOUND);
	assert_non_null(strstr(phys_error(&lib), "reports no data transfer elements"));

	/* Two elements naming one drive (a changer that lies, or two drives with one serial) are refused. */
	two_drives(&p, ID_FORM_VENDOR, "SER-A", ID_FORM_VENDOR, "SER-A");
	parse_whole(&lib, &p, &f);
	assert_int_equal(phys_st_match(&lib, "changer", f.e, f.n, nodes, nn, order), VTL_E_IO);
	assert_string_equal(phys_error(&lib), "changer: drive elements 256 and 257 both name /dev/nst0 (serial SER-A)");
	tree_free(&t);

	/* No st driver at all. */
	assert_int_equal(phys_st_find_nodes(&lib, "/nonexistent-sysfs", nodes, &nn), VTL_E_NOTFOUND);
	assert_non_null(strstr(phys_error(&lib), "/nonexistent-sysfs/class/scsi_tape"));
}

/* The unit serial number page: its length is bounded by the bytes there; anything else is no serial. */
static void vpd80_lengths(void **state)
{
	(void)state;
	uint8_t b[64];
	char serial[PHYS_ID_MAX];
	size_t n = vpd80(b, "  SER-A  ", -1);
	assert_true(phys_st_vpd80_serial(b, n, serial, sizeof serial));
	assert_string_equal(serial, "SER-A");
	n = vpd80(b, "SER-A", 200); /* says 200 bytes, has 5 */
	assert_true(phys_st_vpd80_serial(b, n, serial, sizeof serial));
	assert_string_equal(serial, "SER-A");
	n = vpd80(b, "SER-ABCDEF", 3); /* says 3: only those count */
	assert_true(phys_st_vpd80_serial(b, n, serial, sizeof serial));
	assert_string_equal(serial, "SER");
	assert_false(phys_st_vpd80_serial(b, 3, serial, sizeof serial)); /* shorter than the header */
	assert_string_equal(serial, "");
	b[1] = 0x83; /* another page */
	assert_false(phys_st_vpd80_serial(b, n, serial, sizeof serial));
	n = vpd80(b, "ABCDEFGHIJKLMNOPQRSTUVWXYZ", -1);
	char small[8];
	assert_true(phys_st_vpd80_serial(b, n, small, sizeof small)); /* cut to the caller's room */
	assert_string_equal(small, "ABCDEFG");
}

/* An answer of one drive element, 256, of a descriptor of dl bytes, identified as id (its length field says
 * id_len_field, the true one when -1). */
static void one_drive(struct page *p, size_t dl, uint8_t type, const char *id, int id_len_field)
{
	page_start(p, dl);
	page_drive(p, 256, NULL, type, id, id_len_field);
	page_end(p);
}

/* phys_element_status_parse over got bytes of b, the elements into f. */
static int parse(struct phys_lib *lib, const uint8_t *b, size_t got, struct found *f, uint32_t *next)
{
	f->n = 0;
	return phys_element_status_parse(lib, "changer", b, got, true, collect, f, next);
}

/* Element status answers whose lengths are cut short or lie: errors or what is really there, never more. */
static void element_status_lengths(void **state)
{
	(void)state;
	struct phys_lib lib = {.ops = &no_ops};
	struct page p;
	struct found f;
	uint32_t next;

	/* Shorter than the data header. */
	one_drive(&p, DL, ID_FORM_VENDOR, "SER-A", -1);
	assert_int_equal(parse(&lib, p.b, 5, &f, &next), VTL_E_IO);
	assert_string_equal(phys_error(&lib), "changer: READ ELEMENT STATUS: 5 bytes, short of a header");

	/* The allocation cut the second descriptor: the first is reported, the rest asked for from the next address. */
	two_drives(&p, ID_FORM_VENDOR, "SER-A", ID_FORM_VENDOR, "SER-B");
	assert_int_equal(parse(&lib, p.b, p.at - 10, &f, &next), VTL_OK);
	assert_int_equal(f.n, 1);
	assert_int_equal(next, 257);

	/* Not even one descriptor fits what came back, while the report says there is more: an error, not a loop. */
	assert_int_equal(parse(&lib, p.b, 16 + 20, &f, &next), VTL_E_IO);
	assert_non_null(strstr(phys_error(&lib), "one descriptor exceeds the 36 bytes asked"));

	/* A page that claims more bytes than the report holds: only whole descriptors in the report count. */
	one_drive(&p, DL, ID_FORM_VENDOR, "SER-A", -1);
	be_put(p.b + p.page_at + 5, 60000, 3);
	assert_int_equal(parse(&lib, p.b, p.at, &f, &next), VTL_OK);
	assert_int_equal(f.n, 1);
	assert_int_equal(next, 0);

	/* An identifier length beyond its descriptor: cut at the descriptor's end (ASan watches the reads). */
	one_drive(&p, DESC_BASE + VOLTAG + ID_HDR + 8, ID_FORM_VENDOR, "SER-ABCD", 255);
	uint8_t *exact = malloc(p.at);
	assert_non_null(exact);
	memcpy(exact, p.b, p.at);
	assert_int_equal(parse(&lib, exact, p.at, &f, &next), VTL_OK);
	free(exact);
	assert_int_equal(f.n, 1);
	assert_string_equal(f.e[0].id, "SER-ABCD");

	/* A T10 identifier too short to hold a serial after vendor and product: no serial part. */
	one_drive(&p, DL, ID_FORM_T10, "IBM     ULT3580", -1);
	assert_int_equal(parse(&lib, p.b, p.at, &f, &next), VTL_OK);
	assert_string_equal(f.e[0].id_serial, "");

	/* Descriptors shorter than the fixed part. */
	one_drive(&p, DL, ID_FORM_VENDOR, "SER-A", -1);
	be_put(p.b + p.page_at + 2, 4, 2);
	assert_int_equal(parse(&lib, p.b, p.at, &f, &next), VTL_E_IO);
	assert_string_equal(phys_error(&lib), "changer: READ ELEMENT STATUS: descriptors of 4 bytes");

	/* Addresses that do not rise: the answer is not one a changer may give. */
	page_start(&p, DL);
	page_drive(&p, 257, NULL, ID_FORM_VENDOR, "SER-A", -1);
	page_drive(&p, 256, NULL, ID_FORM_VENDOR, "SER-B", -1);
	page_end(&p);
	assert_int_equal(parse(&lib, p.b, p.at, &f, &next), VTL_E_IO);
	assert_string_equal(phys_error(&lib), "changer: READ ELEMENT STATUS: element 256 reported after 257");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(drives_follow_the_changer),
		cmocka_unit_test(unmatched_drive_is_named),
		cmocka_unit_test(vpd80_lengths),
		cmocka_unit_test(element_status_lengths),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
