// Setup ▸ All settings…: every key of the engine's registry in one table (key, value in force, type, range or
// choices, description), generated from config_keys() and choices_of(), so a key reaches the studio the day it is
// added to the registry, with no UI code of its own. Values are edited in place (choices and switches in a combo
// box, numbers and text as typed); Apply sets each changed key through set_key(), the same path as `--set`, and a
// value the engine refuses is named in one line with nothing applied.
#pragma once
#include <QDialog>
#include <QString>

#include "engine/base/config/config.h"

class QLabel;
class QLineEdit;
class QTableWidget;

namespace tokamak::ui {

class AllSettingsDialog : public QDialog {
  Q_OBJECT
 public:
  explicit AllSettingsDialog(const Config& config, QWidget* parent = nullptr);

  // The config with every edited value set: valid once apply() returned true.
  const Config& config() const { return result_; }
  // Sets the edited values onto a copy of the config it was opened with; false (and the reason in problem())
  // when the engine refuses one.
  bool apply();
  QString problem() const;

  QTableWidget* table() const { return table_; }
  QLineEdit* filter() const { return filter_; }
  int rowOf(const QString& key) const;  // -1 when the table has no such key
  QString valueAt(int row) const;
  void setValueAt(int row, const QString& value);

 private:
  void fill();
  void showOnly(const QString& text);

  Config base_, result_;
  QTableWidget* table_;
  QLineEdit* filter_;
  QLabel* problem_;
};

}  // namespace tokamak::ui
