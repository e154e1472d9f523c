/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/scsi/reserve.h"

#include <string.h>

#include "common/scsi_proto.h"
#include "vtl/scsi/device.h"

/* RESERVE / RELEASE (6) and (10), byte 1 (SPC-2 7.17, 7.18, 7.21, 7.22): fields this device refuses. */
#define RR_FLAGS_BYTE 1
#define RR_3RDPTY_BIT 4
#define RR_LONGID_BIT 1 /* (10) forms only */
#define RR_EXTENT_BIT 0 /* obsolete element/extent reservations */

/* PREVENT ALLOW MEDIUM REMOVAL: the PREVENT field (SPC-4 6.13, byte 4 bits 1..0). */
#define PREVENT_BYTE 4
#define PREVENT_MASK 0x03

/* PERSISTENT RESERVE IN (SPC-4 6.16). */
#define PRI_ALLOC_BYTE 7 /* 2 bytes */
enum { PRI_READ_KEYS = 0, PRI_READ_RESERVATION = 1, PRI_REPORT_CAPABILITIES = 2, PRI_READ_FULL_STATUS = 3 };
#define PRI_HEADER 8           /* PRGENERATION (4), ADDITIONAL LENGTH (4) */
#define PRI_KEY_LEN 8
#define PRI_RES_DESC_LEN 16    /* READ RESERVATION descriptor (6.16.3) */
#define PRI_RES_SCOPE_TYPE 13  /* its SCOPE (7..4) / TYPE (3..0) byte */
/* REPORT CAPABILITIES parameter data (6.16.4, table 179). */
#define CAP_LEN 8
#define CAP_CRH 0x10           /* byte 2: compatible reservation handling (5.9.3) */
#define CAP_TMV 0x80           /* byte 3: the type mask is valid */
#define CAP_ALLOW_COMMANDS 0x30 /* byte 3 bits 6..4 = 011b: TUR allowed under WE/EA, the table 64 reads under WE */
#define CAP_MASK_WR_EX_AR 0x80 /* byte 4 */
#define CAP_MASK_EX_AC_RO 0x40
#define CAP_MASK_WR_EX_RO 0x20
#define CAP_MASK_EX_AC 0x08
#define CAP_MASK_WR_EX 0x02
#define CAP_MASK_EX_AC_AR 0x01 /* byte 5 */
/* READ FULL STATUS descriptor (6.16.5, table 181). */
#define FS_DESC_HEADER 24
#define FS_FLAGS 12            /* ALL_TG_PT (bit 1), R_HOLDER (bit 0) */
#define FS_R_HOLDER 0x01
#define FS_SCOPE_TYPE 13
#define FS_REL_PORT 18         /* RELATIVE TARGET PORT IDENTIFIER, 2 bytes */
#define FS_ADDITIONAL_LEN 20   /* 4 bytes: the TransportID's length */
#define REL_PORT_ID 1          /* the one target port */
/*
 * TransportID (SPC-4 7.6.4): the front end's (iSCSI: the initiator name
 * and ISID); when it gave none (TCMU, tests), the nexus id goes in a
 * 24-byte TransportID with PROTOCOL IDENTIFIER Fh (no specific protocol,
 * table 444), bytes 4..11.
 */
#define TID_LEN 24
#define TID_PROTO_NONE 0x0F
#define TID_ID_AT 4
#define FS_DESC_MAX (FS_DESC_HEADER + SCSI_TID_MAX)

/* PERSISTENT RESERVE OUT (SPC-4 6.17). */
enum { PRO_REGISTER = 0, PRO_RESERVE = 1, PRO_RELEASE = 2, PRO_CLEAR = 3, PRO_PREEMPT = 4, PRO_PREEMPT_ABORT = 5,
       PRO_REGISTER_IGNORE = 6 };
#define PRO_SCOPE_TYPE_BYTE 2  /* SCOPE bits 7..4, TYPE bits 3..0 */
#define PRO_SCOPE_BIT 7
#define PRO_TYPE_BIT 3
#define PRO_PLL_BYTE 5         /* PARAMETER LIST LENGTH, 4 bytes */
#define SCOPE_LU 0x0
/* Parameter list (6.17.3, table 185). */
#define PRP_LEN 24
#define PRP_KEY 0
#define PRP_SA_KEY 8
#define PRP_FLAGS 20
#define PRP_SPEC_I_PT_BIT 3
#define PRP_ALL_TG_PT_BIT 2
#define PRP_APTPL_BIT 0

/* ------------------------------------------------------------------ state */

static int reg_find(const struct scsi_res *r, uint64_t nexus)
{
	for (unsigned i = 0; i < r->n_reg; i++)
		if (r->reg[i].nexus == nexus)
			return (int)i;
	return -1;
}

static bool type_valid(uint8_t t)
{
	return t == PR_WRITE_EXCLUSIVE || t == PR_EXCLUSIVE_ACCESS || t == PR_WRITE_EXCLUSIVE_RO ||
	       t == PR_EXCLUSIVE_ACCESS_RO || t == PR_WRITE_EXCLUSIVE_AR || t == PR_EXCLUSIVE_ACCESS_AR;
}

static bool type_all_registrants(uint8_t t)
{
	return t == PR_WRITE_EXCLUSIVE_AR || t == PR_EXCLUSIVE_ACCESS_AR;
}

/* Registrants Only or All Registrants: a registered nexus may do everything (SPC-4 5.9.10). */
static bool type_registrants(uint8_t t)
{
	return t == PR_WRITE_EXCLUSIVE_RO || t == PR_EXCLUSIVE_ACCESS_RO || type_all_registrants(t);
}

static bool type_write_exclusive(uint8_t t)
{
	return t == PR_WRITE_EXCLUSIVE || t == PR_WRITE_EXCLUSIVE_RO || t == PR_WRITE_EXCLUSIVE_AR;
}

/* Whether nexus is a persistent reservation holder (every registrant is one under the all-registrants types). */
static bool pr_holder(const struct scsi_res *r, uint64_t nexus)
{
	if (!r->pr_held)
		return false;
	return type_all_registrants(r->pr_type) ? reg_find(r, nexus) >= 0 : r->pr_nexus == nexus;
}

/* Removes registration i; a reservation that rested on it goes with it (SPC-4 5.9.11.2). */
static void reg_drop(struct scsi_res *r, unsigned i)
{
	uint64_t nexus = r->reg[i].nexus;
	r->reg[i] = r->reg[--r->n_reg];
	if (r->pr_held && (type_all_registrants(r->pr_type) ? r->n_reg == 0 : r->pr_nexus == nexus))
		r->pr_held = false;
}

/* Raises cond for every registered nexus but except. */
static void ua_registrants(struct scsi_dev *dev, unsigned cond, uint64_t except)
{
	for (unsigned i = 0; i < dev->res.n_reg; i++)
		if (dev->res.reg[i].nexus != except)
			ua_raise(&dev->ua, dev->res.reg[i].nexus, cond);
}

/*
 * Removes the registrations that match (every one but the issuer's when
 * key_only is false; those with key, the issuer's too unless keep_issuer,
 * when true); each nexus that lost one, other than the issuer, is told
 * REGISTRATIONS PREEMPTED (SPC-4 5.9.11.4). Returns how many went.
 */
static unsigned reg_preempt(struct scsi_dev *dev, bool key_only, uint64_t key, uint64_t issuer, bool keep_issuer)
{
	struct scsi_res *r = &dev->res;
	unsigned n = 0;
	for (unsigned i = 0; i < r->n_reg;) {
		uint64_t nexus = r->reg[i].nexus;
		bool match = key_only ? r->reg[i].key == key && !(keep_issuer && nexus == issuer) : nexus != issuer;
		if (!match) {
			i++;
			continue;
		}
		reg_drop(r, i); /* moves the last entry to i */
		if (nexus != issuer)
			ua_raise(&dev->ua, nexus, UA_REGISTRATIONS_PREEMPTED);
		n++;
	}
	return n;
}

void res_init(struct scsi_res *r)
{
	memset(r, 0, sizeof *r);
}

bool res_holds(const struct scsi_res *r, uint64_t nexus, bool persistent_only)
{
	return pr_holder(r, nexus) || (!persistent_only && r->spc2_held && r->spc2_nexus == nexus);
}

/* Every nexus holding a reservation before a change, so that the loss observer hears who lost one. */
struct res_holders {
	uint64_t nexus[RES_MAX_REG + 1];
	unsigned n;
};

static void holders_of(const struct scsi_res *r, struct res_holders *h)
{
	h->n = 0;
	if (r->spc2_held)
		h->nexus[h->n++] = r->spc2_nexus;
	if (r->pr_held && type_all_registrants(r->pr_type))
		for (unsigned i = 0; i < r->n_reg; i++)
			h->nexus[h->n++] = r->reg[i].nexus;
	else if (r->pr_held)
		h->nexus[h->n++] = r->pr_nexus;
}

/* Tells the observer of each nexus of before that holds nothing now; a PREEMPT's issuer never loses by it. */
static void tell_losses(const struct scsi_res *r, const struct res_holders *before, bool preempt, uint64_t issuer)
{
	if (!r->on_loss)
		return;
	for (unsigned i = 0; i < before->n; i++)
		if (!res_holds(r, before->nexus[i], false))
			r->on_loss(r->loss_arg, before->nexus[i], preempt && before->nexus[i] != issuer);
}

bool res_conflict(const struct scsi_res *r, const struct scsi_cmd *c, unsigned op_flags)
{
	if ((op_flags & OP_RES_PREVENT) && !(c->cdb[PREVENT_BYTE] & PREVENT_MASK))
		op_flags |= OP_RES_ALLOWED | OP_RES_SPC2_OK; /* allowing removal never conflicts */
	if (r->spc2_held)
		return r->spc2_nexus != c->nexus && !(op_flags & OP_RES_SPC2_OK);
	if (!r->pr_held || pr_holder(r, c->nexus) || (op_flags & OP_RES_ALLOWED))
		return false;
	if (type_registrants(r->pr_type) && reg_find(r, c->nexus) >= 0)
		return false;
	return !((op_flags & OP_RES_READ) && type_write_exclusive(r->pr_type));
}

void res_nexus_lost(struct scsi_res *r, uint64_t nexus)
{
	struct res_holders before;
	holders_of(r, &before);
	if (r->spc2_held && r->spc2_nexus == nexus)
		r->spc2_held = false;
	tell_losses(r, &before, false, nexus);
}

void res_reset(struct scsi_res *r)
{
	struct res_holders before;
	holders_of(r, &before);
	r->spc2_held = false;
	tell_losses(r, &before, false, 0);
}

static void conflict(struct scsi_cmd *c)
{
	c->status = SCSI_RESERVATION_CONFLICT;
	c->data_len = 0;
}

/* ------------------------------------------------------------ SPC-2 reservations */

/* The obsolete third-party and extent forms are refused: INVALID FIELD IN CDB at the bit. */
static bool rr_fields_ok(struct scsi_cmd *c, bool ten)
{
	uint8_t f = c->cdb[RR_FLAGS_BYTE];
	int bad = (f & 1u << RR_3RDPTY_BIT)                 ? RR_3RDPTY_BIT
		  : (ten && (f & 1u << RR_LONGID_BIT)) ? RR_LONGID_BIT
		  : (f & 1u << RR_EXTENT_BIT)                 ? RR_EXTENT_BIT
							      : -1;
	if (bad < 0)
		return true;
	scsi_fail(c, sense_invalid_cdb_field(RR_FLAGS_BYTE, bad));
	return false;
}

/*
 * RESERVE or RELEASE while persistent reservations are in use (SPC-4 5.9.3,
 * CRH=1): from a holder, or a registrant under a registrants type, it is
 * GOOD and changes nothing; from anyone else RESERVATION CONFLICT. Returns
 * false when the command is answered.
 */
static bool rr_past_pr(const struct scsi_res *r, struct scsi_cmd *c)
{
	if (!r->pr_held && r->n_reg == 0)
		return true;
	if (pr_holder(r, c->nexus) || (r->pr_held && type_registrants(r->pr_type) && reg_find(r, c->nexus) >= 0))
		scsi_done(c, 0);
	else
		conflict(c);
	return false;
}

void spc_reserve(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct scsi_res *r = &dev->res;
	if (!rr_fields_ok(c, c->cdb[0] == SCSI_OP_RESERVE10) || !rr_past_pr(r, c))
		return;
	if (r->spc2_held && r->spc2_nexus != c->nexus) {
		conflict(c);
		return;
	}
	r->spc2_held = true;
	r->spc2_nexus = c->nexus;
	scsi_done(c, 0);
}

void spc_release(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct scsi_res *r = &dev->res;
	if (!rr_fields_ok(c, c->cdb[0] == SCSI_OP_RELEASE10) || !rr_past_pr(r, c))
		return;
	/* A RELEASE from a nexus that holds nothing is GOOD and changes nothing (SPC-2 7.17). */
	struct res_holders before;
	holders_of(r, &before);
	if (r->spc2_held && r->spc2_nexus == c->nexus)
		r->spc2_held = false;
	tell_losses(r, &before, false, c->nexus);
	scsi_done(c, 0);
}

