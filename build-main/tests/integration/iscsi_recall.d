build-main/tests/integration/iscsi_recall: \
 tests/integration/iscsi_recall.c tests/integration/hostlib.h
tests/integration/hostlib.h:
