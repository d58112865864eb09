#include "train_options.h"

#include <utility>
#include <vector>

#include "xpusim/config/document.h"
#include "xpusim/core/suggest.h"
#include "xpusim/engine/sizing.h"
#include "xpusim/mapping/schedule.h"
#include "xpusim/workload/hf_config.h"

namespace xpusim::cli {

void apply_scenario_file(TrainOptions& o) {
  if (o.scenario.empty()) return;
  config::Json doc;
  try {
    doc = config::load_document(o.scenario);
  } catch (const core::InputError& e) {
    // A file that cannot be read is reported against the flag that named it.
    std::vector<core::Diagnostic> ds = e.diagnostics();
    for (auto& x : ds)
      if (x.file.empty() && x.path.empty()) x.path = "--scenario";
    throw core::InputError(ds);
  }
  core::Diagnostics d;
  if (!doc.is_object()) {
    d.error("", "a scenario must be a mapping of keys", doc.is_null() ? "an empty document" : config::brief(doc),
            "keys such as system, model, chips, plan, executor, description");
    d.set_file(o.scenario);
    d.throw_if_any();
  }
  config::FieldReader r(doc, "", d);
  if (o.system.empty()) o.system = r.str_or("system", "");
  else r.ignore("system");
  if (o.model.empty()) o.model = r.str_or("model", "");
  else r.ignore("model");
  if (o.chips == 0) o.chips = r.integer_or("chips", 0);
  else r.ignore("chips");
  if (const config::Json* plan = r.object("plan", false)) {
    config::FieldReader pr(*plan, "plan", d);
    auto i = [&](const char* k, int& v) {
      long long x = pr.integer_or(k, 0);
      if (v == 0) v = static_cast<int>(x);
    };
    auto l = [&](const char* k, long long& v) {
      long long x = pr.integer_or(k, 0);
      if (v == 0) v = x;
    };
    auto s = [&](const char* k, std::string& v) {
      std::string x = pr.str_or(k, "");
      if (v.empty()) v = x;
    };
    i("tp", o.tp); i("pp", o.pp); i("dp", o.dp); i("cp", o.cp); i("ep", o.ep); i("vpp", o.vpp);
    l("micro_batch", o.micro_batch); l("global_batch", o.global_batch); l("seq_len", o.seq_len);
    s("precision", o.precision); s("zero", o.zero); s("recompute", o.recompute);
    s("schedule", o.schedule);
    pr.finish();
  }
  std::string ex = r.str_or("executor", "");
  if (!ex.empty() && o.executor == "event") o.executor = ex;
  if (!ex.empty() && ex != "event" && ex != "analytical")
    d.error("executor", "unknown executor", ex, "event or analytical", core::did_you_mean(ex, {"event", "analytical"}));
  std::string fw = r.str_or("framework", "");
  if (!fw.empty() && o.framework == "megatron") o.framework = fw;
  r.ignore("description");
  r.finish();
  d.set_file(o.scenario);
  d.throw_if_any();
}

BuiltTrain build_train(const TrainOptions& o, const hw::Catalog& cat, const std::string& models_dir,
                       const calib::Params& params) {
  core::Diagnostics d;
  if (o.system.empty()) d.error("--system", "missing", "", "a system id, e.g. trn3-ultraserver-gen2");
  if (o.model.empty()) d.error("--model", "missing", "", "a model id or config.json path, e.g. llama3.1-405b");
  if (o.chips < 1) d.error("--chips", "missing or not positive", std::to_string(o.chips), "a chip count ≥ 1");
  for (const auto& [flag, v] : {std::pair<const char*, long long>{"--tp", o.tp}, {"--pp", o.pp}, {"--dp", o.dp},
                                {"--cp", o.cp}, {"--ep", o.ep}, {"--vpp", o.vpp}, {"--micro-batch", o.micro_batch},
                                {"--global-batch", o.global_batch}, {"--seq-len", o.seq_len}})
    if (v < 0) d.error(flag, "must be positive", std::to_string(v), "an integer ≥ 1 (or leave it out for the default)");
  d.throw_if_any();
  const hw::SystemSpec& sys = cat.system(o.system, "--system");
  BuiltTrain out;
  engine::TrainScenario& s = out.scenario;
  try {
    s.framework = engine::framework_params(o.framework, params);
    s.calibration = &params;
  } catch (const core::InputError& e) {
    std::vector<core::Diagnostic> ds = e.diagnostics();
    for (auto& x : ds)
      if (x.file.empty()) x.path = "--framework";
    throw core::InputError(ds);
  }
  s.system = &sys;
  try {
    s.model = workload::load_model(o.model, models_dir);
  } catch (const core::InputError& e) {
    // An unknown id or unreadable path is reported against the flag; errors inside a config.json
    // keep their file and field.
    std::vector<core::Diagnostic> ds = e.diagnostics();
    for (auto& x : ds)
      if (x.file.empty() && x.path.empty()) x.path = "--model";
    throw core::InputError(ds);
  }
  const auto& md = s.model;
  auto& p = s.plan;

  if (o.chips > sys.max_chips.value)
    d.error("--chips", "more chips than the largest " + sys.id + " cluster", std::to_string(o.chips),
            "at most " + std::to_string(sys.max_chips.value));
  if (!o.precision.empty()) {
    auto dt = core::parse_dtype(o.precision);
    if (!dt) d.error("--precision", "unknown precision", o.precision, "one of: " + core::join(core::all_dtype_names()),
                     core::did_you_mean(o.precision, core::all_dtype_names()));
    else p.precision = *dt;
  } else {
    p.precision = core::Dtype::Bf16;
  }
  if (!o.zero.empty()) {
    static const std::vector<std::string> zs = {"none", "1", "2", "3", "fsdp"};
    if (o.zero == "none") p.zero = mapping::Zero::None;
    else if (o.zero == "1") p.zero = mapping::Zero::Zero1;
    else if (o.zero == "2") p.zero = mapping::Zero::Zero2;
    else if (o.zero == "3") p.zero = mapping::Zero::Zero3;
    else if (o.zero == "fsdp") p.zero = mapping::Zero::Fsdp;
    else d.error("--zero", "unknown ZeRO stage", o.zero, "one of: none, 1, 2, 3, fsdp", core::did_you_mean(o.zero, zs));
  }
  std::vector<mapping::Recompute> rcs = {mapping::Recompute::None, mapping::Recompute::Selective,
                                         mapping::Recompute::Full};
  if (!o.recompute.empty()) {
    static const std::vector<std::string> rs = {"none", "selective", "full"};
    if (o.recompute == "none") rcs = {mapping::Recompute::None};
    else if (o.recompute == "selective") rcs = {mapping::Recompute::Selective};
    else if (o.recompute == "full") rcs = {mapping::Recompute::Full};
    else d.error("--recompute", "unknown recompute mode", o.recompute, "one of: none, selective, full",
                 core::did_you_mean(o.recompute, rs));
  }
  if (o.tp > 0 && md.heads % o.tp != 0)
    d.error("--tp", "tensor-parallel degree does not divide the attention heads", std::to_string(o.tp),
            "a divisor of " + std::to_string(md.heads) + " heads");
  if (o.pp > md.layers)
    d.error("--pp", "more pipeline stages than layers", std::to_string(o.pp),
            "at most " + std::to_string(md.layers));
  if (o.ep > 1 && (!md.is_moe() || md.moe.num_experts % o.ep != 0))
    d.error("--ep", md.is_moe() ? "expert-parallel degree does not divide the experts"
                                : "expert parallelism needs a MoE model",
            std::to_string(o.ep), md.is_moe() ? "a divisor of " + std::to_string(md.moe.num_experts) : "1");
  const long long fixed = static_cast<long long>(o.tp > 0 ? o.tp : 1) * (o.pp > 0 ? o.pp : 1) *
                          (o.cp > 0 ? o.cp : 1) * (o.dp > 0 ? o.dp : 1);
  if (o.chips > 0 && o.chips % fixed != 0)
    d.error("--chips", "the parallel degrees given do not divide the chips", std::to_string(o.chips),
            "a multiple of tp·pp·cp·dp = " + std::to_string(fixed));
  if (o.tp > 0 && o.pp > 0 && o.dp > 0 && fixed != o.chips)
    d.error("--dp", "tp·pp·cp·dp must equal the chips", std::to_string(fixed), std::to_string(o.chips));
  d.throw_if_any();

  p.seq_len = o.seq_len > 0 ? o.seq_len : std::min<long long>(md.max_position > 0 ? md.max_position : 4096, 8192);
  p.micro_batch = o.micro_batch > 0 ? o.micro_batch : 1;
  p.cp = o.cp > 0 ? o.cp : 1;
  p.vpp = o.vpp > 0 ? o.vpp : 1;
  p.ep = o.ep > 0 ? o.ep : 1;
  if (!o.schedule.empty()) {
    mapping::schedules().get(o.schedule, "--schedule");  // unknown names list the valid ones
    p.schedule = o.schedule;
  }
  // Default global batch: about 4M tokens (the order of Llama 3 pre-training batches), at least
  // one micro-batch per data-parallel rank.
  const long long batch_tokens = 4LL * 1024 * 1024;
  auto set_batch = [&]() {
    if (o.global_batch > 0) {
      p.global_batch = o.global_batch;
      return;
    }
    const long long unit = static_cast<long long>(p.dp) * p.micro_batch;
    const long long want = std::max(unit, batch_tokens / p.seq_len);
    p.global_batch = (want + unit - 1) / unit * unit;
  };

  if (o.tp > 0 && o.pp > 0) {
    p.tp = o.tp;
    p.pp = o.pp;
    p.dp = o.dp > 0 ? o.dp : static_cast<int>(o.chips / (static_cast<long long>(p.tp) * p.pp * p.cp));
    if (o.global_batch > 0 && o.global_batch % (static_cast<long long>(p.dp) * p.micro_batch) != 0)
      core::fail("--global-batch", "the global batch is not a whole number of micro-batches per data-parallel rank",
                 std::to_string(o.global_batch),
                 "a multiple of dp·micro_batch = " + std::to_string(p.dp) + "·" + std::to_string(p.micro_batch) +
                     " = " + std::to_string(static_cast<long long>(p.dp) * p.micro_batch));
    set_batch();
    if (o.zero.empty()) p.zero = mapping::Zero::Zero1;
    // The least recompute that fits, unless the user chose.
    p.recompute = engine::least_recompute_that_fits(s, rcs);
    return out;
  }
  // Search the rest of the plan.
  engine::SearchSpace space;
  if (o.tp > 0) space.tp = {o.tp};
  if (o.pp > 0) space.pp = {o.pp};
  if (o.cp > 0) space.cp = {o.cp};
  space.recompute = rcs;
  if (!o.zero.empty()) space.zero = {p.zero};
  if (o.global_batch > 0) p.global_batch = o.global_batch;
  else space.batch_tokens = batch_tokens;
  auto best = engine::search_plan(s, o.chips, space);
  out.searched = true;
  out.evaluated = best.evaluated;
  if (!best.found) {
    core::fail("--chips", "no plan of the search space fits " + md.id + " on " +
                              std::to_string(o.chips) + " × " + sys.chip.name,
               std::to_string(o.chips), "more chips, or a plan given with --tp/--pp/--recompute");
  }
  out.scenario = best.best;
  if (o.dp > 0 && best.best.plan.dp != o.dp)
    core::fail("--dp", "no plan with this data-parallel degree was found", std::to_string(o.dp));
  return out;
}

}  // namespace xpusim::cli
