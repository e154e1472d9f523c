/* SPDX-License-Identifier: Apache-2.0 */
#include "tests/unit/scsi_host.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/vtl_error.h"
#include "vtl/library/drive_store.h"
#include "vtl/library/library.h"
#include "vtl/changer/smc.h"

static struct ssc_drive *new_drive(struct host *h, const char *vendor, const char *product)
{
	struct ssc_config cfg = {.pool = h->fx->pool, .stage = h->stage, .stage_arg = h->stage_arg,
				 .stage_wait_ms = h->stage_wait_ms};
	library_drive_store(&cfg, h->cat);
	cfg.ident.type = SCSI_TYPE_TAPE;
	snprintf(cfg.ident.vendor, sizeof cfg.ident.vendor, "%s", vendor);
	snprintf(cfg.ident.product, sizeof cfg.ident.product, "%s", product);
	snprintf(cfg.ident.revision, sizeof cfg.ident.revision, "%s", "V001");
	snprintf(cfg.ident.serial, sizeof cfg.ident.serial, "%s", "1013000001");
	struct ssc_drive *d = NULL;
	EXPECT_RC(ssc_create(&cfg, &d), 0);
	snprintf(h->vendor, sizeof h->vendor, "%s", vendor);
	snprintf(h->product, sizeof h->product, "%s", product);
	h->d = d;
	uint8_t cdb[6];
	host_cmd(h, cdb, cdb_simple(cdb, 0x00), SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_UNIT_ATTENTION, ASC_POWER_ON_RESET);
	return d;
}

int host_setup(void **state)
{
	if (fx_setup_dirs(state, "vtl-ssc", 1) != 0)
		return -1;
	struct fx *f = *state;
	fx_pool_config(f, 1, 1u << 20);
	tl_pool_open(&f->cfg, &f->pool);
	struct host *h = calloc(1, sizeof *h);
	if (!h)
		return -1;
	h->fx = f;
	h->nexus = HOST_NEXUS;
	char path[TL_DIR_LEN + 32], err[256];
	snprintf(path, sizeof path, "%s/catalog.db", f->dir);
	if (catalog_open(path, true, &h->cat, err, sizeof err) != 0)
		fail_msg("catalog_open: %s", err);
	const char *model = getenv("VTL_TEST_DRIVE");
	char vendor[16] = "IBM", product[32] = "ULT3580-TD8";
	if (model && strchr(model, '/'))
		sscanf(model, "%15[^/]/%31[^\n]", vendor, product);
	new_drive(h, vendor, product);
	*state = h;
	return 0;
}

void host_catalog_fault(struct host *h, const char *sql)
{
	char path[TL_DIR_LEN + 32];
	snprintf(path, sizeof path, "%s/catalog.db", h->fx->dir);
	sqlite3 *db = NULL;
	char *msg = NULL;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("host_catalog_fault(%s): %s", sql, msg ? msg : sqlite3_errmsg(db));
	sqlite3_free(msg);
	sqlite3_close(db);
}

int host_teardown(void **state)
{
	struct host *h = *state;
	ssc_destroy(h->d);
	catalog_close(h->cat);
	*state = h->fx;
	free(h);
	return fx_teardown(state);
}

void host_drive_model(struct host *h, const char *vendor, const char *product)
{
	ssc_destroy(h->d);
	h->d = NULL;
	new_drive(h, vendor, product);
}

void host_stage(struct host *h, const struct ssc_stage_ops *ops, void *arg)
{
	h->stage = ops;
	h->stage_arg = arg;
	char vendor[sizeof h->vendor], product[sizeof h->product];
	memcpy(vendor, h->vendor, sizeof vendor);
	memcpy(product, h->product, sizeof product);
	host_drive_model(h, vendor, product);
}

void host_pool_quota(struct host *h, uint64_t quota, uint64_t segsize)
{
	ssc_destroy(h->d);
	h->d = NULL;
	vtl_pool_close(h->fx->pool);
	h->fx->pool = NULL;
	fx_pool_config(h->fx, 1, segsize);
	h->fx->cfg.member_quota = quota;
	tl_pool_open(&h->fx->cfg, &h->fx->pool);
	char vendor[sizeof h->vendor], product[sizeof h->product];
	memcpy(vendor, h->vendor, sizeof vendor);
	memcpy(product, h->product, sizeof product);
	new_drive(h, vendor, product);
}

void host_new_cart(struct host *h, const char *barcode, uint64_t capacity)
{
	struct vtl_label label;
	char err[256];
	if (vtl_label_parse(barcode, &label, err, sizeof err) != 0)
		fail_msg("%s", err);
	struct cat_cartridge c;
	memset(&c, 0, sizeof c);
	snprintf(c.barcode, sizeof c.barcode, "%s", barcode);
	c.media = label.media;
	c.capacity = capacity ? capacity : label.capacity;
	snprintf(c.state, sizeof c.state, "%s", "available");
	c.element = CAT_NO_ELEMENT;
	EXPECT_RC(catalog_cartridge_add(h->cat, &c), 0);
	if (!label.cleaning)
		EXPECT_RC(vtl_cart_create(h->fx->pool, barcode), 0);
}

void host_load(struct host *h, const char *barcode)
{
	struct ssc_medium m;
	memset(&m, 0, sizeof m);
	snprintf(m.barcode, sizeof m.barcode, "%s", barcode);
	struct cat_cartridge cc;
	if (catalog_cartridge_get(h->cat, barcode, &cc) == 0) {
		m.capacity = cc.capacity;
		m.write_protected = cc.write_protect;
	}
	char err[256] = "";
	int rc = ssc_insert(h->d, &m, err, sizeof err);
	if (rc != 0)
		fail_msg("ssc_insert(%s): %d %s", barcode, rc, err);
	uint8_t cdb[6];
	host_cmd(h, cdb, cdb_simple(cdb, 0x00), SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_UNIT_ATTENTION, ASC_NOT_READY_TO_READY);
}

int host_cmd(struct host *h, const uint8_t *cdb, uint8_t cdb_len, enum scsi_dir dir, void *buf, size_t xfer)
{
	struct scsi_cmd *c = &h->c;
	memset(c, 0, sizeof *c);
	memcpy(c->cdb, cdb, cdb_len);
	c->cdb_len = cdb_len;
	c->dir = dir;
	c->xfer_len = xfer;
	c->nexus = h->nexus;
	c->status = 0xFF;
	h->iov = (struct iovec){buf, xfer};
	c->iov = &h->iov;
	c->iov_cnt = buf ? 1 : 0;
	ssc_execute(h->d, c);
	h->sense_len = 0;
	if (c->status == SCSI_CHECK_CONDITION)
		h->sense_len = c->sense_desc ? sense_encode_desc(&c->sense, h->sense, sizeof h->sense)
					     : sense_encode(&c->sense, h->sense, sizeof h->sense);
	return c->status;
}

void expect_good(struct host *h)
{
	if (h->c.status != SCSI_GOOD)
		fail_msg("opcode %02Xh: status %02Xh, sense key %X, ASC/ASCQ %04X, expected GOOD", h->c.cdb[0],
			 h->c.status, h->c.sense.key, h->c.sense.asc);
}

/* The last command's sense as the host decodes the bytes it received (zero when there were none). */
static struct scsi_sense received_sense(struct host *h)
{
	struct scsi_sense s;
	if (!sense_decode(h->sense, h->sense_len, &s) && h->sense_len)
		fail_msg("opcode %02Xh: %zu bytes of sense data that do not decode", h->c.cdb[0], h->sense_len);
	return s;
}

void expect_sense(struct host *h, enum scsi_sense_key key, enum scsi_asc asc)
{
	struct scsi_sense s = received_sense(h);
	if (h->c.status != SCSI_CHECK_CONDITION || s.key != key || s.asc != asc)
		fail_msg("opcode %02Xh: status %02Xh, sense key %X, ASC/ASCQ %04X; expected CHECK CONDITION %X %04X",
			 h->c.cdb[0], h->c.status, s.key, s.asc, key, asc);
}

void expect_invalid_field(struct host *h, enum scsi_asc asc, bool cdb, uint16_t byte, int bit)
{
	expect_sense(h, SK_ILLEGAL_REQUEST, asc);
	assert_true(h->c.sense.sks_valid);
	assert_int_equal(h->c.sense.sks_cdb, cdb);
	assert_int_equal(h->c.sense.sks_field, byte);
	if (bit < 0) {
		assert_false(h->c.sense.sks_bit_valid);
	} else {
		assert_true(h->c.sense.sks_bit_valid);
		assert_int_equal(h->c.sense.sks_bit, bit);
	}
}

int32_t sense_info(struct host *h)
{
	struct scsi_sense s = received_sense(h);
	if (!s.info_valid)
		fail_msg("opcode %02Xh: sense has no VALID INFORMATION", h->c.cdb[0]);
	return (int32_t)s.info;
}

uint64_t host_position(struct host *h)
{
	uint8_t cdb[10] = {0x34};
	uint8_t b[20];
	memset(b, 0xEE, sizeof b);
	host_cmd(h, cdb, 10, SCSI_DIR_IN, b, sizeof b);
	expect_good(h);
	return (uint64_t)b[4] << 24 | (uint64_t)b[5] << 16 | (uint64_t)b[6] << 8 | b[7];
}

static void put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

uint8_t cdb_write6(uint8_t *cdb, bool fixed, uint32_t len)
{
	memset(cdb, 0, 6);
	cdb[0] = 0x0A;
	cdb[1] = fixed ? 1 : 0;
	put24(cdb + 2, len);
	return 6;
}

uint8_t cdb_read6(uint8_t *cdb, bool sili, bool fixed, uint32_t len)
{
	memset(cdb, 0, 6);
	cdb[0] = 0x08;
	cdb[1] = (uint8_t)((sili ? 2 : 0) | (fixed ? 1 : 0));
	put24(cdb + 2, len);
	return 6;
}

uint8_t cdb_wfm6(uint8_t *cdb, uint32_t count, bool immed)
{
	memset(cdb, 0, 6);
	cdb[0] = 0x10;
	cdb[1] = immed ? 1 : 0;
	put24(cdb + 2, count);
	return 6;
}

uint8_t cdb_space6(uint8_t *cdb, uint8_t code, int32_t count)
{
	memset(cdb, 0, 6);
	cdb[0] = 0x11;
	cdb[1] = code;
	put24(cdb + 2, (uint32_t)count & 0xFFFFFF);
	return 6;
}

uint8_t cdb_locate10(uint8_t *cdb, uint32_t object)
{
	memset(cdb, 0, 10);
	cdb[0] = 0x2B;
	cdb[3] = (uint8_t)(object >> 24);
	cdb[4] = (uint8_t)(object >> 16);
	cdb[5] = (uint8_t)(object >> 8);
	cdb[6] = (uint8_t)object;
	return 10;
}

uint8_t cdb_simple(uint8_t *cdb, uint8_t opcode)
{
	memset(cdb, 0, 6);
	cdb[0] = opcode;
	return 6;
}

struct vtl_library *host_library(struct host *h)
{
	struct cat_library l;
	memset(&l, 0, sizeof l);
	snprintf(l.name, sizeof l.name, "LIB1");
	snprintf(l.vendor, sizeof l.vendor, "IBM");
	snprintf(l.product, sizeof l.product, "3573-TL");
	snprintf(l.revision, sizeof l.revision, "F.11");
	snprintf(l.serial, sizeof l.serial, "LIB0001");
	l.transport_first = 1;
	l.transports = 1;
	l.slot_first = HOST_SLOT0;
	l.slots = 6;
	l.ie_first = HOST_IE0;
	l.ies = 2;
	l.drive_first = HOST_DRIVE0;
	l.drives = 2;
	EXPECT_RC(catalog_library_create(h->cat, &l), 0);
	const char *models[2] = {"ULT3580-TD8", "ULT3580-TD9"};
	for (unsigned i = 0; i < 2; i++) {
		struct cat_drive d;
		memset(&d, 0, sizeof d);
		d.library_id = l.id;
		d.address = (uint16_t)(HOST_DRIVE0 + i);
		snprintf(d.vendor, sizeof d.vendor, "IBM");
		snprintf(d.model, sizeof d.model, "%s", models[i]);
		snprintf(d.revision, sizeof d.revision, "Q3A1");
		snprintf(d.serial, sizeof d.serial, "DRV%04u", i);
		d.lun = (int)i + 1;
		snprintf(d.state, sizeof d.state, "online");
		EXPECT_RC(catalog_drive_set(h->cat, &d), 0);
	}
	const char *carts[4] = {"D00000L8", "D00001L8", "D00002L6", "CLN000L1"};
	for (unsigned i = 0; i < 4; i++) {
		host_new_cart(h, carts[i], 1u << 30);
		EXPECT_RC(catalog_cartridge_place(h->cat, carts[i], l.id, (uint16_t)(HOST_SLOT0 + i), "available", "test"), 0);
	}
	struct library_options opt = {0};
	struct vtl_library *lib = NULL;
	char err[256] = "";
	int rc = library_open(h->cat, h->fx->pool, "LIB1", &opt, &lib, err, sizeof err);
	if (rc != 0)
		fail_msg("library_open: %d %s", rc, err);
	return lib;
}


int host_changer_cmd(struct smc_changer *ch, struct scsi_cmd *c, uint64_t nexus, const uint8_t *cdb, uint8_t len,
		     enum scsi_dir dir, void *data, size_t xfer)
{
	memset(c, 0, sizeof *c);
	memcpy(c->cdb, cdb, len);
	c->cdb_len = len;
	c->dir = dir;
	c->xfer_len = xfer;
	struct iovec iov = {data, xfer};
	c->iov = &iov;
	c->iov_cnt = data ? 1 : 0;
	c->nexus = nexus;
	smc_execute(ch, c);
	c->iov = NULL;
	return c->status;
}
