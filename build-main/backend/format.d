build-main/backend/format.o: backend/format.c backend/format.h \
 common/vtl_error.h backend/cartridge.h backend/pool.h common/crc32c.h
backend/format.h:
common/vtl_error.h:
backend/cartridge.h:
backend/pool.h:
common/crc32c.h:
