// Which device each data-parallel rank takes (engine/torch/parallel/process_group.h): the launcher's LOCAL_RANK
// decides, and ranks that share a GPU are told so (Gloo then, not NCCL). Pure logic, so it is checked without a
// GPU and without starting ranks; the ranks themselves are test_dist's.
#include <QtTest>

#include <string>

#include "engine/torch/parallel/process_group.h"

using namespace tokamak;

class TestRankDevice : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void ranksTakeTheirLocalGpu() {
    // What the launcher's LOCAL_RANK decides (pure logic, so CI checks it without a GPU).
    DistEnv e;
    e.world_size = 4, e.local_world_size = 2, e.rank = 3, e.local_rank = 1;
    QCOMPARE(rank_device(c10::Device("cuda"), e, 2).str(), std::string("cuda:1"));
    QCOMPARE(rank_device(c10::Device("cuda:0"), e, 8).str(), std::string("cuda:1"));  // LOCAL_RANK wins
    QCOMPARE(rank_device(c10::Device("cuda"), e, 1).str(), std::string("cuda:0"));    // srun --gpus-per-task=1
    QCOMPARE(rank_device(c10::Device("cpu"), e, 2).str(), std::string("cpu"));
    QVERIFY(!ranks_share_gpus(c10::Device("cuda"), e, 2));
    QVERIFY(ranks_share_gpus(c10::Device("cuda"), e, 1));  // two ranks, one GPU: Gloo, not NCCL
    QVERIFY(!ranks_share_gpus(c10::Device("cpu"), e, 0));
    DistEnv one;
    QCOMPARE(rank_device(c10::Device("cuda:3"), one, 8).str(), std::string("cuda:3"));  // not data parallel
  }
};

QTEST_GUILESS_MAIN(TestRankDevice)
#include "test_rank_device.moc"
