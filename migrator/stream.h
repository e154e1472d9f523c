/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The streaming engine: keeps a physical drive fed so that it streams
 * instead of shoe-shining. Reader threads fill a ring of M buffers of B
 * bytes from the source (in parallel, each buffer one B-sized piece of the
 * stream at its own offset); the caller's thread is the writer and hands
 * the buffers, in order, to the sink. The writer starts once the ring is
 * filled to the watermark, and when the source falls behind and the ring
 * runs empty it waits until the ring is back at the watermark, so that the
 * drive gets whole bursts rather than a trickle it cannot stream.
 *
 * The counters are the ones tape administrators tune buffers with: how
 * often the writer waited for a full buffer (and in how many 10 ms delays),
 * how often the readers waited for an empty one, and the rate over time.
 */
#ifndef VTL_MIGRATOR_STREAM_H
#define VTL_MIGRATOR_STREAM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STREAM_MAX_BUFFERS 1024
#define STREAM_MAX_READERS 16
#define STREAM_DELAY_MS 10 /* one "delay" of the wait counters */
/*
 * A writer wait at least this long is counted as a likely back-hitch of a
 * real drive, whose buffer the migrator cannot see: LTO drives hold a few
 * seconds of data at their native rate at most.
 */
#define STREAM_GAP_MS 1000

struct stream_config {
	unsigned buffers;       /* M: 2 .. STREAM_MAX_BUFFERS */
	size_t buffer_size;     /* B: bytes per buffer, the block size the sink gets (the last one may be shorter) */
	unsigned watermark;     /* full buffers before the writer starts or resumes (1 .. M); 0: M/2 */
	unsigned readers;       /* reader threads, 1 .. STREAM_MAX_READERS */
	/* Bytes/s the writer may send now (0: no limit); asked before each block. NULL: no limit. */
	double (*rate_limit)(void *arg);
	void *rate_arg;
};

/* Fills buf with len bytes of the stream from offset off (len is B, or less at the end); called from reader threads. */
typedef int (*stream_read_fn)(void *arg, uint64_t off, void *buf, size_t len);
/* Takes the next block of the stream; called from the writer (the caller's thread), in order. */
typedef int (*stream_write_fn)(void *arg, const void *buf, size_t len);

struct stream_counters {
	uint64_t bytes;            /* handed to the sink */
	uint64_t blocks;
	uint64_t writer_waits;     /* times the writer found the next buffer not yet full */
	uint64_t writer_delays;    /* its waits in STREAM_DELAY_MS units */
	uint64_t reader_waits;     /* times a reader found no empty buffer */
	uint64_t reader_delays;
	uint64_t throttled;        /* blocks the rate limit held back */
	uint64_t gaps;             /* writer waits of STREAM_GAP_MS or more: back-hitches a real drive likely made */
	double seconds;            /* from the first block written to the last */
	double avg_mbs;            /* bytes / seconds, in MB/s */
	double min_mbs;            /* the lowest rate of a whole second of writing */
	double max_mbs;
};

/* What the writer knows between blocks, for a job's live progress. */
struct stream_progress {
	uint64_t bytes, total;
	unsigned full, buffers;     /* ring fill */
	double mbs;                 /* over the last second */
	const struct stream_counters *c;
};

struct stream_job {
	struct stream_config cfg;
	uint64_t total;            /* stream length in bytes */
	stream_read_fn read;
	void *read_arg;
	stream_write_fn write;
	void *write_arg;
	void (*progress)(void *arg, const struct stream_progress *p); /* may be NULL; about twice a second */
	void *progress_arg;
	atomic_bool *cancel;       /* may be NULL: set to stop the job (it ends with VTL_E_BUSY) */
};

/*
 * Runs the job to its end. Returns VTL_OK, the first error of the source
 * or of the sink (the other side stops then), VTL_E_INVAL for a bad
 * configuration, VTL_E_NOMEM, or VTL_E_BUSY when cancelled. *out is filled
 * in every case with what was done.
 */
int stream_run(const struct stream_job *job, struct stream_counters *out);

#endif
