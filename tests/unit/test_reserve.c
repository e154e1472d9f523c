/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reservations as hosts on several I_T nexuses see them: SPC-2 RESERVE and
 * RELEASE, PERSISTENT RESERVE IN/OUT (keys, generation, types, preemption,
 * unit attentions, parameter checks), and which drive commands conflict
 * with which reservation.
 */
#include "tests/unit/scsi_host.h"

#include <stdio.h>
#include <string.h>

#include "common/grow.h"
#include "vtl/drive/ssc_internal.h"

#define A HOST_NEXUS /* holds reservations in most tests */
#define B 0x200
#define C 0x300

#define K1 0x1111111111111111ull
#define K2 0x2222222222222222ull
#define K3 0x3333333333333333ull
#define K4 0x4444444444444444ull

/* Service actions and types (SPC-4 6.16, 6.17, table 174). */
enum { RK = 0, RR = 1, RC = 2, RFS = 3 };
enum { REG = 0, RSV = 1, REL = 2, CLR = 3, PRE = 4, PRA = 5, REGI = 6 };
enum { WE = 1, EA = 3, WE_RO = 5, EA_RO = 6, WE_AR = 7, EA_AR = 8 };

/* A nexus's first command: its power-on attention, taken by REQUEST SENSE. */
static void hello(struct host *h, uint64_t nexus)
{
	h->nexus = nexus;
	uint8_t rs[6] = {0x03, 0, 0, 0, 18, 0};
	uint8_t b[18];
	host_cmd(h, rs, 6, SCSI_DIR_IN, b, sizeof b);
	expect_good(h);
}

static void on(struct host *h, uint64_t nexus)
{
	h->nexus = nexus;
}

/* PERSISTENT RESERVE OUT with a parameter list of pll bytes (xfer of them sent). */
static int pr_out_len(struct host *h, uint8_t sa, uint8_t scope_type, uint64_t key, uint64_t sa_key, uint8_t flags,
		      uint32_t pll, size_t xfer)
{
	uint8_t cdb[10] = {0x5F, sa, scope_type};
	be_put(cdb + 5, pll, 4);
	uint8_t p[64];
	memset(p, 0, sizeof p);
	be_put(p, key, 8);
	be_put(p + 8, sa_key, 8);
	p[20] = flags;
	return host_cmd(h, cdb, 10, SCSI_DIR_OUT, p, xfer);
}

static int pr_out(struct host *h, uint8_t sa, uint8_t type, uint64_t key, uint64_t sa_key)
{
	return pr_out_len(h, sa, type, key, sa_key, 0, 24, 24);
}

/* nexus registers key, its power-on attention taken first; later commands come from it. */
static void join(struct host *h, uint64_t nexus, uint64_t key)
{
	hello(h, nexus);
	pr_out(h, REG, 0, 0, key);
	expect_good(h);
}

static int pr_in(struct host *h, uint8_t sa, uint8_t *b, uint16_t alloc)
{
	uint8_t cdb[10] = {0x5E, sa};
	be_put(cdb + 7, alloc, 2);
	memset(b, 0xEE, alloc);
	return host_cmd(h, cdb, 10, SCSI_DIR_IN, b, alloc);
}

static int rr(struct host *h, uint8_t opcode, uint8_t byte1)
{
	uint8_t cdb[10] = {opcode, byte1};
	return host_cmd(h, cdb, opcode & 0x40 ? 10 : 6, SCSI_DIR_NONE, NULL, 0);
}

static void expect_conflict(struct host *h)
{
	if (h->c.status != SCSI_RESERVATION_CONFLICT)
		fail_msg("opcode %02Xh from nexus %llx: status %02Xh (sense %X %04X), expected RESERVATION CONFLICT",
			 h->c.cdb[0], (unsigned long long)h->nexus, h->c.status, h->c.sense.key, h->c.sense.asc);
}

/* ILLEGAL REQUEST with a field pointer at byte/bit (bit -1: none) of the CDB or of the parameter list. */
static void expect_field(struct host *h, enum scsi_asc asc, bool in_cdb, uint16_t byte, int bit)
{
	expect_sense(h, SK_ILLEGAL_REQUEST, asc);
	assert_true(h->c.sense.sks_valid);
	assert_int_equal(h->c.sense.sks_cdb, in_cdb);
	assert_int_equal(h->c.sense.sks_field, byte);
	assert_int_equal(h->c.sense.sks_bit_valid, bit >= 0);
	if (bit >= 0)
		assert_int_equal(h->c.sense.sks_bit, bit);
	/* What the host receives: SKSV, C/D, BPV and the pointer in fixed-format bytes 15..17. */
	assert_int_equal(h->sense[15], 0x80 | (in_cdb ? 0x40 : 0) | (bit >= 0 ? 0x08 | bit : 0));
	assert_int_equal(be_get(h->sense + 16, 2), byte);
}

static void expect_ua(struct host *h, enum scsi_asc asc)
{
	uint8_t cdb[6] = {0x00};
	host_cmd(h, cdb, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_UNIT_ATTENTION, asc);
}

static void expect_no_ua(struct host *h)
{
	uint8_t cdb[6] = {0x00};
	host_cmd(h, cdb, 6, SCSI_DIR_NONE, NULL, 0);
	if (h->c.status == SCSI_CHECK_CONDITION && h->c.sense.key == SK_UNIT_ATTENTION)
		fail_msg("nexus %llx: unexpected unit attention %04X", (unsigned long long)h->nexus, h->c.sense.asc);
}

static uint32_t generation(struct host *h)
{
	uint8_t b[8];
	pr_in(h, RK, b, sizeof b);
	expect_good(h);
	return (uint32_t)be_get(b, 4);
}

/* READ RESERVATION: true if one is held, with its key and type. */
static bool reservation(struct host *h, uint64_t *key, uint8_t *type)
{
	uint8_t b[32];
	pr_in(h, RR, b, sizeof b);
	expect_good(h);
	assert_int_equal(h->c.data_len, 8 + be_get(b + 4, 4));
	if (be_get(b + 4, 4) == 0)
		return false;
	assert_int_equal(be_get(b + 4, 4), 16);
	*key = be_get(b + 8, 8);
	assert_int_equal(b[21] >> 4, 0); /* LU_SCOPE */
	*type = b[21] & 0x0F;
	return true;
}

static void load(struct host *h)
{
	host_new_cart(h, "R00001L8", 0);
	host_load(h, "R00001L8");
}

/* ------------------------------------------- the drive commands a reservation stops */

/*
 * How SPC-4 table 64 and SSC-4's tape table classify a command for a
 * non-holder: ALWAYS allowed, allowed under the Write Exclusive types
 * (READS), or conflicting under both (WRITES).
 */
enum cls { ALWAYS, READS, WRITES };

struct probe {
	const char *name;
	uint8_t cdb[16];
	uint8_t len;
	enum scsi_dir dir;
	size_t xfer;
	enum cls cls;
	bool spc2_ok; /* allowed under another nexus's SPC-2 reservation (SPC-2 5.5.1) */
};

/*
 * Commands that change nothing when allowed (zero counts and lengths, LOAD
 * of a loaded medium), so that each can be sent under every reservation:
 * whether the answer is RESERVATION CONFLICT tells which way the dispatcher
 * decided, whatever the handler then does.
 */
static const struct probe probes[] = {
	{"TEST UNIT READY", {0x00}, 6, SCSI_DIR_NONE, 0, ALWAYS, false},
	{"REQUEST SENSE", {0x03, 0, 0, 0, 18, 0}, 6, SCSI_DIR_IN, 18, ALWAYS, true},
	{"INQUIRY", {0x12, 0, 0, 0, 36, 0}, 6, SCSI_DIR_IN, 36, ALWAYS, true},
	{"REPORT LUNS", {0xA0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0}, 12, SCSI_DIR_IN, 16, ALWAYS, true},
	{"LOG SENSE", {0x4D, 0, 0x40, 0, 0, 0, 0, 0, 64, 0}, 10, SCSI_DIR_IN, 64, ALWAYS, true},
	{"READ BLOCK LIMITS", {0x05}, 6, SCSI_DIR_IN, 6, ALWAYS, true},
	{"REPORT DENSITY SUPPORT", {0x44, 0, 0, 0, 0, 0, 0, 0, 64, 0}, 10, SCSI_DIR_IN, 64, ALWAYS, true},
	{"PERSISTENT RESERVE IN", {0x5E, 0x02, 0, 0, 0, 0, 0, 0, 8, 0}, 10, SCSI_DIR_IN, 8, ALWAYS, false},
	{"READ(6)", {0x08, 0, 0, 0, 0, 0}, 6, SCSI_DIR_IN, 0, READS, false},
	{"VERIFY(6)", {0x13, 0, 0, 0, 0, 0}, 6, SCSI_DIR_NONE, 0, READS, false},
	{"READ POSITION", {0x34, 0, 0, 0, 0, 0, 0, 0, 20, 0}, 10, SCSI_DIR_IN, 20, READS, false},
	{"SPACE(6)", {0x11, 0, 0, 0, 0, 0}, 6, SCSI_DIR_NONE, 0, READS, false},
	{"LOCATE(10)", {0x2B, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 10, SCSI_DIR_NONE, 0, READS, false},
	{"REWIND", {0x01}, 6, SCSI_DIR_NONE, 0, READS, false},
	{"MODE SENSE(6)", {0x1A, 0, 0x3F, 0, 255, 0}, 6, SCSI_DIR_IN, 255, READS, false},
	{"READ ATTRIBUTE", {0x8C, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}, 16, SCSI_DIR_IN, 256, READS, false},
	{"REPORT SUPPORTED OPERATION CODES", {0xA3, 0x0C, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}, 12, SCSI_DIR_IN, 256, READS,
	 false},
	{"WRITE(6)", {0x0A, 0, 0, 0, 0, 0}, 6, SCSI_DIR_OUT, 0, WRITES, false},
	{"WRITE FILEMARKS(6)", {0x10, 0, 0, 0, 0, 0}, 6, SCSI_DIR_NONE, 0, WRITES, false},
	{"ERASE(6)", {0x19, 0, 0, 0, 0, 0}, 6, SCSI_DIR_NONE, 0, WRITES, false},
	{"FORMAT MEDIUM", {0x04, 0, 0, 0, 0, 0}, 6, SCSI_DIR_NONE, 0, WRITES, false},
	{"SET CAPACITY", {0x0B, 0, 0, 0xFF, 0xFF, 0}, 6, SCSI_DIR_NONE, 0, WRITES, false},
	{"MODE SELECT(6)", {0x15, 0x10, 0, 0, 0, 0}, 6, SCSI_DIR_OUT, 0, WRITES, false},
	{"LOG SELECT", {0x4C, 0, 0x40, 0, 0, 0, 0, 0, 0, 0}, 10, SCSI_DIR_OUT, 0, WRITES, false},
	{"WRITE ATTRIBUTE", {0x8D, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 16, SCSI_DIR_OUT, 0, WRITES, false},
	{"LOAD UNLOAD (load)", {0x1B, 0, 0, 0, 1, 0}, 6, SCSI_DIR_NONE, 0, WRITES, false},
	{"PREVENT ALLOW (prevent)", {0x1E, 0, 0, 0, 1, 0}, 6, SCSI_DIR_NONE, 0, WRITES, false},
	{"PREVENT ALLOW (allow)", {0x1E, 0, 0, 0, 0, 0}, 6, SCSI_DIR_NONE, 0, ALWAYS, true},
};
#define N_PROBES (VTL_ARRAY_SIZE(probes))

/* Who asks: the holder, a registered non-holder, an unregistered nexus. */
enum who { HOLDER, REGISTERED, STRANGER, N_WHO };

/* Per type: whether a class conflicts for each asker (SPC-4 5.9.10 and table 64). */
static const struct {
	uint8_t type;
	bool conflict[N_WHO][3]; /* [who][ALWAYS, READS, WRITES] */
} expected[] = {
	{WE, {{0, 0, 0}, {0, 0, 1}, {0, 0, 1}}},    {EA, {{0, 0, 0}, {0, 1, 1}, {0, 1, 1}}},
	{WE_RO, {{0, 0, 0}, {0, 0, 0}, {0, 0, 1}}}, {EA_RO, {{0, 0, 0}, {0, 0, 0}, {0, 1, 1}}},
	{WE_AR, {{0, 0, 0}, {0, 0, 0}, {0, 0, 1}}}, {EA_AR, {{0, 0, 0}, {0, 0, 0}, {0, 1, 1}}},
};

static void probe(struct host *h, const struct probe *p, bool want_conflict, const char *under)
{
	static uint8_t buf[256];
	uint8_t allow[6] = {0x1E, 0, 0, 0, 0, 0};
	host_cmd(h, p->cdb, p->len, p->dir, buf, p->xfer);
	bool got = h->c.status == SCSI_RESERVATION_CONFLICT;
	if (got != want_conflict)
		fail_msg("%s from nexus %llx under %s: %s", p->name, (unsigned long long)h->nexus, under,
			 got ? "RESERVATION CONFLICT" : "no conflict");
	/* Undo a prevent that got through; allowing removal never conflicts. */
	host_cmd(h, allow, 6, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
}

/* ------------------------------------------------------------------ SPC-2 */

static void spc2_reserve_release(void **state)
{
	struct host *h = *state;
	load(h);
	hello(h, B);
	on(h, A);
	rr(h, 0x16, 0);
	expect_good(h);
	/* The holder may do everything but PERSISTENT RESERVE commands (SPC-2 5.5.1). */
	for (unsigned p = 0; p < N_PROBES; p++)
		probe(h, &probes[p], probes[p].cdb[0] == 0x5E, "its own SPC-2 reservation");
	on(h, B);
	for (unsigned p = 0; p < N_PROBES; p++)
		probe(h, &probes[p], !probes[p].spc2_ok, "another's SPC-2 reservation");
	uint8_t tur[6] = {0x00};
	uint8_t b[16];
	/* Another RESERVE conflicts; a RELEASE from B is GOOD and changes nothing. */
	rr(h, 0x16, 0);
	expect_conflict(h);
	rr(h, 0x56, 0);
	expect_conflict(h);
	rr(h, 0x17, 0);
	expect_good(h);
	rr(h, 0x57, 0);
	expect_good(h);
	host_cmd(h, tur, 6, SCSI_DIR_NONE, NULL, 0);
	expect_conflict(h);
	/* Persistent reservation commands conflict with an SPC-2 reservation, from the holder too. */
	pr_in(h, RK, b, 8);
	expect_conflict(h);
	on(h, A);
	pr_in(h, RC, b, 8);
	expect_conflict(h);
	pr_out(h, REG, 0, 0, K1);
	expect_conflict(h);
	/* The holder: everything, a RESERVE again, then RELEASE(10) frees the unit. */
	host_cmd(h, tur, 6, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	rr(h, 0x56, 0);
	expect_good(h);
	rr(h, 0x57, 0);
	expect_good(h);
	on(h, B);
	host_cmd(h, tur, 6, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	rr(h, 0x56, 0);
	expect_good(h);
	on(h, A);
	host_cmd(h, tur, 6, SCSI_DIR_NONE, NULL, 0);
	expect_conflict(h);
}

static void spc2_refused_fields(void **state)
{
	struct host *h = *state;
	/* Third-party (bit 4), LONGID (bit 1, ten-byte forms) and extent (bit 0) reservations. */
	const struct {
		uint8_t opcode, byte1;
		int bit;
	} cases[] = {
		{0x16, 0x10, 4}, {0x16, 0x01, 0}, {0x56, 0x10, 4}, {0x56, 0x02, 1}, {0x56, 0x01, 0},
		{0x17, 0x10, 4}, {0x17, 0x01, 0}, {0x57, 0x10, 4}, {0x57, 0x02, 1}, {0x57, 0x01, 0},
	};
	for (unsigned i = 0; i < VTL_ARRAY_SIZE(cases); i++) {
		rr(h, cases[i].opcode, cases[i].byte1);
		expect_field(h, ASC_INVALID_FIELD_IN_CDB, true, 1, cases[i].bit);
	}
	/* Nothing was reserved by them. */
	hello(h, B);
	rr(h, 0x16, 0);
	expect_good(h);
}

static void spc2_released_by_nexus_loss_and_reset(void **state)
{
	struct host *h = *state;
	load(h);
	hello(h, B);
	uint8_t tur[6] = {0x00};
	on(h, A);
	rr(h, 0x16, 0);
	expect_good(h);
	ssc_nexus_lost(h->d, A);
	on(h, B);
	host_cmd(h, tur, 6, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	rr(h, 0x16, 0);
	expect_good(h);
	ssc_reset(h->d);
	hello(h, A);
	host_cmd(h, tur, 6, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	/* A nexus loss of a non-holder leaves the reservation alone. */
	rr(h, 0x16, 0);
	expect_good(h);
	ssc_nexus_lost(h->d, B);
	hello(h, B);
	host_cmd(h, tur, 6, SCSI_DIR_NONE, NULL, 0);
	expect_conflict(h);
}

static void spc2_against_persistent(void **state)
{
	struct host *h = *state;
	load(h);
	hello(h, B);
	hello(h, C);
	/* A registration alone makes every RESERVE and RELEASE conflict (SPC-2 5.5.1). */
	on(h, B);
	pr_out(h, REG, 0, 0, K2);
	expect_good(h);
	on(h, A);
	rr(h, 0x16, 0);
	expect_conflict(h);
	rr(h, 0x17, 0);
	expect_conflict(h);
	on(h, B);
	rr(h, 0x16, 0);
	expect_conflict(h); /* registered, but no reservation to hold */
	/* The holder's RESERVE and RELEASE are GOOD and change nothing (SPC-4 5.9.3, CRH=1). */
	pr_out(h, RSV, WE, K2, 0);
	expect_good(h);
	rr(h, 0x16, 0);
	expect_good(h);
	rr(h, 0x57, 0);
	expect_good(h);
	uint64_t key;
	uint8_t type;
	assert_true(reservation(h, &key, &type));
	assert_int_equal(key, K2);
	assert_int_equal(type, WE);
	on(h, A); /* not an SPC-2 holder's victim: TUR passes a Write Exclusive reservation */
	uint8_t tur[6] = {0x00};
	host_cmd(h, tur, 6, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	rr(h, 0x56, 0);
	expect_conflict(h);
	/* Under a registrants-only type a registered non-holder gets the same exception. */
	on(h, B);
	pr_out(h, REL, WE, K2, 0);
	expect_good(h);
	pr_out(h, RSV, EA_RO, K2, 0);
	expect_good(h);
	on(h, C);
	pr_out(h, REG, 0, 0, K3);
	rr(h, 0x16, 0);
	expect_good(h);
	rr(h, 0x17, 0);
	expect_good(h);
	assert_true(reservation(h, &key, &type));
	assert_int_equal(type, EA_RO);
	on(h, A);
	rr(h, 0x16, 0);
	expect_conflict(h);
}

/* ------------------------------------------------------------ PERSISTENT RESERVE */

static void register_and_read_keys(void **state)
{
	struct host *h = *state;
	hello(h, B);
	uint8_t b[64];
	on(h, A);
	pr_in(h, RK, b, sizeof b);
	expect_good(h);
	assert_int_equal(h->c.data_len, 8);
	assert_int_equal(be_get(b, 4), 0);
	assert_int_equal(be_get(b + 4, 4), 0);
	/* Unregistering what is not registered: GOOD, generation unchanged. */
	pr_out(h, REG, 0, 0, 0);
	expect_good(h);
	assert_int_equal(generation(h), 0);
	pr_out(h, REG, 0, 0, K1);
	expect_good(h);
	assert_int_equal(generation(h), 1);
	/* An unregistered nexus naming a key conflicts. */
	on(h, B);
	pr_out(h, REG, 0, K1, K2);
	expect_conflict(h);
	pr_out(h, REG, 0, 0, K2);
	expect_good(h);
	pr_in(h, RK, b, sizeof b);
	expect_good(h);
	assert_int_equal(h->c.data_len, 24);
	assert_int_equal(be_get(b, 4), 2);
	assert_int_equal(be_get(b + 4, 4), 16);
	assert_int_equal(be_get(b + 8, 8), K1);
	assert_int_equal(be_get(b + 16, 8), K2);
	/* A short allocation cuts the list, never the lengths it reports. */
	memset(b, 0xEE, sizeof b);
	pr_in(h, RK, b, 12);
	expect_good(h);
	assert_int_equal(h->c.data_len, 12);
	assert_int_equal(be_get(b + 4, 4), 16);
	assert_int_equal(b[12], 0xEE);
	/* Key changes: the wrong key conflicts, the right one replaces it, IGNORE needs none. */
	on(h, A);
	pr_out(h, REG, 0, K3, K4);
	expect_conflict(h);
	assert_int_equal(generation(h), 2);
	pr_out(h, REG, 0, K1, K3);
	expect_good(h);
	pr_out(h, REGI, 0, 0xDEAD, K4);
	expect_good(h);
	assert_int_equal(generation(h), 4);
	pr_out(h, REG, 0, K4, 0); /* unregister */
	expect_good(h);
	pr_in(h, RK, b, sizeof b);
	assert_int_equal(be_get(b, 4), 5);
	assert_int_equal(be_get(b + 4, 4), 8);
	assert_int_equal(be_get(b + 8, 8), K2);
	/* REGISTER AND IGNORE EXISTING KEY registers an unregistered nexus whatever key it names. */
	pr_out(h, REGI, 0, 0xBAD, K1);
	expect_good(h);
	pr_in(h, RK, b, sizeof b);
	assert_int_equal(be_get(b + 4, 4), 16);
	assert_int_equal(be_get(b + 16, 8), K1);
}

static void reserve_and_release(void **state)
{
	struct host *h = *state;
	hello(h, B);
	hello(h, C);
	on(h, C);
	pr_out(h, RSV, WE, 0, 0);
	expect_conflict(h); /* not registered */
	on(h, B);
	pr_out(h, REG, 0, 0, K2);
	on(h, A);
	pr_out(h, REG, 0, 0, K1);
	uint32_t gen = generation(h);
	pr_out(h, RSV, WE, K2, 0);
	expect_conflict(h); /* another's key */
	pr_out(h, RSV, WE, K1, 0);
	expect_good(h);
	uint64_t key;
	uint8_t type;
	assert_true(reservation(h, &key, &type));
	assert_int_equal(key, K1);
	assert_int_equal(type, WE);
	/* The holder again with the same type: GOOD; with another type, or anyone else: conflict. */
	pr_out(h, RSV, WE, K1, 0);
	expect_good(h);
	pr_out(h, RSV, EA, K1, 0);
	expect_conflict(h);
	on(h, B);
	pr_out(h, RSV, WE, K2, 0);
	expect_conflict(h);
	/* RELEASE by a registered non-holder: GOOD, nothing changes. */
	pr_out(h, REL, WE, K2, 0);
	expect_good(h);
	assert_true(reservation(h, &key, &type));
	assert_int_equal(key, K1);
	on(h, C);
	pr_out(h, REL, WE, 0, 0);
	expect_conflict(h); /* unregistered */
	/* The holder releasing another type: INVALID RELEASE OF PERSISTENT RESERVATION. */
	on(h, A);
	pr_out(h, REL, EA, K1, 0);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_INVALID_RELEASE_OF_PR);
	assert_int_equal(h->sense[12], 0x26);
	assert_int_equal(h->sense[13], 0x04);
	pr_out(h, REL, WE, K2, 0);
	expect_conflict(h); /* wrong key */
	/* SCOPE other than LU_SCOPE, and reserved or obsolete types, are INVALID FIELD IN CDB byte 2. */
	pr_out(h, REL, 0x10 | WE, K1, 0);
	expect_field(h, ASC_INVALID_FIELD_IN_CDB, true, 2, 7);
	const uint8_t bad_types[] = {0, 2, 4, 9, 15};
	for (unsigned i = 0; i < sizeof bad_types; i++) {
		pr_out(h, RSV, bad_types[i], K1, 0);
		expect_field(h, ASC_INVALID_FIELD_IN_CDB, true, 2, 3);
	}
	pr_out(h, REL, WE, K1, 0);
	expect_good(h);
	assert_false(reservation(h, &key, &type));
	/* RESERVE and RELEASE leave the generation alone. */
	assert_int_equal(generation(h), gen);
	/* A released unit: anyone registered may reserve. */
	on(h, B);
	pr_out(h, RSV, EA, K2, 0);
	expect_good(h);
	pr_out(h, REL, EA, K2, 0);
	expect_good(h);
}

static void release_and_unregister_attentions(void **state)
{
	struct host *h = *state;
	hello(h, C);
	join(h, B, K2);
	join(h, A, K1);
	/* Releasing a plain type tells no one. */
	pr_out(h, RSV, EA, K1, 0);
	pr_out(h, REL, EA, K1, 0);
	expect_good(h);
	on(h, B);
	expect_no_ua(h);
	/* Releasing a registrants-only type tells the other registrants, not the releaser nor the unregistered. */
	on(h, A);
	pr_out(h, RSV, WE_RO, K1, 0);
	pr_out(h, REL, WE_RO, K1, 0);
	expect_good(h);
	on(h, B);
	expect_ua(h, ASC_RESERVATIONS_RELEASED);
	expect_no_ua(h);
	on(h, C);
	expect_no_ua(h);
	on(h, A);
	expect_no_ua(h);
	/* A registrants-only holder that unregisters releases the reservation, and the others learn it. */
	pr_out(h, RSV, EA_RO, K1, 0);
	pr_out(h, REG, 0, K1, 0);
	expect_good(h);
	uint64_t key;
	uint8_t type;
	assert_false(reservation(h, &key, &type));
	on(h, B);
	expect_ua(h, ASC_RESERVATIONS_RELEASED);
	/* A plain-type holder that unregisters releases it silently. */
	pr_out(h, RSV, WE, K2, 0);
	pr_out(h, REG, 0, K2, 0);
	expect_good(h);
	assert_false(reservation(h, &key, &type));
	/* An all-registrants reservation lasts while anyone is registered. */
	on(h, A);
	pr_out(h, REG, 0, 0, K1);
	on(h, B);
	pr_out(h, REG, 0, 0, K2);
	pr_out(h, RSV, EA_AR, K2, 0);
	expect_good(h);
	pr_out(h, REG, 0, K2, 0);
	assert_true(reservation(h, &key, &type));
	assert_int_equal(key, 0); /* all-registrants: no one key */
	assert_int_equal(type, EA_AR);
	on(h, A);
	pr_out(h, REG, 0, K1, 0);
	assert_false(reservation(h, &key, &type));
}

static void clear(void **state)
{
	struct host *h = *state;
	hello(h, B);
	hello(h, C);
	on(h, C);
	pr_out(h, CLR, 0, 0, 0);
	expect_conflict(h); /* unregistered */
	pr_out(h, REG, 0, 0, K3);
	on(h, B);
	pr_out(h, REG, 0, 0, K2);
	on(h, A);
	pr_out(h, REG, 0, 0, K1);
	pr_out(h, RSV, WE, K1, 0);
	uint32_t gen = generation(h);
	on(h, B);
	pr_out(h, CLR, 0, K1, 0);
	expect_conflict(h); /* wrong key */
	pr_out(h, CLR, 0, K2, 0);
	expect_good(h);
	uint8_t b[32];
	pr_in(h, RK, b, sizeof b);
	assert_int_equal(be_get(b, 4), gen + 1);
	assert_int_equal(be_get(b + 4, 4), 0);
	uint64_t key;
	uint8_t type;
	assert_false(reservation(h, &key, &type));
	expect_no_ua(h);
	on(h, A);
	expect_ua(h, ASC_RESERVATIONS_PREEMPTED);
	on(h, C);
	expect_ua(h, ASC_RESERVATIONS_PREEMPTED);
}

static void preempt(void **state)
{
	struct host *h = *state;
	join(h, A, K1);
	join(h, B, K2);
	join(h, C, K3);
	/* No reservation: PREEMPT removes the registrations holding the key. */
	on(h, B);
	uint32_t gen = generation(h);
	pr_out(h, PRE, WE, K2, K3);
	expect_good(h);
	assert_int_equal(generation(h), gen + 1);
	on(h, C);
	expect_ua(h, ASC_REGISTRATIONS_PREEMPTED);
	pr_out(h, REG, 0, K3, K4);
	expect_conflict(h); /* no longer registered */
	pr_out(h, REG, 0, 0, K3);
	expect_good(h);
	/* A holds Write Exclusive; B preempts it as Exclusive Access. */
	on(h, A);
	pr_out(h, RSV, WE, K1, 0);
	on(h, B);
	gen = generation(h);
	pr_out(h, PRE, EA, K2, K1);
	expect_good(h);
	assert_int_equal(generation(h), gen + 1);
	uint64_t key;
	uint8_t type;
	assert_true(reservation(h, &key, &type));
	assert_int_equal(key, K2);
	assert_int_equal(type, EA);
	expect_no_ua(h);
	on(h, A);
	expect_ua(h, ASC_REGISTRATIONS_PREEMPTED);
	on(h, C);
	expect_ua(h, ASC_RESERVATIONS_RELEASED); /* the type changed under a registrant that kept its key */
	uint8_t b[64];
	pr_in(h, RK, b, sizeof b);
	assert_int_equal(be_get(b + 4, 4), 16); /* B and C */
	/* A key no one holds conflicts; key zero names no one (INVALID FIELD IN PARAMETER LIST, byte 8). */
	on(h, B);
	pr_out(h, PRE, EA, K2, K4);
	expect_conflict(h);
	pr_out(h, PRA, EA, K2, 0);
	expect_field(h, ASC_INVALID_FIELD_IN_PARAMETERS, false, 8, -1);
	on(h, A);
	pr_out(h, PRE, EA, K1, K2);
	expect_conflict(h); /* A is not registered any more */
	/* PREEMPT AND ABORT of a non-holder's key: its registration goes, the reservation stays. */
	on(h, B);
	pr_out(h, PRA, EA, K2, K3);
	expect_good(h);
	assert_true(reservation(h, &key, &type));
	assert_int_equal(key, K2);
	on(h, C);
	expect_ua(h, ASC_REGISTRATIONS_PREEMPTED);
	/* The holder preempting its own key changes the type and keeps its registration. */
	on(h, B);
	pr_out(h, PRE, WE, K2, K2);
	expect_good(h);
	assert_true(reservation(h, &key, &type));
	assert_int_equal(key, K2);
	assert_int_equal(type, WE);
	/* All registrants: SERVICE ACTION RESERVATION KEY zero removes every other registration. */
	on(h, A);
	pr_out(h, REG, 0, 0, K1);
	on(h, C);
	pr_out(h, REG, 0, 0, K3);
	on(h, B);
	pr_out(h, REL, WE, K2, 0);
	pr_out(h, RSV, WE_AR, K2, 0);
	on(h, A);
	pr_out(h, PRE, EA_RO, K1, 0);
	expect_good(h);
	assert_true(reservation(h, &key, &type));
	assert_int_equal(key, K1);
	assert_int_equal(type, EA_RO);
	pr_in(h, RK, b, sizeof b);
	assert_int_equal(be_get(b + 4, 4), 8);
	assert_int_equal(be_get(b + 8, 8), K1);
	on(h, B);
	expect_ua(h, ASC_REGISTRATIONS_PREEMPTED);
	on(h, C);
	expect_ua(h, ASC_REGISTRATIONS_PREEMPTED);
}

static void parameter_list_checks(void **state)
{
	struct host *h = *state;
	/* The parameter list is 24 bytes exactly: shorter or longer is PARAMETER LIST LENGTH ERROR. */
	pr_out_len(h, REG, 0, 0, K1, 0, 23, 23);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH);
	pr_out_len(h, REG, 0, 0, K1, 0, 25, 25);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH);
	pr_out_len(h, REG, 0, 0, K1, 0, 0, 0);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH);
	pr_out_len(h, REG, 0, 0, K1, 0, 24, 10); /* the host sent less than it said */
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH);
	/* SPEC_I_PT (any service action), ALL_TG_PT and APTPL (registering): INVALID FIELD IN PARAMETER LIST byte 20. */
	pr_out_len(h, REG, 0, 0, K1, 0x08, 24, 24);
	expect_field(h, ASC_INVALID_FIELD_IN_PARAMETERS, false, 20, 3);
	pr_out_len(h, REG, 0, 0, K1, 0x08, 48, 48); /* a longer list with SPEC_I_PT: the bit is what is refused */
	expect_field(h, ASC_INVALID_FIELD_IN_PARAMETERS, false, 20, 3);
	pr_out_len(h, REG, 0, 0, K1, 0x04, 24, 24);
	expect_field(h, ASC_INVALID_FIELD_IN_PARAMETERS, false, 20, 2);
	pr_out_len(h, REGI, 0, 0, K1, 0x01, 24, 24);
	expect_field(h, ASC_INVALID_FIELD_IN_PARAMETERS, false, 20, 0);
	assert_int_equal(generation(h), 0); /* none of them registered */
	pr_out(h, REG, 0, 0, K1);
	expect_good(h);
	pr_out_len(h, RSV, WE, K1, 0, 0x08, 24, 24);
	expect_field(h, ASC_INVALID_FIELD_IN_PARAMETERS, false, 20, 3);
	/* APTPL and ALL_TG_PT are ignored outside registration (SPC-4 6.17.3). */
	pr_out_len(h, RSV, WE, K1, 0, 0x05, 24, 24);
	expect_good(h);
	/* Unknown service actions: REGISTER AND MOVE and beyond. */
	uint8_t cdb[10] = {0x5F, 0x07, 0, 0, 0, 0, 0, 0, 24, 0};
	uint8_t p[24] = {0};
	host_cmd(h, cdb, 10, SCSI_DIR_OUT, p, 24);
	expect_field(h, ASC_INVALID_FIELD_IN_CDB, true, 1, 4);
	uint8_t in[10] = {0x5E, 0x04, 0, 0, 0, 0, 0, 0, 24, 0};
	host_cmd(h, in, 10, SCSI_DIR_IN, p, 24);
	expect_field(h, ASC_INVALID_FIELD_IN_CDB, true, 1, 4);
	/* A CDB that ends before its service action: the pointer stays inside it. */
	host_cmd(h, in, 1, SCSI_DIR_IN, p, 24);
	expect_field(h, ASC_INVALID_FIELD_IN_CDB, true, 0, -1);
}

static void registration_resources(void **state)
{
	struct host *h = *state;
	for (uint64_t n = 0; n < 32; n++) {
		hello(h, 0x1000 + n);
		pr_out(h, REG, 0, 0, 0x100 + n);
		expect_good(h);
	}
	hello(h, 0x2000);
	pr_out(h, REG, 0, 0, K1);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_INSUFFICIENT_REGISTRATION);
	assert_int_equal(h->sense[12], 0x55);
	assert_int_equal(h->sense[13], 0x04);
	assert_int_equal(generation(h), 32);
	on(h, 0x1000);
	pr_out(h, REG, 0, 0x100, 0);
	on(h, 0x2000);
	pr_out(h, REG, 0, 0, K1);
	expect_good(h);
}

static void report_capabilities(void **state)
{
	struct host *h = *state;
	uint8_t b[16];
	pr_in(h, RC, b, sizeof b);
	expect_good(h);
	assert_int_equal(h->c.data_len, 8);
	/* LENGTH 8; CRH; TMV, ALLOW COMMANDS 011b; PTPL_C, ATP_C, SIP_C 0; all six types in the mask. */
	const uint8_t want[8] = {0x00, 0x08, 0x10, 0xB0, 0xEA, 0x01, 0x00, 0x00};
	assert_memory_equal(b, want, 8);
	pr_in(h, RC, b, 4);
	assert_int_equal(h->c.data_len, 4);
	assert_int_equal(b[1], 0x08);
}

static void read_full_status(void **state)
{
	struct host *h = *state;
	hello(h, B);
	uint8_t b[128];
	pr_in(h, RFS, b, sizeof b);
	expect_good(h);
	assert_int_equal(h->c.data_len, 8);
	pr_out(h, REG, 0, 0, K2);
	on(h, A);
	pr_out(h, REG, 0, 0, K1);
	pr_out(h, RSV, EA_RO, K1, 0);
	on(h, B);
	pr_in(h, RFS, b, sizeof b);
	expect_good(h);
	assert_int_equal(be_get(b, 4), 2);
	assert_int_equal(be_get(b + 4, 4), 96);
	assert_int_equal(h->c.data_len, 104);
	for (unsigned i = 0; i < 2; i++) {
		const uint8_t *d = b + 8 + 48 * i;
		bool holder = be_get(d, 8) == K1;
		assert_true(holder || be_get(d, 8) == K2);
		assert_int_equal(d[12], holder ? 0x01 : 0x00); /* R_HOLDER; ALL_TG_PT 0 */
		assert_int_equal(d[13], holder ? EA_RO : 0);   /* scope/type only for the holder */
		assert_int_equal(be_get(d + 18, 2), 1);        /* relative target port 1 */
		assert_int_equal(be_get(d + 20, 4), 24);       /* TransportID length */
		assert_int_equal(d[24], 0x0F);                 /* no specific protocol */
		assert_int_equal(be_get(d + 28, 8), holder ? A : B);
	}
	/* All registrants: every registrant is a holder. */
	on(h, A);
	pr_out(h, REL, EA_RO, K1, 0);
	pr_out(h, RSV, WE_AR, K1, 0);
	pr_in(h, RFS, b, sizeof b);
	for (unsigned i = 0; i < 2; i++) {
		assert_int_equal(b[8 + 48 * i + 12], 0x01);
		assert_int_equal(b[8 + 48 * i + 13], WE_AR);
	}
	/* The allocation length cuts the descriptors, not the length. */
	pr_in(h, RFS, b, 30);
	assert_int_equal(h->c.data_len, 30);
	assert_int_equal(be_get(b + 4, 4), 96);
}

static void persistent_survives_reset_and_nexus_loss(void **state)
{
	struct host *h = *state;
	pr_out(h, REG, 0, 0, K1);
	pr_out(h, RSV, EA, K1, 0);
	ssc_reset(h->d);
	ssc_nexus_lost(h->d, A);
	hello(h, A);
	uint64_t key;
	uint8_t type;
	assert_true(reservation(h, &key, &type));
	assert_int_equal(key, K1);
	assert_int_equal(type, EA);
	assert_int_equal(generation(h), 1);
}

/* ---------------------------------------------- which drive commands conflict */

static void drive_commands_under_each_type(void **state)
{
	struct host *h = *state;
	load(h);
	const uint64_t nexus[N_WHO] = {A, B, C};
	hello(h, C);
	join(h, B, K2);
	join(h, A, K1);
	char under[32];
	for (unsigned t = 0; t < VTL_ARRAY_SIZE(expected); t++) {
		on(h, A);
		pr_out(h, RSV, expected[t].type, K1, 0);
		expect_good(h);
		snprintf(under, sizeof under, "type %u", expected[t].type);
		for (unsigned w = 0; w < N_WHO; w++) {
			on(h, nexus[w]);
			for (unsigned p = 0; p < N_PROBES; p++)
				probe(h, &probes[p], expected[t].conflict[w][probes[p].cls], under);
		}
		on(h, A);
		pr_out(h, REL, expected[t].type, K1, 0);
		expect_good(h);
	}
	/* With no reservation nothing conflicts, registered or not. */
	for (unsigned w = 0; w < N_WHO; w++) {
		on(h, nexus[w]);
		for (unsigned p = 0; p < N_PROBES; p++)
			probe(h, &probes[p], false, "no reservation");
	}
}


/* ---- the loss observer (struct scsi_res on_loss), as the drive's CKORP/CKORL hear it ---- */

struct losses {
	unsigned n;
	uint64_t nexus[8];
	bool preempted[8];
};

static void record_loss(void *arg, uint64_t nexus, bool preempted)
{
	struct losses *l = arg;
	if (l->n < 8) {
		l->nexus[l->n] = nexus;
		l->preempted[l->n] = preempted;
	}
	l->n++;
}

/* Fails unless the observer heard exactly one loss since the last check: nexus's, preempted or not. */
static void expect_loss(struct losses *l, uint64_t nexus, bool preempted)
{
	assert_int_equal(l->n, 1);
	assert_int_equal(l->nexus[0], nexus);
	assert_int_equal(l->preempted[0], preempted);
	l->n = 0;
}

static void loss_observer(void **state)
{
	struct host *h = *state;
	struct losses l = {0};
	h->d->dev.res.on_loss = record_loss;
	h->d->dev.res.loss_arg = &l;
	join(h, B, K2);
	join(h, A, K1);
	/* RELEASE by the holder: a loss, not a preempt. */
	pr_out(h, RSV, WE, K1, 0);
	expect_good(h);
	assert_int_equal(l.n, 0);
	pr_out(h, REL, WE, K1, 0);
	expect_good(h);
	expect_loss(&l, A, false);
	/* PREEMPT by B: A is preempted; B, the issuer, holds it next and hears nothing. */
	pr_out(h, RSV, WE, K1, 0);
	expect_good(h);
	on(h, B);
	pr_out(h, PRE, WE, K2, K1);
	expect_good(h);
	expect_loss(&l, A, true);
	/* A refused command changes nothing, so tells nothing (A is no longer registered). */
	hello(h, A);
	pr_out(h, RSV, WE, K1, 0);
	expect_conflict(h);
	assert_int_equal(l.n, 0);
	/* All registrants hold: only the one that unregisters loses it; a CLEAR takes it from the rest. */
	on(h, B);
	pr_out(h, REL, WE, K2, 0);
	expect_good(h);
	expect_loss(&l, B, false);
	hello(h, A);
	pr_out(h, REG, 0, 0, K1);
	expect_good(h);
	hello(h, C);
	pr_out(h, REG, 0, 0, K3);
	expect_good(h);
	pr_out(h, RSV, WE_AR, K3, 0);
	expect_good(h);
	pr_out(h, REG, 0, K3, 0); /* C unregisters */
	expect_good(h);
	expect_loss(&l, C, false);
	on(h, A);
	pr_out(h, CLR, 0, K1, 0);
	expect_good(h);
	assert_int_equal(l.n, 2); /* A and B, neither preempted */
	assert_false(l.preempted[0] || l.preempted[1]);
	assert_true((l.nexus[0] == A && l.nexus[1] == B) || (l.nexus[0] == B && l.nexus[1] == A));
	l.n = 0;
	/* An SPC-2 reservation ends by its nexus's loss, and by a reset. */
	rr(h, 0x16, 0);
	expect_good(h);
	ssc_nexus_lost(h->d, A);
	expect_loss(&l, A, false);
	hello(h, B);
	rr(h, 0x16, 0);
	expect_good(h);
	ssc_reset(h->d);
	expect_loss(&l, B, false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(spc2_reserve_release, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(spc2_refused_fields, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(spc2_released_by_nexus_loss_and_reset, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(spc2_against_persistent, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(register_and_read_keys, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(reserve_and_release, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(release_and_unregister_attentions, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(clear, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(preempt, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(parameter_list_checks, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(registration_resources, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(report_capabilities, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(read_full_status, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(persistent_survives_reset_and_nexus_loss, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(drive_commands_under_each_type, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(loss_observer, host_setup, host_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
