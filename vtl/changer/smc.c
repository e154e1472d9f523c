/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The medium changer: its command table, readiness, READ ELEMENT STATUS,
 * MOVE MEDIUM, INITIALIZE ELEMENT STATUS (WITH RANGE), POSITION TO ELEMENT
 * and PREVENT ALLOW MEDIUM REMOVAL. Elements and moves belong to the library
 * model (vtl/library/library.c); the changer translates them to SMC-3.
 */
#include "vtl/changer/smc_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/lockorder.h"
#include "common/grow.h"
#include "common/vtl_error.h"

static void smc_tur(struct scsi_dev *dev, struct scsi_cmd *c);
static void smc_request_sense(struct scsi_dev *dev, struct scsi_cmd *c);
static void smc_read_element_status(struct scsi_dev *dev, struct scsi_cmd *c);
static void smc_move_medium(struct scsi_dev *dev, struct scsi_cmd *c);
static void smc_init_element_status(struct scsi_dev *dev, struct scsi_cmd *c);
static void smc_position(struct scsi_dev *dev, struct scsi_cmd *c);
static void smc_prevent_allow(struct scsi_dev *dev, struct scsi_cmd *c);
static void smc_exchange_medium(struct scsi_dev *dev, struct scsi_cmd *c);
static void smc_open_close_ie(struct scsi_dev *dev, struct scsi_cmd *c);

#define EXEMPT (OP_UA_EXEMPT | OP_RES_ALLOWED | OP_RES_SPC2_OK)
/* Reservation classes as in vtl/drive/ssc.c (SPC-4 table 64, SMC-3 table of changer commands). */
#define R_ANY (OP_RES_ALLOWED | OP_RES_SPC2_OK)
#define R_PR OP_RES_ALLOWED
#define R_READ OP_RES_READ
#define R_WRITE 0

/* Recommended command timeouts, seconds (SPC-4 6.35.4). */
#define TMO_STATE 60  /* answered from memory or the catalog */
#define TMO_MOVE 600  /* a move, which may load a drive */

/* The changer's commands (SMC-3 table 2 and SPC-4); REPORT SUPPORTED OPERATION CODES lists exactly these. */
static const struct scsi_op smc_ops[] = {
	{0x00, SA_NONE, 6, R_PR, "TEST UNIT READY", smc_tur, U6(0x00, 0, 0, 0, 0), TMO_STATE},
	{0x03, SA_NONE, 6, EXEMPT, "REQUEST SENSE", smc_request_sense, U6(0x03, 0x01, 0, 0, 0xFF), TMO_STATE},
	{0x07, SA_NONE, 6, R_WRITE, "INITIALIZE ELEMENT STATUS", smc_init_element_status, U6(0x07, 0, 0, 0, 0),
	 TMO_STATE},
	{0x12, SA_NONE, 6, EXEMPT, "INQUIRY", smc_inquiry, U6(0x12, 0x01, 0xFF, 0xFF, 0xFF), TMO_STATE},
	{0x15, SA_NONE, 6, R_WRITE, "MODE SELECT(6)", smc_mode_select, U6(0x15, 0x11, 0, 0, 0xFF), TMO_STATE},
	{0x16, SA_NONE, 6, R_PR, "RESERVE(6)", spc_reserve, U6(0x16, 0, 0, 0, 0), TMO_STATE},
	{0x17, SA_NONE, 6, R_ANY, "RELEASE(6)", spc_release, U6(0x17, 0, 0, 0, 0), TMO_STATE},
	{0x1A, SA_NONE, 6, R_READ, "MODE SENSE(6)", smc_mode_sense, U6(0x1A, 0x08, 0xFF, 0xFF, 0xFF), TMO_STATE},
	{0x1B, SA_NONE, 6, R_WRITE, "OPEN/CLOSE IMPORT/EXPORT ELEMENT", smc_open_close_ie, U6(0x1B, 0, 0xFF, 0xFF, 0x1F),
	 TMO_STATE},
	{0x1E, SA_NONE, 6, OP_RES_PREVENT, "PREVENT ALLOW MEDIUM REMOVAL", smc_prevent_allow,
	 U6(0x1E, 0, 0, 0, 0x01), TMO_STATE},
	{0x2B, SA_NONE, 10, R_WRITE, "POSITION TO ELEMENT", smc_position,
	 U10(0x2B, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0), TMO_MOVE},
	{0x4C, SA_NONE, 10, R_WRITE, "LOG SELECT", smc_log_select,
	 U10(0x4C, 0x03, 0xFF, 0xFF, 0, 0, 0, 0xFF, 0xFF), TMO_STATE},
	{0x4D, SA_NONE, 10, R_ANY, "LOG SENSE", smc_log_sense,
	 U10(0x4D, 0x01, 0xFF, 0xFF, 0, 0xFF, 0xFF, 0xFF, 0xFF), TMO_STATE},
	{0x55, SA_NONE, 10, R_WRITE, "MODE SELECT(10)", smc_mode_select,
	 U10(0x55, 0x11, 0, 0, 0, 0, 0, 0xFF, 0xFF), TMO_STATE},
	{0x56, SA_NONE, 10, R_PR, "RESERVE(10)", spc_reserve, U10(0x56, 0, 0, 0, 0, 0, 0, 0, 0), TMO_STATE},
	{0x57, SA_NONE, 10, R_ANY, "RELEASE(10)", spc_release, U10(0x57, 0, 0, 0, 0, 0, 0, 0, 0), TMO_STATE},
	{0x5A, SA_NONE, 10, R_READ, "MODE SENSE(10)", smc_mode_sense,
	 U10(0x5A, 0x18, 0xFF, 0xFF, 0, 0, 0, 0xFF, 0xFF), TMO_STATE},
	SPC_PR_OPS(R_PR, TMO_STATE),
	{0xA0, SA_NONE, 12, EXEMPT, "REPORT LUNS", spc_report_luns,
	 U12(0xA0, 0, 0xFF, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0), TMO_STATE},
	{0xA3, 0x0C, 12, R_READ, "REPORT SUPPORTED OPERATION CODES", spc_report_opcodes,
	 U12(0xA3, 0x0C, 0x87, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0), TMO_STATE},
	{0xA5, SA_NONE, 12, R_WRITE, "MOVE MEDIUM", smc_move_medium,
	 U12(0xA5, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0), TMO_MOVE},
	{0xA6, SA_NONE, 12, R_WRITE, "EXCHANGE MEDIUM", smc_exchange_medium,
	 U12(0xA6, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x03), TMO_MOVE},
	{0xB8, SA_NONE, 12, R_READ, "READ ELEMENT STATUS", smc_read_element_status,
	 U12(0xB8, 0x1F, 0xFF, 0xFF, 0xFF, 0xFF, 0x03, 0xFF, 0xFF, 0xFF, 0), TMO_STATE},
	{0xE7, SA_NONE, 10, R_WRITE, "INITIALIZE ELEMENT STATUS WITH RANGE", smc_init_element_status,
	 U10(0xE7, 0x01, 0xFF, 0xFF, 0, 0, 0xFF, 0xFF, 0), TMO_STATE},
};

const struct scsi_op *smc_command_table(size_t *n)
{
	*n = VTL_ARRAY_SIZE(smc_ops);
	return smc_ops;
}

/* An operator touched the mail slots: every initiator is told (SMC-3, IMPORT OR EXPORT ELEMENT ACCESSED). */
static void smc_ie_accessed(void *arg)
{
	struct smc_changer *ch = arg;
	vtl_lock(&ch->mu, VTL_LOCK_CHANGER);
	ua_raise_all(&ch->dev.ua, UA_IE_ACCESSED, UA_NO_NEXUS);
	vtl_unlock(&ch->mu, VTL_LOCK_CHANGER);
}

int smc_create(struct vtl_library *lib, struct smc_changer **out)
{
	struct smc_changer *ch = calloc(1, sizeof *ch);
	if (!ch)
		return VTL_E_NOMEM;
	const struct cat_library *li = library_info(lib);
	struct scsi_ident id = {.type = SCSI_TYPE_CHANGER};
	memcpy(id.vendor, li->vendor, sizeof li->vendor < sizeof id.vendor ? sizeof li->vendor : sizeof id.vendor);
	memcpy(id.product, li->product, sizeof id.product);
	memcpy(id.revision, li->revision, sizeof id.revision);
	memcpy(id.serial, li->serial, sizeof id.serial);
	id.vendor[sizeof id.vendor - 1] = id.product[sizeof id.product - 1] = 0;
	id.revision[sizeof id.revision - 1] = id.serial[sizeof id.serial - 1] = 0;
	scsi_dev_init(&ch->dev, &id, smc_ops, VTL_ARRAY_SIZE(smc_ops));
	pthread_mutex_init(&ch->mu, NULL);
	ch->lib = lib;
	library_on_ie_change(lib, smc_ie_accessed, ch);
	*out = ch;
	return VTL_OK;
}

void smc_destroy(struct smc_changer *ch)
{
	if (!ch)
		return;
	library_on_ie_change(ch->lib, NULL, NULL);
	library_set_prevent(ch->lib, false);
	pthread_mutex_destroy(&ch->mu);
	free(ch);
}

void smc_execute(struct smc_changer *ch, struct scsi_cmd *c)
{
	vtl_lock(&ch->mu, VTL_LOCK_CHANGER);
	scsi_dev_execute(&ch->dev, NULL, c); /* the robot is always ready */
	vtl_unlock(&ch->mu, VTL_LOCK_CHANGER);
}

void smc_reset(struct smc_changer *ch)
{
	vtl_lock(&ch->mu, VTL_LOCK_CHANGER);
	scsi_dev_reset(&ch->dev);
	library_set_prevent(ch->lib, false);
	vtl_unlock(&ch->mu, VTL_LOCK_CHANGER);
}

void smc_nexus_lost(struct smc_changer *ch, uint64_t nexus)
{
	vtl_lock(&ch->mu, VTL_LOCK_CHANGER);
	scsi_dev_nexus_lost(&ch->dev, nexus);
	library_set_prevent(ch->lib, ch->dev.n_prevent > 0); /* the mail slots stay locked while any host prevents */
	vtl_unlock(&ch->mu, VTL_LOCK_CHANGER);
}

void smc_set_luns(struct smc_changer *ch, const uint16_t *luns, unsigned n)
{
	vtl_lock(&ch->mu, VTL_LOCK_CHANGER);
	scsi_dev_set_luns(&ch->dev, luns, n);
	vtl_unlock(&ch->mu, VTL_LOCK_CHANGER);
}

/* ------------------------------------------------------------ simple commands */

static void smc_tur(struct scsi_dev *dev, struct scsi_cmd *c)
{
	(void)dev;
	scsi_done(c, 0);
}

#define REQSENSE_DESC 0x01
#define REQSENSE_ALLOC_BYTE 4

static void smc_request_sense(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct scsi_sense s = sense_of(SK_NO_SENSE, ASC_NONE);
	ua_take(&dev->ua, c->nexus, &s); /* a pending attention is the answer, and is cleared */
	uint8_t b[SENSE_MAX_LEN];
	size_t n = (c->cdb[1] & REQSENSE_DESC) ? sense_encode_desc(&s, b, sizeof b) : sense_encode(&s, b, sizeof b);
	scsi_data_in(c, b, n, c->cdb[REQSENSE_ALLOC_BYTE]);
}

/* INITIALIZE ELEMENT STATUS (07h) and ... WITH RANGE (E7h): the inventory is always current. */
static void smc_init_element_status(struct scsi_dev *dev, struct scsi_cmd *c)
{
	(void)dev;
	scsi_done(c, 0);
}

/* The type of element a, or CAT_ELEM_ALL when the library has no such element. */
struct find_elem {
	uint16_t address;
	struct library_element le;
	bool found;
};

static int find_one(const struct library_element *le, void *arg)
{
	struct find_elem *f = arg;
	if (le->e.address != f->address)
		return 0;
	f->le = *le;
	f->found = true;
	return 1;
}

static bool element_of(struct smc_changer *ch, uint16_t a, struct library_element *out)
{
	struct find_elem f = {.address = a};
	library_elements(ch->lib, CAT_ELEM_ALL, find_one, &f);
	if (f.found && out)
		*out = f.le;
	return f.found;
}

/* An element address field of the CDB at byte at (two bytes). */
static uint16_t cdb_address(const struct scsi_cmd *c, unsigned at)
{
	return (uint16_t)(c->cdb[at] << 8 | c->cdb[at + 1]);
}

/*
 * The medium transport element field: zero (the default transport) or the
 * robot's address; anything else ends the command with INVALID ELEMENT ADDRESS.
 */
static bool transport_ok(struct smc_changer *ch, struct scsi_cmd *c, unsigned at)
{
	uint16_t transport = cdb_address(c, at);
	struct library_element le;
	if (transport && (!element_of(ch, transport, &le) || le.e.type != CAT_ELEM_TRANSPORT)) {
		scsi_fail(c, sense_of(SK_ILLEGAL_REQUEST, ASC_INVALID_ELEMENT_ADDRESS));
		return false;
	}
	return true;
}

/* POSITION TO ELEMENT (2Bh, SMC-3): bytes 2..3 transport, 4..5 destination, byte 8 bit 0 INVERT. */
static void smc_position(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct smc_changer *ch = smc_of(dev);
	uint16_t dest = (uint16_t)(c->cdb[4] << 8 | c->cdb[5]);
	if (!transport_ok(ch, c, 2))
		return;
	if (!element_of(ch, dest, NULL)) {
		scsi_fail(c, sense_of(SK_ILLEGAL_REQUEST, ASC_INVALID_ELEMENT_ADDRESS));
		return;
	}
	if (c->cdb[8] & 0x01) {
		scsi_fail(c, sense_invalid_cdb_field(8, 0)); /* no media are turned over */
		return;
	}
	scsi_done(c, 0);
}

#define PREVENT_BYTE 4
#define PREVENT_MASK 0x03

/* PREVENT ALLOW MEDIUM REMOVAL (1Eh): while prevented, the operator cannot take cartridges from the mail slots. */
static void smc_prevent_allow(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct smc_changer *ch = smc_of(dev);
	uint8_t v = c->cdb[PREVENT_BYTE] & PREVENT_MASK;
	if (v > 1) {
		scsi_fail(c, sense_invalid_cdb_field(PREVENT_BYTE, 1));
		return;
	}
	library_set_prevent(ch->lib, scsi_dev_prevent(&ch->dev, c->nexus, v != 0));
	scsi_done(c, 0);
}

/* ------------------------------------------------------------- MOVE MEDIUM */

/* MOVE MEDIUM (A5h, SMC-3). */
#define MOVE_TRANSPORT 2
#define MOVE_SOURCE 4
#define MOVE_DEST 6
#define MOVE_INVERT_BYTE 10

