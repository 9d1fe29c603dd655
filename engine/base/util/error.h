// The engine's one error type: a one-line message that names the thing that is wrong, and a hint that says
// how to fix it. The engine never exits or prints on its own; entry points print what() and exit non-zero.
#pragma once
#include <stdexcept>
#include <string>

namespace tokamak {

class Error : public std::runtime_error {
 public:
  Error(const std::string& message, const std::string& hint = {})
      : std::runtime_error(hint.empty() ? message : message + " (hint: " + hint + ")"), message_(message), hint_(hint) {
  }
  const std::string& message() const { return message_; }
  const std::string& hint() const { return hint_; }

 private:
  std::string message_;
  std::string hint_;
};

// Work the user stopped before it was done (a run stopped while it still tokenizes its data): not a failure.
class Cancelled : public Error {
 public:
  using Error::Error;
};

}  // namespace tokamak
