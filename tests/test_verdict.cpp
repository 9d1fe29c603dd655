// The verdicts between groups of runs against SciPy (tests/reference/welch_reference.py, run at test time on the
// fixtures below): Welch's difference, 95% interval, p-value and degrees of freedom, and the seeds-needed formula;
// "not resolved" when the interval spans zero; nothing to say for a group of one or without spread; and the
// scoreboard's groups carrying them against the baseline's group, in its text and Markdown.
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/base/store/scoreboard.h"
#include "engine/base/store/verdict.h"
#include "engine/base/util/files.h"
#include "tests/support/reference_json.h"

using namespace tokamak;

namespace {

// Seeds of tok/s, losses and times as the runs page sees them: a clear speed-up, a difference within the noise,
// unequal sizes and spreads, and a loss difference in the fourth decimal.
const std::vector<std::pair<std::vector<double>, std::vector<double>>> kFixtures = {
    {{3210, 3185, 3240}, {3580, 3612, 3555}},
    {{3210, 3185, 3240, 3170}, {3230, 3160, 3260}},
    {{95.5, 81.2, 109.8, 92.4, 98.0}, {46.3, 52.9, 39.7}},
    {{5.6123, 5.6201, 5.6088}, {5.6047, 5.6119, 5.6150, 5.6031, 5.6102, 5.6077}},
};

}  // namespace

