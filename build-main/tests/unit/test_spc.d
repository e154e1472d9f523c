build-main/tests/unit/test_spc: tests/unit/test_spc.c vtl/scsi/spc.h \
 common/bytes.h vtl/scsi/cmd.h vtl/scsi/sense.h
vtl/scsi/spc.h:
common/bytes.h:
vtl/scsi/cmd.h:
vtl/scsi/sense.h:
