// operator.h -- the discrete operator: axes, the couplings at a point, boundary terms, the residual
#pragma once
#include "errors.h"
#include "launch.h"

namespace pgpu {

// The discrete operator on every level.  Each axis is described by node
// positions x[i] and cell widths w[i] (the fine grid is uniform: x = (i+1) h,
// w = h), its two face types and where the walls are.  Along an axis the
// operator is the finite-volume form
//     (1/w_i) [ (u_i - u_{i-1}) / (x_i - x_{i-1}) + (u_i - u_{i+1}) / (x_{i+1} - x_i) ]
// which on the uniform fine grid is exactly the 3-point difference; at a
// Dirichlet wall the neighbour is the wall value at distance (x_0 - xlo), at a
// Neumann wall the flux (the ghost value) enters as g / w_0, and periodic axes
// wrap.  Coarse levels use the same form on their own (possibly non-uniform)
// nodes, so one set of kernels serves every level and boundary type.
//
// On the device a point's operator is its couplings: the weight of each of
// its six neighbours and its diagonal, (A u)_p = diag u_p - sum weight u_nb.
// Two forms give them, both separable into a column's x/y part (ColXY) and a
// plane's z part (ColZ):
//  - the table form (any level, any faces): per-axis tables c_lo / c_hi, the
//    face coefficients at the ghosts and the neighbour offsets (the ghost, or
//    the opposite plane on a periodic axis): col_xy, col_z;
//  - the uniform form (Grid::fast, planes 1..nz-2): the same numbers from a
//    few constants, without table loads: uniform_axis, uniform_xy.
// Every kernel forms the neighbour sum through neighbours(), gen_sum or
// plain_sum, in one order (below; a smoothing update may take
// neighbours_cz() where the z couplings are one constant), a residual
// through point_res, and updates through relax() / relax_scaled(); the
// host assembles the same operator in assemble_dense.  The general form
// (face coefficients and a cell mask, per point and not separable) is read
// through gen_couplings, stencil_off and boundary_terms (below).

struct Axis {
    int n = 1;
    int lo = PGPU_BC_DIRICHLET, hi = PGPU_BC_DIRICHLET;
    bool active = true; // false: the z axis of a 2D problem
    std::vector<double> x, w;
    double xlo = 0, xhi = 0, L = 0; // wall positions (D/N), period (P)
    double h = 1;                   // mean spacing, for the coarsening rule
};

// Coefficients of the axis operator: c_lo[i] couples node i to i-1 (at i = 0
// to the wall or the wrapped node; 0 for a Neumann wall), c_hi[i] to i+1.
// g_lo / g_hi multiply the ghost value at the faces (Dirichlet: the wall
// coefficient; Neumann: 1/w, the flux entering the cell; periodic: c_lo[0]).
struct AxisCoef {
    std::vector<double> c_lo, c_hi;
    double g_lo = 0, g_hi = 0;
};

static AxisCoef axis_coef(const Axis &a)
{
    AxisCoef c;
    const int n = a.n;
    c.c_lo.assign(n, 0.0);
    c.c_hi.assign(n, 0.0);
    if (!a.active) return c;
    for (int i = 0; i < n; ++i) {
        if (i > 0) c.c_lo[i] = 1.0 / (a.w[i] * (a.x[i] - a.x[i - 1]));
        if (i < n - 1) c.c_hi[i] = 1.0 / (a.w[i] * (a.x[i + 1] - a.x[i]));
    }
    switch (a.lo) {
    case PGPU_BC_DIRICHLET: c.c_lo[0] = 1.0 / (a.w[0] * (a.x[0] - a.xlo)); c.g_lo = c.c_lo[0]; break;
    case PGPU_BC_NEUMANN: c.c_lo[0] = 0; c.g_lo = 1.0 / a.w[0]; break;
    default: // periodic: an axis of one node does not couple to itself
        c.c_lo[0] = n > 1 ? 1.0 / (a.w[0] * (a.x[0] - (a.x[n - 1] - a.L))) : 0.0;
        c.g_lo = c.c_lo[0];
    }
    switch (a.hi) {
    case PGPU_BC_DIRICHLET: c.c_hi[n - 1] = 1.0 / (a.w[n - 1] * (a.xhi - a.x[n - 1])); c.g_hi = c.c_hi[n - 1]; break;
    case PGPU_BC_NEUMANN: c.c_hi[n - 1] = 0; c.g_hi = 1.0 / a.w[n - 1]; break;
    default:
        c.c_hi[n - 1] = n > 1 ? 1.0 / (a.w[n - 1] * (a.x[0] + a.L - a.x[n - 1])) : 0.0;
        c.g_hi = c.c_hi[n - 1];
    }
    return c;
}

// Node positions carry rounding, so the couplings of a uniform axis differ
// in their last bits.  Where the interior ones (nodes 1..n-2) agree to
// 1e-12, the axis is uniform (Grid::fast), and (with write) every coupling
// within 1e-12 of the first interior one becomes exactly that number (the
// end nodes' too where they equal it so, as at a Dirichlet face of a
// uniform axis; the ghost coefficient with the wall's coupling): the table
// and the uniform form's one constant are then the same numbers, and
// kernels that read either sum alike (test_routes).  False where the axis
// is not uniform (nothing changed).
static bool snap_uniform(AxisCoef &c, bool write = true)
{
    const int n = (int)c.c_lo.size();
    if (n < 2) return true;
    const double ref = c.c_lo[1], tol = 1e-12 * std::fabs(ref);
    auto near = [&](double v) { return std::fabs(v - ref) <= tol; };
    for (int q = 1; q + 1 < n; ++q)
        if (!near(c.c_hi[q]) || !near(c.c_lo[q])) return false;
    if (!write) return true;
    const bool glo = c.g_lo == c.c_lo[0], ghi = c.g_hi == c.c_hi[n - 1];
    for (int q = 0; q < n; ++q) {
        if (near(c.c_lo[q])) c.c_lo[q] = ref;
        if (near(c.c_hi[q])) c.c_hi[q] = ref;
    }
    if (glo) c.g_lo = c.c_lo[0];
    if (ghi) c.g_hi = c.c_hi[n - 1];
    return true;
}

// The fine axis as the user configured it.
static Axis fine_axis(int64_t n, double h, int lo, int hi, bool active)
{
    Axis a;
    a.n = (int)n;
    a.lo = lo;
    a.hi = hi;
    a.active = active;
    a.h = h;
    a.x.resize(a.n);
    a.w.assign(a.n, h);
    for (int i = 0; i < a.n; ++i) a.x[i] = (i + 1) * h;
    a.xlo = a.x[0] - (lo == PGPU_BC_NEUMANN ? 0.5 * h : h);
    a.xhi = a.x[a.n - 1] + (hi == PGPU_BC_NEUMANN ? 0.5 * h : h);
    a.L = n * h;
    return a;
}

// The three fine axes of a config (2D: an inactive z axis).
static void fine_axes(const pgpu_config &c, Axis fine[3])
{
    const bool is3d = c.nz > 1;
    fine[0] = fine_axis(c.nx, c.hx, c.bc[0], c.bc[1], true);
    fine[1] = fine_axis(c.ny, c.hy, c.bc[2], c.bc[3], true);
    fine[2] = fine_axis(c.nz, is3d ? c.hz : 1.0, is3d ? c.bc[4] : PGPU_BC_NEUMANN, is3d ? c.bc[5] : PGPU_BC_NEUMANN,
                        is3d);
}

// The operator of a small level as a dense matrix a (row p, column q, points
// p = i + nx (j + ny k)) and the cell volumes w of its points.
static void assemble_dense(const Axis ax[3], std::vector<double> &a, std::vector<double> &w)
{
    const int nx = ax[0].n, ny = ax[1].n, nz = ax[2].n, n = nx * ny * nz;
    const int nn[3] = {nx, ny, nz};
    AxisCoef c[3];
    for (int d = 0; d < 3; ++d) c[d] = axis_coef(ax[d]);
    a.assign((size_t)n * n, 0.0);
    w.assign(n, 1.0);
    for (int k = 0; k < nz; ++k)
        for (int j = 0; j < ny; ++j)
            for (int i = 0; i < nx; ++i) {
                const int idx[3] = {i, j, k}, p = i + nx * (j + ny * k);
                for (int d = 0; d < 3; ++d) {
                    if (!ax[d].active) continue;
                    const int m = idx[d], nd = nn[d];
                    const bool per = ax[d].lo == PGPU_BC_PERIODIC;
                    auto at = [&](int mm) { // node p moved to mm along axis d
                        int q[3] = {i, j, k};
                        q[d] = mm;
                        return q[0] + nx * (q[1] + ny * q[2]);
                    };
                    w[p] *= ax[d].w[m];
                    a[(size_t)p * n + p] += c[d].c_lo[m] + c[d].c_hi[m];
                    if (m > 0) a[(size_t)p * n + at(m - 1)] -= c[d].c_lo[m];
                    else if (per && nd > 1) a[(size_t)p * n + at(nd - 1)] -= c[d].c_lo[0];
                    if (m < nd - 1) a[(size_t)p * n + at(m + 1)] -= c[d].c_hi[m];
                    else if (per && nd > 1) a[(size_t)p * n + at(0)] -= c[d].c_hi[nd - 1];
                }
            }
}

// What a kernel knows of one level.  Point (i,j,k), 0-based interior
// indices, is stored at base + i + j*sy + k*sz (2D: k == 0).  o?? are the
// offsets from a face point to the value across the face: the ghost (-1, +1
// times the stride) or, on a periodic axis, the opposite plane.
template <class T> struct Grid {
    int nx, ny, nz;
    int is3d;
    int px, py, pz; // periodic axes
    int64_t sy, sz, base;
    const T *cxl, *cxh, *cyl, *cyh, *czl, *czh; // the table form (AxisCoef per axis)
    T gxl, gxh, gyl, gyh, gzl, gzh;
    int64_t oxl, oxh, oyl, oyh, ozl, ozh;
    int dxl, dxh, dyl, dyh, dzl, dzh; // face carries data (Dirichlet or Neumann)
    int dirichlet;                    // bit f: face f (x-, x+, y-, y+, z-, z+) is Dirichlet
    // The uniform form (fast != 0): along each axis the nodes 1..n-2 couple to
    // both neighbours with the same coefficient (cx, cy, cz; to 1e-12, the
    // rounding of the node positions).  The end nodes may differ: on coarse
    // levels of an even axis the cells at the walls are narrower.  So planes
    // 1..nz-2 have the z couplings cz, and a column's x/y coefficients follow
    // from whether it is an end node: fxl / fxh are node 0's coupling to node
    // 1 and node n-1's to n-2, exl / exh the face parts of their diagonals
    // (c_lo[0], c_hi[n-1]).  The x/y neighbour offsets fit in an int.
    int fast;
    T cx, cy, cz, fxl, fxh, fyl, fyh, exl, exh, eyl, eyh;
    // The general form (gen != 0; a mask or coefficients were set, see
    // gen_couplings): the cell types mk (NULL: every point fluid; ghosts read
    // as fluid) and the face fractions fx, fy, fz (NULL: 1) that multiply the
    // table form's couplings; fx[p] belongs to the face between p - x and p,
    // so the high face of the last node is at its ghost.  fast is 0 then,
    // unless the level is uniform and has a mask but no fractions: the
    // column walk and rbgs_tile_kernel read the mask bytes then.
    int gen;
    const uint8_t *mk;
    const T *fx, *fy, *fz;
    // Level 0 of a 3D grid with coefficients in beta_face's range: 1 / beta
    // per point (layout of u, face ghosts too), from which beta_tile_kernel
    // and, in double, the column walk form the faces' fractions (beta_face,
    // the bits fx .. fz hold): one array read instead of three.  NULL
    // otherwise.
    const T *bw = nullptr;
    // The table is uniform (fast before the fractions turned it off): the
    // column walk groups planes with the fractions (WALK_FRAC).
    int frfast = 0;
    // The general form with a mask, in cycles that need not be symmetric:
    // the closed bits of mk (on coarse levels they include the faces of
    // fraction 0, general.h) steer the prolongation into this level
    // (ip_point_shut).  0 otherwise.
    int shut = 0;
};

// A column's x/y couplings (values vxl .. vyh, neighbour offsets nxl .. nyh)
// and x/y share of the diagonal; a plane's z couplings.
template <class T> struct ColXY {
    T vxl, vxh, vyl, vyh, dxy;
    int64_t nxl, nxh, nyl, nyh;
};
template <class T> struct ColZ {
    T vzl, vzh, dz;
    int64_t nzl, nzh;
};

// The table form's diagonal parts in the arithmetic A (the couplings'
// association order): in T the numbers col_xy and col_z store; in double,
// where a residual or the operator of float values is formed, their exact
// sums.  A float diagonal rounded apart from its couplings (cells that are
// not cubic: 2/hx^2 + 2/hy^2 rounded) shifts the problem by up to eps/2 of
// the diagonal, which lambda_min magnifies: a 2D 59 x 56 grid between
// Neumann and Dirichlet faces solved 1.5e-4 from its exact solution in
// float, by every method.  (uniform_axis takes the same arithmetic.)
template <class A, class T> __device__ __forceinline__ A table_dxy(const Grid<T> &g, int i, int j)
{
    return (A(g.cxl[i]) + A(g.cxh[i])) + (A(g.cyl[j]) + A(g.cyh[j]));
}
template <class A, class T> __device__ __forceinline__ A table_dz(const Grid<T> &g, int k)
{
    return A(g.czl[k]) + A(g.czh[k]);
}
template <class A, class T> __device__ __forceinline__ A table_diag(const Grid<T> &g, int i, int j, int k)
{
    return g.is3d ? table_dxy<A>(g, i, j) + table_dz<A>(g, k) : table_dxy<A>(g, i, j);
}

// The table form.
template <class T> __device__ __forceinline__ ColXY<T> col_xy(const Grid<T> &g, int i, int j)
{
    ColXY<T> c;
    c.vxl = i > 0 ? g.cxl[i] : g.gxl;
    c.nxl = i > 0 ? -1 : g.oxl;
    c.vxh = i < g.nx - 1 ? g.cxh[i] : g.gxh;
    c.nxh = i < g.nx - 1 ? 1 : g.oxh;
    c.vyl = j > 0 ? g.cyl[j] : g.gyl;
    c.nyl = j > 0 ? -g.sy : g.oyl;
    c.vyh = j < g.ny - 1 ? g.cyh[j] : g.gyh;
    c.nyh = j < g.ny - 1 ? g.sy : g.oyh;
    c.dxy = table_dxy<T>(g, i, j);
    return c;
}

template <class T> __device__ __forceinline__ ColZ<T> col_z(const Grid<T> &g, int k)
{
    ColZ<T> c;
    if (!g.is3d) {
        c.vzl = c.vzh = c.dz = T(0);
        c.nzl = c.nzh = 0;
        return c;
    }
    c.vzl = k > 0 ? g.czl[k] : g.gzl;
    c.nzl = k > 0 ? -g.sz : g.ozl;
    c.vzh = k < g.nz - 1 ? g.czh[k] : g.gzh;
    c.nzh = k < g.nz - 1 ? g.sz : g.ozh;
    c.dz = table_dz<T>(g, k);
    return c;
}

// The uniform form along one axis: couplings to the low and high neighbour
// and the diagonal part of a node by its place (first, last) on the axis,
// the diagonal in the arithmetic D (as table_dxy's A).
template <class T, class D>
__host__ __device__ __forceinline__ void uniform_axis(bool first, bool last, T c, T f_lo, T f_hi, T g_lo, T g_hi,
                                                      T e_lo, T e_hi, T &vl, T &vh, D &d)
{
    vl = first ? g_lo : last ? f_hi : c;
    vh = last ? g_hi : first ? f_lo : c;
    d = D(first ? e_lo : last ? f_hi : c) + D(last ? e_hi : first ? f_lo : c);
}

template <class T, class D>
__device__ __forceinline__ void uniform_xy(const Grid<T> &g, bool x0, bool x1, bool y0, bool y1, T &vxl, T &vxh,
                                           T &vyl, T &vyh, D &dxy)
{
    D dx, dy;
    uniform_axis(x0, x1, g.cx, g.fxl, g.fxh, g.gxl, g.gxh, g.exl, g.exh, vxl, vxh, dx);
    uniform_axis(y0, y1, g.cy, g.fyl, g.fyh, g.gyl, g.gyh, g.eyl, g.eyh, vyl, vyh, dy);
    dxy = dx + dy;
}

// The neighbour sum, in one order for every kernel: per axis the pair
// fma(c_hi, u_hi, c_lo u_lo), the low product rounded on its own; then
// (x pair + y pair) + z pair; in the arithmetic A (the solver's precision,
// or double where a residual of float values is formed: its products are
// exact there).  Written out (mul_rn, fma) so that no contraction of the
// compiler's rounds one site otherwise than another: every kernel and
// route forms a point's sum bit for bit alike (test_routes).
// neighbours_cz: the smoothers' sum where the z couplings are one constant,
// the z pair cz (u_lo + u_hi): an operation less than the pair (the paired
// float red-black pass is issue-bound: 9% slower with the pair at 512^3),
// so a smoothing update rounds otherwise than a residual (known, and
// harmless: the updates differ in their form anyway, relax_scaled).
__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
template <class A> __device__ __forceinline__ A pair_sum(A cl, A ul, A ch, A uh) { return fma(ch, uh, mul_rn(cl, ul)); }
template <class A, class T>
__device__ __forceinline__ A neighbours_xy(T cxl, T uxl, T cxh, T uxh, T cyl, T uyl, T cyh, T uyh)
{
    return pair_sum(A(cxl), A(uxl), A(cxh), A(uxh)) + pair_sum(A(cyl), A(uyl), A(cyh), A(uyh));
}
template <class A, class T>
__device__ __forceinline__ A neighbours(T cxl, T uxl, T cxh, T uxh, T cyl, T uyl, T cyh, T uyh, T czl, T uzl, T czh,
                                        T uzh)
{
    return neighbours_xy<A>(cxl, uxl, cxh, uxh, cyl, uyl, cyh, uyh) + pair_sum(A(czl), A(uzl), A(czh), A(uzh));
}
template <class A, class T>
__device__ __forceinline__ A neighbours_cz(T cxl, T uxl, T cxh, T uxh, T cyl, T uyl, T cyh, T uyh, T cz, T uzl, T uzh)
{
    return fma(A(cz), A(uzl) + A(uzh), neighbours_xy<A>(cxl, uxl, cxh, uxh, cyl, uyl, cyh, uyh));
}
// The restriction's sums, in one order for every kernel (restrict_kernel,
// restrict_tile_kernel, restrict_residual_kernel, beta_tile_kernel's RR):
// along x the children's w r in a chain of fused multiply-adds from 0, along
// y the x sums so, along z the y sums so (RsPlanes); a child of weight 0
// changes no sum.
template <class T> __device__ __forceinline__ T rs_add(T acc, T w, T v) { return fma(w, v, acc); }
// The residual b + off - diag u at a point (rhs = b + off), rounded once;
// the operator diag u - off is its negation.
template <class A> __device__ __forceinline__ A point_res(A rhs, A diag, A centre) { return fma(-diag, centre, rhs); }

// ---- the general form ----
// A point's type is the low two bits of its mask byte; bits 2..7 say which
// of its six faces (x-, x+, y-, y+, z-, z+) are closed, the neighbour across
// them being solid (the builder sets them, general_coarse.h; a byte is 0 at a fluid
// point with every face open).  Faces couple with the table form's values
// times the face fraction -- beta's harmonic face mean, on coarse levels the
// coarsened one (general_coarse.h) -- and closed faces not at all.  v: the
// couplings to the neighbours at offsets o, d: the faces' parts of the
// diagonal (they differ at Neumann box faces, whose ghost holds a flux: no
// diagonal part; a closed face has a point across it, so there d = v).
constexpr int CELL_BITS = 3, CLOSED_SHIFT = 2;
// A coarse fluid point whose core children are all solid, as gen_coarse_kernel
// writes it for gen_shut_kernel (gen_distance_kernel takes it as fluid);
// gen_check_kernel makes it fluid.
constexpr unsigned CELL_FLUID_SOLID_CORE = 3;
template <class T> __device__ __forceinline__ bool gen_fluid(const Grid<T> &g, int64_t p)
{
    return !g.mk || (g.mk[p] & CELL_BITS) == PGPU_CELL_FLUID;
}
template <class T> struct GenPoint {
    T v[6], d[6];
    int64_t o[6];
};
// Point p's mask byte (0, open fluid, without a mask), for kernels that
// load it ahead of its use.
template <class T> __device__ __forceinline__ unsigned gen_byte(const Grid<T> &g, int64_t p)
{
    return g.mk ? (unsigned)g.mk[p] : 0u;
}
// The faces that couple nothing (bit f, GenPoint's order) of a fluid point
// with mask byte b, where Grid::shut says to look.
template <class T> __device__ __forceinline__ unsigned gen_shut(const Grid<T> &g, unsigned b)
{
    return g.shut ? (b >> CLOSED_SHIFT) & 63u : 0u;
}
// The faces of element e whose fractions are 0 (bit f, GenPoint's order).
template <class T> __device__ __forceinline__ unsigned zero_faces(const Grid<T> &g, int64_t e)
{
    unsigned c = 0;
    if (g.fx) c |= (g.fx[e] == T(0) ? 1u : 0u) | (g.fx[e + 1] == T(0) ? 2u : 0u);
    if (g.fy) c |= (g.fy[e] == T(0) ? 4u : 0u) | (g.fy[e + g.sy] == T(0) ? 8u : 0u);
    if (g.fz && g.is3d) c |= (g.fz[e] == T(0) ? 16u : 0u) | (g.fz[e + g.sz] == T(0) ? 32u : 0u);
    return c;
}
// The faces' fractions fr applied to the table couplings and diagonal
// parts of q; closed faces (bit f of `closed`) couple not at all.
template <class T> __device__ __forceinline__ void gen_faces(GenPoint<T> &q, const T (&fr)[6], unsigned closed)
{
#pragma unroll
    for (int f = 0; f < 6; ++f) {
        const T a = (closed >> f) & 1u ? T(0) : fr[f];
        q.v[f] = mul_rn(q.v[f], a);
        q.d[f] = mul_rn(q.d[f], a);
    }
}
template <class T>
__device__ __forceinline__ GenPoint<T> gen_couplings(const Grid<T> &g, int64_t p, int i, int j, int k)
{
    GenPoint<T> q;
    const ColXY<T> c = col_xy(g, i, j);
    q.o[0] = c.nxl; q.o[1] = c.nxh; q.o[2] = c.nyl; q.o[3] = c.nyh;
    q.v[0] = c.vxl; q.v[1] = c.vxh; q.v[2] = c.vyl; q.v[3] = c.vyh;
    q.d[0] = g.cxl[i]; q.d[1] = g.cxh[i]; q.d[2] = g.cyl[j]; q.d[3] = g.cyh[j];
    T fr[6] = {T(1), T(1), T(1), T(1), T(0), T(0)};
    if (g.fx) { fr[0] = g.fx[p]; fr[1] = g.fx[p + 1]; }
    if (g.fy) { fr[2] = g.fy[p]; fr[3] = g.fy[p + g.sy]; }
    if (g.is3d) {
        const ColZ<T> z = col_z(g, k);
        q.o[4] = z.nzl; q.o[5] = z.nzh; q.v[4] = z.vzl; q.v[5] = z.vzh; q.d[4] = g.czl[k]; q.d[5] = g.czh[k];
        fr[4] = g.fz ? g.fz[p] : T(1);
        fr[5] = g.fz ? g.fz[p + g.sz] : T(1);
    } else {
        q.o[4] = q.o[5] = 0;
        q.v[4] = q.v[5] = q.d[4] = q.d[5] = T(0);
    }
    gen_faces(q, fr, g.mk ? (unsigned)g.mk[p] >> CLOSED_SHIFT : 0u);
    return q;
}
// The neighbour sum and the diagonal of a general point, in the order of
// neighbours(); value(f) gives the neighbour across face f, read
// only where the face couples (a solid neighbour may hold anything).
template <class A, class T, class V>
__device__ __forceinline__ A gen_sum(const GenPoint<T> &q, V value, A &diag)
{
    A n[6];
#pragma unroll
    for (int f = 0; f < 6; ++f) n[f] = q.v[f] != T(0) ? A(value(f)) : A(0);
    diag = ((A(q.d[0]) + A(q.d[1])) + (A(q.d[2]) + A(q.d[3]))) + (A(q.d[4]) + A(q.d[5]));
    return (pair_sum(A(q.v[0]), n[0], A(q.v[1]), n[1]) + pair_sum(A(q.v[2]), n[2], A(q.v[3]), n[3])) +
           pair_sum(A(q.v[4]), n[4], A(q.v[5]), n[5]);
}

// gen_sum's sums without its selects, in its order (diag from d): for
// couplings v that are all nonzero, or whose zero ones face a neighbour
// value set to 0 (no solid point's value is read).
template <class T>
__device__ __forceinline__ T plain_sum(const T (&v)[6], const T (&d)[6], const T (&nb)[6], T &diag)
{
    const T off = (pair_sum(v[0], nb[0], v[1], nb[1]) + pair_sum(v[2], nb[2], v[3], nb[3])) +
                  pair_sum(v[4], nb[4], v[5], nb[5]);
    diag = ((d[0] + d[1]) + (d[2] + d[3])) + (d[4] + d[5]);
    return off;
}

// A fluid point of a uniform masked level with closed faces `closed` (bit
// f, face order of GenPoint): the neighbour values nb across closed faces
// become 0 (a solid point may hold anything), so that the uniform form's
// neighbour sum drops them; returns the diagonal, the open faces' parts d
// summed as gen_sum sums them.  So it is exactly 0 where only Neumann box
// faces (diagonal part 0) are open, as in the general form.
template <class A, class T>
__device__ __forceinline__ A drop_closed(unsigned closed, const T (&d)[6], T (&nb)[6])
{
    A t[6];
#pragma unroll
    for (int f = 0; f < 6; ++f) {
        const bool c = (closed >> f) & 1u;
        if (c) nb[f] = T(0);
        t[f] = c ? A(0) : A(d[f]);
    }
    return ((t[0] + t[1]) + (t[2] + t[3])) + (t[4] + t[5]);
}

// The neighbours' part of the operator at interior point (i, j, k), element
// p, whose value is s[0]; diag gets its diagonal (0 at a point that is not
// fluid, whose caller leaves it as it is).  A: the arithmetic (T, or double
// for a residual of float values).
template <class A, class T>
__device__ __forceinline__ A stencil_off(const Grid<T> &g, const T *s, int64_t p, int i, int j, int k, A &diag)
{
    if (g.gen) {
        if (!gen_fluid(g, p)) {
            diag = A(0);
            return A(0);
        }
        const GenPoint<T> q = gen_couplings(g, p, i, j, k);
        return gen_sum<A>(q, [&](int f) { return s[q.o[f]]; }, diag);
    }
    const ColXY<T> c = col_xy(g, i, j);
    const A xy = neighbours_xy<A>(c.vxl, s[c.nxl], c.vxh, s[c.nxh], c.vyl, s[c.nyl], c.vyh, s[c.nyh]);
    diag = table_diag<A>(g, i, j, k);
    if (!g.is3d) return xy;
    const ColZ<T> z = col_z(g, k);
    return xy + pair_sum(A(z.vzl), A(s[z.nzl]), A(z.vzh), A(s[z.nzh]));
}

// b - A u at interior point (i, j, k), element p, b = f (its boundary
// terms are u's ghosts, which stencil_off reads), in double: the form of
// the small checks that form the residual inside another kernel.
template <class T>
__device__ __forceinline__ double point_residual(const Grid<T> &g, const T *u, const T *f, int64_t p, int i, int j, int k)
{
    double diag = 0;
    const double off = stencil_off<double>(g, u + p, p, i, j, k, diag);
    return point_res((double)f[p] + off, diag, (double)u[p]);
}

// The update shared by Jacobi and red-black: (1 - w) u + w (b + off) / diag.
// A zero diagonal (a single node of a purely periodic/Neumann grid) leaves u
// as it is.  relax_scaled: the same with w / diag precomputed as `scale`.
template <class T> __device__ __forceinline__ T relax(T u, T rhs, T diag, T w)
{
    return diag > T(0) ? (T(1) - w) * u + w * rhs / diag : u;
}
template <class T> __device__ __forceinline__ T relax_scaled(T u, T rhs, T keep, T scale)
{
    return keep * u + rhs * scale;
}
// 1 / d by the approximate reciprocal and STEPS Newton steps, each
// operation rounded as written (d in 2^-1000 .. 2^1000: the callers see to
// it).  Each step squares the relative error: two give the division's
// accuracy, one is enough for float (smooth_scale_lean).
template <int STEPS = 2> __device__ __forceinline__ double recip_newton(double d)
{
    double r;
    asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(d));
#pragma unroll
    for (int s = 0; s < STEPS; ++s) r = __fma_rn(r, __fma_rn(-d, r, 1.0), r);
    return r;
}
// w / diag for diag > 0 where a kernel forms it per point: in double the
// hardware's approximate reciprocal and STEPS = 2 Newton steps (about as
// accurate as the division, a fifth of its instructions, and no slow path) where
// diag lies in 2^-1000 .. 2^1000 (the reciprocal flushes subnormals: a
// subnormal diag would give infinity, a diag near the top a zero), else the
// division; in float the division.
__device__ __forceinline__ float smooth_scale(float w, float diag) { return w / diag; }
template <int STEPS = 2> __device__ __forceinline__ double smooth_scale(double w, double diag)
{
    if (!(diag >= 9.332636185032189e-302 && diag <= 1.0715086071862673e+301)) return w / diag; // 2^-1000, 2^1000
    return w * recip_newton<STEPS>(diag);
}

// ... for beta_tile_kernel.  In float by the double reciprocal and one
// Newton step (no branch, no division's slow path, which spilled its 64
// registers; every float diagonal lies in the double one's range, and one
// step leaves 2^-38, below float's rounding).  In double with both steps:
// one left the step 2^-38 from the division's, which a sweep checked
// against the host reference in double can see.
__device__ __forceinline__ float smooth_scale_lean(float w, float diag)
{
    return (float)((double)w * recip_newton<1>(diag));
}
__device__ __forceinline__ double smooth_scale_lean(double w, double diag) { return smooth_scale<2>(w, diag); }

// beta's harmonic face mean 2 a b / (a + b) from the reciprocals wa = 1/a,
// wb = 1/b (Grid::bw): 2 / (wa + wb), the reciprocal as in smooth_scale
// (float: one Newton step), every operation rounded as written, so
// that both points of a face and every kernel (and the stored fractions,
// gen_fractions_kernel) get the same bits.  For beta in beta_recip_min ..
// beta_recip_max, where the sum stays inside the approximate reciprocal's
// range; other data take the division (gen_fractions_kernel).
// In float (one Newton step) the range is 2^-100 .. 2^100, where the
// reciprocals, their sums and the means stay normal floats.
template <class T> __host__ __device__ constexpr double beta_recip_min() { return sizeof(T) == 4 ? 0x1p-100 : 0x1p-900; }
template <class T> __host__ __device__ constexpr double beta_recip_max() { return sizeof(T) == 4 ? 0x1p+100 : 0x1p+900; }
__device__ __forceinline__ double beta_face(double wa, double wb)
{
    return __dmul_rn(2.0, recip_newton(__dadd_rn(wa, wb)));
}
__device__ __forceinline__ float beta_face(float wa, float wb)
{
    const float s = __fadd_rn(wa, wb);
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(s));
    r = __fmaf_rn(r, __fmaf_rn(-s, r, 1.0f), r);
    return __fmul_rn(2.0f, r);
}

// The six face fractions (GenPoint's order) of a point q away from the box
// faces: from beta's reciprocals bw (wzl, wc, wzh: those of the points below,
// at and above q, which the callers hold), or the stored fx .. fz.
template <class T>
__device__ __forceinline__ void beta_faces(const T *__restrict__ bw, int64_t q, int64_t sy, T wzl, T wc, T wzh,
                                           T (&fr)[6])
{
    fr[0] = beta_face(__ldg(bw + q - 1), wc);
    fr[1] = beta_face(wc, __ldg(bw + q + 1));
    fr[2] = beta_face(__ldg(bw + q - sy), wc);
    fr[3] = beta_face(wc, __ldg(bw + q + sy));
    fr[4] = beta_face(wzl, wc);
    fr[5] = beta_face(wc, wzh);
}
template <class T> __device__ __forceinline__ void stored_faces(const Grid<T> &g, int64_t q, T (&fr)[6])
{
    fr[0] = __ldg(g.fx + q); fr[1] = __ldg(g.fx + q + 1);
    fr[2] = __ldg(g.fy + q); fr[3] = __ldg(g.fy + q + g.sy);
    fr[4] = __ldg(g.fz + q); fr[5] = __ldg(g.fz + q + g.sz);
}

// omega / the interior diagonal of a uniform level, rounded as the kernels
// form the diagonal (0 when the level is not uniform: then unused).
template <class T> static T interior_scale(const Grid<T> &g, T omega)
{
    if (!g.fast) return T(0);
    const T d = ((g.cx + g.cx) + (g.cy + g.cy)) + (g.cz + g.cz);
    return omega / d;
}

// Boundary terms of the right-hand side at a point: the ghost contributions
// of its Dirichlet and Neumann faces (what the neighbour sum would be if the
// interior were 0).  box_terms: the box's faces and the level's table
// alone, as the FFT's box problem takes them (its method refuses masks and
// beta; as a preconditioner the vector whose ghosts it reads, its output,
// is 0 there and at a mask's held points, so the general form's terms are
// 0 too).
template <class T>
__device__ __forceinline__ T box_terms(const Grid<T> &g, const T *__restrict__ u, int64_t p, int i, int j, int k)
{
    T s = T(0);
    if (i == 0 && g.dxl) s += g.gxl * u[p + g.oxl];
    if (i == g.nx - 1 && g.dxh) s += g.gxh * u[p + g.oxh];
    if (j == 0 && g.dyl) s += g.gyl * u[p + g.oyl];
    if (j == g.ny - 1 && g.dyh) s += g.gyh * u[p + g.oyh];
    if (g.is3d) {
        if (k == 0 && g.dzl) s += g.gzl * u[p + g.ozl];
        if (k == g.nz - 1 && g.dzh) s += g.gzh * u[p + g.ozh];
    }
    return s;
}
// In the general form they are the faces towards a box ghost with data and
// (where `held`) towards a Dirichlet point (the held value), with their
// fractions; 0 at a point that is not fluid.
template <class T>
__device__ __forceinline__ T boundary_terms(const Grid<T> &g, const T *__restrict__ u, int64_t p, int i, int j, int k,
                                            bool held = true)
{
    if (g.gen) {
        if (!gen_fluid(g, p)) return T(0);
        const GenPoint<T> q = gen_couplings(g, p, i, j, k);
        const bool ghost[6] = {i == 0 && g.dxl, i == g.nx - 1 && g.dxh, j == 0 && g.dyl, j == g.ny - 1 && g.dyh,
                               k == 0 && g.dzl, k == g.nz - 1 && g.dzh};
        T s = T(0);
#pragma unroll
        for (int f = 0; f < 6; ++f) {
            if (q.v[f] == T(0)) continue;
            const int64_t o = p + q.o[f];
            const bool in_box = !ghost[f] && (f < 4 || g.is3d);
            if (ghost[f] || (held && in_box && g.mk && (g.mk[o] & CELL_BITS) == PGPU_CELL_DIRICHLET)) s += q.v[f] * u[o];
        }
        return s;
    }
    return box_terms(g, u, p, i, j, k);
}

// The mean taken out of a singular problem's right-hand side, in two parts
// of u's precision: hi, the mean rounded, and lo, what that rounding left
// (0 in double).  f - hi is exact where f lies near the mean, so (f - hi) -
// lo is b to b's own rounding.  One part alone left half an ulp of the mean
// in every point, a constant outside A's range: the residual of a float
// problem whose mean is large against b (all-Neumann, f = 1540 + a few
// units) could not fall below it, and CG with the FFT preconditioner
// stalled at 26 times ||b||.  `shift` in the kernels is this pair, read
// from a device array of two (load_shift: none, 0).
template <class T> struct Shift {
    T hi, lo;
    __host__ __device__ __forceinline__ T of(T v) const { return (v - hi) - lo; }
    template <class A> __device__ __forceinline__ A of_as(T v) const { return (A(v) - A(hi)) - A(lo); }
};
template <class T> __device__ __forceinline__ Shift<T> load_shift(const T *p)
{
    return p ? Shift<T>{p[0], p[1]} : Shift<T>{};
}
// The pair for a mean m formed in double; store_shift writes it.
template <class T> __device__ __forceinline__ Shift<T> shift_of(double m)
{
    const T hi = T(m);
    return Shift<T>{hi, T(m - (double)hi)};
}
template <class T> __device__ __forceinline__ void store_shift(T *p, double m)
{
    p[0] = T(m);
    p[1] = shift_of<T>(m).lo;
}

// The column walk shared by the Jacobi sweep, the residual and the Krylov
// methods' operator.  For each plane k in [k0, k1) of column (i, j) it calls
//     emit(p, centre, rhs, diag, uniform)
// with p the element index of the point, centre = u there, rhs = (f - shift)
// + the neighbour sum (the neighbour sum alone, f not read, where
// Emit::reads_f is false), diag the diagonal, all in the arithmetic A; `uniform`
// (a compile-time constant after inlining) says that diag is the column's
// value on the fast range, announced once by emit.uniform_diag(diag,
// interior) before it (interior: the column touches no x/y face, so diag is
// the level's interior diagonal), so the caller may use a reciprocal it
// computed there.
// Planes 1..nz-2 of a level with g.fast run in groups of G (walk_launch
// gives each thread one group): the G+2 column values and G values of f a
// group needs are all loaded before it computes, so they are in flight
// together; x/y neighbours are the neighbouring threads' column values and
// come from L1.  The remaining planes (the first, the last, a short tail)
// take the table form, which handles ghosts, wrapped planes and non-uniform
// coefficients.  MK (walk_masked), a kernel's template argument so that the
// box's kernels keep their registers: WALK_MASK (a uniform level with a mask
// and no face fractions) groups too, a point with a nonzero mask byte is
// skipped where it is no unknown and otherwise drops its closed faces
// (drop_closed); WALK_FRAC (a level whose table is uniform under face
// fractions, Grid::frfast) groups with the general form's couplings
// (gen_faces, gen_sum: the table's values, the same bits as the plane-wise
// form), the fractions read at the point or, in columns off the x / y faces
// of level 0 with Grid::bw, formed from beta's reciprocals; WALK_BETA the
// same on a level without a mask (beta alone), with no mask byte read.
enum { WALK_PLAIN, WALK_MASK, WALK_FRAC, WALK_BETA }; // column_walk's MK
template <class T, class A, int G, int MK, class Emit>
__device__ __forceinline__ void column_walk(const Grid<T> &g, const T *__restrict__ u, const T *__restrict__ f,
                                            int i, int j, int k0, int k1, Shift<T> shift, Emit &emit)
{
    const int64_t sz = g.sz;
    const int64_t col = g.base + i + (int64_t)j * g.sy;
    int kg0 = k1, kg1 = k1; // the grouped range [kg0, kg1)
    if (MK >= WALK_FRAC ? g.frfast : g.fast) {
        const int a = max(k0, 1), b = min(k1, g.nz - 1);
        if (b - a >= G) {
            kg0 = a;
            kg1 = a + (b - a) / G * G;
        }
    }
    // (Each part takes its own column coefficients, so that nothing of the
    // table form stays live in registers across the fast loop.)
    auto general = [&](int k) {
        const int64_t p = col + (int64_t)k * sz;
        const T *s = u + p;
        if (g.gen && !gen_fluid(g, p)) { // not an unknown: left as it is
            emit.skip(p, s[0]);
            return;
        }
        A diag;
        const A off = stencil_off<A>(g, s, p, i, j, k, diag);
        if constexpr (Emit::reads_f) emit(p, A(s[0]), shift.template of_as<A>(f[p]) + off, diag, false);
        else emit(p, A(s[0]), off, diag, false);
    };
    for (int k = k0; k < kg0; ++k) general(k);
    if constexpr (MK >= WALK_FRAC) {
        if (kg0 < kg1) {
            const ColXY<T> c = col_xy(g, i, j);
            const int64_t o[4] = {c.nxl, c.nxh, c.nyl, c.nyh};
            const T d[4] = {g.cxl[i], g.cxh[i], g.cyl[j], g.cyh[j]};
            const bool lean = Tune<T>::beta_reciprocals && g.bw && i > 0 && i < g.nx - 1 && j > 0 && j < g.ny - 1;
            constexpr int GF = 2; // planes per group (G's registers spilled here)
            static_assert(G % GF == 0, "the grouped range is a multiple of G");
            for (int64_t p = col + (int64_t)kg0 * sz, k = kg0; k < kg1; k += GF, p += GF * sz) {
                const T *s = u + p, *fp = f + p;
                T zw[GF + 2], fw[GF], ww[GF + 2]; // planes k-1 .. k+GF of u and 1 / beta; f at k .. k+GF-1
                unsigned cw[GF];
#pragma unroll
                for (int q = 0; q < GF + 2; ++q) zw[q] = s[(q - 1) * sz];
#pragma unroll
                for (int q = 0; q < GF; ++q) fw[q] = Emit::reads_f ? fp[q * sz] : T(0);
#pragma unroll
                for (int q = 0; q < GF; ++q) cw[q] = MK == WALK_FRAC && g.mk ? g.mk[p + q * sz] : 0u;
                if (lean) {
#pragma unroll
                    for (int q = 0; q < GF + 2; ++q) ww[q] = __ldg(g.bw + p + (q - 1) * sz);
                }
#pragma unroll
                for (int q = 0; q < GF; ++q) {
                    const int64_t pq = p + q * sz;
                    if ((cw[q] & CELL_BITS) != PGPU_CELL_FLUID) {
                        emit.skip(pq, zw[q + 1]);
                        continue;
                    }
                    GenPoint<T> gp;
                    gp.v[0] = c.vxl; gp.v[1] = c.vxh; gp.v[2] = c.vyl; gp.v[3] = c.vyh;
#pragma unroll
                    for (int a = 0; a < 4; ++a) gp.d[a] = d[a];
                    gp.v[4] = gp.d[4] = g.czl[k + q];
                    gp.v[5] = gp.d[5] = g.czh[k + q];
                    T fr[6];
                    if (lean) beta_faces(g.bw, pq, g.sy, ww[q], ww[q + 1], ww[q + 2], fr);
                    else stored_faces(g, pq, fr);
                    gen_faces(gp, fr, cw[q] >> CLOSED_SHIFT);
                    const T *sq = s + q * sz;
                    A dq;
                    const A off = gen_sum<A>(gp, [&](int fc) {
                        return fc < 4 ? sq[o[fc]] : zw[fc == 4 ? q : q + 2];
                    }, dq);
                    if constexpr (Emit::reads_f) emit(pq, A(zw[q + 1]), shift.template of_as<A>(fw[q]) + off, dq, false);
                    else emit(pq, A(zw[q + 1]), off, dq, false);
                }
            }
        }
    } else if (kg0 < kg1) {
        const bool x0 = i == 0, x1 = i == g.nx - 1, y0 = j == 0, y1 = j == g.ny - 1;
        T vxl, vxh, vyl, vyh;
        A dxy;
        uniform_xy(g, x0, x1, y0, y1, vxl, vxh, vyl, vyh, dxy);
        const int nxl = x0 ? (int)g.oxl : -1, nxh = x1 ? (int)g.oxh : 1;
        const int nyl = y0 ? (int)g.oyl : -(int)g.sy, nyh = y1 ? (int)g.oyh : (int)g.sy;
        const T cz = g.cz;
        const A diag = dxy + (A(cz) + A(cz));
        emit.uniform_diag(diag, !x0 && !x1 && !y0 && !y1);
        // Without a periodic x axis the x neighbours are always the adjacent
        // elements (ghosts at the faces): constant offsets, no address math.
        auto groups = [&](auto x_adjacent) {
            constexpr bool adj = decltype(x_adjacent)::value;
            for (int64_t p = col + (int64_t)kg0 * sz, k = kg0; k < kg1; k += G, p += G * sz) {
                const T *s = u + p, *fp = f + p;
                T zw[G + 2], fw[G]; // planes k-1 .. k+G of the column; f at k .. k+G-1
                unsigned cw[G];     // mask bytes at k .. k+G-1
#pragma unroll
                for (int q = 0; q < G + 2; ++q) zw[q] = s[(q - 1) * sz];
#pragma unroll
                for (int q = 0; q < G; ++q) fw[q] = Emit::reads_f ? fp[q * sz] : T(0);
#pragma unroll
                for (int q = 0; q < G; ++q) cw[q] = MK ? g.mk[p + q * sz] : 0u;
#pragma unroll
                for (int q = 0; q < G; ++q) {
                    const T *sq = s + q * sz;
                    T nb[6] = {sq[adj ? -1 : nxl], sq[adj ? 1 : nxh], sq[nyl], sq[nyh], zw[q], zw[q + 2]};
                    A dq = diag;
                    if (MK && cw[q] != 0u) {
                        if ((cw[q] & CELL_BITS) != PGPU_CELL_FLUID) {
                            emit.skip(p + q * sz, zw[q + 1]);
                            continue;
                        }
                        const T d[6] = {g.cxl[i], g.cxh[i], g.cyl[j], g.cyh[j], cz, cz};
                        dq = drop_closed<A>(cw[q] >> CLOSED_SHIFT, d, nb);
                    }
                    const A off = neighbours<A>(vxl, nb[0], vxh, nb[1], vyl, nb[2], vyh, nb[3], cz, nb[4], cz, nb[5]);
                    const bool uni = !MK || cw[q] == 0u;
                    if constexpr (Emit::reads_f) emit(p + q * sz, A(zw[q + 1]), shift.template of_as<A>(fw[q]) + off, dq, uni);
                    else emit(p + q * sz, A(zw[q + 1]), off, dq, uni);
                }
            }
        };
        if (g.px) groups(std::false_type{});
        else groups(std::true_type{});
    }
    for (int k = kg1; k < k1; ++k) general(k);
}

// Calls fn with column_walk's MK for level g as a compile-time constant:
// WALK_FRAC where the table is uniform under face fractions (WALK_BETA where
// the level has no mask), WALK_MASK on a uniform level with a mask (no
// fractions), else WALK_PLAIN.
template <class T, class F> static void walk_masked(const Grid<T> &g, F &&fn)
{
    if (g.frfast && !g.mk) fn(std::integral_constant<int, WALK_BETA>{});
    else if (g.frfast) fn(std::integral_constant<int, WALK_FRAC>{});
    else if (g.fast && g.mk) fn(std::integral_constant<int, WALK_MASK>{});
    else fn(std::integral_constant<int, WALK_PLAIN>{});
}

// ---- the residual ----
// Three numbers per point reduce (reduce.h): two sums and a maximum.
struct Red3 {
    double s0, s1, m;
};

// The residual is formed in double whatever the precision: f - A u nearly
// cancels once u is close to the solution, and in float the rounding of the
// sum (eps diag |u|) would then be all the residual holds, limiting the
// solution's accuracy to about eps times the condition number instead of
// float's rounding of u.  The products of float values are exact in double;
// the kernels stay memory-bound.
template <class R, bool WRITE, bool REDUCE> struct ResidualEmit {
    static constexpr bool reads_f = true;
    R *r;
    Red3 *acc;
    __device__ void uniform_diag(double, bool) {}
    __device__ void skip(int64_t p, R)
    {
        if (WRITE) r[p] = R(0);
    }
    __device__ void operator()(int64_t p, double centre, double rhs, double diag, bool)
    {
        const double res = point_res(rhs, diag, centre);
        if (WRITE) r[p] = R(res);
        if (REDUCE) {
            acc->s0 += res;
            acc->s1 += res * res;
            const double aa = fabs(res);
            acc->m = (aa >= acc->m || aa != aa) ? aa : acc->m;
        }
    }
};

__device__ __forceinline__ void write_partial(double *partials, Red3 v); // reduce.h

// Residual r = b + off - diag * u with b = f - shift (shiftp may be NULL).
// WRITE stores r in the layout of u, in the precision R (the multigrid
// restriction reads it; PGPU_MIXED rounds it into its float problem);
// REDUCE sums r, r^2 and max |r| into block partials (the norm, the mean).
template <class T, bool WRITE, bool REDUCE, class R = T, int MK = WALK_PLAIN>
__global__ void __launch_bounds__(WALK_THREADS, REDUCE ? Tune<T>::norm_blocks : Tune<T>::walk_blocks)
    residual_kernel(const Grid<T> g, const T *__restrict__ u, const T *__restrict__ f,
                    const T *__restrict__ shiftp, R *__restrict__ r, double *partials, int kchunk, int nyb,
                    int nchunks)
{
    int i, j, k0, k1;
    Red3 acc{0, 0, 0};
    if (walk_thread(g.nx, g.ny, g.nz, kchunk, nyb, nchunks, i, j, k0, k1)) {
        const Shift<T> shift = load_shift(shiftp);
        ResidualEmit<R, WRITE, REDUCE> emit{r, &acc};
        column_walk<T, double, Tune<T>::walk_group, MK>(g, u, f, i, j, k0, k1, shift, emit);
    }
    if (REDUCE) write_partial(partials, acc);
}

} // namespace pgpu
