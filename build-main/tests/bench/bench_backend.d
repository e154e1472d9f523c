build-main/tests/bench/bench_backend: tests/bench/bench_backend.c \
 backend/cartridge.h common/vtl_error.h backend/pool.h backend/format.h \
 common/crc32c.h
backend/cartridge.h:
common/vtl_error.h:
backend/pool.h:
backend/format.h:
common/crc32c.h:
