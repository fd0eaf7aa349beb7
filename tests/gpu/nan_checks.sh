#!/bin/bash
# Which NaN checks catch silent_nan on a GPU (guides/nan_inf.md's table): run from the repository root on a GPU host.
# usage: nancheck.sh FLAG OUTLOG  -- silent_nan on CUDA with one NaN-check flag; the wrapper's checks counted
flag=$1; log=$2; C=$(mktemp -d)
{ echo "# torch: $(python3 -c 'import torch;print(torch.__version__)')"
  echo "# device: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
  echo "# command: CXX=/usr/bin/g++ TORCHINDUCTOR_CACHE_DIR=\$(mktemp -d) $flag=1 python3 examples/silent_nan.py --device cuda"
} > $log
env CXX=/usr/bin/g++ TORCHINDUCTOR_CACHE_DIR=$C $flag=1 timeout 400 python3 examples/silent_nan.py --device cuda >> $log 2>&1
echo "# exit_status: $?" >> $log
echo "# check_inf_and_nan calls in the generated wrapper(s):" >> $log
find $C -name '*.cpp' | xargs grep -h 'check_inf_and_nan(' 2>/dev/null | sed 's/^ *//' | sort | uniq -c >> $log
echo "# nan asserts in generated Triton kernels:" >> $log
find $C -name '*.py' | xargs grep -l 'NaN or Inf\|isnan\|tl.device_assert' 2>/dev/null | wc -l >> $log
