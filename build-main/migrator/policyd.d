build-main/migrator/policyd.o: migrator/policyd.c migrator/policyd.h \
 backend/pool.h common/vtl_error.h catalog/catalog.h vtl/config.h \
 common/jsonout.h common/log.h migrator/policy.h
migrator/policyd.h:
backend/pool.h:
common/vtl_error.h:
catalog/catalog.h:
vtl/config.h:
common/jsonout.h:
common/log.h:
migrator/policy.h:
