#include "sweep_mpi.h"

#include <cstdlib>
#include <iostream>

#ifdef XS_HAVE_MPI
#include <mpi.h>
#endif

namespace xpusim::cli {

namespace {

bool launched_by_mpirun() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(var)) return true;
  return false;
}

}  // namespace

#ifdef XS_HAVE_MPI

SweepRanks::SweepRanks() {
  if (!launched_by_mpirun()) return;
  MPI_Init(nullptr, nullptr);
  initialised_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

SweepRanks::~SweepRanks() {
  if (initialised_) MPI_Finalize();
}

std::vector<std::string> SweepRanks::gather(const std::string& mine) const {
  if (size_ == 1) return {mine};
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(size_)), offsets(static_cast<std::size_t>(size_));
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string all;
  if (rank_ == 0) {
    int total = 0;
    for (int r = 0; r < size_; ++r) {
      offsets[static_cast<std::size_t>(r)] = total;
      total += lengths[static_cast<std::size_t>(r)];
    }
    all.resize(static_cast<std::size_t>(total));
  }
  MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank_ != 0) return {};
  std::vector<std::string> parts;
  for (int r = 0; r < size_; ++r)
    parts.push_back(all.substr(static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)]),
                               static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)])));
  return parts;
}

#else

SweepRanks::SweepRanks() {
  if (launched_by_mpirun())
    std::cerr << "xpusim sweep: built without MPI (not found at configure time): every rank runs the whole sweep\n";
}
SweepRanks::~SweepRanks() = default;
std::vector<std::string> SweepRanks::gather(const std::string& mine) const { return {mine}; }

#endif

}  // namespace xpusim::cli
