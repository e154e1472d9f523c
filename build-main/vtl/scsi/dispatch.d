build-main/vtl/scsi/dispatch.o: vtl/scsi/dispatch.c vtl/scsi/dispatch.h \
 vtl/scsi/cmd.h vtl/scsi/sense.h vtl/scsi/reserve.h
vtl/scsi/dispatch.h:
vtl/scsi/cmd.h:
vtl/scsi/sense.h:
vtl/scsi/reserve.h:
