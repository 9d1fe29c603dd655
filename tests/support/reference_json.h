// Reference values computed by a PyTorch script of tests/reference/ at test time, exchanged as JSON: tensors are
// {"shape": [...], "data": [flat float64]} both ways (a test may send a model's weights for the script to run).
#pragma once
#include <ATen/core/Tensor.h>

#include <nlohmann/json.hpp>
#include <string>

namespace tokamak::test {

// {"shape", "data"} of a tensor, as float64.
nlohmann::json tensor_json(const at::Tensor& t);
// The float64 tensor of such an object.
at::Tensor json_tensor(const nlohmann::json& j);
// Runs `python tests/reference/SCRIPT ARGS... OUT` with the set-up's venv and returns OUT's JSON; throws
// std::runtime_error naming the script when it fails (a missing reference is a failure, not a skip).
nlohmann::json run_reference(const std::string& script, const std::string& args, const std::string& out_path);

}  // namespace tokamak::test
