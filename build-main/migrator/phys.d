build-main/migrator/phys.o: migrator/phys.c migrator/phys.h \
 common/vtl_error.h backend/pool.h common/bytes.h
migrator/phys.h:
common/vtl_error.h:
backend/pool.h:
common/bytes.h:
