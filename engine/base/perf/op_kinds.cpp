// The kinds of a step's work by the names of what launched it (see op_kinds.h).
#include "engine/base/perf/op_kinds.h"

#include <regex>

namespace tokamak {
namespace {

struct Rule {
  const char* kind;
  std::regex pattern;
};

// Checked in this order for each name; the first rule a name matches decides. The head comes first (its GEMM
// kernels are still matrix products: the kernel's own name is the innermost link of its chain), then what a name
// says outright. Autograd's matmul nodes are left out on purpose: the bias-gradient sums they launch are
// memory-bound reductions, not products ("other", named in the per-kernel table).
const std::vector<Rule>& rules() {
  static const auto icase = std::regex::icase | std::regex::optimize;
  static const std::vector<Rule> r = {
      {"matmul", std::regex("gemm|nvjet|cutlass|xmma|^sm[0-9]+_|^aten::(mm|addmm|bmm|baddbmm|matmul|linear|addmv|"
                            "_addmm_activation|_scaled_mm)$",
                            icase)},
      {"head", std::regex("softmax_ce|classifier|log_softmax|nll_loss|cross_entropy|^tokamak::head", icase)},
      {"attention", std::regex("flash|fmha|attention|sdpa|scaled_dot_product", icase)},
      {"norm", std::regex("layer_?norm|rms_?norm", icase)},
      {"activation", std::regex("gelu|relu|silu|tanh|sigmoid|^aten::square$|^PowBackward", icase)},
      {"optimizer", std::regex("adam|muon|_foreach_|multi_tensor|^tokamak::optimizer", icase)},
      {"casts/copies",
       std::regex(
           "memcpy|memset|^aten::(copy_|to|_to_copy|clone|contiguous|cat|stack|_copy_from|"
           "_copy_from_and_resize|fill_|zero_|zeros|zeros_like|empty_strided)$|^(ToCopy|Clone|Cat|Stack)"
           "Backward|cat_|CatArrayBatchedCopy|heads_to_qkv|^tokamak::qkv_heads|scale_cast_fp8|^tokamak::fp8_cast",
           icase)},
      {"residual", std::regex("^tokamak::residual", icase)},
  };
  return r;
}

}  // namespace

const std::vector<std::string>& op_kinds() {
  static const std::vector<std::string> kinds = {"matmul",   "attention",    "head",      "norm",  "activation",
                                                 "residual", "casts/copies", "optimizer", "other", "unattributed"};
  return kinds;
}

std::string op_kind(const std::vector<std::string>& chain) {
  if (chain.empty()) return "unattributed";
  // The head's in-place scale runs ATen's multi-tensor kernel, whose own name would say "optimizer": its scope wins.
  static const std::regex head_scale("^tokamak::head_scale$");
  for (const std::string& name : chain)
    if (std::regex_search(name, head_scale)) return "head";
  for (const std::string& name : chain)
    for (const Rule& rule : rules())
      if (std::regex_search(name, rule.pattern)) return rule.kind;
  return "other";
}

}  // namespace tokamak
