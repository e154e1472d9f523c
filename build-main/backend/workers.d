build-main/backend/workers.o: backend/workers.c backend/workers.h
backend/workers.h:
