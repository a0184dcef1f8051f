/* test_odi.cu -- the operator-dependent coarsening (src/odi.h) against the
 * host.
 *
 * For each grid below and each precision, a V-cycle handle takes a beta
 * that jumps (a ball of 1e3 at the centre, times a random factor in
 * [0.5, 2] at every point); every level pair must then take the
 * operator-dependent transfers into a Galerkin level (the grids keep nodes
 * on every coarsened axis).  Four of the grids take the same beta again
 * with a mask (pgpu_set_mask before pgpu_set_coefficients in one precision,
 * after it in the other): a ball of solid cells off the centre, Dirichlet
 * cells on the top planes along y (a free surface), and isolated Dirichlet
 * and solid cells at random fluid points; fluid that no path through fluid
 * points joins to a Dirichlet point or face turns Dirichlet (no singular
 * region).  On a level with a mask (level 0) the transfers and the
 * Galerkin build see the operator on the fluid points alone: a Dirichlet
 * or solid point has no row (its 27 entries and its sum 0) and P e is 0
 * there; a fluid point's face towards a solid point couples nothing, and
 * one towards a Dirichlet point is a wall, its coupling in the row's sum
 * alone, as at a Dirichlet box face.  For every pair, on random data, with
 * the fine level's rows from the host (level 0: the table couplings of the
 * host axes times the downloaded face fractions, under that rule with the
 * cell types of the level's mask bytes; a Galerkin level: its downloaded
 * slots):
 *  - the prolongation, staged and collapsed as odi.h says (the positive
 *    parts of the collapsed couplings), recomputed on the host, each stage
 *    from the device's values of the stage before:
 *    |gpu - host| <= tol * max |e|, exactly 0 at the non-fluid points;
 *  - out = in + P e from random in keeps in's value at the non-fluid points
 *    bit for bit, and |out - (in + P e)| <= tol (1 + max |e|) elsewhere;
 *  - the restriction is its adjoint weighted by the cell volumes:
 *    sum_fine W (P e) r = sum_coarse Wc e (R r), to tol times the sum of
 *    the magnitudes of the terms;
 *  - the coarse operator is Galerkin's: sum_coarse Wc y (A_c x) =
 *    sum_fine W (P y) (A P x) for random x and y, A_c from the coarse
 *    level's slots, A from the fine level's rows, both on the host, to tol
 *    times the sum of the magnitudes (the entries of A_c reach 1e3 times
 *    the others');
 *  - on a Neumann box P keeps constants: P 1 = 1;
 *  - level 0's one-pass P and R give the same values bit for bit whatever
 *    chunks of planes their blocks walk;
 *  - the ghosts and padding of every array written come back bit for bit
 *    (NaN where nothing may be read).
 * tol: 1e-13 in double, 64 FLT_EPSILON in float (values stored in float
 * between the stages; the Galerkin identity 1e-11 / 2e-4: A_c's entries are
 * sums of many rounded terms).
 */
#include "../whitebox.h"

namespace wb_mg_odi {

typedef struct odi_case {
    const char *name;
    int n[3];
    double h[3];
    const char *bcs;
} odi_case;

static const odi_case cases[] = {
    {"3D 33x31x29 Dirichlet", {33, 31, 29}, {0.03, 0.03, 0.03}, "DDDDDD"},
    {"3D 32x30x34 Dirichlet (even: kept nodes, a node next to the high wall)", {32, 30, 34}, {0.03, 0.03, 0.03},
     "DDDDDD"},
    {"3D 31x15x31 Neumann box", {31, 15, 31}, {0.03, 0.03, 0.03}, "NNNNNN"},
    {"3D 34x15x31 mixed, anisotropic", {34, 15, 31}, {0.02, 0.05, 0.03}, "DDNNND"},
    {"3D 31x31x15 hz = 4 hx (semicoarsening)", {31, 31, 15}, {0.01, 0.01, 0.04}, "DDNNDD"},
    {"2D 63x31 mixed", {63, 31, 1}, {0.015, 0.02, 0.0}, "DNND"},
    {"2D 64x31 Dirichlet / Neumann", {64, 31, 1}, {0.02, 0.02, 0.0}, "DDNN"},
    {"3D 63x63x63 Dirichlet (four Galerkin levels from Galerkin levels)", {63, 63, 63}, {0.015, 0.015, 0.015},
     "DDDDDD"},
    {"3D 111x111x111 Dirichlet", {111, 111, 111}, {0.009, 0.009, 0.009}, "DDDDDD"},
};

/* The masked cases (the mask: make_mask): grids of the list above. */
static const odi_case masked_cases[] = {
    {"3D 33x31x29 Dirichlet, masked", {33, 31, 29}, {0.03, 0.03, 0.03}, "DDDDDD"},
    {"3D 32x30x34 Dirichlet (even), masked", {32, 30, 34}, {0.03, 0.03, 0.03}, "DDDDDD"},
    {"2D 63x31 mixed, masked", {63, 31, 1}, {0.015, 0.02, 0.0}, "DNND"},
    {"3D 34x15x31 mixed, anisotropic, masked", {34, 15, 31}, {0.02, 0.05, 0.03}, "DDNNND"},
};

static int odi_pairs = 0, masked_pairs = 0;

template <class T> static double tol_of() { return sizeof(T) == sizeof(float) ? 64.0 * FLT_EPSILON : 1e-13; }

/* Host copy of a level's layout and its interior index helper. */
struct Lay {
    int n[3];
    int is3d;
    int64_t sy, sz, base, elems;
    int64_t at(int i, int j, int k) const { return base + i + (int64_t)j * sy + (is3d ? (int64_t)k * sz : 0); }
};
template <class T> static Lay lay_of(const pgpu::Level<T> &L)
{
    Lay y;
    y.n[0] = L.g.nx;
    y.n[1] = L.g.ny;
    y.n[2] = L.g.is3d ? L.g.nz : 1;
    y.is3d = L.g.is3d;
    y.sy = L.g.sy;
    y.sz = L.g.sz;
    y.base = L.g.base;
    y.elems = L.elems;
    return y;
}

template <class T> static std::vector<T> download(const T *d, int64_t n)
{
    std::vector<T> h((size_t)n);
    if (!t_dev_download(h.data(), d, (size_t)n * sizeof(T))) h.assign((size_t)n, T(NAN));
    return h;
}

/* Fine node i's coarse interior index where it is a coarse node, else -1
 * (positions, independent of the library's table). */
static std::vector<int> node_map(const pgpu::Axis &a, const pgpu::Axis &c)
{
    std::vector<int> cn((size_t)a.n, -1);
    for (int i = 0; i < a.n; ++i)
        for (int I = 0; I < c.n; ++I)
            if (std::fabs(c.x[I] - a.x[i]) <= 1e-9 * a.h) cn[(size_t)i] = I;
    return cn;
}

template <class T>
static void test_pair(pgpu::Solver<T> *sol, const char *what, int l, bool neumann_box)
{
    pgpu::Env &env = sol->env;
    const pgpu::Level<T> &F = sol->h.lv[(size_t)l], &C = sol->h.lv[(size_t)l + 1];
    const pgpu::Transfer<T> &x = F.down;
    const Lay f = lay_of(F), c = lay_of(C);
    const double tol = tol_of<T>();
    char pw[320];
    snprintf(pw, sizeof pw, "%s, levels %d-%d (%dx%dx%d -> %dx%dx%d)", what, l, l + 1, f.n[0], f.n[1], f.n[2], c.n[0],
             c.n[1], c.n[2]);
    if (!CHECK(x.odi, "%s: takes the operator-dependent transfers", pw)) return;
    ++odi_pairs;
    const pgpu::Axis *fa = sol->h.hl[(size_t)l].ax, *ca = sol->h.hl[(size_t)l + 1].ax;
    std::vector<int> cn[3];
    std::vector<double> clo[3], chi[3];
    for (int d = 0; d < 3; ++d) {
        cn[d] = d < 2 || f.is3d ? node_map(fa[d], ca[d]) : std::vector<int>(1, 0);
        const pgpu::AxisCoef ac = pgpu::axis_coef(fa[d]);
        clo[d] = ac.c_lo;
        chi[d] = ac.c_hi;
    }
    std::vector<T> fr[3], fst, cst;
    const bool fgal = F.gr.st != nullptr;
    /* a Galerkin level's slots as 27 arrays (2D stores the nine of offset 0
     * along z) */
    auto slots_of = [&](const pgpu::GalRows<T> &g, const Lay &y) {
        const int stored = pgpu::gal_stored(y.is3d != 0);
        const int64_t npts = (int64_t)y.n[0] * y.n[1] * y.n[2];
        const std::vector<T> h = download(g.st, (int64_t)stored * npts);
        std::vector<T> all((size_t)27 * y.elems, T(0));
        std::vector<char> seen((size_t)npts, 0); /* gal_index: one node each */
        for (int k = 0; k < y.n[2]; ++k)
            for (int j = 0; j < y.n[1]; ++j)
                for (int i = 0; i < y.n[0]; ++i) {
                    const int64_t at = pgpu::gal_index(g.pk, i, j, k);
                    if (at >= 0 && at < npts) seen[(size_t)at]++;
                    for (int q = 0; q < stored && at >= 0 && at < npts; ++q)
                        all[(size_t)((q + g.lo) * y.elems + y.at(i, j, k))] = h[(size_t)(q * npts + at)];
                }
        int64_t bad = 0;
        for (char c : seen) bad += c != 1;
        CHECK(bad == 0 && g.n == npts, "%s: the slots' index takes each of a level's %lld points once (%lld not)", pw,
              (long long)npts, (long long)bad);
        return all;
    };
    if (fgal) fst = slots_of(F.gr, f);
    if (!CHECK(C.gr.st != nullptr && C.gr.lo == (c.is3d ? 0 : 9), "%s: the coarse level is a Galerkin level", pw))
        return;
    cst = slots_of(C.gr, c);
    const T *dfr[3] = {F.g.fx, F.g.fy, F.g.fz};
    for (int d = 0; d < (f.is3d ? 3 : 2) && !fgal; ++d) {
        if (!CHECK(dfr[d] != nullptr, "%s: the level has face fractions along axis %d", pw, d)) return;
        fr[d] = download(dfr[d], f.elems);
    }
    /* the fine level's cell types where it has a mask (a 7-point level);
     * every point fluid otherwise */
    std::vector<uint8_t> fmk;
    if (!fgal && F.g.mk) {
        fmk.assign((size_t)f.elems, (uint8_t)PGPU_CELL_FLUID);
        if (!t_dev_download(fmk.data(), F.g.mk, (size_t)f.elems)) fmk.assign((size_t)f.elems, (uint8_t)PGPU_CELL_SOLID);
        ++masked_pairs;
    }
    auto type_of = [&](int64_t p) -> int {
        return fmk.empty() ? (int)PGPU_CELL_FLUID : (int)(fmk[(size_t)p] & pgpu::CELL_BITS);
    };
    /* the coupling of fine point (i, j, k) across face s (0 low, 1 high) of
     * axis d, as gen_couplings forms its diagonal part (a Neumann wall's 0) */
    auto coupling = [&](int d, int s, int i, int j, int k) -> double {
        const int at[3] = {i, j, k};
        const int64_t p = f.at(i, j, k), st[3] = {1, f.sy, f.sz};
        const T tab = (T)(s ? chi[d][(size_t)at[d]] : clo[d][(size_t)at[d]]);
        const T frac = fr[d][(size_t)(s ? p + st[d] : p)];
        return (double)(T)(tab * frac);
    };
    /* a row as odi.h reads it: slot (dx+1) + 3 (dy+1) + 9 (dz+1) the entry
     * towards that neighbour (0 beyond the box), the centre the row's sum;
     * on the 7-point level the operator on the fluid points alone: no row
     * at a non-fluid point, a face towards a solid point closed, one
     * towards a Dirichlet point a wall (its coupling in the sum) */
    auto row_of = [&](const Lay &y, const std::vector<T> &slots, bool seven, int i, int j, int k, double *a) {
        for (int q = 0; q < 27; ++q) a[q] = 0;
        if (!seven) {
            for (int q = 0; q < 27; ++q) a[q] = (double)slots[(size_t)(q * y.elems + y.at(i, j, k))];
            return;
        }
        const int64_t p = y.at(i, j, k), st[3] = {1, y.sy, y.sz};
        if (type_of(p) != PGPU_CELL_FLUID) return;
        const int at[3] = {i, j, k};
        for (int d = 0; d < (y.is3d ? 3 : 2); ++d)
            for (int sd = 0; sd < 2; ++sd) {
                const double cp = coupling(d, sd, i, j, k);
                const bool in = sd ? at[d] < y.n[d] - 1 : at[d] > 0;
                int o[3] = {0, 0, 0};
                o[d] = sd ? 1 : -1;
                const int nt = in ? type_of(p + o[d] * st[d]) : (int)PGPU_CELL_DIRICHLET;
                if (nt == PGPU_CELL_FLUID) a[(o[0] + 1) + 3 * (o[1] + 1) + 9 * (o[2] + 1)] = -cp;
                else if (nt == PGPU_CELL_DIRICHLET) a[13] += cp;
            }
    };
    auto stage_of = [&](int i, int j, int k) {
        return (cn[0][(size_t)i] < 0) + (cn[1][(size_t)j] < 0) + (f.is3d && cn[2][(size_t)k] < 0);
    };
    /* (A v) on a level's interior from its rows, in differences */
    auto apply = [&](const Lay &y, const std::vector<T> &slots, bool seven, const std::vector<double> &v,
                     std::vector<double> &out) {
        out.assign((size_t)y.elems, 0.0);
        for (int k = 0; k < y.n[2]; ++k)
            for (int j = 0; j < y.n[1]; ++j)
                for (int i = 0; i < y.n[0]; ++i) {
                    double a[27];
                    row_of(y, slots, seven, i, j, k, a);
                    const int64_t p = y.at(i, j, k);
                    double sum = a[13] * v[(size_t)p];
                    for (int q = 0; q < 27; ++q) {
                        if (q == 13 || a[q] == 0) continue;
                        const int o[3] = {q % 3 - 1, q / 3 % 3 - 1, q / 9 - 1};
                        sum += a[q] * (v[(size_t)y.at(i + o[0], j + o[1], k + o[2])] - v[(size_t)p]);
                    }
                    out[(size_t)p] = sum;
                }
    };
    /* random e on the coarse interior (ghosts 0); P e into out (NaN outside
     * the interior), in = 0 inside, NaN outside */
    std::vector<T> e((size_t)c.elems, T(0)), in((size_t)f.elems, T(NAN)), out0((size_t)f.elems, T(NAN));
    double emax = 0;
    for (int k = 0; k < c.n[2]; ++k)
        for (int j = 0; j < c.n[1]; ++j)
            for (int i = 0; i < c.n[0]; ++i) {
                const double v = neumann_box ? 1.0 : t_rand(-1.0, 1.0);
                e[(size_t)c.at(i, j, k)] = (T)v;
                emax = std::max(emax, std::fabs(v));
            }
    for (int k = 0; k < f.n[2]; ++k)
        for (int j = 0; j < f.n[1]; ++j)
            for (int i = 0; i < f.n[0]; ++i) in[(size_t)f.at(i, j, k)] = T(0);
    T *d_e = (T *)t_dev_upload(e.data(), e.size() * sizeof(T));
    T *d_in = (T *)t_dev_upload(in.data(), in.size() * sizeof(T));
    T *d_out = (T *)t_dev_upload(out0.data(), out0.size() * sizeof(T));
    x.odi_prolong(env, d_e, d_in, d_out);
    const std::vector<T> pe = download(d_out, f.elems);
    /* the host's stages from the device's values of the stage before */
    double worst = 0, worst_one = 0;
    int64_t outside = 0, by_stage[4] = {0, 0, 0, 0}, nonfluid = 0, nonzero = 0;
    for (int k = 0; k < f.n[2]; ++k)
        for (int j = 0; j < f.n[1]; ++j)
            for (int i = 0; i < f.n[0]; ++i) {
                const int s = stage_of(i, j, k), at[3] = {i, j, k};
                const int cc[3] = {cn[0][(size_t)i], cn[1][(size_t)j], f.is3d ? cn[2][(size_t)k] : 0};
                double want;
                if (type_of(f.at(i, j, k)) != PGPU_CELL_FLUID) {
                    want = 0.0; /* no row: P is 0 there */
                    ++nonfluid;
                } else if (s == 0) {
                    want = (double)e[(size_t)c.at(cc[0], cc[1], cc[2])];
                } else {
                    double a[27], w[27] = {0}, num = 0, den;
                    row_of(f, fst, !fgal, i, j, k, a);
                    for (int q = 0; q < 27; ++q) {
                        if (q == 13) continue;
                        int o[3] = {q % 3 - 1, q / 3 % 3 - 1, q / 9 - 1};
                        for (int d = 0; d < 3; ++d)
                            if (cc[d] >= 0) o[d] = 0; /* collapsed onto the between-axes */
                        w[(o[0] + 1) + 3 * (o[1] + 1) + 9 * (o[2] + 1)] -= a[q];
                    }
                    den = std::max(a[13], 0.0);
                    for (int q = 0; q < 27; ++q) {
                        if (q == 13 || !(w[q] > 0)) continue; /* the positive part */
                        const int o[3] = {q % 3 - 1, q / 3 % 3 - 1, q / 9 - 1};
                        num += w[q] * (double)pe[(size_t)f.at(at[0] + o[0], at[1] + o[1], at[2] + o[2])];
                        den += w[q];
                    }
                    want = den > 0 ? num / den : 0.0;
                }
                ++by_stage[s];
                const double got = (double)pe[(size_t)f.at(i, j, k)];
                if (type_of(f.at(i, j, k)) != PGPU_CELL_FLUID && got != 0.0) ++nonzero;
                worst = t_max_nan(worst, std::fabs(got - want) / (tol * (emax > 0 ? emax : 1.0)));
                if (neumann_box) worst_one = t_max_nan(worst_one, std::fabs(got - 1.0) / tol);
            }
    {
        std::vector<char> interior((size_t)f.elems, 0);
        for (int k = 0; k < f.n[2]; ++k)
            for (int j = 0; j < f.n[1]; ++j)
                for (int i = 0; i < f.n[0]; ++i) interior[(size_t)f.at(i, j, k)] = 1;
        for (int64_t q = 0; q < f.elems; ++q)
            if (!interior[(size_t)q] && !std::isnan((double)pe[(size_t)q])) ++outside;
    }
    CHECK(worst <= 1.0 && outside == 0 && nonzero == 0,
          "%s: prolongation against the host's stages (%lld %lld %lld %lld points a stage): max |gpu - host| / "
          "(tol max |e|) = %.3g, %lld of %lld non-fluid points not 0, %lld elements outside the interior written",
          pw, (long long)by_stage[0], (long long)by_stage[1], (long long)by_stage[2], (long long)by_stage[3], worst,
          (long long)nonzero, (long long)nonfluid, (long long)outside);
    if (neumann_box)
        CHECK(worst_one <= 4.0, "%s: P 1 = 1 on a Neumann box: max |P 1 - 1| / tol = %.3g", pw, worst_one);
    /* out = in + P e from random in inside (NaN outside): in's value bit for
     * bit at the non-fluid points, in + P e (the first call's) elsewhere */
    {
        std::vector<T> in2 = in;
        for (int k = 0; k < f.n[2]; ++k)
            for (int j = 0; j < f.n[1]; ++j)
                for (int i = 0; i < f.n[0]; ++i) in2[(size_t)f.at(i, j, k)] = (T)t_rand(-1.0, 1.0);
        T *d_in2 = (T *)t_dev_upload(in2.data(), in2.size() * sizeof(T));
        T *d_o2 = (T *)t_dev_upload(out0.data(), out0.size() * sizeof(T));
        x.odi_prolong(env, d_e, d_in2, d_o2);
        const std::vector<T> o2 = download(d_o2, f.elems);
        std::vector<char> interior((size_t)f.elems, 0);
        int64_t kept = 0, held = 0, outside2 = 0;
        double worst2 = 0;
        for (int k = 0; k < f.n[2]; ++k)
            for (int j = 0; j < f.n[1]; ++j)
                for (int i = 0; i < f.n[0]; ++i) {
                    const int64_t p = f.at(i, j, k);
                    interior[(size_t)p] = 1;
                    if (type_of(p) != PGPU_CELL_FLUID) {
                        ++held;
                        kept += memcmp(&o2[(size_t)p], &in2[(size_t)p], sizeof(T)) == 0;
                        continue;
                    }
                    const double want = (double)in2[(size_t)p] + (double)pe[(size_t)p];
                    worst2 = t_max_nan(worst2, std::fabs((double)o2[(size_t)p] - want) / (tol * (1.0 + emax)));
                }
        for (int64_t q = 0; q < f.elems; ++q)
            if (!interior[(size_t)q] && !std::isnan((double)o2[(size_t)q])) ++outside2;
        CHECK(kept == held && worst2 <= 1.0 && outside2 == 0,
              "%s: out = in + P e from random in: in kept bit for bit at %lld of %lld non-fluid points, max |out - "
              "(in + P e)| / (tol (1 + max |e|)) = %.3g at the fluid ones, %lld elements outside the interior written",
              pw, (long long)kept, (long long)held, worst2, (long long)outside2);
        t_dev_free(d_in2);
        t_dev_free(d_o2);
    }

    /* the restriction: random r inside, NaN outside; fc NaN everywhere */
    std::vector<T> r((size_t)f.elems, T(NAN)), fc0((size_t)c.elems, T(NAN));
    for (int k = 0; k < f.n[2]; ++k)
        for (int j = 0; j < f.n[1]; ++j)
            for (int i = 0; i < f.n[0]; ++i) r[(size_t)f.at(i, j, k)] = (T)t_rand(-1.0, 1.0);
    T *d_r = (T *)t_dev_upload(r.data(), r.size() * sizeof(T));
    T *d_fc = (T *)t_dev_upload(fc0.data(), fc0.size() * sizeof(T));
    x.odi_restrict(env, d_r, d_fc);
    const std::vector<T> rc = download(d_fc, c.elems);
    auto vol = [&](const pgpu::Axis *ax, const Lay &y, int i, int j, int k) {
        double w = ax[0].w[(size_t)i] * ax[1].w[(size_t)j];
        return y.is3d ? w * ax[2].w[(size_t)k] : w;
    };
    double lhs = 0, rhs = 0, mag = 0;
    for (int k = 0; k < f.n[2]; ++k)
        for (int j = 0; j < f.n[1]; ++j)
            for (int i = 0; i < f.n[0]; ++i) {
                const int64_t p = f.at(i, j, k);
                const double t = vol(fa, f, i, j, k) * (double)pe[(size_t)p] * (double)r[(size_t)p];
                lhs += t;
                mag += std::fabs(t);
            }
    int64_t coutside = 0;
    {
        std::vector<char> interior((size_t)c.elems, 0);
        for (int k = 0; k < c.n[2]; ++k)
            for (int j = 0; j < c.n[1]; ++j)
                for (int i = 0; i < c.n[0]; ++i) {
                    const int64_t q = c.at(i, j, k);
                    interior[(size_t)q] = 1;
                    const double t = vol(ca, c, i, j, k) * (double)e[(size_t)q] * (double)rc[(size_t)q];
                    rhs += t;
                    mag += std::fabs(t);
                }
        for (int64_t q = 0; q < c.elems; ++q)
            if (!interior[(size_t)q] && !std::isnan((double)rc[(size_t)q])) ++coutside;
    }
    const double rel = std::fabs(lhs - rhs) / (tol * mag);
    CHECK(rel <= 1.0 && coutside == 0,
          "%s: restriction, the volume-weighted adjoint: |sum W (P e) r - sum Wc e (R r)| / (tol sum of "
          "magnitudes) = %.3g (%.6g against %.6g), %lld coarse elements outside the interior written",
          pw, rel, lhs, rhs, (long long)coutside);
    /* level 0's one-pass transfers walk chunks of planes: any chunking (1,
     * 2 or 3 planes a chunk, so that chunks start on coarse planes and on
     * planes between them) gives the same values bit for bit */
    if (!fgal && f.is3d) {
        for (int kc = 1; kc <= 3; ++kc) {
            pgpu::Transfer<T> y = x;
            y.ot.kchunk = kc;
            y.ot.nchunks = (f.n[2] + kc - 1) / kc;
            pgpu::set_grid(y.ot, y.ot.grid.x);
            T *d_o = (T *)t_dev_upload(out0.data(), out0.size() * sizeof(T));
            T *d_c = (T *)t_dev_upload(fc0.data(), fc0.size() * sizeof(T));
            y.odi_prolong(env, d_e, d_in, d_o);
            y.odi_restrict(env, d_r, d_c);
            const std::vector<T> po = download(d_o, f.elems), co = download(d_c, c.elems);
            int64_t diff = 0;
            for (int64_t q = 0; q < f.elems; ++q) diff += memcmp(&po[(size_t)q], &pe[(size_t)q], sizeof(T)) != 0;
            for (int64_t q = 0; q < c.elems; ++q) diff += memcmp(&co[(size_t)q], &rc[(size_t)q], sizeof(T)) != 0;
            CHECK(diff == 0, "%s: chunks of %d planes: P e and R r the same bit for bit (%lld elements differ)", pw, kc,
                  (long long)diff);
            t_dev_free(d_o);
            t_dev_free(d_c);
        }
    }
    /* Galerkin: sum Wc y (A_c x) = sum W (P y) (A P x), x and y random, P on
     * the device */
    if (!neumann_box) {
        std::vector<double> px[2], cx[2];
        for (int v = 0; v < 2; ++v) {
            std::vector<T> xv((size_t)c.elems, T(0));
            cx[v].assign((size_t)c.elems, 0.0);
            for (int k = 0; k < c.n[2]; ++k)
                for (int j = 0; j < c.n[1]; ++j)
                    for (int i = 0; i < c.n[0]; ++i) {
                        const int64_t q = c.at(i, j, k);
                        xv[(size_t)q] = (T)t_rand(-1.0, 1.0);
                        cx[v][(size_t)q] = (double)xv[(size_t)q];
                    }
            T *d_x = (T *)t_dev_upload(xv.data(), xv.size() * sizeof(T));
            T *d_px = (T *)t_dev_upload(out0.data(), out0.size() * sizeof(T));
            T *d_z = (T *)t_dev_upload(in.data(), in.size() * sizeof(T));
            x.odi_prolong(env, d_x, d_z, d_px);
            const std::vector<T> h = download(d_px, f.elems);
            px[v].assign((size_t)f.elems, 0.0);
            for (int k = 0; k < f.n[2]; ++k)
                for (int j = 0; j < f.n[1]; ++j)
                    for (int i = 0; i < f.n[0]; ++i) px[v][(size_t)f.at(i, j, k)] = (double)h[(size_t)f.at(i, j, k)];
            t_dev_free(d_x);
            t_dev_free(d_px);
            t_dev_free(d_z);
        }
        std::vector<double> apx, acx;
        apply(f, fst, !fgal, px[0], apx);
        apply(c, cst, false, cx[0], acx);
        double gl = 0, gr = 0, gm = 0;
        for (int k = 0; k < f.n[2]; ++k)
            for (int j = 0; j < f.n[1]; ++j)
                for (int i = 0; i < f.n[0]; ++i) {
                    const int64_t p = f.at(i, j, k);
                    const double t = vol(fa, f, i, j, k) * px[1][(size_t)p] * apx[(size_t)p];
                    gl += t;
                    gm += std::fabs(t);
                }
        for (int k = 0; k < c.n[2]; ++k)
            for (int j = 0; j < c.n[1]; ++j)
                for (int i = 0; i < c.n[0]; ++i) {
                    const int64_t q = c.at(i, j, k);
                    const double t = vol(ca, c, i, j, k) * cx[1][(size_t)q] * acx[(size_t)q];
                    gr += t;
                    gm += std::fabs(t);
                }
        const double gtol = sizeof(T) == sizeof(float) ? 2e-4 : 1e-11;
        CHECK(std::fabs(gl - gr) <= gtol * gm,
              "%s: the Galerkin operator: |sum W (P y) (A P x) - sum Wc y (A_c x)| / sum of magnitudes = %.3g "
              "(bound %.1g; %.6g against %.6g)",
              pw, std::fabs(gl - gr) / gm, gtol, gl, gr);
    }
    /* the coarse level's residual and one Gauss-Seidel iteration (colours
     * in order, in place) against the host, from random u and f */
    {
        std::vector<T> u0((size_t)c.elems, T(NAN)), fv((size_t)c.elems, T(NAN)), nanv((size_t)c.elems, T(NAN));
        std::vector<double> ud((size_t)c.elems, 0.0);
        double umax = 0;
        for (int k = 0; k < c.n[2]; ++k)
            for (int j = 0; j < c.n[1]; ++j)
                for (int i = 0; i < c.n[0]; ++i) {
                    const int64_t q = c.at(i, j, k);
                    u0[(size_t)q] = (T)t_rand(-1.0, 1.0);
                    fv[(size_t)q] = (T)t_rand(-1.0, 1.0);
                    ud[(size_t)q] = (double)u0[(size_t)q];
                }
        T *d_u = (T *)t_dev_upload(u0.data(), u0.size() * sizeof(T));
        T *d_f = (T *)t_dev_upload(fv.data(), fv.size() * sizeof(T));
        T *d_res = (T *)t_dev_upload(nanv.data(), nanv.size() * sizeof(T));
        pgpu::Level<T> L = C;
        L.u = d_u;
        L.f = d_f;
        L.cur = 0;
        L.in_x = false;
        pgpu::residual(env, L, (const T *)d_u, d_res);
        std::vector<double> au;
        apply(c, cst, false, ud, au);
        const std::vector<T> res = download(d_res, c.elems);
        double rworst = 0, rmag = 0;
        for (int k = 0; k < c.n[2]; ++k)
            for (int j = 0; j < c.n[1]; ++j)
                for (int i = 0; i < c.n[0]; ++i) {
                    const int64_t q = c.at(i, j, k);
                    double a[27], m = std::fabs((double)fv[(size_t)q]);
                    row_of(c, cst, false, i, j, k, a);
                    for (int t = 0; t < 27; ++t) m += std::fabs(a[t]) * 2.0; /* |a| (|u_q| + |u_p|), |u| <= 1 */
                    rworst = t_max_nan(rworst, std::fabs((double)res[(size_t)q] - ((double)fv[(size_t)q] - au[(size_t)q])) / m);
                    rmag = std::max(rmag, m);
                }
        CHECK(rworst <= tol, "%s: the Galerkin level's residual against the host: max |gpu - host| / (|f| + sum |a| "
              "(|u_q| + |u_p|)) = %.3g (tol %.1g)", pw, rworst, tol);
        (void)rmag;
        pgpu::smooth(env, L, false, 1, T(1), 0);
        const std::vector<T> us = download(d_u, c.elems);
        const int colours = c.is3d ? 8 : 4;
        for (int col = 0; col < colours; ++col)
            for (int k = col >> 2 & 1; k < c.n[2]; k += 2)
                for (int j = col >> 1 & 1; j < c.n[1]; j += 2)
                    for (int i = col & 1; i < c.n[0]; i += 2) {
                        const int64_t q = c.at(i, j, k);
                        double a[27];
                        row_of(c, cst, false, i, j, k, a);
                        double sum = (double)fv[(size_t)q] - a[13] * ud[(size_t)q], dg = a[13];
                        for (int t = 0; t < 27; ++t) {
                            if (t == 13 || a[t] == 0) continue;
                            const int o[3] = {t % 3 - 1, t / 3 % 3 - 1, t / 9 - 1};
                            sum -= a[t] * (ud[(size_t)c.at(i + o[0], j + o[1], k + o[2])] - ud[(size_t)q]);
                            dg -= a[t];
                        }
                        if (dg > 0) ud[(size_t)q] += sum / dg;
                        umax = std::max(umax, std::fabs(ud[(size_t)q]));
                    }
        double sworst = 0;
        int64_t swritten = 0;
        for (int64_t q = 0; q < c.elems; ++q) {
            const bool inside = !std::isnan((double)u0[(size_t)q]);
            if (!inside) {
                swritten += !std::isnan((double)us[(size_t)q]);
                continue;
            }
            sworst = t_max_nan(sworst, std::fabs((double)us[(size_t)q] - ud[(size_t)q]) / (umax > 1 ? umax : 1.0));
        }
        CHECK(sworst <= 16 * tol && swritten == 0,
              "%s: a Gauss-Seidel iteration on the Galerkin level against the host: max |gpu - host| / max(1, max |u|) = "
              "%.3g (bound %.1g), %lld ghosts written",
              pw, sworst, 16 * tol, (long long)swritten);
        t_dev_free(d_u);
        t_dev_free(d_f);
        t_dev_free(d_res);
    }
    t_dev_free(d_e);
    t_dev_free(d_in);
    t_dev_free(d_out);
    t_dev_free(d_r);
    t_dev_free(d_fc);
}

/* A masked case's mask (layout y, axes ax; fluid outside the interior):
 * Dirichlet cells on the top planes along y (a tenth of them, at least 2:
 * a free surface), below them a ball of solid cells of radius 0.15 of the
 * box about (0.28, 0.35, 0.7) of it (off the centre, across the edge of beta's
 * ball), then isolated Dirichlet and solid cells (a 500th and a 200th of
 * the points, at least 4 and 8) at random fluid points whose neighbours
 * are all fluid.  Fluid that no path through fluid points joins to a
 * Dirichlet point or face then turns Dirichlet, so that no region is
 * singular; *turned counts it. */
static std::vector<uint8_t> make_mask(const Lay &y, const pgpu::Axis *ax, int64_t *turned)
{
    std::vector<uint8_t> m((size_t)y.elems, (uint8_t)PGPU_CELL_FLUID);
    const int nd = y.is3d ? 3 : 2, top = std::max(2, y.n[1] / 10);
    const double centre[3] = {0.28, 0.35, 0.7};
    const int64_t st[3] = {1, y.sy, y.sz};
    for (int k = 0; k < y.n[2]; ++k)
        for (int j = 0; j < y.n[1]; ++j)
            for (int i = 0; i < y.n[0]; ++i) {
                const int at[3] = {i, j, k};
                double r2 = 0;
                for (int d = 0; d < nd; ++d) {
                    const double q = (ax[d].x[(size_t)at[d]] - ax[d].xlo) / (ax[d].xhi - ax[d].xlo) - centre[d];
                    r2 += q * q;
                }
                m[(size_t)y.at(i, j, k)] = (uint8_t)(j >= y.n[1] - top ? PGPU_CELL_DIRICHLET
                                                     : r2 < 0.15 * 0.15 ? PGPU_CELL_SOLID
                                                                        : PGPU_CELL_FLUID);
            }
    /* point at's neighbour across face s of axis d inside the box, or -1 */
    auto nb = [&](const int (&at)[3], int d, int s) -> int64_t {
        const int x = at[d] + (s ? 1 : -1);
        return x >= 0 && x < y.n[d] ? y.at(at[0], at[1], at[2]) + (s ? st[d] : -st[d]) : -1;
    };
    const int64_t npts = (int64_t)y.n[0] * y.n[1] * y.n[2];
    const int64_t count[2] = {std::max<int64_t>(4, npts / 500), std::max<int64_t>(8, npts / 200)};
    for (int t = 0; t < 2; ++t)
        for (int64_t placed = 0, tries = 0; placed < count[t] && tries < 100 * count[t]; ++tries) {
            int at[3] = {0, 0, 0};
            for (int d = 0; d < nd; ++d) at[d] = std::min(y.n[d] - 1, (int)t_rand(0.0, (double)y.n[d]));
            const int64_t p = y.at(at[0], at[1], at[2]);
            bool apart = m[(size_t)p] == PGPU_CELL_FLUID;
            for (int d = 0; d < nd; ++d)
                for (int s = 0; s < 2; ++s) {
                    const int64_t q = nb(at, d, s);
                    apart = apart && (q < 0 || m[(size_t)q] == PGPU_CELL_FLUID);
                }
            if (!apart) continue;
            m[(size_t)p] = (uint8_t)(t ? PGPU_CELL_SOLID : PGPU_CELL_DIRICHLET);
            ++placed;
        }
    /* the fluid joined to a Dirichlet point or face: from the fluid points
     * next to one, along fluid points */
    std::vector<char> held((size_t)y.elems, 0);
    std::vector<int64_t> todo; /* i + nx (j + ny k) */
    for (int k = 0; k < y.n[2]; ++k)
        for (int j = 0; j < y.n[1]; ++j)
            for (int i = 0; i < y.n[0]; ++i) {
                const int at[3] = {i, j, k};
                const int64_t p = y.at(i, j, k);
                if (m[(size_t)p] != PGPU_CELL_FLUID) continue;
                bool seed = false;
                for (int d = 0; d < nd; ++d)
                    for (int s = 0; s < 2; ++s) {
                        const int64_t q = nb(at, d, s);
                        seed = seed || (q < 0 ? (s ? ax[d].hi : ax[d].lo) == PGPU_BC_DIRICHLET
                                              : m[(size_t)q] == PGPU_CELL_DIRICHLET);
                    }
                if (!seed) continue;
                held[(size_t)p] = 1;
                todo.push_back(i + (int64_t)y.n[0] * (j + (int64_t)y.n[1] * k));
            }
    while (!todo.empty()) {
        const int64_t v = todo.back();
        todo.pop_back();
        const int at[3] = {(int)(v % y.n[0]), (int)(v / y.n[0] % y.n[1]), (int)(v / y.n[0] / y.n[1])};
        for (int d = 0; d < nd; ++d)
            for (int s = 0; s < 2; ++s) {
                const int64_t q = nb(at, d, s);
                if (q < 0 || held[(size_t)q] || m[(size_t)q] != PGPU_CELL_FLUID) continue;
                held[(size_t)q] = 1;
                int b[3] = {at[0], at[1], at[2]};
                b[d] += s ? 1 : -1;
                todo.push_back(b[0] + (int64_t)y.n[0] * (b[1] + (int64_t)y.n[1] * b[2]));
            }
    }
    *turned = 0;
    for (int k = 0; k < y.n[2]; ++k)
        for (int j = 0; j < y.n[1]; ++j)
            for (int i = 0; i < y.n[0]; ++i) {
                const int64_t p = y.at(i, j, k);
                if (m[(size_t)p] != PGPU_CELL_FLUID || held[(size_t)p]) continue;
                m[(size_t)p] = (uint8_t)PGPU_CELL_DIRICHLET;
                ++*turned;
            }
    return m;
}

/* One case: mask_order 0 without a mask, 1 the mask set before
 * pgpu_set_coefficients, 2 after it. */
template <class T> static void run_case(const odi_case *oc, int mask_order)
{
    const unsigned prec = sizeof(T) == sizeof(float) ? PGPU_FLOAT : PGPU_DOUBLE;
    pgpu_config cfg = t_config(oc->n[0], oc->n[1], oc->n[2], oc->bcs, oc->h[0], oc->h[1], oc->h[2],
                               PGPU_VCYCLE | prec);
    char what[200];
    snprintf(what, sizeof what, "%s %s%s", oc->name, t_precision_name(prec),
             mask_order == 1 ? " (mask set before beta)" : mask_order == 2 ? " (mask set after beta)" : "");
    pgpu_solver *s = t_create(&cfg, what);
    if (!s) return;
    pgpu::Solver<T> *sol = pgpu::solver_of<T>(s);
    const Lay y = lay_of(sol->h.lv[0]);
    /* beta: 1e3 in the ball of radius 0.3 of the box's centre, 1 outside,
     * times a random factor in [0.5, 2] at every element */
    std::vector<T> beta((size_t)y.elems, T(1));
    const pgpu::Axis *ax = sol->h.hl[0].ax;
    for (int k = 0; k < y.n[2]; ++k)
        for (int j = 0; j < y.n[1]; ++j)
            for (int i = 0; i < y.n[0]; ++i) {
                double r2 = 0;
                const int at[3] = {i, j, k};
                for (int d = 0; d < (y.is3d ? 3 : 2); ++d) {
                    const double L = ax[d].xhi - ax[d].xlo, q = (ax[d].x[(size_t)at[d]] - ax[d].xlo) / L - 0.5;
                    r2 += q * q;
                }
                beta[(size_t)y.at(i, j, k)] = (T)((r2 < 0.09 ? 1e3 : 1.0) * t_rand(0.5, 2.0));
            }
    void *d_beta = t_dev_upload(beta.data(), beta.size() * sizeof(T));
    uint8_t *d_mask = nullptr;
    bool ok = true;
    if (mask_order) {
        int64_t turned = 0;
        const std::vector<uint8_t> mask = make_mask(y, ax, &turned);
        int64_t count[4] = {0, 0, 0, 0};
        for (int k = 0; k < y.n[2]; ++k)
            for (int j = 0; j < y.n[1]; ++j)
                for (int i = 0; i < y.n[0]; ++i) ++count[mask[(size_t)y.at(i, j, k)] & pgpu::CELL_BITS];
        t_note("%s: the mask: %lld fluid, %lld Dirichlet (%lld of them fluid no Dirichlet point or face held), "
               "%lld solid points",
               what, (long long)count[PGPU_CELL_FLUID], (long long)count[PGPU_CELL_DIRICHLET], (long long)turned,
               (long long)count[PGPU_CELL_SOLID]);
        d_mask = (uint8_t *)t_dev_upload(mask.data(), mask.size());
        ok = d_mask != nullptr;
    }
    auto set_mask = [&]() {
        const pgpu_status ms = pgpu_set_mask(s, d_mask);
        return CHECK(ms == PGPU_SUCCESS, "%s: pgpu_set_mask: %s %s", what, pgpu_status_string(ms),
                     ms ? pgpu_last_error(s) : "");
    };
    if (ok && mask_order == 1) ok = set_mask();
    if (ok) {
        const pgpu_status st = pgpu_set_coefficients(s, d_beta);
        ok = CHECK(st == PGPU_SUCCESS, "%s: pgpu_set_coefficients: %s %s", what, pgpu_status_string(st),
                   st ? pgpu_last_error(s) : "");
    }
    if (ok && mask_order == 2) ok = set_mask();
    if (ok && t_sync(what)) {
        if (mask_order) CHECK(sol->h.lv[0].g.mk != nullptr, "%s: level 0 has the mask", what);
        const bool neumann = strcmp(oc->bcs, "NNNNNN") == 0;
        for (size_t l = 0; l + 1 < sol->h.lv.size(); ++l) test_pair<T>(sol, what, (int)l, neumann);
        CHECK(t_sync(what), "%s: the device after the transfers", what);
    }
    t_dev_free(d_beta);
    if (d_mask) t_dev_free(d_mask);
    pgpu_destroy(s);
}

int run(int, char **)
{
    t_require_device("test_odi");
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        run_case<double>(&cases[c], 0);
        run_case<float>(&cases[c], 0);
    }
    /* each grid both orders of pgpu_set_mask and pgpu_set_coefficients:
     * one in double, the other in float */
    for (size_t c = 0; c < sizeof masked_cases / sizeof masked_cases[0]; ++c) {
        run_case<double>(&masked_cases[c], 1 + (int)(c & 1));
        run_case<float>(&masked_cases[c], 2 - (int)(c & 1));
    }
    CHECK(odi_pairs >= 40, "the operator-dependent transfers ran on %d level pairs (at least 40)", odi_pairs);
    CHECK(masked_pairs >= 8, "they ran on %d level pairs whose fine level has a mask (at least 8)", masked_pairs);
    return t_finish("test_odi");
}

} // namespace wb_mg_odi
