build-main/vtl/tcmu/ring.o: vtl/tcmu/ring.c vtl/tcmu/ring.h \
 vtl/scsi/cmd.h vtl/scsi/sense.h vtl/tcmu/uapi.h common/vtl_error.h
vtl/tcmu/ring.h:
vtl/scsi/cmd.h:
vtl/scsi/sense.h:
vtl/tcmu/uapi.h:
common/vtl_error.h:
