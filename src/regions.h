// regions.h -- connected fluid regions and the projection of singular ones; General<T>
#pragma once
#include "general.h"

namespace pgpu {

// SH: lab is a block's shared array, whose every access while linking is
// an atomic one (the linking races by design; so each access is one the
// hardware orders and a race checker accepts); a global array's parents
// are read by volatile loads and halved by plain stores.
template <bool SH> __device__ __forceinline__ uint32_t uf_parent(uint32_t *lab, uint32_t x)
{
    if (SH) return atomicOr(lab + x, 0u) & LAB_INDEX;
    return ((volatile uint32_t *)lab)[x] & LAB_INDEX;
}
template <bool SH> __device__ __forceinline__ uint32_t uf_find(uint32_t *lab, uint32_t x)
{
    // With path halving (each visited point to its grandparent, as ECL-CC
    // does): parents only decrease and any ancestor lies in the point's set,
    // so a concurrent link is never lost (the linking thread goes on from
    // the old parent).  Labels carry no flag bits while linking (nor do the
    // tile-local indices of gen_regions_tile_kernel, below 4096).
    uint32_t curr = uf_parent<SH>(lab, x);
    if (curr == x) return x;
    uint32_t prev = x, next;
    while (curr > (next = uf_parent<SH>(lab, curr))) {
        if (SH) atomicMin(lab + prev, next);
        else ((volatile uint32_t *)lab)[prev] = next;
        prev = curr;
        curr = next;
    }
    return curr;
}
template <bool SH> __device__ __forceinline__ void uf_union(uint32_t *lab, uint32_t a, uint32_t b)
{
    for (;;) {
        a = uf_find<SH>(lab, a);
        b = uf_find<SH>(lab, b);
        if (a == b) return;
        if (a > b) { const uint32_t s = a; a = b; b = s; }
        const uint32_t old = atomicMin(lab + b, a);
        if (old == b) return;
        b = old;
    }
}

// Region labelling.  Union-find on the fluid points, first within tiles of
// RG_TX x RG_TY x RG_TZ points (gen_regions_tile_kernel, which also sets
// the touch bits of the parts on a Dirichlet box face), then those of the
// parts next to a Dirichlet point (gen_regions_touch_kernel),
// the links across the faces between tiles and the periodic seams
// (gen_regions_link_kernel), the tiles' roots alone
// (gen_regions_roots_kernel), and last each point its region's label
// (gen_regions_final_kernel).  Every label but a final one is an interior
// index, and every parent is a tile root, so a point reaches its region's
// root in at most two steps once the tile roots are flattened.  Two bit sets
// over the interior points: the tile roots, and the roots whose part (after
// linking: whose region) touches a Dirichlet point or face.
constexpr int RG_TX = 32, RG_TY = 8, RG_TZ_3D = 16;
static_assert(RG_TX == 32, "a tile row is a warp");

// The tiles of a level, numbered x fastest.
template <class T> __host__ __device__ inline uint32_t rg_tiles(const Grid<T> &g)
{
    const int tz = g.is3d ? RG_TZ_3D : 1;
    return (uint32_t)((g.nx + RG_TX - 1) / RG_TX) * (uint32_t)((g.ny + RG_TY - 1) / RG_TY) *
           (uint32_t)((g.nz + tz - 1) / tz);
}
// A tile wholly of fluid points (its bit set in `full`) has one label, its
// first point's (the root, an index): gen_regions_tile_kernel writes no
// other.  So the label of point (i, j, k) (interior index q) is read at
// rg_at's index: that first point there, q elsewhere.
template <class T>
__device__ __forceinline__ uint32_t rg_at(const Grid<T> &g, const uint32_t *full, int i, int j, int k, uint32_t q)
{
    const int tz = g.is3d ? RG_TZ_3D : 1;
    const uint32_t bi = (uint32_t)i / RG_TX, bj = (uint32_t)j / RG_TY, bk = (uint32_t)k / (uint32_t)tz;
    const uint32_t bxn = (uint32_t)(g.nx + RG_TX - 1) / RG_TX, byn = (uint32_t)(g.ny + RG_TY - 1) / RG_TY;
    if (!bit_of(full, bi + bxn * (bj + byn * bk))) return q;
    return bi * RG_TX + (uint32_t)g.nx * (bj * RG_TY + (uint32_t)g.ny * bk * (uint32_t)tz);
}

// A block per tile (a warp per row of RG_TX points, each thread a column of
// RG_TZ), tiles numbered x fastest.  A row's runs of fluid points need no
// linking: each point's parent is its run's first point, from the row's
// ballot.  Between two rows (y or z) only the first point of each stretch
// where both rows are fluid links: the rest of the stretch lies in the same
// two runs.  The root is the smallest index of its part of the tile (a tile
// orders its points as the grid does), so labels only point down.  Each
// point's label is its tile root as an interior index; each tile root sets
// its bit in roots.  A tile wholly of fluid writes only its root's label
// and its bit in full (rg_at).  (2D: tiles of one plane, RG_TZ = 1.)
// The tile's coordinates come from the block index by FastDiv (dx, dy: the
// tiles along x and y), the column's bytes from one running address.  A
// part with a fluid point on a Dirichlet box face sets its root's touch
// bit here (a whole tile once).
template <class T> __device__ __forceinline__ bool dirichlet_face(const Grid<T> &g, int f)
{
    const int d = f >> 1, per = d == 0 ? g.px : d == 1 ? g.py : g.pz;
    return (d < 2 || g.is3d) && !per && ((g.dirichlet >> f) & 1);
}
// Whether the box of points from (i0, j0, k0) to (i1, j1, k1) meets a
// Dirichlet box face.
template <class T>
__device__ __forceinline__ bool meets_dirichlet_face(const Grid<T> &g, int i0, int j0, int k0, int i1, int j1, int k1)
{
    return (i0 == 0 && dirichlet_face(g, 0)) || (i1 == g.nx - 1 && dirichlet_face(g, 1)) ||
           (j0 == 0 && dirichlet_face(g, 2)) || (j1 == g.ny - 1 && dirichlet_face(g, 3)) ||
           (k0 == 0 && dirichlet_face(g, 4)) || (k1 == g.nz - 1 && dirichlet_face(g, 5));
}
template <class T, int RG_TZ>
__global__ void __launch_bounds__(RG_TX *RG_TY) gen_regions_tile_kernel(const Grid<T> g, uint32_t *lab,
                                                                         uint32_t *roots, uint32_t *full,
                                                                         uint32_t *touch, const FastDiv dx,
                                                                         const FastDiv dy)
{
    constexpr int TP = RG_TZ * RG_TY * RG_TX;
    __shared__ uint32_t par[TP];
    __shared__ unsigned rows[RG_TZ * RG_TY]; // each row's fluid points, bit tx
    const unsigned bxn = (unsigned)(g.nx + RG_TX - 1) / RG_TX, byn = (unsigned)(g.ny + RG_TY - 1) / RG_TY;
    const unsigned yz = dx(blockIdx.x), bx = blockIdx.x - yz * bxn, bz = dy(yz), by = yz - bz * byn;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int i = bx * RG_TX + tx, j = by * RG_TY + ty, k0 = bz * RG_TZ;
    const bool col = i < g.nx && j < g.ny;
    const unsigned below = 0xffffffffu >> (31 - tx); // bits 0..tx
    bool whole = true; // this thread's column wholly fluid (outside the grid: not)
    unsigned char mb[RG_TZ]; // the column's bytes, their loads in flight together
    const uint8_t *cp = g.mk + (g.base + i + (int64_t)j * g.sy + (int64_t)k0 * g.sz);
#pragma unroll
    for (int z = 0; z < RG_TZ; ++z, cp += g.sz) {
        mb[z] = col && k0 + z < g.nz ? __ldg(cp) : (unsigned char)PGPU_CELL_SOLID;
        whole = whole && (mb[z] & CELL_BITS) == PGPU_CELL_FLUID;
    }
    if (__syncthreads_and(whole)) { // a whole tile of fluid (the most common): one part, its first point the root
        if (tx == 0 && ty == 0) {
            const uint32_t q0 = (uint32_t)(bx * RG_TX + (int64_t)g.nx * (by * RG_TY + (int64_t)g.ny * k0));
            set_bit(roots, q0);
            set_bit(full, blockIdx.x);
            lab[q0] = q0;
            // a whole tile lies inside the grid: its last point is at most the last
            const int i0 = (int)bx * RG_TX, j0 = (int)by * RG_TY;
            if (meets_dirichlet_face(g, i0, j0, k0, i0 + RG_TX - 1, j0 + RG_TY - 1, k0 + RG_TZ - 1)) set_bit(touch, q0);
        }
        return;
    }
#pragma unroll
    for (int z = 0; z < RG_TZ; ++z) {
        const int r = ty + RG_TY * z, l = tx + RG_TX * r;
        const bool fluid = (mb[z] & CELL_BITS) == PGPU_CELL_FLUID;
        const unsigned f = __ballot_sync(0xffffffffu, fluid), starts = f & ~(f << 1);
        par[l] = fluid ? (uint32_t)(RG_TX * r + 31 - __clz(starts & below)) : LAB_NONE;
        if (tx == 0) rows[r] = f;
    }
    __syncthreads();
    for (int z = 0; z < RG_TZ; ++z) {
        const int r = ty + RG_TY * z, l = tx + RG_TX * r;
        const unsigned f = rows[r], bit = 1u << tx;
        if (ty + 1 < RG_TY) {
            const unsigned both = f & rows[r + 1];
            if ((both & ~(both << 1)) & bit) uf_union<true>(par, l, l + RG_TX);
        }
        if (z + 1 < RG_TZ) {
            const unsigned both = f & rows[r + RG_TY];
            if ((both & ~(both << 1)) & bit) uf_union<true>(par, l, l + RG_TX * RG_TY);
        }
    }
    __syncthreads();
    for (int z = 0; z < RG_TZ; ++z) {
        const int l = tx + RG_TX * (ty + RG_TY * z), k = k0 + z;
        if (!col || k >= g.nz) continue;
        const int64_t q = i + (int64_t)g.nx * (j + (int64_t)g.ny * k);
        uint32_t out = LAB_NONE;
        if (par[l] != LAB_NONE) {
            uint32_t r = (uint32_t)l, n;
            while ((n = par[r]) != r) r = n;
            if (r == (uint32_t)l) set_bit(roots, (uint32_t)q);
            const int rx = (int)(r % RG_TX), ry = (int)(r / RG_TX % RG_TY), rz = (int)(r / (RG_TX * RG_TY));
            out = (uint32_t)(bx * RG_TX + rx + (int64_t)g.nx * (by * RG_TY + ry + (int64_t)g.ny * (k0 + rz)));
            if (meets_dirichlet_face(g, i, j, k, i, j, k)) mark_bit(touch, out);
        }
        lab[q] = out;
    }
}

// The touch bits of the tile roots (lab as the tile kernel left it) whose
// part has a fluid point next to a Dirichlet point (the tile kernel sets
// those on a Dirichlet box face): a warp per row (x along the lanes), each
// fluid point with a Dirichlet neighbour (the ghost across a box face is
// none; across a periodic seam the wrapped point) marking its own root.
// Launched only where the mask has Dirichlet points.
template <class T>
__global__ void gen_regions_touch_kernel(const Grid<T> g, const uint32_t *lab, const uint32_t *full, uint32_t *touch)
{
    auto fluid = [&](int64_t e) { return (g.mk[e] & CELL_BITS) == PGPU_CELL_FLUID; };
    auto mark = [&](const int (&c)[3], int64_t q) {
        const uint32_t r = lab[rg_at(g, full, c[0], c[1], c[2], (uint32_t)q)];
        mark_bit(touch, r);
    };
    const int64_t rows = (int64_t)g.ny * g.nz, warps = (int64_t)gridDim.x * (blockDim.x >> 5);
    auto held_at = [&](bool there, int64_t e) { return there && (__ldg(g.mk + e) & CELL_BITS) == PGPU_CELL_DIRICHLET; };
    for (int64_t r = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5; r < rows; r += warps) {
        const int j = (int)(r % g.ny), k = (int)(r / g.ny);
        const int64_t row = g.base + j * g.sy + k * g.sz, q0 = (int64_t)g.nx * (j + (int64_t)g.ny * k);
        // the neighbours across y and z: inside, wrapped on a periodic axis, or none
        const bool yl = j > 0 || (g.py && g.ny > 1), yh = j < g.ny - 1 || (g.py && g.ny > 1);
        const bool zl = g.is3d && (k > 0 || (g.pz && g.nz > 1)), zh = g.is3d && (k < g.nz - 1 || (g.pz && g.nz > 1));
        const int64_t oyl = j > 0 ? -g.sy : g.oyl, oyh = j < g.ny - 1 ? g.sy : g.oyh;
        const int64_t ozl = k > 0 ? -g.sz : g.ozl, ozh = k < g.nz - 1 ? g.sz : g.ozh;
        for (int i = (int)(threadIdx.x & 31); i < g.nx; i += 32) {
            const int64_t p = row + i;
            if (!fluid(p)) continue;
            const bool xl = i > 0 || (g.px && g.nx > 1), xh = i < g.nx - 1 || (g.px && g.nx > 1);
            const bool h0 = held_at(xl, p + (i > 0 ? -1 : g.oxl)), h1 = held_at(xh, p + (i < g.nx - 1 ? 1 : g.oxh));
            const bool h2 = held_at(yl, p + oyl), h3 = held_at(yh, p + oyh);
            const bool h4 = held_at(zl, p + ozl), h5 = held_at(zh, p + ozh);
            if (h0 || h1 || h2 || h3 || h4 || h5) {
                const int c[3] = {i, j, k};
                mark(c, q0 + i);
            }
        }
    }
}

// The pairs of neighbours that lie in two tiles or across a periodic seam:
// for axis d, the low point's coordinate c = RG_T[d] m - 1 (m = 1 ..
// (n - 1) / RG_T[d]) and, on a periodic axis, n - 1 (its neighbour is 0).
__host__ __device__ inline int seam_planes(int n, int tile, int per) { return (n - 1) / tile + (per && n > 1); }

// Links the fluid pairs between tiles (the x pairs a thread per column of
// a tile's height along z, the y and z pairs a warp per row along x),
// unless the pair
// is joined already through others: an x pair where the pair at j - 1 (or
// k - 1) in the same two tiles is fluid (each point is linked to its
// neighbour there inside its tile), a y or z pair where the pair at x - 1
// is fluid (the two x links are inside a tile or x pairs between tiles) or
// the pair in the row before inside the same two tiles (k - 1 for a y
// pair, j - 1 for a z pair) is, as for an x pair (the tile kernel joins
// every two fluid neighbours inside a tile).
// Every skipped pair refers to one nearer the origin of the same kind, so
// by induction every fluid pair ends up joined.
template <class T> __global__ void gen_regions_link_kernel(const Grid<T> g, uint32_t *lab, const uint32_t *full)
{
    const int d = (int)blockIdx.y; // the axis of the pairs
    if (d == 2 && !g.is3d) return;
    const int n = d == 0 ? g.nx : d == 1 ? g.ny : g.nz, tl = d == 0 ? RG_TX : d == 1 ? RG_TY : RG_TZ_3D;
    const int per = d == 0 ? g.px : d == 1 ? g.py : g.pz;
    const int64_t sd = d == 0 ? 1 : d == 1 ? g.sy : g.sz;
    auto fluid = [](uint8_t v) { return (v & CELL_BITS) == PGPU_CELL_FLUID; };
    if (d > 0) {
        // A warp per row of pairs along x (seam plane m, the other axis r),
        // lanes over x in chunks of 32: a pair links where both points are
        // fluid and the pair at x - 1 is not (a ballot; the previous
        // chunk's last pair carried in).
        const int lane = threadIdx.x & 31;
        const int64_t other = d == 1 ? g.nz : g.ny, rows = (int64_t)seam_planes(n, tl, per) * other;
        const int64_t warps = (int64_t)gridDim.x * (blockDim.x >> 5);
        const int64_t qd = d == 1 ? (int64_t)g.nx : (int64_t)g.nx * g.ny;
        const int rt = d == 1 ? RG_TZ_3D : RG_TY; // the rows' axis (z for y pairs, y for z pairs): its tile length
        const int64_t so = d == 1 ? g.sz : g.sy;  // ... and stride
        for (int64_t w = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5; w < rows; w += warps) {
            const uint32_t wu = (uint32_t)w, ou = (uint32_t)other; // rows < 2^31 (a mask's points are)
            const int m = (int)(wu / ou), r = (int)(wu - (uint32_t)m * ou);
            const int c = m < (n - 1) / tl ? tl * (m + 1) - 1 : n - 1;
            const int j = d == 1 ? c : r, k = d == 1 ? r : c;
            const bool seam = c == n - 1;
            const int64_t p0 = g.base + (int64_t)j * g.sy + (int64_t)k * g.sz;
            const int64_t q0 = (int64_t)g.nx * (j + (int64_t)g.ny * k);
            const int64_t po0 = seam ? p0 - (int64_t)(n - 1) * sd : p0 + sd; // the high row
            const int64_t qo0 = seam ? q0 - (int64_t)(n - 1) * qd : q0 + qd;
            unsigned carry = 0; // bit 0: the pair before this chunk is fluid
            constexpr int U = 4; // chunks whose loads are in flight together
            for (int i00 = 0; i00 < g.nx; i00 += 32 * U) {
                unsigned char v[U][2];
#pragma unroll
                for (int u = 0; u < U; ++u) {
                    const int i = i00 + 32 * u + lane;
                    v[u][0] = v[u][1] = (unsigned char)PGPU_CELL_SOLID;
                    if (i < g.nx) {
                        v[u][0] = __ldg(g.mk + p0 + i);
                        v[u][1] = __ldg(g.mk + po0 + i);
                    }
                }
#pragma unroll
                for (int u = 0; u < U; ++u) {
                    const int i = i00 + 32 * u + lane;
                    const bool both = fluid(v[u][0]) && fluid(v[u][1]);
                    const unsigned b = __ballot_sync(0xffffffffu, both), starts = b & ~(b << 1 | carry);
                    // the pair in the row before, inside the same two tiles (a 2D y pair has none)
                    if (((starts >> lane) & 1u) &&
                        (r % rt == 0 || !fluid(__ldg(g.mk + p0 + i - so)) || !fluid(__ldg(g.mk + po0 + i - so)))) {
                        const int jo = d == 1 ? (seam ? 0 : c + 1) : j, ko = d == 2 ? (seam ? 0 : c + 1) : k;
                        uf_union<false>(lab, rg_at(g, full, i, j, k, (uint32_t)(q0 + i)),
                                        rg_at(g, full, i, jo, ko, (uint32_t)(qo0 + i)));
                    }
                    carry = b >> 31;
                }
            }
        }
        return;
    }
    // The x pairs: a thread per seam plane m, z slab of RG_TZ_3D planes
    // (one tile's; 2D: the plane) and y, y along the lanes (padded to a
    // whole warp, so that lane 0's y is a tile's first row), each walking
    // its slab's pairs with their loads in flight together.  Its pair at
    // z - 1 is its own, the pair at y - 1 the lane before's.
    const int tz = g.is3d ? RG_TZ_3D : 1, slabs = (g.nz + tz - 1) / tz, ypad = (g.ny + 31) & ~31;
    PGPU_GRID_STRIDE(s64, (int64_t)seam_planes(n, tl, per) * slabs * ypad)
    {
        // below 2^32: with a mask's points below 2^31, the padding to whole
        // warps and z slabs at most doubles them on grids that large
        const uint32_t s = (uint32_t)s64;
        const int j = (int)(s % (uint32_t)ypad), ms = (int)(s / (uint32_t)ypad);
        const int m = ms / slabs, k0 = (ms - m * slabs) * tz;
        const int i = m < (n - 1) / tl ? tl * (m + 1) - 1 : n - 1, io = i == n - 1 ? 0 : i + 1; // the high point
        unsigned pairs = 0; // bit z: the pair at k0 + z of both points fluid
        uint8_t v[RG_TZ_3D][2];
#pragma unroll
        for (int z = 0; z < RG_TZ_3D; ++z) {
            const bool in = z < tz && j < g.ny && k0 + z < g.nz;
            const int64_t p = g.base + (int64_t)j * g.sy + (int64_t)(k0 + z) * g.sz;
            v[z][0] = in ? __ldg(g.mk + p + i) : (uint8_t)PGPU_CELL_SOLID;
            v[z][1] = in ? __ldg(g.mk + p + io) : (uint8_t)PGPU_CELL_SOLID;
        }
#pragma unroll
        for (int z = 0; z < RG_TZ_3D; ++z) pairs |= (fluid(v[z][0]) && fluid(v[z][1]) ? 1u : 0u) << z;
        const unsigned before = __shfl_up_sync(0xffffffffu, pairs, 1); // the pairs at y - 1 (lane 0: unused)
        for (unsigned b = pairs & ~(pairs << 1) & ~(j % RG_TY ? before : 0u); b; b &= b - 1) {
            const int k = k0 + __ffs(b) - 1;
            const int64_t q = i + (int64_t)g.nx * (j + (int64_t)g.ny * k);
            uf_union<false>(lab, rg_at(g, full, i, j, k, (uint32_t)q),
                            rg_at(g, full, io, j, k, (uint32_t)(q - i + io)));
        }
    }
}

// On the tile roots (a thread per word of the bit set).  Stage 0: each its
// region's root as its label, and the root's touch bit set where its own is
// (a label's step may halve while another thread sets it: either value
// leads to the root, and a root's label is not written).  Stage 1: each
// region's root its final label, regular, or singular with a number (count
// in *count, GEN_TOO_MANY past cap).
__global__ void gen_regions_roots_kernel(uint32_t *lab, const uint32_t *roots, uint32_t *touch, uint32_t words,
                                         int stage, uint32_t *count, uint32_t cap, unsigned *flags)
{
    PGPU_GRID_STRIDE(w, (int64_t)words)
    {
        for (uint32_t b = roots[w]; b; b &= b - 1) {
            const uint32_t q = (uint32_t)w * 32u + (uint32_t)(__ffs(b) - 1);
            if (stage == 0) {
                volatile const uint32_t *v = lab;
                uint32_t r = q, nx;
                while ((nx = v[r]) != r) r = nx;
                if (r == q) continue;
                lab[q] = r;
                if (bit_of(touch, q)) set_bit(touch, r);
            } else if (lab[q] == q) {
                if (bit_of(touch, q)) {
                    lab[q] = LAB_REGULAR;
                } else {
                    const uint32_t id = atomicAdd(count, 1u);
                    if (id >= cap) atomicOr(flags, GEN_TOO_MANY);
                    lab[q] = id < cap ? (LAB_SINGULAR | id) : LAB_REGULAR;
                }
            }
        }
    }
}

// Every fluid point its region's final label (its tile root's root's; a
// final label has bit 31 set, an index never), counted into the singular
// region's size (one atomic per region a warp holds).  Only the projection
// of singular regions reads the labels: without one (*count 0) the pass
// returns at once.
template <class T>
__global__ void gen_regions_final_kernel(const Grid<T> g, uint32_t *lab, const uint32_t *full, uint32_t *sizes,
                                         const uint32_t *count)
{
    if (*count == 0) return;
    const uint32_t npts = (uint32_t)g.nx * (uint32_t)g.ny * (uint32_t)g.nz;
    // Four points a thread at a time, each step's loads together.  Every
    // read after the first is of a tile root; a tile root that is not its
    // region's root may be rewritten meanwhile (region root -> final
    // label), and either value leads to the same label.
    constexpr int U = 4;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    const int lane = threadIdx.x & 31;
    for (int64_t b = blockIdx.x * (int64_t)blockDim.x + (threadIdx.x & ~31u); b < npts; b += U * stride) {
        uint32_t v[U];
        bool mv[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int64_t q = b + lane + u * stride;
            v[u] = LAB_NONE;
            if (q < npts) {
                int i, j, k;
                split_index(q, (uint32_t)g.nx, (uint32_t)g.ny, true, i, j, k);
                const uint32_t at = rg_at(g, full, i, j, k, (uint32_t)q);
                v[u] = at == (uint32_t)q ? lab[q] : at; // a full tile's point: its root
            }
            mv[u] = v[u] != LAB_NONE && !(v[u] & LAB_SINGULAR);
        }
#pragma unroll
        for (int u = 0; u < U; ++u)
            if (mv[u]) v[u] = lab[v[u]];
#pragma unroll
        for (int u = 0; u < U; ++u)
            if (mv[u] && !(v[u] & LAB_SINGULAR)) v[u] = lab[v[u]];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            if (mv[u]) lab[b + lane + u * stride] = v[u];
            const bool counted = v[u] != LAB_NONE && v[u] != LAB_REGULAR;
            const unsigned in = __ballot_sync(0xffffffffu, counted);
            if (!counted) continue;
            const unsigned same = __match_any_sync(in, v[u]);
            if (lane == __ffs(same) - 1) atomicAdd(sizes + (v[u] & LAB_INDEX), (unsigned)__popc(same));
        }
    }
}

// Per-region sums over the singular regions' points of v = src (+ the
// boundary terms when `terms`, the Neumann data of b).  mode 0: max |v|
// into *maxbits; 1: sum v in fixed point (each value an integer of at most
// 2^62, scaled to maxbits) into sums[2 id .. 2 id + 1], a 128-bit integer
// (low word, high word); 2: out = src - the region's mean (out may be src),
// and *first = region 0's mean.
// The sums are exact, so independent of the order of the atomics, and a
// value keeps 62 bits whatever the grid's size (64-bit sums with room for
// every point kept 62 - log2(points): a mean off by 1e-11 of max |v| at
// 512^3).  A thread adds its points into one register sum while their
// region stays the same and a warp adds its sums together where they share
// one: an atomic per point on one region's word took 100 ms at 512^3.
// The mean is formed as two doubles (hi + lo): where u has drifted far
// along its null space, the mean's own rounding (eps |mean|) was the
// error left in u.
__device__ __forceinline__ void add_sum128(long long *sum, __int128 a)
{
    if (a == 0) return;
    unsigned long long *w = (unsigned long long *)sum;
    const unsigned long long lo = (unsigned long long)a, hi = (unsigned long long)(a >> 64);
    const unsigned long long old = atomicAdd(w, lo);
    const unsigned long long c = hi + (old + lo < old ? 1ull : 0ull); // the low word's carry
    if (c) atomicAdd(w + 1, c);
}
__device__ __forceinline__ double project_scale(const unsigned long long *maxbits)
{
    const double vmax = __longlong_as_double((long long)*maxbits);
    // 2^e with vmax 2^e <= 2^62 (no value's integer beyond 2^62; 2^1000 at
    // most, where vmax is below 2^-938)
    return vmax > 0 ? exp2(fmin(62.0 - ceil(log2(vmax)), 1000.0)) : 1.0;
}
template <class T>
__global__ void gen_project_kernel(const Grid<T> g, const uint32_t *__restrict__ lab, const T *src, const T *u,
                                   int terms, int mode, unsigned long long *maxbits, long long *sums,
                                   const uint32_t *__restrict__ sizes, T *out, double *first)
{
    const double scale = project_scale(maxbits);
    unsigned long long mine = 0;
    uint32_t cur = LAB_NONE; // mode 1: the region of acc; mode 2: that of mhi, mlo
    __int128 acc = 0;
    double mhi = 0, mlo = 0;
    PGPU_GRID_STRIDE(t, (int64_t)g.nx * g.ny * g.nz)
    {
        const uint32_t v = lab[t];
        if (v == LAB_NONE || v == LAB_REGULAR) continue;
        const uint32_t id = v & LAB_INDEX;
        int i, j, k;
        const int64_t p = point_of(g, t, i, j, k);
        if (mode == 2) {
            if (id != cur) {
                // sum / n = q0 + r / n (q0 from the sum's double, r exact)
                const unsigned long long *w = (const unsigned long long *)(sums + 2 * id);
                const __int128 S = (__int128)(((unsigned __int128)w[1] << 64) | w[0]);
                const uint32_t n = sizes[id];
                const long long q0 = llrint((double)S / (double)n);
                const long long r = (long long)(S - (__int128)q0 * n);
                const double h = (double)q0;
                mhi = h / scale;
                mlo = ((double)(q0 - (long long)h) + (double)r / (double)n) / scale;
                cur = id;
                if (id == 0 && first) *first = mhi + mlo;
            }
            out[p] = T(((double)src[p] - mhi) - mlo);
            continue;
        }
        const double val = (double)src[p] + (terms ? (double)boundary_terms(g, u, p, i, j, k) : 0.0);
        if (mode == 0) {
            const unsigned long long b = (unsigned long long)__double_as_longlong(fabs(val));
            mine = b > mine ? b : mine;
        } else {
            if (id != cur) {
                if (cur != LAB_NONE) add_sum128(sums + 2 * cur, acc);
                cur = id;
                acc = 0;
            }
            acc += (__int128)llrint(val * scale);
        }
    }
    const unsigned full = 0xffffffffu; // every thread of the (whole) warps reaches here
    if (mode == 0) {
        for (int o = 16; o > 0; o >>= 1) {
            const unsigned long long x = __shfl_xor_sync(full, mine, o);
            mine = x > mine ? x : mine;
        }
        if ((threadIdx.x & 31) == 0 && mine) atomicMax(maxbits, mine);
    } else if (mode == 1) {
        const bool has = cur != LAB_NONE && acc != 0;
        const unsigned who = __ballot_sync(full, has);
        if (!who) return;
        const uint32_t lead = __shfl_sync(full, cur, __ffs(who) - 1);
        if (__all_sync(full, !has || cur == lead)) {
            __int128 a = has ? acc : 0;
            for (int o = 16; o > 0; o >>= 1) {
                const long long lo = __shfl_xor_sync(full, (long long)(unsigned long long)a, o);
                const long long hi = __shfl_xor_sync(full, (long long)(a >> 64), o);
                a += (__int128)(((unsigned __int128)(unsigned long long)hi << 64) | (unsigned long long)lo);
            }
            if ((threadIdx.x & 31) == 0) add_sum128(sums + 2 * lead, a);
        } else if (has) {
            add_sum128(sums + 2 * cur, acc);
        }
    }
}

// b of a level's bound problem where it is fluid (f - shift + the boundary
// terms; the held points' only where `held`), 0 elsewhere: the general
// form's FMG restricts it.
template <class T>
__global__ void gen_rhs_kernel(const Grid<T> g, const T *__restrict__ u, const T *__restrict__ f,
                               const T *__restrict__ shiftp, T *out, bool held)
{
    const Shift<T> shift = load_shift(shiftp);
    PGPU_GRID_STRIDE(t, (int64_t)g.nx * g.ny * g.nz)
    {
        int i, j, k;
        const int64_t p = point_of(g, t, i, j, k);
        out[p] = gen_fluid(g, p) ? shift.of(f[p]) + boundary_terms(g, u, p, i, j, k, held) : T(0);
    }
}

// What the general form holds (Hierarchy::gen).  Buffers are allocated by
// the first call that needs them and reused after.
template <class T> struct General {
    bool mask = false, beta = false; // set by the caller
    bool held = false;               // the mask has a Dirichlet point (gen_distance_kernel has work)
    bool on() const { return mask || beta; }
    bool built = false;              // general_alloc's coarse levels, tables and scalars are all in place
    std::vector<uint8_t *> mk;       // per level; level 0: the caller's mask, ghosts fluid
    std::vector<uint8_t *> one;      // per coarse level (with a mask): GenCoarse::cone
    std::vector<T *> fr[3];          // per level, face fractions; level 0: from beta
    T *bw = nullptr;                 // level 0 of a 3D grid: 1 / beta (Grid::bw), used where narrow
    bool narrow = false;             // beta lies inside beta_recip_min .. max
    bool jump = false;               // beta's largest value is more than JUMP_RATIO times its smallest
    double beta_hi = 1;              // beta's largest value (1 without beta)
    // Galerkin levels (odi.h; where beta jumps): per level, gal_stored arrays
    // of its points (NULL where the pair into it keeps no nodes), P's
    // weights from each level that may be a Galerkin one into the next
    // (gpw: odi_pw_count values), and the build's scratch: P's weights from
    // a level of 7-point rows, then two vectors of level 0's size.
    std::vector<T *> gst, gpw;
    T *gscr = nullptr;
    struct CoarseLevel {
        CoarseAxis ax[3];
        WalkAxis wk[3];
        ParentAxis par[3];
        size_t smem = 0; // the second pass's shared memory
        unsigned tiles = 0;
    };
    std::vector<CoarseLevel> coarse; // per level pair: gen_coarse_kernel's tables and shared memory
    uint32_t *tile_list = nullptr;   // gen_coarse_kernel's list of tiles for its stages (the most tiles of a level)
    uint32_t *tile_count = nullptr;  // per level pair: their number; then gen_iso_kernel's candidates'
    // Regions (level 0 with a mask): labels per interior point, the singular
    // regions' sizes, sums and count; the checks' flags.
    uint32_t *lab = nullptr, *sizes = nullptr, *count = nullptr;
    uint32_t *bits = nullptr; // the tile roots' and touch bit sets (bit_words words each), the full tiles' (tile_words)
    uint8_t *spare = nullptr; // level 0's next mask, swapped with mk[0] once checked
    uint32_t bit_words = 0, tile_words = 0;
    unsigned *flags = nullptr;
    unsigned long long *maxbits = nullptr;
    unsigned long long *range = nullptr; // beta's smallest and largest value's bits (the check's)
    long long *sums = nullptr;
    double *first = nullptr; // region 0's mean of b
    T *fp = nullptr;         // f with the singular regions' means removed; while the levels are built,
                             // gen_iso_kernel's candidates and marks
    uint32_t regions = 0, cap = 0;
    // Level 0's near tiles (a mask): the check's bit set, their list and
    // number (on the device beside count, and read back: near).
    uint32_t *near_bits = nullptr, *near_list = nullptr, *near_count = nullptr;
    uint32_t near_words = 0, near = 0;
    // pgpu_set_mask's second stream, the region labelling's beside the
    // coarse build (created with the mask's buffers, gone with the handle).
    cudaStream_t side = nullptr;
    cudaEvent_t fork = nullptr, join = nullptr;
    General() = default;
    General(const General &) = delete;
    General &operator=(const General &) = delete;
    ~General()
    {
        if (fork) cudaEventDestroy(fork);
        if (join) cudaEventDestroy(join);
        if (side) cudaStreamDestroy(side);
    }
};

} // namespace pgpu
