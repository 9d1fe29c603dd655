#!/usr/bin/env python3
"""The floor plan, checked: the rooms' include graph has no loops; engine/base and engine/fleet stay free of
LibTorch, base includes nothing above it and fleet only base; and the programs that link no LibTorch (the studio:
ui/, app/studio/; the `tokamak` front: app/tokamak/, app/cli/) use none, directly or through engine/torch
(tests/studio_links_check.sh reads the studio's links themselves).

Usage: include_graph_check.py SOURCE_ROOT TOP_FOLDER...   (CTest: include_graph_check, tests/CMakeLists.txt)

A room is a folder one level below a top folder (ui/history, app/tokamak); inside engine/, whose three folders are
the three libraries (base, fleet, torch), one level further (engine/base/run, engine/torch/model). Deeper folders
belong to their room (engine/fleet/hub/NAME/ would be engine/fleet/hub), and a file directly in a top folder (a source beside ui/CMakeLists.txt)
is the top folder's own room. An edge A -> B is a quoted #include in a file of A that names a file of B, as a path
from SOURCE_ROOT or from the including file's folder. Includes of rooms outside the given top folders still
count as edges, but only the given folders are read, so a loop through an unread folder is not seen: the
list grows as folders become loop-free.
"""
import collections
import os
import re
import sys

SOURCE_EXTENSIONS = ('.h', '.cpp', '.cu', '.cuh')
QUOTED = re.compile(r'\s*#\s*include\s*"([^"]+)"')
ANGLED = re.compile(r'\s*#\s*include\s*<([^>]+)>')
# What the LibTorch-free rooms must never include: LibTorch (torch, ATen, c10) and CUDA. Their reason to exist is
# that the `tokamak` front and the studio link no LibTorch and start in milliseconds.
LIBTORCH_PREFIXES = ('torch/', 'ATen/', 'c10/', 'cuda')
BASE, FLEET = 'engine/base/', 'engine/fleet/'
# Each LibTorch-free folder, and the engine rooms it may include: base only itself, fleet base and itself, and the
# programs without LibTorch (the studio, whose runs train in a tokamak-engine child; the front) both.
FREE = {BASE: (BASE,), FLEET: (BASE, FLEET), 'ui/': (BASE, FLEET), 'app/studio/': (BASE, FLEET),
        'app/tokamak/': (BASE, FLEET), 'app/cli/': (BASE,)}

HINT = ('hint: a room includes only rooms below it (docs/ARCHITECTURE.md, "Who may use whom"). Move the shared '
        'header to the lower room, or the function to the file that owns its idea; a forward declaration or '
        'two rooms merged into one hides the loop without breaking it.')


def room_of(path):
    parts = path.split('/')[:-1]
    depth = 3 if parts[:1] == ['engine'] and len(parts) > 2 else 2
    return '/'.join(parts[:depth])


def sources(root, top):
    for folder, dirs, names in os.walk(os.path.join(root, top)):
        dirs.sort()
        for name in sorted(names):
            if name.endswith(SOURCE_EXTENSIONS):
                yield os.path.relpath(os.path.join(folder, name), root).replace(os.sep, '/')


def resolve(root, including, name):
    for candidate in (name, os.path.join(os.path.dirname(including), name)):
        candidate = os.path.normpath(candidate).replace(os.sep, '/')
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return None  # a system or generated header


def loops(edges):
    """The strongly connected components with more than one room (Tarjan's, without recursion)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def main(argv):
    if len(argv) < 3:
        print('usage: include_graph_check.py SOURCE_ROOT TOP_FOLDER...', file=sys.stderr)
        return 2
    root, tops = argv[1], argv[2:]
    problems = []
    for top in tops:
        if not os.path.isdir(os.path.join(root, top)):
            problems.append(f'{top}: no such folder under {root}')
    edges = collections.defaultdict(dict)  # room -> {room it includes: one example "file -> header"}
    files = 0
    for top in tops:
        for path in sources(root, top):
            files += 1
            room = room_of(path)
            edges.setdefault(room, {})
            free = next((folder for folder in FREE if path.startswith(folder)), None)
            with open(os.path.join(root, path), encoding='utf-8', errors='replace') as f:
                for number, line in enumerate(f, 1):
                    angled = ANGLED.match(line)
                    if angled and free and angled.group(1).startswith(LIBTORCH_PREFIXES):
                        problems.append(f'{path}:{number}: {free} includes <{angled.group(1)}>: it is LibTorch- and '
                                        'CUDA-free')
                    quoted = QUOTED.match(line)
                    if not quoted:
                        continue
                    header = resolve(root, path, quoted.group(1))
                    if header is None:
                        continue
                    if free and header.startswith('engine/') and not header.startswith(FREE[free]):
                        problems.append(f'{path}:{number}: {free} includes {header}: it may use '
                                        f'{" and ".join(FREE[free])} alone (a run\'s LibTorch work is a '
                                        'tokamak-engine child\'s)')
                    if free and header.startswith('app/') and not header.startswith(('app/cli/', free)):
                        problems.append(f'{path}:{number}: {free} includes {header}: a program uses its own '
                                        'folder and app/cli alone')
                    target = room_of(header)
                    if target != room:
                        edges[room].setdefault(target, f'{path}:{number} includes "{quoted.group(1)}"')
    for component in loops(edges):
        problems.append('loop: ' + ' ⇄ '.join(component))
        for room in component:
            for target in sorted(edges[room]):
                if target in component:
                    problems.append(f'    {room} -> {target}: {edges[room][target]}')
    if problems:
        print('include_graph_check: the floor plan is broken', file=sys.stderr)
        for line in problems:
            print('  ' + line, file=sys.stderr)
        print(HINT, file=sys.stderr)
        return 1
    edge_count = sum(len(targets) for targets in edges.values())
    print(f'include_graph_check: {", ".join(tops)}: {files} files, {len(edges)} rooms, {edge_count} edges '
          'between rooms, no loops; engine/base, engine/fleet, the studio and the front include no LibTorch and no '
          'room above them')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
