build-main/common/vtl_error.o: common/vtl_error.c common/vtl_error.h
common/vtl_error.h:
