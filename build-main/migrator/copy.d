build-main/migrator/copy.o: migrator/copy.c migrator/copy.h \
 backend/cartridge.h common/vtl_error.h backend/pool.h migrator/phys.h \
 migrator/stream.h backend/format.h common/crc32c.h
migrator/copy.h:
backend/cartridge.h:
common/vtl_error.h:
backend/pool.h:
migrator/phys.h:
migrator/stream.h:
backend/format.h:
common/crc32c.h:
