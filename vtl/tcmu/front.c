/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/tcmu/front.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/log.h"
#include "common/vtl_error.h"
#include "vtl/tcmu/ring.h"

#define UIO_PREFIX "tcm-user/"
#define SCAN_MS 1000        /* how often the front looks for devices that came or went */
#define MAX_DEVICES 64
#define LINE_MAX_LEN 512

struct tcmu_dev {
	char uio[256];            /* "uioN" (a directory entry name) */
	int fd;
	void *map;
	size_t map_len;
	struct tcmu_ring ring;
	struct lu_worker *worker;
	uint64_t nexus;
	atomic_uint inflight;     /* commands handed to the worker and not completed */
	atomic_bool gone;         /* the kernel removed it: no more reads; freed once nothing is in flight */
};

struct tcmu_front {
	char library[64];
	struct vtl_lu lus[MAX_DEVICES];
	unsigned n_lus;
	char uio_root[256], dev_root[256];
	struct tcmu_dev *dev[MAX_DEVICES];
	unsigned n_dev;
	pthread_t thread;
	atomic_bool stopping;
	atomic_uint served;       /* n_dev as the control thread may read it */
};

/* A command on its way through a LUN's worker. */
struct tcmu_work {
	struct lu_work w;
	struct tcmu_dev *dev;
	struct tcmu_ring_cmd rc;
};

int tcmu_parse_uio_name(const char *name, const char **library, size_t *library_len, unsigned *lun)
{
	if (strncmp(name, UIO_PREFIX, strlen(UIO_PREFIX)) != 0)
		return VTL_E_NOTFOUND;
	/* tcm-user/<hba>/<name>/<subtype>/<library>/<lun> */
	const char *p = name + strlen(UIO_PREFIX);
	for (int skip = 0; skip < 2; skip++) {
		p = strchr(p, '/');
		if (!p)
			return VTL_E_NOTFOUND;
		p++;
	}
	size_t sub = strlen(TCMU_SUBTYPE);
	if (strncmp(p, TCMU_SUBTYPE, sub) != 0 || p[sub] != '/')
		return VTL_E_NOTFOUND;
	p += sub + 1;
	const char *slash = strrchr(p, '/');
	if (!slash || slash == p || !slash[1])
		return VTL_E_NOTFOUND;
	char *end;
	unsigned long v = strtoul(slash + 1, &end, 10);
	if (*end || v > UINT16_MAX)
		return VTL_E_NOTFOUND;
	*library = p;
	*library_len = (size_t)(slash - p);
	*lun = (unsigned)v;
	return VTL_OK;
}

/* Reads the first line of a sysfs file. */
static bool read_line(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	bool ok = fgets(buf, (int)cap, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = 0;
	return ok;
}

static struct lu_worker *worker_of(struct tcmu_front *f, unsigned lun)
{
	for (unsigned i = 0; i < f->n_lus; i++)
		if (f->lus[i].lun == lun)
			return f->lus[i].worker;
	return NULL;
}

static bool served(struct tcmu_front *f, const char *uio)
{
	for (unsigned i = 0; i < f->n_dev; i++)
		if (!strcmp(f->dev[i]->uio, uio))
			return true;
	return false;
}

/* Opens and maps UIO device uio (its map0: mailbox, ring and data area). */
static int dev_open(struct tcmu_front *f, const char *uio, struct lu_worker *wk, struct tcmu_dev **out)
{
	char path[600], line[LINE_MAX_LEN];
	snprintf(path, sizeof path, "%s/%s/maps/map0/size", f->uio_root, uio);
	if (!read_line(path, line, sizeof line))
		return VTL_E_IO;
	size_t len = (size_t)strtoull(line, NULL, 0);
	struct tcmu_dev *d = calloc(1, sizeof *d);
	if (!d)
		return VTL_E_NOMEM;
	snprintf(d->uio, sizeof d->uio, "%s", uio);
	snprintf(path, sizeof path, "%s/%s", f->dev_root, uio);
	d->fd = open(path, O_RDWR | O_CLOEXEC);
	if (d->fd < 0) {
		free(d);
		return VTL_E_IO;
	}
	d->map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, d->fd, 0);
	int rc = d->map == MAP_FAILED ? VTL_E_IO : tcmu_ring_init(&d->ring, d->map, len);
	if (rc) {
		if (d->map != MAP_FAILED)
			munmap(d->map, len);
		close(d->fd);
		free(d);
		return rc;
	}
	d->map_len = len;
	d->worker = wk;
	*out = d;
	return VTL_OK;
}

static void dev_close(struct tcmu_dev *d)
{
	munmap(d->map, d->map_len);
	close(d->fd);
	free(d);
}

/* Finds the devices of this library that are not served yet. */
static void scan(struct tcmu_front *f)
{
	DIR *dir = opendir(f->uio_root);
	if (!dir)
		return;
	struct dirent *de;
	while ((de = readdir(dir)) && f->n_dev < MAX_DEVICES) {
		if (strncmp(de->d_name, "uio", 3) != 0 || served(f, de->d_name))
			continue;
		char path[600], name[LINE_MAX_LEN];
		snprintf(path, sizeof path, "%s/%s/name", f->uio_root, de->d_name);
		const char *lib;
		size_t lib_len;
		unsigned lun;
		if (!read_line(path, name, sizeof name) || tcmu_parse_uio_name(name, &lib, &lib_len, &lun) != VTL_OK ||
		    lib_len != strlen(f->library) || strncmp(lib, f->library, lib_len) != 0)
			continue;
		struct lu_worker *wk = worker_of(f, lun);
		if (!wk) {
			log_warn("tcmu: %s (%s) names LUN %u, which library %s does not have", de->d_name, name, lun,
				 f->library);
			continue;
		}
		struct tcmu_dev *d;
		int rc = dev_open(f, de->d_name, wk, &d);
		if (rc) {
			log_warn("tcmu: cannot serve %s (%s): %s", de->d_name, name, vtl_strerror(rc));
			continue;
		}
		d->nexus = TCMU_NEXUS_BASE + f->n_dev;
		f->dev[f->n_dev++] = d;
		log_info("tcmu: serving %s (%s) as LUN %u, %zu bytes mapped", de->d_name, name, lun, d->map_len);
	}
	closedir(dir);
}

/* On the worker's thread, in command order: the answer goes into the ring and the kernel is told. */
static void work_done(struct lu_work *w)
{
	struct tcmu_work *tw = (struct tcmu_work *)w;
	struct tcmu_dev *d = tw->dev;
	tcmu_ring_complete(&d->ring, &tw->rc);
	uint32_t one = 1;
	if (!atomic_load(&d->gone) && write(d->fd, &one, sizeof one) != (ssize_t)sizeof one)
		log_debug("tcmu: %s: doorbell: %s", d->uio, strerror(errno));
	free(tw);
	atomic_fetch_sub(&d->inflight, 1);
}

/* Takes every new entry of d's ring to its LUN's worker. */
static void drain(struct tcmu_dev *d)
{
	for (;;) {
		struct tcmu_work *tw = malloc(sizeof *tw);
		if (!tw) {
			log_error("tcmu: %s: out of memory; the kernel will time its commands out", d->uio);
			return;
		}
		if (tcmu_ring_next(&d->ring, &tw->rc) != 1) {
			free(tw);
			return;
		}
		tw->dev = d;
		tw->rc.cmd.nexus = d->nexus;
		tw->w = (struct lu_work){.cmd = tw->rc.malformed ? NULL : &tw->rc.cmd, .done = work_done, .owner = d};
		atomic_fetch_add(&d->inflight, 1);
		lu_worker_submit(d->worker, &tw->w);
	}
}

/* Forgets devices the kernel removed once nothing of theirs is in flight. */
static void reap(struct tcmu_front *f)
{
	for (unsigned i = 0; i < f->n_dev;) {
		struct tcmu_dev *d = f->dev[i];
		if (atomic_load(&d->gone) && atomic_load(&d->inflight) == 0) {
			log_info("tcmu: %s is gone", d->uio);
			dev_close(d);
			f->dev[i] = f->dev[--f->n_dev];
			continue;
		}
		i++;
	}
}

static void *run(void *arg)
{
	struct tcmu_front *f = arg;
	while (!atomic_load(&f->stopping)) {
		scan(f);
		struct pollfd p[MAX_DEVICES];
		unsigned n = 0;
		for (unsigned i = 0; i < f->n_dev; i++)
			if (!atomic_load(&f->dev[i]->gone))
				p[n++] = (struct pollfd){.fd = f->dev[i]->fd, .events = POLLIN};
		int r = poll(p, n, SCAN_MS);
		for (unsigned i = 0, k = 0; r > 0 && i < f->n_dev; i++) {
			struct tcmu_dev *d = f->dev[i];
			if (atomic_load(&d->gone))
				continue;
			short ev = p[k++].revents;
			if (ev & (POLLERR | POLLHUP | POLLNVAL)) {
				atomic_store(&d->gone, true);
				continue;
			}
			if (ev & POLLIN) {
				uint32_t count;
				if (read(d->fd, &count, sizeof count) != (ssize_t)sizeof count) {
					atomic_store(&d->gone, true); /* the kernel took the device away */
					continue;
				}
			}
			drain(d);
		}
		/* A doorbell can be missed between two scans: look at every ring anyway. */
		for (unsigned i = 0; i < f->n_dev; i++)
			if (!atomic_load(&f->dev[i]->gone))
				drain(f->dev[i]);
		reap(f);
		atomic_store(&f->served, f->n_dev);
	}
	return NULL;
}

int tcmu_front_start(const char *library, const struct vtl_lu *lus, unsigned n, const char *uio_root,
		     const char *dev_root, struct tcmu_front **out)
{
	if (n > MAX_DEVICES || strlen(library) >= sizeof((struct tcmu_front *)0)->library)
		return VTL_E_INVAL;
	struct tcmu_front *f = calloc(1, sizeof *f);
	if (!f)
		return VTL_E_NOMEM;
	snprintf(f->library, sizeof f->library, "%s", library);
	memcpy(f->lus, lus, n * sizeof *lus);
	f->n_lus = n;
	snprintf(f->uio_root, sizeof f->uio_root, "%s", uio_root);
	snprintf(f->dev_root, sizeof f->dev_root, "%s", dev_root);
	if (pthread_create(&f->thread, NULL, run, f) != 0) {
		free(f);
		return VTL_E_NOMEM;
	}
	*out = f;
	return VTL_OK;
}

unsigned tcmu_front_devices(struct tcmu_front *f)
{
	return f ? atomic_load(&f->served) : 0;
}

void tcmu_front_stop(struct tcmu_front *f)
{
	if (!f)
		return;
	atomic_store(&f->stopping, true);
	pthread_join(f->thread, NULL);
	for (unsigned i = 0; i < f->n_dev; i++) {
		struct tcmu_dev *d = f->dev[i];
		while (atomic_load(&d->inflight))
			usleep(1000); /* the workers finish what they have; their answers still go to the ring */
		dev_close(d);
	}
	free(f);
}
