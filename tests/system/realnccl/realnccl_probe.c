/* Small programs against the real libnccl.so.2 (tests/system/realnccl), linked to it like any NCCL
 * program, run with libhangshim.so preloaded. Each prints what NCCL told it, one line per fact,
 * so the test compares the shim's ledger and report with the program's own view:
 *
 *   realnccl_probe init RANK NRANKS IDFILE   rank 0 writes a unique id to IDFILE (renamed into
 *                                            place), the others wait for it; then
 *                                            ncclCommInitRank. Prints
 *                                            "init RANK CALL CODE NAME|TEXT" (NAME from nccl.h's
 *                                            own enum constants). Exit 3 when init failed, 0 when
 *                                            it worked (the communicator is destroyed).
 *   realnccl_probe init_all NDEV             ncclCommInitAll over NDEV devices (one process
 *                                            makes every rank). Prints
 *                                            "init 0 ncclCommInitAll CODE NAME|TEXT"; exit as
 *                                            for init.
 *   realnccl_probe bcast                     one ncclBcast(buf, 1, ncclFloat, 0, NULL, NULL).
 *                                            Prints "bcast CODE NAME|TEXT"; exit 0.
 *   realnccl_probe version                   ncclGetVersion, then the bcast above (a query
 *                                            alone makes no ledger). Prints
 *                                            "version RUNTIME HEADER": ncclGetVersion's code and
 *                                            nccl.h's NCCL_VERSION_CODE.
 */
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char* result_name(ncclResult_t r) {
  switch (r) {
    case ncclSuccess: return "ncclSuccess";
    case ncclUnhandledCudaError: return "ncclUnhandledCudaError";
    case ncclSystemError: return "ncclSystemError";
    case ncclInternalError: return "ncclInternalError";
    case ncclInvalidArgument: return "ncclInvalidArgument";
    case ncclInvalidUsage: return "ncclInvalidUsage";
    case ncclRemoteError: return "ncclRemoteError";
    case ncclInProgress: return "ncclInProgress";
    default: return "unknown";
  }
}

static const char* last_error(void) {
  const char* text = ncclGetLastError(NULL);
  return text != NULL ? text : "";
}

static int share_id(int rank, const char* path, ncclUniqueId* id) {
  if (rank == 0) {
    ncclResult_t r = ncclGetUniqueId(id);
    if (r != ncclSuccess) {
      printf("init %d ncclGetUniqueId %d %s|%s\n", rank, (int)r, result_name(r), last_error());
      return 1;
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE* f = fopen(tmp, "wb");
    if (f == NULL || fwrite(id, sizeof *id, 1, f) != 1 || fclose(f) != 0 || rename(tmp, path) != 0) {
      perror("realnccl_probe: writing the unique id");
      return 1;
    }
    return 0;
  }
  for (int tries = 0; tries < 600; ++tries) { /* 60 s */
    FILE* f = fopen(path, "rb");
    if (f != NULL) {
      size_t n = fread(id, sizeof *id, 1, f);
      fclose(f);
      if (n == 1) return 0;
    }
    struct timespec pause = {0, 100 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  fprintf(stderr, "realnccl_probe: no unique id in %s after 60 s\n", path);
  return 1;
}

static int init_case(int rank, int nranks, const char* path) {
  ncclUniqueId id;
  if (share_id(rank, path, &id) != 0) return 1;
  ncclComm_t comm = NULL;
  ncclResult_t r = ncclCommInitRank(&comm, nranks, id, rank);
  printf("init %d ncclCommInitRank %d %s|%s\n", rank, (int)r, result_name(r), r == ncclSuccess ? "" : last_error());
  fflush(stdout);
  if (r != ncclSuccess) return 3;
  ncclCommDestroy(comm);
  return 0;
}

static int init_all_case(int ndev) {
  ncclComm_t comms[8] = {0};
  if (ndev < 1 || ndev > 8) return 2;
  ncclResult_t r = ncclCommInitAll(comms, ndev, NULL);
  printf("init 0 ncclCommInitAll %d %s|%s\n", (int)r, result_name(r), r == ncclSuccess ? "" : last_error());
  fflush(stdout);
  if (r != ncclSuccess) return 3;
  for (int i = 0; i < ndev; ++i) ncclCommDestroy(comms[i]);
  return 0;
}

static void bcast(void) {
  float buf[1] = {1.0f};
  ncclResult_t r = ncclBcast(buf, 1, ncclFloat, 0, NULL, NULL);
  printf("bcast %d %s|%s\n", (int)r, result_name(r), r == ncclSuccess ? "" : last_error());
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "init") == 0 && argc == 5) return init_case(atoi(argv[2]), atoi(argv[3]), argv[4]);
  if (strcmp(mode, "init_all") == 0 && argc == 3) return init_all_case(atoi(argv[2]));
  if (strcmp(mode, "bcast") == 0) {
    bcast();
    return 0;
  }
  if (strcmp(mode, "version") == 0) {
    int version = 0;
    ncclResult_t r = ncclGetVersion(&version);
    printf("version %d %d %d\n", (int)r, version, NCCL_VERSION_CODE);
    bcast();
    return 0;
  }
  fprintf(stderr, "usage: realnccl_probe init RANK NRANKS IDFILE | init_all NDEV | bcast | version\n");
  return 2;
}
