// jemalloc's settings for every process that trains (tokamak-engine: `tokamak train`, the studio's runs, each
// data-parallel rank), compiled in so nobody has to know an environment variable. jemalloc reads the
// `malloc_conf` symbol at its first allocation; MALLOC_CONF in the environment still overrides it.
//
// Why: a training step frees and re-allocates the same large tensors every step (the logits alone are B·T·V
// floats). jemalloc's defaults put every allocation over 8 MB in a dedicated arena that hands its pages back to
// the kernel at once (oversize_threshold), and the other arenas return freed pages after ~10 s (the decays):
// each step then faults and zeroes its big tensors in again. Measured (AVX-512 BF16 EPYC, docs/PERFORMANCE.md): the nano
// default step 1,137 → 506 ms, 4×256 fp32 926–949 → 1,552 tok/s; docs/PERFORMANCE.md "CPU allocator".
// The cost is memory: freed pages stay in the process for reuse, so it holds about its peak working set. That
// is bounded by the step's own peak (the same sizes come back every step), reported as mem_reserved on a CPU
// (engine/torch/device/device.cpp), and trimmed at report steps beyond a limit (engine/torch/device/cpu_setup.cpp).
extern "C" {
static const char kMallocConf[] = "oversize_threshold:0,dirty_decay_ms:-1,muzzy_decay_ms:-1";
// The executable's definition takes the place of libjemalloc's (default: none); `used` keeps it when unreferenced.
__attribute__((used, visibility("default"))) const char* malloc_conf = kMallocConf;
}
