#!/usr/bin/env python3
"""Whole-command latency: `kb eval` of one bundle against the start-up of a
trivial Rust binary, measured in one run, interleaved, median of N runs.

    cargo build-kb        # kb as installed: release, linked statically
    python3 scripts/latency.py [N]

Each run is a process spawned and waited for, its output sent to /dev/null;
the trivial binary (an empty `main`, built here with `rustc -O`, as rustc
links it by default) is timed the same way, so the cost of spawning a process
is in both. The same empty `main` linked statically is timed too, to show
what linking alone changes.

Both binaries are timed as installed: copied into a fresh folder, as
`cargo install` copies them. Started from the file the linker wrote, kb took
more page faults than from a copy (433 against 419) and 5-10 % longer.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KB = os.path.join(ROOT, "target", "release", "kb")


def trivial_binary(tmp, name, flags=()):
    source = os.path.join(tmp, "trivial.rs")
    with open(source, "w") as f:
        f.write("fn main() {}\n")
    built = os.path.join(tmp, name + "-built")
    subprocess.run(["rustc", "-O", *flags, "-o", built, source], check=True)
    return installed(built, tmp, name)


def linking(binary):
    """How `binary` is linked: an ELF file with an interpreter is dynamic."""
    with open(binary, "rb") as f:
        elf = f.read()
    return "dynamically linked" if b"ld-linux" in elf[:4096] else "statically linked"


def installed(binary, tmp, name):
    """A copy of `binary` in `tmp`, as installing it makes one."""
    copy = os.path.join(tmp, name)
    shutil.copy2(binary, copy)
    return copy


def once(argv, devnull):
    start = time.perf_counter()
    pid = os.posix_spawn(
        argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1)]
    )
    _, status = os.waitpid(pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        sys.exit(f"{' '.join(argv)} failed")
    return elapsed


def positive(text):
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def main():
    parser = argparse.ArgumentParser(description=" ".join(__doc__.splitlines()[:2]))
    parser.add_argument("runs", nargs="?", type=positive, default=200,
                        help="how many times each command runs (default 200)")
    runs = parser.parse_args().runs
    if not os.path.exists(KB):
        sys.exit("build kb first: cargo build-kb")
    tmp = tempfile.mkdtemp()
    try:
        kb = installed(KB, tmp, "kb")
        commands = {
            "trivial Rust binary": [trivial_binary(tmp, "trivial")],
            "trivial, linked statically": [
                trivial_binary(tmp, "trivial-static", ["-C", "target-feature=+crt-static"])],
            "kb --version": [kb, "--version"],
            "kb eval examples/pending-insufficient-cpu.json": [
                kb, "eval", os.path.join(ROOT, "examples/pending-insufficient-cpu.json")],
            "kb eval examples/crash-loop-oomkilled.json": [
                kb, "eval", os.path.join(ROOT, "examples/crash-loop-oomkilled.json")],
        }
        times = {name: [] for name in commands}
        devnull = os.open(os.devnull, os.O_WRONLY)
        for name, argv in commands.items():  # warm the page cache
            once(argv, devnull)
        for _ in range(runs):
            for name, argv in commands.items():
                times[name].append(once(argv, devnull))
    finally:
        shutil.rmtree(tmp)
    floor = statistics.median(times["trivial Rust binary"])
    print(f"median of {runs} runs, interleaved; kb {linking(KB)}")
    for name, samples in times.items():
        median = statistics.median(samples)
        print(f"{name:50} {median * 1000:6.2f} ms  {median / floor:5.2f}x")


if __name__ == "__main__":
    main()
