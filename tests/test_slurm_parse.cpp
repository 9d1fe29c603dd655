// What tokamak reads from Slurm and writes for it, without a cluster: scontrol's job lines and what a person is
// told of them, Slurm's time limits both ways, and the job script's choice of MASTER_ADDR (run by bash against a
// fake scontrol). The cluster itself is test_slurm's (servers tier).
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <utility>

#include "engine/fleet/remote/slurm_queue.h"
#include "engine/fleet/remote/slurm_script.h"
#include "tests/support/cli_runner.h"
#include "tests/support/test_support.h"

using namespace tokamak;

class TestSlurmParse : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // scontrol's job line as Slurm 22.05 prints it (taken from the fixture's Slurm; a value with spaces in
  // WorkDir), and what a person is told.
  void parsesScontrolJobLines() {
    const std::string line =
        "JobId=4 JobName=wrap UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901757 Nice=0 "
        "Account=(null) QOS=(null) JobState=RUNNING Reason=None Dependency=(null) Requeue=1 Restarts=2 BatchFlag=1 "
        "Reboot=0 ExitCode=0:0 RunTime=00:00:02 TimeLimit=01:00:00 TimeMin=N/A Partition=debug "
        "ReqNodeList=(null) NodeList=n1 BatchHost=n1 NumNodes=1 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* "
        "WorkDir=/tmp/my runs StdOut=/tmp/sl/slurm-4.out Power= \n";
    const SlurmJob j = parse_scontrol_job(line);
    QCOMPARE(j.id, 4L);
    QCOMPARE(QString::fromStdString(j.state), QString("RUNNING"));
    QCOMPARE(QString::fromStdString(j.nodes), QString("n1"));
    QCOMPARE(j.restarts, 2);
    QCOMPARE(QString::fromStdString(parse_scontrol_pairs(line)["WorkDir"]), QString("/tmp/my runs"));
    QCOMPARE(QString::fromStdString(describe_slurm_job(j)),
             QString("running on n1 for 00:00:02 of 01:00:00, requeued 2 time(s)"));
    SlurmJob p = j;
    p.state = "PENDING", p.reason = "Resources", p.restarts = 0;
    QCOMPARE(QString::fromStdString(describe_slurm_job(p)),
             QString("pending: Resources (the nodes it asks for are busy)"));
    SlurmJob f = j;
    f.state = "FAILED", f.exit_code = 1;
    QCOMPARE(QString::fromStdString(describe_slurm_job(f)), QString("ended: failed (exit code 1)"));
    QVERIFY(f.ended() && !f.pending() && !f.running());
    QVERIFY(!test::error_of([] { parse_scontrol_job("slurm_load_jobs error: Invalid job id specified"); }).isEmpty());
  }
  void parsesTimeLimits_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("seconds");
    QTest::newRow("HH:MM:SS") << "04:00:00" << 4 * 3600;
    QTest::newRow("MM:SS") << "10:30" << 630;
    QTest::newRow("minutes") << "90" << 5400;
    QTest::newRow("D-HH:MM:SS") << "1-02:00:00" << 26 * 3600;
    QTest::newRow("D-HH") << "2-12" << 60 * 3600;
    QTest::newRow("not a time") << "4h" << -1;
    QTest::newRow("zero") << "00:00:00" << -1;
    QTest::newRow("too many parts") << "1:2:3:4" << -1;
  }

  void parsesTimeLimits() {
    QFETCH(QString, text);
    QFETCH(int, seconds);
    if (seconds < 0) {
      const QString why = test::error_of([&] { parse_slurm_time(text.toStdString()); });
      QVERIFY2(why.contains("is not a Slurm time"), qPrintable(why));
      return;
    }
    QCOMPARE(parse_slurm_time(text.toStdString()), seconds);
    QCOMPARE(parse_slurm_time(format_slurm_time(seconds)), seconds);  // what the script holds reads back
  }
  // MASTER_ADDR is the first node's name when it resolves, else its NodeAddr from Slurm (NodeName=n1,
  // NodeAddr=127.0.0.1 on a one-node cluster): the job script's lines run with a stand-in scontrol.
  void masterAddrFallsBackToNodeAddr() {
    QTemporaryDir fakeBin;
    QFile fake(fakeBin.filePath("scontrol"));
    QVERIFY(fake.open(QIODevice::WriteOnly));
    fake.write(
        "#!/bin/sh\n"
        "case \"$1 $2\" in\n"
        "  'show hostnames') echo \"$3\" | cut -d, -f1 ;;\n"
        "  'show node') echo \"NodeName=$3 Arch=x86_64 NodeAddr=127.0.0.1 NodeHostName=$3 Version=22.05\" ;;\n"
        "esac\n");
    fake.close();
    fake.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    for (const auto& [nodes, expected] :
         {std::pair<QString, QString>{"n1-nowhere-tokamak,n2",
                                      "127.0.0.1 (NodeAddr of n1-nowhere-tokamak, whose name "
                                      "does not resolve)"},
          std::pair<QString, QString>{"localhost", "localhost (the first node's name)"}}) {
      const test::CliResult sh = test::run_program(
          "bash", {"-c", QString::fromStdString(slurm_master_addr_lines()) + "echo \"$MASTER_ADDR|$master\""},
          test::environment_with(
              {"PATH=" + fakeBin.path() + ":" + qEnvironmentVariable("PATH"), "SLURM_JOB_NODELIST=" + nodes}),
          30000);
      QCOMPARE(sh.code, 0);
      const QString out = sh.out_text().trimmed();
      QCOMPARE(out, expected.section(' ', 0, 0) + "|" + expected);
    }
  }
};

QTEST_GUILESS_MAIN(TestSlurmParse)
#include "test_slurm_parse.moc"
