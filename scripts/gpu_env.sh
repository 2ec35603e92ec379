# Sourced by the scripts that run on the GPU machine (gpu_run.sh, gpu_sanitize.sh), from
# the repository root: results under $OUT (or ./gpu-out) as $out, the carried libraries on
# the loader's path, the carried kernel cache unpacked, and the build machine's checkout
# path (the tests find the examples there) pointing here.
out=${OUT:-gpu-out}
mkdir -p "$out"
if [ ! -e /work/main ]; then mkdir -p /work && ln -s "$PWD" /work/main; fi
export LD_LIBRARY_PATH=$PWD/gpu-carry/libs:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FUSEDGEMM_CACHE_DIR=/tmp/fusedgemm-cache
mkdir -p "$FUSEDGEMM_CACHE_DIR"
tar -xJf gpu-carry/cache.tar.xz -C "$FUSEDGEMM_CACHE_DIR"
