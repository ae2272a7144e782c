#!/usr/bin/env bash
# Build (and optionally push) the screenmill GPU worker image from infra/docker/Dockerfile.
#
#   bash infra/docker/build.sh                      # local build: screenmill-worker:<version> + :<version>-<git sha>
#   IMAGE=REGION-docker.pkg.dev/PROJECT/REPO/screenmill-worker bash infra/docker/build.sh --push
#   bash infra/docker/build.sh --dry-run            # print the docker commands only (needs no docker)
#
# Tags: <version> (pyproject.toml's project version) and <version>-<short git sha>[-dirty]; pass the second one
# to --sdk_container_image, so a job names exactly the code it runs. Settings (environment variables):
#   IMAGE            image name without tag (default screenmill-worker)
#   PYTHON_VERSION   3.12 (default; Ubuntu 24.04's) — must equal the launcher's Python minor version
#   BEAM_VERSION     default: the apache-beam of .venv if there is one, else 2.78.0 — must equal the launcher's
#   CUDA_VERSION     12.9.1 (vLLM's PyPI wheels are CUDA 12.9 builds)
#   VLLM_VERSION     0.32.0 (the `gpu` extra's pin in pyproject.toml; move them together)
#   TORCH_CUDA_ARCH_LIST  "9.0" (H100/H200); "8.0;9.0" adds A100
#   PLATFORM         linux/amd64 (the GPU machine types are x86-64)
# Extra arguments after the options go to `docker build` unchanged (e.g. --no-cache, --progress=plain).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

push=0
dry_run=0
extra=()
for arg in "$@"; do
  case "$arg" in
    --push) push=1 ;;
    --dry-run) dry_run=1 ;;
    -h|--help) sed -n '2,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) extra+=("$arg") ;;
  esac
done

version="$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' "$root/pyproject.toml" | head -n 1)"
if [ -z "$version" ]; then
  echo "build.sh: no version in $root/pyproject.toml" >&2
  exit 1
fi
sha="$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo nogit)"
if [ "$sha" != nogit ] && [ -n "$(git -C "$root" status --porcelain -- pyproject.toml README.md pipelines stages schemas annotators 2>/dev/null)" ]; then
  sha="$sha-dirty"
fi
default_beam=2.78.0
if [ -x "$root/.venv/bin/python" ]; then
  default_beam="$("$root/.venv/bin/python" -c 'import apache_beam; print(apache_beam.__version__)' 2>/dev/null || echo 2.78.0)"
fi

image="${IMAGE:-screenmill-worker}"
python_version="${PYTHON_VERSION:-3.12}"
beam_version="${BEAM_VERSION:-$default_beam}"
cuda_version="${CUDA_VERSION:-12.9.1}"
platform="${PLATFORM:-linux/amd64}"

build=(docker build
  --platform "$platform"
  --file "$here/Dockerfile"
  --build-arg "PYTHON_VERSION=$python_version"
  --build-arg "BEAM_VERSION=$beam_version"
  --build-arg "CUDA_VERSION=$cuda_version"
  --build-arg "VLLM_VERSION=${VLLM_VERSION:-0.32.0}"
  --build-arg "TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}"
  --label "org.opencontainers.image.version=$version"
  --label "org.opencontainers.image.revision=$sha"
  --tag "$image:$version"
  --tag "$image:$version-$sha"
  ${extra[@]+"${extra[@]}"}
  "$root")

run() {
  printf '%q' "$1"
  printf ' %q' "${@:2}"
  printf '\n'
  if [ "$dry_run" -eq 0 ]; then
    "$@"
  fi
}

export DOCKER_BUILDKIT=1  # Dockerfile.dockerignore and the `# syntax` line need BuildKit
run "${build[@]}"
if [ "$push" -eq 1 ]; then
  run docker push "$image:$version-$sha"
  run docker push "$image:$version"
fi
echo "image: $image:$version-$sha  (pass it as --sdk_container_image)" >&2
