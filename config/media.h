/* SPDX-License-Identifier: Apache-2.0 */
/*
 * LTO media and their barcode labels, as tape libraries read them: used by
 * vtlctl and by the library model (vtl/library/library.c), so that both accept and
 * refuse the same labels.
 *
 * A data or WORM label is 6 characters A-Z / 0-9 (the volume serial) and a
 * 2-character media identifier:
 *
 *   L5 L6 L7 L8 L9   LTO-5 .. LTO-9 data
 *   LA               LTO-10 data (30 TB; LTO-10 Plus, PA, and LTO-10 WORM are not emulated)
 *   M8               LTO-7 cartridge initialized as LTO-8 Type M (9 TB)
 *   LV LW LX LY LZ   LTO-5 .. LTO-9 WORM
 *
 * A cleaning label starts with "CLN", then 3 characters A-Z / 0-9, then CU
 * (universal cleaning cartridge) or L1 .. L9 (the IBM/HP "CLNxxxLx" form).
 * Older media (L1..L4, LT, LU) are recognised and refused: this library
 * emulates LTO-5 to LTO-10 drives.
 */
#ifndef VTL_CONFIG_MEDIA_H
#define VTL_CONFIG_MEDIA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/catalog.h"

#define VTL_LABEL_LEN 8 /* 6-character volume serial + 2-character media identifier */

/* Nominal native (uncompressed) capacities, decimal bytes. */
#define VTL_CAP_LTO5 1500000000000ull
#define VTL_CAP_LTO6 2500000000000ull
#define VTL_CAP_LTO7 6000000000000ull
#define VTL_CAP_LTO7M 9000000000000ull
#define VTL_CAP_LTO8 12000000000000ull
#define VTL_CAP_LTO9 18000000000000ull
/*
 * LTO-10: 30 TB native (IBM's and Spectra Logic's LTO-10 announcements; FreeBSD
 * mt(1)'s LTO-10 entry, "from IBM specs and actual tapes/drives"). The LTO-10
 * Plus cartridge (suffix PA, 40 TB, density 63h) is not emulated.
 */
#define VTL_CAP_LTO10 30000000000000ull

/* The generations emulated: LTO-5 to LTO-10; WORM media up to LTO-9 (no LTO-10 WORM suffix was found). */
#define VTL_GEN_MIN 5
#define VTL_GEN_MAX 10
#define VTL_WORM_GEN_MAX 9

/* What a label says about its cartridge. */
struct vtl_label {
	enum cat_media media; /* as the catalog stores it (an M8 cartridge is CAT_MEDIA_LTO7) */
	unsigned generation;  /* LTO generation of the cartridge, 5..10; 0 for cleaning */
	bool worm;
	bool cleaning;
	bool type_m;          /* M8: an LTO-7 cartridge initialized as LTO-8 Type M */
	uint64_t capacity;    /* nominal native capacity in bytes; 0 for cleaning */
	char suffix[3];       /* the media identifier, e.g. "L8" */
};

/*
 * Checks barcode against the label rules above and fills *out. On a label
 * it refuses, returns VTL_E_INVAL and writes into err why and what a valid
 * label looks like (without naming the caller: "barcode 'X' is ...").
 */
int vtl_label_parse(const char *barcode, struct vtl_label *out, char *err, size_t errlen);

/*
 * The media name an operator types and reads: "LTO8", "LTO8W", "LTO7M",
 * "CLN". type_m selects LTO7M for CAT_MEDIA_LTO7. NULL for a value that is
 * not a cat_media.
 */
const char *vtl_media_name(enum cat_media media, bool type_m);

/* A longer description, e.g. "LTO-8 WORM", "LTO-7 Type M (M8)", "cleaning". */
const char *vtl_media_describe(enum cat_media media, bool type_m);

/*
 * Parses a media name (case-insensitive): LTO5..LTO10, LTO5W..LTO9W, LTO7M
 * (or M8), CLN (or CLEANING). Returns 0 or VTL_E_INVAL.
 */
int vtl_media_parse(const char *name, enum cat_media *media, bool *type_m);

/* Nominal native capacity of a medium in bytes (0 for cleaning or an unknown value). */
uint64_t vtl_media_capacity(enum cat_media media, bool type_m);

/* True if the label's barcode says Type M (suffix M8): the catalog has no media value of its own for it. */
bool vtl_label_is_type_m(const char *barcode);

/*
 * The LTO generation a tape drive model emulates, from its INQUIRY vendor
 * and product: IBM "ULT3580-TD5".."ULT3580-TD9" (also -HH5..-HH9), IBM's LTO-10
 * "ULT3580-TDA" / "ULT3580-HHA" (generation "A", as IBM's LTFS lists them) and
 * HP/HPE "Ultrium 5-SCSI".."Ultrium 9-SCSI" (no HP LTO-10 product name was
 * found). 0 if the model is not one of these.
 */
unsigned vtl_drive_generation(const char *vendor, const char *model);

/*
 * Whether a drive of generation gen can load a cartridge. LTO-5 to LTO-7
 * drives write their own and the previous generation and read the one
 * before that; LTO-8 and LTO-9 drives read and write their own and the
 * previous generation only; an LTO-10 drive reads and writes LTO-10 only (it
 * is not backward compatible: IBM's LTFS drive/density table, FreeBSD mt(1));
 * Type M (M8) loads only in LTO-8 drives.
 * *can_write (may be NULL) tells whether the drive may also write it.
 * Cleaning media load in every drive.
 */
bool vtl_drive_accepts(unsigned gen, const struct vtl_label *label, bool *can_write);

/*
 * Next barcode of a range: increments the numeric tail of the 6-character
 * volume serial ("A00009L8" -> "A00010L8"), keeping its width. Returns
 * VTL_E_INVAL if the serial has no numeric tail or the tail is all 9s.
 */
int vtl_label_next(const char *barcode, char out[VTL_LABEL_LEN + 1]);

/*
 * Number of labels from first to last inclusive, counting as vtl_label_next
 * does; VTL_E_INVAL (with err) if they differ in anything but the numeric
 * tail or last comes before first.
 */
int vtl_label_range(const char *first, const char *last, unsigned long *count, char *err, size_t errlen);

#endif
