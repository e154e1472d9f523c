/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/scsi/device.h"

#include <string.h>

void scsi_dev_init(struct scsi_dev *dev, const struct scsi_ident *id, const struct scsi_op *ops, size_t n_ops)
{
	memset(dev, 0, sizeof *dev);
	dev->ident = *id;
	dev->ops = ops;
	dev->n_ops = n_ops;
	ua_init(&dev->ua);
	res_init(&dev->res);
	dev->n_luns = 1; /* LUN 0 alone until a front end says otherwise */
}

void scsi_dev_execute(struct scsi_dev *dev, const struct scsi_sense *not_ready, struct scsi_cmd *c)
{
	c->sense_desc = dev->d_sense;
	const struct scsi_op *op = scsi_op_find(dev->ops, dev->n_ops, c);
	struct scsi_sense ua;
	if (!(op && (op->flags & OP_UA_EXEMPT)) && ua_take(&dev->ua, c->nexus, &ua)) {
		scsi_fail(c, ua);
		return;
	}
	struct scsi_dev_state st = {.not_ready = not_ready, .res = &dev->res};
	scsi_dispatch(dev->ops, dev->n_ops, dev, &st, c);
}

bool scsi_dev_prevent(struct scsi_dev *dev, uint64_t nexus, bool on)
{
	for (unsigned i = 0; i < dev->n_prevent; i++)
		if (dev->prevent_nexus[i] == nexus) {
			dev->prevent_nexus[i] = dev->prevent_nexus[--dev->n_prevent];
			break;
		}
	if (on && dev->n_prevent < SCSI_MAX_PREVENT)
		dev->prevent_nexus[dev->n_prevent++] = nexus;
	return dev->n_prevent > 0;
}

void scsi_dev_nexus_lost(struct scsi_dev *dev, uint64_t nexus)
{
	res_nexus_lost(&dev->res, nexus);
	ua_forget(&dev->ua, nexus);
	scsi_dev_prevent(dev, nexus, false);
}

void scsi_dev_reset(struct scsi_dev *dev)
{
	ua_raise_all(&dev->ua, UA_POWER_ON, UA_NO_NEXUS);
	res_reset(&dev->res);
	dev->n_prevent = 0;
}

void scsi_dev_set_luns(struct scsi_dev *dev, const uint16_t *luns, unsigned n)
{
	if (n > SCSI_MAX_LUNS)
		n = SCSI_MAX_LUNS;
	memcpy(dev->luns, luns, n * sizeof *luns);
	dev->n_luns = n;
}
