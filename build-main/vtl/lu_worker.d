build-main/vtl/lu_worker.o: vtl/lu_worker.c vtl/lu_worker.h \
 vtl/scsi/cmd.h vtl/scsi/sense.h common/vtl_error.h
vtl/lu_worker.h:
vtl/scsi/cmd.h:
vtl/scsi/sense.h:
common/vtl_error.h:
