#include "profiler/mpi/mpi_process_group.h"

#include <algorithm>
#include <map>

#include "core/leak_check_pause.h"
#include "core/mpi/mpi_check.h"

namespace parplan::profiler {

MpiProcessGroup::MpiProcessGroup() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    const LeakCheckPause pause;  // Open MPI's start-up state lives until exit
    PARPLAN_MPI_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided));
    owns_mpi_ = true;
  }
  PARPLAN_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm_));
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  PARPLAN_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  PARPLAN_MPI_CHECK(MPI_Comm_size(comm_, &size_));
  // Host of each rank: the lowest world rank sharing memory with it, renumbered 0, 1, ...
  MPI_Comm shared = MPI_COMM_NULL;
  PARPLAN_MPI_CHECK(
      MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &shared));
  int leader = rank_;
  PARPLAN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, shared));
  MPI_Comm_free(&shared);
  std::vector<int> leaders(static_cast<std::size_t>(size_));
  PARPLAN_MPI_CHECK(MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, comm_));
  std::map<int, int> index;
  for (int l : leaders) index.emplace(l, 0);
  int next = 0;
  for (auto& [l, i] : index) i = next++;
  for (int l : leaders) hosts_.push_back(index[l]);
}

MpiProcessGroup::~MpiProcessGroup() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owns_mpi_ && !finalized) {
    const LeakCheckPause pause;
    MPI_Finalize();
  }
}

void MpiProcessGroup::barrier() { PARPLAN_MPI_CHECK(MPI_Barrier(comm_)); }

double MpiProcessGroup::max_over_ranks(double value) {
  double out = 0;
  PARPLAN_MPI_CHECK(MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, comm_));
  return out;
}

double MpiProcessGroup::sum_over_ranks(double value) {
  double out = 0;
  PARPLAN_MPI_CHECK(MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_SUM, comm_));
  return out;
}

void MpiProcessGroup::broadcast(void* data, std::size_t bytes, int root) {
  PARPLAN_MPI_CHECK(MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root, comm_));
}

void MpiProcessGroup::abort(int exit_code) {
  if (size_ > 1) MPI_Abort(MPI_COMM_WORLD, exit_code);
}

std::string MpiProcessGroup::mpi_version() const {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<std::size_t>(length));
  // Open MPI appends build details after a comma; the first part names the version.
  if (auto comma = version.find(','); comma != std::string::npos) version.resize(comma);
  while (!version.empty() && (version.back() == '\n' || version.back() == ' ')) version.pop_back();
  return version;
}

std::unique_ptr<ProcessGroup> make_mpi_process_group() {
  return std::make_unique<MpiProcessGroup>();
}

}  // namespace parplan::profiler
