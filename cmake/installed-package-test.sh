#!/usr/bin/env bash
# The install ctests (cmake/RopecheckInstall.cmake): what `cmake --install` and the .deb ship
# must work on a machine that has neither the source tree nor the build tree.
#
#   installed-package-test.sh install SOURCE_DIR BUILD_DIR WORK_DIR [PYTHON]
#     cmake --install with DESTDIR into WORK_DIR/stage, prefix WORK_DIR/prefix: fails if a file
#     lands outside the prefix (an absolute install destination), if an expected file is
#     missing, or if any installed file names the source tree (a compiled-in path). Leaves
#     the install in WORK_DIR/prefix.
#   installed-package-test.sh run-hidden SOURCE_DIR BUILD_DIR WORK_DIR [PYTHON]
#     with the source and build trees hidden, runs the installed `ropecheck gate` (quick, with
#     its fixtures), `apply` and `audit` on a small input, and (given PYTHON) the installed
#     Python package.
#   installed-package-test.sh deb SOURCE_DIR BUILD_DIR WORK_DIR [PYTHON]
#     builds the .deb with cpack, unpacks it with dpkg -x into a throwaway root, and runs its
#     gate (and its Python package) with the trees hidden.
#
# Hiding needs a private mount namespace (unshare --mount, as root): an empty tmpfs is mounted
# over each tree, so a path compiled into a binary finds nothing, and the work folder is
# reached through a bind mount outside them. Without unshare (or, for `deb`, without dpkg-dev)
# the test exits 77, which ctest reports as skipped.
set -euo pipefail

skip=77
cmake=${CMAKE_COMMAND:-cmake} cpack=${CPACK_COMMAND:-cpack}
fail() { echo "FAIL: $*" >&2; exit 1; }

mode=$1 source_dir=$(realpath "$2") build_dir=$(realpath "$3") work=$4 python=${5:-}
mkdir -p "$work"
work=$(realpath "$work")
prefix_dir=prefix  # the install's prefix, under WORK_DIR

# Can this process make a private mount namespace and mount in it?
can_hide() { unshare --mount --propagation private sh -c 'mount -t tmpfs none /mnt' 2> /dev/null; }

# Runs this script with MODE and the same arguments in a new mount namespace, passing it VIEW:
# a fresh folder outside both trees (removed afterwards) at which it shows WORK_DIR.
in_hidden_namespace() {
  local stage_mode=$1 view code=0
  view=$(mktemp -d "${TMPDIR:-/tmp}/ropecheck-installed.XXXXXX")
  unshare --mount --propagation private \
    bash "$0" "$stage_mode" "$source_dir" "$build_dir" "$work" "$python" "$view" || code=$?
  rmdir "$view"
  return "$code"
}

# In the namespace: show WORK_DIR at VIEW, then hide the trees behind empty file systems.
hide_trees() {
  local view=$1 tree
  mount --bind "$work" "$view"
  for tree in "$build_dir" "$source_dir"; do  # the build tree first: it may lie in the source
    if [ -d "$tree" ]; then mount -t tmpfs -o size=1m,mode=0755 ropecheck-hidden "$tree"; fi
  done
  cd "$view"  # no relative path may reach the old working directory
  [ ! -e "$source_dir/CMakeLists.txt" ] || fail "the source tree is still visible"
  [ ! -e "$build_dir/CMakeCache.txt" ] || fail "the build tree is still visible"
}

# A .npy file (format 1.0) of DESCR and SHAPE ("4,1,8") from Python's struct code and values.
write_npy() {
  "${python:-python3}" - "$@" << 'PY'
import struct, sys
path, descr, shape, code, values = sys.argv[1:]
dims = ", ".join(shape.split(","))
header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s,), }" % (descr, dims)
header += " " * (63 - (10 + len(header)) % 64) + "\n"
data = [float(v) if code == "f" else int(v) for v in values.split()]
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
    f.write(struct.pack("<%d%s" % (len(data), code), *data))
PY
}

# The gate on one built-in kernel, quick, with the fixtures: it passes, having judged fixture
# values (an install whose fixtures went missing would stop, or judge none).
check_gate() {
  local ropecheck=$1 out=$2
  "$ropecheck" gate --kernel cache_simd --profile quick --json "$out/gate.json" > "$out/gate.txt" \
    || fail "$ropecheck gate exited $?: $(tail -n 3 "$out/gate.txt")"
  "${python:-python3}" - "$out/gate.json" << 'PY' || fail "the gate judged no fixture value"
import json, sys
report = json.load(open(sys.argv[1]))
values = sum(f["values"] for f in report["fixtures"])
print(f"gate: {report['verdict']}, {len(report['fixtures'])} fixture checks, {values} values")
sys.exit(0 if report["verdict"] == "pass" and values > 0 else 1)
PY
}

# apply, then audit: a built-in kernel's output on a small input, judged by `audit`.
check_audit() {
  local ropecheck=$1 out=$2
  echo '{"head_dim": 8, "rope_theta": 10000}' > "$out/spec.json"
  write_npy "$out/x.npy" "<f4" "4,2,8" f "$(seq -s ' ' -7.5 0.25 8.25)"
  write_npy "$out/pos.npy" "<i8" "4" q "0 1 7 1000"
  "$ropecheck" apply --kernel cache_simd --spec "$out/spec.json" --x "$out/x.npy" \
    --pos "$out/pos.npy" --out "$out/y.npy" || fail "$ropecheck apply exited $?"
  "$ropecheck" audit --spec "$out/spec.json" --x "$out/x.npy" --pos "$out/pos.npy" \
    --y "$out/y.npy" --json "$out/audit.json" > "$out/audit.txt" \
    || fail "$ropecheck audit exited $?: $(tail -n 3 "$out/audit.txt")"
  echo "audit: pass"
}

# The Python package installed in SITE: imported from there (not from a copy elsewhere on the
# path), its reference and audit run.
check_python() {
  local site=$1
  env -u PYTHONHOME PYTHONPATH="$site" PYTHONDONTWRITEBYTECODE=1 "$python" -s - "$site" << 'PY' \
    || fail "the Python package in $site failed"
import sys
import numpy as np
import ropecheck
site = sys.argv[1]
assert ropecheck.__file__.startswith(site + "/"), f"imported {ropecheck.__file__}, not {site}"
spec = {"head_dim": 8, "rope_theta": 10000}
x = np.linspace(-2, 2, 4 * 2 * 8, dtype=np.float32).reshape(4, 2, 8)
positions = np.array([0, 1, 7, 1000], dtype=np.int64)
y = ropecheck.reference(x, positions, spec, out_dtype="float32")
report = ropecheck.audit(x, positions, y, spec)
assert report.passed, str(report)
print(f"python: {ropecheck.__file__}: audit {report.verdict}")
PY
}

case "$mode" in
install)
  stage=$work/stage prefix=$work/$prefix_dir
  rm -rf "$stage" "$prefix"
  DESTDIR=$stage "$cmake" --install "$build_dir" --prefix "$prefix" > "$work/install.log"
  outside=$(find "$stage" \( -type f -o -type l \) -not -path "$stage$prefix/*")
  [ -z "$outside" ] || fail "installed outside the prefix $prefix:"$'\n'"$outside"
  mv "$stage$prefix" "$prefix"  # where a plain install would have put it
  rm -rf "$stage"
  for file in bin/ropecheck include/ropecheck/kernel_abi.h \
    lib/cmake/ropecheck/ropecheckConfig.cmake; do
    [ -e "$prefix/$file" ] || fail "not installed: $prefix/$file"
  done
  if [ -n "$python" ]; then
    [ -e "$prefix/lib/python3/dist-packages/ropecheck/__init__.py" ] \
      || fail "the Python package is not in $prefix/lib/python3/dist-packages"
  fi
  # No installed file (executable, Python module, CMake package) names the trees it came from.
  named=$(grep -rlaF -e "$source_dir" -e "$build_dir" "$prefix" || true)
  # A sanitizer build's executables carry its diagnostics' absolute source names, which GCC's
  # -ffile-prefix-map leaves alone: there only the files that are not ELF are held to the rule.
  if [ "${ROPECHECK_SANITIZED:-0}" = 1 ] && [ -n "$named" ]; then
    named=$(while IFS= read -r f; do [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || echo "$f"; done <<<"$named")
  fi
  [ -z "$named" ] || fail "installed files name the build machine's tree $source_dir:"$'\n'"$named"
  echo "installed under $prefix only, naming no build path"
  ;;

run-hidden)
  [ -x "$work/$prefix_dir/bin/ropecheck" ] || fail "nothing installed in $work/$prefix_dir"
  can_hide || { echo "SKIP: unshare --mount is unavailable (needs root)"; exit $skip; }
  rm -rf "$work/hidden" && mkdir -p "$work/hidden"
  in_hidden_namespace hidden-stage
  ;;

hidden-stage)  # in the namespace, VIEW the last argument
  view=$6
  hide_trees "$view"
  check_gate "$view/$prefix_dir/bin/ropecheck" "$view/hidden"
  check_audit "$view/$prefix_dir/bin/ropecheck" "$view/hidden"
  [ -z "$python" ] || check_python "$view/$prefix_dir/lib/python3/dist-packages"
  ;;

deb)
  if ! command -v dpkg-shlibdeps > /dev/null || ! command -v dpkg > /dev/null; then
    echo "SKIP: cpack -G DEB needs dpkg-dev (dpkg-shlibdeps)"
    exit $skip
  fi
  can_hide || { echo "SKIP: unshare --mount is unavailable (needs root)"; exit $skip; }
  rm -rf "$work/deb" "$work/root" "$work/hidden"
  mkdir -p "$work/deb" "$work/hidden"
  # CPack installs into its own staging folder under -B; the build tree is only read.
  (cd "$work/deb" && "$cpack" -G DEB --config "$build_dir/CPackConfig.cmake" -B "$work/deb" \
    > cpack.log) || fail "cpack exited $? (see $work/deb/cpack.log)"
  debs=("$work"/deb/ropecheck_*.deb)
  [ -f "${debs[0]}" ] || fail "cpack made no .deb (see $work/deb/cpack.log)"
  dpkg -x "${debs[0]}" "$work/root"
  [ -x "$work/root/usr/bin/ropecheck" ] || fail "${debs[0]} has no usr/bin/ropecheck"
  echo "unpacked ${debs[0]##*/}"
  in_hidden_namespace deb-stage
  ;;

deb-stage)  # in the namespace, VIEW the last argument
  view=$6
  hide_trees "$view"
  check_gate "$view/root/usr/bin/ropecheck" "$view/hidden"
  [ -z "$python" ] || check_python "$view/root/usr/lib/python3/dist-packages"
  ;;

*)
  fail "unknown mode '$mode'"
  ;;
esac
