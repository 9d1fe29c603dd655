// Runs that belong together in a comparison: one experiment repeated with other seeds, runs whose names share
// a pattern, runs with the same tag. A group is drawn as one mean curve with a band (min–max, or ± one
// standard deviation) and gets a row of its own under the scoreboard, so "is this speed-up bigger than the
// noise between seeds" is answered by the picture. Plain inputs, so it is checked without a database; the
// studio's compare view and `tokamak runs compare --group` both use it.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace tokamak {

struct RunInfo;
struct Scoreboard;

// How runs are grouped. From text: "none", "seed" (configs equal once train.seed and name are left out),
// "name:REGEX" (runs whose name matches REGEX; the group is the first capture group, or the whole match
// when the pattern has none — so "(.*)-s\d+" groups "flash-s1" and "flash-s2" as "flash"), "tag" (runs
// whose first tag is the same). A run that fits no group (no match, no tag) stands alone.
struct GroupSpec {
  enum class By { kNone, kSeed, kName, kTag };
  By by = By::kNone;
  std::string pattern;  // kName's regular expression (ECMAScript)
};
// Throws a one-line Error naming a spec that is none of the above, or a pattern that does not compile.
GroupSpec parse_group_spec(const std::string& text);

struct GroupInput {
  std::string name;               // the run's name
  std::vector<std::string> tags;  // in the order the user gave them
  std::string config_json;
};
struct Grouping {
  std::vector<int> group;          // per run: its group, numbered in the order groups first appear
  std::vector<std::string> names;  // per group: what it is called ("flash", the tag, the first run's name)
  std::vector<int> size;           // per group: how many runs
};
GroupInput group_input(const RunInfo& run);  // its name, tags (from tags_json) and config
Grouping group_runs(const std::vector<GroupInput>& runs, const GroupSpec& spec);

// Runs that are one experiment but for the seed: equal configs once `train.seed` and `name` are left out.
// A group index per run, groups numbered in the order they first appear.
std::vector<int> group_by_config(const std::vector<std::string>& config_jsons);

// A group of runs as one curve: at each x that every run reported (steps: the same config logs the same
// steps), the mean, min, max and sample standard deviation (0 for a single run) of their values. `runs`
// holds each run's (x, value) points in x order.
struct Band {
  std::vector<double> x, mean, min, max, std;
};
Band band_over_runs(const std::vector<std::vector<std::pair<double, double>>>& runs);

// Sample standard deviation of the values that are not NaN (NaN for none, 0 for one).
double sample_std(const std::vector<double>& values);

// Adds a row per group of two or more runs to the scoreboard (Scoreboard::groups): the mean of its runs'
// tok/s, speedup, MFU and val losses, the largest peak memory, and the spread of tok/s.
void add_group_rows(Scoreboard& board, const Grouping& grouping);

}  // namespace tokamak
