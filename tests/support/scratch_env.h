// A throw-away cache and data folder for tests that train: TOKAMAK_CACHE and XDG_DATA_HOME point into a
// temporary folder whose assets/ links to the real set-up's assets (tokenizer ranks, default corpus).
#pragma once
#include <QTemporaryDir>
#include <string>

namespace tokamak::test {

class ScratchEnv {
 public:
  ScratchEnv();
  ~ScratchEnv();
  bool ok() const { return ok_; }
  std::string path(const std::string& name) const;  // a path inside the scratch folder
  // Writes the first `bytes` of the default corpus to a text file in the scratch folder; returns its path.
  std::string corpus_excerpt(size_t bytes) const;

 private:
  QTemporaryDir dir_;
  QByteArray old_cache_, old_data_, old_datasets_;
  bool ok_ = false;
};

}  // namespace tokamak::test
