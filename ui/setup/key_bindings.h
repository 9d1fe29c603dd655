// KeyBindings: ties setup widgets to dotted config keys, so the panel reads and writes the whole Config
// through the engine's own key registry (set_key / config_keys) instead of one hand-written line per field.
// Combo boxes carry the value as item data, check boxes "true"/"false" (or their onValue/offValue
// properties, e.g. vocabulary padding 64/1; a tri-state box's partial state is its autoValue property, e.g.
// speed.pin_memory=auto), spin boxes their number, line edits their text. A bound widget's tooltip is its key's
// description (keyTip), the one `tokamak config --keys` prints.
#pragma once
#include <QMap>
#include <QObject>
#include <QString>
#include <QStringList>
#include <string>
#include <vector>

class QWidget;

namespace tokamak {
struct Config;
}

namespace tokamak::ui {

class KeyBindings : public QObject {
  Q_OBJECT
 public:
  explicit KeyBindings(QObject* parent = nullptr) : QObject(parent) {}

  void bind(const QString& key, QWidget* widget);
  QWidget* widget(const QString& key) const { return widgets_.value(key); }
  // Fills every bound widget from the config (no changed() while doing it).
  void load(const Config& config);
  // Applies every bound widget onto `config`, model.preset first so explicit sizes win. Values the engine
  // rejects (a learning rate that is not a number) are returned as problems naming the key.
  QStringList apply(Config& config) const;

  QString value(const QString& key) const;
  void setValue(const QString& key, const QString& value);

 Q_SIGNALS:
  void changed();

 private:
  QMap<QString, QWidget*> widgets_;
  bool loading_ = false;
};

// The tooltip of the widget bound to `key`: the key's description from the engine's registry, then the key.
QString keyTip(const QString& key);

// The first problem that setting `key` to `value` adds to `config` (its reason to be greyed out), or "" when
// none: the switch boxes' availability check, spelled once.
QString reasonAgainst(const Config& config, const QString& key, const QString& value, int cudaDevices);

}  // namespace tokamak::ui
