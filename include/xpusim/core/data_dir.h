#pragma once
// Where the shipped data (catalog, models, calibration, validation) is read from, in this order
// (docs/install.md):
//   1. the --data-dir flag (set_data_dir_flag);
//   2. $XPUSIM_DATA_DIR;
//   3. relative to the file that holds this code (the CLI binary or the Python module):
//      ../share/xpusim beside an installed bin/, ../../../share/xpusim beside an installed
//      lib/python3/dist-packages/, and the source tree's data/ from build/ or build/python/;
//   4. the source tree's data/ compiled in at configure time.
// A directory named by 1 or 2 that holds no catalog/ is bad input (InputError naming the flag or
// the variable); 3 is used only where it holds one.

#include <string>

namespace xpusim::core {

struct DataDir {
  std::string path;    ///< the directory in use
  std::string origin;  ///< "--data-dir", "XPUSIM_DATA_DIR", "beside the binary", "compiled in"
};

/// The directory the --data-dir flag names for this process (empty: none). The CLI sets it
/// once, before any command reads data.
void set_data_dir_flag(std::string path);

/// The data directory in use and where its choice came from; `compiled_in` is step 4.
DataDir find_data_dir(const std::string& compiled_in);

/// The directory of the executable or shared object that holds this code (empty if unknown).
std::string this_object_dir();

}  // namespace xpusim::core
