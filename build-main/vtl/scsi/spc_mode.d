build-main/vtl/scsi/spc_mode.o: vtl/scsi/spc_mode.c vtl/scsi/spc_mode.h \
 vtl/scsi/cmd.h vtl/scsi/sense.h vtl/scsi/spc.h common/bytes.h
vtl/scsi/spc_mode.h:
vtl/scsi/cmd.h:
vtl/scsi/sense.h:
vtl/scsi/spc.h:
common/bytes.h:
