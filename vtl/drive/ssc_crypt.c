/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tape data encryption (SSC-4 4.2.21, 8.5): SECURITY PROTOCOL IN and OUT
 * (SPC-4 6.40, 6.41) with protocol 00h (security protocol information) and
 * 20h (tape data encryption), and the parameters they set: which key a
 * nexus's writes are encrypted with and its reads decrypted with, and when
 * the key goes (CKOD at unload, the nexus's end for local parameters, a
 * reset for all). The cipher itself is the backend's (backend/crypt.h).
 *
 * Both models offer one algorithm (index 1, AES-256-GCM, 32-byte keys), a
 * U-KAD of up to 32 and an A-KAD of up to 12 bytes, plaintext keys only,
 * LOCK and CKOD, public, local and all-nexus scope; no external (EXTERNAL)
 * mode and no RAW reads. An HP model adds what HP's LTO-5 reference gives
 * its pages 0010h and 0012h: EXTDECC 10b, MAC_C, and CKORP_C and CKORL_C
 * (the key goes when the reservation of the nexus that set it is preempted
 * or lost: reserve.c tells ssc_crypt_res_lost). For the IBM model no IBM
 * text giving those bits was found: it keeps them 0 and refuses the bits.
 * The status page's VCELB comes from the first encrypted block of the
 * medium, which ssc_crypt_written keeps in a private MAM attribute.
 *
 * LOCK (SSC-3/SSC-4 4.2.21.11) pins the nexus that sent the SET, not the
 * parameters: every set gets a new generation whenever it is established or
 * released, the lock keeps the set and generation the nexus used when its
 * SET ended, and the nexus's WRITE, READ and VERIFY fail with DATA PROTECT,
 * DATA ENCRYPTION KEY INSTANCE COUNTER HAS CHANGED (2Ah/13h) once they
 * differ. Other nexuses' SETs are never refused because of a lock.
 */
#include "vtl/drive/ssc_internal.h"

#include <string.h>

#include "common/bytes.h"
#include "common/log.h"
#include "common/vtl_error.h"
#include "vtl/drive/sde.h"

/* CDB fields (SPC-4 SECURITY PROTOCOL IN / OUT). */
#define CDB_PROTOCOL 1
#define CDB_SPS 2          /* security protocol specific: the page */
#define CDB_INC512 4
#define INC512_BIT 0x80
#define CDB_LEN 6          /* allocation / transfer length, 4 bytes */

#define SP_INFO 0x00       /* security protocol information (SPC-4 7.7.1) */
#define SP_TAPE 0x20       /* tape data encryption (SSC-4 8.5) */
#define SPI_LIST 0x0000    /* supported security protocols list */
#define SPI_CERT 0x0001    /* certificate data */

/* Protocol 20h IN pages (SSC-4 table "SECURITY PROTOCOL SPECIFIC field values"). */
#define P_IN_SUPPORT 0x0000
#define P_OUT_SUPPORT 0x0001
#define P_CAPS 0x0010
#define P_KEY_FORMATS 0x0011
#define P_MGMT_CAPS 0x0012
#define P_STATUS 0x0020
#define P_NEXT_BLOCK 0x0021

/* Page 0010h algorithm descriptor (SSC-4 table "Data encryption algorithm descriptor"). */
#define ALG_DESC_LEN 20             /* DESCRIPTOR LENGTH: bytes 4..23 */
#define ALG_CODE_AES256_GCM 0x00010014u /* security algorithm code (SSC-4 table; IBM LTO reports it) */
#define CAPS_EXTDECC_NO (1u << 2)   /* byte 4 EXTDECC 01b: not external data encryption control capable */
#define CAPS_EXTDECC_YES (2u << 2)  /* byte 4 EXTDECC 10b: external data encryption control capable (HP LTO-5) */
#define CAPS_CFG_P_ALLOW 1u         /* byte 4: configured to allow encryption control by the host */
#define ALG_AVFMV 0x80              /* valid for the mounted volume */
#define ALG_MAC_C 0x20              /* a message authentication code is checked (HP LTO-5: MAC_C 1) */
#define ALG_DELB_C 0x10             /* tells encrypted blocks from plaintext ones */
#define ALG_DECRYPT_C_HW (2u << 2)  /* decrypts in the drive */
#define ALG_ENCRYPT_C_HW 2u         /* encrypts in the drive */
#define ALG_EAREM 0x01              /* encryption mode recorded with each block */

/* Page 0012h bits (SSC-4 table "Data encryption management capabilities page"). */
#define MGMT_LOCK_C 0x01
#define MGMT_CKOD_C 0x04
#define MGMT_CKORP_C 0x02
#define MGMT_CKORL_C 0x01
#define MGMT_AITN_C 0x04
#define MGMT_LOCAL_C 0x02
#define MGMT_PUBLIC_C 0x01

/* Page 0021h ENCRYPTION STATUS (SSC-4 table "ENCRYPTION STATUS field values"). */
#define NBES_NOT_BLOCK 0x2          /* the object at the position is not a logical block */
#define NBES_PLAIN 0x3              /* not encrypted */
#define NBES_CAN_DECRYPT 0x5        /* encrypted, and the key in force decrypts it */
#define NBES_CANNOT_DECRYPT 0x6     /* encrypted, with a key the drive does not have */
#define KAD_NOT_AUTHENTICATED 0x1   /* AUTHENTICATED field: the KAD has not been authenticated */
#define KAD_AUTHENTICATED 0x2

#define STATUS_PARAMS_CTRL (1u << 4) /* page 0020h byte 12 PARAMETERS CONTROL 001b: set by the host only */
#define STATUS_CEEMS_SHIFT 1         /* byte 12 bits 2-1: CEEM as the nexus's parameters have it */
#define STATUS_RDMD 0x01             /* byte 12 bit 0: encrypted blocks marked disabled for raw reads */
#define STATUS_VCELB 0x08            /* byte 12 bit 3: the loaded volume holds an encrypted logical block */
#define ENC_FIRST_LEN 8              /* MAM_PRIVATE_ENC_FIRST: a big-endian object number */
#define RDMC_PROTECT 3               /* RDMC 11b: mark each encrypted block disabled for raw reads */

#define PAGE_MAX 256                /* the largest IN page built here */

/* ---- parameter sets ---- */

/*
 * Whether the model clears keys on reservation preempt and loss (CKORP_C,
 * CKORL_C): HP's LTO-5 reference sets both; for IBM none was found. As in
 * ssc_ident.c, any vendor but IBM is an HP model.
 */
static bool res_clear_offered(const struct ssc_drive *d)
{
	return strcmp(d->dev.ident.vendor, "IBM") != 0;
}

/* The set nexus uses now: its local one, else the public one. */
static struct ssc_crypt_set *set_of(struct ssc_drive *d, uint64_t nexus)
{
	for (unsigned i = 0; i < SSC_CRYPT_LOCAL_MAX; i++)
		if (d->crypt.local[i].used && d->crypt.local[i].nexus == nexus)
			return &d->crypt.local[i];
	return &d->crypt.pub;
}

/*
 * Clears a set to the defaults: no key (zeroed with it), both modes DISABLE;
 * counts a key instance if it had one. The set is released or about to be
 * established again, so it takes a new generation: a nexus locked to it no
 * longer matches.
 */
static void set_clear(struct ssc_drive *d, struct ssc_crypt_set *s)
{
	if (s->key)
		d->crypt.instance++;
	vtl_key_free(s->key);
	memset(s, 0, sizeof *s);
	s->io.plain_ok = true;
	s->gen = ++d->crypt.gen;
}

/*
 * Derives what the cartridge does under s from its modes. The cartridge
 * holds a pointer to one set's io (ssc_crypt_apply, before each data
 * command), never to a key: clearing a set clears its io with it.
 */
static void io_refresh(struct ssc_crypt_set *s)
{
	s->io.enc = s->enc_mode == SDE_ENC_ENCRYPT ? s->key : NULL;
	s->io.dec = s->dec_mode == SDE_DEC_DECRYPT || s->dec_mode == SDE_DEC_MIXED ? s->key : NULL;
	s->io.plain_ok = s->dec_mode != SDE_DEC_DECRYPT;
	if (s->enc_mode != SDE_ENC_ENCRYPT)
		memset(&s->io.kad, 0, sizeof s->io.kad);
}

void ssc_crypt_apply(struct ssc_drive *d, uint64_t nexus)
{
	if (d->cart)
		vtl_cart_set_crypt(d->cart, &set_of(d, nexus)->io);
}

/* ---- LOCK: saved per I_T nexus ---- */

static struct ssc_crypt_lock *lock_of(struct ssc_drive *d, uint64_t nexus)
{
	for (unsigned i = 0; i < SSC_CRYPT_LOCK_MAX; i++)
		if (d->crypt.locks[i].used && d->crypt.locks[i].nexus == nexus)
			return &d->crypt.locks[i];
	return NULL;
}

/* The entry a LOCK of nexus fills: its own, or a free one; NULL when all are taken. */
static struct ssc_crypt_lock *lock_slot(struct ssc_drive *d, uint64_t nexus)
{
	struct ssc_crypt_lock *l = lock_of(d, nexus);
	for (unsigned i = 0; !l && i < SSC_CRYPT_LOCK_MAX; i++)
		if (!d->crypt.locks[i].used)
			l = &d->crypt.locks[i];
	return l;
}

static void lock_drop(struct ssc_drive *d, uint64_t nexus)
{
	struct ssc_crypt_lock *l = lock_of(d, nexus);
	if (l)
		memset(l, 0, sizeof *l);
}

bool ssc_crypt_use(struct ssc_drive *d, uint64_t nexus, struct scsi_sense *s)
{
	/*
	 * The set the nexus would use now must be the one it locked to, at the
	 * generation it locked: another nexus's ALL I_T NEXUS SET (which replaces
	 * the public set and drops local ones), CKOD at unload and a CKORP/CKORL
	 * clear all give the set a new generation. The lock stays: only the
	 * nexus's next SECURITY PROTOCOL OUT or a reset ends it (4.2.21.11).
	 */
	const struct ssc_crypt_lock *l = lock_of(d, nexus);
	if (l && (set_of(d, nexus) != l->set || l->set->gen != l->gen)) {
		*s = sense_of(SK_DATA_PROTECT, ASC_ENCRYPTION_KIC_CHANGED);
		return false;
	}
	ssc_crypt_apply(d, nexus);
	return true;
}

/* Sets s to its defaults (key gone, both modes DISABLE); a local set stays its nexus's, now empty. */
static void set_default(struct ssc_drive *d, struct ssc_crypt_set *s)
{
	bool local = s->used;
	uint64_t n = s->nexus;
	set_clear(d, s);
	if (local) {
		s->used = true;
		s->nexus = n;
		s->key_scope = SDE_SCOPE_LOCAL;
	}
}

void ssc_crypt_unloaded(struct ssc_drive *d)
{
	if (d->crypt.pub.ckod && d->crypt.pub.key)
		set_default(d, &d->crypt.pub);
	for (unsigned i = 0; i < SSC_CRYPT_LOCAL_MAX; i++) {
		struct ssc_crypt_set *s = &d->crypt.local[i];
		if (s->used && s->ckod && s->key)
			set_default(d, s);
	}
}

void ssc_crypt_res_lost(void *arg, uint64_t nexus, bool preempted)
{
	struct ssc_drive *d = arg;
	/* The parameters nexus set (SSC-4 8.5.3.2): its local ones, and the public ones when it set them last. */
	struct ssc_crypt_set *sets[1 + SSC_CRYPT_LOCAL_MAX];
	unsigned n = 0;
	if (d->crypt.pub.set_by == nexus)
		sets[n++] = &d->crypt.pub;
	for (unsigned i = 0; i < SSC_CRYPT_LOCAL_MAX; i++)
		if (d->crypt.local[i].used && d->crypt.local[i].nexus == nexus)
			sets[n++] = &d->crypt.local[i];
	for (unsigned i = 0; i < n; i++)
		if (sets[i]->ckorl || (preempted && sets[i]->ckorp))
			set_default(d, sets[i]);
}

void ssc_crypt_nexus_lost(struct ssc_drive *d, uint64_t nexus)
{
	for (unsigned i = 0; i < SSC_CRYPT_LOCAL_MAX; i++)
		if (d->crypt.local[i].used && d->crypt.local[i].nexus == nexus)
			set_clear(d, &d->crypt.local[i]);
	/* Public parameters are shared: they stay; the nexus's lock goes with the rest of what it saved. */
	lock_drop(d, nexus);
}

void ssc_crypt_wipe(struct ssc_drive *d)
{
	if (d->cart)
		vtl_cart_set_crypt(d->cart, NULL);
	set_clear(d, &d->crypt.pub);
	for (unsigned i = 0; i < SSC_CRYPT_LOCAL_MAX; i++)
		set_clear(d, &d->crypt.local[i]);
	memset(d->crypt.locks, 0, sizeof d->crypt.locks); /* a hard reset ends every lock (4.2.21.11) */
}

/* ---- which part of the medium is encrypted (VCELB) ---- */

/*
 * The loaded medium's first encrypted block into *obj: VTL_OK when it has
 * one (as far as this drive recorded), VTL_E_NOTFOUND when none, VTL_E_INVAL
 * with no MAM in memory.
 */
static int enc_first_of(struct ssc_drive *d, uint64_t *obj)
{
	uint8_t v[ENC_FIRST_LEN];
	size_t len = 0;
	int rc = ssc_mam_get(d, MAM_PRIVATE_ENC_FIRST, v, sizeof v, &len);
	if (rc != VTL_OK)
		return rc;
	if (len != sizeof v)
		return VTL_E_NOTFOUND; /* not one of ours: as if none */
	*obj = be_get(v, ENC_FIRST_LEN);
	return VTL_OK;
}

static bool enc_first(struct ssc_drive *d, uint64_t *obj)
{
	return enc_first_of(d, obj) == VTL_OK;
}

bool ssc_crypt_encrypts(struct ssc_drive *d, uint64_t nexus)
{
	return set_of(d, nexus)->io.enc != NULL;
}

void ssc_crypt_written(struct ssc_drive *d, uint64_t at, bool encrypted)
{
	/*
	 * Tape semantics make one number enough: a write at object at truncates
	 * everything from at on, so the first encrypted block survives it only if
	 * it lies before at, and a new one can only come at at.
	 */
	uint64_t first;
	int rc = enc_first_of(d, &first);
	if (rc == VTL_E_INVAL)
		return; /* no MAM in memory: nothing to keep it in */
	bool had = rc == VTL_OK;
	if (had && first < at)
		return; /* it survives the write, and stays the first */
	if (encrypted ? had && first == at : !had)
		return; /* nothing to change */
	uint8_t v[ENC_FIRST_LEN];
	be_put(v, at, ENC_FIRST_LEN);
	rc = ssc_mam_put(d, MAM_PRIVATE_ENC_FIRST, v, encrypted ? sizeof v : 0);
	if (rc != VTL_OK) /* only VCELB is wrong then; the data is as written */
		log_error("drive %s: cannot record which blocks are encrypted: %s", d->dev.ident.serial, vtl_strerror(rc));
}

/* ---- SECURITY PROTOCOL IN ---- */

static size_t put_kad(uint8_t *p, uint8_t type, uint8_t auth, const uint8_t *v, size_t n)
{
	p[0] = type;
	p[1] = auth;
	be_put(p + 2, n, 2);
	memcpy(p + 4, v, n);
	return 4 + n;
}

static size_t kads_of(uint8_t *p, const struct vtl_kad *k, uint8_t akad_auth)
{
	size_t n = 0;
	if (k->ukad_len)
		n += put_kad(p + n, SDE_KAD_UKAD, KAD_NOT_AUTHENTICATED, k->ukad, k->ukad_len);
	if (k->akad_len)
		n += put_kad(p + n, SDE_KAD_AKAD, akad_auth, k->akad, k->akad_len);
	return n;
}

/* Builds page code pg of protocol 20h into b: its length, or 0 with *s set. */
static size_t tape_page(struct ssc_drive *d, struct scsi_cmd *c, uint16_t pg, uint8_t *b, struct scsi_sense *s)
{
	size_t n = 4;
	switch (pg) {
	case P_IN_SUPPORT: {
		static const uint16_t in[] = {P_IN_SUPPORT, P_OUT_SUPPORT, P_CAPS, P_KEY_FORMATS, P_MGMT_CAPS, P_STATUS,
					      P_NEXT_BLOCK};
		for (size_t i = 0; i < sizeof in / sizeof in[0]; i++, n += 2)
			be_put(b + n, in[i], 2);
		break;
	}
	case P_OUT_SUPPORT:
		be_put(b + n, SDE_PAGE, 2);
		n += 2;
		break;
	case P_CAPS: {
		bool hp = res_clear_offered(d);
		b[4] = (uint8_t)((hp ? CAPS_EXTDECC_YES : CAPS_EXTDECC_NO) | CAPS_CFG_P_ALLOW);
		n = 20; /* bytes 5..19 reserved */
		uint8_t *a = b + n;
		a[0] = SDE_ALGORITHM_INDEX;
		be_put(a + 2, ALG_DESC_LEN, 2);
		a[4] = (uint8_t)(ALG_AVFMV | (hp ? ALG_MAC_C : 0) | ALG_DELB_C | ALG_DECRYPT_C_HW | ALG_ENCRYPT_C_HW);
		a[5] = 0; /* no nonce, no KAD format, no raw-read control reporting */
		be_put(a + 6, VTL_UKAD_MAX, 2);
		be_put(a + 8, VTL_AKAD_MAX, 2);
		be_put(a + 10, VTL_KEY_LEN, 2);
		a[12] = ALG_EAREM;
		be_put(a + 20, ALG_CODE_AES256_GCM, 4);
		n += 4 + ALG_DESC_LEN;
		break;
	}
	case P_KEY_FORMATS:
		b[n++] = SDE_KEY_FORMAT_PLAIN;
		break;
	case P_MGMT_CAPS:
		b[4] = MGMT_LOCK_C;
		b[5] = (uint8_t)(MGMT_CKOD_C | (res_clear_offered(d) ? MGMT_CKORP_C | MGMT_CKORL_C : 0));
		b[7] = MGMT_AITN_C | MGMT_LOCAL_C | MGMT_PUBLIC_C;
		n = 16;
		break;
	case P_STATUS: {
		struct ssc_crypt_set *st = set_of(d, c->nexus);
		b[4] = (uint8_t)((st == &d->crypt.pub ? SDE_SCOPE_PUBLIC : SDE_SCOPE_LOCAL) << 5 | (st->key_scope & 7));
		b[5] = st->enc_mode;
		b[6] = st->dec_mode;
		b[7] = st->key ? st->algorithm : 0;
		be_put(b + 8, d->crypt.instance, 4);
		uint64_t first;
		bool vcelb = d->cart && enc_first(d, &first);
		b[12] = (uint8_t)(STATUS_PARAMS_CTRL | (st->ceem << STATUS_CEEMS_SHIFT) | (vcelb ? STATUS_VCELB : 0) |
				  (st->rdmc == RDMC_PROTECT ? STATUS_RDMD : 0));
		n = 24;
		n += kads_of(b + n, &st->io.kad, KAD_AUTHENTICATED);
		break;
	}
	case P_NEXT_BLOCK: {
		if (ssc_not_ready(d, s))
			return 0;
		ssc_crypt_apply(d, c->nexus);
		struct vtl_block_crypt bc;
		int rc = vtl_cart_peek_crypt(d->cart, &bc);
		if (rc) {
			*s = ssc_sense_of_err(d, rc);
			return 0;
		}
		be_put(b + 4, bc.object, 8);
		uint8_t es = !bc.is_data ? NBES_NOT_BLOCK
			   : !bc.encrypted ? NBES_PLAIN
			   : bc.key_matches ? NBES_CAN_DECRYPT : NBES_CANNOT_DECRYPT;
		b[12] = es; /* COMPRESSION STATUS 0h: not reported */
		b[13] = bc.encrypted ? SDE_ALGORITHM_INDEX : 0;
		n = 16;
		if (bc.encrypted)
			n += kads_of(b + n, &bc.kad, KAD_NOT_AUTHENTICATED);
		break;
	}
	default:
		*s = sense_invalid_cdb_field(CDB_SPS, -1);
		return 0;
	}
	be_put(b, pg, 2);
	be_put(b + 2, n - 4, 2);
	return n;
}

void ssc_security_in(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct ssc_drive *d = ssc_of(dev);
	uint8_t proto = c->cdb[CDB_PROTOCOL];
	uint16_t sps = (uint16_t)be_get(c->cdb + CDB_SPS, 2);
	uint32_t alloc = (uint32_t)be_get(c->cdb + CDB_LEN, 4);
	if (c->cdb[CDB_INC512] & INC512_BIT) {
		scsi_fail(c, sense_invalid_cdb_field(CDB_INC512, 7));
		return;
	}
	uint8_t b[PAGE_MAX] = {0};
	size_t n = 0;
	struct scsi_sense s;
	if (proto == SP_INFO) {
		if (sps == SPI_LIST) {
			/* Bytes 6..7: list length; then the protocols, ascending. */
			be_put(b + 6, 2, 2);
			b[8] = SP_INFO;
			b[9] = SP_TAPE;
			n = 10;
		} else if (sps == SPI_CERT) {
			n = 4; /* CERTIFICATE LENGTH 0: the drive has no certificate */
		} else {
			scsi_fail(c, sense_invalid_cdb_field(CDB_SPS, -1));
			return;
		}
	} else if (proto == SP_TAPE) {
		if (!(n = tape_page(d, c, sps, b, &s))) {
			scsi_fail(c, s);
			return;
		}
	} else {
		scsi_fail(c, sense_invalid_cdb_field(CDB_PROTOCOL, -1));
		return;
	}
	scsi_data_in(c, b, n, alloc);
}

/* ---- SECURITY PROTOCOL OUT ---- */

/*
 * Ends the SET of nexus: its lock is what this command said, to the set it
 * uses now (LOCK 0: none; lk, from lock_slot, with LOCK 1). Any earlier lock
 * of the nexus ends here, as another SECURITY PROTOCOL OUT ends it.
 */
static void lock_set(struct ssc_drive *d, uint64_t nexus, struct ssc_crypt_lock *lk)
{
	lock_drop(d, nexus);
	if (!lk)
		return;
	const struct ssc_crypt_set *s = set_of(d, nexus);
	*lk = (struct ssc_crypt_lock){.used = true, .nexus = nexus, .set = s, .gen = s->gen};
}

/* The set a LOCAL request of nexus fills: its own, or a free one; NULL when all are taken. */
static struct ssc_crypt_set *local_slot(struct ssc_drive *d, uint64_t nexus)
{
	struct ssc_crypt_set *free_slot = NULL;
	for (unsigned i = 0; i < SSC_CRYPT_LOCAL_MAX; i++) {
		struct ssc_crypt_set *s = &d->crypt.local[i];
		if (s->used && s->nexus == nexus)
			return s;
		if (!s->used && !free_slot)
			free_slot = s;
	}
	return free_slot;
}

void ssc_security_out(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct ssc_drive *d = ssc_of(dev);
	uint8_t proto = c->cdb[CDB_PROTOCOL];
	uint16_t sps = (uint16_t)be_get(c->cdb + CDB_SPS, 2);
	uint32_t len = (uint32_t)be_get(c->cdb + CDB_LEN, 4);
	if (proto != SP_TAPE) {
		scsi_fail(c, sense_invalid_cdb_field(CDB_PROTOCOL, -1));
		return;
	}
	if (sps != SDE_PAGE) {
		scsi_fail(c, sense_invalid_cdb_field(CDB_SPS, -1));
		return;
	}
	if (c->cdb[CDB_INC512] & INC512_BIT) {
		scsi_fail(c, sense_invalid_cdb_field(CDB_INC512, 7));
		return;
	}
	if (len > SDE_MAX_LEN || len > scsi_buf_len(c)) {
		scsi_fail(c, sense_invalid_cdb_field(CDB_LEN, -1));
		return;
	}
	uint8_t p[SDE_MAX_LEN];
	size_t got = scsi_data_out(c, p, len);
	/* The transport's buffer held the key too: it is done with, so it is wiped here. */
	for (int i = 0; i < c->iov_cnt; i++)
		explicit_bzero(c->iov[i].iov_base, c->iov[i].iov_len);
	struct sde r;
	uint16_t byte;
	int bit;
	enum sde_result pr = sde_parse(p, got, &r, &byte, &bit);
	/* The key is in r and in p now: both are wiped on every way out. */
	explicit_bzero(p, sizeof p);
	if (pr != SDE_OK) {
		explicit_bzero(&r, sizeof r);
		scsi_fail(c, pr == SDE_BAD_LENGTH ? sense_of(SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH)
						  : sense_invalid_param_field(byte, bit));
		return;
	}
	/*
	 * CKORP needs a persistent reservation of this nexus to watch, CKORL any
	 * reservation of it (SSC-4 8.5.3.2, as StorageTek's T10000 reference
	 * restates it: INVALID FIELD IN PARAMETER LIST); a model without them
	 * refuses the bits outright. PUBLIC ignores both (it sets nothing).
	 */
	int res_bit = -1;
	if (r.ckorp && (!res_clear_offered(d) ||
			(r.scope != SDE_SCOPE_PUBLIC && !res_holds(&d->dev.res, c->nexus, true))))
		res_bit = SDE_CKORP_BIT;
	else if (r.ckorl && (!res_clear_offered(d) ||
			     (r.scope != SDE_SCOPE_PUBLIC && !res_holds(&d->dev.res, c->nexus, false))))
		res_bit = SDE_CKORL_BIT;
	if (res_bit >= 0) {
		explicit_bzero(&r, sizeof r);
		scsi_fail(c, sense_invalid_param_field(SDE_FLAGS_BYTE, res_bit));
		return;
	}
	/*
	 * A lock is the nexus's own (saved per I_T nexus, SSC-3/SSC-4 4.2.21.11):
	 * it never refuses another nexus's SET. Needing a lock entry when all
	 * are taken is refused like a local set (55h/03h, our choice).
	 */
	struct ssc_crypt_lock *lk = r.lock ? lock_slot(d, c->nexus) : NULL;
	if (r.lock && !lk) {
		explicit_bzero(&r, sizeof r);
		scsi_fail(c, sense_of(SK_ILLEGAL_REQUEST, ASC_INSUFFICIENT_RESOURCES));
		return;
	}
	if (r.scope == SDE_SCOPE_PUBLIC) {
		/* The nexus gives up local parameters and shares the public ones (SSC-4 8.5.3.2). */
		struct ssc_crypt_set *own = set_of(d, c->nexus);
		if (own != &d->crypt.pub)
			set_clear(d, own);
		lock_set(d, c->nexus, lk);
		scsi_done(c, 0);
		return;
	}
	struct ssc_crypt_set *t = r.scope == SDE_SCOPE_LOCAL ? local_slot(d, c->nexus) : &d->crypt.pub;
	if (!t) {
		explicit_bzero(&r, sizeof r);
		scsi_fail(c, sense_of(SK_ILLEGAL_REQUEST, ASC_INSUFFICIENT_RESOURCES));
		return;
	}
	struct vtl_key *k = NULL;
	if (r.has_key) {
		int rc = vtl_key_new(r.key, sizeof r.key, &k);
		if (rc) {
			explicit_bzero(&r, sizeof r);
			/* The operator must hear why (never what): a locked page is refused over RLIMIT_MEMLOCK. */
			log_error("drive %s: SET DATA ENCRYPTION refused: the key cannot be held in locked memory (%s); "
				  "raise vtld's memlock limit (LimitMEMLOCK)",
				  d->dev.ident.serial, rc == VTL_E_IO ? "mlock or getrandom failed" : vtl_strerror(rc));
			scsi_fail(c, sense_of(SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE));
			return;
		}
	}
	if (r.scope == SDE_SCOPE_ALL) {
		/* Shared by every nexus: the other nexuses' (unlocked) local parameters give way. */
		for (unsigned i = 0; i < SSC_CRYPT_LOCAL_MAX; i++)
			if (d->crypt.local[i].used)
				set_clear(d, &d->crypt.local[i]);
	}
	set_clear(d, t);
	t->used = r.scope == SDE_SCOPE_LOCAL;
	t->nexus = c->nexus;
	t->key_scope = r.scope;
	t->ckod = r.ckod;
	t->ckorp = r.ckorp;
	t->ckorl = r.ckorl;
	t->set_by = c->nexus;
	t->ceem = r.ceem;
	t->enc_mode = r.enc_mode;
	t->dec_mode = r.dec_mode;
	t->algorithm = r.algorithm;
	t->rdmc = r.rdmc;
	t->kad_format = r.kad_format;
	t->key = k;
	t->io.kad = r.kad;
	if (k)
		d->crypt.instance++;
	io_refresh(t);
	/* The parameters every other nexus shares changed under it (SSC-4 4.2.21): each is told once. */
	if (r.scope == SDE_SCOPE_ALL)
		ua_raise_all(&d->dev.ua, UA_ENCRYPTION_CHANGED, c->nexus);
	explicit_bzero(&r, sizeof r);
	lock_set(d, c->nexus, lk);
	ssc_crypt_apply(d, c->nexus);
	scsi_done(c, 0);
}
