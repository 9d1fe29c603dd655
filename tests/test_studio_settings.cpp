// File ▸ All settings…: every key of the registry is a row, with its value in force, so a key without a hand-made
// control (health.spike_action, the loss scale's) is reachable; Apply sets values the way --set does and names a
// refused one in one line, leaving the setup as it was; the filter finds a key by name or description.
#include <QComboBox>
#include <QLineEdit>
#include <QTableWidget>
#include <QtTest>

#include "engine/base/config/config.h"
#include "ui/setup/all_settings.h"

using namespace tokamak;
using namespace tokamak::ui;

class TestStudioSettings : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void everyKeyIsARowWithItsValue() {
    Config c;
    c.train.steps = 1234;
    AllSettingsDialog dialog(c);
    const std::vector<KeyDoc> keys = config_keys(c);
    QCOMPARE(dialog.table()->rowCount(), static_cast<int>(keys.size()));
    for (const KeyDoc& k : keys) {
      const int row = dialog.rowOf(QString::fromStdString(k.key));
      QVERIFY2(row >= 0, k.key.c_str());
      QCOMPARE(dialog.valueAt(row), QString::fromStdString(k.value));
    }
    QCOMPARE(dialog.valueAt(dialog.rowOf("train.steps")), QString("1234"));
    // A choice key offers its table in a combo box; a switch its two values.
    auto* spike = qobject_cast<QComboBox*>(dialog.table()->cellWidget(dialog.rowOf("health.spike_action"), 1));
    QVERIFY(spike);
    QVERIFY(spike->findText("rollback") >= 0 && spike->findText("warn") >= 0);
    auto* fused = qobject_cast<QComboBox*>(dialog.table()->cellWidget(dialog.rowOf("speed.fused_adamw"), 1));
    QVERIFY(fused && fused->count() == 2);
  }

  void applySetsKeysAsSetDoes() {
    Config c;
    AllSettingsDialog dialog(c);
    dialog.setValueAt(dialog.rowOf("health.spike_action"), "skip");
    dialog.setValueAt(dialog.rowOf("speed.loss_scale_growth"), "4");
    dialog.setValueAt(dialog.rowOf("train.steps"), "77");
    QVERIFY2(dialog.apply(), qPrintable(dialog.problem()));
    QCOMPARE(name_of(dialog.config().health.spike_action), std::string("skip"));
    QCOMPARE(dialog.config().speed.loss_scale_growth, 4.0);
    QCOMPARE(dialog.config().train.steps, int64_t{77});
    QCOMPARE(dialog.config().model.n_layer, c.model.n_layer);  // an untouched key stays
  }

  void aRefusedValueIsOneLineAndNothingChanges() {
    Config c;
    AllSettingsDialog dialog(c);
    dialog.setValueAt(dialog.rowOf("train.steps"), "many");
    QVERIFY(!dialog.apply());
    QVERIFY2(dialog.problem().contains("train.steps") && !dialog.problem().contains('\n'), qPrintable(dialog.problem()));
    QCOMPARE(dialog.config().train.steps, c.train.steps);
    // Of the right type but out of its range: the engine's own range check names it.
    dialog.setValueAt(dialog.rowOf("train.steps"), "100");
    dialog.setValueAt(dialog.rowOf("optimizer.beta1"), "1.5");
    QVERIFY(!dialog.apply());
    QVERIFY2(dialog.problem().startsWith("optimizer.beta1 must be in"), qPrintable(dialog.problem()));
    QCOMPARE(dialog.config().train.steps, c.train.steps);  // nothing of the refused Apply was kept
  }

  void theFilterFindsByNameOrDescription() {
    AllSettingsDialog dialog(Config{});
    dialog.filter()->setText("spike");
    int shown = 0;
    for (int row = 0; row < dialog.table()->rowCount(); ++row) shown += !dialog.table()->isRowHidden(row);
    QVERIFY(shown >= 1 && shown < dialog.table()->rowCount());
    QVERIFY(!dialog.table()->isRowHidden(dialog.rowOf("health.spike_action")));
    QVERIFY(dialog.table()->isRowHidden(dialog.rowOf("train.steps")));
    dialog.filter()->clear();
    QVERIFY(!dialog.table()->isRowHidden(dialog.rowOf("train.steps")));
  }
};

QTEST_MAIN(TestStudioSettings)
#include "test_studio_settings.moc"
