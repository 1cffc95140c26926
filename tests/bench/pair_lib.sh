# pair_lib.sh: sourced by the paired benchmarks (bench_startup.sh, bench_cases.sh) from the repository root.
# pair_setup BASE_REV: builds this tree Release in build-bench/ (new=build-bench/servesim) and the baseline, a
# Release build of BASE_REV in a temporary worktree removed on exit, unless BASE_BIN names one already built
# (old=...). Sets rt to "chrt -f 50" when RT=1 (every measurement of both binaries at a real-time priority, so that
# other load on a shared machine does not enter the wall times; root). pair_time FIELD BIN ARGS...: prints
# "wall_seconds value" of one run, the clock read in python3 around posix_spawn and waitpid (the shell's own forks
# stay out of it), value the getrusage field FIELD of the child (ru_minflt, ru_maxrss).
pair_setup() {
  cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DSERVESIM_TESTS=OFF >/dev/null
  cmake --build build-bench -j"$(nproc)" --target servesim >/dev/null
  new=build-bench/servesim
  pair_wt=""
  if [ -n "${BASE_BIN:-}" ]; then
    old=$BASE_BIN
  else
    pair_wt=$(mktemp -d /tmp/servesim_base_XXXXXX)
    git worktree add -q --detach "$pair_wt" "$1"
    cmake -S "$pair_wt" -B "$pair_wt/build" -DCMAKE_BUILD_TYPE=Release -DSERVESIM_TESTS=OFF >/dev/null
    cmake --build "$pair_wt/build" -j"$(nproc)" --target servesim >/dev/null
    old=$pair_wt/build/servesim
  fi
  rt=""
  if [ "${RT:-0}" = 1 ]; then rt="chrt -f 50"; fi
}

pair_cleanup() {
  if [ -n "${pair_wt:-}" ]; then
    git worktree remove --force "$pair_wt" >/dev/null 2>&1 || true
    rm -rf "$pair_wt"
  fi
}

pair_time() {
  field=$1
  shift
  # shellcheck disable=SC2086
  $rt python3 -c '
import os, resource, shutil, sys, time
field, argv = sys.argv[1], sys.argv[2:]
path = shutil.which(argv[0]) or argv[0]
null = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_WRONLY, 0) for fd in (1, 2)]
t = time.perf_counter()
pid = os.posix_spawn(path, argv, os.environ, file_actions=null)
os.waitpid(pid, 0)
t = time.perf_counter() - t
print("%.4f %d" % (t, getattr(resource.getrusage(resource.RUSAGE_CHILDREN), field)))' "$field" "$@"
}
