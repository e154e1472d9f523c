/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pool's inventory: the cartridges it holds, and what one holds (a
 * read-only open that lists its size, filemarks and damage).
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "backend/internal.h"
#include "common/grow.h"
#include "common/vtl_error.h"

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int vtl_pool_list_cartridges(struct vtl_pool *pool, int (*fn)(const char *barcode, void *arg), void *arg)
{
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = VTL_OK;
	for (unsigned m = 0; !rc && m < pool->n; m++) {
		DIR *d = opendir(pool->m[m].path);
		if (!d) {
			rc = VTL_E_IO;
			break;
		}
		struct dirent *e;
		while (!rc && (e = readdir(d))) {
			/* Only on its home member, so each cartridge is named once. */
			if (vtl_barcode_check(e->d_name) || vtl_pool_member_for(pool, e->d_name, 0) != m ||
			    vtl_cart_exists(pool, e->d_name) != 1)
				continue;
			if ((rc = vtl_grow_to((void **)&names, &cap, n + 1, sizeof *names)))
				break;
			if (!(names[n] = strdup(e->d_name)))
				rc = VTL_E_NOMEM;
			else
				n++;
		}
		closedir(d);
	}
	if (!rc && n)
		qsort(names, n, sizeof *names, cmp_names);
	for (size_t i = 0; !rc && i < n; i++)
		rc = fn(names[i], arg);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

int vtl_cart_info(struct vtl_pool *pool, const char *barcode, struct vtl_cart_info *out)
{
	struct vtl_cart_params p = {.readonly = true};
	struct vtl_cart *c;
	int rc = vtl_cart_open(pool, barcode, &p, &c);
	if (rc)
		return rc;
	memset(out, 0, sizeof *out);
	out->eod = c->tape.eod;
	out->filemarks = c->tape.total_fm;
	out->stored_bytes = c->tape.stored;
	for (size_t i = 0; i < c->tape.nseg; i++)
		out->segments += !c->tape.segs[i].lost;
	out->damaged = (uint32_t)vtl_cart_damage(c, out->damage, VTL_DAMAGE_INFO_MAX);
	for (size_t i = 0; i < c->dmg.n; i++)
		out->damaged_objects += c->dmg.list[i].count;
	return vtl_cart_close(c);
}
