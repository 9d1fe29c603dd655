// MainWindow: the studio's frame and nothing more. The setup dock, the live plots, the samples dock and the
// runs page do the work; the run controller owns the training run's child process. The window wires their
// signals, keeps the Start/Pause/Resume/Stop actions in step with the run, remembers layout and setup
// (QSettings), and asks before closing over a running run or a "sample now", then closes once they ended.
#pragma once
#include <QJsonObject>
#include <QMainWindow>
#include <QStringList>
#include <functional>

#include "engine/base/config/config.h"
#include "engine/base/run/events.h"

class QAction;
class QComboBox;
class QDockWidget;
class QLabel;
class QTabWidget;

namespace tokamak::ui {

class RunsPanel;
class LiveRuns;
class HostRecorders;
struct LiveRun;

class LivePlots;
class RunController;
class RunStatus;
class SamplesPanel;
class SetupPanel;
class SlurmSubmit;
class SweepActions;
class PlanView;
class PlaygroundView;
struct RunBatch;

class QueueDock;
class LadderCompare;
class StudioNotices;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // The run store both the runs page and new runs use; "" = the default database.
  void setDatabase(const QString& path);
  // Asked when the window is closed during a run or a "sample now": CloseStop = stop it and close once it ended
  // (within kCloseGraceMs: then it is killed); CloseKeepTraining = close now, the run trains on and the next
  // start re-attaches it; CloseCancel = stay. Tests answer it themselves (true/false: stop/cancel).
  enum CloseAnswer { CloseCancel = 0, CloseStop = 1, CloseKeepTraining = 2 };
  void setCloseQuestion(std::function<int()> ask) { closeQuestion_ = std::move(ask); }

  SetupPanel* setupPanel() const { return setup_; }
  LivePlots* livePlots() const { return plots_; }
  SamplesPanel* samplesPanel() const { return samples_; }
  RunsPanel* runsPanel() const { return runs_; }
  RunController* runController() const { return controller_; }
  RunStatus* runStatus() const { return status_; }
  QAction* startAction() const { return start_; }
  QAction* pauseAction() const { return pause_; }
  QAction* resumeAction() const { return resume_; }
  QAction* stopAction() const { return stop_; }
  QAction* sampleAction() const { return sample_; }
  SlurmSubmit* slurmSubmit() const { return slurm_; }
  SweepActions* sweeps() const { return sweeps_; }
  PlanView* planView() const { return plan_; }
  PlaygroundView* playground() const { return playground_; }
  LiveRuns* liveRuns() const { return live_; }
  QComboBox* liveRunPicker() const { return livePicker_; }
  QString failureText() const;  // the banner shown after a failed or crashed run ("" when none)
  // Puts these configs (JSON) on this computer's queue ("Repeat with seeds"): they run one after another in
  // the queue's worker, outliving the studio, and the live page follows each as it starts when it is free.
  bool queueRuns(const QStringList& configJsons);
  QueueDock* queueDock() const { return queue_; }
  // "Run ladder…" without its dialogs: every rung × seed of the ladder file on the queue.
  bool runLadder(const QString& path, const QList<qint64>& seeds);
  bool compareLadder(const QString& ladder);  // the runs page compares the ladder's runs
  void showLivePage();
  void showRunsPage();
  // The first start's layout (no saved one): most of `available` (a screen's free area), and a setup dock
  // as wide as its sections need, in two columns when that leaves the plots kMinPlotsWidth and half the window.
  void fitTo(const QRect& available);

 public Q_SLOTS:
  void startRun();
  void pauseRun();
  void resumeRun();
  void stopRun();
  void sampleRun();

 protected:
  void closeEvent(QCloseEvent* event) override;

 public:
  static constexpr int kCloseGraceMs = 30000;
  static constexpr int kMinPlotsWidth = 660;  // three columns of MetricPlot's 220-pixel minimum

 private:
  void buildFailureBanner();
  void buildPages();
  void buildActions();
  void buildDocks();
  void connectRunSignals();
  void connectPlan();
  void connectSlurm();
  void connectPanels();
  void onBatch(const RunBatch& batch);
  // A stall is seen only by whoever follows the run: the studio tells the person (notifications.json's way).
  void notifyStall(const AlertEvent& alert);
  void onRunStarted(const RunStart& start);
  void onRunEnded(const EndEvent& end);
  void updateActions();
  void finishClosing();
  void showLiveRuns();  // the picker, and the first live run attached when the studio starts
  void recordOthers();
  void attachTo(const LiveRun& run);
  void pickLiveRun(int index);
  void followRun(const QString& uid, bool onlyWhenFree);        // a queue run on the live page
  void showFailure(const QString& status, const QString& why);  // status: failed | crashed
  void followSlurmJob(const QString& host, const QString& tokamak, const QJsonObject& job, const Config& config);
  void loadRunConfig(const QString& configJson, const QString& resumeFrom);
  void saveSettings() const;
  void restoreSettings();

  SetupPanel* setup_;
  LivePlots* plots_;
  SamplesPanel* samples_;
  RunsPanel* runs_;
  RunController* controller_;
  RunStatus* status_;
  QTabWidget* pages_;
  QWidget* failure_;
  QLabel* failureText_;
  QDockWidget* setupDock_;
  QDockWidget* samplesDock_;
  QAction *start_, *pause_, *resume_, *stop_, *sample_;
  SlurmSubmit* slurm_;
  SweepActions* sweeps_;
  PlanView* plan_;
  PlaygroundView* playground_;
  LiveRuns* live_;
  HostRecorders* recorders_;  // a host's live runs the live page does not show, recorded all the same
  QComboBox* livePicker_;
  QAction* livePickerAction_;
  QString pickedUid_, pickedHost_, pickedTokamak_;  // attached once the current reader has ended
  bool autoAttach_ = true;  // at start, until the user starts or picks a run: follow the first live run found
  std::function<int()> closeQuestion_;
  bool closing_ = false;          // the user asked to close; the window closes when the run has ended
  bool keepSavedSetup_ = false;   // the saved setup did not load: it is not written over on close
  QString savedSetup_;            // the saved setup as read: keys this version left out are written back with it
  QStringList leftOutKeys_;
  QueueDock* queue_;              // this computer's queue (ui/queue)
  LadderCompare* ladderCompare_;  // the runs page's compare view kept on a ladder
  StudioNotices* notices_;        // the studio's own notices (a local run's stall)
};

}  // namespace tokamak::ui
