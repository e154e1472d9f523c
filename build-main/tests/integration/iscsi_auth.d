build-main/tests/integration/iscsi_auth: tests/integration/iscsi_auth.c