class TestVerdict : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void welchAgreesWithScipy() {
    QTemporaryDir dir;
    nlohmann::json in = nlohmann::json::array();
    for (const auto& [a, b] : kFixtures) in.push_back({{"a", a}, {"b", b}});
    write_file_atomically(dir.filePath("in.json").toStdString(), in.dump());
    const nlohmann::json ref =
        test::run_reference("welch_reference.py", dir.filePath("in.json").toStdString(), dir.filePath("out.json").toStdString());
    QCOMPARE(ref.size(), kFixtures.size());
    for (size_t i = 0; i < kFixtures.size(); ++i) {
      const auto v = welch_verdict(kFixtures[i].first, kFixtures[i].second);
      QVERIFY(v);
      const nlohmann::json& r = ref[i];
      const auto close = [](double ours, double theirs) { return std::fabs(ours - theirs) <= 1e-9 * std::max(1.0, std::fabs(theirs)); };
      QVERIFY2(close(v->diff, r["diff"]), qPrintable(QString("case %1 diff %2").arg(i).arg(v->diff)));
      QVERIFY2(close(v->low, r["low"]) && close(v->high, r["high"]),
               qPrintable(QString("case %1: %2 to %3 against %4 to %5").arg(i).arg(v->low).arg(v->high)
                              .arg(r["low"].get<double>()).arg(r["high"].get<double>())));
      QVERIFY2(close(v->p, r["p"]), qPrintable(QString("case %1 p %2 against %3").arg(i).arg(v->p).arg(r["p"].get<double>())));
      QVERIFY2(close(v->df, r["df"]), qPrintable(QString("case %1 df %2").arg(i).arg(v->df)));
      QCOMPARE(v->seeds_needed, r["seeds"].get<int>());
      QCOMPARE(v->resolved, r["low"].get<double>() > 0 || r["high"].get<double>() < 0);
    }
    // The fixtures hold both verdicts: the clear speed-up resolved, the noise not.
    QVERIFY(welch_verdict(kFixtures[0].first, kFixtures[0].second)->resolved);
    QVERIFY(!welch_verdict(kFixtures[1].first, kFixtures[1].second)->resolved);
  }

  void notResolvedSaysTheSeedsThatWouldResolveIt() {
    const auto v = welch_verdict(kFixtures[1].first, kFixtures[1].second);
    QVERIFY(v && v->low < 0 && v->high > 0);
    const QString text = QString::fromStdString(verdict_text(*v));
    QVERIFY2(text.contains(": not resolved (") && text.endsWith(" seeds a group would resolve it)"), qPrintable(text));
    QVERIFY2(text.contains(QString(" seeds").prepend(QString::number(v->seeds_needed))), qPrintable(text));
    QVERIFY(QString::fromStdString(verdict_text(*welch_verdict(kFixtures[0].first, kFixtures[0].second)))
                .endsWith(": resolved"));
  }

  // The same means (a switch that changes no number, seed for seed): nothing to resolve, whatever the seeds.
  void theSameMeansAreNotResolvedByMoreSeeds() {
    const auto v = welch_verdict({5.61, 5.62, 5.60}, {5.62, 5.60, 5.61});
    QVERIFY(v && !v->resolved);
    QCOMPARE(v->seeds_needed, 0);
    QVERIFY2(QString::fromStdString(verdict_text(*v)).endsWith(": not resolved (the means are the same)"),
             verdict_text(*v).c_str());
  }

  // A difference far inside the noise (fp32 rounding between two kernels) needs absurdly many seeds: said so.
  void aNegligibleDifferenceSaysSo() {
    const auto v = welch_verdict({6.9848, 6.9010, 7.0702}, {6.9848001, 6.9010002, 7.0702001});
    QVERIFY(v && !v->resolved && v->seeds_needed > 10000);
    QVERIFY2(QString::fromStdString(verdict_text(*v)).endsWith("would need over 10,000 seeds a group)"),
             verdict_text(*v).c_str());
  }

  // No test without two values a side or without spread, and it says why; a group that lost a run is never
  // resolved, however clear its survivors look. Nothing at all only where no run has the value.
  void nothingToSayWithoutTwoRunsOrSpread() {
    const auto untested = [](const std::optional<Verdict>& v) { return v && !v->tested && !v->resolved; };
    QVERIFY(untested(welch_verdict({3200}, {3500, 3510})));
    QVERIFY(QString::fromStdString(verdict_text(*welch_verdict({3200}, {3500, 3510})))
                .endsWith("not resolved (a group needs 2 runs with a value or more)"));
    QVERIFY(untested(welch_verdict({3200, 3200}, {3500, 3500})));
    QVERIFY(QString::fromStdString(verdict_text(*welch_verdict({3200, 3200}, {3500, 3500})))
                .endsWith("not resolved (neither group varies)"));
    QVERIFY(untested(welch_verdict({3200, NAN}, {3500, 3510})));  // NaN: a run without the value (one left)
    const auto lost = welch_verdict({3200, 3210, NAN}, {3500, 3510});
    QVERIFY(lost && lost->tested && !lost->resolved && lost->low > 0);
    QVERIFY(!welch_verdict({NAN, NAN}, {NAN}));
  }

  // Two groups of three seeds: the scoreboard's second group carries its verdicts against the baseline's.
  void theScoreboardSaysItAgainstTheBaselinesGroup() {
    std::vector<ScoreInput> in;
    const double base[] = {3210, 3185, 3240}, fast[] = {3580, 3612, 3555};
    for (int i = 0; i < 6; ++i) {
      ScoreInput s;
      s.label = "#" + std::to_string(i + 1) + (i < 3 ? " base" : " fast");
      s.tok_s = {1000, i < 3 ? base[i] : fast[i - 3], i < 3 ? base[i] : fast[i - 3]};
      s.final_val_loss = 5.6 + 0.001 * i;
      s.config_json = "{}";
      in.push_back(s);
    }
    Scoreboard board = build_scoreboard(in, 0);
    Grouping g;
    g.group = {0, 0, 0, 1, 1, 1}, g.names = {"base", "fast"}, g.size = {3, 3};
    add_group_rows(board, g);
    QCOMPARE(int(board.groups.size()), 2);
    QVERIFY(board.groups[0].holds_baseline && !board.groups[0].tok_s_verdict);
    QVERIFY(board.groups[1].tok_s_verdict && board.groups[1].tok_s_verdict->resolved);
    QVERIFY(board.groups[1].tok_s_verdict->diff > 300);
    QVERIFY(board.groups[1].val_loss_verdict);
    QVERIFY(!board.groups[1].target_verdict);  // nobody had a target
    const QString text = QString::fromStdString(format_scoreboard_text(board));
    QVERIFY2(text.contains("against the baseline's group (Welch's t-test") && text.contains("fast ×3") &&
                 text.contains(": resolved"),
             qPrintable(text));
    const QString md = QString::fromStdString(format_scoreboard_markdown(board));
    QVERIFY2(md.contains("Against the baseline's group") && md.contains("| fast ×3 | tok/s | +"), qPrintable(md));
  }
};

QTEST_GUILESS_MAIN(TestVerdict)
#include "test_verdict.moc"
