/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/library.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/vtl_error.h"
#include "vtl/media.h"

#define STATE_AVAILABLE "available"
#define STATE_LOADED "loaded"

struct lib_drive {
	uint16_t address;
	int lun;
	struct scsi_ident ident;
	struct ssc_drive *drive;
};

struct vtl_library {
	pthread_mutex_t mu; /* one move at a time, as one robot makes them */
	struct vtl_catalog *cat;
	struct vtl_pool *pool;
	struct library_options opt;
	struct cat_library info;
	struct lib_drive *drives;
	unsigned ndrives;
	void (*ie_fn)(void *arg);
	void *ie_arg;
};

struct drive_list {
	struct vtl_library *lib;
	int rc;
	char *err;
	size_t errlen;
};

static int add_drive(const struct cat_drive *cd, void *arg)
{
	struct drive_list *dl = arg;
	struct vtl_library *lib = dl->lib;
	struct ssc_config cfg = {.pool = lib->pool, .cat = lib->cat, .early_warning = lib->opt.early_warning,
				 .clean_ms = lib->opt.clean_ms};
	cfg.ident.type = SCSI_TYPE_TAPE;
	snprintf(cfg.ident.vendor, sizeof cfg.ident.vendor, "%s", cd->vendor);
	snprintf(cfg.ident.product, sizeof cfg.ident.product, "%s", cd->model);
	snprintf(cfg.ident.revision, sizeof cfg.ident.revision, "%s", cd->revision);
	snprintf(cfg.ident.serial, sizeof cfg.ident.serial, "%s", cd->serial);
	struct ssc_drive *d;
	int rc = ssc_create(&cfg, &d);
	if (rc != VTL_OK) {
		snprintf(dl->err, dl->errlen, "drive %u (%s %s): %s", cd->address, cd->vendor, cd->model,
			 rc == VTL_E_CONFIG ? "not a model this library emulates" : vtl_strerror(rc));
		dl->rc = rc;
		return 1;
	}
	lib->drives[lib->ndrives].address = cd->address;
	lib->drives[lib->ndrives].lun = cd->lun;
	lib->drives[lib->ndrives].ident = cfg.ident;
	lib->drives[lib->ndrives].drive = d;
	lib->ndrives++;
	return 0;
}

static struct lib_drive *drive_at(struct vtl_library *lib, uint16_t address)
{
	for (unsigned i = 0; i < lib->ndrives; i++)
		if (lib->drives[i].address == address)
			return &lib->drives[i];
	return NULL;
}

/* The medium description the drive gets for a cartridge of the catalog. */
static int medium_of(struct vtl_library *lib, const char *barcode, struct ssc_medium *m)
{
	struct cat_cartridge cc;
	int rc = catalog_cartridge_get(lib->cat, barcode, &cc);
	if (rc != VTL_OK)
		return rc;
	memset(m, 0, sizeof *m);
	snprintf(m->barcode, sizeof m->barcode, "%s", barcode);
	m->write_protected = cc.write_protect;
	m->capacity = cc.capacity;
	return VTL_OK;
}

/* Records what a load did to the cartridge once it leaves a drive. */
static void record_usage(struct vtl_library *lib, const char *barcode, const struct ssc_status *st)
{
	struct cat_cartridge cc;
	if (catalog_cartridge_get(lib->cat, barcode, &cc) != VTL_OK)
		return;
	/* Bytes written from BOT of this load replace what was there when the tape was rewritten. */
	catalog_cartridge_usage(lib->cat, barcode, cc.bytes_written + st->written_bytes, st->stored_bytes, st->eod,
				false);
}

/* Counts a mount of the cartridge (its bytes stay as they are). */
static void count_mount(struct vtl_library *lib, const char *barcode)
{
	struct cat_cartridge cc;
	if (catalog_cartridge_get(lib->cat, barcode, &cc) == VTL_OK)
		catalog_cartridge_usage(lib->cat, barcode, cc.bytes_written, cc.bytes_stored, cc.eod, true);
}

int library_open(struct vtl_catalog *cat, struct vtl_pool *pool, const char *name, const struct library_options *opt,
		 struct vtl_library **out, char *err, size_t errlen)
{
	struct vtl_library *lib = calloc(1, sizeof *lib);
	if (!lib)
		return VTL_E_NOMEM;
	pthread_mutex_init(&lib->mu, NULL);
	lib->cat = cat;
	lib->pool = pool;
	if (opt)
		lib->opt = *opt;
	int rc = catalog_library_get(cat, name, &lib->info);
	if (rc != VTL_OK) {
		snprintf(err, errlen, "library '%s': %s", name, rc == VTL_E_NOTFOUND ? "not in the catalog"
										   : catalog_last_error(cat));
		goto fail;
	}
	lib->drives = calloc(lib->info.drives ? lib->info.drives : 1, sizeof *lib->drives);
	if (!lib->drives) {
		rc = VTL_E_NOMEM;
		goto fail;
	}
	struct drive_list dl = {.lib = lib, .err = err, .errlen = errlen};
	rc = catalog_drive_list(cat, lib->info.id, add_drive, &dl);
	if (dl.rc)
		rc = dl.rc;
	if (rc != VTL_OK)
		goto fail;
	/* Cartridges the catalog has in drives go back in, as they were before a restart. */
	for (unsigned i = 0; i < lib->ndrives; i++) {
		struct cat_element e;
		struct ssc_medium m;
		char why[256];
		if (catalog_element_get(cat, lib->info.id, lib->drives[i].address, &e) != VTL_OK || !e.full)
			continue;
		if ((rc = medium_of(lib, e.barcode, &m)) != VTL_OK ||
		    (rc = ssc_insert(lib->drives[i].drive, &m, why, sizeof why)) != VTL_OK) {
			snprintf(err, errlen, "cartridge %s in drive %u: %s", e.barcode, lib->drives[i].address,
				 rc == VTL_OK ? "" : why);
			goto fail;
		}
	}
	*out = lib;
	return VTL_OK;
fail:
	library_close(lib);
	return rc;
}

void library_close(struct vtl_library *lib)
{
	if (!lib)
		return;
	for (unsigned i = 0; i < lib->ndrives; i++) {
		struct ssc_status st;
		ssc_status(lib->drives[i].drive, &st);
		ssc_destroy(lib->drives[i].drive); /* closes (syncs) a loaded cartridge */
		if (st.state != SSC_EMPTY && st.barcode[0])
			record_usage(lib, st.barcode, &st);
	}
	free(lib->drives);
	pthread_mutex_destroy(&lib->mu);
	free(lib);
}

const struct cat_library *library_info(const struct vtl_library *lib)
{
	return &lib->info;
}

unsigned library_drive_count(const struct vtl_library *lib)
{
	return lib->ndrives;
}

struct ssc_drive *library_drive(struct vtl_library *lib, unsigned i, uint16_t *address)
{
	if (i >= lib->ndrives)
		return NULL;
	if (address)
		*address = lib->drives[i].address;
	return lib->drives[i].drive;
}

struct elem_walk {
	struct vtl_library *lib;
	int (*fn)(const struct library_element *le, void *arg);
	void *arg;
};

static int elem_one(const struct cat_element *e, void *arg)
{
	struct elem_walk *w = arg;
	struct library_element le;
	memset(&le, 0, sizeof le);
	le.e = *e;
	le.accessible = true;
	le.lun = -1;
	if (e->type == CAT_ELEM_IE)
		le.imported = e->full && e->source == CAT_NO_ELEMENT;
	struct lib_drive *ld = e->type == CAT_ELEM_DRIVE ? drive_at(w->lib, e->address) : NULL;
	if (ld) {
		struct ssc_status st;
		ssc_status(ld->drive, &st);
		le.accessible = st.state == SSC_EMPTY || (st.state == SSC_EJECTED && ssc_removable(ld->drive));
		le.lun = ld->lun;
		le.ident = ld->ident;
	}
	return w->fn(&le, w->arg);
}

int library_elements(struct vtl_library *lib, enum cat_elem_type type,
		     int (*fn)(const struct library_element *le, void *arg), void *arg)
{
	struct elem_walk w = {lib, fn, arg};
	return catalog_element_list(lib->cat, lib->info.id, type, elem_one, &w);
}

void library_on_ie_change(struct vtl_library *lib, void (*fn)(void *arg), void *arg)
{
	pthread_mutex_lock(&lib->mu);
	lib->ie_fn = fn;
	lib->ie_arg = arg;
	pthread_mutex_unlock(&lib->mu);
}

/* Fetches element a; VTL_E_INVAL with err unless it is a slot, mail slot or drive of the library. */
static int element(struct vtl_library *lib, uint16_t a, struct cat_element *e, char *err, size_t errlen)
{
	int rc = catalog_element_get(lib->cat, lib->info.id, a, e);
	if (rc == VTL_E_NOTFOUND || (rc == VTL_OK && e->type == CAT_ELEM_TRANSPORT)) {
		snprintf(err, errlen, "element %u is not a storage, import/export or drive element", a);
		return VTL_E_INVAL;
	}
	if (rc != VTL_OK)
		snprintf(err, errlen, "catalog: %s", catalog_last_error(lib->cat));
	return rc;
}

/* The move itself, with lib->mu held. */
static int move_locked(struct vtl_library *lib, uint16_t from, uint16_t to, const char *actor, char *err,
		       size_t errlen)
{
	struct cat_element src, dst;
	int rc;
	if ((rc = element(lib, from, &src, err, errlen)) || (rc = element(lib, to, &dst, err, errlen)))
		return rc;
	if (!src.full) {
		snprintf(err, errlen, "element %u is empty", from);
		return VTL_E_SRC_EMPTY;
	}
	if (dst.full) {
		snprintf(err, errlen, "element %u already holds %s", to, dst.barcode);
		return VTL_E_DST_FULL;
	}
	struct lib_drive *sd = src.type == CAT_ELEM_DRIVE ? drive_at(lib, from) : NULL;
	struct lib_drive *dd = dst.type == CAT_ELEM_DRIVE ? drive_at(lib, to) : NULL;
	struct ssc_medium m;
	if ((rc = medium_of(lib, src.barcode, &m)) != VTL_OK) {
		snprintf(err, errlen, "cartridge %s: %s", src.barcode, catalog_last_error(lib->cat));
		return rc;
	}
	if (dd) {
		/* Refuse what the drive cannot read before anything moves. */
		struct vtl_label label;
		bool can_write;
		struct ssc_status ds;
		ssc_status(dd->drive, &ds);
		if ((rc = vtl_label_parse(src.barcode, &label, err, errlen)) != VTL_OK)
			return rc;
		if (!vtl_drive_accepts(ds.generation, &label, &can_write)) {
			snprintf(err, errlen, "the LTO-%u drive at %u cannot read %s (%s)", ds.generation, to, src.barcode,
				 vtl_media_describe(label.media, label.type_m));
			return VTL_E_INCOMPATIBLE;
		}
	}
	struct ssc_status ss = {0};
	if (sd) {
		ssc_status(sd->drive, &ss);
		char bc[VTL_LABEL_LEN + 1];
		if ((rc = ssc_remove(sd->drive, bc)) != VTL_OK) {
			snprintf(err, errlen, "the drive at %u has %s loaded; it must be unloaded first", from,
				 src.barcode);
			return rc == VTL_E_SRC_EMPTY ? VTL_E_SRC_EMPTY : VTL_E_BUSY;
		}
	}
	if ((rc = catalog_move(lib->cat, lib->info.id, from, to, actor)) != VTL_OK) {
		snprintf(err, errlen, "catalog: %s", catalog_last_error(lib->cat));
		goto undo_source;
	}
	if (sd)
		record_usage(lib, src.barcode, &ss);
	if (dd) {
		char why[256];
		if ((rc = ssc_insert(dd->drive, &m, why, sizeof why)) != VTL_OK) {
			snprintf(err, errlen, "%s", why);
			catalog_move(lib->cat, lib->info.id, to, from, actor);
			goto undo_source;
		}
		count_mount(lib, src.barcode);
	}
	return VTL_OK;
undo_source:
	if (sd && ssc_insert(sd->drive, &m, err + strlen(err), errlen - strlen(err)) == VTL_OK)
		ssc_eject(sd->drive); /* back where it was: in the drive, ejected */
	return rc;
}

int library_move(struct vtl_library *lib, uint16_t from, uint16_t to, const char *actor, char *err, size_t errlen)
{
	pthread_mutex_lock(&lib->mu);
	err[0] = 0;
	int rc = move_locked(lib, from, to, actor, err, errlen);
	bool ie = false;
	if (rc == VTL_OK) {
		struct cat_element e;
		ie = (catalog_element_get(lib->cat, lib->info.id, from, &e) == VTL_OK && e.type == CAT_ELEM_IE) ||
		     (catalog_element_get(lib->cat, lib->info.id, to, &e) == VTL_OK && e.type == CAT_ELEM_IE);
	}
	void (*fn)(void *) = lib->ie_fn;
	void *arg = lib->ie_arg;
	pthread_mutex_unlock(&lib->mu);
	if (ie && fn)
		fn(arg);
	return rc;
}
