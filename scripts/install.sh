#!/usr/bin/env bash
# One install command for exploreval: the system packages the terminal suite (bubblewrap, tmux,
# util-linux's prlimit/nsenter/setpriv/mount, python3-pytest for verification inside the sandbox,
# which sees only the system Python, jq, git, make, openssl for the built-in tasks and level-4
# injection, mmdebstrap to build Terminal-Bench/Harbor task images from their Dockerfiles and
# slirp4netns for a sandbox network, iproute2 for the network compose services share, skopeo
# and umoci to pull a compose service's registry image, docker-registry and busybox-static for the
# tests' own local registry) and the browser tests (Debian's chromium + chromium-driver)
# need, then the Python
# package with every optional part CI tests. Idempotent; safe to re-run. Usage: bash scripts/install.sh [pip extras]
#   EXPLOREVAL_SKIP_APT=1  skip the apt step (no root, or you installed the packages yourself)
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-dev,local,ray,embeddings,textworld,inspect,mem0,langmem,amem}"
packages=(bubblewrap tmux patchelf curl procps util-linux iproute2 python3-pytest jq git make openssl mmdebstrap slirp4netns skopeo umoci docker-registry busybox-static chromium chromium-driver)

missing=()
for pkg in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [[ ${#missing[@]} -eq 0 ]]; then
    echo "exploreval install: system packages present (${packages[*]})"
elif [[ "${EXPLOREVAL_SKIP_APT:-0}" == "1" ]]; then
    echo "exploreval install: EXPLOREVAL_SKIP_APT=1, not installing: ${missing[*]}" >&2
elif ! command -v apt-get >/dev/null 2>&1; then
    echo "exploreval install: no apt-get here; install these yourself: ${missing[*]}" >&2
else
    sudo=""
    [[ $(id -u) -ne 0 ]] && sudo="sudo"
    echo "exploreval install: apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq >/dev/null
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The embedded model's runtime (llama-cpp-python, in [local]) compiles llama.cpp here. By default it
# uses every instruction the build CPU advertises, and some CPUs advertise AMX / AVX-512 that trap
# when used (the server then dies on its first completion). Build it portably instead: AVX2-era
# x86-64, or the architecture's baseline elsewhere (docs/models.md, "A portable build").
if [[ -z "${CMAKE_ARGS:-}" ]]; then
    case "$(uname -m)" in
        x86_64|amd64) CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" ;;
        *) CMAKE_ARGS="-DGGML_NATIVE=OFF" ;;
    esac
fi
export CMAKE_ARGS

echo "exploreval install: pip install -e .[${extras}]"
python -m pip install --quiet -e ".[${extras}]"

# One real completion on the embedded model: a build that cannot run here is found now, not in
# the first run. A wheel built earlier for another CPU (pip caches built wheels) is rebuilt once.
if [[ ",${extras}," == *",local,"* ]]; then
    echo "exploreval install: checking the embedded model with one real completion"
    if ! exploreval doctor; then
        echo "exploreval install: rebuilding llama-cpp-python portably (CMAKE_ARGS=${CMAKE_ARGS})" >&2
        llama_version=$(python -c "import importlib.metadata as m; print(m.version('llama-cpp-python'))")
        python -m pip install --quiet --force-reinstall --no-cache-dir --no-deps "llama-cpp-python==${llama_version}"
        if ! exploreval doctor; then
            echo "exploreval install: the embedded model cannot answer on this machine (see above)." >&2
            echo "  Fix: rebuild it for this CPU, e.g. CMAKE_ARGS=\"-DGGML_NATIVE=OFF\" pip install --force-reinstall --no-cache-dir --no-deps llama-cpp-python," >&2
            echo "  or install without it: bash scripts/install.sh dev,ray,embeddings,textworld" >&2
            exit 1
        fi
    fi
fi
echo "exploreval install: done"
