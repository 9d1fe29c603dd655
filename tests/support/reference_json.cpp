// Reference scripts' JSON (see reference_json.h).
#include "tests/support/reference_json.h"

#include <ATen/ATen.h>

#include <fstream>
#include <stdexcept>

#include "tests/support/test_support.h"

namespace tokamak::test {

nlohmann::json tensor_json(const at::Tensor& t) {
  const at::Tensor d = t.detach().to(at::kCPU, at::kDouble).contiguous();
  return {{"shape", d.sizes().vec()},
          {"data", std::vector<double>(d.data_ptr<double>(), d.data_ptr<double>() + d.numel())}};
}

at::Tensor json_tensor(const nlohmann::json& j) {
  const auto shape = j.at("shape").get<std::vector<int64_t>>();
  auto data = j.at("data").get<std::vector<double>>();
  return at::tensor(data, at::kDouble).reshape(shape);
}

nlohmann::json run_reference(const std::string& script, const std::string& args, const std::string& out_path) {
  const std::string path = std::string(TOKAMAK_SOURCE_DIR) + "/tests/reference/" + script;
  std::string output;
  const int rc = run(python() + " " + path + " " + args + " " + out_path + " 2>&1", &output);
  if (rc != 0)
    throw std::runtime_error(script + " failed (exit " + std::to_string(rc) + ", python " + python() + "): " + output);
  std::ifstream in(out_path);
  return nlohmann::json::parse(in);
}

}  // namespace tokamak::test