/* ----------------------------------------------------------- PERSISTENT RESERVE IN */

static size_t pri_read_keys(const struct scsi_res *r, uint8_t *b)
{
	for (unsigned i = 0; i < r->n_reg; i++)
		be_put(b + PRI_HEADER + i * PRI_KEY_LEN, r->reg[i].key, PRI_KEY_LEN);
	be_put(b + 4, r->n_reg * PRI_KEY_LEN, 4);
	return PRI_HEADER + r->n_reg * PRI_KEY_LEN;
}

static size_t pri_read_reservation(const struct scsi_res *r, uint8_t *b)
{
	if (!r->pr_held)
		return PRI_HEADER;
	/* Under the all-registrants types the reservation has no one key: zero (SPC-4 6.16.3). */
	int h = reg_find(r, r->pr_nexus);
	uint64_t key = type_all_registrants(r->pr_type) || h < 0 ? 0 : r->reg[h].key;
	be_put(b + PRI_HEADER, key, PRI_KEY_LEN);
	b[PRI_HEADER + PRI_RES_SCOPE_TYPE] = (uint8_t)(SCOPE_LU << 4 | r->pr_type);
	be_put(b + 4, PRI_RES_DESC_LEN, 4);
	return PRI_HEADER + PRI_RES_DESC_LEN;
}

static size_t pri_report_capabilities(uint8_t *b)
{
	be_put(b, CAP_LEN, 2);
	b[2] = CAP_CRH; /* SIP_C, ATP_C, PTPL_C 0: one port, nothing kept across a restart */
	b[3] = CAP_TMV | CAP_ALLOW_COMMANDS;
	b[4] = CAP_MASK_WR_EX_AR | CAP_MASK_EX_AC_RO | CAP_MASK_WR_EX_RO | CAP_MASK_EX_AC | CAP_MASK_WR_EX;
	b[5] = CAP_MASK_EX_AC_AR;
	return CAP_LEN;
}

static size_t pri_read_full_status(const struct scsi_res *r, uint8_t *b)
{
	size_t at = PRI_HEADER;
	for (unsigned i = 0; i < r->n_reg; i++) {
		uint8_t *d = b + at;
		be_put(d, r->reg[i].key, PRI_KEY_LEN);
		if (pr_holder(r, r->reg[i].nexus)) {
			d[FS_FLAGS] = FS_R_HOLDER;
			d[FS_SCOPE_TYPE] = (uint8_t)(SCOPE_LU << 4 | r->pr_type);
		}
		be_put(d + FS_REL_PORT, REL_PORT_ID, 2);
		const struct scsi_tid *tid = &r->reg[i].tid;
		size_t tl = tid->len ? tid->len : TID_LEN;
		be_put(d + FS_ADDITIONAL_LEN, (uint32_t)tl, 4);
		if (tid->len) {
			memcpy(d + FS_DESC_HEADER, tid->id, tid->len);
		} else {
			d[FS_DESC_HEADER] = TID_PROTO_NONE;
			be_put(d + FS_DESC_HEADER + TID_ID_AT, r->reg[i].nexus, 8);
		}
		at += FS_DESC_HEADER + tl;
	}
	be_put(b + 4, at - PRI_HEADER, 4);
	return at;
}

void spc_pr_in(struct scsi_dev *dev, struct scsi_cmd *c)
{
	const struct scsi_res *r = &dev->res;
	/* While an SPC-2 reservation is held, every PERSISTENT RESERVE command conflicts (SPC-2 5.5.1). */
	if (r->spc2_held) {
		conflict(c);
		return;
	}
	uint8_t b[PRI_HEADER + RES_MAX_REG * FS_DESC_MAX];
	memset(b, 0, sizeof b);
	be_put(b, r->generation, 4);
	size_t len;
	switch (c->cdb[SCSI_CDB_SA_BYTE] & SCSI_CDB_SA_MASK) {
	case PRI_READ_KEYS:
		len = pri_read_keys(r, b);
		break;
	case PRI_READ_RESERVATION:
		len = pri_read_reservation(r, b);
		break;
	case PRI_REPORT_CAPABILITIES:
		len = pri_report_capabilities(b);
		break;
	case PRI_READ_FULL_STATUS:
		len = pri_read_full_status(r, b);
		break;
	default: /* the dispatch table lists only the four */
		scsi_fail(c, sense_invalid_cdb_field(SCSI_CDB_SA_BYTE, 4));
		return;
	}
	scsi_data_in(c, b, len, be_get(c->cdb + PRI_ALLOC_BYTE, 2));
}

/* ---------------------------------------------------------- PERSISTENT RESERVE OUT */

static void pro_register(struct scsi_dev *dev, struct scsi_cmd *c, uint64_t key, uint64_t sa_key, bool ignore)
{
	struct scsi_res *r = &dev->res;
	int i = reg_find(r, c->nexus);
	if (i < 0) {
		if (!ignore && key != 0) {
			conflict(c);
			return;
		}
		if (sa_key == 0) { /* unregistering what is not registered: nothing happens (SPC-4 5.9.7) */
			scsi_done(c, 0);
			return;
		}
		if (r->n_reg == RES_MAX_REG) {
			scsi_fail(c, sense_of(SK_ILLEGAL_REQUEST, ASC_INSUFFICIENT_REGISTRATION));
			return;
		}
		r->reg[r->n_reg].nexus = c->nexus;
		r->reg[r->n_reg].key = sa_key;
		r->reg[r->n_reg].tid.len = 0;
		if (c->tid && c->tid->len <= SCSI_TID_MAX)
			r->reg[r->n_reg].tid = *c->tid;
		r->n_reg++;
	} else if (!ignore && key != r->reg[i].key) {
		conflict(c);
		return;
	} else if (sa_key != 0) {
		r->reg[i].key = sa_key;
	} else {
		/* A registrants-only holder that leaves releases the reservation, and the others learn it (5.9.11.2). */
		bool tell = r->pr_held && r->pr_nexus == c->nexus && type_registrants(r->pr_type) &&
			    !type_all_registrants(r->pr_type);
		reg_drop(r, (unsigned)i);
		if (tell)
			ua_registrants(dev, UA_RESERVATIONS_RELEASED, c->nexus);
	}
	r->generation++;
	scsi_done(c, 0);
}

static void pro_reserve(struct scsi_res *r, struct scsi_cmd *c, uint8_t type)
{
	if (!r->pr_held) {
		r->pr_held = true;
		r->pr_nexus = c->nexus;
		r->pr_type = type;
	} else if (!pr_holder(r, c->nexus) || r->pr_type != type) {
		conflict(c); /* held by another, or by this nexus with another type (SPC-4 5.9.9) */
		return;
	}
	scsi_done(c, 0);
}

static void pro_release(struct scsi_dev *dev, struct scsi_cmd *c, uint8_t type)
{
	struct scsi_res *r = &dev->res;
	if (!pr_holder(r, c->nexus)) { /* nothing held, or held by another: GOOD, nothing changes (5.9.11.2) */
		scsi_done(c, 0);
		return;
	}
	if (r->pr_type != type) {
		scsi_fail(c, sense_of(SK_ILLEGAL_REQUEST, ASC_INVALID_RELEASE_OF_PR));
		return;
	}
	r->pr_held = false;
	if (type_registrants(type))
		ua_registrants(dev, UA_RESERVATIONS_RELEASED, c->nexus);
	scsi_done(c, 0);
}

static void pro_clear(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct scsi_res *r = &dev->res;
	ua_registrants(dev, UA_RESERVATIONS_PREEMPTED, c->nexus);
	r->n_reg = 0;
	r->pr_held = false;
	r->generation++;
	scsi_done(c, 0);
}

/* PREEMPT and PREEMPT AND ABORT (SPC-4 5.9.11.4): the core runs one command at a time, so there is nothing to abort. */
static void pro_preempt(struct scsi_dev *dev, struct scsi_cmd *c, uint64_t sa_key, uint8_t type)
{
	struct scsi_res *r = &dev->res;
	int h = r->pr_held ? reg_find(r, r->pr_nexus) : -1;
	bool all_reg = r->pr_held && type_all_registrants(r->pr_type);
	if (r->pr_held && (all_reg ? sa_key == 0 : h >= 0 && r->reg[h].key == sa_key)) {
		/* Preempting the reservation: the issuer holds it next, with the type it asks for. */
		uint8_t old_type = r->pr_type;
		reg_preempt(dev, !all_reg, sa_key, c->nexus, true);
		r->pr_held = true;
		r->pr_nexus = c->nexus;
		r->pr_type = type;
		if (type != old_type)
			ua_registrants(dev, UA_RESERVATIONS_RELEASED, c->nexus);
	} else {
		/* Removing registrations: a zero key names none (5.9.11.4.3). */
		if (sa_key == 0) {
			scsi_fail(c, sense_invalid_param_field(PRP_SA_KEY, -1));
			return;
		}
		if (reg_preempt(dev, true, sa_key, c->nexus, false) == 0) {
			conflict(c);
			return;
		}
	}
	r->generation++;
	scsi_done(c, 0);
}

static void pr_out(struct scsi_dev *dev, struct scsi_cmd *c);

void spc_pr_out(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct res_holders before;
	holders_of(&dev->res, &before);
	pr_out(dev, c);
	uint8_t sa = c->cdb[SCSI_CDB_SA_BYTE] & SCSI_CDB_SA_MASK;
	tell_losses(&dev->res, &before, sa == PRO_PREEMPT || sa == PRO_PREEMPT_ABORT, c->nexus);
}

/* PERSISTENT RESERVE OUT itself; spc_pr_out tells the observer what it took from whom. */
static void pr_out(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct scsi_res *r = &dev->res;
	if (r->spc2_held) { /* SPC-2 5.5.1, as for PERSISTENT RESERVE IN */
		conflict(c);
		return;
	}
	uint8_t sa = c->cdb[SCSI_CDB_SA_BYTE] & SCSI_CDB_SA_MASK;
	uint8_t scope = c->cdb[PRO_SCOPE_TYPE_BYTE] >> 4;
	uint8_t type = c->cdb[PRO_SCOPE_TYPE_BYTE] & 0x0F;
	bool uses_type = sa == PRO_RESERVE || sa == PRO_RELEASE || sa == PRO_PREEMPT || sa == PRO_PREEMPT_ABORT;
	if (uses_type && scope != SCOPE_LU) {
		scsi_fail(c, sense_invalid_cdb_field(PRO_SCOPE_TYPE_BYTE, PRO_SCOPE_BIT));
		return;
	}
	if (uses_type && !type_valid(type)) {
		scsi_fail(c, sense_invalid_cdb_field(PRO_SCOPE_TYPE_BYTE, PRO_TYPE_BIT));
		return;
	}
	uint64_t pll = be_get(c->cdb + PRO_PLL_BYTE, 4);
	uint8_t p[PRP_LEN];
	if (pll < PRP_LEN || scsi_data_out(c, p, sizeof p) < PRP_LEN) {
		scsi_fail(c, sense_of(SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH));
		return;
	}
	/* Only one target port: no initiator ports to specify (SIP_C=0), none other to register through (ATP_C=0). */
	bool registering = sa == PRO_REGISTER || sa == PRO_REGISTER_IGNORE;
	int bad = (p[PRP_FLAGS] & 1u << PRP_SPEC_I_PT_BIT)		    ? PRP_SPEC_I_PT_BIT
		  : registering && (p[PRP_FLAGS] & 1u << PRP_ALL_TG_PT_BIT) ? PRP_ALL_TG_PT_BIT
		  : registering && (p[PRP_FLAGS] & 1u << PRP_APTPL_BIT)	    ? PRP_APTPL_BIT /* PTPL_C=0 (6.17.3) */
									    : -1;
	if (bad >= 0) {
		scsi_fail(c, sense_invalid_param_field(PRP_FLAGS, bad));
		return;
	}
	if (pll != PRP_LEN) { /* 24 exactly without SPEC_I_PT (SPC-4 6.17.3) */
		scsi_fail(c, sense_of(SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH));
		return;
	}
	uint64_t key = be_get(p + PRP_KEY, 8), sa_key = be_get(p + PRP_SA_KEY, 8);
	if (registering) {
		pro_register(dev, c, key, sa_key, sa == PRO_REGISTER_IGNORE);
		return;
	}
	/* Every other service action needs a registered nexus and its key (SPC-4 5.9.8). */
	int i = reg_find(r, c->nexus);
	if (i < 0 || r->reg[i].key != key) {
		conflict(c);
		return;
	}
	switch (sa) {
	case PRO_RESERVE:
		pro_reserve(r, c, type);
		break;
	case PRO_RELEASE:
		pro_release(dev, c, type);
		break;
	case PRO_CLEAR:
		pro_clear(dev, c);
		break;
	case PRO_PREEMPT:
	case PRO_PREEMPT_ABORT:
		pro_preempt(dev, c, sa_key, type);
		break;
	default: /* the dispatch table lists only these */
		scsi_fail(c, sense_invalid_cdb_field(SCSI_CDB_SA_BYTE, 4));
		break;
	}
}
