build-main/tests/unit/test_sense: tests/unit/test_sense.c \
 vtl/scsi/sense.h
vtl/scsi/sense.h:
