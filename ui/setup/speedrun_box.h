// SpeedrunBox: the speedrun's switches — the model and optimizer changes that make a run need fewer
// tokens to a target loss rather than more tokens per second: RMSNorm, ReLU², rotary positions, QK-norm,
// logit soft-capping, zero-initialised projections, Muon, the warm-up/stable/decay schedule; and, behind "More
// switches", Polar Express, NorMuon, U-net skips, value embeddings, head and embedding lrs, sequence and batch
// warm-ups. Each tooltip is the key's description or the choice row's help, from the engine (what it does and what
// the speedrun measured); a value that cannot run
// with the rest of the setup is greyed out with the engine's own reason. Also the time-to-target fields that
// sit under Steps (targetRow).
#pragma once
#include <QGroupBox>

class QLabel;
class QLayout;
class QSpinBox;
class QToolButton;

namespace tokamak {
struct Config;
}

namespace tokamak::ui {

class KeyBindings;

class SpeedrunBox : public QGroupBox {
  Q_OBJECT
 public:
  SpeedrunBox(KeyBindings* keys, QWidget* parent = nullptr);
  // Greys out the values that would add a problem to `config` (e.g. Muon with ZeRO-1), with the reason.
  void updateAvailability(const Config& config, int cudaDevices);

 private:
  KeyBindings* keys_;
  QToolButton* more_;  // opens the later switches' fields
};

// eval.target_val_loss and eval.stop_at_target side by side, bound to `keys`: the row under Steps. A row of
// its own, not beside Steps, so the training section stays narrow enough for one column at 1366×768.
QLayout* targetRow(KeyBindings* keys);

}  // namespace tokamak::ui
