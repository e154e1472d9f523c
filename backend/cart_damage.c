/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the open found unreadable, and when what it finds may be a crash's
 * leftovers instead. The damage list (struct cart_damage, in tape order) is
 * what reads, spaces and cuts consult; the cut marker, a small file made
 * durable before an overwrite or erase removes anything, tells the next open
 * that what follows its segment is a cut in progress, not damage.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backend/internal.h"
#include "common/grow.h"
#include "common/log.h"
#include "common/vtl_error.h"

/* The marker file of a cut not yet synced, in the cartridge's folder on its home member. */
#define CUT_MARKER "cut"

/* Records that objects first..first+count-1 are damaged (the list stays in tape order). */
int dmg_add(struct vtl_cart *c, uint64_t first, uint64_t count, uint32_t seq, uint32_t seq_last,
	    enum vtl_damage_kind kind)
{
	if (!count)
		return VTL_OK;
	if (c->dmg.n) {
		struct vtl_damage *d = &c->dmg.list[c->dmg.n - 1];
		if (d->kind == kind && d->seq == seq && d->first + d->count == first) {
			d->count += count;
			return VTL_OK;
		}
	}
	int rc = vtl_grow_to((void **)&c->dmg.list, &c->dmg.cap, c->dmg.n + 1, sizeof *c->dmg.list);
	if (rc)
		return rc;
	c->dmg.list[c->dmg.n++] = (struct vtl_damage){.first = first, .count = count, .seq = seq, .seq_last = seq_last,
						.kind = kind};
	return VTL_OK;
}

/* The first damaged object at or after from; UINT64_MAX when there is none. */
uint64_t dmg_next(const struct vtl_cart *c, uint64_t from)
{
	for (size_t i = 0; i < c->dmg.n; i++)
		if (c->dmg.list[i].first + c->dmg.list[i].count > from)
			return c->dmg.list[i].first > from ? c->dmg.list[i].first : from;
	return UINT64_MAX;
}

/* The last damaged object before before; UINT64_MAX when there is none. */
uint64_t dmg_prev(const struct vtl_cart *c, uint64_t before)
{
	for (size_t i = c->dmg.n; i-- > 0;)
		if (c->dmg.list[i].first < before) {
			uint64_t end = c->dmg.list[i].first + c->dmg.list[i].count;
			return (end < before ? end : before) - 1;
		}
	return UINT64_MAX;
}

/* Forgets the damage from object obj on (a cut removed it from the tape). */
void dmg_cut(struct vtl_cart *c, uint64_t obj)
{
	while (c->dmg.n && c->dmg.list[c->dmg.n - 1].first >= obj)
		c->dmg.n--;
	if (c->dmg.n && c->dmg.list[c->dmg.n - 1].first + c->dmg.list[c->dmg.n - 1].count > obj)
		c->dmg.list[c->dmg.n - 1].count = obj - c->dmg.list[c->dmg.n - 1].first;
}

const char *vtl_damage_kind_name(enum vtl_damage_kind kind)
{
	switch (kind) {
	case VTL_DAMAGE_RECORDS:
		return "bad records";
	case VTL_DAMAGE_SHORT:
		return "segment cut short";
	case VTL_DAMAGE_MISSING:
		return "segments missing";
	case VTL_DAMAGE_HEADER:
		return "segment header unreadable";
	}
	return "damage";
}

size_t vtl_cart_damage(const struct vtl_cart *c, struct vtl_damage *out, size_t max)
{
	for (size_t i = 0; i < c->dmg.n && i < max; i++)
		out[i] = c->dmg.list[i];
	return c->dmg.n;
}

size_t vtl_damage_describe(const char *barcode, const struct vtl_damage *d, char *buf, size_t len)
{
	unsigned long long first = d->first, last = d->first + d->count - 1;
	int n;
	if (d->kind == VTL_DAMAGE_MISSING || d->kind == VTL_DAMAGE_HEADER)
		n = snprintf(buf, len, "cartridge %s: damaged: segment files %08u..%08u.seg %s: objects %llu..%llu unreadable",
			     barcode, d->seq, d->seq_last, d->kind == VTL_DAMAGE_MISSING ? "missing" : "with an unreadable header",
			     first, last);
	else
		n = snprintf(buf, len, "cartridge %s: damaged: %s in segment file %08u.seg: objects %llu..%llu unreadable",
			     barcode, vtl_damage_kind_name(d->kind), d->seq, first, last);
	return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len ? len - 1 : 0;
}

