// The few HTTP requests the Hub needs, through libcurl: HEAD for a file's size and checksum, GET of a JSON
// listing, and GET of a file's bytes from an offset (a Range request) into a sink. Redirects are followed
// (the Hub answers a file's URL with a redirect to its file store, whose headers carry no checksum, so the
// X-Linked-* headers of every response in the chain are kept). One client per thread; it keeps its
// connection between requests.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace tokamak {

struct HttpResult {
  long status = 0;           // the last response's status; 0 when no response came
  int curl_code = 0;         // CURLcode; 0 = the transfer completed
  std::string curl_error;    // libcurl's own words when curl_code != 0
  bool has_length = false;   // the last response said how long its body is
  uint64_t length = 0;       // Content-Length of the last response
  uint64_t range_start = 0;  // Content-Range's first byte (206)
  uint64_t range_total = 0;  // Content-Range's total size (206), 0 when not given
  std::string linked_etag;   // X-Linked-Etag without quotes: the sha256 of a large file on the Hub
  uint64_t linked_size = 0;  // X-Linked-Size
  std::string next_page;     // Link: <URL>; rel="next" (the Hub's paginated listings)
  std::string body;          // get_text only
  // A failure worth another try: no connection, a dropped transfer, a timeout, 408, 429, 5xx.
  bool transient() const;
  // The file's size as this response tells it (206: the Content-Range total; else X-Linked-Size, else the
  // Content-Length), 0 when unknown.
  uint64_t file_size() const;
};

class HttpClient {
 public:
  // TOKEN: sent as "Authorization: Bearer TOKEN" when not empty (libcurl drops it on a redirect to
  // another host, so the file store never sees it).
  explicit HttpClient(const std::string& token);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  HttpResult head(const std::string& url);
  HttpResult get_text(const std::string& url);
  // GET from byte FROM (a Range request when FROM > 0). ON_START(result so far: status, range) is called once
  // before the first byte of the body and may refuse it (return false: the transfer ends); ON_DATA gets the
  // body; either returning false, or KEEP_GOING returning false, ends the transfer (curl_code != 0).
  HttpResult get(const std::string& url, uint64_t from, const std::function<bool(const HttpResult&)>& on_start,
                 const std::function<bool(const char*, size_t)>& on_data, const std::function<bool()>& keep_going);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tokamak
