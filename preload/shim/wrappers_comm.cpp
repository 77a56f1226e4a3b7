// Communicator life cycle and groups: register the communicator under a key every rank
// derives alike (comm_key.h), record the call, forward, return the real result.
#include <cstddef>
#include <cstring>
#include <string_view>

#include "shim/core/comm_key.h"
#include "shim/wrappers.h"

using namespace hangshim::shim;
using hangshim::ledger::CommInit;
using hangshim::ledger::KeyKind;
using hangshim::ledger::Op;

namespace {

// config->commName, read only when the struct is big enough and initialized (NCCL's magic).
std::string_view comm_name(const ncclConfig_t* config) {
  constexpr size_t kNeeded = offsetof(ncclConfig_t, commName) + sizeof(const char*);
  if (config == nullptr || config->magic != 0xcafebeef || config->size < kNeeded || config->commName == nullptr) return {};
  return std::string_view(config->commName, strnlen(config->commName, 31));
}

void* new_comm_or_null(ncclResult_t result, ncclComm_t* comm) {
  bool ok = result == ncclSuccess || result == ncclInProgress;
  return ok && comm != nullptr ? static_cast<void*>(*comm) : nullptr;
}

// Init by unique id(s): the key is known before the call, so a rank stuck inside init shows.
template <class Call>
ncclResult_t record_init(Op op, KeyKind kind, uint64_t key, int rank, int nranks, const ncclConfig_t* config,
                         ncclComm_t* comm, Call&& call) {
  OutermostCall outer;
  Recorder* r = recorder_for(outer);
  if (r == nullptr) return call();
  CommInit init;
  init.key_kind = kind;
  init.key = key;
  init.rank = rank;
  init.nranks = nranks;
  init.name = comm_name(config);
  CallToken token = r->begin_init(op, &init, nullptr);
  ncclResult_t result = call();
  r->end_init(token, result, new_comm_or_null(result, comm));
  if (call_failed(result)) note_failure(r, token, result, nullptr);
  return result;
}

ncclResult_t record_end_of_comm(Op op, ncclComm_t comm, ncclResult_t (*real)(ncclComm_t)) {
  OutermostCall outer;
  Recorder* r = recorder_for(outer);
  if (r == nullptr) return real(comm);
  CallToken token = r->begin_end_of_comm(op, comm);
  ncclResult_t result = real(comm);
  r->end_end_of_comm(token, result, comm);
  // NULL: a communicator that failed to be destroyed may still be half freed.
  if (call_failed(result)) note_failure(r, token, result, nullptr);
  return result;
}

}  // namespace

HANGSHIM_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  auto real = HANGSHIM_REAL(ncclCommInitRank);
  if (real == nullptr) return missing_nccl("ncclCommInitRank");
  return record_init(Op::CommInitRank, KeyKind::UniqueId, key_from_unique_id(&commId, sizeof(commId)), rank, nranks,
                     nullptr, comm, [&] { return real(comm, nranks, commId, rank); });
}

HANGSHIM_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                                    ncclConfig_t* config) {
  auto real = HANGSHIM_REAL(ncclCommInitRankConfig);
  if (real == nullptr) return missing_nccl("ncclCommInitRankConfig");
  return record_init(Op::CommInitRank, KeyKind::UniqueId, key_from_unique_id(&commId, sizeof(commId)), rank, nranks,
                     config, comm, [&] { return real(comm, nranks, commId, rank, config); });
}

HANGSHIM_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId,
                                                      ncclUniqueId* commIds, ncclConfig_t* config) {
  auto real = HANGSHIM_REAL(ncclCommInitRankScalable);
  if (real == nullptr) return missing_nccl("ncclCommInitRankScalable");
  uint64_t key = commIds != nullptr && nId > 0 ? key_from_unique_ids(commIds, static_cast<size_t>(nId), sizeof(ncclUniqueId)) : 0;
  return record_init(Op::CommInitRankScalable, KeyKind::UniqueIds, key, myrank, nranks, config, newcomm,
                     [&] { return real(newcomm, nranks, myrank, nId, commIds, config); });
}

HANGSHIM_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
  auto real = HANGSHIM_REAL(ncclCommInitAll);
  if (real == nullptr) return missing_nccl("ncclCommInitAll");
  OutermostCall outer;
  Recorder* r = recorder_for(outer);
  if (r == nullptr) return real(comm, ndev, devlist);
  CallToken token = r->begin_init_all(ndev);
  ncclResult_t result = real(comm, ndev, devlist);
  size_t n = result == ncclSuccess && comm != nullptr && ndev > 0 ? static_cast<size_t>(ndev) : 0;
  r->end_init_all(token, result, std::span<void* const>(reinterpret_cast<void* const*>(comm), n), devlist);
  if (call_failed(result)) note_failure(r, token, result, nullptr);
  return result;
}

HANGSHIM_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                                           ncclConfig_t* config) {
  auto real = HANGSHIM_REAL(ncclCommSplit);
  if (real == nullptr) return missing_nccl("ncclCommSplit");
  OutermostCall outer;
  Recorder* r = recorder_for(outer);
  if (r == nullptr) return real(comm, color, key, newcomm, config);
  CommInit init;
  init.key_kind = KeyKind::Split;
  init.parent_key = r->take_split_index(comm, &init.split_index);
  init.key = key_from_split(init.parent_key, init.split_index, color);
  init.color = color;
  init.name = comm_name(config);
  CallToken token = r->begin_init(Op::CommSplit, color == NCCL_SPLIT_NOCOLOR ? nullptr : &init, comm);
  ncclResult_t result = real(comm, color, key, newcomm, config);
  r->end_init(token, result, new_comm_or_null(result, newcomm));
  if (call_failed(result)) note_failure(r, token, result, comm);
  return result;
}

HANGSHIM_EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
                                            ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags) {
  auto real = HANGSHIM_REAL(ncclCommShrink);
  if (real == nullptr) return missing_nccl("ncclCommShrink");
  OutermostCall outer;
  Recorder* r = recorder_for(outer);
  if (r == nullptr) return real(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
  CommInit init;
  init.key_kind = KeyKind::Shrink;
  init.parent_key = r->take_split_index(comm, &init.split_index);
  size_t excluded = excludeRanksList != nullptr && excludeRanksCount > 0 ? static_cast<size_t>(excludeRanksCount) : 0;
  init.key = key_from_shrink(init.parent_key, init.split_index, std::span<const int>(excludeRanksList, excluded));
  init.name = comm_name(config);
  CallToken token = r->begin_init(Op::CommShrink, &init, comm);
  ncclResult_t result = real(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
  r->end_init(token, result, new_comm_or_null(result, newcomm));
  if (call_failed(result)) note_failure(r, token, result, comm);
  return result;
}

HANGSHIM_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  auto real = HANGSHIM_REAL(ncclCommFinalize);
  if (real == nullptr) return missing_nccl("ncclCommFinalize");
  return record_end_of_comm(Op::CommFinalize, comm, real);
}

HANGSHIM_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  auto real = HANGSHIM_REAL(ncclCommDestroy);
  if (real == nullptr) return missing_nccl("ncclCommDestroy");
  return record_end_of_comm(Op::CommDestroy, comm, real);
}

HANGSHIM_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) {
  auto real = HANGSHIM_REAL(ncclCommAbort);
  if (real == nullptr) return missing_nccl("ncclCommAbort");
  return record_end_of_comm(Op::CommAbort, comm, real);
}

// Revoke cancels the communicator's in-flight operations (they are then cancelled, not stuck)
// and keeps it for ncclCommDestroy/ncclCommShrink.
HANGSHIM_EXPORT ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  auto real = HANGSHIM_REAL(ncclCommRevoke);
  if (real == nullptr) return missing_nccl("ncclCommRevoke");
  OutermostCall outer;
  Recorder* r = recorder_for(outer);
  if (r == nullptr) return real(comm, revokeFlags);
  CallToken token = r->begin_end_of_comm(Op::CommRevoke, comm);
  ncclResult_t result = real(comm, revokeFlags);
  r->end_end_of_comm(token, result, comm);
  return result;
}

HANGSHIM_EXPORT ncclResult_t ncclGroupStart() {
  auto real = HANGSHIM_REAL(ncclGroupStart);
  if (real == nullptr) return missing_nccl("ncclGroupStart");
  OutermostCall outer;
  ncclResult_t result = real();
  if (Recorder* r = recorder_for(outer); r != nullptr && result == ncclSuccess) r->group_start();
  return result;
}

HANGSHIM_EXPORT ncclResult_t ncclGroupEnd() {
  auto real = HANGSHIM_REAL(ncclGroupEnd);
  if (real == nullptr) return missing_nccl("ncclGroupEnd");
  OutermostCall outer;
  ncclResult_t result = real();
  if (Recorder* r = recorder_for(outer)) r->group_end(static_cast<int>(result));
  return result;
}

HANGSHIM_EXPORT ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  auto real = HANGSHIM_REAL(ncclGroupSimulateEnd);
  if (real == nullptr) return missing_nccl("ncclGroupSimulateEnd");
  OutermostCall outer;
  ncclResult_t result = real(simInfo);
  if (Recorder* r = recorder_for(outer)) r->group_simulate_end(static_cast<int>(result));
  return result;
}
