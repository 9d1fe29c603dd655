#include "tests/support/scratch_env.h"

#include <QFile>

#include "engine/base/util/files.h"
#include "tests/support/test_support.h"

namespace tokamak::test {

ScratchEnv::ScratchEnv() {
  const std::string real_assets = cache_dir() + "/assets";
  old_cache_ = qgetenv("TOKAMAK_CACHE");
  old_data_ = qgetenv("XDG_DATA_HOME");
  old_datasets_ = qgetenv("TOKAMAK_DATASETS");
  if (!dir_.isValid() || !path_exists(real_assets + "/gpt2.tiktoken")) return;
  const std::string root = dir_.path().toStdString();
  make_dirs(root + "/cache");
  make_dirs(root + "/data");
  QFile::link(QString::fromStdString(real_assets), QString::fromStdString(root + "/cache/assets"));
  qputenv("TOKAMAK_CACHE", QByteArray::fromStdString(root + "/cache"));
  qputenv("XDG_DATA_HOME", QByteArray::fromStdString(root + "/data"));
  qunsetenv("TOKAMAK_DATASETS");  // datasets under the scratch cache, never a shared folder
  ok_ = true;
}

ScratchEnv::~ScratchEnv() {
  if (old_cache_.isNull()) qunsetenv("TOKAMAK_CACHE");
  else qputenv("TOKAMAK_CACHE", old_cache_);
  if (old_data_.isNull()) qunsetenv("XDG_DATA_HOME");
  else qputenv("XDG_DATA_HOME", old_data_);
  if (!old_datasets_.isNull()) qputenv("TOKAMAK_DATASETS", old_datasets_);
}

std::string ScratchEnv::path(const std::string& name) const { return dir_.path().toStdString() + "/" + name; }

std::string ScratchEnv::corpus_excerpt(size_t bytes) const {
  std::string text = read_file(asset_path("jargon.txt")).substr(0, bytes);
  std::string p = path("excerpt.txt");
  write_file_atomically(p, text);
  return p;
}

}  // namespace tokamak::test
