build-main/migrator/migrate.o: migrator/migrate.c migrator/migrate.h \
 backend/cartridge.h common/vtl_error.h backend/pool.h catalog/catalog.h \
 vtl/config.h migrator/copy.h migrator/phys.h migrator/stream.h \
 common/grow.h common/log.h migrator/policy.h
migrator/migrate.h:
backend/cartridge.h:
common/vtl_error.h:
backend/pool.h:
catalog/catalog.h:
vtl/config.h:
migrator/copy.h:
migrator/phys.h:
migrator/stream.h:
common/grow.h:
common/log.h:
migrator/policy.h:
