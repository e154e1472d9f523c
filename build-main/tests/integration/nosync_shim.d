build-main/tests/integration/nosync_shim.so: \
 tests/integration/nosync_shim.c
