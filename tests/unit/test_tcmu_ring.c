/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The TCMU ring (vtl/tcmu/ring.c) against a ring simulated in memory the way
 * the kernel's target_core_user fills it: a mailbox, a small command ring
 * and a data area, command entries whose CDB and iovecs are offsets into the
 * region, PAD entries at the ring's end, several commands per doorbell, TMR
 * and unknown entries. What the kernel reads back is checked: status, sense
 * bytes, the length read, and cmd_tail.
 */
#include "vtl/tcmu/uapi.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/grow.h"
#include "common/vtl_error.h"
#include "tests/unit/scsi_host.h"
#include "vtl/drive/ssc.h"
#include "vtl/tcmu/front.h"
#include "vtl/tcmu/ring.h"

#define CMDR_OFF 128          /* the kernel puts the ring right after the mailbox (one cache line or more) */
#define DATA_LEN (64u << 10)

/* The kernel's side of a simulated ring. */
struct kring {
	uint8_t *map;
	size_t len;
	uint32_t cmdr_size;
	uint32_t data_off, data_used;
	uint16_t next_id;
};

static struct tcmu_mailbox *mb(struct kring *k)
{
	return (struct tcmu_mailbox *)k->map;
}

static void kring_init(struct kring *k, uint32_t cmdr_size, bool read_len)
{
	k->cmdr_size = cmdr_size;
	k->data_off = CMDR_OFF + cmdr_size;
	k->len = k->data_off + DATA_LEN;
	k->map = calloc(1, k->len);
	assert_non_null(k->map);
	k->data_used = 0;
	k->next_id = 1;
	mb(k)->version = TCMU_MAILBOX_VERSION;
	mb(k)->flags = read_len ? TCMU_MAILBOX_FLAG_CAP_READ_LEN : 0;
	mb(k)->cmdr_off = CMDR_OFF;
	mb(k)->cmdr_size = cmdr_size;
}

static struct tcmu_cmd_entry *at(struct kring *k, uint32_t off)
{
	return (struct tcmu_cmd_entry *)(k->map + CMDR_OFF + off);
}

/* Room for len bytes at the head: the kernel pads to the ring's end first when they do not fit there. */
static void kring_make_room(struct kring *k, uint32_t len)
{
	uint32_t head = mb(k)->cmd_head;
	if (k->cmdr_size - head >= len)
		return;
	struct tcmu_cmd_entry *pad = at(k, head);
	memset(&pad->hdr, 0, sizeof pad->hdr);
	pad->hdr.len_op = (k->cmdr_size - head) | TCMU_OP_PAD; /* lengths are 8-byte multiples: the op fits below */
	mb(k)->cmd_head = 0;
}

static uint32_t round_up(uint32_t n)
{
	return (n + TCMU_OP_ALIGN_SIZE - 1) / TCMU_OP_ALIGN_SIZE * TCMU_OP_ALIGN_SIZE;
}

/* Appends a command with cdb and niov data buffers of len bytes each; returns its cmd_id. */
static uint16_t kring_cmd(struct kring *k, const uint8_t *cdb, size_t cdb_len, unsigned niov, size_t len)
{
	/* As the kernel sizes it: room for the iovecs, and never less than a whole entry (the response overlays it). */
	size_t need = offsetof(struct tcmu_cmd_entry, req.iov) + niov * sizeof(struct iovec);
	uint32_t elen = round_up((uint32_t)(need > sizeof(struct tcmu_cmd_entry) ? need : sizeof(struct tcmu_cmd_entry)));
	kring_make_room(k, elen);
	uint32_t head = mb(k)->cmd_head;
	struct tcmu_cmd_entry *e = at(k, head);
	memset(e, 0, elen);
	e->hdr.len_op = elen | TCMU_OP_CMD;
	e->hdr.cmd_id = k->next_id++;
	e->req.iov_cnt = niov;
	/* The CDB and the data live in the data area, given as offsets from the start of the map. */
	uint32_t cdb_at = k->data_off + k->data_used;
	memcpy(k->map + cdb_at, cdb, cdb_len);
	k->data_used += 32;
	e->req.cdb_off = cdb_at;
	for (unsigned i = 0; i < niov; i++) {
		e->req.iov[i].iov_base = (void *)(uintptr_t)(k->data_off + k->data_used);
		e->req.iov[i].iov_len = len;
		k->data_used += (uint32_t)len;
	}
	assert_true(k->data_used <= DATA_LEN);
	mb(k)->cmd_head = (head + elen) % k->cmdr_size;
	return e->hdr.cmd_id;
}

/* An entry of another kind (TMR, or one this code does not know) at the head. */
static uint32_t kring_other(struct kring *k, enum tcmu_opcode op)
{
	uint32_t elen = round_up(sizeof(struct tcmu_tmr_entry));
	kring_make_room(k, elen);
	uint32_t head = mb(k)->cmd_head;
	struct tcmu_cmd_entry *e = at(k, head);
	memset(e, 0, elen);
	e->hdr.len_op = elen | (uint32_t)op;
	mb(k)->cmd_head = (head + elen) % k->cmdr_size;
	return head;
}

/* A test's ring: the kernel's side, this side over it, and one command slot. */
struct fix {
	struct kring k;
	struct tcmu_ring r;
	struct tcmu_ring_cmd *rc;
};

static struct fix *fix_new(uint32_t cmdr_size, bool read_len)
{
	struct fix *f = calloc(1, sizeof *f);
	assert_non_null(f);
	kring_init(&f->k, cmdr_size, read_len);
	EXPECT_RC(tcmu_ring_init(&f->r, f->k.map, f->k.len), 0);
	f->rc = calloc(3, sizeof *f->rc);
	assert_non_null(f->rc);
	return f;
}

static void fix_free(struct fix *f)
{
	free(f->rc);
	free(f->k.map);
	free(f);
}

static const uint8_t inquiry[6] = {0x12, 0, 0, 0, 36, 0};
static const uint8_t read6[6] = {0x08, 0, 0, 0x10, 0, 0}; /* variable, 4096 bytes */

static void good_inquiry(void **state)
{
	(void)state;
	struct fix *f = fix_new(4096, true);
	struct kring k = f->k;
	struct tcmu_ring r = f->r;
	struct tcmu_ring_cmd *rc = f->rc;
	assert_int_equal(tcmu_ring_next(&r, rc), 0); /* empty */
	uint16_t id = kring_cmd(&k, inquiry, 6, 1, 96);
	assert_int_equal(tcmu_ring_next(&r, rc), 1);
	assert_int_equal(rc->cmd_id, id);
	assert_int_equal(rc->cmd.cdb_len, 6);
	assert_memory_equal(rc->cmd.cdb, inquiry, 6);
	assert_int_equal(rc->cmd.iov_cnt, 1);
	assert_int_equal(rc->cmd.xfer_len, 96);
	/* The data buffer is the region's own memory: written in place. */
	uint64_t data_at = (uint64_t)(uintptr_t)at(&k, rc->off)->req.iov[0].iov_base;
	assert_ptr_equal(rc->cmd.iov[0].iov_base, k.map + data_at);
	memset(rc->cmd.iov[0].iov_base, 0xAB, 36);
	scsi_done(&rc->cmd, 36);
	struct tcmu_ring_cmd *none = calloc(1, sizeof *none);
	assert_int_equal(tcmu_ring_next(&r, none), 0); /* nothing else was queued */
	free(none);
	tcmu_ring_complete(&r, rc);
	struct tcmu_cmd_entry *e = at(&k, rc->off);
	assert_int_equal(e->rsp.scsi_status, 0);
	assert_true(e->hdr.uflags & TCMU_UFLAG_READ_LEN);
	assert_int_equal(e->rsp.read_len, 36);
	assert_int_equal(k.map[data_at], 0xAB);
	assert_int_equal(mb(&k)->cmd_tail, mb(&k)->cmd_head);
	fix_free(f);
}

/* A CHECK CONDITION carries its whole sense: fixed format with VALID, INFORMATION and the ILI bit. */
static void check_condition_sense(void **state)
{
	(void)state;
	struct fix *f = fix_new(4096, false);
	struct kring k = f->k;
	struct tcmu_ring r = f->r;
	struct tcmu_ring_cmd *rc = f->rc;
	kring_cmd(&k, read6, 6, 1, 4096);
	assert_int_equal(tcmu_ring_next(&r, rc), 1);
	struct scsi_sense s = sense_of(SK_NO_SENSE, ASC_NONE);
	s.ili = true;
	s.info_valid = true;
	s.info = 1000; /* 1000 bytes fewer than asked */
	scsi_fail(&rc->cmd, s);
	rc->cmd.data_len = 3096;
	tcmu_ring_complete(&r, rc);
	struct tcmu_cmd_entry *e = at(&k, rc->off);
	assert_int_equal(e->rsp.scsi_status, SCSI_CHECK_CONDITION);
	uint8_t want[TCMU_SENSE_BUFFERSIZE] = {0};
	size_t n = sense_encode(&s, want, sizeof want);
	assert_true(n >= 18);
	assert_memory_equal(e->rsp.sense_buffer, want, n);
	struct scsi_sense got;
	assert_true(sense_decode((const uint8_t *)e->rsp.sense_buffer, TCMU_SENSE_BUFFERSIZE, &got));
	assert_false(got.deferred);
	assert_true(got.ili);
	assert_true(got.info_valid);
	assert_int_equal(got.info, 1000);
	assert_false(e->hdr.uflags & TCMU_UFLAG_READ_LEN); /* this kernel did not offer it */
	fix_free(f);
}

/* Several commands per doorbell, completed in order; the tail follows each completion. */
static void several_per_kick(void **state)
{
	(void)state;
	struct fix *f = fix_new(4096, true);
	struct kring k = f->k;
	struct tcmu_ring r = f->r;
	struct tcmu_ring_cmd *rc = f->rc;
	uint16_t ids[3];
	for (int i = 0; i < 3; i++)
		ids[i] = kring_cmd(&k, inquiry, 6, 1, 64);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(tcmu_ring_next(&r, &rc[i]), 1);
		assert_int_equal(rc[i].cmd_id, ids[i]);
	}
	struct tcmu_ring_cmd *none = calloc(1, sizeof *none);
	assert_int_equal(tcmu_ring_next(&r, none), 0);
	free(none);
	for (int i = 0; i < 3; i++) {
		scsi_done(&rc[i].cmd, 8);
		tcmu_ring_complete(&r, &rc[i]);
		uint32_t want = (rc[i].off + tcmu_hdr_get_len(at(&k, rc[i].off)->hdr.len_op)) % k.cmdr_size;
		assert_int_equal(mb(&k)->cmd_tail, want);
	}
	assert_int_equal(mb(&k)->cmd_tail, mb(&k)->cmd_head);
	fix_free(f);
}

