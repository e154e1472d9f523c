build-main/tests/integration/iscsi_faults: \
 tests/integration/iscsi_faults.c tests/integration/hostlib.h
tests/integration/hostlib.h:
