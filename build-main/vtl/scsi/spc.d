build-main/vtl/scsi/spc.o: vtl/scsi/spc.c vtl/scsi/spc.h common/bytes.h \
 vtl/scsi/cmd.h vtl/scsi/sense.h vtl/scsi/device.h vtl/scsi/dispatch.h \
 vtl/scsi/reserve.h vtl/scsi/ua.h
vtl/scsi/spc.h:
common/bytes.h:
vtl/scsi/cmd.h:
vtl/scsi/sense.h:
vtl/scsi/device.h:
vtl/scsi/dispatch.h:
vtl/scsi/reserve.h:
vtl/scsi/ua.h:
