// The scoreboard's time to target (engine/base/store/scoreboard.h): its speed-up over the baseline, "not
// reached" beside a best loss, a seed group's mean ± std, and how the time is written. Built from score inputs
// alone; the runs that reach a target are test_speedrun_train's.
#include <QtTest>

#include <cmath>
#include <string>

#include "engine/base/store/run_groups.h"
#include "engine/base/store/scoreboard.h"

using namespace tokamak;

class TestScoreboardTarget : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // The scoreboard: time to target and its speed-up over the baseline, "not reached" beside a best loss, and a
  // seed group's mean ± std over the runs that reached it.
  void scoreboardShowsTimeToTarget() {
    auto run = [](const std::string& label, double tok_s, double time, double best) {
      ScoreInput in;
      in.label = label, in.tok_s = {tok_s, tok_s}, in.best_val_loss = best, in.final_val_loss = best;
      in.target = 4.0, in.time_to_target_s = time, in.steps_to_target = std::isnan(time) ? kNaN : 100;
      in.config_json = "{\"eval\":{\"target_val_loss\":4.0}}";
      return in;
    };
    Scoreboard b = build_scoreboard({run("#1 base", 1000, 60, 3.9), run("#2 muon", 900, 30, 3.8),
                                     run("#3 muon", 900, 40, 3.85), run("#4 bad", 2000, kNaN, 4.4)},
                                    0);
    QCOMPARE(b.rows[1].target_speedup, 2.0);
    QVERIFY(std::isnan(b.rows[3].target_speedup));
    Grouping g;
    g.group = {0, 1, 1, 2};
    g.names = {"base", "muon", "bad"};
    g.size = {1, 2, 1};
    add_group_rows(b, g);
    QCOMPARE(static_cast<int>(b.groups.size()), 1);
    QCOMPARE(b.groups[0].mean.time_to_target_s, 35.0);
    QVERIFY(std::abs(b.groups[0].time_to_target_std - std::sqrt(50.0)) < 1e-9);
    QCOMPARE(b.groups[0].reached, 2);
    const QString text = QString::fromStdString(format_scoreboard_text(b));
    QVERIFY2(text.contains("time to target") && text.contains("60.0 s") && text.contains("not reached") &&
                 text.contains("2.00×") && text.contains("4.4000"),
             qPrintable(text));
    QCOMPARE(QString::fromStdString(format_time_to_target(150, 4.0)), QString("2.5 min"));
    QCOMPARE(QString::fromStdString(format_time_to_target(kNaN, 0)), QString("-"));
    // A board without targets keeps its columns.
    ScoreInput plain;
    plain.label = "#5", plain.tok_s = {1};
    QVERIFY(!QString::fromStdString(format_scoreboard_text(build_scoreboard({plain}, 0))).contains("target"));
  }
};

QTEST_GUILESS_MAIN(TestScoreboardTarget)
#include "test_scoreboard_target.moc"
