#include "ui/setup/all_settings.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include "engine/base/config/choices.h"
#include "engine/base/util/error.h"

namespace tokamak::ui {
namespace {

enum Column { kKey, kValue, kType, kRange, kHelp };

// "[0, 1]", "(0, 1]", or the choices "warn | skip | rollback"; "" for free text.
QString range_of(const KeyDoc& k) {
  const std::vector<ChoiceInfo> rows = choices_of(k.key);
  if (!rows.empty()) {
    QStringList names;
    for (const ChoiceInfo& r : rows) names << QString::fromStdString(r.value);
    return names.join(" | ");
  }
  if (!k.ranged) return {};
  return QString("%1%2, %3%4")
      .arg(k.min_open ? "(" : "[")
      .arg(k.min, 0, 'g', 10)
      .arg(k.max, 0, 'g', 10)
      .arg(k.max_open ? ")" : "]");
}

// The choices a key's value cell offers in a combo box: a choice table's values, or a switch's two.
QStringList offered(const KeyDoc& k) {
  QStringList values;
  for (const ChoiceInfo& r : choices_of(k.key)) values << QString::fromStdString(r.value);
  if (values.isEmpty() && k.type == "bool") values = {"true", "false"};
  return values;
}

}  // namespace

AllSettingsDialog::AllSettingsDialog(const Config& config, QWidget* parent)
    : QDialog(parent), base_(config), result_(config) {
  setWindowTitle(tr("All settings"));
  auto* layout = new QVBoxLayout(this);
  filter_ = new QLineEdit;
  filter_->setPlaceholderText(tr("Filter by key or description"));
  filter_->setClearButtonEnabled(true);
  layout->addWidget(filter_);
  table_ = new QTableWidget(0, 5);
  table_->setHorizontalHeaderLabels({tr("Key"), tr("Value"), tr("Type"), tr("Range or choices"), tr("What it does")});
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setWordWrap(false);
  layout->addWidget(table_, 1);
  problem_ = new QLabel;
  problem_->setWordWrap(true);
  problem_->setObjectName("allSettingsProblem");
  layout->addWidget(problem_);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Apply | QDialogButtonBox::Cancel);
  layout->addWidget(buttons);
  connect(buttons->button(QDialogButtonBox::Apply), &QPushButton::clicked, this, [this] {
    if (apply()) accept();
  });
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(filter_, &QLineEdit::textChanged, this, &AllSettingsDialog::showOnly);
  fill();
  resize(1000, 600);
}

void AllSettingsDialog::fill() {
  const std::vector<KeyDoc> keys = config_keys(base_);
  table_->setRowCount(static_cast<int>(keys.size()));
  for (int row = 0; row < static_cast<int>(keys.size()); ++row) {
    const KeyDoc& k = keys[row];
    const auto text = [&](int column, const QString& s, bool editable = false) {
      auto* item = new QTableWidgetItem(s);
      if (!editable) item->setFlags(item->flags() & ~Qt::ItemIsEditable);
      item->setToolTip(s);
      table_->setItem(row, column, item);
    };
    text(kKey, QString::fromStdString(k.key));
    text(kType, QString::fromStdString(k.type));
    text(kRange, range_of(k));
    text(kHelp, QString::fromStdString(k.help));
    const QString value = QString::fromStdString(k.value);
    const QStringList choices = offered(k);
    text(kValue, value, choices.isEmpty());
    if (!choices.isEmpty()) {
      auto* box = new QComboBox;
      box->addItems(choices);
      if (!choices.contains(value)) box->addItem(value);  // a value the table does not list is shown as it is
      box->setCurrentText(value);
      table_->setCellWidget(row, kValue, box);
    }
  }
  table_->resizeColumnsToContents();
  table_->setColumnWidth(kHelp, 400);
}

int AllSettingsDialog::rowOf(const QString& key) const {
  for (int row = 0; row < table_->rowCount(); ++row)
    if (table_->item(row, kKey)->text() == key) return row;
  return -1;
}

QString AllSettingsDialog::valueAt(int row) const {
  if (auto* box = qobject_cast<QComboBox*>(table_->cellWidget(row, kValue))) return box->currentText();
  return table_->item(row, kValue)->text();
}

void AllSettingsDialog::setValueAt(int row, const QString& value) {
  if (auto* box = qobject_cast<QComboBox*>(table_->cellWidget(row, kValue))) box->setCurrentText(value);
  else table_->item(row, kValue)->setText(value);
}

QString AllSettingsDialog::problem() const { return problem_->text(); }

bool AllSettingsDialog::apply() {
  Config c = base_;
  const std::vector<KeyDoc> keys = config_keys(base_);
  // model.preset first, so that sizes given beside it win, as --set does.
  std::vector<std::pair<std::string, std::string>> changed;
  for (int row = 0; row < table_->rowCount(); ++row) {
    const std::string value = valueAt(row).toStdString();
    if (value == keys[row].value) continue;
    if (keys[row].key == "model.preset") changed.insert(changed.begin(), {keys[row].key, value});
    else changed.emplace_back(keys[row].key, value);
  }
  for (const auto& [key, value] : changed) {
    try {
      set_key(c, key, value);
    } catch (const Error& e) {
      problem_->setText(QString::fromStdString(e.what()));
      return false;
    }
  }
  // A value of the right type can still be out of its range or its table: the engine's own checks name it. Only
  // what names an edited key stops Apply (the devices this machine has are the setup panel's to say).
  for (const std::string& p : config_problems(c, 1 << 20))
    for (const auto& [key, value] : changed)
      if (p.rfind(key + " ", 0) == 0 || p.rfind(key + "=", 0) == 0) {
        problem_->setText(QString::fromStdString(p));
        return false;
      }
  result_ = c;
  problem_->clear();
  return true;
}

void AllSettingsDialog::showOnly(const QString& text) {
  for (int row = 0; row < table_->rowCount(); ++row) {
    const bool match = text.isEmpty() || table_->item(row, kKey)->text().contains(text, Qt::CaseInsensitive) ||
                       table_->item(row, kHelp)->text().contains(text, Qt::CaseInsensitive);
    table_->setRowHidden(row, !match);
  }
}

}  // namespace tokamak::ui
