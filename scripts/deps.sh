#!/usr/bin/env bash
# Installs the Debian packages hostccl's build, tests, tools, benchmarks and Python package (torch
# backend: python3-torch, libtorch-dev, pybind11-dev; tests: python3-pytest) use (only if missing).
set -euo pipefail
PKGS=(build-essential cmake pkg-config libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev
      openmpi-bin libopenmpi-dev mpich libmpich-dev libgloo-dev gnuplot-nox iproute2 procps
      python3-dev python3-torch libtorch-dev pybind11-dev python3-pytest python3-numpy)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
