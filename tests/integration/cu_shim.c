/* SPDX-License-Identifier: Apache-2.0 */
/*
 * LD_PRELOAD shim that lets libiscsi's iscsi-test-cu run against a tape drive
 * or a medium changer.
 *
 * iscsi-test-cu's setup (test-tool/iscsi-test-cu.c, main) sends READ
 * CAPACITY(10) before any test and gives up unless it ends GOOD with a
 * non-zero block length: it sizes its scratch buffer from the answer. READ
 * CAPACITY is an SBC command that neither SSC nor SMC defines, so our LUNs
 * rightly reject it. The test tool sends every CDB through libiscsi's
 * iscsi_scsi_command_sync(), which it imports from libiscsi.so; this shim
 * interposes that one symbol, answers READ CAPACITY(10) itself without sending
 * anything, and hands every other command to libiscsi unchanged. READ
 * CAPACITY(16) is passed through: the setup accepts its failure.
 *
 * Build: -shared -fPIC, linked with -ldl. Use: LD_PRELOAD=cu_shim.so iscsi-test-cu ...
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>

/* SBC-3 5.15: READ CAPACITY(10) parameter data is 8 bytes: last LBA, block length (big-endian). */
#define READ_CAPACITY10_DATA_LEN 8
/* A plausible disk for the tool's bookkeeping: 512-byte blocks, 1 MiB. Nothing reads these blocks. */
#define FAKE_BLOCK_LENGTH 512u
#define FAKE_LAST_LBA 2047u

typedef struct scsi_task *(*command_sync_fn)(struct iscsi_context *, int, struct scsi_task *,
					     struct iscsi_data *);

static void put_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

/*
 * Completes a READ CAPACITY(10) task locally with GOOD status and the fake
 * capacity. Returns task, or NULL (libiscsi's "not sent") when out of memory.
 * The data buffer belongs to the task: scsi_free_scsi_task() frees datain.data.
 */
static struct scsi_task *answer_read_capacity10(struct scsi_task *task)
{
	unsigned char *data = malloc(READ_CAPACITY10_DATA_LEN);
	if (data == NULL)
		return NULL;
	put_be32(data, FAKE_LAST_LBA);
	put_be32(data + 4, FAKE_BLOCK_LENGTH);
	free(task->datain.data);
	task->datain.data = data;
	task->datain.size = READ_CAPACITY10_DATA_LEN;
	task->status = SCSI_STATUS_GOOD;
	task->residual_status = SCSI_RESIDUAL_NO_RESIDUAL;
	task->residual = 0;
	memset(&task->sense, 0, sizeof(task->sense));
	return task;
}

struct scsi_task *iscsi_scsi_command_sync(struct iscsi_context *iscsi, int lun, struct scsi_task *task,
					  struct iscsi_data *data)
{
	static command_sync_fn real;

	if (task != NULL && task->cdb_size > 0 && task->cdb[0] == SCSI_OPCODE_READCAPACITY10)
		return answer_read_capacity10(task);
	if (real == NULL) {
		real = (command_sync_fn)dlsym(RTLD_NEXT, "iscsi_scsi_command_sync");
		if (real == NULL) {
			fprintf(stderr, "cu_shim: libiscsi's iscsi_scsi_command_sync not found: %s\n", dlerror());
			abort();
		}
	}
	return real(iscsi, lun, task, data);
}
