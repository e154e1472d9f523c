build-main/vtl/scsi/smc_mode.o: vtl/scsi/smc_mode.c \
 vtl/scsi/smc_internal.h vtl/library.h backend/pool.h common/vtl_error.h \
 catalog/catalog.h vtl/scsi/ssc.h vtl/media.h vtl/scsi/cmd.h \
 vtl/scsi/sense.h vtl/scsi/spc.h common/bytes.h vtl/scsi/device.h \
 vtl/scsi/dispatch.h vtl/scsi/reserve.h vtl/scsi/ua.h vtl/scsi/smc.h \
 vtl/scsi/spc_mode.h
vtl/scsi/smc_internal.h:
vtl/library.h:
backend/pool.h:
common/vtl_error.h:
catalog/catalog.h:
vtl/scsi/ssc.h:
vtl/media.h:
vtl/scsi/cmd.h:
vtl/scsi/sense.h:
vtl/scsi/spc.h:
common/bytes.h:
vtl/scsi/device.h:
vtl/scsi/dispatch.h:
vtl/scsi/reserve.h:
vtl/scsi/ua.h:
vtl/scsi/smc.h:
vtl/scsi/spc_mode.h:
