build-main/backend/cartridge.o: backend/cartridge.c backend/cartridge.h \
 common/vtl_error.h backend/pool.h backend/compress.h backend/internal.h \
 backend/format.h backend/workers.h common/crc32c.h common/log.h
backend/cartridge.h:
common/vtl_error.h:
backend/pool.h:
backend/compress.h:
backend/internal.h:
backend/format.h:
backend/workers.h:
common/crc32c.h:
common/log.h:
