#!/usr/bin/env bash
# Capture real AOTI failure logs on a GPU host for aoti-debug's test fixtures.
#
#   bash tests/gpu/capture.sh OUT
#
# Writes OUT/gpu_capture.tar.gz (logs/, artifacts/, packages/, env.txt-like env.probe log,
# summary.txt, jobs.json) and OUT/summary.txt. Jobs run in parallel, each with its own work dir
# and TORCHINDUCTOR_CACHE_DIR, every one with a timeout; the run ends within CAPTURE_BUDGET_S
# (default 345 s) plus packaging. Normal jobs use CXX=/usr/bin/g++; the toolchain_segfault jobs
# use the host's default compiler on purpose. See capture.py for the knobs; a CPU dry run:
#
#   CAPTURE_DEVICE=cpu CAPTURE_ONLY='^index_oob\.' PYTHON=.venv/bin/python bash tests/gpu/capture.sh /tmp/out
set -u
OUT=${1:?usage: bash tests/gpu/capture.sh OUT}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PY=${PYTHON:-python3}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/aoti_capture.XXXXXX")
echo "[capture.sh] work dir $WORK, out $OUT"
# capture.py stops its own jobs at its budget; this outer limit only guards against a hang.
timeout -k 20 "${CAPTURE_HARD_LIMIT_S:-480}" "$PY" "$HERE/capture.py" --out "$OUT" --work "$WORK"
rc=$?
if [ ! -s "$OUT/gpu_capture.tar.gz" ]; then
    echo "[capture.sh] capture.py exited $rc without a tarball: packing what exists" | tee -a "$OUT/summary.txt"
    tar -czf "$OUT/gpu_capture.tar.gz" --exclude='*.pt2' --exclude='*.so' -C "$WORK" gpu_capture 2>/dev/null || true
fi
echo "[capture.sh] capture.py exit $rc"
ls -l "$OUT"
exit 0
