// SQLite connection and statement wrappers; every failure becomes a tokamak::Error that names the database
// file and says what to do about it.
#include "engine/base/store/sqlite_db.h"

#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "engine/base/util/error.h"
#include "engine/base/util/files.h"

namespace tokamak {

namespace {
const char* kDbHint = "pass another file with --db, or leave --db out for the default";
}

Db::Db(const std::string& path, Mode mode) : path_(path) {
  namespace fs = std::filesystem;
  if (is_directory(path))
    throw Error("run database '" + path + "' is a folder", "give the path of a file, e.g. " + path + "/runs.db");
  if (mode != Mode::create && !path_exists(path))
    throw Error("no run database at '" + path + "'", "check the path; `tokamak train --db " + path + "` creates one");
  fs::path parent = fs::path(path).parent_path();
  if (!parent.empty() && !is_directory(parent.string()))
    throw Error("cannot create run database '" + path + "': folder '" + parent.string() + "' does not exist",
                "create the folder first, or pick another --db");
  read_only_ = mode == Mode::read_only;
  int flags = read_only_ ? SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
                         : SQLITE_OPEN_READWRITE | (mode == Mode::create ? SQLITE_OPEN_CREATE : 0);
  std::string name = path;
  if (read_only_) {
    // As a URI, '?' and '#' in the path must be escaped; '%' first.
    std::string escaped;
    for (char c : fs::absolute(path).string())
      escaped += c == '%' ? "%25" : c == '?' ? "%3f" : c == '#' ? "%23" : std::string(1, c);
    const bool folder_writable = ::access(fs::absolute(path).parent_path().c_str(), W_OK) == 0;
    name = "file:" + escaped + (folder_writable ? "?mode=ro" : "?mode=ro&immutable=1");
  }
  int rc = sqlite3_open_v2(name.c_str(), &h_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = h_ ? sqlite3_errmsg(h_) : "out of memory";
    sqlite3_close(h_);
    h_ = nullptr;
    throw Error("cannot open run database '" + path + "': " + msg,
                "check that the file and its folder are writable, or pick another --db");
  }
  sqlite3_extended_result_codes(h_, 0);
}

Db::~Db() { sqlite3_close_v2(h_); }

void Db::fail(int rc, const std::string& doing) const {
  std::string msg = h_ ? sqlite3_errmsg(h_) : sqlite3_errstr(rc);
  switch (rc & 0xff) {
    case SQLITE_NOTADB:
      throw Error("'" + path_ + "' is not a Tokamak run database (not an SQLite file)", kDbHint);
    case SQLITE_CANTOPEN:
      throw Error("cannot open run database '" + path_ + "': " + msg,
                  "check that the file and its folder are writable, or pick another --db");
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      if (!why_ro_.empty()) throw Error("run database '" + path_ + "' cannot be written now: " + why_ro_, ro_hint_);
      throw Error("run database '" + path_ + "' cannot be written: " + msg,
                  "check the permissions of the file and its folder, or pick another --db");
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      throw Error("run database '" + path_ + "' stayed locked by another process for over 5 s (" + doing + ")",
                  "a long import or delete may hold it; try again when it is done");
    case SQLITE_FULL:
      throw Error("disk full while writing run database '" + path_ + "'", "free some space and try again");
    case SQLITE_CORRUPT:
      throw Error("run database '" + path_ + "' is damaged: " + msg,
                  "restore it from a backup; `tokamak runs export` may still read what is intact");
    case SQLITE_IOERR:
      throw Error("I/O error on run database '" + path_ + "' (" + doing + "): " + msg,
                  "check the disk and the file system the database is on");
    default:
      throw Error("run database '" + path_ + "': " + doing + ": " + msg,
                  "this is a bug in Tokamak if the file is intact; please report it");
  }
}

void Db::exec(const std::string& sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(h_, sql.c_str(), nullptr, nullptr, &err);
  sqlite3_free(err);
  if (rc != SQLITE_OK) fail(rc, "running " + sql.substr(0, 60));
}

int64_t Db::query_int(const std::string& sql) {
  Stmt s(*this, sql.c_str());
  return s.step() ? s.int64(0) : 0;
}

int64_t Db::last_insert_id() const { return sqlite3_last_insert_rowid(h_); }
int Db::changes() const { return sqlite3_changes(h_); }

void Db::transaction(const std::function<void()>& fn) {
  if (depth_ > 0) {  // the outer transaction commits, or rolls back when this throws through it
    ++depth_;
    try {
      fn();
    } catch (...) {
      --depth_;
      throw;
    }
    --depth_;
    return;
  }
  exec("BEGIN IMMEDIATE");
  depth_ = 1;
  try {
    fn();
  } catch (...) {
    depth_ = 0;
    sqlite3_exec(h_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  depth_ = 0;
  int rc = sqlite3_exec(h_, "COMMIT", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_exec(h_, "ROLLBACK", nullptr, nullptr, nullptr);
    fail(rc, "committing");
  }
}

Stmt::Stmt(Db& db, const char* sql) : db_(&db) {
  int rc = sqlite3_prepare_v2(db.handle(), sql, -1, &s_, nullptr);
  if (rc != SQLITE_OK) db.fail(rc, std::string("preparing ") + std::string(sql).substr(0, 60));
}

Stmt::~Stmt() { sqlite3_finalize(s_); }

Stmt::Stmt(Stmt&& other) noexcept : db_(other.db_), s_(other.s_) { other.s_ = nullptr; }

Stmt& Stmt::bind(int i, int64_t v) {
  sqlite3_bind_int64(s_, i, v);
  return *this;
}

Stmt& Stmt::bind(int i, double v) {
  if (std::isnan(v)) sqlite3_bind_null(s_, i);
  else sqlite3_bind_double(s_, i, v);
  return *this;
}

Stmt& Stmt::bind(int i, const std::string& v) {
  sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}

Stmt& Stmt::bind_null(int i) {
  sqlite3_bind_null(s_, i);
  return *this;
}

bool Stmt::step() {
  int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3_reset(s_);
  db_->fail(rc, std::string("running ") + std::string(sqlite3_sql(s_)).substr(0, 60));
}

void Stmt::reset() {
  sqlite3_reset(s_);
  sqlite3_clear_bindings(s_);
}

bool Stmt::is_null(int col) const { return sqlite3_column_type(s_, col) == SQLITE_NULL; }
int64_t Stmt::int64(int col) const { return sqlite3_column_int64(s_, col); }

double Stmt::real(int col) const {
  return is_null(col) ? std::numeric_limits<double>::quiet_NaN() : sqlite3_column_double(s_, col);
}

std::string Stmt::text(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s_, col));
  return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(s_, col))) : std::string();
}

}  // namespace tokamak
