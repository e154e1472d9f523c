build-main/tests/unit/test_stream: tests/unit/test_stream.c \
 common/vtl_error.h migrator/stream.h
common/vtl_error.h:
migrator/stream.h:
