#include "xpusim/workload/model.h"

#include <algorithm>
#include <string>
#include <vector>

namespace xpusim::workload {

LayerBlock ModelSpec::layer_block(int i) const {
  if (i < 0 || i >= static_cast<int>(layer_blocks.size())) return LayerBlock::AttentionMlp;
  return layer_blocks[static_cast<size_t>(i)];
}

bool ModelSpec::layer_has_attention(int i) const {
  const LayerBlock b = layer_block(i);
  return b == LayerBlock::AttentionMlp || b == LayerBlock::Attention;
}

bool ModelSpec::layer_has_mlp(int i) const {
  const LayerBlock b = layer_block(i);
  return b == LayerBlock::AttentionMlp || b == LayerBlock::Mlp || b == LayerBlock::LinearAttentionMlp ||
         b == LayerBlock::MambaMlp;
}

int ModelSpec::layer_tp_regions(int i) const {
  const LayerBlock b = layer_block(i);
  // A linear replacement is row-parallel like the part it replaces (workload::layer_ops).
  const int replaced = (layer_linear_mixer(i) ? 1 : 0) + (layer_linear_mlp(i) ? 1 : 0);
  if (b == LayerBlock::LinearAttentionMlp || b == LayerBlock::MambaMlp) return 2;
  if (b == LayerBlock::AttentionMlp) return parallel_attn ? 1 : 2;
  if (b == LayerBlock::Linear) return replaced;
  return 1 + replaced;
}

LayerShape ModelSpec::layer_shape(int i) const {
  if (i < 0 || i >= static_cast<int>(layer_shapes.size())) return LayerShape{};
  return layer_shapes[static_cast<size_t>(i)];
}

int ModelSpec::layer_kv_heads(int i) const {
  if (layer_shapes.empty()) return layer_has_attention(i) ? kv_heads : 0;
  return layer_shape(i).kv_heads;
}

long long ModelSpec::layer_ffn(int i) const { return layer_shapes.empty() ? ffn : layer_shape(i).ffn; }

bool ModelSpec::layer_linear_mixer(int i) const { return layer_shape(i).linear_mixer; }

bool ModelSpec::layer_linear_mlp(int i) const { return layer_shape(i).linear_mlp; }

int ModelSpec::layer_norms(int i) const {
  if (layer_shapes.empty()) return norms_per_layer;
  return (layer_has_mixer_part(i) ? 1 : 0) + (layer_has_mlp_part(i) ? 1 : 0);
}

bool ModelSpec::has_block(LayerBlock b) const {
  return std::find(layer_blocks.begin(), layer_blocks.end(), b) != layer_blocks.end();
}

bool ModelSpec::has_recurrent() const {
  for (LayerBlock b : layer_blocks)
    if (b == LayerBlock::Mamba || b == LayerBlock::LinearAttentionMlp || b == LayerBlock::MambaMlp) return true;
  return false;
}

int ModelSpec::attention_layers() const {
  if (layer_blocks.empty()) return layers;
  int n = 0;
  for (int i = 0; i < layers; ++i) n += layer_has_attention(i) ? 1 : 0;
  return n;
}

bool ModelSpec::layer_is_moe(int i) const {
  if (moe.num_experts == 0 || !layer_has_mlp(i)) return false;
  if (!moe.layer_moe.empty()) {
    return i >= 0 && i < static_cast<int>(moe.layer_moe.size()) && moe.layer_moe[i];
  }
  if (i < moe.first_dense_layers) return false;
  const int k = moe.layer_freq > 0 ? moe.layer_freq : 1;
  return (i - moe.first_dense_layers) % k == 0;
}

bool ModelSpec::layer_sliding(int i) const {
  if (sliding_window <= 0 || layer_is_sliding.empty()) return false;
  return i >= 0 && i < static_cast<int>(layer_is_sliding.size()) && layer_is_sliding[i];
}

long long ModelSpec::layer_context(int i, long long context) const {
  if (!layer_has_attention(i)) return 0;
  return layer_sliding(i) ? std::min(context, sliding_window) : context;
}

long long ModelSpec::layer_key_cap(int i) const {
  const long long window = layer_window(i);
  if (!dsa.enabled() || !layer_has_attention(i)) return window;
  return window > 0 ? std::min(window, dsa.topk) : dsa.topk;
}

long long ModelSpec::layer_attended_keys(int i, long long context) const {
  const long long kept = layer_context(i, context), cap = layer_key_cap(i);
  return cap > 0 ? std::min(kept, cap) : kept;
}

long long ModelSpec::qk_head_dim() const {
  return attention == AttnKind::Mla ? mla.qk_nope_head_dim + mla.qk_rope_head_dim : head_dim;
}

long long ModelSpec::v_head_dim() const {
  return attention == AttnKind::Mla ? mla.v_head_dim : head_dim;
}

ModelSpec mtp_draft_model(const ModelSpec& m) {
  ModelSpec d = m;
  const int last = m.layers - 1;
  d.id = m.id + " MTP module";
  d.layers = 1;
  d.mtp_modules = 0;
  d.is_mtp_module = true;
  if (!m.layer_blocks.empty()) d.layer_blocks = {m.layer_block(last)};
  if (m.is_moe()) {
    d.moe.layer_moe = {m.layer_is_moe(last)};
    d.moe.first_dense_layers = 0;
  }
  if (!m.layer_is_sliding.empty()) d.layer_is_sliding = {m.layer_sliding(last)};
  if (!m.layer_shapes.empty()) d.layer_shapes = {m.layer_shape(last)};
  return d;
}

int kv_heads_mismatching_tp(const ModelSpec& m, long long tp) {
  if (m.attention == AttnKind::Mla || tp < 1) return 0;
  for (int i = 0; i < m.layers; ++i) {
    const int kv = m.layer_kv_heads(i);
    if (kv > 0 && kv % tp != 0 && tp % kv != 0) return kv;
  }
  return 0;
}

bool tp_divides(const ModelSpec& m, long long tp) {
  if (tp < 1) return false;
  if (m.attention_layers() > 0 && m.heads % tp != 0) return false;
  if (m.has_block(LayerBlock::Mamba) || m.has_block(LayerBlock::MambaMlp)) {
    const MambaSpec& s = m.mamba;
    if (s.version == 1 ? s.inner() % tp != 0 : (s.heads % tp != 0 || s.groups % tp != 0)) return false;
  }
  if (m.has_block(LayerBlock::LinearAttentionMlp) && (m.linear.key_heads % tp != 0 || m.linear.value_heads % tp != 0))
    return false;
  return true;
}

std::string tp_divisors_text(const ModelSpec& m) {
  std::vector<std::string> parts;
  if (m.attention_layers() > 0) parts.push_back(std::to_string(m.heads) + " attention heads");
  if (m.has_block(LayerBlock::Mamba) || m.has_block(LayerBlock::MambaMlp)) {
    const MambaSpec& s = m.mamba;
    parts.push_back(s.version == 1 ? std::to_string(s.inner()) + " Mamba channels"
                                   : std::to_string(s.heads) + " Mamba heads and " + std::to_string(s.groups) + " groups");
  }
  if (m.has_block(LayerBlock::LinearAttentionMlp))
    parts.push_back(std::to_string(m.linear.key_heads) + " linear-attention key heads and " +
                    std::to_string(m.linear.value_heads) + " value heads");
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return out;
}

}  // namespace xpusim::workload
