build-main/migrator/phys_st.o: migrator/phys_st.c migrator/phys_st.h \
 migrator/phys.h common/vtl_error.h backend/pool.h common/bytes.h
migrator/phys_st.h:
migrator/phys.h:
common/vtl_error.h:
backend/pool.h:
common/bytes.h:
