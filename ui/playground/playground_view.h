// PlaygroundView: the studio's "Playground" page — try a stored run's checkpoint by hand. A prompt, temperature,
// top-k, top-p, tokens and seed; the text streams in token by token from a child `tokamak-engine generate --run …
// --json --stream --keep` (the same command a user types, so a crash in the model never reaches the window). With
// "side by side", a second checkpoint (another run, or another step of the same run: two rungs of a ladder) gets
// the same prompt, settings and seed at the same time. Every try is kept with its run in the run store and listed
// under "Kept with the run"; picking one shows its text again.
#pragma once
#include <QString>
#include <QWidget>
#include <vector>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QHBoxLayout;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QTreeWidget;

namespace tokamak::ui {

class ChildProcess;

class PlaygroundView : public QWidget {
  Q_OBJECT
 public:
  explicit PlaygroundView(QWidget* parent = nullptr);

  void setDatabase(const QString& path);  // "" = the default store

  // For tests and the screenshot: side 0 is the left one, 1 the right.
  QComboBox* runBox(int side) const { return sides_[side].run; }
  QComboBox* stepBox(int side) const { return sides_[side].step; }
  QPlainTextEdit* output(int side) const { return sides_[side].output; }
  QPlainTextEdit* prompt() const { return prompt_; }
  QCheckBox* sideBySide() const { return sideBySide_; }
  QDoubleSpinBox* temperature() const { return temperature_; }
  QSpinBox* topK() const { return topK_; }
  QDoubleSpinBox* topP() const { return topP_; }
  QSpinBox* tokens() const { return tokens_; }
  QSpinBox* seed() const { return seed_; }
  QPushButton* generateButton() const { return generate_; }
  QPushButton* stopButton() const { return stop_; }
  QTreeWidget* kept() const { return kept_; }
  QString message() const;
  bool isGenerating() const;
  // Tokens (stream events) shown so far on a side in the current or last try.
  int streamedEvents(int side) const { return sides_[side].events; }
  // Selects RUN (its uid) on a side, and its checkpoint at STEP (0: the newest); false when it is not listed.
  bool pick(int side, const QString& uid, qint64 step = 0);

 public Q_SLOTS:
  void refresh();   // the runs with checkpoints here, from the store
  void generate();  // the prompt on one side, or both
  void stop();

 Q_SIGNALS:
  void finished();  // every side of a try has ended

 protected:
  void showEvent(QShowEvent* e) override;

 private:
  struct Side {
    QComboBox* run = nullptr;
    QComboBox* step = nullptr;
    QPlainTextEdit* output = nullptr;
    ChildProcess* job = nullptr;
    int events = 0;
  };
  QHBoxLayout* buildSettingsRow();
  QWidget* buildSide(int side);
  QWidget* buildKeptBox();
  void fillSteps(int side);
  void fillKept();
  void showKept();
  void onSideFinished(int side, const QString& error);
  void updateButtons();

  QString db_;
  bool loaded_ = false;
  Side sides_[2];
  QPlainTextEdit* prompt_;
  QCheckBox* sideBySide_;
  QDoubleSpinBox* temperature_;
  QSpinBox* topK_;
  QDoubleSpinBox* topP_;
  QSpinBox* tokens_;
  QSpinBox* seed_;
  QPushButton* generate_;
  QPushButton* stop_;
  QLabel* message_;
  QTreeWidget* kept_;
  QWidget* right_;
};

}  // namespace tokamak::ui