/* A small ring wraps: the kernel's PAD fills the end, the next entry is at 0, the tail wraps too. */
static void wrap_around_with_pad(void **state)
{
	(void)state;
	struct fix *f = fix_new(512, true);
	struct kring k = f->k;
	struct tcmu_ring r = f->r;
	struct tcmu_ring_cmd *rc = f->rc;
	unsigned pads_seen = 0;
	for (int round = 0; round < 40; round++) {
		uint32_t head_before = mb(&k)->cmd_head;
		uint16_t id = kring_cmd(&k, round % 2 ? read6 : inquiry, 6, 2, 128);
		pads_seen += mb(&k)->cmd_head < head_before;
		assert_int_equal(tcmu_ring_next(&r, rc), 1);
		assert_int_equal(rc->cmd_id, id);
		assert_int_equal(rc->cmd.iov_cnt, 2);
		assert_int_equal(rc->cmd.xfer_len, 256);
		scsi_done(&rc->cmd, 256);
		tcmu_ring_complete(&r, rc);
		assert_int_equal(mb(&k)->cmd_tail, mb(&k)->cmd_head);
		k.data_used = 0;
	}
	assert_true(pads_seen >= 5);
	assert_true(r.skipped >= 5); /* every PAD stepped over */
	fix_free(f);
}

/* TMR notifications and entries of an unknown kind are stepped over; the unknown one is flagged back. */
static void tmr_and_unknown_entries(void **state)
{
	(void)state;
	struct fix *f = fix_new(4096, true);
	struct kring k = f->k;
	struct tcmu_ring r = f->r;
	struct tcmu_ring_cmd *rc = f->rc;
	kring_other(&k, TCMU_OP_TMR);
	uint32_t unknown = kring_other(&k, (enum tcmu_opcode)5);
	uint16_t id = kring_cmd(&k, inquiry, 6, 1, 64);
	assert_int_equal(tcmu_ring_next(&r, rc), 1);
	assert_int_equal(rc->cmd_id, id);
	assert_int_equal(r.skipped, 2);
	assert_true(at(&k, unknown)->hdr.uflags & TCMU_UFLAG_UNKNOWN_OP);
	scsi_done(&rc->cmd, 0);
	tcmu_ring_complete(&r, rc);
	assert_int_equal(mb(&k)->cmd_tail, mb(&k)->cmd_head);
	/* Entries after the last command: stepped over when taken, released by the next completion. */
	kring_other(&k, TCMU_OP_TMR);
	kring_cmd(&k, inquiry, 6, 1, 64);
	assert_int_equal(tcmu_ring_next(&r, rc), 1);
	scsi_done(&rc->cmd, 0);
	tcmu_ring_complete(&r, rc);
	assert_int_equal(mb(&k)->cmd_tail, mb(&k)->cmd_head);
	fix_free(f);
}

/* An entry whose data or CDB lies outside the region is answered with an error and never runs. */
static void malformed_entry(void **state)
{
	(void)state;
	struct fix *f = fix_new(4096, true);
	struct kring k = f->k;
	struct tcmu_ring r = f->r;
	struct tcmu_ring_cmd *rc = f->rc;
	kring_cmd(&k, inquiry, 6, 1, 64);
	at(&k, 0)->req.iov[0].iov_base = (void *)(uintptr_t)(k.len - 10); /* 64 bytes from 10 before the end */
	assert_int_equal(tcmu_ring_next(&r, rc), 1);
	assert_true(rc->malformed);
	assert_int_equal(rc->cmd.status, SCSI_CHECK_CONDITION);
	assert_int_equal(r.malformed, 1);
	tcmu_ring_complete(&r, rc);
	struct scsi_sense got;
	assert_true(sense_decode((const uint8_t *)at(&k, rc->off)->rsp.sense_buffer, TCMU_SENSE_BUFFERSIZE, &got));
	assert_int_equal(got.key, SK_HARDWARE_ERROR);
	assert_int_equal(mb(&k)->cmd_tail, mb(&k)->cmd_head);
	/* A mailbox this code does not understand is refused. */
	mb(&k)->version = 1;
	assert_int_equal(tcmu_ring_init(&r, k.map, k.len), VTL_E_INVAL);
	mb(&k)->version = TCMU_MAILBOX_VERSION;
	mb(&k)->cmdr_size = (uint32_t)k.len;
	assert_int_equal(tcmu_ring_init(&r, k.map, k.len), VTL_E_INVAL);
	fix_free(f);
}

