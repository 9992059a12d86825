#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every public header exports what it declares: with BUILD_SHARED_LIBS the
# libraries are built with -fvisibility=hidden and only declarations inside
# `#pragma GCC visibility push(default)` ... `pop` are exported. A header
# without the pair would leave its declarations hidden (consumers fail to
# link).
set -euo pipefail
include=$1
bad=0
n=0
while IFS= read -r -d '' h; do
  n=$((n + 1))
  first=$(grep -n -m1 '^#pragma GCC visibility push(default)$' "$h" | cut -d: -f1 || true)
  last=$(grep -n '^#pragma GCC visibility pop$' "$h" | tail -1 | cut -d: -f1 || true)
  code=$(grep -n -m1 -E '^(namespace|class|struct|enum|inline|template|#define)' "$h" | cut -d: -f1 || true)
  if [ -z "$first" ] || [ -z "$last" ] || { [ -n "$code" ] && [ "$first" -gt "$code" ]; } ||
     [ "$last" -ne "$(wc -l < "$h")" ]; then
    echo "FAIL: ${h#"$include"/}: needs '#pragma GCC visibility push(default)' after '#pragma once' and '#pragma GCC visibility pop' as its last line"
    bad=1
  fi
done < <(find "$include" -name '*.h' -print0)
[ "$n" -gt 0 ] || { echo "FAIL: no headers under $include"; exit 1; }
[ $bad -eq 0 ] && echo "ok: $n public headers export their declarations"
exit $bad
