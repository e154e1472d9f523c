build-main/tests/integration/fault_shim.so: \
 tests/integration/fault_shim.c
