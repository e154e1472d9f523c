build-main/vtl/iscsi/session.o: vtl/iscsi/session.c vtl/iscsi/session.h \
 vtl/iscsi/pdu.h vtl/scsi/cmd.h vtl/scsi/sense.h common/vtl_error.h \
 vtl/scsi/dispatch.h
vtl/iscsi/session.h:
vtl/iscsi/pdu.h:
vtl/scsi/cmd.h:
vtl/scsi/sense.h:
common/vtl_error.h:
vtl/scsi/dispatch.h:
