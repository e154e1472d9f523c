build-main/tests/integration/iscsi_fill: tests/integration/iscsi_fill.c \
 tests/integration/hostlib.h
tests/integration/hostlib.h:
