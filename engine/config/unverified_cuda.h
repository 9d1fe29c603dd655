// TOKAMAK_UNVERIFIED_CUDA=1 lifts the "not implemented yet on CUDA" refusals of choices whose CUDA code exists but
// has not been verified on a GPU (a row's missing_cuda), so that the GPU sitting (scripts/gpu-check.sh) can time and
// check them in the same command that verifies their kernels. Nothing else sets it: a user never meets it.
#pragma once

namespace tokamak {

bool unverified_cuda_allowed();

}  // namespace tokamak
