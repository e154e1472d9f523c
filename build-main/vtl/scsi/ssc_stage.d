build-main/vtl/scsi/ssc_stage.o: vtl/scsi/ssc_stage.c common/log.h \
 common/vtl_error.h vtl/scsi/sense.h vtl/scsi/ssc_internal.h \
 backend/cartridge.h backend/pool.h vtl/scsi/device.h vtl/scsi/cmd.h \
 vtl/scsi/dispatch.h vtl/scsi/reserve.h vtl/scsi/spc.h common/bytes.h \
 vtl/scsi/ua.h vtl/scsi/ssc.h catalog/catalog.h vtl/media.h
common/log.h:
common/vtl_error.h:
vtl/scsi/sense.h:
vtl/scsi/ssc_internal.h:
backend/cartridge.h:
backend/pool.h:
vtl/scsi/device.h:
vtl/scsi/cmd.h:
vtl/scsi/dispatch.h:
vtl/scsi/reserve.h:
vtl/scsi/spc.h:
common/bytes.h:
vtl/scsi/ua.h:
vtl/scsi/ssc.h:
catalog/catalog.h:
vtl/media.h:
