// SectionColumns: the setup's sections in a vertical scroll area, side by side in two columns when the area
// is wide enough for both, one under the other when it is not. So no width of the dock cuts a control at the
// right or hides one behind a horizontal scroll, and a wide screen still shows the whole setup at once.
// A section is any widget (a group box); adding one is one addSection() line.
#pragma once
#include <QList>
#include <QScrollArea>

class QHBoxLayout;
class QVBoxLayout;

namespace tokamak::ui {

class SectionColumns : public QScrollArea {
  Q_OBJECT
 public:
  explicit SectionColumns(QWidget* parent = nullptr);

  // Adds `section` at the end of `column` (0 = left, 1 = right when there are two). With one column the
  // sections follow each other in the order they were added, whatever their column.
  void addSection(QWidget* section, int column = 0);
  // The narrowest this area can be with `columns` side by side, vertical scroll bar and frame included.
  int widthFor(int columns) const;
  int columns() const { return columns_; }

 protected:
  void resizeEvent(QResizeEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void reflow();

  struct Section {
    QWidget* widget;
    int column;
  };
  QList<Section> sections_;
  QWidget* content_;
  QHBoxLayout* row_;
  QVBoxLayout* left_;
  QVBoxLayout* right_;
  int columns_ = 1;
};

}  // namespace tokamak::ui
