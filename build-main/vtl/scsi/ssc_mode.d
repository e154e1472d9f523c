build-main/vtl/scsi/ssc_mode.o: vtl/scsi/ssc_mode.c \
 vtl/scsi/ssc_internal.h backend/cartridge.h common/vtl_error.h \
 backend/pool.h vtl/scsi/device.h vtl/scsi/cmd.h vtl/scsi/sense.h \
 vtl/scsi/dispatch.h vtl/scsi/reserve.h vtl/scsi/spc.h common/bytes.h \
 vtl/scsi/ua.h vtl/scsi/ssc.h catalog/catalog.h vtl/media.h \
 vtl/scsi/spc_mode.h
vtl/scsi/ssc_internal.h:
backend/cartridge.h:
common/vtl_error.h:
backend/pool.h:
vtl/scsi/device.h:
vtl/scsi/cmd.h:
vtl/scsi/sense.h:
vtl/scsi/dispatch.h:
vtl/scsi/reserve.h:
vtl/scsi/spc.h:
common/bytes.h:
vtl/scsi/ua.h:
vtl/scsi/ssc.h:
catalog/catalog.h:
vtl/media.h:
vtl/scsi/spc_mode.h:
