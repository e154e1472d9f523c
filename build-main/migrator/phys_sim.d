build-main/migrator/phys_sim.o: migrator/phys_sim.c migrator/phys_sim.h \
 migrator/phys.h common/vtl_error.h backend/pool.h common/crc32c.h \
 common/grow.h
migrator/phys_sim.h:
migrator/phys.h:
common/vtl_error.h:
backend/pool.h:
common/crc32c.h:
common/grow.h:
