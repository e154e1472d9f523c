build-main/tests/integration/iscsi_tape: tests/integration/iscsi_tape.c \
 tests/integration/hostlib.h
tests/integration/hostlib.h:
