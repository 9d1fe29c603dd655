// SwitchesBox: every speed-up switch of the write-ups, grouped as they are discussed (precision, attention,
// kernels, optimizer, data, memory, multi-GPU). Each has a tooltip saying what it does and what the
// write-ups measured. A switch the chosen device cannot use is disabled, and the reason — the engine's own
// config_problems() line for that switch turned on — is shown under the groups and in its tooltip.
#pragma once
#include <QWidget>

class QFormLayout;
class QLabel;

namespace tokamak {
struct Config;
}

namespace tokamak::ui {

class KeyBindings;

class SwitchesBox : public QWidget {
  Q_OBJECT
 public:
  SwitchesBox(KeyBindings* keys, QWidget* parent = nullptr);

  // Enables what `config`'s device can use; cudaDevices is how many GPUs this machine has.
  void updateAvailability(const Config& config, int cudaDevices);
  QString unavailableText() const;

 private:
  void addComputeSwitches(QFormLayout* form);
  void addTrainingSwitches(QFormLayout* form);

  KeyBindings* keys_;
  QLabel* unavailable_;
};

}  // namespace tokamak::ui
