build-main/tests/kernel/phys_st_check: tests/kernel/phys_st_check.c \
 migrator/phys_st.h migrator/phys.h common/vtl_error.h backend/pool.h \
 tests/phys_check.h
migrator/phys_st.h:
migrator/phys.h:
common/vtl_error.h:
backend/pool.h:
tests/phys_check.h:
