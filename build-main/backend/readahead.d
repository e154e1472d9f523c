build-main/backend/readahead.o: backend/readahead.c backend/compress.h \
 common/vtl_error.h backend/internal.h backend/cartridge.h backend/pool.h \
 backend/format.h backend/workers.h common/crc32c.h
backend/compress.h:
common/vtl_error.h:
backend/internal.h:
backend/cartridge.h:
backend/pool.h:
backend/format.h:
backend/workers.h:
common/crc32c.h:
