build-main/tests/integration/cu_shim.so: tests/integration/cu_shim.c
