build-main/vtl/tcmu/front.o: vtl/tcmu/front.c vtl/tcmu/front.h \
 vtl/lu_worker.h vtl/scsi/cmd.h vtl/scsi/sense.h common/log.h \
 common/vtl_error.h vtl/tcmu/ring.h
vtl/tcmu/front.h:
vtl/lu_worker.h:
vtl/scsi/cmd.h:
vtl/scsi/sense.h:
common/log.h:
common/vtl_error.h:
vtl/tcmu/ring.h:
