#!/bin/sh
# Installs the Debian packages proctor needs to build, test and benchmark,
# only those missing (ncurses-term: the 16-colour and direct-colour terminal
# descriptions the colour tests use; mandoc, man-db and zsh: the install
# test lints and renders the man page and drives the zsh completion;
# docker.io: t_docker starts a private Docker daemon for --runtime docker,
# its image made from busybox-static; podman: t_podman starts a private
# Podman service for the same checks; btrfs-progs: t_disk_quota makes a
# btrfs filesystem to try the disk quota's subvolume holes; nodejs
# and npm: the MCP test installs and runs a real MCP server, and are asked
# for only when node or npm is missing, as they may come from elsewhere than
# Debian's packages). Uses apt-get as root, or through sudo.
set -eu
PKGS="build-essential pkg-config libncurses-dev libuv1-dev libjansson-dev libseccomp-dev
      libcmocka-dev libcurl4-openssl-dev tmux python3 git bubblewrap hyperfine
      clang-format procps util-linux iproute2 ncurses-term mandoc man-db zsh
      zlib1g-dev busybox-static docker.io podman btrfs-progs"
command -v node >/dev/null && command -v npm >/dev/null || PKGS="$PKGS nodejs npm"
missing=""
for p in $PKGS; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing:$missing" >&2
if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
