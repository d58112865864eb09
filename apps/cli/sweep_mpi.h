#pragma once
// MPI for `xpusim sweep`, and only here: a process started by mpirun (OMPI_COMM_WORLD_SIZE or
// PMI_SIZE in its environment) initialises MPI and learns its rank; any other process is rank 0
// of 1 and never touches MPI. Built without MPI (not found at configure time), every process is
// rank 0 of 1.

#include <string>
#include <vector>

namespace xpusim::cli {

class SweepRanks {
 public:
  SweepRanks();   ///< MPI_Init when launched by mpirun
  ~SweepRanks();  ///< MPI_Finalize when initialised
  SweepRanks(const SweepRanks&) = delete;
  SweepRanks& operator=(const SweepRanks&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Every rank's `mine` on rank 0, in rank order (other ranks get an empty list). Collective:
  /// every rank calls it once.
  std::vector<std::string> gather(const std::string& mine) const;

 private:
  int rank_ = 0;
  int size_ = 1;
  bool initialised_ = false;
};

}  // namespace xpusim::cli
