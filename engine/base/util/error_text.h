// What a user sees of any exception: one line. Messages from libraries can hold several lines (LibTorch's
// c10::Error appends a C++ backtrace to what()); they are cut to what a person needs before they reach the
// CLI's stderr, a failed run's stored error or a studio dialog. LibTorch-free: the engine's
// torch_error_text() (engine/torch/train/torch_error.h) adds c10::Error's own message without the backtrace.
#pragma once
#include <exception>
#include <string>

namespace tokamak {

// The text collapsed to one line: a LibTorch backtrace ("Exception raised from ...") and anything after it
// dropped, other line breaks turned into "; ", surrounding blanks trimmed.
std::string one_line(const std::string& text);
// one_line(e.what()).
std::string error_text(const std::exception& e);

}  // namespace tokamak
