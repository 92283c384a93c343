#!/usr/bin/env bash
# rebuild the C++ core of this worktree and copy it into python/tripletsearch/
set -e
cd "$(dirname "$0")"
. /work/venv-wt/bin/activate
cmake -S . -B build/wt -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE="$(which python)" \
  -Dpybind11_DIR="$(python -m pybind11 --cmakedir)" > /dev/null
cmake --build build/wt -j2
cp "$(find build/wt -name '_core*.so' | head -1)" python/tripletsearch/
