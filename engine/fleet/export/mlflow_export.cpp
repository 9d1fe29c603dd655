#include "engine/fleet/export/mlflow_export.h"

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <memory>

#include "engine/base/store/run_store.h"
#include "engine/base/store/scoreboard.h"  // flatten_config
#include "engine/base/util/error.h"
#include "engine/base/util/version.h"
#include "engine/fleet/notify/notify.h"  // webhook_problem, redacted_url: the same rules for a server's URL

namespace tokamak {
namespace {

using json = nlohmann::json;

// MLflow's limits per log-batch request (its REST API reference).
constexpr size_t kBatchMetrics = 1000, kBatchParams = 100;
constexpr size_t kParamValueMax = 6000;

struct Reply {
  long status = 0;
  std::string body;
};

// The tracking server's REST API: JSON in, JSON out, one connection kept.
class Rest {
 public:
  explicit Rest(const MlflowOptions& o)
      : base_(o.url), shown_(redacted_url(o.url)), curl_(curl_easy_init(), curl_easy_cleanup) {
    while (!base_.empty() && base_.back() == '/') base_.pop_back();
    if (!o.token.empty()) auth_ = "Authorization: Bearer " + o.token;
  }

  json call(const std::string& method, const std::string& endpoint, const json& body = nullptr) {
    const std::string text = body.is_null() ? "" : body.dump(-1, ' ', false, json::error_handler_t::replace);
    const Reply r = send(method, base_ + "/api/2.0/" + endpoint, text, "application/json");
    const json answer = json::parse(r.body, nullptr, false);
    if (r.status / 100 != 2) {
      std::string said = answer.is_object() ? answer.value("message", answer.value("error_code", "")) : "";
      if (said.empty()) said = r.body.substr(0, 160);
      throw Error("the MLflow server at " + shown_ + " refused " + endpoint + " (HTTP " + std::to_string(r.status) +
                      "): " + said,
                  "check the server's log; `mlflow server --host 127.0.0.1 --port 5000` starts one");
    }
    return answer.is_discarded() ? json::object() : answer;
  }

  // GET, where a 404 is an answer (a missing experiment), not an error: returns null for it.
  json get_or_null(const std::string& endpoint) {
    const Reply r = send("GET", base_ + "/api/2.0/" + endpoint, "", "");
    if (r.status == 404) return nullptr;
    if (r.status / 100 != 2)
      throw Error("the MLflow server at " + shown_ + " refused " + endpoint.substr(0, endpoint.find('?')) + " (HTTP " +
                      std::to_string(r.status) + ")",
                  "check the server's log");
    return json::parse(r.body, nullptr, false);
  }

  // An artifact through the server's proxy (mlflow-artifacts:/…); a refusal is an Error naming the file.
  void put_artifact(const std::string& path, const std::string& bytes) {
    const Reply r =
        send("PUT", base_ + "/api/2.0/mlflow-artifacts/artifacts" + path, bytes, "application/octet-stream");
    if (r.status / 100 != 2)
      throw Error("the MLflow server at " + shown_ + " refused the artifact " + path.substr(path.rfind('/') + 1) +
                      " (HTTP " + std::to_string(r.status) + ")",
                  "start the server with artifacts served (`mlflow server` does by default)");
  }

  std::string escape(const std::string& s) {
    std::unique_ptr<char, decltype(&curl_free)> e(curl_easy_escape(curl_.get(), s.c_str(), static_cast<int>(s.size())),
                                                  curl_free);
    return e ? e.get() : "";
  }

 private:
  Reply send(const std::string& method, const std::string& url, const std::string& body, const std::string& type) {
    CURL* c = curl_.get();
    curl_easy_reset(c);
    Reply r;
    char error[CURL_ERROR_SIZE] = {0};
    curl_slist* headers = nullptr;
    if (!type.empty()) headers = curl_slist_append(headers, ("Content-Type: " + type).c_str());
    if (!auth_.empty()) headers = curl_slist_append(headers, auth_.c_str());
    std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> keep(headers, curl_slist_free_all);
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);  // a redirect is an answer to say, not to follow with the token
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
    if (method != "GET") {
      curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
      curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    }
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r.body);
    curl_easy_setopt(
        c, CURLOPT_WRITEFUNCTION, +[](char* p, size_t size, size_t n, void* out) {
          static_cast<std::string*>(out)->append(p, size * n);
          return size * n;
        });
    const CURLcode code = curl_easy_perform(c);
    if (code != CURLE_OK)
      throw Error(
          "the MLflow server at " + shown_ + " was not reached: " + (error[0] ? error : curl_easy_strerror(code)),
          "is `mlflow server` running there? check the URL and port");
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
    return r;
  }

  std::string base_, shown_, auth_;
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl_;
};

std::string experiment_id(Rest& rest, const std::string& name) {
  const json found = rest.get_or_null("mlflow/experiments/get-by-name?experiment_name=" + rest.escape(name));
  if (found.is_object() && found.contains("experiment")) return found["experiment"].value("experiment_id", "");
  return rest.call("POST", "mlflow/experiments/create", {{"name", name}}).value("experiment_id", "");
}

std::string mlflow_status(const std::string& status) {
  if (status == "finished") return "FINISHED";
  if (status == "running") return "RUNNING";
  if (status == "stopped") return "KILLED";
  return "FAILED";  // failed, crashed
}

json kv(const std::string& key, const std::string& value) { return {{"key", key}, {"value", value}}; }

int64_t ms(double seconds) { return static_cast<int64_t>(std::llround(seconds * 1000)); }

void log_batches(Rest& rest, const std::string& run_id, const json& items, const char* field, size_t per_batch) {
  for (size_t i = 0; i < items.size(); i += per_batch) {
    json batch = json::array();
    for (size_t j = i; j < std::min(items.size(), i + per_batch); ++j) batch.push_back(items[j]);
    rest.call("POST", "mlflow/runs/log-batch", {{"run_id", run_id}, {field, batch}});
  }
}

MlflowRun log_run(Rest& rest, RunStore& store, int64_t id, const std::string& experiment, const MlflowOptions& o) {
  const RunInfo run = store.run(id);
  MlflowRun out{run.uid, "", experiment, 0, 0, 0, ""};
  const json same = rest.call(
      "POST", "mlflow/runs/search",
      {{"experiment_ids", {experiment}}, {"filter", "tags.`tokamak.run_uid` = '" + run.uid + "'"}, {"max_results", 1}});
  if (!o.force && same.contains("runs") && !same["runs"].empty())
    throw Error("run " + std::to_string(id) + " (" + run.name + ") is already in MLflow experiment '" + o.experiment +
                    "' as run " + same["runs"][0]["info"].value("run_id", "?"),
                "nothing was sent; pass --force to log it again as a new MLflow run");
  const json created = rest.call(
      "POST", "mlflow/runs/create",
      {{"experiment_id", experiment},
       {"run_name", run.name},
       {"start_time", ms(run.created)},
       {"tags",
        {kv("tokamak.run_uid", run.uid), kv("tokamak.version", run.tokamak_version), kv("tokamak.status", run.status),
         kv("mlflow.source.name", "tokamak"), kv("mlflow.note.content", run.notes)}}});
  out.run_id = created["run"]["info"].value("run_id", "");
  const std::string artifact_uri = created["run"]["info"].value("artifact_uri", "");
  json params = json::array();
  for (const auto& [key, value] : flatten_config(run.config_json))
    params.push_back(kv(key, value.substr(0, kParamValueMax)));
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"tokamak.model", run.model},
                                   {"tokamak.dataset", run.dataset},
                                   {"tokamak.device", run.device}})
    if (!value.empty()) params.push_back(kv(key, value.substr(0, kParamValueMax)));
  out.params = static_cast<int64_t>(params.size());
  log_batches(rest, out.run_id, params, "params", kBatchParams);
  json metrics = json::array();
  for (const MetricRow& row : store.metrics(id)) {
    const double wall = row["wall_s"];
    const int64_t at = ms(run.created + (std::isnan(wall) ? 0 : wall));
    for (const MetricValue& v : row.values)
      metrics.push_back({{"key", v.key}, {"value", v.value}, {"timestamp", at}, {"step", row.step}});
  }
  out.metrics = static_cast<int64_t>(metrics.size());
  log_batches(rest, out.run_id, metrics, "metrics", kBatchMetrics);
  // Artifacts through the server's proxy; a server that keeps them where it does not serve gets none.
  const std::string proxied = "mlflow-artifacts:";
  if (artifact_uri.rfind(proxied, 0) == 0) {
    std::string path = artifact_uri.substr(proxied.size());
    if (path.rfind("//", 0) == 0) path = path.substr(path.find('/', 2));  // mlflow-artifacts://host:port/…
    json samples = json::array();
    for (const SampleRow& s : store.samples(id))
      samples.push_back({{"step", s.step}, {"prompt", s.prompt}, {"text", s.text}, {"created", s.created}});
    const json config = json::parse(run.config_json, nullptr, false);
    rest.put_artifact(path + "/config.json", config.is_discarded() ? run.config_json : config.dump(2));
    rest.put_artifact(path + "/samples.json", samples.dump(2, ' ', false, json::error_handler_t::replace));
    out.artifacts = 2;
  } else {
    out.note =
        "the server keeps artifacts at " + artifact_uri.substr(0, 60) +
        ", which it does not serve: config.json and samples.json were not sent (start it with --serve-artifacts)";
  }
  rest.call("POST", "mlflow/runs/update",
            {{"run_id", out.run_id},
             {"status", mlflow_status(run.status)},
             {"end_time", ms(run.ended > 0 ? run.ended : run.updated)}});
  return out;
}

}  // namespace

std::vector<MlflowRun> export_mlflow(RunStore& store, const std::vector<int64_t>& ids, const MlflowOptions& options,
                                     const std::function<void(const std::string&)>& progress) {
  if (const std::string bad = webhook_problem(options.url); !bad.empty())
    throw Error("--to mlflow: the server's URL " + bad, "give it as http://HOST:PORT (the tracking server's address)");
  if (options.experiment.empty()) throw Error("--experiment is empty", "name the MLflow experiment, or leave it out");
  const std::vector<int64_t> runs = ids.empty() ? store.run_ids() : ids;
  if (runs.empty()) throw Error("there are no runs to export", "train a run first, or name runs by id");
  for (int64_t id : runs) store.run(id);  // an unknown id is said before anything is sent
  Rest rest(options);
  const std::string experiment = experiment_id(rest, options.experiment);
  std::vector<MlflowRun> out;
  for (int64_t id : runs) {
    out.push_back(log_run(rest, store, id, experiment, options));
    if (progress)
      progress("logged run " + std::to_string(id) + " as MLflow run " + out.back().run_id + ": " +
               std::to_string(out.back().params) + " params, " + std::to_string(out.back().metrics) + " metric points" +
               (out.back().note.empty() ? "" : "; " + out.back().note));
  }
  return out;
}

}  // namespace tokamak
