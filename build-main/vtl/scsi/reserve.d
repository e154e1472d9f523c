build-main/vtl/scsi/reserve.o: vtl/scsi/reserve.c vtl/scsi/reserve.h \
 vtl/scsi/cmd.h vtl/scsi/sense.h vtl/scsi/dispatch.h vtl/scsi/device.h \
 vtl/scsi/spc.h common/bytes.h vtl/scsi/ua.h
vtl/scsi/reserve.h:
vtl/scsi/cmd.h:
vtl/scsi/sense.h:
vtl/scsi/dispatch.h:
vtl/scsi/device.h:
vtl/scsi/spc.h:
common/bytes.h:
vtl/scsi/ua.h:
