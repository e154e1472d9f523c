build-main/tests/integration/iscsi_hosts: tests/integration/iscsi_hosts.c \
 tests/integration/hostlib.h
tests/integration/hostlib.h:
