// launch.h -- how kernels cover a level: column and walk launches
#pragma once
#include "config.h"

namespace pgpu {

// Two shapes cover a level's interior (x fastest, then y, then z):
//  - column launches (col_launch): a block covers a tile of (x, y) columns
//    and walks a chunk of kchunk z planes; used by pointwise passes,
//    reductions and the tiled kernels;
//  - walk launches (walk_launch): 256-thread blocks whose threads each take
//    one short column piece (one group of planes, walk_thread).
// Both flatten (row tile, z chunk) pairs over the y and z grid dimensions
// when they exceed the launch limits; block_yz undoes it.

struct ColLaunch {
    dim3 grid, block;
    int nyb, nchunks, kchunk;
};

// The block's row tile yb and z chunk zc; false for the spare blocks of a
// flattened launch.
__device__ __forceinline__ bool block_yz(int nyb, int nchunks, int &yb, int &zc)
{
    if (gridDim.y == (unsigned)nyb) { // the common case: no split needed
        yb = blockIdx.y;
        zc = blockIdx.z;
        return true;
    }
    const unsigned flat = blockIdx.y + gridDim.y * blockIdx.z; // < 2^32 by the launch limits
    yb = (int)(flat % (unsigned)nyb);
    zc = (int)(flat / (unsigned)nyb);
    return zc < nchunks;
}

// A thread of a walk launch: its column (i, j) and its planes [k0, k1).
// Chunks of kchunk planes start at plane 1 (so that each is one fast group
// of column_walk); the first also takes plane 0 and the last runs to nz.
// False for threads outside the grid.
__device__ __forceinline__ bool walk_thread(int nx, int ny, int nz, int kchunk, int nyb, int nchunks, int &i, int &j,
                                            int &k0, int &k1)
{
    int yb, zc;
    if (!block_yz(nyb, nchunks, yb, zc)) return false;
    i = blockIdx.x * blockDim.x + threadIdx.x;
    j = yb * blockDim.y + threadIdx.y;
    k0 = zc == 0 ? 0 : 1 + zc * kchunk;
    k1 = zc == nchunks - 1 ? nz : 1 + (zc + 1) * kchunk;
    return i < nx && j < ny;
}

// The column launch's planes of chunk zc: [k0, k1).
__device__ __forceinline__ void chunk_planes(int zc, int kchunk, int nz, int &k0, int &k1)
{
    k0 = zc * kchunk;
    k1 = min(k0 + kchunk, nz);
}

#define PGPU_GRID_STRIDE(t, total)                                                                 \
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < (total);                 \
         t += (int64_t)gridDim.x * blockDim.x)

// The launch grid for gx x-blocks and nyb x nchunks (row tile, z chunk)
// pairs: (gx, nyb, nchunks) when that fits the limits, else the pairs
// flattened over y and z.
static void set_grid(ColLaunch &L, int64_t gx)
{
    const int64_t flat = (int64_t)L.nyb * L.nchunks;
    const int64_t gy = L.nyb <= 65535 && L.nchunks <= 65535 ? L.nyb : std::min<int64_t>(flat, 65535);
    L.grid = dim3((unsigned)gx, (unsigned)gy, (unsigned)((flat + gy - 1) / gy));
}

// A column launch over nx x ny x nz: blocks of bx x by threads owning
// tile_x x tile_y columns each, z chunks sized so that about per_sm blocks
// per SM run (CHUNK_MIN / SMALL_CHUNK planes at least).
static ColLaunch col_launch(int nx, int ny, int nz, bool is3d, int tile_x, int tile_y, int bx, int by, int sms,
                            int per_sm = COL_PER_SM)
{
    ColLaunch L;
    L.block = dim3(bx, by, 1);
    const int64_t gx = ((int64_t)nx + tile_x - 1) / tile_x;
    L.nyb = (int)(((int64_t)ny + tile_y - 1) / tile_y);
    const int64_t xy = gx * L.nyb;
    const int64_t target = (int64_t)sms * per_sm;
    int64_t chunks = is3d ? std::max<int64_t>(1, std::min<int64_t>(nz, (target + xy - 1) / xy)) : 1;
    L.kchunk = is3d ? (int)((nz + chunks - 1) / chunks) : 1;
    const int kmin = (int64_t)nx * ny * nz < SMALL_GRID_PTS ? SMALL_CHUNK : CHUNK_MIN;
    if (is3d && L.kchunk < kmin) L.kchunk = std::min(kmin, nz);
    L.nchunks = is3d ? (int)(((int64_t)nz + L.kchunk - 1) / L.kchunk) : 1;
    set_grid(L, gx);
    return L;
}

// A walk launch over nx x ny x nz: pieces of `group` planes (walk_thread).
static ColLaunch walk_launch(int nx, int ny, int nz, bool is3d, int group)
{
    ColLaunch L;
    const int bx = nx > 64 ? 128 : 32, by = WALK_THREADS / bx;
    L.block = dim3(bx, by, 1);
    const int64_t gx = ((int64_t)nx + bx - 1) / bx;
    L.nyb = (int)(((int64_t)ny + by - 1) / by);
    L.kchunk = group;
    L.nchunks = is3d ? std::max(1, (nz - 1 + group - 1) / group) : 1;
    set_grid(L, gx);
    return L;
}

static size_t blocks_of(const ColLaunch &L) { return (size_t)L.grid.x * L.grid.y * L.grid.z; }

// A walk launch for kernels that end in a block reduction (norms, Krylov
// sums): pieces of up to REDUCE_WALK_PIECES groups, as long as that leaves
// REDUCE_WALK_BLOCKS blocks per SM, so that the reductions are fewer where
// the grid is large and the parallelism stays where it is small.
static ColLaunch reduce_walk_launch(int nx, int ny, int nz, bool is3d, int group, int sms)
{
    ColLaunch L = walk_launch(nx, ny, nz, is3d, group);
    for (int m = REDUCE_WALK_PIECES; m > 1; m /= 2) {
        const ColLaunch W = walk_launch(nx, ny, nz, is3d, group * m);
        if (blocks_of(W) >= (size_t)REDUCE_WALK_BLOCKS * sms) return W;
    }
    return L;
}

// Blocks of 256 threads for a grid-stride loop over `total` items.
static unsigned grid_for(int64_t total, int sms)
{
    return (unsigned)std::max<int64_t>(1, std::min<int64_t>((total + 255) / 256, (int64_t)sms * 32));
}

// Launch kernel k over L: k<<<L.grid, L.block, smem, st>>>(args..., L.kchunk, L.nyb, L.nchunks).
template <class K, class... A>
static void launch(const ColLaunch &L, size_t smem, cudaStream_t st, K k, A... args)
{
    k<<<L.grid, L.block, smem, st>>>(args..., L.kchunk, L.nyb, L.nchunks);
}

// Position t (x fastest) of a box of extents ex x ey x ...: its indices;
// `small` (every t below 2^32) takes 32-bit divisions, far fewer
// instructions.
__device__ __forceinline__ void split_index(int64_t t, uint32_t ex, uint32_t ey, bool small, int &i, int &j, int &k)
{
    if (small) {
        const uint32_t u = (uint32_t)t, r = u / ex;
        i = (int)(u - r * ex);
        j = (int)(r % ey);
        k = (int)(r / ey);
    } else {
        const int64_t r = t / ex;
        i = (int)(t - r * ex);
        j = (int)(r % ey);
        k = (int)(r / ey);
    }
}

// Division of n by a divisor fixed for a loop, for n * d < 2^32: the
// quotient by a multiply-high with m = 2^32 / d rounded up (exact there:
// the error n (m d - 2^32) / (d 2^32) stays below 1 / d), a few
// instructions instead of a division's sequence.
struct SmallDiv {
    uint32_t d, m;
    __host__ __device__ explicit SmallDiv(uint32_t d_) : d(d_), m(d_ > 1 ? 0xffffffffu / d_ + 1 : 0) {}
    __device__ __forceinline__ uint32_t operator()(uint32_t n) const { return d > 1 ? __umulhi(n, m) : n; }
};

// Division of any 32-bit n by a divisor d >= 1 set up on the host: with
// s = ceil(log2 d) and the 33-bit multiplier 2^32 + m, m = 2^32 (2^s - d) /
// d + 1 (rounded down), the quotient is (mulhi(n, m) + n) >> s, exact for
// every n (Granlund and Montgomery's round-up method).
struct FastDiv {
    uint32_t m = 0, s = 0;
    FastDiv() = default;
    explicit FastDiv(uint32_t d)
    {
        while ((1ull << s) < d) ++s;
        m = (uint32_t)(((1ull << 32) * ((1ull << s) - d)) / d + 1);
    }
    __host__ __device__ __forceinline__ uint32_t operator()(uint32_t n) const
    {
#ifdef __CUDA_ARCH__
        const uint32_t hi = __umulhi(n, m);
#else
        const uint32_t hi = (uint32_t)(((uint64_t)n * m) >> 32);
#endif
        return (uint32_t)(((uint64_t)hi + n) >> s);
    }
};

} // namespace pgpu
