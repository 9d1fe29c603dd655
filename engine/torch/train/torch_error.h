// error_text() for the engine: LibTorch's c10::Error is described by its message without the C++ backtrace
// that its what() carries; everything else as the core's error_text() does. Kept out of other headers so that
// only the few places that report errors include c10's exception header.
#pragma once
#include <exception>
#include <string>

namespace tokamak {

std::string torch_error_text(const std::exception& e);

}  // namespace tokamak