/* The sense for a refused move (library_move's error). */
static struct scsi_sense move_refused(int rc)
{
	switch (rc) {
	case VTL_E_SRC_EMPTY:
		return sense_of(SK_ILLEGAL_REQUEST, ASC_MEDIUM_SOURCE_EMPTY);
	case VTL_E_DST_FULL:
		return sense_of(SK_ILLEGAL_REQUEST, ASC_MEDIUM_DESTINATION_FULL);
	case VTL_E_INVAL:
		return sense_of(SK_ILLEGAL_REQUEST, ASC_INVALID_ELEMENT_ADDRESS);
	case VTL_E_BUSY:
		/* The drive still holds the cartridge threaded (or a host prevents its removal). */
		return sense_of(SK_ILLEGAL_REQUEST, ASC_MEDIUM_REMOVAL_PREVENTED);
	case VTL_E_INCOMPATIBLE:
		return sense_of(SK_ILLEGAL_REQUEST, ASC_INCOMPATIBLE_MEDIUM);
	case VTL_E_INACCESSIBLE:
		/* A mail slot of an open bank (IBM TS3100/3200 SCSI reference: 5/3B/11). */
		return sense_of(SK_ILLEGAL_REQUEST, ASC_MEDIUM_MAGAZINE_NOT_ACCESSIBLE);
	case VTL_E_MEDIUM:
		/*
		 * The drive could not load the cartridge (its files unreadable, or their
		 * repair not durable): what the drive's own LOAD answers, MEDIUM ERROR
		 * (SPC-4 table 27), MEDIA LOAD OR EJECT FAILED (SPC-4 table 28: 53h/00h),
		 * as libraries report a failed move into a drive (Exabyte Magnum 1x7
		 * reference, MOVE MEDIUM errors: 3h/53h/00h); the cartridge stays in its
		 * source element.
		 */
		return sense_of(SK_MEDIUM_ERROR, ASC_MEDIA_LOAD_EJECT_FAILED);
	default:
		return sense_of(SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
	}
}

/* Ends the command (INVALID FIELD IN CDB at the highest offending bit) if byte has bits set outside allowed. */
static bool reserved_set(struct scsi_cmd *c, unsigned byte, uint8_t allowed)
{
	uint8_t bad = c->cdb[byte] & (uint8_t)~allowed;
	if (!bad)
		return false;
	int bit = 7;
	while (!(bad >> bit & 1))
		bit--;
	scsi_fail(c, sense_invalid_cdb_field((uint16_t)byte, bit));
	return true;
}

/* Ends a move or exchange with what the library said. */
static void move_done(struct scsi_cmd *c, int rc)
{
	if (rc != VTL_OK)
		scsi_fail(c, move_refused(rc));
	else
		scsi_done(c, 0);
}

static void smc_move_medium(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct smc_changer *ch = smc_of(dev);
	if (c->cdb[MOVE_INVERT_BYTE] & 0x01) {
		scsi_fail(c, sense_invalid_cdb_field(MOVE_INVERT_BYTE, 0));
		return;
	}
	if (!transport_ok(ch, c, MOVE_TRANSPORT))
		return;
	char err[256];
	move_done(c, library_move(ch->lib, cdb_address(c, MOVE_SOURCE), cdb_address(c, MOVE_DEST), LIBRARY_ACTOR_HOST,
				  err, sizeof err));
}

/* EXCHANGE MEDIUM (A6h, SMC-3): transport, source, first and second destination, byte 10 INV2 (bit 1) INV1 (bit 0). */
#define XCHG_TRANSPORT 2
#define XCHG_SOURCE 4
#define XCHG_DEST1 6
#define XCHG_DEST2 8
#define XCHG_INV_BYTE 10
#define XCHG_INV1 0x01
#define XCHG_INV2 0x02

static void smc_exchange_medium(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct smc_changer *ch = smc_of(dev);
	/* No medium is turned over: the library has no two-sided media. */
	if (reserved_set(c, 1, 0) || reserved_set(c, XCHG_INV_BYTE, XCHG_INV1 | XCHG_INV2))
		return;
	if (c->cdb[XCHG_INV_BYTE] & (XCHG_INV1 | XCHG_INV2)) {
		scsi_fail(c, sense_invalid_cdb_field(XCHG_INV_BYTE, (c->cdb[XCHG_INV_BYTE] & XCHG_INV2) ? 1 : 0));
		return;
	}
	if (!transport_ok(ch, c, XCHG_TRANSPORT))
		return;
	char err[256];
	move_done(c, library_exchange(ch->lib, cdb_address(c, XCHG_SOURCE), cdb_address(c, XCHG_DEST1),
				      cdb_address(c, XCHG_DEST2), LIBRARY_ACTOR_HOST, err, sizeof err));
}

/* OPEN/CLOSE IMPORT/EXPORT ELEMENT (1Bh, SMC-3): bytes 2..3 element, byte 4 bits 4..0 ACTION CODE. */
#define OCIE_ELEMENT 2
#define OCIE_ACTION_BYTE 4
#define OCIE_ACTION_MASK 0x1F
#define OCIE_OPEN 0x00
#define OCIE_CLOSE 0x01

static void smc_open_close_ie(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct smc_changer *ch = smc_of(dev);
	uint8_t action = c->cdb[OCIE_ACTION_BYTE] & OCIE_ACTION_MASK;
	if (reserved_set(c, 1, 0) || reserved_set(c, OCIE_ACTION_BYTE, OCIE_ACTION_MASK))
		return;
	if (action != OCIE_OPEN && action != OCIE_CLOSE) {
		scsi_fail(c, sense_invalid_cdb_field(OCIE_ACTION_BYTE, 4));
		return;
	}
	char err[256];
	int rc = library_ie_set_open(ch->lib, cdb_address(c, OCIE_ELEMENT), action == OCIE_OPEN, LIBRARY_ACTOR_HOST,
				     err, sizeof err);
	if (rc == VTL_E_BUSY) /* a prevent keeps a full bank shut (IBM TS3100/3200, Dell TL2000 SCSI references) */
		scsi_fail(c, sense_of(SK_ILLEGAL_REQUEST, ASC_MEDIUM_REMOVAL_PREVENTED));
	else
		move_done(c, rc);
}

/* ----------------------------------------------------- READ ELEMENT STATUS */

/* READ ELEMENT STATUS (B8h, SMC-3) CDB. */
#define RES_VOLTAG 0x10
#define RES_TYPE_MASK 0x0F
#define RES_START 2
#define RES_COUNT 4
#define RES_FLAGS 6
#define RES_DVCID 0x01
#define RES_CURDATA 0x02
#define RES_ALLOC 7 /* 3 bytes */

/* Data layout (SMC-3, READ ELEMENT STATUS): headers, descriptors, volume tags, device identifiers. */
#define ESH_LEN 8          /* element status data header */
#define ESP_LEN 8          /* element status page header */
#define ESP_PVOLTAG 0x80
#define ED_BASE_LEN 12     /* element descriptor without tags or identifier */
#define VOLTAG_LEN 36      /* 32-byte volume identifier, 2 reserved, 2-byte sequence number */
#define VOLTAG_ID_LEN 32
#define DVCID_HDR 4        /* code set, identifier type, reserved, identifier length */
#define DVCID_SERIAL_LEN 32
#define DVCID_ID_LEN (8 + 16 + DVCID_SERIAL_LEN) /* T10 vendor identification: vendor, product, serial */
#define CODE_SET_ASCII 0x02
#define ID_TYPE_T10_VENDOR 0x01
/* Byte 2 flags of a descriptor. */
#define ED_FULL 0x01
#define ED_IMPEXP 0x02
#define ED_ACCESS 0x08
#define ED_EXENAB 0x10
#define ED_INENAB 0x20
/* Byte 6 of a data transfer element descriptor. */
#define ED_LU_VALID 0x10
#define ED_LUN_MASK 0x07
/* Byte 9. */
#define ED_SVALID 0x80

struct elem_set {
	struct library_element *e;
	size_t n, cap;
	enum cat_elem_type type;
	uint16_t start;
	int rc;
};

static int collect(const struct library_element *le, void *arg)
{
	struct elem_set *s = arg;
	if (le->e.address < s->start)
		return 0;
	if (vtl_grow((void **)&s->e, &s->cap, s->n, sizeof *s->e)) {
		s->rc = VTL_E_NOMEM;
		return 1;
	}
	s->e[s->n++] = *le;
	return 0;
}

static void be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void be24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static void put_padded(uint8_t *dst, const char *s, size_t width)
{
	size_t n = strnlen(s, width);
	memset(dst, ' ', width);
	memcpy(dst, s, n);
}

/* The length of one descriptor of element type t in this report. */
static size_t desc_len(enum cat_elem_type t, bool voltag, bool dvcid)
{
	return ED_BASE_LEN + (voltag ? VOLTAG_LEN : 0) + (dvcid && t == CAT_ELEM_DRIVE ? DVCID_HDR + DVCID_ID_LEN : 0);
}

/* Writes the descriptor of le at p (desc_len bytes). */
static void put_desc(uint8_t *p, const struct library_element *le, bool voltag, bool dvcid)
{
	const struct cat_element *e = &le->e;
	be16(p, e->address);
	uint8_t f = e->full ? ED_FULL : 0;
	if (e->type != CAT_ELEM_TRANSPORT && le->accessible)
		f |= ED_ACCESS;
	if (e->type == CAT_ELEM_IE)
		f |= ED_INENAB | ED_EXENAB | (le->imported ? ED_IMPEXP : 0);
	p[2] = f;
	if (e->type == CAT_ELEM_DRIVE && le->lun >= 0 && le->lun <= ED_LUN_MASK)
		p[6] = (uint8_t)(ED_LU_VALID | le->lun);
	if (e->full && e->source != CAT_NO_ELEMENT) {
		p[9] = ED_SVALID;
		be16(p + 10, e->source);
	}
	size_t at = ED_BASE_LEN;
	if (voltag) {
		/* Volume tag: the barcode, space padded; all spaces when the element is empty. */
		put_padded(p + at, e->full ? e->barcode : "", VOLTAG_ID_LEN);
		at += VOLTAG_LEN;
	}
	if (dvcid && e->type == CAT_ELEM_DRIVE) {
		p[at] = CODE_SET_ASCII;
		p[at + 1] = ID_TYPE_T10_VENDOR;
		p[at + 3] = DVCID_ID_LEN;
		put_padded(p + at + DVCID_HDR, le->ident.vendor, 8);
		put_padded(p + at + DVCID_HDR + 8, le->ident.product, 16);
		put_padded(p + at + DVCID_HDR + 24, le->ident.serial, DVCID_SERIAL_LEN);
	}
}

static void smc_read_element_status(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct smc_changer *ch = smc_of(dev);
	uint8_t type = c->cdb[1] & RES_TYPE_MASK;
	bool voltag = c->cdb[1] & RES_VOLTAG;
	bool dvcid = c->cdb[RES_FLAGS] & RES_DVCID;
	uint16_t start = (uint16_t)(c->cdb[RES_START] << 8 | c->cdb[RES_START + 1]);
	uint16_t count = (uint16_t)(c->cdb[RES_COUNT] << 8 | c->cdb[RES_COUNT + 1]);
	size_t alloc = (size_t)c->cdb[RES_ALLOC] << 16 | (size_t)c->cdb[RES_ALLOC + 1] << 8 | c->cdb[RES_ALLOC + 2];
	if (type > CAT_ELEM_DRIVE) {
		scsi_fail(c, sense_invalid_cdb_field(1, 3));
		return;
	}
	if (c->cdb[1] & 0xE0) {
		scsi_fail(c, sense_invalid_cdb_field(1, 7));
		return;
	}
	if (c->cdb[RES_FLAGS] & ~(RES_DVCID | RES_CURDATA)) {
		scsi_fail(c, sense_invalid_cdb_field(RES_FLAGS, 7));
		return;
	}
	struct elem_set s = {.type = (enum cat_elem_type)type, .start = start};
	int rc = library_elements(ch->lib, (enum cat_elem_type)type, collect, &s);
	if (rc != VTL_OK || s.rc != VTL_OK) {
		free(s.e);
		scsi_fail(c, sense_of(SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE));
		return;
	}
	if (s.n > count)
		s.n = count;
	/* Size of the whole answer: one page per run of elements of the same type. */
	size_t total = ESH_LEN;
	for (size_t i = 0; i < s.n; i++) {
		if (i == 0 || s.e[i].e.type != s.e[i - 1].e.type)
			total += ESP_LEN;
		total += desc_len(s.e[i].e.type, voltag, dvcid);
	}
	uint8_t *b = calloc(1, total);
	if (!b) {
		free(s.e);
		scsi_fail(c, sense_of(SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE));
		return;
	}
	/* The header counts the whole answer, whatever the allocation length cuts (SMC-3, READ ELEMENT STATUS). */
	be16(b, s.n ? s.e[0].e.address : 0);
	be16(b + 2, (uint16_t)s.n);
	be24(b + 5, (uint32_t)(total - ESH_LEN));
	size_t at = ESH_LEN, page = 0;
	for (size_t i = 0; i < s.n; i++) {
		enum cat_elem_type t = s.e[i].e.type;
		size_t dl = desc_len(t, voltag, dvcid);
		if (i == 0 || t != s.e[i - 1].e.type) {
			page = at;
			b[page] = (uint8_t)t;
			b[page + 1] = voltag ? ESP_PVOLTAG : 0;
			be16(b + page + 2, (uint16_t)dl);
			at += ESP_LEN;
		}
		put_desc(b + at, &s.e[i], voltag, dvcid);
		at += dl;
		be24(b + page + 5, (uint32_t)(at - page - ESP_LEN));
	}
	scsi_data_in(c, b, total, alloc);
	free(b);
	free(s.e);
}

/* ----------------------------------------------------- as a logical unit */

static void unit_execute(void *dev, struct scsi_cmd *c)
{
	smc_execute(dev, c);
}

static void unit_reset(void *dev)
{
	smc_reset(dev);
}

static void unit_nexus_lost(void *dev, uint64_t nexus)
{
	smc_nexus_lost(dev, nexus);
}

const struct scsi_unit_ops smc_unit_ops = {
	.execute = unit_execute, .reset = unit_reset, .nexus_lost = unit_nexus_lost,
};
