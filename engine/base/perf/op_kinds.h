// The kinds of work a training step's kernels do, named from what launched them: the profile of `tokamak bench
// --kernels` groups a step's device time (CUDA) or operators' self time (CPU) by these, so that each lever of
// docs/PERFORMANCE.md shows which kind it shrank. LibTorch-free: names in, a kind out.
#pragma once

#include <string>
#include <vector>

namespace tokamak {

// Every kind, in the order tables list them. "unattributed" is a CUDA kernel the profiler could not link to the
// operator that launched it: shown with its time, never folded into another kind.
const std::vector<std::string>& op_kinds();

// The kind of one kernel or operator. `chain` is its own name, then the operator or scope that launched it, then
// those enclosing that one, innermost first (ATen ops "aten::mm", Tokamak's scopes "tokamak::residual", autograd
// nodes "MmBackward0", kernel names). The innermost name that says what the work is decides: a cast inside a
// LayerNorm is a cast, the adds inside the residual scope are the residual. Names that say nothing on their own
// (add, mul, sum, an elementwise kernel) leave it to the names around them; a chain of such names is "other".
// An empty chain is "unattributed".
std::string op_kind(const std::vector<std::string>& chain);

}  // namespace tokamak
