// HttpClient on libcurl (see http_client.h).
#include "engine/fleet/hub/http_client.h"

#include <curl/curl.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "engine/base/util/error.h"

namespace tokamak {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

std::string unquoted(std::string v) {
  if (v.rfind("W/", 0) == 0) v = v.substr(2);
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
  return v;
}

}  // namespace

bool HttpResult::transient() const {
  if (curl_code != 0) {
    switch (curl_code) {
      case CURLE_UNSUPPORTED_PROTOCOL:
      case CURLE_URL_MALFORMAT:
      case CURLE_ABORTED_BY_CALLBACK:
      case CURLE_WRITE_ERROR:
      case CURLE_HTTP_RETURNED_ERROR:
        break;
      default:
        return true;
    }
  }
  return status == 408 || status == 429 || (status >= 500 && status <= 599);
}

uint64_t HttpResult::file_size() const {
  if (status == 206 && range_total) return range_total;
  if (linked_size) return linked_size;
  return has_length && status == 200 ? length : 0;
}

struct HttpClient::Impl {
  CURL* curl = nullptr;
  curl_slist* headers = nullptr;
  // The transfer in progress.
  HttpResult* result = nullptr;
  bool started = false;
  const std::function<bool(const HttpResult&)>* on_start = nullptr;
  const std::function<bool(const char*, size_t)>* on_data = nullptr;
  const std::function<bool()>* keep_going = nullptr;
  std::string* text = nullptr;

  static size_t header_cb(char* data, size_t size, size_t n, void* self) {
    auto* m = static_cast<Impl*>(self);
    HttpResult& r = *m->result;
    const std::string line(data, size * n);
    if (line.rfind("HTTP/", 0) == 0) {  // a new response of the redirect chain: its own length and range
      r.has_length = false, r.length = 0, r.range_start = 0, r.range_total = 0;
      const size_t sp = line.find(' ');
      if (sp != std::string::npos) r.status = std::strtol(line.c_str() + sp + 1, nullptr, 10);
      return size * n;
    }
    const size_t colon = line.find(':');
    if (colon == std::string::npos) return size * n;
    const std::string key = lower(trim(line.substr(0, colon))), value = trim(line.substr(colon + 1));
    if (key == "content-length") r.has_length = true, r.length = std::strtoull(value.c_str(), nullptr, 10);
    else if (key == "x-linked-etag" && r.linked_etag.empty()) r.linked_etag = unquoted(value);
    else if (key == "x-linked-size" && !r.linked_size) r.linked_size = std::strtoull(value.c_str(), nullptr, 10);
    else if (key == "content-range") {  // "bytes 100-4999/5000"
      const size_t sp = value.find(' '), dash = value.find('-'), slash = value.find('/');
      if (sp != std::string::npos && dash != std::string::npos)
        r.range_start = std::strtoull(value.c_str() + sp + 1, nullptr, 10);
      if (slash != std::string::npos && value[slash + 1] != '*')
        r.range_total = std::strtoull(value.c_str() + slash + 1, nullptr, 10);
    } else if (key == "link") {
      const size_t next = value.find("rel=\"next\"");
      if (next != std::string::npos) {
        const size_t open = value.rfind('<', next), close = value.find('>', open);
        if (open != std::string::npos && close != std::string::npos)
          r.next_page = value.substr(open + 1, close - open - 1);
      }
    }
    return size * n;
  }

  static size_t write_cb(char* data, size_t size, size_t n, void* self) {
    auto* m = static_cast<Impl*>(self);
    if (m->text) return m->text->append(data, size * n), size * n;
    if (!m->started) {
      m->started = true;
      if (*m->on_start && !(*m->on_start)(*m->result)) return 0;
    }
    return (*m->on_data)(data, size * n) ? size * n : 0;
  }

  static int progress_cb(void* self, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    auto* m = static_cast<Impl*>(self);
    return m->keep_going && *m->keep_going && !(*m->keep_going)() ? 1 : 0;
  }

  HttpResult perform(const std::string& url, bool head, uint64_t from) {
    HttpResult r;
    result = &r, started = false;
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_NOBODY, head ? 1L : 0L);
    if (!head) curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
    const std::string range = std::to_string(from) + "-";
    curl_easy_setopt(curl, CURLOPT_RANGE, from > 0 ? range.c_str() : nullptr);
    // A listing or a HEAD is small: a minute bounds it. A file's GET is bounded by its speed instead.
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, (head || text) ? 60L : 0L);
    char error[CURL_ERROR_SIZE] = {0};
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
    const CURLcode code = curl_easy_perform(curl);
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    if (status) r.status = status;
    r.curl_code = code;
    if (code != CURLE_OK) r.curl_error = error[0] ? error : curl_easy_strerror(code);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
    result = nullptr, on_start = nullptr, on_data = nullptr, keep_going = nullptr, text = nullptr;
    return r;
  }
};

HttpClient::HttpClient(const std::string& token) : impl_(std::make_unique<Impl>()) {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  CURL* c = impl_->curl = curl_easy_init();
  if (!c) throw Error("libcurl could not start a transfer", "is the machine out of memory?");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);  // a 4xx/5xx body is an error page, never a file's bytes
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);     // threads: no SIGALRM for DNS timeouts
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
  // A transfer slower than 1 KB/s for a minute is a dead connection: ended, then retried from where it was.
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1024L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 60L);
  curl_easy_setopt(c, CURLOPT_USERAGENT, "tokamak/" TOKAMAK_VERSION);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, &Impl::header_cb);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, impl_.get());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &Impl::write_cb);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, impl_.get());
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, &Impl::progress_cb);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, impl_.get());
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  if (!token.empty()) {
    impl_->headers = curl_slist_append(nullptr, ("Authorization: Bearer " + token).c_str());
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, impl_->headers);
  }
}

HttpClient::~HttpClient() {
  curl_easy_cleanup(impl_->curl);
  curl_slist_free_all(impl_->headers);
}

HttpResult HttpClient::head(const std::string& url) { return impl_->perform(url, true, 0); }

HttpResult HttpClient::get_text(const std::string& url) {
  std::string body;
  impl_->text = &body;
  HttpResult r = impl_->perform(url, false, 0);
  r.body = std::move(body);
  return r;
}

HttpResult HttpClient::get(const std::string& url, uint64_t from,
                           const std::function<bool(const HttpResult&)>& on_start,
                           const std::function<bool(const char*, size_t)>& on_data,
                           const std::function<bool()>& keep_going) {
  impl_->on_start = &on_start, impl_->on_data = &on_data, impl_->keep_going = &keep_going;
  return impl_->perform(url, false, from);
}

}  // namespace tokamak
