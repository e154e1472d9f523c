build-main/vtl/vtld/control.o: vtl/vtld/control.c vtl/vtld/control.h \
 common/ctlsock.h common/jsonout.h common/log.h common/vtl_error.h \
 catalog/catalog.h vtl/config.h backend/pool.h vtl/library.h \
 vtl/scsi/ssc.h vtl/media.h vtl/scsi/cmd.h vtl/scsi/sense.h \
 vtl/scsi/spc.h common/bytes.h vtl/tcmu/front.h vtl/lu_worker.h \
 vtl/throttle.h vtl/vtld/daemon.h common/meter.h
vtl/vtld/control.h:
common/ctlsock.h:
common/jsonout.h:
common/log.h:
common/vtl_error.h:
catalog/catalog.h:
vtl/config.h:
backend/pool.h:
vtl/library.h:
vtl/scsi/ssc.h:
vtl/media.h:
vtl/scsi/cmd.h:
vtl/scsi/sense.h:
vtl/scsi/spc.h:
common/bytes.h:
vtl/tcmu/front.h:
vtl/lu_worker.h:
vtl/throttle.h:
vtl/vtld/daemon.h:
common/meter.h:
