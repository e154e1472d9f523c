build-main/tests/integration/phys_iscsi_vtl: \
 tests/integration/phys_iscsi_vtl.c migrator/phys_iscsi.h migrator/phys.h \
 common/vtl_error.h backend/pool.h tests/phys_check.h
migrator/phys_iscsi.h:
migrator/phys.h:
common/vtl_error.h:
backend/pool.h:
tests/phys_check.h:
