#!/bin/sh
# Fails when a source file includes a header of a layer above its own.
# kc's layers, each using only those before it (docs/architecture.md):
#   Support <- IR <- {Import, Pass, Runtime} <- passes
# Import, Pass and Runtime do not use each other; passes may run kernels
# (constant folding) and so use Runtime.
# Usage: check-layers.sh SOURCE_ROOT
set -eu
root=${1:-.}
status=0
check() { # check LAYER "ALLOWED LAYERS" DIRS...
  layer=$1 allowed=$2
  shift 2
  files=$(find "$@" -name '*.h' -o -name '*.cpp' -o -name '*.def' 2>/dev/null | sort)
  count=$(echo "$files" | grep -c . || true)
  bad=""
  for f in $files; do
    for inc in $(grep -hoE '^#include "kc/[A-Za-z]+/' "$f" | sed -E 's|.*"kc/([A-Za-z]+)/|\1|' | sort -u); do
      case " $allowed " in
      *" $inc "*) ;;
      *) bad="$bad
  ${f#$root/} includes kc/$inc/" ;;
      esac
    done
  done
  if [ -n "$bad" ]; then
    echo "$layer: headers of layers it may not use:$bad"
    status=1
  else
    echo "$layer: $count files use only $allowed"
  fi
}
check Support "Support" "$root/include/kc/Support" "$root/lib/Support"
check IR "Support IR" "$root/include/kc/IR" "$root/lib/IR"
check Import "Support IR Import" "$root/include/kc/Import" "$root/lib/Import"
check Pass "Support IR Pass" "$root/include/kc/Pass" "$root/lib/Pass"
check Runtime "Support IR Runtime" "$root/include/kc/Runtime" "$root/lib/Runtime"
check passes "Support IR Pass Runtime" "$root/passes"
exit $status
