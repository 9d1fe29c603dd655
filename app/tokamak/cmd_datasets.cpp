// `tokamak datasets [--json]`: what this machine has ready to train on (engine/base/data/dataset_list.h). The
// studio runs it on an SSH host to fill its dataset picker with the host's paths. `datasets get` fetches from
// the Hugging Face Hub (cmd_datasets_get.cpp).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/tokamak/cmd_datasets.h"
#include "engine/base/data/dataset_list.h"

namespace tokamak::cli {

void add_datasets_command(CLI::App& app) {
  auto json_out = std::make_shared<bool>(false);
  CLI::App* c = app.add_subcommand("datasets",
                                   "The datasets this machine has: the default corpus, tokenized "
                                   "text in the cache, token shards under the data folder's datasets/");
  c->add_flag("--json", *json_out, "one JSON object per dataset");
  add_datasets_get_command(c);
  c->callback([json_out, c] {
    if (c->got_subcommand("get") || c->got_subcommand("catalog")) return;
    for (const DatasetListing& d : list_datasets()) {
      if (*json_out)
        std::printf("%s\n", nlohmann::json({{"name", d.name},
                                            {"path", d.path},
                                            {"kind", d.kind},
                                            {"description", d.description},
                                            {"tokens", d.tokens}})
                                .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                                .c_str());
      else
        std::printf("%-20s %-8s %s\n    %s\n", d.name.c_str(), d.kind.c_str(), d.description.c_str(), d.path.c_str());
    }
  });
}

}  // namespace tokamak::cli
