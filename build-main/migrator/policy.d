build-main/migrator/policy.o: migrator/policy.c migrator/policy.h \
 backend/pool.h common/vtl_error.h catalog/catalog.h vtl/config.h \
 backend/cartridge.h common/grow.h common/log.h migrator/copy.h \
 migrator/phys.h migrator/stream.h
migrator/policy.h:
backend/pool.h:
common/vtl_error.h:
catalog/catalog.h:
vtl/config.h:
backend/cartridge.h:
common/grow.h:
common/log.h:
migrator/copy.h:
migrator/phys.h:
migrator/stream.h:
