build-main/tests/integration/iscsi_hostile: \
 tests/integration/iscsi_hostile.c tests/integration/attack.h \
 tests/integration/rawlib.h
tests/integration/attack.h:
tests/integration/rawlib.h:
