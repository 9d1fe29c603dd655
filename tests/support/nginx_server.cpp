// NginxServer (see nginx_server.h).
#include "tests/support/nginx_server.h"

#include <QCryptographicHash>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QThread>

#include <nlohmann/json.hpp>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <random>

#include "tests/support/test_support.h"

namespace tokamak::test {
namespace {

bool write(const QString& path, const QByteArray& bytes) {
  QDir().mkpath(QFileInfo(path).absolutePath());
  QFile f(path);
  return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

}  // namespace

QByteArray llmc_shard(int tokens, uint32_t seed, int32_t magic, int64_t count) {
  QByteArray b(1024 + 2 * tokens, '\0');
  auto* h = reinterpret_cast<int32_t*>(b.data());
  h[0] = magic, h[1] = 1, h[2] = static_cast<int32_t>(count < 0 ? tokens : count);
  std::mt19937 rng(seed);
  auto* t = reinterpret_cast<uint16_t*>(b.data() + 1024);
  for (int i = 0; i < tokens; ++i) t[i] = static_cast<uint16_t>(rng() % 50257);
  return b;
}

QByteArray sha256_hex(const QByteArray& bytes) {
  return QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex();
}

NginxServer::NginxServer() = default;
NginxServer::~NginxServer() { stop(); }

void NginxServer::addRepo(const std::string& repo, const HubRepoOptions& options) { repos_[repo] = options; }

void NginxServer::addFile(const std::string& repo, const std::string& name, const QByteArray& bytes,
                          const HubFileOptions& options) {
  if (!repos_.count(repo)) repos_[repo] = {};
  files_.push_back({repo, name, bytes, options});
}

QString NginxServer::config() const {
  const QString d = dir_.path();
  QString c = "daemon off;\nmaster_process off;\npid " + d + "/nginx.pid;\nerror_log " + d +
              "/error.log info;\nevents { worker_connections 64; }\nhttp {\n"
              "  default_type application/octet-stream;\n  sendfile on;\n";
  for (const char* t : {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"})
    c += QString("  %1_temp_path %2/tmp/%1;\n").arg(t, d);
  c += "  log_format hub '$request_method $uri $status $http_range $body_bytes_sent';\n";
  c += "  log_format body escape=none '$request_body';\n";
  c += "  server {\n    listen 127.0.0.1:" + QString::number(port_) + ";\n    root " + d + "/www;\n";
  c += "    access_log " + d + "/access.log hub;\n";
  const auto guard = [](const HubRepoOptions& o) {
    QString g;
    if (!o.rate.empty()) g += "      limit_rate " + QString::fromStdString(o.rate) + ";\n";
    if (!o.token.empty())
      g += "      if ($http_authorization != \"Bearer " + QString::fromStdString(o.token) + "\") { return 401; }\n";
    return g;
  };
  for (const auto& [repo, o] : repos_) {
    const QString r = QString::fromStdString(repo);
    c += "    location /datasets/" + r + "/ {\n" + guard(o) + "    }\n";
    c += "    location /store/" + r + "/ {\n" + guard(o) + "    }\n";
    c += "    location = /api/datasets/" + r + "/tree/main {\n      default_type application/json;\n" + guard(o) +
         (o.next.empty() ? QString()
                         : "      add_header Link '<" + QString::fromStdString(o.next) + ">; rel=\"next\"' always;\n") +
         "    }\n";
  }
  for (const File& f : files_) {
    const HubRepoOptions& o = repos_.at(f.repo);
    const QString r = QString::fromStdString(f.repo), n = QString::fromStdString(f.name);
    if (!f.options.linked_etag && !f.options.redirect) continue;
    c += "    location = /datasets/" + r + "/resolve/main/" + n + " {\n" + guard(o);
    if (f.options.linked_etag) {
      const QByteArray sha = f.options.etag.isEmpty() ? sha256_hex(f.bytes) : f.options.etag;
      c += "      add_header X-Linked-Etag '\"" + QString::fromLatin1(sha) + "\"' always;\n";
      c += "      add_header X-Linked-Size " + QString::number(f.bytes.size()) + " always;\n";
    }
    if (f.options.redirect) c += "      return 302 /store/" + r + "/" + n + ";\n";
    c += "    }\n";
  }
  if (!webhook_.empty()) {
    c += "    location = /" + QString::fromStdString(webhook_) + " {\n      access_log " + d +
         "/webhook.log body;\n      proxy_pass http://127.0.0.1:" + QString::number(port_) + "/tokamak-webhook-ok;\n    }\n";
    c += "    location = /tokamak-webhook-ok {\n      access_log off;\n      return 200 \"ok\\n\";\n    }\n";
  }
  c += "    " + QString::fromStdString(locations_);
  c += "  }\n}\n";
  return c;
}

bool NginxServer::start() {
  if (!QFile::exists("/usr/sbin/nginx")) {
    error_ = "nginx is not installed (Debian: nginx-light; scripts/setup.sh installs it)";
    return false;
  }
  QDir().mkpath(dir_.filePath("tmp"));
  for (const File& f : files_) {
    const QString r = QString::fromStdString(f.repo), n = QString::fromStdString(f.name);
    const QString at = f.options.redirect ? "www/store/" + r + "/" + n : "www/datasets/" + r + "/resolve/main/" + n;
    if (!write(dir_.filePath(at), f.bytes)) return error_ = "cannot write " + at, false;
  }
  for (const auto& [repo, o] : repos_) {
    if (!o.listing) continue;
    nlohmann::json list = nlohmann::json::array();
    for (const File& f : files_)
      if (f.repo == repo)
        list.push_back({{"type", "file"},
                        {"path", f.name},
                        {"size", f.bytes.size()},
                        {"lfs",
                         {{"oid", (f.options.etag.isEmpty() ? sha256_hex(f.bytes) : f.options.etag).toStdString()},
                          {"size", f.bytes.size()}}}});
    write(dir_.filePath("www/api/datasets/" + QString::fromStdString(repo) + "/tree/main"),
          QByteArray::fromStdString(o.body.empty() ? list.dump() : o.body));
  }
  // The workers of a root nginx run as nobody; the folder is this user's (QTemporaryDir: 0700).
  QFile::setPermissions(dir_.path(), QFile::permissions(dir_.path()) | QFileDevice::ExeOther | QFileDevice::ReadOther);
  port_ = free_port();
  if (!write(dir_.filePath("nginx.conf"), config().toUtf8())) return error_ = "cannot write nginx.conf", false;
  if (!QProcess::startDetached("/usr/sbin/nginx", {"-c", dir_.filePath("nginx.conf"), "-p", dir_.path()}, {}, &pid_))
    return error_ = "cannot start nginx", false;
  // Ready when it answers; its error log says why when it does not.
  QElapsedTimer t;
  t.start();
  while (t.elapsed() < 10000) {
    if (run("curl -s -o /dev/null " + endpoint().toStdString() + "/tokamak-ready") == 0) return true;
    if (::kill(static_cast<pid_t>(pid_), 0) != 0) break;
    QThread::msleep(50);
  }
  QFile log(dir_.filePath("error.log"));
  log.open(QIODevice::ReadOnly);
  error_ = "nginx did not start: " + QString::fromLocal8Bit(log.readAll()).trimmed();
  return false;
}

void NginxServer::stop() {
  QFile pidfile(dir_.filePath("nginx.pid"));
  if (!pidfile.open(QIODevice::ReadOnly)) return;
  const pid_t pid = static_cast<pid_t>(pidfile.readAll().trimmed().toLong());
  pidfile.close();
  if (pid <= 0 || ::kill(pid, SIGTERM) != 0) return;
  for (int i = 0; i < 100 && ::kill(pid, 0) == 0; ++i) QThread::msleep(50);
  QFile::remove(pidfile.fileName());
}

QString NginxServer::endpoint() const { return "http://127.0.0.1:" + QString::number(port_); }

QStringList NginxServer::webhookBodies() const {
  QFile log(dir_.filePath("webhook.log"));
  if (!log.open(QIODevice::ReadOnly)) return {};
  return QString::fromUtf8(log.readAll()).split('\n', Qt::SkipEmptyParts);
}

QStringList NginxServer::requests() const {
  QFile log(dir_.filePath("access.log"));
  if (!log.open(QIODevice::ReadOnly)) return {};
  QStringList lines;
  for (const QString& l : QString::fromUtf8(log.readAll()).split('\n', Qt::SkipEmptyParts))
    if (!l.contains(" /tokamak-ready ")) lines << l;  // start()'s readiness probe
  return lines;
}

}  // namespace tokamak::test
