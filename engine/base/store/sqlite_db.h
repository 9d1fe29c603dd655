// A thin RAII layer over the SQLite C API: one connection, prepared statements, transactions, and the
// translation of SQLite's result codes into tokamak::Error with a hint. sqlite3.h stays out of this header so
// that code using the store does not need SQLite's include path.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace tokamak {

class Db;

// A prepared statement. Binding is 1-based like SQLite's; columns are 0-based. Reset before reuse.
class Stmt {
 public:
  Stmt(Db& db, const char* sql);
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  Stmt(Stmt&& other) noexcept;

  Stmt& bind(int i, int64_t v);
  Stmt& bind(int i, int v) { return bind(i, static_cast<int64_t>(v)); }
  Stmt& bind(int i, double v);  // NaN binds NULL: the store uses NaN for "not reported"
  Stmt& bind(int i, const std::string& v);
  Stmt& bind_null(int i);
  // True while there is a row to read; false when done. Throws on error.
  bool step();
  void run() {
    step();
    reset();
  }
  void reset();

  bool is_null(int col) const;
  int64_t int64(int col) const;
  double real(int col) const;  // NULL reads as NaN
  std::string text(int col) const;

 private:
  Db* db_;
  sqlite3_stmt* s_ = nullptr;
};

class Db {
 public:
  // read_only: for a database whose file or folder this process cannot write (a read-only copy, another
  // user's store). With the folder read-only SQLite cannot make its -shm file, so the file is opened as
  // immutable: nobody can be writing it.
  enum class Mode { create, existing, read_only };
  Db(const std::string& path, Mode mode = Mode::create);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  void exec(const std::string& sql);
  int64_t query_int(const std::string& sql);  // first column of the first row, 0 when no row
  int64_t last_insert_id() const;
  int changes() const;
  // BEGIN IMMEDIATE ... COMMIT around fn; ROLLBACK when fn throws. IMMEDIATE takes the write lock up front,
  // so a writer waits on busy_timeout instead of failing on a read-to-write upgrade. Called inside another
  // transaction, fn joins it: several steps that must land together (settling a trial) compose.
  void transaction(const std::function<void()>& fn);

  const std::string& path() const { return path_; }
  bool read_only() const { return read_only_; }
  // Why a store that could be written was opened read-only (a newer schema, an older queue worker on it), and
  // what to do: a write then fails with these instead of SQLite's "attempt to write a readonly database".
  void set_read_only_reason(const std::string& reason, const std::string& hint) { why_ro_ = reason, ro_hint_ = hint; }
  const std::string& read_only_reason() const { return why_ro_; }
  const std::string& read_only_hint() const { return ro_hint_; }
  sqlite3* handle() { return h_; }
  // Throws the Error for result code rc (with the connection's message), naming what was being done.
  [[noreturn]] void fail(int rc, const std::string& doing) const;

 private:
  sqlite3* h_ = nullptr;
  std::string path_;
  bool read_only_ = false;
  std::string why_ro_, ro_hint_;
  int depth_ = 0;  // transactions open on this connection
};

}  // namespace tokamak
