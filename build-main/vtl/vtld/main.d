build-main/vtl/vtld/main.o: vtl/vtld/main.c common/log.h \
 common/vtl_error.h vtl/config.h backend/pool.h catalog/catalog.h \
 vtl/vtld/control.h vtl/vtld/daemon.h common/meter.h vtl/lu_worker.h \
 vtl/scsi/cmd.h vtl/scsi/sense.h
common/log.h:
common/vtl_error.h:
vtl/config.h:
backend/pool.h:
catalog/catalog.h:
vtl/vtld/control.h:
vtl/vtld/daemon.h:
common/meter.h:
vtl/lu_worker.h:
vtl/scsi/cmd.h:
vtl/scsi/sense.h:
