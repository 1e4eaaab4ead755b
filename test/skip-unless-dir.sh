#!/bin/sh
# Runs a test command when the directory it reads exists; otherwise says why
# and exits 77, which ctest reports as "Skipped" (SKIP_RETURN_CODE), not as
# "Passed".
#   skip-unless-dir.sh VAR DEFAULT_DIR COMMAND [ARG...]
# VAR names the environment variable that sets the directory (DEFAULT_DIR
# when unset or empty).
var=$1
default=$2
shift 2
dir=$(printenv "$var")
[ -n "$dir" ] || dir=$default
if [ ! -d "$dir" ]; then
  echo "skipped: $dir not found (set $var)"
  exit 77
fi
exec "$@"
