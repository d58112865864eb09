// The Python module `xpusim` (pybind11): each function takes the command's keys as keyword
// arguments (the scenario file's keys: ints, floats, strings, lists, nested dicts) and returns
// the dict `xpusim CMD --json` prints for the same inputs. It calls the api layer, as the CLI
// does; bad input raises xpusim.InputError (a ValueError) with the diagnostics' text.
//
//   import xpusim
//   r = xpusim.train(system="h100-sxm-dgx", model="llama3.1-8b", chips=8, tp=8, pp=1)
//   r["step_time_s"]

#include <nlohmann/json.hpp>
#include <pybind11/pybind11.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "xpusim/api/api.h"
#include "xpusim/api/sweep.h"
#include "xpusim/core/diagnostics.h"

namespace py = pybind11;
using xpusim::api::Json;

namespace {

/// Nesting a keyword value may have (as a scenario file: docs/errors.md, "Limits"); a
/// self-referencing dict or list reaches it at once.
constexpr int kMaxDepth = 64;

[[noreturn]] void bad_value(const std::string& path, const std::string& message, const std::string& value,
                            const std::string& expected) {
  xpusim::core::fail(path.empty() ? "argument" : path, message, value, expected);
}

// A Python int as JSON: int64, or uint64 above it; beyond both an InputError naming the key.
Json int_to_json(const py::handle& v, const std::string& path) {
  int overflow = 0;
  const long long x = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow == 0 && !(x == -1 && PyErr_Occurred())) return x;
  PyErr_Clear();
  if (overflow > 0) {
    const unsigned long long u = PyLong_AsUnsignedLongLong(v.ptr());
    if (!PyErr_Occurred()) return u;
    PyErr_Clear();
  }
  bad_value(path, "integer beyond 64 bits", py::str(v).cast<std::string>(), "an integer from -2^63 to 2^64 - 1");
}

// A keyword value as JSON; `path` names it in errors (plan.tp, grid[2]). Iterative depth is
// bounded, so a cycle or a list nested 10^5 deep is an InputError, not a crashed interpreter.
Json to_json(const py::handle& v, const std::string& path, int depth) {
  if (depth > kMaxDepth)
    bad_value(path, "nesting deeper than " + std::to_string(kMaxDepth) + " levels (or a dict or list that contains itself)",
              "", "at most " + std::to_string(kMaxDepth) + " nested dicts and lists, no cycles");
  if (v.is_none()) return nullptr;
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>();
  if (py::isinstance<py::int_>(v)) return int_to_json(v, path);
  if (py::isinstance<py::float_>(v)) return v.cast<double>();
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  if (py::isinstance<py::dict>(v)) {
    Json out = Json::object();
    for (const auto& [key, value] : v.cast<py::dict>()) {
      const std::string name = py::str(key).cast<std::string>();
      out[name] = to_json(value, path.empty() ? name : path + "." + name, depth + 1);
    }
    return out;
  }
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    Json out = Json::array();
    std::size_t i = 0;
    for (const auto& item : v) out.push_back(to_json(item, path + "[" + std::to_string(i++) + "]", depth + 1));
    return out;
  }
  // numpy scalars and arrays: through their Python values
  if (py::hasattr(v, "tolist")) return to_json(v.attr("tolist")(), path, depth + 1);
  throw py::type_error("xpusim: cannot pass a " + py::str(v.get_type()).cast<std::string>() +
                       (path.empty() ? std::string() : " as " + path) + " (expected int, float, str, bool, list or dict)");
}

Json to_json(const py::handle& v) { return to_json(v, "", 0); }

py::object to_python(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null: return py::none();
    case Json::value_t::boolean: return py::bool_(j.get<bool>());
    case Json::value_t::number_integer: return py::int_(j.get<long long>());
    case Json::value_t::number_unsigned: return py::int_(j.get<unsigned long long>());
    case Json::value_t::number_float: return py::float_(j.get<double>());
    case Json::value_t::string: return py::str(j.get<std::string>());
    case Json::value_t::array: {
      py::list out;
      for (const auto& item : j) out.append(to_python(item));
      return out;
    }
    case Json::value_t::object: {
      py::dict out;
      for (const auto& [key, value] : j.items()) out[py::str(key)] = to_python(value);
      return out;
    }
    default: return py::none();
  }
}

/// What a session is loaded from besides the shipped data: --calibration and --catalog-dir.
struct SessionKey {
  std::string calibration;
  std::vector<std::string> catalog_dirs;
  bool operator<(const SessionKey& o) const {
    return std::tie(calibration, catalog_dirs) < std::tie(o.calibration, o.catalog_dirs);
  }
};

// One session (catalog, calibration, bands) per calibration file and catalog directories, loaded
// on first use (called without the GIL: threads may race here).
const xpusim::api::Session& session(const SessionKey& key) {
  static std::mutex lock;
  static std::map<SessionKey, std::unique_ptr<xpusim::api::Session>> sessions;
  const std::lock_guard<std::mutex> held(lock);
  auto& s = sessions[key];
  if (!s) s = std::make_unique<xpusim::api::Session>(xpusim::api::default_data_dir(), key.calibration, key.catalog_dirs);
  return *s;
}

/// `catalog_dir`: one path or a list of paths (as --catalog-dir, repeatable).
std::vector<std::string> catalog_dirs_of(const Json& value) {
  std::vector<std::string> dirs;
  for (const auto& d : value.is_array() ? value : Json::array({value})) {
    if (!d.is_string()) throw py::type_error("xpusim: catalog_dir must be a directory path (str) or a list of them");
    dirs.push_back(d.get<std::string>());
  }
  return dirs;
}

// kwargs → keys; `calibration` (an override file, as --calibration) and `catalog_dir` (as
// --catalog-dir) are not scenario keys.
std::pair<Json, SessionKey> split_kwargs(const py::kwargs& kw) {
  Json keys = to_json(kw);
  SessionKey key;
  if (keys.contains("calibration")) {
    if (!keys["calibration"].is_string()) throw py::type_error("xpusim: calibration must be a file path (str)");
    key.calibration = keys["calibration"].get<std::string>();
    keys.erase("calibration");
  }
  if (keys.contains("catalog_dir")) {
    key.catalog_dirs = catalog_dirs_of(keys["catalog_dir"]);
    keys.erase("catalog_dir");
  }
  return {keys, key};
}

using Command = Json (*)(const Json&, const xpusim::api::Session&);

py::object call(Command command, const py::kwargs& kw) {
  const auto [keys, key] = split_kwargs(kw);
  Json doc;
  {
    py::gil_scoped_release unlocked;
    doc = command(keys, session(key));
  }
  return to_python(doc);
}

py::object sweep(const py::object& grid, bool as_frame, const std::string& calibration, const py::object& catalog_dir) {
  const Json g = to_json(grid);
  const SessionKey key{calibration, catalog_dir.is_none() ? std::vector<std::string>{} : catalog_dirs_of(to_json(catalog_dir))};
  Json points;
  std::string csv;
  {
    py::gil_scoped_release unlocked;
    const auto& s = session(key);
    const xpusim::api::SweepRun run = xpusim::api::run_sweep(g, s);
    if (as_frame) csv = xpusim::api::sweep_csv(run.grid, run.points);
    else points = xpusim::api::sweep_document(run.grid, run.points, s)["points"];
  }
  if (!as_frame) return to_python(points);
  const py::object text = py::module_::import("io").attr("StringIO")(csv);
  return py::module_::import("pandas").attr("read_csv")(text);
}

}  // namespace

PYBIND11_MODULE(xpusim, m) {
  m.doc() = "xpusim: simulator of AI accelerator systems. Each function takes the command's keys and returns "
            "the dict `xpusim CMD --json` prints (docs/python.md).";
  py::register_exception<xpusim::core::InputError>(m, "InputError", PyExc_ValueError);
  m.attr("__version__") = xpusim::report::xpusim_version();
  m.def("train", [](const py::kwargs& kw) { return call(xpusim::api::train, kw); },
        "One training step: scenario keys (system, model, chips, tp, pp, precision, plan={...}, ...) -> train --json");
  m.def("serve", [](const py::kwargs& kw) {
          return call([](const xpusim::api::Json& k, const xpusim::api::Session& s) { return xpusim::api::serve(k, s); }, kw);
        },
        "One serving run: scenario keys (system, model, chips, rate, in_len, ...) -> serve --json");
  m.def("collective", [](const py::kwargs& kw) { return call(xpusim::api::collective, kw); },
        "system, chips, op, bytes[, algorithm] -> collective --json");
  m.def("validate", [](const py::kwargs& kw) { return call(xpusim::api::validate, kw); },
        "[file][, explain][, rows] -> validate --json [--explain] [--rows GLOBS] (default: the shipped public set)");
  m.def("catalog", [](const py::kwargs& kw) { return call(xpusim::api::catalog, kw); },
        "no keys: catalog list --json; id=...: catalog show ID --json");
  m.def("model", [](const py::kwargs& kw) { return call(xpusim::api::model, kw); },
        "no keys: model list --json; model=...[, seq, context]: model show --json");
  m.def("data_dir", [] {
          const xpusim::core::DataDir d = xpusim::api::data_dir_in_use();
          py::dict out;
          out["path"] = d.path;
          out["origin"] = d.origin;
          return out;
        },
        "The data directory every call reads ($XPUSIM_DATA_DIR, else beside this module, else the source tree's "
        "data/) and where that choice came from: {'path', 'origin'}");
  m.def("sweep", &sweep, py::arg("grid"), py::arg("as_frame") = false, py::arg("calibration") = "",
        py::arg("catalog_dir") = py::none(),
        "A grid (dict or path to YAML/JSON) -> the list of points (index, values, status, reason, result), or with "
        "as_frame=True a pandas DataFrame with the columns of `xpusim sweep`'s CSV");
}
