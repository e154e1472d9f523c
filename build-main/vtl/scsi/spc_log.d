build-main/vtl/scsi/spc_log.o: vtl/scsi/spc_log.c vtl/scsi/spc_log.h \
 vtl/scsi/cmd.h vtl/scsi/sense.h vtl/scsi/spc.h common/bytes.h
vtl/scsi/spc_log.h:
vtl/scsi/cmd.h:
vtl/scsi/sense.h:
vtl/scsi/spc.h:
common/bytes.h:
