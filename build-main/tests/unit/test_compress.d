build-main/tests/unit/test_compress: tests/unit/test_compress.c \
 backend/compress.h common/vtl_error.h backend/format.h backend/workers.h
backend/compress.h:
common/vtl_error.h:
backend/format.h:
backend/workers.h:
