// general_coarse.h -- masks and beta: coarse cell types and face fractions, built on the device
#pragma once
#include "general.h"

namespace pgpu {

// The shared memory of gen_coarse_kernel for the tile lengths tb and the
// tiles' largest slot counts s (see there): the head (rows, weights and
// slots), then the stages' sums and bits and the window.
__host__ __device__ inline size_t coarse_smem_head(const int tb[3], const int s[3])
{
    const size_t sb = (size_t)tb[0] + tb[1] + tb[2];
    const size_t bytes = sizeof(int4) * sb + sizeof(double) * sb * (MAX_CHILDREN + 1) +
                         sizeof(int) * ((size_t)s[0] + s[1] + s[2]);
    return (bytes + 15) / 16 * 16;
}
static size_t coarse_smem_bytes(const int tb[3], const int s[3])
{
    const size_t a1 = (size_t)s[0] * s[1] * tb[2], a2 = (size_t)s[0] * tb[1] * tb[2];
    return coarse_smem_head(tb, s) + sizeof(double) * 3 * (a1 + a2) + 2 * a2 + 2 * a1 + a2 + (size_t)s[0] * s[1] * s[2];
}

// Slot e of a CoarseAxis row (its child slots, e < MAX_CHILDREN, then its
// path slots): byte e of the row's y, z, w words.
__device__ __forceinline__ int row_slot(const int4 &r, int e)
{
    const int word = e < 4 ? r.y : e < 8 ? r.z : r.w;
    return (word >> (8 * (e & 3))) & 0xff;
}

// A fine point's window code from its mask byte v (bits 0-1: Dirichlet,
// fluid; bit 2 + d: the low face along d open); at a slot on the high wall
// (wall) only v's type counts.
__device__ __forceinline__ unsigned win_code(unsigned v, bool wall)
{
    if (wall) v &= CELL_BITS;
    const unsigned ty = v & CELL_BITS, open = ty == PGPU_CELL_SOLID ? 0u : ~v >> CLOSED_SHIFT;
    return (ty == PGPU_CELL_DIRICHLET ? 1u : 0u) | (ty == PGPU_CELL_FLUID ? 2u : 0u) | (open & 1u) << 2 |
           (open >> 2 & 1u) << 3 | (open >> 4 & 1u) << 4;
}

// A window's kinds: bit 0, a point other than open fluid seen; bit 1, one
// not solid; bit 2, one other than open Dirichlet (a tile is of one kind
// where its window's OR lacks a bit).  From a code (win_code), and from the
// four mask bytes of a word (those `valid` selects, no wall among them).
__device__ __forceinline__ unsigned code_kinds(unsigned code)
{
    return (code != WIN_OPEN_FLUID ? 1u : 0u) | (code != 0 ? 2u : 0u) | (code != WIN_OPEN_DIRICHLET ? 4u : 0u);
}
// The bytes b of a word with from <= b <= to, as a mask.
__device__ __forceinline__ uint32_t byte_range(int from, int to)
{
    if (from > 3 || to < 0 || from > to) return 0;
    return (0xffffffffu << (8 * max(from, 0))) & (0xffffffffu >> (8 * (3 - min(to, 3))));
}
// (From words already ORed: o the bytes, ns ~type_bytes(SOLID), dx the
// bytes XOR open Dirichlet.)
__device__ __forceinline__ unsigned word_kinds_of(uint32_t o, uint32_t ns, uint32_t dx)
{
    return (o ? 1u : 0u) | (ns & 0x01010101u ? 2u : 0u) | (dx ? 4u : 0u);
}
__device__ __forceinline__ unsigned word_kinds(uint32_t v, uint32_t valid)
{
    return word_kinds_of(v & valid, ~type_bytes(v, PGPU_CELL_SOLID) & valid, (v ^ 0x01010101u * PGPU_CELL_DIRICHLET) & valid);
}

// The calling thread's lane in its warp.
__device__ __forceinline__ unsigned lane_id()
{
    unsigned l;
    asm("mov.u32 %0, %%laneid;" : "=r"(l));
    return l;
}

// Coarse position P's type and face fractions (and gen_iso_kernel's mark
// and list), from its rows along each axis (rx: the row's x word; W: its
// weights' sum) and its tile's reductions (bits, zs, acc: coarse_tile's),
// or from the tile's kind where the tile is of one (uniform).
template <class T>
__device__ __forceinline__ void coarse_put(const GenCoarse<T> &a, const int P[3], const int rx[3], const double W[3],
                                           unsigned bits, const unsigned zs[3], const double acc[3], bool uniform,
                                           bool all_solid)
{
    const Grid<T> &C = a.c;
    const int span[3] = {C.nx + 1, C.ny + 1, C.is3d ? C.nz + 1 : 1};
    int m[3], np[3];
#pragma unroll
    for (int d = 0; d < 3; ++d) {
        m[d] = rx[d] & 0xff;
        np[d] = (rx[d] >> 8) & 0xff;
    }
    if (P[0] >= span[0] || P[1] >= span[1] || P[2] >= span[2]) return;
    const int64_t pc = C.base + P[0] + (int64_t)P[1] * C.sy + (C.is3d ? (int64_t)P[2] * C.sz : 0);
    unsigned zero = 0; // the low faces of fraction 0 (for gen_check_kernel's closed bits)
    bool one = true;   // every face written 1 (those not written: window_scan's faces that do not count)
    const int nc[3] = {C.nx, C.ny, C.nz};
#pragma unroll
    for (int d = 0; d < 3; ++d) {
        const int d1 = (d + 1) % 3, d2 = (d + 2) % 3;
        if ((d == 2 && !C.is3d) || !m[d1] || !m[d2]) continue;
        const double ws = W[d1] * W[d2];
        const T fr = T(!(ws > 0) || all_solid ? 0.0 : uniform ? 1.0 : acc[d] / (ws * np[d]));
        a.cf[d][pc] = fr;
        one = one && fr == T(1);
        zero |= fr == T(0) ? 1u << (CLOSED_SHIFT + 2 * d) : 0u;
        // an inner face with a path face of 0 across its whole width: for
        // gen_shut_kernel, in the high face's bit (free until
        // gen_check_kernel sets those)
        if (zs[d] && P[d] > 0 && P[d] < nc[d]) zero |= 2u << (CLOSED_SHIFT + 2 * d);
    }
    if (a.cone) a.cone[pc] = one ? 1 : 0;
    if (m[0] && m[1] && m[2] && a.cmk) {
        const unsigned ty = bits & 1u ? PGPU_CELL_DIRICHLET : bits & 2u ? (bits & 4u ? PGPU_CELL_FLUID : CELL_FLUID_SOLID_CORE)
                                                                  : PGPU_CELL_SOLID;
        a.cmk[pc] = (uint8_t)(ty | zero);
        if (a.iso) { // for gen_iso_kernel: not Dirichlet, a Dirichlet child
            const bool cand = (bits & 9u) == 8u;
            a.iso[pc] = (uint8_t)cand;
            if (a.cand) { // listed (interior points), one atomic per warp
                const bool in = cand && P[0] < C.nx && P[1] < C.ny && P[2] < C.nz;
                const unsigned am = __activemask(), bal = __ballot_sync(am, in);
                if (bal) {
                    const int ln = (int)lane_id(), lead = __ffs(bal) - 1;
                    unsigned at = 0;
                    if (ln == lead) at = atomicAdd(a.ncand, (unsigned)__popc(bal));
                    at = __shfl_sync(am, at, lead) + (unsigned)__popc(bal & ((1u << ln) - 1u));
                    if (in) a.cand[at] = (uint32_t)(P[0] + (int64_t)C.nx * (P[1] + (int64_t)C.ny * P[2]));
                }
            }
        }
    }
}

// The window of a tile of gen_coarse_kernel: each slot's point's code
// (win_code; the high wall's slot: the last point's type) into win (where
// given) and the kinds of them all (code_kinds; with FR, a point whose
// fractions that count are not all 1 is neither open fluid nor open
// Dirichlet).
// Rows of slots r = grp, grp + ngrp, ... go to groups of G lanes, R rows
// at a time (their loads in flight together); fsl(d, s) is slot s's fine
// index along d.
template <class T, bool FR, int R, class Slots>
__device__ __forceinline__ unsigned window_scan(const Grid<T> &F, const int S[3], Slots fsl, int grp, int ngrp, int G,
                                                int lane, unsigned char *win)
{
    const int nf[3] = {F.nx, F.ny, F.is3d ? F.nz : 1};
    const int64_t fst[3] = {1, F.sy, F.is3d ? F.sz : 0};
    const T *ffr[3] = {F.fx, F.fy, F.fz};
    const int rows = S[1] * S[2];
    unsigned mix = 0;
    for (int r0 = grp; r0 < rows; r0 += R * ngrp) {
        int64_t at[R]; // the row's first element (j, k unclamped: the fractions'), -1 past the last row
        const uint8_t *src[R];
        unsigned wjk[R]; // bit 1: the row's y slot is the high wall's, bit 2: its z slot
#pragma unroll
        for (int q = 0; q < R; ++q) {
            const int r = r0 + q * ngrp, s2 = r / S[1], j = r < rows ? fsl(1, r - s2 * S[1]) : 0,
                      k = r < rows ? fsl(2, s2) : 0;
            at[q] = r < rows ? F.base + j * fst[1] + k * fst[2] : -1;
            wjk[q] = (j == nf[1] ? 2u : 0u) | (k == nf[2] ? 4u : 0u);
            src[q] = F.mk ? F.mk + F.base + min(j, nf[1] - 1) * fst[1] + min(k, nf[2] - 1) * fst[2] : nullptr;
        }
        for (int s00 = lane; s00 < S[0]; s00 += 2 * G) { // two points a row in flight
            unsigned v[R][2];
            bool one[R][2]; // FR: the point's fractions that count 1, loaded beside its byte
            int x[2] = {0, 0};
#pragma unroll
            for (int h = 0; h < 2; ++h)
                if (s00 + h * G < S[0]) x[h] = fsl(0, s00 + h * G);
#pragma unroll
            for (int q = 0; q < R; ++q)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    v[q][h] = PGPU_CELL_FLUID;
                    one[q][h] = true;
                    if (s00 + h * G >= S[0] || at[q] < 0) continue;
                    if (src[q]) v[q][h] = __ldg(src[q] + min(x[h], nf[0] - 1));
                    if (FR) {
                        // (a face along d counts where no other axis's slot is
                        // the high wall's: there the fine level has only the
                        // wall face, coarse_put wrote no other)
                        const unsigned w = wjk[q] | (x[h] == nf[0] ? 1u : 0u);
                        T fv[3];
#pragma unroll
                        for (int d = 0; d < 3; ++d)
                            fv[d] = ffr[d] && !(w & ~(1u << d)) ? __ldg(ffr[d] + at[q] + x[h]) : T(1);
                        one[q][h] = (fv[0] == T(1)) & (fv[1] == T(1)) & (fv[2] == T(1));
                    }
                }
#pragma unroll
            for (int q = 0; q < R; ++q)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int s0 = s00 + h * G;
                    if (s0 >= S[0] || at[q] < 0) continue;
                    const unsigned code = win_code(v[q][h], wjk[q] || x[h] == nf[0]);
                    mix |= code_kinds(code);
                    if (FR && !one[q][h]) mix |= 5u; // open fluid or Dirichlet: only with its faces' fractions all 1
                    if (win) win[(r0 + q * ngrp) * S[0] + s0] = (unsigned char)code;
                }
        }
    }
    return mix;
}

// The split rule: a fluid position whose core children are all solid
// and whose fluid children fall into two or more parts (open faces among
// them, from the window) is solid.  Boxes of up to 4 children a side whose
// children are consecutive fine points (not a periodic ring's wrap); bit
// x + 4 y + 16 z.  rr: the position's rows along x, y, z; fs, the slots'
// fine indices; win, the window's bytes ([S2][S1][S0]).
__device__ __forceinline__ bool coarse_splits(const int4 (&rr)[3], int *const (&fs)[3], const unsigned char *win,
                                              const int (&S)[3])
{
    int mm[3], s0[3][4];
    bool box = true;
#pragma unroll
    for (int d = 0; d < 3; ++d) {
        mm[d] = rr[d].x & 0xff;
        box = box && mm[d] >= 1 && mm[d] <= 4;
        for (int c = 0; box && c < mm[d]; ++c) {
            s0[d][c] = row_slot(rr[d], c);
            box = fs[d][s0[d][c]] == fs[d][s0[d][0]] + c;
        }
    }
    if (box) {
        uint64_t fl = 0, op[3] = {0, 0, 0};
        for (int z = 0; z < mm[2]; ++z)
            for (int y = 0; y < mm[1]; ++y)
                for (int x = 0; x < mm[0]; ++x) {
                    const unsigned v = win[(s0[2][z] * S[1] + s0[1][y]) * S[0] + s0[0][x]];
                    if (!(v & 2u)) continue;
                    const int q = x + 4 * y + 16 * z, at[3] = {x, y, z};
                    fl |= 1ull << q;
#pragma unroll
                    for (int d = 0; d < 3; ++d)
                        if (at[d] > 0 && (v & (4u << d))) op[d] |= 1ull << q;
                }
        const int sh[3] = {1, 4, 16};
#pragma unroll
        for (int d = 0; d < 3; ++d) op[d] &= fl & fl << sh[d];
        uint64_t r = fl & (~fl + 1), prev = 0; // the first fluid child's part, grown face by face
        while (r != prev) {
            prev = r;
#pragma unroll
            for (int d = 0; d < 3; ++d) r |= (r << sh[d] & op[d]) | (r & op[d]) >> sh[d];
        }
        return (fl & ~r) != 0;
    }
    return false;
}

// The head of coarse_tile's shared memory: the tile's rows along each axis
// (item q of sb: axis d's position q - off[d]), their children's weights
// and the weights' sums.
template <class T>
__device__ __forceinline__ void coarse_rows(const GenCoarse<T> &a, const int (&tile)[3], const int (&tb)[3],
                                            const int (&off)[3], int sb, int tid, int nth, int4 *row, double *w,
                                            double *wsum)
{
    for (int q = tid; q < sb; q += nth) {
        const int d = q < tb[0] ? 0 : q < tb[0] + tb[1] ? 1 : 2, p = q - off[d];
        const int64_t P = (int64_t)tile[d] * tb[d] + p;
        row[q] = a.ax[d].row[P];
        double s = 0;
        for (int c = 0; c < MAX_CHILDREN; ++c) {
            const double v = __ldg(a.ax[d].w + P * MAX_CHILDREN + c);
            w[q * MAX_CHILDREN + c] = v;
            s += v;
        }
        wsum[q] = s;
    }
}

// One coarse level's types and face fractions; a block per tile of coarse
// node positions (0..nc on each axis: the last is the high face's ghost), a
// thread per position.  Every quantity is a sum or an OR over a box of fine
// points that factors by axis: the type ORs over the rows' children
// (Dirichlet over the core ones), a face of axis d sums its path along d
// and its rows' weights across.  So the block reads the fine points its
// rows and paths touch (the tile's slots on each axis) once into shared
// memory and reduces them one axis at a time: z (every fine x, y slot),
// then y, then x, each stage a few products per item, instead of a thread
// walking all of its node's children for each of the four quantities.
// A fine face is open where its high point is not solid and has no closed
// low face; the high box face (slot n) is open where the last point is not
// solid (the window holds that point's type there, without closed bits).
// Two passes: the first (gen_first_kernel) reads the window's bytes to
// see whether the tile is of one kind (below), writes such a tile and lists
// the others; the second runs the stages on the listed ones, a grid that
// fits the GPU looping over them.
template <class T, bool FR>
__device__ __forceinline__ void coarse_tile(const GenCoarse<T> &a, int b, unsigned char *gc_smem)
{
    const Grid<T> &F = a.f, &C = a.c;
    const int tb[3] = {a.ax[0].tb, a.ax[1].tb, a.ax[2].tb};
    const int nth = tb[0] * tb[1] * tb[2];
    const int tid = threadIdx.x + tb[0] * (threadIdx.y + tb[1] * threadIdx.z);
    int tile[3];
    {
        const unsigned n0 = (unsigned)a.ax[0].nt, n1 = (unsigned)a.ax[1].nt, q = a.ax[0].by_nt((unsigned)b),
                       q2 = a.ax[1].by_nt(q);
        tile[0] = (int)((unsigned)b - q * n0);
        tile[1] = (int)(q - q2 * n1);
        tile[2] = (int)q2;
    }
    const int *sl[3];
    int S[3];
#pragma unroll
    for (int d = 0; d < 3; ++d) {
        sl[d] = a.ax[d].slot + (size_t)tile[d] * a.ax[d].stride;
        S[d] = __ldg(sl[d]);
    }
    const int sb = tb[0] + tb[1] + tb[2], off[3] = {0, tb[0], tb[0] + tb[1]};
    const int a1 = S[0] * S[1] * tb[2], a2 = S[0] * tb[1] * tb[2];
    const int sx[3] = {a.ax[0].stride - 1, a.ax[1].stride - 1, a.ax[2].stride - 1}; // the slot arrays' room
    // The head (coarse_smem_head), then the stages' part.
    int4 *row = (int4 *)gc_smem;               // [sb]: the rows
    double *w = (double *)(row + sb);          // [sb][MAX_CHILDREN]: their weights
    double *wsum = w + sb * MAX_CHILDREN;      // [sb]: their sums
    int *fine = (int *)(wsum + sb);            // the slots' fine indices, per axis
    double *st1 = (double *)(gc_smem + coarse_smem_head(tb, sx)); // [tb2][S1][S0][3]: z reduced
    double *st2 = st1 + 3 * (size_t)a1;        // [tb2][tb1][S0][3]: z and y reduced
    // the path slots whose faces are 0 after the weighting across so far:
    // z faces' (bits 0-4), y faces' (bits 5-9)
    uint16_t *m2 = (uint16_t *)(st2 + 3 * (size_t)a2);
    unsigned char *m1 = (unsigned char *)(m2 + a2); // z faces' only
    unsigned char *b1 = m1 + a1;               // stage bits: as coarse_tile's bits (below)
    unsigned char *b2 = b1 + a1;
    unsigned char *win = b2 + a2;              // [S2][S1][S0]: the fine points' bytes
    int *fs[3] = {fine, fine + sx[0], fine + sx[0] + sx[1]};

    coarse_rows(a, tile, tb, off, sb, tid, nth, row, w, wsum);
#pragma unroll
    for (int d = 0; d < 3; ++d)
        for (int s = tid; s < S[d]; s += nth) fs[d][s] = __ldg(sl[d] + 1 + s);
    __syncthreads();

    // Rows of items go to groups of 32 threads (a warp; the whole block if
    // its size is no multiple of 32), the x slots to the group's lanes.
    const bool warps = nth % 32 == 0;
    const int G = warps ? 32 : nth, lane = warps ? tid & 31 : tid, grp = warps ? tid >> 5 : 0,
              ngrp = warps ? nth >> 5 : 1;
    const int nf[3] = {F.nx, F.ny, F.is3d ? F.nz : 1};
    const int64_t fst[3] = {1, F.sy, F.is3d ? F.sz : 0};
    const T *ffr[3] = {F.fx, F.fy, F.fz};
    const unsigned mix = window_scan<T, FR, 1>(F, S, [&](int d, int s) { return fs[d][s]; }, grp, ngrp, G, lane, win);
    // A window of one kind (solid everywhere, or fluid or Dirichlet
    // everywhere with every face open and every fine fraction 1: most tiles
    // of a mask, the Dirichlet ones those above a free surface) gives every
    // position of the tile the same type and its faces 0 or 1, the stages'
    // sums without their rounding.
    const bool all_fluid = __syncthreads_and(!(mix & 1u)) != 0, all_solid = __syncthreads_and(!(mix & 2u)) != 0;
    const bool all_held = __syncthreads_and(!(mix & 4u)) != 0;
    const bool uniform = all_solid || all_fluid || all_held;

    // A fine face's conductance from its window byte (bits 0-1: Dirichlet,
    // fluid; bit 2 + d: the low face along d is open): its fraction (FR) or
    // 1, 0 where closed.
    auto ph = [&](unsigned v, int d, int s0, int s1, int s2) -> double {
        if (!(v & (4u << d))) return 0.0;
        if (!FR || !ffr[d]) return 1.0;
        return (double)__ldg(ffr[d] + F.base + fs[0][s0] + fs[1][s1] * fst[1] + fs[2][s2] * fst[2]);
    };
    // A coarse face's sum over its path (np fine faces, face(slot) each); a
    // wall face (bit 24 of its row) closed by any closed face on the path;
    // zm: the path faces of 0 (bit e).  Where the pair's transfers follow
    // the operator (a.series, odi.h) the open faces count in series: their
    // harmonic mean times their count, so that over the path's np it is the
    // open share of the series conductance (a ball's faces 1e3 and 2 weigh
    // 4, as the fine faces do, against the plain mean's 500).
    auto path = [&](const int4 &r, int np, auto face, unsigned &zm) {
        double sum = 0, inv = 0;
        int open = 0;
        zm = 0;
#pragma unroll
        for (int e = 0; e < MAX_PATH; ++e)
            if (e < np) {
                const double f = face(row_slot(r, MAX_CHILDREN + e));
                sum += f;
                if (f != 0.0) {
                    inv += 1.0 / f;
                    ++open;
                }
                zm |= (f == 0.0 ? 1u : 0u) << e;
            }
        if (zm && r.x >> 24) return 0.0;
        return FR && a.series && open ? open * (open / inv) : sum;
    };
    auto put = [](double *st, unsigned char *bt, int q, double x, double y, double z, unsigned bits) {
        st[3 * q] = x; // a stage's item: the faces' sums along x, y, z and its type bits
        st[3 * q + 1] = y;
        st[3 * q + 2] = z;
        bt[q] = (unsigned char)bits;
    };
    const int p[3] = {(int)threadIdx.x, (int)threadIdx.y, (int)threadIdx.z};
    // bits: a Dirichlet core child (1), a fluid child (2), a core child
    // not solid (4), a Dirichlet child (8); zs: the faces' path slots of 0
    unsigned bits = all_solid ? 0u : all_held ? 13u : 6u, zs[3] = {0, 0, 0};
    double acc[3] = {0, 0, 0};
    if (!uniform) {
        // Stage 1, along z: items (s0, s1, p2), rows (s1, p2).
        for (int r = grp; r < S[1] * tb[2]; r += ngrp) {
            const int s1 = r % S[1], p2 = r / S[1];
            const int4 rz = row[off[2] + p2];
            const int m = rz.x & 0xff, np = (rz.x >> 8) & 0xff;
            const unsigned core = (rz.x >> 16) & 0xff;
            const double *wz = w + (off[2] + p2) * MAX_CHILDREN;
            for (int s0 = lane; s0 < S[0]; s0 += G) {
                unsigned bits = 0;
                double x = 0, y = 0, z = 0;
#pragma unroll
                for (int c = 0; c < MAX_CHILDREN; ++c) {
                    if (c >= m) break;
                    const int s2 = row_slot(rz, c);
                    const unsigned v = win[(s2 * S[1] + s1) * S[0] + s0], cc = (core >> c) & 1u;
                    bits |= (v & cc) | (v & 2u) | (v & 3u && cc ? 4u : 0u) | (v & 1u) << 3;
                    x += wz[c] * ph(v, 0, s0, s1, s2);
                    y += wz[c] * ph(v, 1, s0, s1, s2);
                }
                unsigned zm;
                z = path(rz, np, [&](int s2) { return ph(win[(s2 * S[1] + s1) * S[0] + s0], 2, s0, s1, s2); }, zm);
                put(st1, b1, r * S[0] + s0, x, y, z, bits);
                m1[r * S[0] + s0] = (unsigned char)zm;
            }
        }
        __syncthreads();
        // Stage 2, along y: items (s0, p1, p2), rows (p1, p2).
        for (int r = grp; r < tb[1] * tb[2]; r += ngrp) {
            const int p1 = r % tb[1], p2 = r / tb[1];
            const int4 ry = row[off[1] + p1];
            const int m = ry.x & 0xff, np = (ry.x >> 8) & 0xff, core = (ry.x >> 16) & 0xff;
            const double *wy = w + (off[1] + p1) * MAX_CHILDREN;
            for (int s0 = lane; s0 < S[0]; s0 += G) {
                unsigned bits = 0, zz = 0x1f;
                double x = 0, y = 0, z = 0;
#pragma unroll
                for (int c = 0; c < MAX_CHILDREN; ++c) {
                    if (c >= m) break;
                    const int i1 = (p2 * S[1] + row_slot(ry, c)) * S[0] + s0;
                    const unsigned v = b1[i1];
                    bits |= (v & ((core >> c) & 1)) | (v & 10u) | (v & 4u & ((core >> c) & 1) << 2);
                    x += wy[c] * st1[3 * i1];
                    z += wy[c] * st1[3 * i1 + 2];
                    zz &= m1[i1];
                }
                unsigned zy;
                y = path(ry, np, [&](int s1) { return st1[3 * ((p2 * S[1] + s1) * S[0] + s0) + 1]; }, zy);
                put(st2, b2, r * S[0] + s0, x, y, z, bits);
                m2[r * S[0] + s0] = (uint16_t)(zz | zy << 5);
            }
        }
        __syncthreads();
        // Stage 3, along x: this thread's position.
        const int4 rx = row[p[0]];
        const int m0 = rx.x & 0xff, np0 = (rx.x >> 8) & 0xff, core = (rx.x >> 16) & 0xff;
        const double *wx = w + p[0] * MAX_CHILDREN;
        const int base2 = (p[2] * tb[1] + p[1]) * S[0];
        bits = 0;
        unsigned zyz = 0x3ff;
#pragma unroll
        for (int c = 0; c < MAX_CHILDREN; ++c) {
            if (c >= m0) break;
            const int i2 = base2 + row_slot(rx, c);
            const unsigned v = b2[i2];
            bits |= (v & ((core >> c) & 1)) | (v & 10u) | (v & 4u & ((core >> c) & 1) << 2);
            acc[1] += wx[c] * st2[3 * i2 + 1];
            acc[2] += wx[c] * st2[3 * i2 + 2];
            zyz &= m2[i2];
        }
        acc[0] = path(rx, np0, [&](int s0) { return st2[3 * (base2 + s0)]; }, zs[0]);
        zs[1] = zyz >> 5;
        zs[2] = zyz & 0x1f;
        // The split rule (coarse_splits).
        if ((bits & 6u) == 2u && !(bits & 1u)) {
            const int4 rr[3] = {rx, row[off[1] + p[1]], row[off[2] + p[2]]};
            if (coarse_splits(rr, fs, win, S)) bits &= 8u; // solid
        }
    }
    int P[3], rx[3];
    double W[3];
#pragma unroll
    for (int d = 0; d < 3; ++d) {
        P[d] = tile[d] * tb[d] + p[d];
        rx[d] = row[off[d] + p[d]].x;
        W[d] = wsum[off[d] + p[d]];
    }
    coarse_put(a, P, rx, W, bits, zs, acc, uniform, all_solid);
}
template <class T, bool FR> __global__ void gen_coarse_kernel(const GenCoarse<T> a)
{
    extern __shared__ __align__(16) unsigned char gc_smem[];
    const uint32_t n = a.list ? *a.count : a.tiles;
    for (uint32_t t = blockIdx.x; t < n; t += gridDim.x) {
        coarse_tile<T, FR>(a, (int)(a.list ? a.list[t] : t), gc_smem);
        __syncthreads(); // the next tile takes the shared memory
    }
}

// The first pass of a level's coarse build: it reads a tile's window, as
// coarse_tile's does, to see whether the tile is of one kind; it writes
// such a tile's positions (coarse_put) and lists the others for
// gen_coarse_kernel.  Without fractions (!FR), a warp takes a tile
// (FIRST_WARPS a block; no barrier: while some warps wait for their
// loads, others issue), and with the tile's x slots in one run (every
// level 0 of a mask) the mask's bytes of each row of slots go by aligned
// loads (word_kinds, stricter than the codes: a byte of 0, fluid without
// a closed face, is open fluid); the high x wall's slot stands for the last
// point, as in the window, so the run is clamped to n - 1 (a tile whose
// only slot is the wall reads that point, not the ghost).  With fractions
// the block takes a tile; on a mask's coarse levels (fone: a byte a point
// for its three fractions) its threads take the rows of slots as a warp
// does without, the fone bytes of a row's slots (x not clamped, as the
// window's fractions) beside its mask bytes (level 1's pass at 512^3,
// float, a sphere: 207 -> 73 us under ncu, against the fractions loaded
// a point at a time); else (beta's level 0) a row of slots a warp through
// window_scan.  A tile is of one kind here only where it is in
// window_scan's view; a stricter test only sends more tiles to the
// stages, which find their kind again.  FIRST_LOADS: a row's loads in
// flight (five, all of a 3D row of 61 slots, took 76 registers, three
// blocks per SM: 256 against 250 us).
constexpr int FIRST_WARPS = 8, FIRST_POS = 40; // tile positions along the three axes: at most 30 + 8 + 1
constexpr int FIRST_LOADS = 4;
template <class T, bool FR> __global__ void __launch_bounds__(32 * FIRST_WARPS) gen_first_kernel(const GenCoarse<T> a)
{
    constexpr int NW = FR ? 1 : FIRST_WARPS, TH = FR ? 32 * FIRST_WARPS : 32; // tiles a block, threads a tile
    __shared__ int srx[NW][FIRST_POS];
    __shared__ double sws[NW][FIRST_POS];
    const int lane = threadIdx.x & 31, wp = FR ? 0 : (int)(threadIdx.x >> 5), tid = (int)threadIdx.x % TH;
    const unsigned b = FR ? blockIdx.x : blockIdx.x * FIRST_WARPS + (threadIdx.x >> 5);
    if (b >= a.tiles) return; // FR: the whole block
    const Grid<T> &F = a.f;
    const int tb[3] = {a.ax[0].tb, a.ax[1].tb, a.ax[2].tb};
    int tile[3];
    {
        const unsigned n0 = (unsigned)a.ax[0].nt, n1 = (unsigned)a.ax[1].nt, q = a.ax[0].by_nt(b), q2 = a.ax[1].by_nt(q);
        tile[0] = (int)(b - q * n0);
        tile[1] = (int)(q - q2 * n1);
        tile[2] = (int)q2;
    }
    const int *sl[3];
    int S[3];
#pragma unroll
    for (int d = 0; d < 3; ++d) {
        sl[d] = a.ax[d].slot + (size_t)tile[d] * a.ax[d].stride;
        S[d] = __ldg(sl[d]);
    }
    // The tile's rows along each axis: x word and weights' sum per position.
    const int off[3] = {0, tb[0], tb[0] + tb[1]}, sb = tb[0] + tb[1] + tb[2];
    for (int q = tid; q < sb; q += TH) {
        const int d = q < tb[0] ? 0 : q < tb[0] + tb[1] ? 1 : 2;
        const int64_t P = (int64_t)tile[d] * tb[d] + (q - off[d]);
        srx[wp][q] = __ldg(&a.ax[d].row[P].x);
        double s = 0;
        for (int c = 0; c < MAX_CHILDREN; ++c) s += __ldg(a.ax[d].w + P * MAX_CHILDREN + c);
        sws[wp][q] = s;
    }
    const int nf[3] = {F.nx, F.ny, F.is3d ? F.nz : 1};
    unsigned mix = 0;
    const int xa = __ldg(sl[0] + 1), xb = __ldg(sl[0] + S[0]);
    const auto fsl = [&](int d, int s) { return __ldg(sl[d] + 1 + s); };
    if (F.mk && xb - xa == S[0] - 1 && (!FR || a.fone)) {
        // CH bytes a load, 16 in 3D, 4 in 2D (short rows).  A load starts
        // at or after the run's first byte rounded down to CH and holds a
        // byte of the run, so it stays inside the mask (and fone), whose
        // start is aligned and whose length is a multiple of 16.
        const int x0 = min(xa, nf[0] - 1), run = min(xb, nf[0] - 1) - x0, CH = F.is3d ? 16 : 4;
        const int64_t fst[3] = {1, F.sy, F.is3d ? F.sz : 0};
        const auto load_ch = [&](const uint8_t *p, uint32_t(&v)[4]) { // the CH bytes at p (aligned)
            if (CH == 16) {
                const uint4 q = *(const uint4 *)p;
                v[0] = q.x;
                v[1] = q.y;
                v[2] = q.z;
                v[3] = q.w;
            } else {
                v[0] = *(const uint32_t *)p;
            }
        };
        // A thread a row of slots, its loads FIRST_LOADS at a time (a row's
        // address once for all of its loads: 310 -> 250 us for a 512^3
        // float mask's first level, against a lane a load); slot counts
        // are bytes, so r stays far below 2^32, SmallDiv's range.
        const SmallDiv by_s1((uint32_t)S[1]);
        for (int r = tid; r < S[1] * S[2]; r += TH) {
            const int r2 = (int)by_s1((uint32_t)r), jf = fsl(1, r - r2 * S[1]), kf = fsl(2, r2);
            const int j = min(jf, nf[1] - 1), k = min(kf, nf[2] - 1);
            const uint8_t *lo = F.mk + F.base + j * fst[1] + k * fst[2] + x0;
            const int first = (int)((uintptr_t)lo & (uintptr_t)(CH - 1)); // the run's first byte in the first load
            const uint8_t *pw0 = lo - first;
            const int nw = (first + run) / CH + 1; // the row's loads
            if (FR) { // the fractions' bytes of the slots (their rows and x unclamped), 1 each
                const uint8_t *ol = a.fone + F.base + jf * fst[1] + kf * fst[2] + xa;
                const int ofirst = (int)((uintptr_t)ol & (uintptr_t)(CH - 1)), orun = xb - xa;
                const uint8_t *ow = ol - ofirst;
                for (int c = 0; c <= (ofirst + orun) / CH; ++c) {
                    uint32_t v[4] = {0x01010101u, 0x01010101u, 0x01010101u, 0x01010101u};
                    load_ch(ow + CH * c, v);
                    const int lb = ofirst - CH * c;
#pragma unroll
                    for (int i = 0; i < 4; ++i)
                        if ((v[i] ^ 0x01010101u) & byte_range(lb - 4 * i, lb + orun - 4 * i)) mix |= 5u;
                }
            }
            for (int c0 = 0; c0 < nw; c0 += FIRST_LOADS) {
                uint32_t v[FIRST_LOADS][4] = {};
                int lo_b[FIRST_LOADS], hi_b[FIRST_LOADS]; // the bytes of the load inside the row's run: lo_b .. hi_b
#pragma unroll
                for (int h = 0; h < FIRST_LOADS; ++h) {
                    lo_b[h] = 1;
                    hi_b[h] = 0;
                    if (c0 + h >= nw) continue;
                    lo_b[h] = first - CH * (c0 + h);
                    hi_b[h] = lo_b[h] + run;
                    load_ch(pw0 + CH * (c0 + h), v[h]);
                }
#pragma unroll
                for (int h = 0; h < FIRST_LOADS; ++h) {
                    if (lo_b[h] > hi_b[h]) continue; // no load
                    if (lo_b[h] <= 0 && hi_b[h] >= CH - 1) { // every byte inside the run
                        uint32_t o = 0, dx = 0, ns = 0;
#pragma unroll
                        for (int i = 0; i < 4; ++i)
                            if (4 * i < CH) {
                                o |= v[h][i];
                                dx |= v[h][i] ^ 0x01010101u * PGPU_CELL_DIRICHLET;
                                ns |= ~type_bytes(v[h][i], PGPU_CELL_SOLID);
                            }
                        mix |= word_kinds_of(o, ns, dx);
                    } else {
#pragma unroll
                        for (int i = 0; i < 4; ++i)
                            if (4 * i < CH) mix |= word_kinds(v[h][i], byte_range(lo_b[h] - 4 * i, hi_b[h] - 4 * i));
                    }
                }
            }
        }
    } else if (FR) {
        mix = window_scan<T, FR, 1>(F, S, fsl, (int)(threadIdx.x >> 5), FIRST_WARPS, 32, lane, (unsigned char *)nullptr);
    } else {
        mix = window_scan<T, FR, 4>(F, S, fsl, 0, 1, 32, lane, (unsigned char *)nullptr);
    }
    bool all_fluid, all_solid, all_held;
    if (FR) {
        all_fluid = __syncthreads_and(!(mix & 1u)) != 0; // (also orders srx / sws for the writes)
        all_solid = __syncthreads_and(!(mix & 2u)) != 0;
        all_held = __syncthreads_and(!(mix & 4u)) != 0;
    } else {
        mix = __reduce_or_sync(0xffffffffu, mix);
        all_fluid = !(mix & 1u);
        all_solid = !(mix & 2u);
        all_held = !(mix & 4u);
        __syncwarp();
    }
    if (!all_fluid && !all_solid && !all_held) { // for the second pass
        if (tid == 0) a.list[atomicAdd(a.count, 1u)] = b;
        return;
    }
    const unsigned bits = all_solid ? 0u : all_held ? 13u : 6u, zs[3] = {0, 0, 0};
    const double acc[3] = {0, 0, 0};
    // Threads over x positions, TH / tb[0] rows of the tile at a time.
    const int per = TH / tb[0], lr = tid / tb[0], p0 = tid - lr * tb[0];
    const SmallDiv by_tb1((uint32_t)tb[1]);
    for (int q = lr; q < tb[1] * tb[2]; q += per) {
        if (lr >= per) break;
        const int p2 = (int)by_tb1((uint32_t)q), p[3] = {p0, q - p2 * tb[1], p2};
        int P[3], rx[3];
        double W[3];
#pragma unroll
        for (int d = 0; d < 3; ++d) {
            P[d] = tile[d] * tb[d] + p[d];
            rx[d] = srx[wp][off[d] + p[d]];
            W[d] = sws[wp][off[d] + p[d]];
        }
        coarse_put(a, P, rx, W, bits, zs, acc, true, all_solid);
    }
}

// Fine child c of coarse position P's restriction row along one axis.
__device__ __forceinline__ int row_child(const CoarseAxis &A, int P, int c)
{
    return __ldg(A.slot + (size_t)(P / A.tb) * A.stride + 1 + row_slot(A.row[P], c));
}

// The iso rule, once gen_coarse_kernel has written the level (before
// gen_shut_kernel): a coarse point is Dirichlet where a core child is, so a
// fine Dirichlet point that is nobody's core child (off the coarse nodes)
// and has no Dirichlet parent left the coarse levels.  Where it was the
// only one (a reference cell in a closed tank or a sealed pocket) the
// coarse problems were singular and V-cycles diverged.  Such a point makes
// its parent of the largest restriction weight (ties, to a relative 1e-9
// that the positions' rounding leaves: the lowest index) Dirichlet.  A
// thread per candidate, a point that gen_coarse_kernel listed (a.cand;
// without the room for the list, a thread per coarse point skipping the
// others) and left 1 in a.iso (not Dirichlet, a Dirichlet child: next to
// a Dirichlet region, or a lone cell's parent), walks its Dirichlet children
// that are no core child and their parents, and leaves 1 in its own byte
// of a.iso where it is the heaviest parent of one no coarse Dirichlet
// point holds, else 0; gen_shut_kernel makes it Dirichlet.  (A warp per
// row left the candidates of a free surface's row to one warp: 0.31 ms on
// a 512^3 pool's first level against 0.24.)  The decisions read the types
// as gen_coarse_kernel wrote them, which no thread changes.
template <class T> __global__ void gen_iso_kernel(const GenCoarse<T> a)
{
    const Grid<T> &F = a.f, &C = a.c;
    const int64_t n = a.cand ? (int64_t)*a.ncand : (int64_t)C.nx * C.ny * C.nz;
    PGPU_GRID_STRIDE(s, n)
    {
        int P[3];
        const int64_t pc = point_of(C, a.cand ? (int64_t)a.cand[s] : s, P[0], P[1], P[2]);
        if (!a.iso[pc]) continue;
        // Dirichlet points of the 3 x 3 (x 3) coarse block around this one
        // (bit x + 1 + 3 (y + 1) + 9 (z + 1)), loaded together: a parent
        // of a child lies there unless a periodic wrap parts them (ghost
        // bytes hold no parent but exist).
        const int64_t cs[3] = {1, C.sy, C.sz};
        const int zr = C.is3d ? 1 : 0;
        uint32_t near = 0;
        for (int dz = -zr; dz <= zr; ++dz)
            for (int dy = -1; dy <= 1; ++dy)
#pragma unroll
                for (int dx = -1; dx <= 1; ++dx)
                    near |= ((a.cmk[pc + dx + dy * cs[1] + dz * cs[2]] & CELL_BITS) == PGPU_CELL_DIRICHLET
                                 ? 1u
                                 : 0u)
                            << (dx + 1 + 3 * (dy + 1) + 9 * (dz + 1));
        auto dirichlet = [&](const int Q[3]) {
            const int o[3] = {Q[0] - P[0], Q[1] - P[1], Q[2] - P[2]};
            if (o[0] >= -1 && o[0] <= 1 && o[1] >= -1 && o[1] <= 1 && o[2] >= -zr && o[2] <= zr)
                return ((near >> (o[0] + 1 + 3 * (o[1] + 1) + 9 * (o[2] + 1))) & 1u) != 0;
            const int64_t q = C.base + Q[0] + (int64_t)Q[1] * C.sy + (C.is3d ? (int64_t)Q[2] * C.sz : 0);
            return (a.cmk[q] & CELL_BITS) == PGPU_CELL_DIRICHLET;
        };
        int m[3], ch[3][MAX_CHILDREN];
        int4 pr[3][MAX_CHILDREN];
#pragma unroll
        for (int d = 0; d < 3; ++d) {
            m[d] = a.ax[d].row[P[d]].x & 0xff;
            for (int c = 0; c < m[d]; ++c) {
                ch[d][c] = row_child(a.ax[d], P[d], c);
                pr[d][c] = __ldg(a.par[d].p + ch[d][c]);
            }
        }
        bool mark = false;
        for (int c2 = 0; c2 < m[2] && !mark; ++c2)
            for (int c1 = 0; c1 < m[1] && !mark; ++c1)
                for (int c0 = 0; c0 < m[0] && !mark; ++c0) {
                    const int i = ch[0][c0], j = ch[1][c1], k = ch[2][c2];
                    const int4 px = pr[0][c0], py = pr[1][c1], pz = pr[2][c2];
                    if (px.x & py.x & pz.x & 256) continue; // a core child: its parent is Dirichlet
                    if ((F.mk[F.base + i + (int64_t)j * F.sy + (F.is3d ? (int64_t)k * F.sz : 0)] & CELL_BITS) !=
                        PGPU_CELL_DIRICHLET)
                        continue;
                    const int n[3] = {px.x & 0xff, py.x & 0xff, pz.x & 0xff};
                    const int Q0[3] = {px.y, px.z, px.w}, Q1[3] = {py.y, py.z, py.w}, Q2[3] = {pz.y, pz.z, pz.w};
                    bool held = false;
                    for (int e2 = 0; e2 < n[2] && !held; ++e2)
                        for (int e1 = 0; e1 < n[1] && !held; ++e1)
                            for (int e0 = 0; e0 < n[0] && !held; ++e0) {
                                const int Q[3] = {Q0[e0], Q1[e1], Q2[e2]};
                                held = dirichlet(Q);
                            }
                    if (held) continue;
                    double best = -1;
                    int64_t at = -1;
                    for (int e2 = 0; e2 < n[2]; ++e2)
                        for (int e1 = 0; e1 < n[1]; ++e1)
                            for (int e0 = 0; e0 < n[0]; ++e0) {
                                const double wt = __ldg(a.par[0].w + (size_t)i * MAX_PARENTS + e0) *
                                                  __ldg(a.par[1].w + (size_t)j * MAX_PARENTS + e1) *
                                                  __ldg(a.par[2].w + (size_t)k * MAX_PARENTS + e2);
                                if (wt > best * (1 + 1e-9)) { // (a tie in exact weights: the first)
                                    best = wt;
                                    at = C.base + Q0[e0] + (int64_t)Q1[e1] * C.sy +
                                         (C.is3d ? (int64_t)Q2[e2] * C.sz : 0);
                                }
                            }
                    mark = at == pc;
                }
        a.iso[pc] = mark ? 1 : 0;
    }
}

// The shut rule, once gen_coarse_kernel has written the level (before
// gen_distance_kernel): for solid layers one cell thick that the coarse
// level no longer resolves (doc/model's V5 with the split rule of
// gen_coarse_kernel: thin walls standing in the fluid and films at a high
// face of an even axis stalled V-cycles at 0.6 to 0.9).  An inner face one
// of whose path faces is 0 across the face's whole width (the bit
// gen_coarse_kernel leaves in the high face's place) is closed where one
// side is Dirichlet or neither side's core children are all solid.  A
// warp per row, a lane per point, its low faces: it rewrites its own
// fraction-0 bits and faces only, and reads its neighbours' type bits.
template <class T> __global__ void __launch_bounds__(256) gen_shut_kernel(const GenCoarse<T> a)
{
    const Grid<T> &C = a.c;
    const int lane = threadIdx.x & 31;
    const int64_t rows = (int64_t)C.ny * C.nz, warps = (int64_t)gridDim.x * (blockDim.x >> 5);
    for (int64_t r = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5; r < rows; r += warps) { // a warp per row
        const int j = (int)(r % C.ny), k = (int)(r / C.ny);
        const int64_t row = C.base + j * C.sy + k * C.sz;
        for (int i = lane; i < C.nx; i += 32) {
            const int64_t pc = row + i;
            // the type with gen_iso_kernel's marks (a neighbour's byte may
            // be rewritten meanwhile, its type only to the marked one)
            auto type_at = [&](int64_t e) {
                return a.iso && a.iso[e] ? (unsigned)PGPU_CELL_DIRICHLET : a.cmk[e] & CELL_BITS;
            };
            const unsigned own = a.cmk[pc], raw = type_at(pc);
            unsigned out = (own & ~CELL_BITS) | raw;
            if ((own & 0xa8u) && raw != PGPU_CELL_SOLID) { // (the bits are set on inner faces only)
#pragma unroll
                for (int d = 0; d < 3; ++d) {
                    const int64_t cs = d == 0 ? 1 : d == 1 ? C.sy : C.sz;
                    if (!((own >> (CLOSED_SHIFT + 2 * d + 1)) & 1u)) continue;
                    const unsigned nb = type_at(pc - cs);
                    if (nb == PGPU_CELL_SOLID) continue;
                    if (raw == PGPU_CELL_DIRICHLET || nb == PGPU_CELL_DIRICHLET ||
                        (raw != CELL_FLUID_SOLID_CORE && nb != CELL_FLUID_SOLID_CORE)) {
                        a.cf[d][pc] = T(0);
                        if (a.cone) a.cone[pc] = 0;
                        out |= 1u << (CLOSED_SHIFT + 2 * d);
                    }
                }
            }
            if (out != own) a.cmk[pc] = (uint8_t)out;
        }
    }
}

// One fine row of a coarse face's walk (gen_distance_kernel's, below),
// from the fluid side: the row's coupling, the coarse spacing H over the
// distance to its first Dirichlet point (0 where a closed face or a solid
// point comes first), and that point's element in `held` (-1: none).  e0:
// the row's element at walk node 0 (unshifted), kk / xx the face's walk
// (nodes, distances), fd the element stride along the axis d, frd the fine
// fractions across that axis (NULL: none), scale as GenCoarse::scale.
template <class T>
__device__ __forceinline__ double walk_row(const Grid<T> &F, const T *frd, int d, int64_t fd, int64_t e0,
                                           const int *kk, const double *xx, bool fwd, bool scale, int64_t &held)
{
    const int cnt = kk[0];
    const double H = xx[0];
    // the walk's end pieces, off the fine nodes (cell pairs, a periodic
    // ring): from the fluid point's position to the first node, from the
    // last node to the far end
    const double lead = fwd ? xx[1] : H - xx[cnt], tail = fwd ? H - xx[cnt] : xx[1];
    // node q of the walk from the fluid side: its element and distance
    auto node = [&](int q) { return e0 + (int64_t)kk[1 + (fwd ? q : cnt - 1 - q)] * fd; };
    auto at = [&](int q) { return fwd ? xx[1 + q] : H - xx[cnt - q]; };
    // the face between nodes q - 1 and q: its fraction, 0 where closed or
    // its higher point is solid (as gen_coarse_kernel's window counts it)
    auto face = [&](int q) {
        const int64_t hi = node(fwd ? q : q - 1);
        const unsigned b = F.mk[hi];
        if (((b >> (CLOSED_SHIFT + 2 * d)) & 1u) || (b & CELL_BITS) == PGPU_CELL_SOLID) return 0.0;
        return frd ? (double)frd[hi] : 1.0;
    };
    // an end piece's length over its fraction: 1 for a mask alone, with
    // beta the fine face's it lies on (hi: that face's higher node);
    // infinite where that is not positive
    auto piece = [&](double len, int64_t hi) {
        if (!(len > 1e-9 * H) || !scale || !frd) return len;
        const double fr = (double)frd[hi];
        return fr > 0 ? len / fr : INFINITY;
    };
    held = -1;
    const unsigned ts = F.mk[node(0)] & CELL_BITS;
    double v = 0;
    if (ts == PGPU_CELL_DIRICHLET) { // held next to the fluid point: the faces' mean
        for (int q = 1; q < cnt; ++q) v += face(q);
        v = cnt > 1 ? v / (cnt - 1) : 1.0;
        held = node(0);
    } else if (ts == PGPU_CELL_FLUID) {
        double dist = piece(lead, node(0) + (fwd ? 0 : fd));
        bool cut = false;
        for (int q = 1; q < cnt && !cut && held < 0; ++q) {
            const double fr = face(q);
            const unsigned tq = F.mk[node(q)] & CELL_BITS;
            cut = fr == 0.0 || tq == PGPU_CELL_SOLID;
            if (!cut) dist += (at(q) - at(q - 1)) / fr;
            if (tq == PGPU_CELL_DIRICHLET) held = node(q);
        }
        if (held < 0) dist += piece(tail, node(cnt - 1) + (fwd ? fd : 0));
        v = cut || !(dist > 0) ? 0.0 : H / dist;
        if (v == 0.0) held = -1;
    }
    return v;
}

// The faces between a coarse fluid and a coarse Dirichlet point, once
// gen_coarse_kernel has written the level: the stages' mean of the fine
// faces on the path puts the held value a coarse spacing away, where the
// fine fluid's nearest held point may be one fine spacing away (a coarse
// point is Dirichlet only where its core child is).  Each level then moved
// the held boundary outwards and V-cycles diverged on a free surface
// between kept nodes (Dirichlet cells above y = 0.5 at 127^2: 1.25 per
// cycle).  Here such a face takes, per fine row across it (the rows'
// weights as the stages use them), the coarse spacing over the distance
// from the fluid point's position to the row's first Dirichlet point along
// the face's axis, each fine face's length over its fraction (a row ends
// at the far coarse point's position when it holds no Dirichlet point);
// 0 where the row meets a closed face or a solid point first, or its point
// next to the fluid one is solid (no flux leaves it).  Fluid sealed from
// Dirichlet cells by a solid layer, which the mean coupled to them with
// 0.5, is then cut off too.
//
// Runs after gen_shut_kernel, and overrides it on these faces.  A thread
// per coarse point, its low faces: it rewrites its own bits and faces
// only, and reads its neighbours' type bits, which no thread changes.
template <class T> __global__ void gen_distance_kernel(const GenCoarse<T> a)
{
    const Grid<T> &F = a.f, &C = a.c;
    PGPU_GRID_STRIDE(t, (int64_t)C.nx * C.ny * C.nz)
    {
        int P[3];
        const int64_t pc = point_of(C, t, P[0], P[1], P[2]);
        // a coarse point's type (CELL_FLUID_SOLID_CORE is fluid here)
        auto type_at = [&](int64_t e) {
            const unsigned b = a.cmk[e] & CELL_BITS;
            return b == CELL_FLUID_SOLID_CORE ? PGPU_CELL_FLUID : b;
        };
        const unsigned own = a.cmk[pc], t1 = type_at(pc);
        if (t1 == PGPU_CELL_SOLID) continue;
        // the type across each low face that makes a pair with this point's
        const unsigned want = t1 == PGPU_CELL_FLUID ? PGPU_CELL_DIRICHLET : PGPU_CELL_FLUID;
        bool pair[3];
#pragma unroll
        for (int d = 0; d < 3; ++d) {
            const int64_t cs = d == 0 ? 1 : d == 1 ? C.sy : C.sz;
            pair[d] = P[d] > 0 && (d < 2 || C.is3d) && type_at(pc - cs) == want;
        }
        if (!pair[0] && !pair[1] && !pair[2]) continue;
        const bool fwd = t1 == PGPU_CELL_DIRICHLET; // the fluid point is the low one
        unsigned out = own;
#pragma unroll
        for (int d = 0; d < 3; ++d) {
            if (!pair[d]) continue;
            const int I = P[d];
            const int *kk = a.wk[d].k + (size_t)I * (MAX_WALK + 1);
            const int cnt = kk[0];
            if (!cnt) continue;
            const double *xx = a.wk[d].x + (size_t)I * (MAX_WALK + 1);
            const T *frd = d == 0 ? F.fx : d == 1 ? F.fy : F.fz;
            const int64_t fd = d == 0 ? 1 : d == 1 ? F.sy : F.sz;
            const int d1 = (d + 1) % 3, d2 = (d + 2) % 3;
            const int64_t f1 = d1 == 0 ? 1 : d1 == 1 ? F.sy : F.sz, f2 = d2 == 0 ? 1 : d2 == 1 ? F.sy : F.is3d ? F.sz : 0;
            const CoarseAxis &A1 = a.ax[d1], &A2 = a.ax[d2];
            const int m1 = A1.row[P[d1]].x & 0xff, m2 = A2.row[P[d2]].x & 0xff;
            double num = 0, W1 = 0, W2 = 0;
            for (int c2 = 0; c2 < m2; ++c2) W2 += A2.w[(size_t)P[d2] * MAX_CHILDREN + c2];
            for (int c1 = 0; c1 < m1; ++c1) {
                const double w1 = A1.w[(size_t)P[d1] * MAX_CHILDREN + c1];
                W1 += w1;
                for (int c2 = 0; c2 < m2; ++c2) {
                    const double w = w1 * A2.w[(size_t)P[d2] * MAX_CHILDREN + c2];
                    const int64_t e0 = F.base + (int64_t)row_child(A1, P[d1], c1) * f1 +
                                       (int64_t)row_child(A2, P[d2], c2) * f2;
                    int64_t held;
                    num += w * walk_row(F, frd, d, fd, e0, kk, xx, fwd, a.scale, held);
                }
            }
            const double ws = W1 * W2;
            const T fr = T(ws > 0 ? num / ws : 0.0);
            a.cf[d][pc] = fr;
            if (a.cone && fr != T(1)) a.cone[pc] = 0;
            const unsigned bit = 1u << (CLOSED_SHIFT + 2 * d);
            out = fr == T(0) ? out | bit : out & ~bit;
        }
        if (out != own) a.cmk[pc] = (uint8_t)out;
    }
}

// FMG's values of a coarse level's Dirichlet points.  The coarse problems
// hold zero there (their right-hand sides carry the held values: fmg_coarse),
// so the coarse solution jumps from u to 0 at the mask's boundary; FMG's
// cubic interpolation reading those zeros left an error of a few percent of
// |u| beside Dirichlet points that no later cycle removes at any h.  Each
// Dirichlet point of the coarse level a.c takes the value (src, level a.f's
// values) of a Dirichlet core child (gen_coarse_kernel's rule made it
// Dirichlet from one), else of any Dirichlet child (gen_iso_kernel's rule),
// else 0: level by level, the caller's values beneath.  Only Dirichlet
// points of dst are written.
template <class T>
__global__ void held_values_kernel(const __grid_constant__ GenCoarse<T> a, const T *__restrict__ src, T *dst)
{
    const Grid<T> &F = a.f, &C = a.c;
    const int64_t fs[3] = {1, F.sy, F.is3d ? F.sz : 0};
    PGPU_GRID_STRIDE(s, (int64_t)C.nx * C.ny * C.nz)
    {
        int P[3];
        const int64_t pc = point_of(C, s, P[0], P[1], P[2]);
        if ((C.mk[pc] & CELL_BITS) != PGPU_CELL_DIRICHLET) continue;
        int m[3], core[3];
#pragma unroll
        for (int d = 0; d < 3; ++d) {
            const int x = a.ax[d].row[P[d]].x;
            m[d] = x & 0xff;
            core[d] = (x >> 16) & 0xff;
        }
        int64_t at = -1;
        for (int pass = 0; pass < 2 && at < 0; ++pass)
            for (int c2 = 0; c2 < m[2] && at < 0; ++c2)
                for (int c1 = 0; c1 < m[1] && at < 0; ++c1)
                    for (int c0 = 0; c0 < m[0] && at < 0; ++c0) {
                        if (pass == 0 && !((core[0] >> c0) & (core[1] >> c1) & (core[2] >> c2) & 1)) continue;
                        const int64_t p = F.base + row_child(a.ax[0], P[0], c0) * fs[0] +
                                          row_child(a.ax[1], P[1], c1) * fs[1] + row_child(a.ax[2], P[2], c2) * fs[2];
                        if ((F.mk[p] & CELL_BITS) == PGPU_CELL_DIRICHLET) at = p;
                    }
        dst[pc] = at >= 0 ? src[at] : T(0);
    }
}

// FMG's coarse right-hand sides with held points: the restriction of f alone
// (fmg_restrict), and here, on the coarse level a.c, each face between a
// fluid and a Dirichlet point adds its coupling times the held value its
// coupling was measured to: per fine row across the face,
// gen_distance_kernel's walk to the row's first Dirichlet point, its value
// from src (level a.f's values: held_values_kernel's), the rows' values
// averaged with the weights that made the coupling; a row that meets no
// Dirichlet point ends at the coarse neighbour (its value in cval, the
// coarse level's).  (The restricted boundary terms that the correction
// levels take instead put a held value's pull where the fine staircase has
// it, which the coarse staircase does not: FMG's pass left 3e-2 of max |u|
// near the boundary of a sphere of Dirichlet cells, at every h.)
template <class T>
__global__ void held_terms_kernel(const __grid_constant__ GenCoarse<T> a, const T *__restrict__ src,
                                  const T *__restrict__ cval, T *rhs)
{
    const Grid<T> &F = a.f, &C = a.c;
    const int64_t fs[3] = {1, F.sy, F.is3d ? F.sz : 0};
    PGPU_GRID_STRIDE(t, (int64_t)C.nx * C.ny * C.nz)
    {
        int P[3];
        const int64_t pc = point_of(C, t, P[0], P[1], P[2]);
        if (!gen_fluid(C, pc)) continue;
        const GenPoint<T> q = gen_couplings(C, pc, P[0], P[1], P[2]);
        double s = 0;
        for (int f = 0; f < (C.is3d ? 6 : 4); ++f) {
            const int64_t pn = pc + q.o[f];
            if (q.v[f] == T(0) || (C.mk[pn] & CELL_BITS) != PGPU_CELL_DIRICHLET) continue;
            const double un = (double)cval[pn];
            const int d = f >> 1;
            const bool fwd = f & 1; // the fluid point is the face's low one
            const int I = P[d] + (fwd ? 1 : 0);
            const int *kk = a.wk[d].k + (size_t)I * (MAX_WALK + 1);
            if (!kk[0]) { // no walk (a periodic wrap): the neighbour's value
                s += (double)q.v[f] * un;
                continue;
            }
            const double *xx = a.wk[d].x + (size_t)I * (MAX_WALK + 1);
            const T *frd = d == 0 ? F.fx : d == 1 ? F.fy : F.fz;
            const int d1 = (d + 1) % 3, d2 = (d + 2) % 3;
            const CoarseAxis &A1 = a.ax[d1], &A2 = a.ax[d2];
            const int m1 = A1.row[P[d1]].x & 0xff, m2 = A2.row[P[d2]].x & 0xff;
            double num = 0, val = 0;
            for (int c1 = 0; c1 < m1; ++c1)
                for (int c2 = 0; c2 < m2; ++c2) {
                    const double w = A1.w[(size_t)P[d1] * MAX_CHILDREN + c1] * A2.w[(size_t)P[d2] * MAX_CHILDREN + c2];
                    const int64_t e0 = F.base + (int64_t)row_child(A1, P[d1], c1) * fs[d1] +
                                       (int64_t)row_child(A2, P[d2], c2) * fs[d2];
                    int64_t held;
                    const double v = walk_row(F, frd, d, fs[d], e0, kk, xx, fwd, a.scale, held);
                    if (!(v > 0)) continue;
                    num += w * v;
                    val += w * v * (held >= 0 ? (double)src[held] : un);
                }
            s += (double)q.v[f] * (num > 0 ? val / num : un);
        }
        if (s != 0) rhs[pc] += T(s);
    }
}

} // namespace pgpu
