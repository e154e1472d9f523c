/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/library/drive_store.h"

#include "common/vtl_error.h"

/* The actor the catalog records for what a drive writes to the event log. */
#define DRIVE_ACTOR "vtld"

static int mam_set(void *arg, const char *barcode, uint16_t id, const void *val, size_t len)
{
	return catalog_mam_set(arg, barcode, id, val, len);
}

static int mam_remove(void *arg, const char *barcode, uint16_t id)
{
	return catalog_mam_delete(arg, barcode, id);
}

/* The drive's function, and its argument, for the catalog's walk. */
struct mam_walk {
	int (*fn)(const struct ssc_mam_attr *a, void *fn_arg);
	void *fn_arg;
};

static int mam_one(const struct cat_mam_attr *ca, void *arg)
{
	const struct mam_walk *w = arg;
	const struct ssc_mam_attr a = {.id = ca->id, .value = ca->value, .len = ca->len};
	return w->fn(&a, w->fn_arg);
}

static int mam_list(void *arg, const char *barcode, int (*fn)(const struct ssc_mam_attr *a, void *fn_arg),
		    void *fn_arg)
{
	struct mam_walk w = {.fn = fn, .fn_arg = fn_arg};
	return catalog_mam_list(arg, barcode, mam_one, &w);
}

static const struct ssc_mam_ops catalog_mam = {.set = mam_set, .remove = mam_remove, .list = mam_list};

static void drive_event(void *arg, const char *what)
{
	vtl_ignore(catalog_event(arg, DRIVE_ACTOR, what)); /* best effort: the backend logs the damage too */
}

void library_drive_store(struct ssc_config *cfg, struct vtl_catalog *cat)
{
	cfg->mam = cat ? &catalog_mam : NULL;
	cfg->mam_arg = cat;
	cfg->on_event = cat ? drive_event : NULL;
	cfg->on_event_arg = cat;
}
