/* SPDX-License-Identifier: Apache-2.0 */
/*
 * LOG SENSE and LOG SELECT of the changer (SPC-4 6.6/6.7, SMC-3 7.2): the
 * supported pages and the library's TapeAlert page, read and cleared as the
 * drive's is. The changer keeps no counters, so LOG SELECT has nothing to
 * reset.
 */
#include "vtl/changer/smc_internal.h"

#include "vtl/scsi/spc_log.h"

#include "common/grow.h"

static void render_tapealert(const void *src, struct spc_log_out *o)
{
	const struct smc_changer *ch = src;
	spc_log_tapealert(o, ch->tapealert);
}

/* The changer's log pages, in the order the supported pages page lists them. */
static const struct spc_log_page log_pages[] = {
	{SPC_LOG_SUPPORTED, 0, 0, -1, NULL},
	{SPC_LOG_SUPPORTED, SPC_LOG_SUBPAGE_ALL, 0, -1, NULL},
	{SPC_LOG_TAPEALERT, 0, SPC_TAPEALERT_FLAGS, -1, render_tapealert},
};
#define N_PAGES (VTL_ARRAY_SIZE(log_pages))

void smc_log_sense(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct smc_changer *ch = smc_of(dev);
	struct spc_log_sense l;
	const struct spc_log_page *pg = spc_log_sense_page(c, log_pages, N_PAGES, &l);
	if (!pg)
		return;
	size_t done = spc_log_sense_answer(c, log_pages, N_PAGES, pg, &l, ch);
	if (pg->code == SPC_LOG_TAPEALERT)
		ch->tapealert = spc_log_tapealert_read(ch->tapealert, l.pc, l.pointer, done);
}

void smc_log_select(struct scsi_dev *dev, struct scsi_cmd *c)
{
	(void)dev;
	const struct spc_log_page *pg;
	bool reset;
	/* No page has a counter to reset or a threshold to set: accepted, nothing changes, no attention. */
	if (spc_log_select(c, log_pages, N_PAGES, &pg, &reset))
		scsi_done(c, 0);
}
