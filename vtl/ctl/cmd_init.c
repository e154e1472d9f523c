/* SPDX-License-Identifier: Apache-2.0 */
/* vtlctl init: the catalog and the pool's folders from the configuration file. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/cartridge.h"
#include "common/grow.h"
#include "common/vtl_error.h"
#include "vtl/ctl/ctl.h"

/* mkdir -p: creates path and its missing parents (mode 0750). 0, or -1 with errno. */
static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	if (strlen(path) >= sizeof buf) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(buf, path);
	for (char *p = buf + 1;; p++) {
		if (*p == '/' || *p == 0) {
			char c = *p;
			*p = 0;
			struct stat st;
			if (stat(buf, &st) != 0) {
				if (errno != ENOENT || (mkdir(buf, 0750) != 0 && errno != EEXIST))
					return -1;
			} else if (!S_ISDIR(st.st_mode)) {
				errno = ENOTDIR;
				return -1;
			}
			*p = c;
			if (!c)
				return 0;
		}
	}
}

static int count_cart(const char *barcode, void *arg)
{
	(void)barcode;
	(*(unsigned long *)arg)++;
	return 0;
}

static void remove_catalog(const char *path)
{
	static const char *const sfx[] = {"", "-wal", "-shm", "-journal"};
	for (size_t i = 0; i < VTL_ARRAY_SIZE(sfx); i++) {
		char p[PATH_MAX];
		if (snprintf(p, sizeof p, "%s%s", path, sfx[i]) < (int)sizeof p)
			unlink(p);
	}
}

int cmd_init(struct ctl *ctl, int argc, char **argv)
{
	struct ctl_opt opts[] = {{"catalog-only", 0, false, NULL, false}};
	char **pos;
	int npos;
	int rc = ctl_parse(ctl, argc, argv, opts, 1, &pos, &npos);
	if (rc)
		return rc;
	if (npos)
		return ctl_usage(ctl, "unexpected argument '%s': init takes its settings from the configuration file",
				 pos[0]);
	bool catalog_only = opts[0].set;
	if ((rc = ctl_load_config(ctl)))
		return rc;
	const struct vtl_config *cfg = ctl->cfg;
	const char *catpath = cfg->catalog.path;
	struct stat st;
	if (stat(catpath, &st) == 0)
		return ctl_err(ctl, VTLCTL_FAIL, "the catalog %s exists already; init never overwrites a catalog "
			       "(to start over, stop vtld and remove it yourself)", catpath);
	if (errno != ENOENT)
		return ctl_err(ctl, VTLCTL_FAIL, "cannot check the catalog path %s: %s", catpath, strerror(errno));

	/* The pool's folders. */
	bool created[VTL_POOL_MAX_MEMBERS] = {false};
	for (unsigned i = 0; i < cfg->pool.members; i++) {
		const char *m = cfg->pool.member[i];
		if (stat(m, &st) == 0) {
			if (!S_ISDIR(st.st_mode))
				return ctl_err(ctl, VTLCTL_FAIL, "pool member %s exists but is not a folder", m);
			continue;
		}
		if (catalog_only)
			return ctl_err(ctl, VTLCTL_FAIL, "pool member %s does not exist; --catalog-only recreates the "
				       "catalog of an existing pool (is a disk not mounted? for a new library run "
				       "'vtlctl init' without --catalog-only)", m);
		if (mkdir_p(m) != 0)
			return ctl_err(ctl, VTLCTL_FAIL, "cannot create pool member %s: %s", m, strerror(errno));
		created[i] = true;
	}
	if ((rc = ctl_open_pool(ctl)))
		return rc;
	unsigned long carts = 0;
	rc = vtl_pool_list_cartridges(ctl->pool, count_cart, &carts);
	if (rc)
		return ctl_err(ctl, VTLCTL_FAIL, "cannot list the pool's cartridges: %s", vtl_strerror(rc));
	if (carts && !catalog_only)
		return ctl_err(ctl, VTLCTL_FAIL, "the pool already holds %lu cartridge%s; to recreate the catalog for "
			       "them run 'vtlctl init --catalog-only', then 'vtlctl catalog rebuild'", carts,
			       carts == 1 ? "" : "s");

	/* The catalog. */
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", catpath);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		if (mkdir_p(dir) != 0)
			return ctl_err(ctl, VTLCTL_FAIL, "cannot create the catalog's folder %s: %s", dir, strerror(errno));
	}
	char err[512] = "";
	rc = catalog_open(catpath, true, &ctl->cat, err, sizeof err);
	if (rc) {
		remove_catalog(catpath);
		return ctl_err(ctl, VTLCTL_FAIL, "cannot create the catalog %s: %s", catpath,
			       err[0] ? err : vtl_strerror(rc));
	}
	struct cat_library lib;
	vtl_config_library(cfg, &lib);
	const char *doing = "creating the library";
	rc = catalog_library_create(ctl->cat, &lib);
	for (unsigned i = 0; !rc && i < cfg->library.drives; i++) {
		const struct vtl_drive_config *d = &cfg->drive[i];
		struct cat_drive cd;
		memset(&cd, 0, sizeof cd);
		cd.library_id = lib.id;
		cd.address = (uint16_t)(lib.drive_first + i);
		snprintf(cd.vendor, sizeof cd.vendor, "%s", d->vendor);
		snprintf(cd.model, sizeof cd.model, "%s", d->model);
		snprintf(cd.revision, sizeof cd.revision, "%s", d->revision);
		snprintf(cd.serial, sizeof cd.serial, "%s", d->serial);
		cd.lun = (int)d->lun;
		snprintf(cd.state, sizeof cd.state, "online");
		doing = "adding the drives";
		rc = catalog_drive_set(ctl->cat, &cd);
	}
	if (!rc) {
		char what[256];
		snprintf(what, sizeof what, "%s library %s: %u drives, %u slots, %u mail slots", catalog_only ?
			 "recreated the catalog of" : "created", lib.name, cfg->library.drives, cfg->library.slots,
			 cfg->library.mail_slots);
		doing = "writing the event log";
		rc = catalog_event(ctl->cat, ctl->actor, what);
	}
	if (rc) {
		ctl_cat_err(ctl, rc, "%s in %s", doing, catpath);
		catalog_close(ctl->cat);
		ctl->cat = NULL;
		remove_catalog(catpath);
		return VTLCTL_FAIL;
	}
	ctl->lib = lib;

	char ranges[256];
	ctl_elem_ranges(&lib, ranges, sizeof ranges);
	if (ctl->json) {
		struct json j;
		json_init(&j, stdout);
		json_obj(&j, NULL);
		json_str(&j, "catalog", catpath);
		json_bool(&j, "catalog_only", catalog_only);
		json_str(&j, "library", lib.name);
		json_u64(&j, "drives", cfg->library.drives);
		json_u64(&j, "slots", cfg->library.slots);
		json_u64(&j, "mail_slots", cfg->library.mail_slots);
		json_arr(&j, "members_created");
		for (unsigned i = 0; i < cfg->pool.members; i++)
			if (created[i])
				json_str(&j, NULL, cfg->pool.member[i]);
		json_arr_end(&j);
		json_u64(&j, "pool_cartridges", carts);
		json_obj_end(&j);
		json_end(&j);
		return 0;
	}
	for (unsigned i = 0; i < cfg->pool.members; i++)
		printf("%s pool member %s\n", created[i] ? "created" : "using  ", cfg->pool.member[i]);
	printf("created catalog %s\n", catpath);
	printf("library %s: %s %s, serial %s\n", lib.name, lib.vendor, lib.product, lib.serial);
	printf("  %u drive%s, %u storage slot%s, %u mail slot%s (%s)\n", cfg->library.drives,
	       cfg->library.drives == 1 ? "" : "s", cfg->library.slots, cfg->library.slots == 1 ? "" : "s",
	       cfg->library.mail_slots, cfg->library.mail_slots == 1 ? "" : "s", ranges);
	if (catalog_only)
		printf("the pool holds %lu cartridge%s: run 'vtlctl catalog rebuild' to put %s back into the catalog\n",
		       carts, carts == 1 ? "" : "s", carts == 1 ? "it" : "them");
	else
		printf("next: add cartridges with 'vtlctl cartridge add --barcode A00001L8 --count %u'\n",
		       cfg->library.slots < 10 ? cfg->library.slots : 10);
	return 0;
}
