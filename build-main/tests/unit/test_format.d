build-main/tests/unit/test_format: tests/unit/test_format.c \
 backend/format.h common/vtl_error.h common/crc32c.h
backend/format.h:
common/vtl_error.h:
common/crc32c.h:
