// torch_error_text (see torch_error.h).
#include "engine/torch/train/torch_error.h"

#include <c10/util/Exception.h>

#include "engine/base/util/error_text.h"

namespace tokamak {

std::string torch_error_text(const std::exception& e) {
  if (const auto* c10 = dynamic_cast<const c10::Error*>(&e)) return one_line(c10->what_without_backtrace());
  return error_text(e);
}

}  // namespace tokamak
