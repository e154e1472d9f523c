build-main/vtl/scsi/device.o: vtl/scsi/device.c vtl/scsi/device.h \
 vtl/scsi/cmd.h vtl/scsi/sense.h vtl/scsi/dispatch.h vtl/scsi/reserve.h \
 vtl/scsi/spc.h common/bytes.h vtl/scsi/ua.h
vtl/scsi/device.h:
vtl/scsi/cmd.h:
vtl/scsi/sense.h:
vtl/scsi/dispatch.h:
vtl/scsi/reserve.h:
vtl/scsi/spc.h:
common/bytes.h:
vtl/scsi/ua.h:
