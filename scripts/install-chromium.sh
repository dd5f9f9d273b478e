#!/usr/bin/env bash
# Installs Debian's headless-capable Chromium (the `chromium` package) for
# the status page's browser test (crates/cuzk-daemon/tests/status_page.rs).
# Idempotent and quiet: with Chromium present it installs nothing. Needs
# root and apt-get to install; without them and without Chromium it fails
# saying what to install.
#
# Prints the browser's path as its last line.
set -euo pipefail

die() { echo "install-chromium: $*" >&2; exit 1; }

find_chromium() {
    local c
    for c in "${CUZK_CHROMIUM:-}" /usr/bin/chromium /usr/bin/chromium-browser \
            "$(command -v chromium 2>/dev/null || true)" \
            "$(command -v chromium-browser 2>/dev/null || true)"; do
        if [[ -n "$c" && -x "$c" ]]; then
            echo "$c"; return 0
        fi
    done
    return 1
}

if ! chromium="$(find_chromium)"; then
    [[ $(id -u) -eq 0 ]] || die "Chromium is not installed and this is not root: install Debian's chromium package (apt-get install chromium), or set CUZK_CHROMIUM to a Chromium binary"
    command -v apt-get >/dev/null || die "Chromium is not installed and there is no apt-get: install Chromium, or set CUZK_CHROMIUM to a Chromium binary"
    echo "install-chromium: installing Chromium (apt-get install chromium)" >&2
    export DEBIAN_FRONTEND=noninteractive
    log="$(mktemp)"
    # Fonts for readable text in the screenshot; no recommends (no desktop).
    # apt's and dpkg's chatter is shown only when they fail.
    if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends \
            chromium fonts-dejavu-core; } > "$log" 2>&1; then
        cat "$log" >&2
        rm -f "$log"
        die "apt-get install chromium failed"
    fi
    rm -f "$log"
    chromium="$(find_chromium)" || die "no Chromium binary after installing"
fi
# (Debian's launcher script may warn on stderr about the RAM it measures.)
version="$("$chromium" --version 2>/dev/null)" || die "$chromium --version failed"
echo "$version" >&2
echo "$chromium"
