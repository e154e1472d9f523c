/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a drive keeps beyond a load, kept in the catalog: its cartridges' MAM
 * attributes (struct ssc_mam_ops, by barcode) and the lines it writes to the
 * event log. The library model wires its drives to it; so may anyone who
 * builds a drive over a catalog (the tests).
 */
#ifndef VTL_LIBRARY_DRIVE_STORE_H
#define VTL_LIBRARY_DRIVE_STORE_H

#include "catalog/catalog.h"
#include "vtl/drive/ssc.h"

/* Points cfg's MAM store and events at cat (NULL: neither, attributes kept for the load only). */
void library_drive_store(struct ssc_config *cfg, struct vtl_catalog *cat);

#endif
