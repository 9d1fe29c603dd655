// Control of a run through its folder: how `tokamak runs control ID pause|resume|stop|sample` reaches a run
// that has no parent to read its stdin (a detached run, a run whose studio was closed). Each command is one
// file in the run folder's control/ (written to a hidden temporary, then renamed, so a reader never sees half
// a command); the run takes them in the order they were written and deletes each. Files rather than one file
// or a named pipe: two commands in quick succession are both kept, and no writer ever blocks on a run that
// is not reading.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tokamak {

// The commands a run understands through its folder.
bool is_control_command(const std::string& command);  // pause | resume | stop | sample

// Writes COMMAND into DIR (a run's control/ folder); throws an Error naming the folder when it cannot.
void write_control_command(const std::string& dir, const std::string& command);

// Takes (reads and deletes) the commands waiting in DIR, oldest first.
std::vector<std::string> take_control_commands(const std::string& dir);

// Deletes the commands in DIR written before BEFORE_NS (nanoseconds since the epoch, the clock their names
// carry), leaving later ones for take_control_commands. Returns how many it deleted.
int drop_control_commands_before(const std::string& dir, int64_t before_ns);

}  // namespace tokamak
