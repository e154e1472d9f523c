/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Who the drive says it is: INQUIRY with the VPD pages of a tape drive
 * (SSC-4 8.4: B0h, B1h) and those hosts read from IBM and HP LTO drives
 * (vendor pages C0h.., laid out as sg3_utils' sg_vpd decodes them and the
 * LTO SCSI references describe them). The standard data and pages 00h, 80h
 * and 83h are spc_inquiry's.
 */
#include "vtl/drive/ssc_internal.h"

#include <stdio.h>
#include <string.h>

#include "common/grow.h"

/* Sequential-access device capabilities VPD page (SSC-4 table 118). */
#define VPD_SA_CAPABILITIES 0xB0
#define SA_CAP_LEN 2
#define SA_CAP_WORM 0x01 /* byte 4: the drive handles WORM media */
/* Manufacturer-assigned serial number VPD page (SSC-4 8.4.3): the serial in ASCII. */
#define VPD_MANUFACTURER_SERIAL 0xB1

/* IBM LTO: firmware designation / drive component revision levels (C0h), drive serial numbers (C1h). */
#define IBM_VPD_FIRMWARE 0xC0
#define IBM_FW_CODE_NAME 12  /* at 4 */
#define IBM_FW_TIME 7        /* at 16: hhmmss and a blank */
#define IBM_FW_DATE 8        /* at 23: yyyymmdd */
#define IBM_FW_PLATFORM 12   /* at 31 */
#define IBM_VPD_SERIALS 0xC1
#define IBM_SERIAL_LEN 12    /* manufacturing serial at 4, reported serial at 16 */
#define IBM_FW_BUILT "000000 "
#define IBM_FW_DATE_OF "20240101"

/* HP LTO: component revision level pages C0h (firmware) .. C5h (ACI), four ASCII fields each. */
#define HP_VPD_FIRST 0xC0
#define HP_COMPONENT 26
#define HP_VERSION 19
#define HP_DATE 24
#define HP_VARIANT 23
#define HP_FW_DATE "2024/01/01"

static size_t vpd_sa_capabilities(const void *arg, uint8_t *out)
{
	(void)arg;
	out[0] = SA_CAP_WORM;
	out[1] = 0;
	return SA_CAP_LEN;
}

static size_t vpd_manufacturer_serial(const void *arg, uint8_t *out)
{
	const struct ssc_drive *d = arg;
	size_t n = strnlen(d->dev.ident.serial, sizeof d->dev.ident.serial - 1);
	memcpy(out, d->dev.ident.serial, n);
	return n;
}

/* Writes n space-padded ASCII fields of the given widths one after another; returns the bytes written. */
static size_t put_fields(uint8_t *out, const char *const *vals, const uint8_t *widths, size_t n)
{
	size_t at = 0;
	for (size_t i = 0; i < n; i++) {
		spc_put_padded(out + at, vals[i], widths[i]);
		at += widths[i];
	}
	return at;
}

static size_t ibm_firmware(const void *arg, uint8_t *out)
{
	const struct ssc_drive *d = arg;
	static const uint8_t widths[] = {IBM_FW_CODE_NAME, IBM_FW_TIME, IBM_FW_DATE, IBM_FW_PLATFORM};
	const char *vals[] = {d->dev.ident.revision, IBM_FW_BUILT, IBM_FW_DATE_OF, d->dev.ident.product};
	return put_fields(out, vals, widths, 4);
}

static size_t ibm_serials(const void *arg, uint8_t *out)
{
	const struct ssc_drive *d = arg;
	static const uint8_t widths[] = {IBM_SERIAL_LEN, IBM_SERIAL_LEN};
	const char *vals[] = {d->dev.ident.serial, d->dev.ident.serial};
	return put_fields(out, vals, widths, 2);
}

/* One HP component page: its name, the revision (the drive's firmware for C0h), a date, the product. */
static size_t hp_component(const struct ssc_drive *d, const char *component, const char *version, uint8_t *out)
{
	static const uint8_t widths[] = {HP_COMPONENT, HP_VERSION, HP_DATE, HP_VARIANT};
	const char *vals[] = {component, version, HP_FW_DATE, d->dev.ident.product};
	return put_fields(out, vals, widths, 4);
}

static size_t hp_firmware(const void *arg, uint8_t *out)
{
	const struct ssc_drive *d = arg;
	return hp_component(d, "Firmware", d->dev.ident.revision, out);
}
static size_t hp_hardware(const void *arg, uint8_t *out) { return hp_component(arg, "Hardware", "0001", out); }
static size_t hp_pca(const void *arg, uint8_t *out) { return hp_component(arg, "PCA", "0001", out); }
static size_t hp_mechanism(const void *arg, uint8_t *out) { return hp_component(arg, "Mechanism", "0001", out); }
static size_t hp_head(const void *arg, uint8_t *out) { return hp_component(arg, "Head Assy", "0001", out); }
static size_t hp_aci(const void *arg, uint8_t *out) { return hp_component(arg, "ACI", "0001", out); }

static const struct spc_vpd_page ibm_pages[] = {
	{VPD_SA_CAPABILITIES, vpd_sa_capabilities},
	{VPD_MANUFACTURER_SERIAL, vpd_manufacturer_serial},
	{IBM_VPD_FIRMWARE, ibm_firmware},
	{IBM_VPD_SERIALS, ibm_serials},
};

static const struct spc_vpd_page hp_pages[] = {
	{VPD_SA_CAPABILITIES, vpd_sa_capabilities},
	{VPD_MANUFACTURER_SERIAL, vpd_manufacturer_serial},
	{HP_VPD_FIRST + 0, hp_firmware},
	{HP_VPD_FIRST + 1, hp_hardware},
	{HP_VPD_FIRST + 2, hp_pca},
	{HP_VPD_FIRST + 3, hp_mechanism},
	{HP_VPD_FIRST + 4, hp_head},
	{HP_VPD_FIRST + 5, hp_aci},
};

void ssc_inquiry(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct ssc_drive *d = ssc_of(dev);
	/* vtl_drive_generation accepted only IBM's and HP's names: anything not IBM is HP's. */
	bool ibm = strcmp(dev->ident.vendor, "IBM") == 0;
	if (ibm)
		spc_inquiry_vpd(&dev->ident, ibm_pages, VTL_ARRAY_SIZE(ibm_pages), d, c);
	else
		spc_inquiry_vpd(&dev->ident, hp_pages, VTL_ARRAY_SIZE(hp_pages), d, c);
}
