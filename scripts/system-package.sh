#!/usr/bin/env bash
# Make sure a system program is present: install its Debian package with apt-get when we are root,
# otherwise say how to install it and exit with status 3 (callers decide whether that is fatal).
#   usage: scripts/system-package.sh PROGRAM DEBIAN_PACKAGE "what it is for"
set -u
program=$1 package=$2 purpose=${3:-}
command -v "$program" >/dev/null 2>&1 && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing $package ($purpose) with apt-get ..."
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null; }; then
        echo "apt-get could not install $package" >&2
        exit 1
    fi
    command -v "$program" >/dev/null 2>&1 && exit 0
    echo "$package is installed but '$program' is still not on PATH" >&2
    exit 1
fi
cat >&2 <<MSG
'$program' ($purpose) is not installed and this user cannot install it.
Install it, then run the command again:
    Debian/Ubuntu:  sudo apt-get install $package
    macOS:          brew install $package
    conda:          conda install -c conda-forge $package
MSG
exit 3
