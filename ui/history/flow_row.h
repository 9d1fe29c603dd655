// FlowRow: a row of controls that wraps onto a second line when its width is short, instead of setting the
// window's least width. The runs page's button bar and the compare view's choices are rows of this kind: at
// 1366×768 one line of either is wider than the page beside a two-column setup dock, and a page's least width
// decides the dock's (test_studio_layout's pagesKeepTheSetupLayout). Controls that grow horizontally (a filter
// box) take what their line leaves.
#pragma once
#include <QLayout>
#include <QList>
#include <QString>

namespace tokamak::ui {

class FlowRow : public QLayout {
 public:
  explicit FlowRow(QWidget* parent = nullptr);
  ~FlowRow() override;

  void addItem(QLayoutItem* item) override;
  int count() const override { return static_cast<int>(items_.size()); }
  QLayoutItem* itemAt(int index) const override { return items_.value(index); }
  QLayoutItem* takeAt(int index) override;
  Qt::Orientations expandingDirections() const override { return {}; }
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override;
  QSize minimumSize() const override;
  QSize sizeHint() const override;
  void setGeometry(const QRect& rect) override;

 private:
  int gap() const;
  // Places the items in `rect` (only measures with place false); returns the height they take.
  int arrange(const QRect& rect, bool place) const;

  QList<QLayoutItem*> items_;
};

// A label and its field as one item of a FlowRow, so that a wrap never parts them.
QWidget* labelled(const QString& label, QWidget* field);

}  // namespace tokamak::ui
