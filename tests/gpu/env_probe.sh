#!/usr/bin/env bash
# Host facts for the GPU capture (run by capture.py as job env.probe).
# Env: ORIG_CXX (the host's CXX, may be empty), PYTHON_BIN.
sec() { printf '\n## %s\n' "$*"; }
run() { sec "$*"; timeout 60 "$@" 2>&1; echo "[exit $?]"; }
sec date; date -Is
run nvidia-smi -L
run nvidia-smi
sec "host CXX"; echo "CXX=${ORIG_CXX:-<unset>}"
if [ -n "$ORIG_CXX" ]; then run "$ORIG_CXX" --version; run ls -l "$ORIG_CXX"; fi
run which -a g++ c++ gcc
run /usr/bin/g++ --version
run ls -l /usr/bin/g++
CXXCODE='import torch._inductor.config as c; print(c.cpp.cxx)'
if [ -n "$ORIG_CXX" ]; then sec "config.cpp.cxx with host CXX=$ORIG_CXX"; CXX="$ORIG_CXX" timeout 60 "$PYTHON_BIN" -c "$CXXCODE" 2>&1; fi
sec "config.cpp.cxx with CXX unset"; env -u CXX timeout 60 "$PYTHON_BIN" -c "$CXXCODE" 2>&1
sec "config.cpp.cxx with CXX=/usr/bin/g++"; CXX=/usr/bin/g++ timeout 60 "$PYTHON_BIN" -c "$CXXCODE" 2>&1
sec "cpp_builder compiler (CXX unset)"; env -u CXX timeout 60 "$PYTHON_BIN" -c 'from torch._inductor.cpp_builder import get_cpp_compiler; print(get_cpp_compiler())' 2>&1
run nvcc --version
run compute-sanitizer --version
sec "cuda-gdb --version"; timeout 60 cuda-gdb --version 2>&1 | head -5
sec "python, torch, triton"; timeout 60 "$PYTHON_BIN" -c 'import sys, torch; print(sys.version); print(torch.__version__, torch.version.git_version, torch.version.cuda); import triton; print("triton", triton.__version__)' 2>&1
sec "torch.utils.collect_env"; timeout 90 "$PYTHON_BIN" -m torch.utils.collect_env 2>&1
sec "nproc / memory"; nproc; free -g
