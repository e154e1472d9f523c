build-main/vtl/throttle.o: vtl/throttle.c vtl/throttle.h backend/pool.h \
 common/vtl_error.h vtl/scsi/cmd.h vtl/scsi/sense.h common/log.h
vtl/throttle.h:
backend/pool.h:
common/vtl_error.h:
vtl/scsi/cmd.h:
vtl/scsi/sense.h:
common/log.h:
