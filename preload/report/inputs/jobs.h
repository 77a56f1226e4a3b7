// Which job each ledger belongs to. A directory holds the ledgers of every job run with it
// (the default one keeps them after the job ends): the report speaks about one job at a time.
//
// A ledger's job is named by the first of: its SLURM job (and step), the `hangshim run` that
// started it (HANGSHIM_LAUNCHER), torchrun's run id (unless "none"), its parent process (host,
// pid and start time: the launcher that forked the ranks), itself. Ledgers that share a
// communicator (the hash of one ncclUniqueId: made for one job only) are one job whatever their
// names say: a job's nodes each have their own launcher.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ledger/reader.h"
#include "report/inputs/inputs.h"

namespace hangshim::report {

// What the user asked for: `--job KEY` (a key as listed, or a SLURM job id) and/or `--pid PID`
// (a process of the job on this host, or its launcher). Empty: the newest job with a live process.
struct JobSelection {
  std::string job;
  std::vector<int64_t> pids;
};

// The job key of one ledger, before communicators merge jobs.
std::string job_key(const ledger::LedgerHeader& h);
std::string job_name(const std::string& key);

// Splits `ranks` into jobs; keeps the selected job's views in `ranks` and describes it in
// `chosen`, the others in `others` (newest first). False (with `error` set) when a selection
// matches no job; `ranks` is then emptied.
bool select_job(std::vector<RankView>& ranks, const JobSelection& selection, const std::string& here,
                JobSummary& chosen, std::vector<JobSummary>& others, std::string& error);

}  // namespace hangshim::report
