build-main/migrator/phys_iscsi.o: migrator/phys_iscsi.c \
 migrator/phys_iscsi.h migrator/phys.h common/vtl_error.h backend/pool.h \
 common/bytes.h
migrator/phys_iscsi.h:
migrator/phys.h:
common/vtl_error.h:
backend/pool.h:
common/bytes.h:
