// KeyBindings: widget ↔ config key, through the engine's key registry (see key_bindings.h).
#include "ui/setup/key_bindings.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>
#include <QSpinBox>

#include <algorithm>

#include "engine/base/config/config.h"
#include "engine/base/util/error.h"

namespace tokamak::ui {

QString keyTip(const QString& key) {
  for (const KeyDoc& k : config_keys())
    if (QString::fromStdString(k.key) == key) return QString::fromStdString(k.help) + " (" + key + ")";
  return key;
}

void KeyBindings::bind(const QString& key, QWidget* w) {
  widgets_.insert(key, w);
  w->setObjectName(key);  // tests and QSettings find widgets by their key
  // The key's one description, which `tokamak config --keys` prints too; "tip" keeps it while an availability
  // check appends its reason to the tooltip.
  w->setToolTip(keyTip(key));
  w->setProperty("tip", w->toolTip());
  auto emitChanged = [this] {
    if (!loading_) Q_EMIT changed();
  };
  if (auto* c = qobject_cast<QComboBox*>(w)) {
    connect(c, &QComboBox::currentIndexChanged, this, emitChanged);
    connect(c, &QComboBox::editTextChanged, this, emitChanged);
  } else if (auto* b = qobject_cast<QCheckBox*>(w)) {
    connect(b, &QCheckBox::stateChanged, this, emitChanged);
  } else if (auto* s = qobject_cast<QSpinBox*>(w)) {
    connect(s, &QSpinBox::valueChanged, this, emitChanged);
  } else if (auto* e = qobject_cast<QLineEdit*>(w)) {
    connect(e, &QLineEdit::textChanged, this, emitChanged);
  }
}

QString KeyBindings::value(const QString& key) const {
  QWidget* w = widgets_.value(key);
  if (auto* c = qobject_cast<QComboBox*>(w)) {
    if (c->isEditable()) return c->currentText();
    return c->currentData().isValid() ? c->currentData().toString() : c->currentText();
  }
  if (auto* b = qobject_cast<QCheckBox*>(w)) {
    QVariant on = b->property("onValue"), off = b->property("offValue");
    if (b->isTristate() && b->checkState() == Qt::PartiallyChecked) return b->property("autoValue").toString();
    if (on.isValid()) return b->isChecked() ? on.toString() : off.toString();
    return b->isChecked() ? "true" : "false";
  }
  if (auto* s = qobject_cast<QSpinBox*>(w)) return QString::number(s->value());
  if (auto* e = qobject_cast<QLineEdit*>(w)) return e->text().trimmed();
  return {};
}

void KeyBindings::setValue(const QString& key, const QString& v) {
  QWidget* w = widgets_.value(key);
  const bool wasLoading = loading_;
  loading_ = true;
  if (auto* c = qobject_cast<QComboBox*>(w)) {
    int i = c->findData(v);
    if (i < 0) i = c->findText(v);
    if (i >= 0) c->setCurrentIndex(i);
    else if (c->isEditable()) c->setEditText(v);
  } else if (auto* b = qobject_cast<QCheckBox*>(w)) {
    QVariant on = b->property("onValue");
    if (b->isTristate() && v == b->property("autoValue").toString()) {
      b->setCheckState(Qt::PartiallyChecked);
      loading_ = wasLoading;
      return;
    }
    // A padding multiple other than 1 counts as "on" even if it is not the box's own value (e.g. 128).
    b->setChecked(on.isValid() ? v != b->property("offValue").toString() : v == "true");
  } else if (auto* s = qobject_cast<QSpinBox*>(w)) {
    s->setValue(v.toInt());
  } else if (auto* e = qobject_cast<QLineEdit*>(w)) {
    e->setText(v);
  }
  loading_ = wasLoading;
}

void KeyBindings::load(const Config& config) {
  loading_ = true;
  for (const KeyDoc& doc : config_keys(config)) {
    const QString key = QString::fromStdString(doc.key);
    if (widgets_.contains(key)) setValue(key, QString::fromStdString(doc.value));
  }
  loading_ = false;
}

QStringList KeyBindings::apply(Config& config) const {
  QStringList problems;
  QStringList keys = widgets_.keys();
  // The preset sets all sizes: it must come before the sizes that override it.
  if (keys.removeOne("model.preset")) keys.prepend("model.preset");
  for (const QString& key : keys) {
    try {
      set_key(config, key.toStdString(), value(key).toStdString());
    } catch (const Error& e) {
      problems << QString::fromStdString(e.message());
    }
  }
  return problems;
}

QString reasonAgainst(const Config& config, const QString& key, const QString& value, int cudaDevices) {
  Config on = config;
  try {
    set_key(on, key.toStdString(), value.toStdString());
  } catch (const Error& e) {
    return QString::fromStdString(e.message());
  }
  const auto before = config_problems(config, cudaDevices);
  for (const std::string& p : config_problems(on, cudaDevices))
    if (std::find(before.begin(), before.end(), p) == before.end()) return QString::fromStdString(p);
  return {};
}

}  // namespace tokamak::ui