/* Through a real drive: an opcode it does not know comes back ILLEGAL REQUEST, with the sense in the entry. */
static void unknown_scsi_opcode_through_a_drive(void **state)
{
	struct host *h = *state;
	struct fix *f = fix_new(4096, true);
	struct kring k = f->k;
	struct tcmu_ring r = f->r;
	struct tcmu_ring_cmd *rc = f->rc;
	static const uint8_t bogus[10] = {0x5D, 0, 0, 0, 0, 0, 0, 0, 0, 0}; /* group 2: a 10-byte CDB no drive has */
	kring_cmd(&k, bogus, 10, 0, 0);
	assert_int_equal(tcmu_ring_next(&r, rc), 1);
	assert_int_equal(rc->cmd.cdb_len, 10);
	rc->cmd.nexus = HOST_NEXUS;
	ssc_execute(h->d, &rc->cmd);
	tcmu_ring_complete(&r, rc);
	struct tcmu_cmd_entry *e = at(&k, rc->off);
	assert_int_equal(e->rsp.scsi_status, SCSI_CHECK_CONDITION);
	struct scsi_sense got;
	assert_true(sense_decode((const uint8_t *)e->rsp.sense_buffer, TCMU_SENSE_BUFFERSIZE, &got));
	assert_int_equal(got.key, SK_ILLEGAL_REQUEST);
	assert_int_equal(got.asc, ASC_INVALID_OPCODE);
	fix_free(f);
}

static void cdb_lengths(void **state)
{
	(void)state;
	static const uint8_t c6[1] = {0x08}, c10[1] = {0x28}, c12[1] = {0xA5}, c16[1] = {0x8A}, res[1] = {0x60};
	assert_int_equal(tcmu_cdb_len(c6), 6);
	assert_int_equal(tcmu_cdb_len(c10), 10);
	assert_int_equal(tcmu_cdb_len(c12), 12);
	assert_int_equal(tcmu_cdb_len(c16), 16);
	assert_int_equal(tcmu_cdb_len(res), 0);
	uint8_t var[8] = {0x7F, 0, 0, 0, 0, 0, 0, 24};
	assert_int_equal(tcmu_cdb_len(var), 32);
}

/* The UIO names the front end serves: this subtype, a library, a LUN; anything else is another's. */
static void uio_names(void **state)
{
	(void)state;
	const char *lib;
	size_t len;
	unsigned lun = 99;
	EXPECT_RC(tcmu_parse_uio_name("tcm-user/1/vtl_lib1_lun2/vtl/lib1/2", &lib, &len, &lun), 0);
	assert_int_equal(len, 4);
	assert_memory_equal(lib, "lib1", 4);
	assert_int_equal(lun, 2);
	static const char *const others[] = {
		"tcm-user/1/disk0/file//tmp/disk.img", /* tcmu-runner's file handler */
		"tcm-user/1/tape0/vtlx/lib1/0", "tcm-user/1/lun/vtl/lib1/", "tcm-user/1/lun/vtl/lib1/x",
		"tcm-user/1/lun/vtl/0", "uio_pci_generic", "tcm-user/1", "tcm-user/1/lun/vtl/lib1/70000",
	};
	for (size_t i = 0; i < VTL_ARRAY_SIZE(others); i++)
		assert_int_equal(tcmu_parse_uio_name(others[i], &lib, &len, &lun), VTL_E_NOTFOUND);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(good_inquiry),
		cmocka_unit_test(check_condition_sense),
		cmocka_unit_test(several_per_kick),
		cmocka_unit_test(wrap_around_with_pad),
		cmocka_unit_test(tmr_and_unknown_entries),
		cmocka_unit_test(malformed_entry),
		cmocka_unit_test(cdb_lengths),
		cmocka_unit_test(uio_names),
		cmocka_unit_test_setup_teardown(unknown_scsi_opcode_through_a_drive, host_setup, host_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
