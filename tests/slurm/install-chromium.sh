#!/usr/bin/env bash
# The results viewer's browser test (tests/integration/test_view_browser.py) drives Debian's
# headless Chromium through its chromedriver. `make test` runs this beside install.sh: as
# root with apt it installs whatever is missing; anyone else is told what to install, and
# the browser test skips (docs/viewer.md, "Testing").
set -euo pipefail
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "viewer browser test: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "viewer browser test: ${missing[*]} missing and this is not root with apt; the" \
    "browser test will skip (in CI it fails). Install chromium and chromium-driver" \
    "(docs/viewer.md)." >&2
fi
