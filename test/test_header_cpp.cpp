// test_header_cpp.cpp -- poisson_gpu.h compiles as C++ (-pedantic-errors),
// is self-contained, links with C linkage, and its forward-declared stream
// type is cudaStream_t itself; then the same checks as the C test.
#include "poisson_gpu.h"

#include <cuda_runtime_api.h>

#include "header_checks.h"

int main()
{
    // Compiles only when the header's struct CUstream_st * is cudaStream_t.
    pgpu_config cfg = pgpu_config_default(4, 4, 4);
    cudaStream_t stream = nullptr;
    cfg.stream = stream;
    stream = cfg.stream;
    (void)stream;

    return header_checks("test_header_cpp");
}
