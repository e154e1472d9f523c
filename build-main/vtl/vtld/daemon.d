build-main/vtl/vtld/daemon.o: vtl/vtld/daemon.c vtl/vtld/daemon.h \
 common/meter.h vtl/config.h backend/pool.h common/vtl_error.h \
 catalog/catalog.h vtl/lu_worker.h vtl/scsi/cmd.h vtl/scsi/sense.h \
 common/log.h vtl/iscsi/target.h vtl/iscsi/login.h vtl/iscsi/chap.h \
 common/md5.h vtl/iscsi/pdu.h vtl/iscsi/text.h vtl/iscsi/session.h \
 vtl/library.h vtl/scsi/ssc.h vtl/media.h vtl/scsi/spc.h common/bytes.h \
 vtl/scsi/smc.h vtl/tcmu/front.h vtl/throttle.h
vtl/vtld/daemon.h:
common/meter.h:
vtl/config.h:
backend/pool.h:
common/vtl_error.h:
catalog/catalog.h:
vtl/lu_worker.h:
vtl/scsi/cmd.h:
vtl/scsi/sense.h:
common/log.h:
vtl/iscsi/target.h:
vtl/iscsi/login.h:
vtl/iscsi/chap.h:
common/md5.h:
vtl/iscsi/pdu.h:
vtl/iscsi/text.h:
vtl/iscsi/session.h:
vtl/library.h:
vtl/scsi/ssc.h:
vtl/media.h:
vtl/scsi/spc.h:
common/bytes.h:
vtl/scsi/smc.h:
vtl/tcmu/front.h:
vtl/throttle.h:
