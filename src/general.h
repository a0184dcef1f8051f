// general.h -- masks and beta: the general form's tables, checks and face fractions
#pragma once
#include "transfer.h"

namespace pgpu {

// The general operator's data: cell types and face fractions on every level,
// built on the device from the caller's mask and beta (pgpu_set_mask,
// pgpu_set_coefficients), and the fine grid's connected fluid regions with
// the projection of the singular ones.
//  - Level 0: a copy of the mask (ghosts read as fluid) and, with beta, face
//    fractions = beta's harmonic face means (beta itself at box faces).
//    gen_couplings (operator.h) multiplies the table form's couplings by
//    them and drops faces towards solid points.
//  - Coarse cell types by the seed's rule: a Dirichlet core child (the fine
//    nodes a coarse node stands for: its restriction row's largest weights)
//    makes the coarse point Dirichlet (its correction is held at 0), else a
//    fluid child anywhere in its restriction row makes it fluid, else it is
//    solid.  So the coarse fluid region covers every interpolation parent of
//    a fine fluid point next to a solid wall, and the prolongation there
//    interpolates corrections instead of the zeros of solid coarse points
//    (which held the correction near the wall down, as a Dirichlet wall
//    would): in a CPU model of this cycle the V(2,1) factor on a solid
//    sphere of radius 0.3 was 0.31 / 0.40 / 0.53 at 63^3 / 127^3 / 255^3
//    with core children only, 0.047 / 0.05 / 0.047 with the whole row (the
//    empty box: 0.046).  Dirichlet stays with the core: a dilated held
//    region would pin corrections one fine node inside the fluid.
//  - Coarse face fractions, as HPGMG-FV and AMReX average face
//    coefficients: the mean of the fine faces that lie on the coarse face
//    (across it weighted by the restriction row; along it the fine face at
//    its midpoint, or the two that meet at a fine node under vertex
//    coarsening; a wall face every fine face between its node and the
//    wall).  A fine face towards a solid point counts 0.  The
//    averages err on the strong side (a wall inside a coarse cell does not
//    show), which slows a cycle at worst; the series (harmonic) average
//    along the face's axis, tried first, errs on the weak side and made
//    V-cycles diverge on thin walls next to Neumann faces (with the linear
//    prolongation; where beta jumps the series goes with odi.h's).  At a box face
//    the strong side costs more: an open coarse wall face couples the
//    coarse fluid to the face's value where the fine fluid has a zero-flux
//    wall (a solid layer along a Dirichlet face converged at 0.5 to 0.97
//    per V-cycle).  So a coarse wall face whose path holds a face of
//    fraction 0 is closed.
//    Faces between a coarse fluid and a coarse Dirichlet point take the
//    distance to the fine Dirichlet points instead (gen_distance_kernel).
//  - The coarse operator stays the finite-volume form on the coarse nodes
//    (fluxes over the whole coarse cell), so the plain restriction is
//    consistent with it: solid and Dirichlet children contribute 0 because
//    the residual is 0 there.  Renormalising the weights over non-solid
//    children (the seed's choice, for an operator scaled by neighbour
//    counts) would overweight a partly solid coarse cell's right-hand side.
//  - Regions: union-find on the fluid points (Playne and Hawick's
//    atomicMin linking; the label of a region is its smallest point index,
//    so the labelling is deterministic), a flag on each root whose region
//    touches a Dirichlet point or face, then a compact number for each
//    singular region.  Per solve, each singular region's mean of b is
//    removed into a workspace copy of f and, after the method, its mean of u
//    from u.  The sums are 128-bit integers (fixed point scaled by the
//    largest value), so they are exact and independent of the order of the
//    atomics.

constexpr int MAX_PATH = 5;
constexpr unsigned WIN_OPEN_FLUID = 2u | 4u | 8u | 16u; // gen_coarse_kernel's window: fluid, every low face open
constexpr unsigned WIN_OPEN_DIRICHLET = 1u | 4u | 8u | 16u; // Dirichlet, every low face open
constexpr uint32_t LAB_NONE = 0xffffffffu;     // not fluid
constexpr uint32_t LAB_REGULAR = 0xc0000000u;  // fluid, in a region that touches Dirichlet
constexpr uint32_t LAB_SINGULAR = 0x80000000u; // | id: fluid, in singular region id
constexpr uint32_t LAB_INDEX = 0x7fffffffu;
constexpr unsigned GEN_BAD_TYPE = 1, GEN_FLUID = 2, GEN_BAD_BETA = 4, GEN_TOO_MANY = 8, GEN_HELD = 16,
                   GEN_WIDE_BETA = 32;
// beta's largest over its smallest value above which it jumps: the coarse
// levels then follow the operator (odi.h); below, V-cycles keep the box's
// rate with the averaged coarse coefficients and the geometric transfers.
constexpr double JUMP_RATIO = 10.0;

// The fine faces of one axis of a level pair that coarse face I (0..nc,
// between nodes I-1 and I; 0 and nc the walls, or the wrap) averages:
// idx[I * MAX_PATH + m] (0..n), m < cnt[I].
static bool path_table(const Axis &a, const Axis &c, bool coarsened, std::vector<int> &cnt, std::vector<int> &idx)
{
    const int n = a.n, nc = c.n;
    cnt.assign(nc + 1, 0);
    idx.assign((size_t)(nc + 1) * MAX_PATH, 0);
    if (!coarsened || !a.active) {
        for (int I = 0; I <= nc; ++I) {
            cnt[I] = 1;
            idx[(size_t)I * MAX_PATH] = I;
        }
        return true;
    }
    const bool per = a.lo == PGPU_BC_PERIODIC;
    auto pos = [&](const Axis &x, int i) {
        if (i < 0) return per ? x.x[x.n - 1] - x.L : x.xlo;
        if (i >= x.n) return per ? x.x[0] + x.L : x.xhi;
        return x.x[i];
    };
    const int last = per ? n - 1 : n; // fine faces 0..last, face i between nodes i - 1 and i
    for (int I = 0; I <= nc; ++I) {
        // The fine faces at the coarse face's midpoint: one where it falls
        // inside a fine face (cell coarsening), the two that meet at a fine
        // node (vertex coarsening).  Faces lie in order along the axis, so
        // the walk starts at the first whose high end reaches mid (a
        // bisection) and ends at the first whose low end lies past it.
        // A wall face takes every fine face between its node and the wall
        // (the midpoint may miss the fine wall face, and the coarse build
        // closes a wall face whose path holds a closed one).
        const bool wall = !per && (I == 0 || I == nc);
        if (wall) {
            const double lo = pos(c, I - 1), hi = pos(c, I);
            for (int i = 0; i <= last; ++i) {
                const double flo = pos(a, i - 1), fhi = pos(a, i), tol = 1e-9 * (fhi - flo);
                if (fhi <= lo + tol || flo >= hi - tol) continue;
                if (cnt[I] == MAX_PATH) return false;
                idx[(size_t)I * MAX_PATH + cnt[I]] = i;
                ++cnt[I];
            }
            if (cnt[I] == 0) return false;
            continue;
        }
        const double mid = 0.5 * (pos(c, I - 1) + pos(c, I));
        for (int s = per ? -1 : 0; s <= (per ? 1 : 0); ++s) {
            auto flo = [&](int i) { return pos(a, i - 1) + s * a.L; };
            auto fhi = [&](int i) { return pos(a, i) + s * a.L; };
            int lo = 0, hi = last + 1; // the first face with fhi + tol >= mid, or last + 1
            while (lo < hi) {
                const int m = lo + (hi - lo) / 2;
                if (fhi(m) + 1e-9 * (fhi(m) - flo(m)) < mid) lo = m + 1;
                else hi = m;
            }
            for (int i = lo; i <= last; ++i) {
                const double tol = 1e-9 * (fhi(i) - flo(i));
                if (mid < flo(i) - tol) break;
                if (mid > fhi(i) + tol) continue;
                if (cnt[I] == MAX_PATH) return false;
                idx[(size_t)I * MAX_PATH + cnt[I]] = i;
                ++cnt[I];
            }
        }
        if (cnt[I] == 0) return false;
    }
    return true;
}

// One axis of a level pair as gen_coarse_kernel reads it, for tiles of tb
// coarse positions: per position (padded to whole tiles) its row's child
// count, path count, core children and whether it is a wall face (row.x:
// m | np << 8 | core << 16 | wall << 24)
// and the slots of its children and path faces (bytes of y, z, w), and its
// weights; per tile the count of fine slots, then their fine indices (n: the
// high wall face's slot).
struct CoarseAxis {
    const int4 *row;
    const double *w;
    const int *slot;
    int tb, nt, stride; // positions per tile, tiles, one tile's slot list length
    FastDiv by_nt;      // division by nt
};

// The core children of coarse row P (bit c: child c): those of more than
// half the row's largest restriction weight.  A child with half of it (a
// kept node's neighbours) must not count where the positions' rounding
// leaves its weight a few ulps above half: between Dirichlet walls at even
// sizes (h = 1/(n+1)) that made a fluid node's neighbour core, so a free
// surface moved a node down on such levels (V-cycles at 0.3 to 0.8 per
// cycle).
static unsigned row_core(const AxisTransfer &t, int P)
{
    const int m = t.rcnt[(size_t)P];
    double wmax = 0;
    for (int c = 0; c < m; ++c) wmax = std::max(wmax, t.rw[(size_t)P * MAX_CHILDREN + c]);
    unsigned core = 0;
    for (int c = 0; c < m; ++c) core |= (t.rw[(size_t)P * MAX_CHILDREN + c] > (0.5 + 1e-9) * wmax ? 1u : 0u) << c;
    return core;
}

// The host side of a CoarseAxis: rows from the restriction t and the path
// table (cnt, idx) over `span` positions (0..nc, or the one plane of a 2D
// z axis); false if a tile touches more than 255 fine slots.
struct CoarseAxisHost {
    std::vector<int> row, slot;
    std::vector<double> w;
    int tb = 1, nt = 1, smax = 0;
};
static bool coarse_axis_table(const Axis &a, const AxisTransfer &t, const std::vector<int> &cnt,
                              const std::vector<int> &idx, int nc, int span, int tb, CoarseAxisHost &h)
{
    const int n = a.n;
    const bool per = a.lo == PGPU_BC_PERIODIC;
    h.tb = tb;
    h.nt = (span + tb - 1) / tb;
    h.row.assign((size_t)h.nt * tb * 4, 0);
    h.w.assign((size_t)h.nt * tb * MAX_CHILDREN, 0.0);
    std::vector<std::vector<int>> lists((size_t)h.nt);
    h.smax = 0;
    auto path_fine = [&](int P, int e) { const int fi = idx[(size_t)P * MAX_PATH + e]; return per ? fi % n : fi; };
    for (int it = 0; it < h.nt; ++it) {
        std::vector<int> &s = lists[(size_t)it];
        for (int P = it * tb; P < std::min(span, (it + 1) * tb); ++P) {
            if (P < nc)
                for (int c = 0; c < t.rcnt[P]; ++c) s.push_back(t.ridx[(size_t)P * MAX_CHILDREN + c]);
            for (int e = 0; e < cnt[P]; ++e) s.push_back(path_fine(P, e));
        }
        std::sort(s.begin(), s.end());
        s.erase(std::unique(s.begin(), s.end()), s.end());
        if (s.size() > 255) return false;
        h.smax = std::max(h.smax, (int)s.size());
        for (int P = it * tb; P < std::min(span, (it + 1) * tb); ++P) {
            const int m = P < nc ? t.rcnt[P] : 0, np = cnt[P];
            unsigned char sl[MAX_CHILDREN + MAX_PATH] = {};
            const unsigned core = P < nc ? row_core(t, P) : 0u;
            auto at = [&](int f) { return (unsigned char)(std::lower_bound(s.begin(), s.end(), f) - s.begin()); };
            for (int c = 0; c < m; ++c) {
                sl[c] = at(t.ridx[(size_t)P * MAX_CHILDREN + c]);
                h.w[(size_t)P * MAX_CHILDREN + c] = t.rw[(size_t)P * MAX_CHILDREN + c];
            }
            for (int e = 0; e < np; ++e) sl[MAX_CHILDREN + e] = at(path_fine(P, e));
            int *r = &h.row[(size_t)P * 4];
            const bool wall = !per && (P == 0 || P == nc);
            r[0] = m | np << 8 | (int)core << 16 | (wall ? 1 : 0) << 24;
            for (int e = 0; e < MAX_CHILDREN + MAX_PATH; ++e) r[1 + e / 4] |= (int)sl[e] << (8 * (e & 3));
        }
    }
    const int stride = h.smax + 1;
    h.slot.assign((size_t)h.nt * stride, 0);
    for (int it = 0; it < h.nt; ++it) {
        const std::vector<int> &s = lists[(size_t)it];
        h.slot[(size_t)it * stride] = (int)s.size();
        std::copy(s.begin(), s.end(), h.slot.begin() + (size_t)it * stride + 1);
    }
    return true;
}

// One axis of a level pair as gen_iso_kernel reads it: per fine index i its
// coarse parents (the rows whose restriction holds it), in ascending order,
// p[4 i] = count | 256 if it is a core child of one of them, then their
// indices; w[3 i + c] their weights.  False if a point has more than
// MAX_PARENTS.
constexpr int MAX_PARENTS = 3;
struct ParentAxis {
    const int4 *p;
    const double *w;
};
static bool parent_table(const AxisTransfer &t, int n, int nc, std::vector<int> &p, std::vector<double> &w)
{
    p.assign((size_t)n * 4, 0);
    w.assign((size_t)n * MAX_PARENTS, 0.0);
    for (int P = 0; P < nc; ++P) { // ascending P: each point's parents come in order
        const unsigned core = row_core(t, P);
        for (int c = 0; c < t.rcnt[(size_t)P]; ++c) {
            const int i = t.ridx[(size_t)P * MAX_CHILDREN + c];
            int &head = p[(size_t)i * 4];
            const int k = head & 0xff;
            if (k == MAX_PARENTS) return false;
            w[(size_t)i * MAX_PARENTS + k] = t.rw[(size_t)P * MAX_CHILDREN + c];
            p[(size_t)i * 4 + 1 + k] = P;
            head = (k + 1) | (head & 256) | (int)((core >> c) & 1u) << 8;
        }
    }
    return true;
}

// One axis of a level pair as gen_distance_kernel reads it: per coarse face
// I (between nodes I-1 and I) the fine nodes from node I-1's position to
// node I's, in order (k: their count, then their indices; x: the faces'
// length H, then each node's distance from node I-1), MAX_WALK + 1 entries
// a face; a count of 0 leaves the face as the stages formed it (the walls,
// a periodic axis' wrap, an inactive axis, more nodes than MAX_WALK).
constexpr int MAX_WALK = 6;
struct WalkAxis {
    const int *k;
    const double *x;
};
static void walk_table(const Axis &a, const Axis &c, std::vector<int> &k, std::vector<double> &x)
{
    const int nc = c.n, W = MAX_WALK + 1;
    k.assign((size_t)(nc + 1) * W, 0);
    x.assign((size_t)(nc + 1) * W, 0.0);
    if (!a.active) return;
    for (int I = 1; I < nc; ++I) {
        const double X0 = c.x[(size_t)I - 1], X1 = c.x[(size_t)I], H = X1 - X0, tol = 1e-9 * H;
        const int first = (int)(std::lower_bound(a.x.begin(), a.x.end(), X0 - tol) - a.x.begin());
        int m = 0;
        for (int i = first; i < a.n && a.x[(size_t)i] <= X1 + tol; ++i, ++m)
            if (m < MAX_WALK) {
                k[(size_t)I * W + 1 + m] = i;
                x[(size_t)I * W + 1 + m] = a.x[(size_t)i] - X0;
            }
        if (m == 0 || m > MAX_WALK) continue;
        k[(size_t)I * W] = m;
        x[(size_t)I * W] = H;
    }
}

// Interior point t (x fastest) of a level: its indices and element.
template <class T> __device__ __forceinline__ int64_t point_of(const Grid<T> &g, int64_t t, int &i, int &j, int &k)
{
    split_index(t, (uint32_t)g.nx, (uint32_t)g.ny, (uint64_t)g.nx * (uint64_t)g.ny * (uint64_t)g.nz <= 0xffffffffull,
                i, j, k);
    return g.base + i + (int64_t)j * g.sy + (int64_t)k * g.sz;
}

// Bit sets in device memory: bit q, set it, and set it unless it is (a
// plain load first: most marks of a set that fills find their bit set).
__device__ __forceinline__ bool bit_of(const uint32_t *bits, uint32_t q) { return (bits[q >> 5] >> (q & 31)) & 1u; }
__device__ __forceinline__ void set_bit(uint32_t *bits, uint32_t q) { atomicOr(bits + (q >> 5), 1u << (q & 31)); }
__device__ __forceinline__ void mark_bit(uint32_t *bits, uint32_t q)
{
    if (!bit_of(bits, q)) set_bit(bits, q);
}

// The near tiles of level 0 (general.h, gen_near_kernel): cubes of NEAR_T3
// points in 3D, squares of NEAR_T2 in 2D (both 512 or 256 points, a block
// of NEAR_THREADS), numbered x fastest; a tile is near where it holds a
// fluid point with a closed face.
constexpr int NEAR_T3 = 8, NEAR_T2 = 16, NEAR_THREADS = 256;
template <class T> __host__ __device__ inline int near_side(const Grid<T> &g) { return g.is3d ? NEAR_T3 : NEAR_T2; }
// The tiles along x, y and z.
template <class T> __host__ __device__ inline uint3 near_counts(const Grid<T> &g)
{
    const int t = near_side(g), tz = g.is3d ? t : 1;
    return make_uint3((uint32_t)((g.nx + t - 1) / t), (uint32_t)((g.ny + t - 1) / t), (uint32_t)((g.nz + tz - 1) / tz));
}
template <class T> __host__ __device__ inline uint32_t near_tiles(const Grid<T> &g)
{
    const uint3 n = near_counts(g);
    return n.x * n.y * n.z;
}
// The tile of point (i, j, k), and tile q's first point.
template <class T> __device__ __forceinline__ uint32_t near_tile_of(const Grid<T> &g, int i, int j, int k)
{
    const int t = near_side(g);
    const uint3 n = near_counts(g);
    return (uint32_t)(i / t) + n.x * ((uint32_t)(j / t) + n.y * (uint32_t)(g.is3d ? k / t : 0));
}
template <class T> __device__ __forceinline__ void near_corner(const Grid<T> &g, uint32_t q, int &i, int &j, int &k)
{
    const int t = near_side(g);
    const uint3 n = near_counts(g);
    const uint32_t bz = q / (n.x * n.y), r = q - bz * n.x * n.y, by = r / n.x;
    i = (int)(r - by * n.x) * t;
    j = (int)by * t;
    k = (int)bz * (g.is3d ? t : 1);
}

// Lists the near tiles of the bit set (gen_check_kernel's marks) in
// list, their number in *count, and clears the set for the next mask.  One
// block; the list's order is the atomics', which no result depends on (each
// point lies in one tile, and a colour pass updates every point of its
// colour from the other colour's values).
__global__ void __launch_bounds__(1024) gen_near_list_kernel(uint32_t *bits, uint32_t words, uint32_t *list,
                                                             uint32_t *count)
{
    __shared__ uint32_t n;
    if (threadIdx.x == 0) n = 0;
    __syncthreads();
    for (uint32_t w = threadIdx.x; w < words; w += blockDim.x) {
        uint32_t b = bits[w];
        if (!b) continue;
        bits[w] = 0;
        uint32_t at = atomicAdd(&n, (uint32_t)__popc(b));
        for (; b; b &= b - 1) list[at++] = w * 32u + (uint32_t)(__ffs(b) - 1);
    }
    __syncthreads();
    if (threadIdx.x == 0) *count = n;
}

// One colour of a Gauss-Seidel iteration (weight 1) over the fluid points
// of level 0's near tiles, in place: the points of a colour couple only to
// the other colour's.  After a cycle's post-smoothing of level 0 (multigrid.h,
// near_relax), it takes out the error that the coarse levels leave beside
// solid points, where they cannot follow the walls.  A block per listed
// tile (grid-stride), a thread per column piece.
template <class T>
__global__ void __launch_bounds__(NEAR_THREADS) gen_near_kernel(const Grid<T> g, T *u, const T *__restrict__ f,
                                                                const T *__restrict__ shiftp, int colour,
                                                                const uint32_t *__restrict__ list,
                                                                const uint32_t *__restrict__ count)
{
    const int t = near_side(g), tz = g.is3d ? t : 1, per = NEAR_THREADS / (t * t); // threads per column
    const int x = (int)threadIdx.x % t, y = (int)threadIdx.x / t % t, z0 = (int)threadIdx.x / (t * t);
    const Shift<T> shift = load_shift(shiftp);
    const uint32_t n = *count;
    for (uint32_t e = blockIdx.x; e < n; e += gridDim.x) {
        int i, j, kt;
        near_corner(g, list[e], i, j, kt);
        i += x;
        j += y;
        if (i >= g.nx || j >= g.ny) continue;
        for (int z = z0; z < tz; z += per) {
            const int k = kt + z;
            if (k >= g.nz || ((i + j + k) & 1) != colour) continue;
            // On a periodic axis of odd length the first and last points are
            // neighbours of one colour: the last is left out, so that no point
            // is read while it is written (a one-point axis couples nothing).
            if ((g.px && (g.nx & 1) && g.nx > 1 && i == g.nx - 1) ||
                (g.py && (g.ny & 1) && g.ny > 1 && j == g.ny - 1) ||
                (g.is3d && g.pz && (g.nz & 1) && g.nz > 1 && k == g.nz - 1))
                continue;
            const int64_t p = g.base + i + (int64_t)j * g.sy + (int64_t)k * g.sz;
            if (!gen_fluid(g, p)) continue;
            T diag;
            const T off = stencil_off<T>(g, u + p, p, i, j, k, diag);
            u[p] = relax(u[p], shift.template of_as<T>(f[p]) + off, diag, T(1));
        }
    }
}

// Per byte of v: 1 where the byte's low two bits equal t, else 0.
__device__ __forceinline__ uint32_t type_bytes(uint32_t v, unsigned t)
{
    const uint32_t y = (v & 0x03030303u) ^ (0x01010101u * t); // 0 where equal
    return ((y | y >> 1) & 0x01010101u) ^ 0x01010101u;
}
// type_bytes(v, PGPU_CELL_SOLID) & ones: bit 1 set, bit 0 clear (a shift
// and one three-input logic operation).
static_assert(PGPU_CELL_SOLID == 2, "solid_bytes: the solid type's bits");
__device__ __forceinline__ uint32_t solid_bytes(uint32_t v, uint32_t ones) { return v >> 1 & ~v & ones; }

// Checks a caller's mask (types, a fluid point) and beta (positive, finite)
// over the interior into *flags; with a mask, writes level 0's mask into mk
// (the caller's types with their closed faces, those towards a solid
// neighbour (bit f, GenPoint's order); across a box face the neighbour is a
// ghost, fluid, unless the axis is periodic; the ghosts are never
// written): the spare buffer, taken only when the check passes.  A coarse
// level's closed faces, once gen_coarse_kernel has written its types, come
// from the same pass in place (m == mk, not CHECK): a thread rewrites its
// own bytes and reads only the type bits of its neighbours' and the low
// faces of fraction 0 of those not solid, which the rewrite keeps.  The
// faces of fraction 0 of a point not solid, which couple nothing as closed
// ones do, are closed there too (so the prolongation finds them in one
// byte, gen_shut): coarse_tile wrote a point's low ones into its byte.  A
// warp walks a row (x along the lanes), a lane four points at a time (from
// the row's first, so a row of n points takes n / 4 words however it lies
// in memory), byte-parallel: the four bytes of m and of each neighbour
// (two aligned loads and a funnel shift, the shifts fixed per row), the
// types and closed bits of all four at once, stored as a word where mk's
// row is aligned to one, else byte by byte; a row's end words mask off
// the bytes outside the row and mend the x faces (ghost or wrapped
// neighbour), and only the end words of 2D rows under 16 points go byte
// by byte.  With `near` (the caller's mask), the near tiles of the fluid
// points with a closed face get their bits (gen_near_kernel's tiles).
template <class T, bool CHECK>
__global__ void __launch_bounds__(256, 4) gen_check_kernel(const Grid<T> g, const uint8_t *m, const T *__restrict__ beta,
                                                           unsigned *flags, uint8_t *mk, uint32_t *near,
                                                           unsigned long long *range = nullptr)
{
    double bmin = DBL_MAX, bmax = 0; // (beta, where range: its smallest and largest value)
    const int lane = threadIdx.x & 31;
    const int64_t rows = (int64_t)g.ny * g.nz, warps = (int64_t)gridDim.x * (blockDim.x >> 5);
    unsigned bits = 0;
    // CHECK: the words' bytes, ORed per lane (turned into bits at the end):
    // all of them (high bits set), and those of type 3, fluid, Dirichlet
    uint32_t any_b = 0, t3_b = 0, fl_b = 0, dr_b = 0;
    for (int64_t r = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5; r < rows; r += warps) {
        const int j = (int)(r % g.ny), k = (int)(r / g.ny);
        const int64_t row = g.base + j * g.sy + k * g.sz;
        if (m) {
            // the seven byte streams of the row: the point, x -1, x +1, y -1, y +1, z -1, z +1
            const bool in[4] = {j > 0 || g.py, j < g.ny - 1 || g.py, g.is3d && (k > 0 || g.pz),
                                g.is3d && (k < g.nz - 1 || g.pz)};
            const int64_t o[7] = {0, -1, 1, !in[0] ? 0 : j > 0 ? -g.sy : g.oyl, !in[1] ? 0 : j < g.ny - 1 ? g.sy : g.oyh,
                                  !in[2] ? 0 : k > 0 ? -g.sz : g.ozl, !in[3] ? 0 : k < g.nz - 1 ? g.sz : g.ozh};
            const int words = (g.nx + 3) >> 2;
            const bool aligned = ((uintptr_t)(mk + row) & 3u) == 0; // mk's words: whole stores
            const uint32_t *q[7];
            unsigned sh[7];
#pragma unroll
            for (int f = 0; f < 7; ++f) {
                const uint8_t *p = m + row + o[f];
                sh[f] = 8u * (unsigned)((uintptr_t)p & 3u);
                q[f] = (const uint32_t *)(p - ((uintptr_t)p & 3u));
                // kept in registers: recomputed in the loop below (as the
                // compiler otherwise does) they cost 7% more time
                asm("" : "+l"(q[f]));
                asm("" : "+r"(sh[f]));
            }
            const uint32_t keep = CHECK ? 0xffffffffu : 0x03030303u; // the caller's byte, or the type bits
            uint32_t nb[6]; // the faces' neighbours: a solid one closes it
#pragma unroll
            for (int f = 0; f < 6; ++f) nb[f] = f < 2 || in[f - 2] ? 0x01010101u : 0u;
            const uint8_t *rp = m + row;
            // Whole words at the row's ends too where their loads (up to 8
            // bytes past its last point, 4 before its first) stay inside the
            // array: in 3D a ghost plane lies around the interior, in 2D a
            // ghost row.
            const bool ends_whole = g.is3d || g.nx >= 16;
            for (int w = lane; w < words; w += 32) {
                const int i0 = 4 * w; // the word's first byte's x index
                uint8_t *dst = mk + row + i0;
                const bool inner = i0 > 0 && i0 + 3 < g.nx - 1; // the x neighbours inside the row too
                if (inner || ends_whole) {
                    uint32_t v[7];
#pragma unroll
                    for (int f = 0; f < 7; ++f) v[f] = __funnelshift_r(q[f][w], q[f][w + 1], sh[f]);
                    uint32_t c = 0; // the faces' bits are apart: added, a shift and add each
#pragma unroll
                    for (int f = 0; f < 6; ++f) c += solid_bytes(v[1 + f], nb[f]) << (CLOSED_SHIFT + f);
                    uint32_t out = (v[0] & keep) | c, valid = 0xffffffffu;
                    if (!CHECK) out &= ~((v[0] & v[0] >> 1 & 0x01010101u) * CELL_BITS); // CELL_FLUID_SOLID_CORE: fluid
                    // In place: the faces of fraction 0 of the points not
                    // solid, their low ones from their own bytes, the high
                    // ones from the next point's along each axis inside the
                    // box, across it from the fraction at the ghost.  (A
                    // neighbour's low bit, rewritten meanwhile, may change
                    // only where this point or that neighbour is solid:
                    // this point's bits are then dropped below, or that
                    // face is closed by c anyway.)
                    uint32_t zb = 0;
                    if (!CHECK) {
                        zb = (v[0] & 0x54545454u) | (v[2] & 0x04040404u) << 1;
                        if (j < g.ny - 1) zb |= (v[4] & 0x10101010u) << 1;
                        if (g.is3d && k < g.nz - 1) zb |= (v[6] & 0x40404040u) << 1;
                        const bool ty = j == g.ny - 1 && g.fy, tz = g.is3d && k == g.nz - 1 && g.fz;
                        if (ty || tz)
#pragma unroll
                            for (int b = 0; b < 4; ++b) {
                                const int64_t e = row + i0 + b;
                                if (i0 + b < 0 || i0 + b >= g.nx) continue;
                                if (ty && g.fy[e + g.sy] == T(0)) zb |= 0x20u << (8 * b);
                                if (tz && g.fz[e + g.sz] == T(0)) zb |= 0x80u << (8 * b);
                            }
                        zb &= ~(type_bytes(v[0], PGPU_CELL_SOLID) * 0xffu);
                    }
                    if (!inner) { // the bytes inside the row; the x faces across the box
                        valid = 0;
#pragma unroll
                        for (int b = 0; b < 4; ++b) valid |= i0 + b >= 0 && i0 + b < g.nx ? 0xffu << (8 * b) : 0u;
                        if (i0 <= 0) {
                            const unsigned bit = 1u << (CLOSED_SHIFT + 8 * -i0);
                            out = (out & ~bit) | (g.px && (rp[g.oxl] & CELL_BITS) == PGPU_CELL_SOLID ? bit : 0u);
                        }
                        if (i0 + 3 >= g.nx - 1) {
                            const unsigned bit = 2u << (CLOSED_SHIFT + 8 * (g.nx - 1 - i0));
                            out = (out & ~bit) | (g.px && (rp[g.nx - 1 + g.oxh] & CELL_BITS) == PGPU_CELL_SOLID ? bit : 0u);
                            if (!CHECK && g.fx && g.fx[row + g.nx] == T(0) &&
                                (rp[g.nx - 1] & CELL_BITS) != PGPU_CELL_SOLID)
                                zb |= bit;
                        }
                    }
                    out |= zb;
                    if (CHECK && near) { // a fluid byte with a closed face (x + 63 carries into bit 6 where x > 0)
                        const uint32_t cn = out >> CLOSED_SHIFT & 0x3f3f3f3fu;
                        if ((cn + 0x3f3f3f3fu) >> 6 & type_bytes(out, PGPU_CELL_FLUID) & valid)
                            mark_bit(near, near_tile_of(g, i0, j, k));
                    }
                    if (CHECK) {
                        const uint32_t ones = valid & 0x01010101u, hi = v[0] >> 1;
                        any_b |= v[0] & valid;
                        t3_b |= v[0] & hi & ones;
                        fl_b |= ~(v[0] | hi) & ones;
                        dr_b |= v[0] & ~hi & ones;
                    }
                    if (valid == 0xffffffffu && aligned) {
                        *(uint32_t *)dst = out;
                    } else {
#pragma unroll
                        for (int b = 0; b < 4; ++b)
                            if ((valid >> (8 * b)) & 1u) dst[b] = (uint8_t)(out >> (8 * b));
                    }
                    continue;
                }
                // An end word of a short 2D row: byte by byte, those inside the row.
#pragma unroll 1
                for (int b = 0; b < 4; ++b) {
                    const int i = i0 + b;
                    if (i < 0 || i >= g.nx) continue;
                    auto solid = [](unsigned x) { return (x & CELL_BITS) == PGPU_CELL_SOLID ? 1u : 0u; };
                    unsigned c = 0;
                    if (i > 0 || g.px) c |= solid(rp[i > 0 ? i - 1 : i + g.oxl]);
                    if (i < g.nx - 1 || g.px) c |= solid(rp[i < g.nx - 1 ? i + 1 : i + g.oxh]) << 1;
#pragma unroll
                    for (int f = 0; f < 4; ++f)
                        if (in[f]) c |= solid(rp[i + o[3 + f]]) << (2 + f);
                    unsigned t = rp[i] & (CHECK ? 0xffu : CELL_BITS);
                    if (!CHECK && t == CELL_FLUID_SOLID_CORE) t = PGPU_CELL_FLUID;
                    if (!CHECK && t != PGPU_CELL_SOLID) c |= zero_faces(g, row + i);
                    if (CHECK && near && t == PGPU_CELL_FLUID && c) mark_bit(near, near_tile_of(g, i, j, k));
                    bits |= t > PGPU_CELL_SOLID        ? GEN_BAD_TYPE
                            : t == PGPU_CELL_FLUID     ? GEN_FLUID
                            : t == PGPU_CELL_DIRICHLET ? GEN_HELD
                                                       : 0u;
                    dst[b] = (uint8_t)(t | c << CLOSED_SHIFT);
                }
            }
        }
        if (beta)
            for (int i = lane; i < g.nx; i += 32) {
                const double b = (double)beta[row + i];
                if (!(b > 0) || !(b <= DBL_MAX)) bits |= GEN_BAD_BETA;
                else if (!(b >= beta_recip_min<T>() && b <= beta_recip_max<T>())) bits |= GEN_WIDE_BETA;
                bmin = b < bmin ? b : bmin; // (NaN: refused above)
                bmax = b > bmax ? b : bmax;
            }
    }
    if (CHECK) {
        bits |= (any_b & 0xfcfcfcfcu) || t3_b ? GEN_BAD_TYPE : 0u;
        bits |= (fl_b ? GEN_FLUID : 0u) | (dr_b ? GEN_HELD : 0u);
        bits = __reduce_or_sync(0xffffffffu, bits);
        if (bits && lane == 0) atomicOr(flags, bits);
        if (range) { // positive doubles order as their bits do
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) {
                bmin = fmin(bmin, __shfl_xor_sync(0xffffffffu, bmin, o));
                bmax = fmax(bmax, __shfl_xor_sync(0xffffffffu, bmax, o));
            }
            if (lane == 0 && bmax > 0) {
                atomicMin(range, (unsigned long long)__double_as_longlong(bmin));
                atomicMax(range + 1, (unsigned long long)__double_as_longlong(bmax));
            }
        }
    }
}

// Level 0's face fractions from beta: harmonic means between neighbours
// (the wrapped one on a periodic axis), beta at box faces; the high face of
// the last node goes to its ghost.  With bw (beta inside beta_recip_min ..
// max: no GEN_WIDE_BETA) the means are beta_face's of the reciprocals, which
// go to bw, a box face's beta_face(1/b, 1/b) and its ghost's 1/b the same
// (beta_tile_kernel forms every face so); else 2 a b / (a + b) in double, formed as
// min (2 / (1 + min / max)): the product a b underflows or overflows for
// beta beyond about 1e-154 .. 1e154 (double's beta outside the reciprocals'
// range), the mean lies between min and 2 min.
__device__ __forceinline__ double harmonic(double a, double b)
{
    const double lo = fmin(a, b), hi = fmax(a, b);
    return lo * (2.0 / (1.0 + lo / hi));
}
template <class T>
__global__ void gen_fractions_kernel(const Grid<T> g, const T *__restrict__ beta, T *fx, T *fy, T *fz, T *bw)
{
    PGPU_GRID_STRIDE(t, (int64_t)g.nx * g.ny * g.nz)
    {
        int i, j, k;
        const int64_t p = point_of(g, t, i, j, k);
        const double b = (double)beta[p];
        const T wb = T(1.0 / b), edge = bw ? beta_face(wb, wb) : T(b);
        if (bw) bw[p] = wb;
        auto mean = [&](int64_t q) { // the face's mean with the point at q
            return bw ? beta_face(T(1.0 / (double)beta[q]), wb) : T(harmonic(b, (double)beta[q]));
        };
        auto face = [&](T *fr, int m, int n, int per, int64_t s) {
            fr[p] = m > 0 ? mean(p - s) : per ? mean(p + (n - 1) * s) : edge;
            if (m == n - 1) fr[p + s] = per ? mean(p - (n - 1) * s) : edge;
            if (bw && !per && m == 0) bw[p - s] = wb;
            if (bw && !per && m == n - 1) bw[p + s] = wb;
        };
        face(fx, i, g.nx, g.px, 1);
        face(fy, j, g.ny, g.py, g.sy);
        if (g.is3d) face(fz, k, g.nz, g.pz, g.sz);
    }
}

template <class T> struct GenCoarse {
    Grid<T> f, c;     // the fine level as the kernels see it (its mask and fractions), the coarse level
    uint8_t *cmk;     // coarse types (NULL: no mask)
    T *cf[3];         // coarse face fractions
    // per element of the coarse / fine level: 1 where every face fraction
    // coarse_put wrote is 1 (those window_scan counts), 0 where it or a
    // kernel after it wrote another (gen_first_kernel's test of a tile's
    // fractions, a byte a point instead of three values; NULL: none, the
    // fine level's on level 0)
    uint8_t *cone;
    const uint8_t *fone;
    CoarseAxis ax[3]; // per axis: rows, paths and the tiles' fine slots
    WalkAxis wk[3];   // per axis: the fine nodes between two coarse ones (gen_distance_kernel)
    ParentAxis par[3]; // per axis: each fine point's coarse parents (gen_iso_kernel)
    uint8_t *iso;     // gen_iso_kernel's candidates and marks, a byte per coarse element (NULL: none)
    uint32_t *cand;   // the candidates' interior indices, listed by coarse_tile (NULL: gen_iso_kernel scans)
    uint32_t *ncand;  // their number
    uint32_t *list;   // the tiles that take the stages, listed by the first pass (NULL: every tile)
    uint32_t *count;  // their number
    unsigned tiles;   // the level's tiles
    bool scale;       // the fine fractions carry beta's scale (gen_distance_kernel's end pieces)
    bool series;      // faces along a coarse face's path in series (the pair's transfers are odi.h's)
};

} // namespace pgpu
