build-main/tests/unit/test_iscsi_session: tests/unit/test_iscsi_session.c \
 tests/unit/scsi_host.h tests/unit/testlib.h backend/cartridge.h \
 common/vtl_error.h backend/pool.h catalog/catalog.h vtl/scsi/ssc.h \
 vtl/media.h vtl/scsi/cmd.h vtl/scsi/sense.h vtl/scsi/spc.h \
 common/bytes.h vtl/iscsi/session.h vtl/iscsi/pdu.h
tests/unit/scsi_host.h:
tests/unit/testlib.h:
backend/cartridge.h:
common/vtl_error.h:
backend/pool.h:
catalog/catalog.h:
vtl/scsi/ssc.h:
vtl/media.h:
vtl/scsi/cmd.h:
vtl/scsi/sense.h:
vtl/scsi/spc.h:
common/bytes.h:
vtl/iscsi/session.h:
vtl/iscsi/pdu.h:
