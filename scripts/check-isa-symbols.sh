#!/bin/sh
# Fails when a per-ISA micro-kernel object (lib/Runtime/ukernels/isa/*.cpp)
# defines a global symbol outside its namespace kc::uk::<isa>: such a
# symbol (a std::min instantiation, an inline function of a shared header)
# may be the one copy the linker keeps for every caller in libkc, and code
# compiled for AVX-512 would then fault on cores without it.
# Usage: check-isa-symbols.sh isa=object.o...
set -eu
status=0
for arg in "$@"; do
  isa=${arg%%=*}
  obj=${arg#*=}
  # Itanium mangling: kc::uk::<isa>:: is N2kc2uk<length><isa>, after _Z and
  # the prefixes of guard variables (GV) and function-local statics (Z).
  prefix="N2kc2uk${#isa}${isa}"
  bad=$(nm --defined-only --extern-only "$obj" | awk '{ print $NF }' |
        grep -Ev "^_Z(GV)?Z?${prefix}" || true)
  count=$(nm --defined-only --extern-only "$obj" | grep -c . || true)
  if [ -n "$bad" ]; then
    echo "$obj ($isa): symbols outside kc::uk::$isa:"
    echo "$bad" | c++filt | sed 's/^/  /'
    status=1
  else
    echo "$obj ($isa): $count global symbols, all in kc::uk::$isa"
  fi
done
exit $status
