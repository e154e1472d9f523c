build-main/vtl/iscsi/target.o: vtl/iscsi/target.c vtl/iscsi/target.h \
 vtl/iscsi/login.h vtl/iscsi/chap.h common/md5.h vtl/iscsi/pdu.h \
 vtl/iscsi/text.h vtl/iscsi/session.h vtl/scsi/cmd.h vtl/scsi/sense.h \
 vtl/lu_worker.h common/log.h common/vtl_error.h
vtl/iscsi/target.h:
vtl/iscsi/login.h:
vtl/iscsi/chap.h:
common/md5.h:
vtl/iscsi/pdu.h:
vtl/iscsi/text.h:
vtl/iscsi/session.h:
vtl/scsi/cmd.h:
vtl/scsi/sense.h:
vtl/lu_worker.h:
common/log.h:
common/vtl_error.h:
