build-main/migrator/daemon.o: migrator/daemon.c migrator/daemon.h \
 vtl/config.h backend/pool.h common/vtl_error.h catalog/catalog.h \
 backend/cartridge.h common/ctlsock.h common/grow.h common/jsonout.h \
 common/log.h migrator/migrate.h migrator/copy.h migrator/phys.h \
 migrator/stream.h migrator/phys_iscsi.h migrator/phys_st.h \
 migrator/policyd.h migrator/phys_sim.h
migrator/daemon.h:
vtl/config.h:
backend/pool.h:
common/vtl_error.h:
catalog/catalog.h:
backend/cartridge.h:
common/ctlsock.h:
common/grow.h:
common/jsonout.h:
common/log.h:
migrator/migrate.h:
migrator/copy.h:
migrator/phys.h:
migrator/stream.h:
migrator/phys_iscsi.h:
migrator/phys_st.h:
migrator/policyd.h:
migrator/phys_sim.h:
