#pragma once
// Per-stage, per-micro-batch costs of a training plan, shared by the analytical and the
// event-driven executors: compute of forward/backward/recompute, and the communication each
// phase puts on the critical path (TP/SP collectives, CP ring exchange, EP all-to-all, FSDP
// gathers), plus the per-step DP and optimizer work. Private to engine/.

#include <string>
#include <vector>

#include "xpusim/compute/chip_model.h"
#include "xpusim/cost/activity.h"
#include "xpusim/engine/train.h"
#include "xpusim/net/collective.h"
#include "xpusim/net/topology.h"

namespace xpusim::engine::detail {

struct StageCost {
  int first_layer = 0, layers = 0;
  bool has_embedding = false, has_head = false;
  // Per micro-batch, whole stage (divide by vpp for one virtual chunk).
  core::Seconds fwd_compute, bwd_compute, recompute;
  core::Seconds tp_exposed, cp_exposed, ep_exposed, fsdp_exposed;
  core::Seconds tp_bwd_busy;  ///< the backward's TP collectives whole (exposed or hidden by async TP)
  core::Seconds fwd() const;  ///< forward incl. exposed comm share of the forward
  core::Seconds bwd() const;  ///< backward incl. recompute and exposed comm share
  core::Seconds fwd_comm, bwd_comm;  ///< exposed comm split by pass
  core::Seconds ep_fwd, ep_bwd;      ///< exposed expert all-to-all by pass (framework share)
  core::Seconds a2a_fwd, a2a_bwd;    ///< the whole expert all-to-all by pass
  core::Seconds weight_grad;         ///< weight-gradient GEMMs of the backward (zero-bubble W)
  double params = 0;          ///< parameters held by one chip of this stage (dense + local experts)
  double dense_params = 0;
  double expert_params = 0;
  double trained_dense = 0;   ///< of dense_params, the weights that train (LoRA: the adapters)
  double trained_expert = 0;  ///< of expert_params, the weights that train (0 with LoRA)
  cost::Activity activity;    ///< per micro-batch (compute + comm bytes)
};

struct StepCosts {
  std::vector<StageCost> stages;
  core::Seconds p2p;               ///< one activation send between adjacent stages
  core::Seconds dp_grad_reduce;    ///< per-step gradient reduction of the slowest stage
  core::Seconds dp_param_gather;   ///< ZeRO-1/2 distributed-optimizer parameter all-gather
  core::Seconds optimizer;         ///< optimizer update of the slowest stage
  /// Slow-down of gradient buckets that overlap the backward, from sharing links with the
  /// backward's TP collectives (flow-level max-min sharing, net::concurrent_costs); 1 = none.
  /// Used by the event-driven executor only (the analytical one ignores contention).
  double dp_contention = 1.0;
  cost::Activity step_activity;    ///< per-step extras (DP comm, optimizer HBM)
  long long micro_batches = 1;
  double model_flops_per_step = 0;  ///< whole model, all chips
  double hw_flops_per_step = 0;
};

/// Builds the costs; the scenario must already be checked feasible.
StepCosts step_costs(const TrainScenario& s, const net::Topology& topo,
                     const compute::ChipModel& chip);

/// One layer as the training trace details it: its operators (forward and backward time, FLOP
/// and HBM bytes on one chip, for one micro-batch) and the exposed communication of each pass by
/// kind, as step_costs() prices them.
struct LayerDetail {
  struct Op {
    std::string name;
    core::Flops flops_fwd, flops_bwd;
    core::Bytes hbm_bytes_fwd, hbm_bytes_bwd;
    core::Seconds fwd, bwd;
  };
  std::vector<Op> ops;
  core::Seconds tp_fwd, tp_bwd, cp_fwd, cp_bwd, ep_fwd, ep_bwd, fsdp_fwd, fsdp_bwd;
};
LayerDetail layer_detail(const TrainScenario& s, const net::Topology& topo, const compute::ChipModel& chip,
                         int layer);

}  // namespace xpusim::engine::detail
