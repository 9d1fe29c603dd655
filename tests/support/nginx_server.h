// A real HTTP server (Debian's nginx) standing in for the Hugging Face Hub in the tests: nginx on a free
// loopback port, everything in a temporary folder laid out as the Hub's URLs (www/datasets/REPO/resolve/main/
// FILE, www/api/datasets/REPO/tree/main), run as `nginx -c CONF -p DIR` with `daemon off` and stopped by its
// pid file (docs: /work/shared/DESIGN.md, "Data from the Hugging Face Hub"). It serves Range requests (206) as
// it is; add_header gives a file the Hub's X-Linked-Etag / X-Linked-Size, `return 302` sends it through a
// redirect to a file store (as the Hub does), limit_rate slows a repo down (so a kill lands mid-file), and a
// repo can require a token (401 without it). The access log says which requests and ranges came.
#pragma once
#include <QByteArray>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include <cstdint>
#include <map>
#include <string>

namespace tokamak::test {

// An llm.c shard of TOKENS random GPT-2 ids (seeded); MAGIC and COUNT (-1 = TOKENS) can lie.
QByteArray llmc_shard(int tokens, uint32_t seed, int32_t magic = 20240520, int64_t count = -1);
QByteArray sha256_hex(const QByteArray& bytes);

struct HubFileOptions {
  bool redirect = false;    // the resolve URL answers 302 to /store/REPO/FILE
  bool linked_etag = true;  // X-Linked-Etag (the bytes' sha256) and X-Linked-Size on the resolve URL
  QByteArray etag;          // a sha256 to announce instead of the true one (a damaged file on the Hub)
};

struct HubRepoOptions {
  std::string rate;     // nginx limit_rate for its files ("16k"); "" = full speed
  std::string token;    // "" = public; else 401 without "Authorization: Bearer TOKEN"
  bool listing = true;  // serve api/datasets/REPO/tree/main (JSON: path, size, lfs.oid)
  std::string next;     // the listing's Link: <NEXT>; rel="next" ("" = none)
  std::string body;     // the listing as served, instead of the one made from the repo's files
};

class NginxServer {
 public:
  NginxServer();
  ~NginxServer();
  // Before start(): what it serves.
  void addRepo(const std::string& repo, const HubRepoOptions& options = {});
  void addFile(const std::string& repo, const std::string& name, const QByteArray& bytes,
               const HubFileOptions& options = {});
  // A webhook at http://127.0.0.1:PORT/PATH: each POST's body is kept (webhookBodies()) and answered 200. nginx
  // reads a body only to pass it on, so the location passes it to one of its own that answers.
  void addWebhook(const std::string& path) { webhook_ = path; }
  QStringList webhookBodies() const;  // oldest first, one a request
  // A location block of the test's own, as nginx.conf text ("location = /moved { return 302 /hook; }"): a webhook
  // that redirects, or one that answers a byte a second (limit_rate).
  void addLocation(const std::string& block) { locations_ += block + "\n"; }
  bool start();
  void stop();
  const QString& error() const { return error_; }
  QString endpoint() const;  // http://127.0.0.1:PORT: HF_ENDPOINT
  // Access log lines "METHOD URI STATUS RANGE BODY_BYTES" ("-" for no Range header), oldest first.
  QStringList requests() const;
  QString path(const QString& name) const { return dir_.filePath(name); }

 private:
  struct File {
    std::string repo, name;
    QByteArray bytes;
    HubFileOptions options;
  };
  QString config() const;
  QTemporaryDir dir_;
  std::map<std::string, HubRepoOptions> repos_;
  std::vector<File> files_;
  std::string webhook_, locations_;
  int port_ = 0;
  qint64 pid_ = 0;
  QString error_;
};

}  // namespace tokamak::test
