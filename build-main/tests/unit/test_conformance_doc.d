build-main/tests/unit/test_conformance_doc: \
 tests/unit/test_conformance_doc.c vtl/scsi/dispatch.h vtl/scsi/cmd.h \
 vtl/scsi/sense.h vtl/scsi/smc.h vtl/library.h backend/pool.h \
 common/vtl_error.h catalog/catalog.h vtl/scsi/ssc.h vtl/media.h \
 vtl/scsi/spc.h common/bytes.h
vtl/scsi/dispatch.h:
vtl/scsi/cmd.h:
vtl/scsi/sense.h:
vtl/scsi/smc.h:
vtl/library.h:
backend/pool.h:
common/vtl_error.h:
catalog/catalog.h:
vtl/scsi/ssc.h:
vtl/media.h:
vtl/scsi/spc.h:
common/bytes.h:
