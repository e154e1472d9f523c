build-main/common/jsonout.o: common/jsonout.c common/jsonout.h \
 common/vtl_error.h
common/jsonout.h:
common/vtl_error.h:
