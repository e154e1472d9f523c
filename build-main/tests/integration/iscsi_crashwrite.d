build-main/tests/integration/iscsi_crashwrite: \
 tests/integration/iscsi_crashwrite.c tests/integration/hostlib.h
tests/integration/hostlib.h:
