#!/usr/bin/env python3
"""The floor plan, checked: the rooms' include graph has no loops, engine/core stays free of LibTorch, and the studio
(ui/, app/studio/) uses no LibTorch, directly or through an engine room outside engine/core: it links tokamak_core
alone (tests/studio_links_check.sh reads the links themselves).

Usage: include_graph_check.py SOURCE_ROOT TOP_FOLDER...   (CTest: include_graph_check, tests/CMakeLists.txt)

A room is a folder one level below a top folder (engine/model, ui/history, app/tokamak); inside engine/core, the
LibTorch-free library, one level further (engine/core/run). Deeper folders belong to their room
(engine/core/data/hub is engine/core/data), and a file directly in a top folder (a source beside ui/CMakeLists.txt)
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
# What the core must never include: LibTorch (torch, ATen, c10) and CUDA. Its reason to exist is that the
# `tokamak` front links no LibTorch and starts in milliseconds.
LIBTORCH_PREFIXES = ('torch/', 'ATen/', 'c10/', 'cuda')
CORE = 'engine/core'
# The studio's folders: every run trains in a tokamak-engine child, so they include what the core has and no more.
STUDIO = ('ui/', 'app/studio/')

HINT = ('hint: a room includes only rooms below it (docs/ARCHITECTURE.md, "Who may use whom"). Move the shared '
        'header to the lower room, or the function to the file that owns its idea; a forward declaration or '
        'two rooms merged into one hides the loop without breaking it.')


def room_of(path):
    parts = path.split('/')[:-1]
    depth = 3 if '/'.join(parts[:2]) == CORE else 2
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
            in_core = path.startswith(CORE + '/')
            in_studio = path.startswith(STUDIO)
            with open(os.path.join(root, path), encoding='utf-8', errors='replace') as f:
                for number, line in enumerate(f, 1):
                    angled = ANGLED.match(line)
                    if angled and in_core and angled.group(1).startswith(LIBTORCH_PREFIXES):
                        problems.append(f'{path}:{number}: engine/core includes <{angled.group(1)}>: '
                                        'the core is LibTorch- and CUDA-free')
                    if angled and in_studio and angled.group(1).startswith(LIBTORCH_PREFIXES):
                        problems.append(f'{path}:{number}: the studio includes <{angled.group(1)}>: it links no '
                                        'LibTorch and no CUDA')
                    quoted = QUOTED.match(line)
                    if not quoted:
                        continue
                    header = resolve(root, path, quoted.group(1))
                    if header is None:
                        continue
                    if in_core and header.startswith('engine/') and not header.startswith(CORE + '/'):
                        problems.append(f'{path}:{number}: engine/core includes {header}: the core uses no '
                                        'engine room outside engine/core')
                    if in_studio and header.startswith('engine/') and not header.startswith(CORE + '/'):
                        problems.append(f'{path}:{number}: the studio includes {header}: it uses engine/core alone '
                                        '(a run\'s LibTorch work is a tokamak-engine child\'s)')
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
          'between rooms, no loops; engine/core includes no LibTorch and no room above it; the studio includes no '
          'LibTorch and no engine room outside engine/core')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
