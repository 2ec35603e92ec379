# Sourced by the scripts that run on the GPU machine (gpu_run.sh, gpu_sanitize.sh), from
# the repository root: results under $OUT (or ./gpu-out) as $out, the carried libraries on
# the loader's path, the carried kernel cache unpacked, and the tests pointed at this
# checkout for the examples and goldens (FUSEDGEMM_SOURCE_ROOT, tests/support/source_root.h).
out=${OUT:-gpu-out}
mkdir -p "$out"
export FUSEDGEMM_SOURCE_ROOT=$PWD
export LD_LIBRARY_PATH=$PWD/gpu-carry/libs:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FUSEDGEMM_CACHE_DIR=/tmp/fusedgemm-cache
mkdir -p "$FUSEDGEMM_CACHE_DIR"
tar -xJf gpu-carry/cache.tar.xz -C "$FUSEDGEMM_CACHE_DIR"