/* One warning per damaged range, naming the cartridge, the segment file(s) and the objects. */
void dmg_log(const struct vtl_cart *c)
{
	char line[256];
	for (size_t i = 0; i < c->dmg.n; i++) {
		vtl_damage_describe(c->barcode, &c->dmg.list[i], line, sizeof line);
		log_msg(LOG_LEVEL_WARN, "%s (what follows stays readable)", line);
	}
}

int cut_marker_path(const struct vtl_pool *pool, const char *barcode, char *buf, size_t len)
{
	unsigned m = vtl_pool_member_for(pool, barcode, 0);
	int n = snprintf(buf, len, "%s/%s/" CUT_MARKER, pool->m[m].path, barcode);
	return (n < 0 || (size_t)n >= len) ? VTL_E_INVAL : VTL_OK;
}

/* Reads the cut marker, if there is one: from its segment on, the open's repair reads crash leftovers. */
void cut_marker_load(struct vtl_cart *c)
{
	char path[PATH_MAX], buf[16] = {0};
	if (cut_marker_path(c->pool, c->barcode, path, sizeof path))
		return;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	c->dmg.cut_marker = true;
	/* Unreadable content: the marker alone says a cut was under way; trust nothing from segment 0. */
	char *end;
	unsigned long v = n > 0 ? strtoul(buf, &end, 10) : 0;
	c->dmg.cut_seq = n > 0 && end != buf && v <= UINT32_MAX ? (uint32_t)v : 0;
}

/*
 * Makes the marker of a cut at segment seq durable before the cut removes or
 * truncates anything; a marker of an earlier cut not yet synced stays if it
 * names an earlier segment.
 */
int cut_marker_set(struct vtl_cart *c, uint32_t seq)
{
	if (c->dmg.cut_marker && c->dmg.cut_seq <= seq)
		return VTL_OK;
	char path[PATH_MAX], buf[16];
	if (cut_marker_path(c->pool, c->barcode, path, sizeof path))
		return VTL_E_INVAL;
	int len = snprintf(buf, sizeof buf, "%u\n", seq);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0)
		return VTL_E_IO;
	struct iovec iov = {buf, (size_t)len};
	int rc = write_fullv(fd, &iov, 1, 0);
	if (!rc && fdatasync(fd) != 0)
		rc = VTL_E_IO;
	close(fd);
	unsigned m = vtl_pool_member_for(c->pool, c->barcode, 0);
	char dir[PATH_MAX];
	if (!rc && (pool_cart_dir(c->pool, m, c->barcode, dir, sizeof dir) || fsync_path(dir)))
		rc = VTL_E_IO;
	if (!rc) {
		c->dmg.cut_marker = true;
		c->dmg.cut_seq = seq;
	}
	return rc;
}

/* Removes the cut marker once the cut and everything before it are durable. */
int cut_marker_clear(struct vtl_cart *c)
{
	if (!c->dmg.cut_marker)
		return VTL_OK;
	char path[PATH_MAX];
	if (cut_marker_path(c->pool, c->barcode, path, sizeof path))
		return VTL_E_INVAL;
	if (unlink(path) != 0 && errno != ENOENT)
		return VTL_E_IO;
	unsigned m = vtl_pool_member_for(c->pool, c->barcode, 0);
	char dir[PATH_MAX];
	if (pool_cart_dir(c->pool, m, c->barcode, dir, sizeof dir) || fsync_path(dir))
		return VTL_E_IO;
	c->dmg.cut_marker = false;
	return VTL_OK;
}

/* True when what the open finds from segment seq on may be a crash's leftovers rather than damage. */
bool crash_may(const struct vtl_cart *c, uint32_t seq)
{
	return c->p.follow || (c->dmg.cut_marker && seq >= c->dmg.cut_seq);
}
