// The GPT-2 tokenizer against OpenAI's tiktoken (run through tests/reference/tiktoken_ids.py): tricky
// vectors and the whole default corpus give the same ids; parallel encoding equals serial encoding; decoding
// round-trips; invalid UTF-8 is replaced as Python replaces it; both vocabulary forms load the same
// vocabulary; damaged vocabulary files fail with a message that names the file.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <map>
#include <random>
#include <thread>

#include "engine/base/data/bpe_regex.h"
#include "engine/base/data/sampled_text.h"
#include "engine/base/data/tokenizer.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "tests/support/test_support.h"

using tokamak::Tokenizer;
using Ids = std::vector<int32_t>;

namespace {

struct Vector {
  std::string name;
  std::string bytes;
};

std::string utf8(const std::u32string& s) { return QString::fromUcs4(s.data(), int(s.size())).toUtf8().toStdString(); }

// Random strings over characters the pattern treats differently: letters of many scripts, digits of
// several kinds (Nd, Nl, No), marks, every kind of space, apostrophes, emoji with ZWJ and selectors.
std::string fuzz(std::mt19937& rng, size_t length) {
  static const std::u32string pool =
      U"aZq09 '\t\n\r.,;!?-=_(){}<>\"'sStTlLvVrRdDmM\u00A0\u2009\u3000\u0085\u2028\u2029\u180E\u000B\u000C"
      U"\u001C\u00E9\u00DF\u00C6\u03A9\u03B1\u0416\u044F\u05D0\u0627\u0660\u0669\u06F1\u0915\u093F\u094D\u0966"
      U"\u096F\u0E01\u0E51\u4E2D\u6587\u3042\u30AB\uAC00\u1100\u0301\u0303\u00B2\u00BD\u2160\u216B\uFF11\uFF41"
      U"\u2500\u2502\u250C\u2518\u20AC\u00A3\u2211\u221E\U0001F600\U0001F44D\U0001F3FD\u200D\uFE0F\U0001F468"
      U"\U0001F469\U0001F1E9\U0001F1EA\u2764\U00010400\U0001D400\u00AD\u200B\uFEFF";
  std::u32string s;
  std::uniform_int_distribution<size_t> pick(0, pool.size() - 1);
  for (size_t i = 0; i < length; ++i) s += pool[pick(rng)];
  return utf8(s);
}

std::string repeat(const std::string& s, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += s;
  return out;
}

std::vector<Vector> tokenizer_vectors() {
  std::vector<Vector> v = {
      {"empty", ""},
      {"hello", "hello world"},
      {"contractions", "I'm you're he's she'd we'll they've can't don't it's y'all o'clock"},
      {"uppercase contractions", "I'M YOU'RE HE'S WE'LL THEY'VE CAN'T 'S 'LL 'Ll 'lL 'D 'T"},
      {"apostrophe runs", "'s's''s' '' ''' 's 'sss 'ss'"},
      {"curly apostrophe", utf8(U"don\u2019t it\u2019s")},
      {"endoftext as text", "a<|endoftext|>b <|endoftext|> <|endoftext|><|endoftext|>"},
      {"accents", utf8(U"na\u00EFve caf\u00E9 r\u00E9sum\u00E9 \u00C5ngstr\u00F6m stra\u00DFe")},
      {"greek cyrillic hebrew", utf8(U"\u0395\u03BB\u03BB\u03B7\u03BD\u03B9\u03BA\u03AC "
                                     U"\u0440\u0443\u0441\u0441\u043A\u0438\u0439 \u05E2\u05D1\u05E8\u05D9\u05EA")},
      {"arabic-indic digits", utf8(U"\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669 and "
                                   U"\u06F1\u06F2\u06F3 \u0627\u0644\u0639\u0631\u0628\u064A\u0629")},
      {"devanagari", utf8(U"\u0966\u0967\u0968\u0969 \u0926\u0947\u0935\u0928\u093E\u0917\u0930\u0940 "
                          U"\u0939\u093F\u0928\u094D\u0926\u0940")},
      {"other numbers", utf8(U"\u00B2\u00B3 \u00BD\u00BE \u2160\u2161\u216B \uFF11\uFF12 \u2460\u2461")},
      {"combining marks", utf8(U"e\u0301 n\u0303o a\u0308\u0304 \u0301start")},
      {"emoji", utf8(U"\U0001F44D \U0001F389\U0001F389 \U0001F600\U0001F603 \u2764\uFE0F \U0001F44B\U0001F3FD")},
      {"emoji zwj", utf8(U"\U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466 family "
                         U"\U0001F3F3\uFE0F\u200D\U0001F308 flag \U0001F1E9\U0001F1EA")},
      {"cjk", utf8(U"\u65E5\u672C\u8A9E\u306E\u30C6\u30AD\u30B9\u30C8 \u4E2D\u6587\u5B57\u7B26 \uD55C\uAD6D\uC5B4 "
                   U"\u3002\uFF0C")},
      {"runs of spaces", "a  b   c    d     e      f"},
      {"leading spaces", "     leading"},
      {"trailing spaces", "trailing    "},
      {"only spaces", "    "},
      {"space before newline", "a \nb  \n  c \n\n d"},
      {"tabs", "\tindented\t\tx\t \t y\t"},
      {"crlf", "line1\r\nline2\r\n\r\nline3\r\n"},
      {"vertical whitespace",
       "a\x0B"
       "b\x0C"
       "c\x1C"
       "d \x0B e"},
      {"nbsp", utf8(U"a\u00A0b \u00A0 c\u00A0\u00A0 \u00A0d")},
      {"thin space", utf8(U"10\u2009000 a \u2009 b\u2009\u2009c")},
      {"other spaces", utf8(U"a\u3000b\u2028c\u2029d\u0085e\u1680f\u202Fg\u205Fh \u3000 i")},
      {"mongolian vowel separator", utf8(U"a\u180Eb \u180E c\u180E")},
      {"zero-width", utf8(U"a\u200Bb\uFEFFc\u00ADd")},
      {"box drawing", utf8(U"\u250C\u2500\u2500\u2510\n\u2502ok\u2502\n\u2514\u2500\u2500\u2518 \u2550\u2550\u2550")},
      {"long numbers", "12345678901234567890 3.14159265358979323846 1,000,000 0x7fffffff 2024-05-20"},
      {"punctuation", "!!!??? ... --- === *** ~~~ @#$%^&*() [[]] {{}}"},
      {"code", "int main() {\n\treturn 0; // done\n}\nif (x != y && z >= 0) { a->b = c::d; }\n"},
      {"controls",
       [] {
         static const char c[] = "nul\0byte \x01\x02\x1b[31mred\x1b[0m\x7f";
         return std::string(c, sizeof c - 1);
       }()},
      {"long space run", std::string(300, ' ') + "x" + std::string(257, ' ')},
      {"long equals rule", std::string(500, '=')},
      {"long mixed rule", repeat("-=+", 300)},
      {"long digit run", repeat("1234567890", 50)},
      {"long letter run", std::string(1000, 'a') + " " + std::string(129, 'z') + "qx"},
      {"long word run", repeat("ab", 400) + " " + repeat("the", 200)},
      {"long newline run", std::string(200, '\n') + "x" + std::string(150, '\n')},
      {"invalid lone bytes", "\xff a \xfe b \x80\x80\x80 c \xc0\x80"},
      {"invalid truncated", "abc\xe2\x82 def\xf0\x9f\x98"},
      {"invalid surrogate", "\xed\xa0\x80 x \xed\xbf\xbf"},
      {"invalid above max", "\xf4\x90\x80\x80 \xf5\x80"},
      {"invalid next to literal fffd", "\xef\xbf\xbd\xff\xef\xbf\xbd"},
      {"invalid at end", "ok \xe2"},
  };
  std::mt19937 rng(20240520);
  for (int i = 0; i < 40; ++i) v.push_back({"fuzz " + std::to_string(i), fuzz(rng, 50 + 20 * i)});
  return v;
}

// ~1.5 MB of the vectors glued by newlines in every context the safe-split rule looks at.
std::string newline_torture(const std::vector<Vector>& vectors) {
  static const char* glue[] = {"\n",       "x\ny",        ".\n.",        " \nx",        "x\n ",       "\n\n",
                               "\r\n",     "a\n'",        "'\ns",        "9\n9",        "\n\t",       "x\n   y",
                               "x \r\n y", "\xc3\xa9\nx", "x\n\xc3\xa9", "x\n\xcc\x81", "\xff\n\xff", ")\n("};
  std::mt19937 rng(7);
  std::string s;
  while (s.size() < 1500000) {
    s += vectors[rng() % vectors.size()].bytes;
    s += glue[rng() % (sizeof glue / sizeof *glue)];
  }
  return s;
}

struct Reference {
  Ids ids;
  int replaced = 0;
};

std::string shell_quoted(const std::string& s) { return "'" + s + "'"; }

// Empty when equal; else where they part, with the tokens around it, for a readable failure.
QByteArray difference(const Ids& got, const Ids& want, const Tokenizer& tok) {
  if (got == want) return {};
  size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  auto around = [&](const Ids& ids) {
    QByteArray s;
    for (size_t k = i < 3 ? 0 : i - 3; k < std::min(ids.size(), i + 4); ++k)
      s += QByteArray::number(ids[k]) + "=" +
           QByteArray::fromStdString(tok.token_bytes(ids[k])).toPercentEncoding(" ") + " ";
    return s;
  };
  return "sizes " + QByteArray::number(qulonglong(got.size())) + " vs " + QByteArray::number(qulonglong(want.size())) +
         ", first difference at token " + QByteArray::number(qulonglong(i)) + "\n  ours:     " + around(got) +
         "\n  tiktoken: " + around(want);
}

Ids parse_ids(const std::string& text) {
  Ids ids;
  for (const QByteArray& w : QByteArray::fromStdString(text).simplified().split(' '))
    if (!w.isEmpty()) ids.push_back(w.toInt());
  return ids;
}

std::string need_asset(const std::string& name) {
  const std::string path = tokamak::test::asset(name);
  if (path.empty())
    QTest::qFail(("asset " + name + " is missing: run scripts/setup.sh first").c_str(), __FILE__, __LINE__);
  return path;
}

}  // namespace

class TestTokenizer : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase();
  void matches_tiktoken_data();
  void matches_tiktoken();
  void corpus_matches_tiktoken();
  void safe_splits_do_not_change_pieces();
  void parallel_equals_serial_data();
  void parallel_equals_serial();
  void parallel_reports_progress_and_cancels();
  void decode_round_trips();
  void open_utf8_tail_data();
  void open_utf8_tail();
  void sample_cut_inside_a_character_holds_it_back();
  void encoder_json_gives_same_vocabulary();
  void vocabulary_facts();
  void damaged_files_are_named_data();
  void damaged_files_are_named();

 private:
  std::string reference_command(const std::string& mode, const std::string& arg) const {
    return shell_quoted(tokamak::test::python()) + " " + shell_quoted(script_) + " " + shell_quoted(ranks_) + " " +
           mode + " " + shell_quoted(arg);
  }

  std::string script_;  // tests/reference/tiktoken_ids.py
  std::string ranks_;   // gpt2.tiktoken
  std::string corpus_;  // jargon.txt's bytes
  std::unique_ptr<Tokenizer> tok_;
  std::vector<Vector> vectors_ = tokenizer_vectors();
  std::map<std::string, Reference> refs_;  // vector name -> tiktoken's answer
  Ids corpus_ids_;                         // tiktoken's ids of the corpus
  QTemporaryDir tmp_;
};

void TestTokenizer::initTestCase() {
  QVERIFY(tmp_.isValid());
  ranks_ = need_asset("gpt2.tiktoken");
  if (ranks_.empty()) return;
  const std::string corpus_path = need_asset("jargon.txt");
  if (corpus_path.empty()) return;
  corpus_ = tokamak::read_file(corpus_path);
  // TOKAMAK_SOURCE_DIR, not __FILE__: ccache builds with relative paths, so __FILE__ may not lead anywhere.
  script_ = std::string(TOKAMAK_SOURCE_DIR) + "/tests/reference/tiktoken_ids.py";
  QVERIFY2(QFileInfo::exists(QString::fromStdString(script_)), script_.c_str());
  QVERIFY2(QFileInfo::exists(QString::fromStdString(tokamak::test::python())),
           "the venv python is missing: run scripts/setup.sh first");
  tok_ = std::make_unique<Tokenizer>(Tokenizer::from_tiktoken(ranks_));

  // One python run for all vectors: tiktoken's import costs more than the encoding.
  QJsonArray hex;
  for (const auto& v : vectors_) hex.append(QString::fromLatin1(QByteArray::fromStdString(v.bytes).toHex()));
  const std::string in = tmp_.filePath("vectors.json").toStdString();
  tokamak::write_file_atomically(in, QJsonDocument(hex).toJson().toStdString());
  std::string out;
  QCOMPARE(tokamak::test::run(reference_command("batch", in), &out), 0);
  const QJsonArray answers = QJsonDocument::fromJson(QByteArray::fromStdString(out)).array();
  QCOMPARE(answers.size(), static_cast<int>(vectors_.size()));
  for (size_t i = 0; i < vectors_.size(); ++i) {
    Reference r;
    for (const auto& id : answers[int(i)].toObject()["ids"].toArray()) r.ids.push_back(id.toInt());
    r.replaced = answers[int(i)].toObject()["replaced"].toInt();
    refs_[vectors_[i].name] = r;
  }
  QCOMPARE(tokamak::test::run(reference_command("encode", corpus_path), &out), 0);
  corpus_ids_ = parse_ids(out);
  QVERIFY(corpus_ids_.size() > 100000);
}

void TestTokenizer::matches_tiktoken_data() {
  QTest::addColumn<QByteArray>("input");
  QTest::addColumn<QByteArray>("name");
  for (const auto& v : vectors_)
    QTest::newRow(v.name.c_str()) << QByteArray::fromStdString(v.bytes) << QByteArray::fromStdString(v.name);
}

void TestTokenizer::matches_tiktoken() {
  QFETCH(QByteArray, input);
  QFETCH(QByteArray, name);
  const Reference& want = refs_.at(name.toStdString());
  tokamak::EncodeStats stats;
  const Ids got = tok_->encode(input.toStdString(), &stats);
  const QByteArray diff = difference(got, want.ids, *tok_);
  QVERIFY2(diff.isEmpty(), diff.constData());
  QCOMPARE(stats.invalid_utf8, size_t(want.replaced));  // counted exactly where Python put U+FFFD
}

void TestTokenizer::corpus_matches_tiktoken() {
  QElapsedTimer timer;
  timer.start();
  const Ids got = tok_->encode(corpus_);
  qInfo("encoded %.1f MB in %lld ms", corpus_.size() / 1e6, static_cast<long long>(timer.elapsed()));
  const QByteArray diff = difference(got, corpus_ids_, *tok_);
  QVERIFY2(diff.isEmpty(), diff.constData());
}

// The claim encode_parallel rests on: cutting at every safe split and encoding the parts alone changes
// nothing. Checked on the corpus and on a text full of the vectors' edge cases around newlines.
void TestTokenizer::safe_splits_do_not_change_pieces() {
  for (const std::string& text : {corpus_, newline_torture(vectors_)}) {
    Ids joined;
    size_t cuts = 0;
    for (size_t begin = 0; begin < text.size();) {
      size_t end = tokamak::bpe::next_safe_split(text, begin + 1);
      if (end == std::string::npos) end = text.size();
      const Ids part = tok_->encode(std::string_view(text).substr(begin, end - begin));
      joined.insert(joined.end(), part.begin(), part.end());
      begin = end;
      ++cuts;
    }
    QVERIFY2(cuts > 1000, "too few safe splits to prove anything");
    const QByteArray diff = difference(joined, tok_->encode(text), *tok_);
    QVERIFY2(diff.isEmpty(), diff.constData());
  }
}

void TestTokenizer::parallel_equals_serial_data() {
  QTest::addColumn<int>("threads");
  QTest::addColumn<bool>("torture");
  for (int t : {1, 2, 3, 8}) {
    QTest::addRow("corpus, %d threads", t) << t << false;
    QTest::addRow("newline torture, %d threads", t) << t << true;
  }
}

void TestTokenizer::parallel_equals_serial() {
  QFETCH(int, threads);
  QFETCH(bool, torture);
  const std::string text = torture ? newline_torture(vectors_) : corpus_;
  tokamak::EncodeStats serial_stats, parallel_stats;
  const Ids serial = tok_->encode(text, &serial_stats);
  const Ids parallel = tok_->encode_parallel(text, threads, {}, &parallel_stats);
  const QByteArray diff = difference(parallel, serial, *tok_);
  QVERIFY2(diff.isEmpty(), diff.constData());
  QCOMPARE(parallel_stats.invalid_utf8, serial_stats.invalid_utf8);
  if (!torture) QVERIFY(difference(parallel, corpus_ids_, *tok_).isEmpty());
}

void TestTokenizer::parallel_reports_progress_and_cancels() {
  for (int threads : {1, 2}) {
    size_t last = 0, calls = 0;
    bool monotonic = true, same_thread = true;
    const auto caller = std::this_thread::get_id();
    tok_->encode_parallel(corpus_, threads, [&](size_t done, size_t total) {
      monotonic = monotonic && done >= last && done <= total && total == corpus_.size();
      same_thread = same_thread && std::this_thread::get_id() == caller;
      last = done;
      ++calls;
      return true;
    });
    QVERIFY(calls >= (threads == 1 ? 2u : 1u));  // one thread: a call per chunk; more: timing decides
    QVERIFY(monotonic);
    QVERIFY2(same_thread, "progress must be called from the calling thread");
    QCOMPARE(last, corpus_.size());

    bool threw = false;
    try {
      tok_->encode_parallel(corpus_, threads, [](size_t, size_t) { return false; });
    } catch (const tokamak::Error& e) {
      threw = QString(e.what()).contains("cancel");
    }
    QVERIFY2(threw, "returning false from progress must cancel with a tokamak::Error");
  }
}

void TestTokenizer::decode_round_trips() {
  for (const auto& v : vectors_) {
    if (v.name.rfind("invalid", 0) == 0) continue;  // replaced bytes cannot come back
    QCOMPARE(QByteArray::fromStdString(tok_->decode(tok_->encode(v.bytes))), QByteArray::fromStdString(v.bytes));
  }
  QVERIFY(tok_->decode(corpus_ids_) == corpus_);
  // Invalid input decodes to what Python's replacement made of it.
  QCOMPARE(QByteArray::fromStdString(tok_->decode(tok_->encode("a\xff"
                                                               "b"))),
           QByteArray("a\xef\xbf\xbd"
                      "b"));
}

void TestTokenizer::open_utf8_tail_data() {
  QTest::addColumn<QByteArray>("text");
  QTest::addColumn<int>("open");
  QTest::newRow("ascii") << QByteArray("abc") << 0;
  QTest::newRow("empty") << QByteArray() << 0;
  QTest::newRow("euro, 1 of 3") << QByteArray("5 \xE2") << 1;
  QTest::newRow("euro, 2 of 3") << QByteArray("5 \xE2\x82") << 2;
  QTest::newRow("euro whole") << QByteArray("5 \xE2\x82\xAC") << 0;
  QTest::newRow("emoji, 3 of 4") << QByteArray("\xF0\x9F\x99") << 3;
  QTest::newRow("emoji whole") << QByteArray("\xF0\x9F\x99\x82") << 0;
  QTest::newRow("e-acute, 1 of 2") << QByteArray("na\xC3") << 1;
  // Ill-formed bytes are replaced where they stand, never held: no later byte makes them a character.
  QTest::newRow("overlong lead") << QByteArray("a\xC0") << 0;
  QTest::newRow("stray continuation") << QByteArray("a\x80") << 0;
  QTest::newRow("surrogate") << QByteArray("\xED\xA0") << 0;
  QTest::newRow("past U+10FFFF") << QByteArray("\xF4\x90") << 0;
  QTest::newRow("one continuation too many") << QByteArray("\xC3\xA9\x80") << 0;
}

void TestTokenizer::open_utf8_tail() {
  QFETCH(QByteArray, text);
  QFETCH(int, open);
  QCOMPARE(int(tokamak::utf8_open_tail(text.toStdString())), open);
}

// GPT-2's byte-level tokens split many characters between tokens (CJK, emoji): a sample cut after any number
// of them reads as a prefix of the whole text, never with a U+FFFD where the cut fell, and the token that
// completes a held-back character brings it.
void TestTokenizer::sample_cut_inside_a_character_holds_it_back() {
  const std::string text = "Hacker \xE4\xBD\xA0\xE5\xA5\xBD \xF0\x9F\x99\x82 na\xC3\xAFve 5\xE2\x82\xAC";
  const Ids ids = tok_->encode(text);
  const std::string replacement = "\xEF\xBF\xBD";
  int split = 0;
  size_t shown_before = 0;
  for (size_t n = 0; n <= ids.size(); ++n) {
    const Ids head(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n));
    const std::string raw = "> " + tok_->decode(head);
    const std::string shown = tokamak::sampled_text(*tok_, "> ", head);
    const size_t open = tokamak::utf8_open_tail(raw);
    split += open > 0;
    QVERIFY2(("> " + text).compare(0, shown.size(), shown) == 0, shown.c_str());
    QVERIFY2(shown.find(replacement) == std::string::npos, shown.c_str());
    QCOMPARE(shown.size(), raw.size() - open);
    QVERIFY(shown.size() >= shown_before);  // held back, then shown: never taken back
    shown_before = shown.size();
  }
  QVERIFY2(split >= 2, "the text has no character that GPT-2 splits between tokens");
  QCOMPARE(shown_before, text.size() + 2);
}

void TestTokenizer::encoder_json_gives_same_vocabulary() {
  QTemporaryDir dir;
  QCOMPARE(tokamak::test::run(reference_command("gpt2-files", dir.path().toStdString())), 0);
  const Tokenizer other =
      Tokenizer::from_encoder_json(dir.filePath("encoder.json").toStdString(), dir.filePath("vocab.bpe").toStdString());
  QCOMPARE(other.vocab_size(), tok_->vocab_size());
  for (int32_t id = 0; id < tok_->vocab_size(); ++id)
    if (other.token_bytes(id) != tok_->token_bytes(id)) QFAIL(qPrintable(QString("token %1 differs").arg(id)));
  QCOMPARE(other.fingerprint(), tok_->fingerprint());
  QVERIFY(difference(other.encode(corpus_), corpus_ids_, other).isEmpty());

  // Damaged files are named: merges out of order (ids no longer merge priorities), and JSON that is not.
  const std::string json = dir.filePath("encoder.json").toStdString(), bpe = dir.filePath("vocab.bpe").toStdString();
  QList<QByteArray> merges = QByteArray::fromStdString(tokamak::read_file(bpe)).split('\n');
  merges.swapItemsAt(5, 6);
  tokamak::write_file_atomically(bpe, merges.join('\n').toStdString());
  const std::string garbled = dir.filePath("garbled.json").toStdString();
  tokamak::write_file_atomically(garbled, "{\"a\": 0,");
  for (const auto& [encoder, named] : {std::pair{json, bpe}, std::pair{garbled, garbled}}) {
    QString what;
    try {
      Tokenizer::from_encoder_json(encoder, bpe);
    } catch (const tokamak::Error& e) {
      what = e.what();
    }
    QVERIFY2(what.contains(QString::fromStdString(named)) && what.contains("hint:"), qPrintable(what));
  }
}

void TestTokenizer::vocabulary_facts() {
  QCOMPARE(tok_->vocab_size(), 50257);
  QCOMPARE(QByteArray::fromStdString(tok_->token_bytes(Tokenizer::kEndOfText)), QByteArray("<|endoftext|>"));
  QCOMPARE(QByteArray::fromStdString(tok_->decode({31373, 995, Tokenizer::kEndOfText})),
           QByteArray("hello world<|endoftext|>"));
  QCOMPARE(&Tokenizer::gpt2(), &Tokenizer::gpt2());  // loaded once
  QCOMPARE(Tokenizer::gpt2().fingerprint(), tok_->fingerprint());
  QVERIFY_THROWS_EXCEPTION(tokamak::Error, tok_->decode({50257}));
  QVERIFY_THROWS_EXCEPTION(tokamak::Error, tok_->token_bytes(-1));
}

void TestTokenizer::damaged_files_are_named_data() {
  QTest::addColumn<QByteArray>("contents");  // "" with exists=false: no file at all
  QTest::addColumn<bool>("exists");
  QTest::addColumn<QString>("says");
  const QByteArray good = QByteArray::fromStdString(tokamak::read_file(ranks_));
  const QList<QByteArray> lines = good.split('\n');
  QTest::newRow("missing") << QByteArray() << false << "does not exist";
  QTest::newRow("empty") << QByteArray() << true << "no tokens";
  QTest::newRow("not base64") << QByteArray("not*base64 0\n") << true << "line 1";
  QTest::newRow("no rank") << QByteArray("IQ==\n") << true << "line 1";
  QTest::newRow("rank not a number") << (lines.mid(0, 5).join('\n') + "\nJA== x5\n") << true << "line 6";
  QTest::newRow("binary junk") << QByteArray("\x00\x01\xff\xfe garbage", 14) << true << "line 1";
  QTest::newRow("gap in ranks") << (lines.mid(0, 300).join('\n') + "\n" + lines.mid(301).join('\n')) << true
                                << "no token of rank 300";
  QTest::newRow("repeated rank") << (lines.mid(0, 300).join('\n') + "\n" + lines[299] + "\n") << true
                                 << "appears twice";
  QTest::newRow("bytes missing") << lines.mid(0, 100).join('\n') << true << "single byte";
}

void TestTokenizer::damaged_files_are_named() {
  QFETCH(QByteArray, contents);
  QFETCH(bool, exists);
  QFETCH(QString, says);
  const std::string path = tmp_.filePath("damaged.tiktoken").toStdString();
  std::remove(path.c_str());
  if (exists) tokamak::write_file_atomically(path, contents.toStdString());
  QString what;
  try {
    Tokenizer::from_tiktoken(path);
  } catch (const tokamak::Error& e) {
    what = e.what();
  }
  QVERIFY2(what.contains(QString::fromStdString(path)), qPrintable("the error must name the file: " + what));
  QVERIFY2(what.contains(says), qPrintable(what));
  QVERIFY2(what.contains("hint:"), qPrintable("the error must say how to recover: " + what));
}

QTEST_GUILESS_MAIN(TestTokenizer)
#include "test_tokenizer.moc"
