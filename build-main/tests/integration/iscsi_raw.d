build-main/tests/integration/iscsi_raw: tests/integration/iscsi_raw.c \
 tests/integration/rawlib.h
tests/integration/rawlib.h:
