/* test_transfer_host.cu -- the multigrid geometry on the host (no device, no
 * kernel launch): the library's coarsening tables (pgpu::coarsen_axis,
 * pgpu::build_hierarchy, reached through the white-box build) against the
 * independent reference of mg_reference.h, plus properties of the tables.
 *
 * Per axis type (D-D, N-N, P-P, D-N, N-D) and n = 1..70, 255, 256, 257,
 * 511, 512, 513, along the whole chain of coarsenings down to one node:
 *  - both say whether the axis can be coarsened; same coarse size, same
 *    coarse positions and widths, same P (dense n x (nc+2), ghost columns
 *    included) and same R (dense nc x n), to 1e-12;
 *  - the library's tables are well formed: storage indices in range, 1..5
 *    distinct children per coarse node (the kernels assume <= MAX_CHILDREN),
 *    P's entries in [0, 1], at most two per row, ghost (wall) columns used
 *    only at Dirichlet faces;
 *  - R of a constant is the constant (rows of R sum to 1); P of a constant
 *    (with the same constant as wall value) is the constant; P of a linear
 *    function l (wall values l(wall)) is l at every fine node between the
 *    first and last coarse node and beyond them towards a Dirichlet wall,
 *    and the constant l(first or last coarse node) towards a Neumann wall;
 *  - adjointness in the width-weighted inner products:
 *    <R r, e>_Wc = <r, P e>_W for random r, e (walls zero);
 *  - on Neumann and periodic axes the coarse widths add up to the fine ones
 *    (the restricted right-hand side keeps its integral);
 *  - FMG's data restriction Rf (the library's fw) matches the reference's,
 *    has R's children, rows that sum to 1 with weights in [0, 1], and each
 *    row has no first moment about its coarse node (|moment| <= 1e-12 of the
 *    children's spread), or is R's row where that would need a negative
 *    weight.
 * And the 3D/2D hierarchy (build_hierarchy) against the reference's for a
 * set of grids: same number of levels, same per-axis sizes, the same
 * coarsened/not coarsened decisions and tables; it ends in one point; with
 * hz = 4 hx the z axis is not coarsened on the first two levels (and is on
 * the third); a 2D problem never coarsens z.
 */
#include "../whitebox.h"

namespace wb_mg_transfer_host {

static const char *type_name(int lo, int hi)
{
    static const char *L[3] = {"D", "N", "P"};
    static char buf[8][8];
    static int slot;
    char *b = buf[slot++ & 7];
    snprintf(b, 8, "%s-%s", L[lo], L[hi]);
    return b;
}

/* ---- the library's tables as dense matrices --------------------------------- */

/* Dense P (n x (nc+2)) and R (nc x n) of a library transfer; problems with
 * the table's form go to *why (first one only) and make it return 0. */
static int lib_dense(const pgpu::AxisTransfer &t, int n, int nc, std::vector<double> &P,
                     std::vector<double> &R, char *why, size_t whylen)
{
    int ok = 1;
    P.assign((size_t)n * (nc + 2), 0.0);
    R.assign((size_t)nc * n, 0.0);
    if ((int)t.p0.size() != n || (int)t.p1.size() != n || (int)t.q0.size() != n || (int)t.q1.size() != n ||
        (int)t.rcnt.size() != nc || (int)t.ridx.size() != nc * pgpu::MAX_CHILDREN ||
        (int)t.rw.size() != nc * pgpu::MAX_CHILDREN) {
        snprintf(why, whylen, "table sizes: p0 %zu, rcnt %zu for n %d, nc %d", t.p0.size(), t.rcnt.size(), n, nc);
        return 0;
    }
    for (int i = 0; i < n; ++i) {
        if (t.p0[i] < 0 || t.p0[i] > nc + 1 || t.p1[i] < 0 || t.p1[i] > nc + 1) {
            if (ok)
                snprintf(why, whylen, "fine node %d: coarse storage index %d / %d outside 0..%d", i, t.p0[i],
                         t.p1[i], nc + 1);
            ok = 0;
            continue;
        }
        P[(size_t)i * (nc + 2) + t.p0[i]] += t.q0[i];
        P[(size_t)i * (nc + 2) + t.p1[i]] += t.q1[i];
    }
    for (int I = 0; I < nc; ++I) {
        const int cnt = t.rcnt[I];
        if (cnt < 1 || cnt > pgpu::MAX_CHILDREN) {
            if (ok)
                snprintf(why, whylen, "coarse node %d has %d children (allowed 1..%d)", I, cnt, pgpu::MAX_CHILDREN);
            ok = 0;
            continue;
        }
        for (int m = 0; m < cnt; ++m) {
            const int i = t.ridx[(size_t)I * pgpu::MAX_CHILDREN + m];
            if (i < 0 || i >= n) {
                if (ok)
                    snprintf(why, whylen, "coarse node %d: child index %d outside 0..%d", I, i, n - 1);
                ok = 0;
                continue;
            }
            for (int m2 = 0; m2 < m; ++m2)
                if (t.ridx[(size_t)I * pgpu::MAX_CHILDREN + m2] == i) {
                    if (ok)
                        snprintf(why, whylen, "coarse node %d lists child %d twice", I, i);
                    ok = 0;
                }
            R[(size_t)I * n + i] += t.rw[(size_t)I * pgpu::MAX_CHILDREN + m];
        }
    }
    return ok;
}

static double max_abs_diff(const std::vector<double> &a, const double *b)
{
    double m = 0.0;
    for (size_t k = 0; k < a.size(); ++k)
        m = t_max_nan(m, fabs(a[k] - b[k]));
    return m;
}

/* ---- one level of one axis ----------------------------------------------------- */

typedef struct level_result {
    int ok;           /* everything at this level agreed and held */
    double dP, dR;    /* max |P_lib - P_ref|, |R_lib - R_ref| */
    double dx;        /* max relative difference of coarse positions and widths */
    char why[300];    /* the first problem */
} level_result;

static void fail(level_result *r, const char *fmt, ...) T_PRINTF(2, 3);
static void fail(level_result *r, const char *fmt, ...)
{
    if (r->ok) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->why, sizeof r->why, fmt, ap);
        va_end(ap);
    }
    r->ok = 0;
}

/* Compares one coarsening step and checks the library table's properties.
 * la/lc/lt: the library's fine axis, coarse axis and transfer; ma/mc/mt the
 * reference's.  The tolerance for matrix entries and relative positions. */
static void compare_step(const pgpu::Axis &la, const pgpu::Axis &lc, const pgpu::AxisTransfer &lt,
                         const mg_axis *ma, const mg_axis *mc, const mg_transfer *mt, double tol,
                         level_result *r)
{
    const int n = la.n, nc = lc.n;
    if (n != ma->n || nc != mc->n) {
        fail(r, "n %d (reference %d): coarse size %d, reference %d", n, ma->n, nc, mc->n);
        return;
    }
    if (!lt.coarsened)
        fail(r, "n %d: transfer not marked coarsened", n);
    /* Positions and widths of the coarse axis (relative to the axis length). */
    const double scale = fabs(la.x[n - 1]) + la.w[0];
    for (int I = 0; I < nc; ++I) {
        const double ex = fabs(lc.x[I] - mc->x[I]) / scale, ew = fabs(lc.w[I] - mc->w[I]) / scale;
        r->dx = t_max_nan(r->dx, t_max_nan(ex, ew));
    }
    if (!(r->dx <= tol))
        fail(r, "n %d: coarse positions/widths differ by %.3e (relative)", n, r->dx);
    if (lc.lo != la.lo || lc.hi != la.hi || lc.xlo != la.xlo || lc.xhi != la.xhi || lc.L != la.L)
        fail(r, "n %d: the coarse axis changed its faces, walls or period", n);
    if (!(fabs(lc.h - mc->h) <= 1e-14 * mc->h))
        fail(r, "n %d: coarse spacing %.17g, reference %.17g", n, lc.h, mc->h);

    std::vector<double> P, R;
    char why[200] = "";
    if (!lib_dense(lt, n, nc, P, R, why, sizeof why)) {
        fail(r, "n %d: %s", n, why);
        return;
    }
    r->dP = max_abs_diff(P, mt->P);
    r->dR = max_abs_diff(R, mt->R);
    if (!(r->dP <= tol && r->dR <= tol))
        fail(r, "n %d -> %d: P differs by %.3e, R by %.3e", n, nc, r->dP, r->dR);

    /* Properties of the library's tables. */
    const int lo_d = la.lo == PGPU_BC_DIRICHLET, hi_d = la.hi == PGPU_BC_DIRICHLET;
    const int per = la.lo == PGPU_BC_PERIODIC;
    for (int i = 0; i < n; ++i) {
        const double *row = &P[(size_t)i * (nc + 2)];
        double sum = 0.0;
        int nnz = 0;
        for (int c = 0; c < nc + 2; ++c) {
            if (row[c] != 0.0)
                ++nnz;
            if (!(row[c] >= 0.0 && row[c] <= 1.0 + 1e-15))
                fail(r, "n %d: P(%d, %d) = %.17g outside [0, 1]", n, i, c, row[c]);
            sum += row[c];
        }
        if (nnz > 2)
            fail(r, "n %d: row %d of P has %d entries", n, i, nnz);
        if ((row[0] != 0.0 && !lo_d) || (row[nc + 1] != 0.0 && !hi_d))
            fail(r, "n %d: fine node %d reads a ghost of a non-Dirichlet face (%.3g, %.3g)", n, i, row[0], row[nc + 1]);
        if (!(fabs(sum - 1.0) <= 1e-14))
            fail(r, "n %d: P of a constant at fine node %d is %.17g", n, i, sum);
    }
    for (int I = 0; I < nc; ++I) {
        double sum = 0.0;
        int nnz = 0;
        for (int i = 0; i < n; ++i) {
            sum += R[(size_t)I * n + i];
            nnz += R[(size_t)I * n + i] != 0.0;
        }
        if (!(fabs(sum - 1.0) <= 1e-14))
            fail(r, "n %d: R of a constant at coarse node %d is %.17g", n, I, sum);
        if (nnz > pgpu::MAX_CHILDREN || lt.rcnt[I] > pgpu::MAX_CHILDREN)
            fail(r, "n %d: coarse node %d has %d children", n, I, nnz);
    }
    /* Linear functions: l(x) = 0.3 + 1.7 (x - x0) / extent. */
    {
        const double x0 = la.x[0], ext = scale;
        std::vector<double> e(nc + 2, 0.0);
        for (int I = 0; I < nc; ++I)
            e[I + 1] = 0.3 + 1.7 * (lc.x[I] - x0) / ext;
        e[0] = 0.3 + 1.7 * (la.xlo - x0) / ext;
        e[nc + 1] = 0.3 + 1.7 * (la.xhi - x0) / ext;
        for (int i = 0; i < n; ++i) {
            const double xi = la.x[i];
            double want = 0.3 + 1.7 * (xi - x0) / ext;
            int check = 1;
            if (xi < lc.x[0]) {
                if (per) check = 0; /* across the seam: a linear function is not periodic */
                else if (!lo_d) want = e[1];
            } else if (xi > lc.x[nc - 1]) {
                if (per) check = 0;
                else if (!hi_d) want = e[nc];
            }
            if (!check)
                continue;
            double got = 0.0;
            for (int c = 0; c < nc + 2; ++c)
                got += P[(size_t)i * (nc + 2) + c] * e[c];
            if (!(fabs(got - want) <= 1e-13))
                fail(r, "n %d: P of a linear function at fine node %d: %.17g, want %.17g", n, i, got, want);
        }
    }
    /* Adjointness: <R r, e>_Wc = <r, P e>_W, walls zero. */
    {
        std::vector<double> rv(n), ev(nc + 2, 0.0);
        for (int i = 0; i < n; ++i)
            rv[i] = t_rand(-1.0, 1.0);
        for (int I = 1; I <= nc; ++I)
            ev[I] = t_rand(-1.0, 1.0);
        double lhs = 0.0, rhs = 0.0, mag = 0.0;
        for (int I = 0; I < nc; ++I) {
            double Rr = 0.0;
            for (int i = 0; i < n; ++i)
                Rr += R[(size_t)I * n + i] * rv[i];
            lhs += lc.w[I] * Rr * ev[I + 1];
            mag += lc.w[I] * fabs(Rr * ev[I + 1]);
        }
        for (int i = 0; i < n; ++i) {
            double Pe = 0.0;
            for (int c = 0; c < nc + 2; ++c)
                Pe += P[(size_t)i * (nc + 2) + c] * ev[c];
            rhs += la.w[i] * rv[i] * Pe;
            mag += la.w[i] * fabs(rv[i] * Pe);
        }
        if (!(fabs(lhs - rhs) <= 1e-13 * mag))
            fail(r, "n %d: <R r, e>_Wc = %.17g but <r, P e>_W = %.17g", n, lhs, rhs);
    }
    /* Without Dirichlet faces nothing goes to the walls: widths add up. */
    if (!lo_d && !hi_d) {
        double wf = 0.0, wc = 0.0;
        for (int i = 0; i < n; ++i)
            wf += la.w[i];
        for (int I = 0; I < nc; ++I)
            wc += lc.w[I];
        if (!(fabs(wf - wc) <= 1e-13 * wf))
            fail(r, "n %d: coarse widths add up to %.17g, fine ones to %.17g", n, wc, wf);
    }
    /* FMG's data restriction. */
    if (lt.fw.size() != lt.rw.size()) {
        fail(r, "n %d: fw has %zu entries, rw %zu", n, lt.fw.size(), lt.rw.size());
        return;
    }
    std::vector<double> Rf((size_t)nc * n, 0.0);
    for (int I = 0; I < nc; ++I)
        for (int m = 0; m < lt.rcnt[I]; ++m)
            Rf[(size_t)I * n + lt.ridx[(size_t)I * pgpu::MAX_CHILDREN + m]] +=
                lt.fw[(size_t)I * pgpu::MAX_CHILDREN + m];
    const double dRf = max_abs_diff(Rf, mt->Rf);
    if (!(dRf <= tol))
        fail(r, "n %d -> %d: FMG's Rf differs from the reference by %.3e", n, nc, dRf);
    for (int I = 0; I < nc; ++I) {
        double sum = 0.0, moment = 0.0, dmin = 0.0, dmax = 0.0;
        int same = 1, first = 1;
        for (int i = 0; i < n; ++i) {
            const double w = Rf[(size_t)I * n + i], wr = R[(size_t)I * n + i];
            if (w != wr)
                same = 0;
            if (!(w >= 0.0 && w <= 1.0))
                fail(r, "n %d: Rf(%d, %d) = %.17g outside [0, 1]", n, I, i, w);
            if (w != 0.0 && wr == 0.0)
                fail(r, "n %d: Rf(%d, %d) is a child R does not have", n, I, i);
            if (wr == 0.0)
                continue;
            double d = la.x[i] - lc.x[I];
            if (per)
                d -= la.L * std::round(d / la.L);
            sum += w;
            moment += w * d;
            dmin = first ? d : std::min(dmin, d);
            dmax = first ? d : std::max(dmax, d);
            first = 0;
        }
        if (!(fabs(sum - 1.0) <= 1e-14))
            fail(r, "n %d: Rf of a constant at coarse node %d is %.17g", n, I, sum);
        if (!same && !(fabs(moment) <= 1e-12 * (dmax - dmin)))
            fail(r, "n %d: row %d of Rf differs from R's but has first moment %.3e (spread %.3e)", n, I, moment,
                 dmax - dmin);
    }
}

/* The whole chain of one axis; one CHECK. */
static void axis_chain(int n, int lo, int hi)
{
    const double h = t_rand(0.5, 2.0) / n;
    pgpu::Axis la = pgpu::fine_axis(n, h, lo, hi, true);
    mg_axis ma = mg_fine_axis(n, h, lo, hi, 1);
    level_result worst;
    memset(&worst, 0, sizeof worst);
    worst.ok = 1;
    /* The fine axis itself. */
    for (int i = 0; i < n; ++i)
        if (la.x[i] != ma.x[i] || la.w[i] != ma.w[i])
            fail(&worst, "fine axis: node %d at %.17g width %.17g, reference %.17g %.17g", i, la.x[i], la.w[i],
                 ma.x[i], ma.w[i]);
    if ((lo != PGPU_BC_PERIODIC && (la.xlo != ma.xlo || la.xhi != ma.xhi)) || la.L != ma.L)
        fail(&worst, "fine axis: walls %.17g %.17g period %.17g, reference %.17g %.17g %.17g", la.xlo, la.xhi,
             la.L, ma.xlo, ma.xhi, ma.L);
    int levels = 1;
    char sizes[400];
    int used = snprintf(sizes, sizeof sizes, "%d", n);
    for (;;) {
        pgpu::Axis lc;
        pgpu::AxisTransfer lt;
        mg_axis mc;
        mg_transfer mt;
        memset(&mc, 0, sizeof mc);
        memset(&mt, 0, sizeof mt);
        const int lib_ok = pgpu::coarsen_axis(la, lc, lt) ? 1 : 0;
        const int ref_ok = mg_coarsen(&ma, &mc, &mt);
        if (lib_ok != ref_ok) {
            fail(&worst, "n %d: the library %s, the reference %s", la.n, lib_ok ? "coarsens" : "does not coarsen",
                 ref_ok ? "coarsens" : "does not");
        } else if (!lib_ok) {
            if (la.n != 1)
                fail(&worst, "the chain stops at %d nodes, not at one", la.n);
        } else {
            level_result r;
            memset(&r, 0, sizeof r);
            r.ok = 1;
            compare_step(la, lc, lt, &ma, &mc, &mt, 1e-12, &r);
            worst.dP = t_max_nan(worst.dP, r.dP);
            worst.dR = t_max_nan(worst.dR, r.dR);
            worst.dx = t_max_nan(worst.dx, r.dx);
            if (!r.ok)
                fail(&worst, "level %d: %s", levels - 1, r.why);
            if (used < (int)sizeof sizes - 16)
                used += snprintf(sizes + used, sizeof sizes - used, " %d", lc.n);
        }
        if (!lib_ok || !ref_ok) {
            if (ref_ok) {
                mg_free_axis(&mc);
                mg_free_transfer(&mt);
            }
            break;
        }
        la = lc;
        mg_free_axis(&ma);
        mg_free_transfer(&mt);
        ma = mc;
        ++levels;
        if (levels > 64) {
            fail(&worst, "more than 64 levels");
            break;
        }
    }
    mg_free_axis(&ma);
    CHECK(worst.ok, "%s n=%d: %d levels (%s), max |dP| %.1e |dR| %.1e |dx| %.1e%s%s", type_name(lo, hi), n,
          levels, sizes, worst.dP, worst.dR, worst.dx, worst.ok ? "" : ": ", worst.ok ? "" : worst.why);
}

/* ---- hierarchies ------------------------------------------------------------------ */

typedef struct hier_case {
    const char *name;
    int n[3];
    double h[3];
    const char *bcs; /* letters per face */
    int dims;
    int expect;      /* SEMI_Z_WAITS, SEMI_Z_ONLY or 0: what semicoarsening must do */
} hier_case;

/* hz = 4 hx: z is not coarsened on levels 0 and 1, but on level 2 (x and y
 * on levels 0 and 1); hz = hx / 4: only z is coarsened on level 0. */
enum { SEMI_Z_WAITS = 1, SEMI_Z_ONLY = 2 };

static int letter_bc(char c)
{
    return c == 'N' ? PGPU_BC_NEUMANN : c == 'P' ? PGPU_BC_PERIODIC : PGPU_BC_DIRICHLET;
}

/* Builds the library's hierarchy as pgpu_create does, and the reference's;
 * compares them level by level.  Returns the library's levels in *out. */
static int hierarchy(const hier_case *c, std::vector<pgpu::HostLevel> &hl)
{
    int bc[6];
    for (int f = 0; f < 6; ++f)
        bc[f] = letter_bc(c->bcs[f] ? c->bcs[f] : 'D');
    const bool is3d = c->dims == 3;
    pgpu::Axis fine[3] = {pgpu::fine_axis(c->n[0], c->h[0], bc[0], bc[1], true),
                          pgpu::fine_axis(c->n[1], c->h[1], bc[2], bc[3], true),
                          pgpu::fine_axis(is3d ? c->n[2] : 1, is3d ? c->h[2] : 1.0,
                                          is3d ? bc[4] : PGPU_BC_NEUMANN, is3d ? bc[5] : PGPU_BC_NEUMANN, is3d)};
    const bool lib_ok = pgpu::build_hierarchy(fine, hl);
    mg_hierarchy *H = (mg_hierarchy *)calloc(1, sizeof *H);
    const int ref_ok = mg_build(H, c->n, c->h, bc, c->dims);
    int ok = CHECK(lib_ok && ref_ok && (int)hl.size() == H->count,
                   "%s: hierarchy built (library %d, reference %d), %d levels (reference %d)", c->name, lib_ok,
                   ref_ok, (int)hl.size(), H->count);
    if (ok) {
        level_result r;
        memset(&r, 0, sizeof r);
        r.ok = 1;
        char sizes[600];
        int used = 0;
        sizes[0] = 0;
        for (int l = 0; l < H->count; ++l) {
            if (used < (int)sizeof sizes - 40)
                used += snprintf(sizes + used, sizeof sizes - used, "%s%dx%dx%d", l ? " " : "", hl[l].ax[0].n,
                                 hl[l].ax[1].n, hl[l].ax[2].n);
            for (int d = 0; d < 3; ++d) {
                const pgpu::Axis &a = hl[l].ax[d];
                const mg_axis *m = &H->lv[l].ax[d];
                if (a.n != m->n || (a.active ? 1 : 0) != m->active) {
                    fail(&r, "level %d axis %d: %d nodes (active %d), reference %d (%d)", l, d, a.n, (int)a.active,
                         m->n, m->active);
                    continue;
                }
                if (l + 1 == H->count)
                    continue;
                const pgpu::AxisTransfer &t = hl[l].tr[d];
                const mg_transfer *mt = &H->lv[l].tr[d];
                if ((t.coarsened ? 1 : 0) != mt->coarsened) {
                    fail(&r, "level %d axis %d (%d nodes): library %s, reference %s", l, d, a.n,
                         t.coarsened ? "coarsens" : "does not coarsen", mt->coarsened ? "coarsens" : "does not");
                    continue;
                }
                if (t.coarsened) {
                    level_result s;
                    memset(&s, 0, sizeof s);
                    s.ok = 1;
                    compare_step(a, hl[l + 1].ax[d], t, m, &H->lv[l + 1].ax[d], mt, 1e-12, &s);
                    if (!s.ok)
                        fail(&r, "level %d axis %d: %s", l, d, s.why);
                } else {
                    std::vector<double> P, R;
                    char why[200] = "";
                    if (!lib_dense(t, a.n, a.n, P, R, why, sizeof why))
                        fail(&r, "level %d axis %d identity: %s", l, d, why);
                    else if (max_abs_diff(P, mt->P) != 0.0 || max_abs_diff(R, mt->R) != 0.0 || t.fw != t.rw)
                        fail(&r, "level %d axis %d: not the identity", l, d);
                }
            }
        }
        /* The coarsest level: one node on every active axis. */
        const pgpu::HostLevel &last = hl.back();
        for (int d = 0; d < 3; ++d)
            if (last.ax[d].active && last.ax[d].n != 1)
                fail(&r, "the coarsest level has %d nodes on axis %d", last.ax[d].n, d);
        ok = CHECK(r.ok, "%s: levels match the reference and end in one point: %s%s%s", c->name, sizes,
                   r.ok ? "" : ": ", r.ok ? "" : r.why);
    }
    mg_free_hierarchy(H);
    free(H);
    return ok;
}

int run(int, char **)
{
    /* 1. Every axis type, every small size and a few large ones. */
    static const int types[5][2] = {{PGPU_BC_DIRICHLET, PGPU_BC_DIRICHLET},
                                    {PGPU_BC_NEUMANN, PGPU_BC_NEUMANN},
                                    {PGPU_BC_PERIODIC, PGPU_BC_PERIODIC},
                                    {PGPU_BC_DIRICHLET, PGPU_BC_NEUMANN},
                                    {PGPU_BC_NEUMANN, PGPU_BC_DIRICHLET}};
    static const int large[] = {255, 256, 257, 511, 512, 513};
    for (int ty = 0; ty < 5; ++ty) {
        for (int n = 1; n <= 70; ++n)
            axis_chain(n, types[ty][0], types[ty][1]);
        for (size_t k = 0; k < sizeof large / sizeof large[0]; ++k)
            axis_chain(large[k], types[ty][0], types[ty][1]);
    }

    /* 2. Hierarchies. */
    const double h64 = 1.0 / 65;
    const hier_case cases[] = {
        {"3D 64^3 Dirichlet, hz = 4 hx", {64, 64, 64}, {h64, h64, 4 * h64}, "DDDDDD", 3, SEMI_Z_WAITS},
        {"3D 65x63x64 mixed, hz = 4 hx", {65, 63, 64}, {h64, h64, 4 * h64}, "DNPPND", 3, SEMI_Z_WAITS},
        {"3D 32x32x128 periodic, hz = hx / 4", {32, 32, 128}, {0.04, 0.04, 0.01}, "PPPPPP", 3, SEMI_Z_ONLY},
        {"3D 200x50x33 equal spacing", {200, 50, 33}, {0.005, 0.005, 0.005}, "DDDDDD", 3, 0},
        {"3D 200x50x33 unit cube", {200, 50, 33}, {1.0 / 201, 1.0 / 51, 1.0 / 34}, "DNNDPP", 3, 0},
        {"3D 37x41x43 prime, periodic", {37, 41, 43}, {0.02, 0.02, 0.02}, "PPPPPP", 3, 0},
        {"3D 31^3 Neumann", {31, 31, 31}, {1.0 / 31, 1.0 / 31, 1.0 / 31}, "NNNNNN", 3, 0},
        {"3D 127x128x129 mixed", {127, 128, 129}, {0.01, 0.01, 0.01}, "NDDNPP", 3, 0},
        {"3D axes of one node", {1, 1, 1}, {0.5, 0.25, 0.125}, "DNPPND", 3, 0},
        {"3D 1x20x11 periodic x of size 1", {1, 20, 11}, {0.1, 0.05, 0.07}, "PPDDNN", 3, 0},
        {"3D 2x2x2 periodic", {2, 2, 2}, {0.5, 0.5, 0.5}, "PPPPPP", 3, 0},
        {"3D 513x3x2", {513, 3, 2}, {0.001, 0.001, 0.001}, "DDNNPP", 3, 0},
        {"2D 65x33 mixed", {65, 33, 1}, {0.015, 0.03, 0}, "DNPP", 2, 0},
        {"2D 256x256 Neumann", {256, 256, 1}, {1.0 / 256, 1.0 / 256, 0}, "NNNN", 2, 0},
        {"2D 31x29 periodic odd", {31, 29, 1}, {0.03, 0.03, 0}, "PPPP", 2, 0},
        {"2D 257x64 Dirichlet, hy = 4 hx", {257, 64, 1}, {0.001, 0.004, 0}, "DDDD", 2, 0},
        {"2D 1x1", {1, 1, 1}, {0.5, 0.5, 0}, "DDDD", 2, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        std::vector<pgpu::HostLevel> hl;
        if (!hierarchy(&cases[c], hl))
            continue;
        const hier_case *hc = &cases[c];
        if (hc->dims == 2) {
            int ok = 1;
            for (size_t l = 0; l < hl.size(); ++l) {
                if (hl[l].ax[2].active || hl[l].ax[2].n != 1) ok = 0;
                if (l + 1 < hl.size() && hl[l].tr[2].coarsened) ok = 0;
            }
            CHECK(ok, "%s: z is one inactive node on every level and never coarsened", hc->name);
        }
        if (hc->expect == SEMI_Z_WAITS && CHECK(hl.size() > 3, "%s: more than 3 levels", hc->name)) {
            /* 1/hz^2 = 1/16 of 1/hx^2: z waits until hx has grown by about 4. */
            const bool xy01 = hl[0].tr[0].coarsened && hl[0].tr[1].coarsened && hl[1].tr[0].coarsened &&
                              hl[1].tr[1].coarsened;
            CHECK(xy01 && !hl[0].tr[2].coarsened && !hl[1].tr[2].coarsened && hl[2].tr[2].coarsened,
                  "%s: x, y coarsened on levels 0 and 1; z not on levels 0, 1 (%d, %d) but on level 2 (%d)",
                  hc->name, (int)hl[0].tr[2].coarsened, (int)hl[1].tr[2].coarsened, (int)hl[2].tr[2].coarsened);
        }
        if (hc->expect == SEMI_Z_ONLY) {
            CHECK(!hl[0].tr[0].coarsened && !hl[0].tr[1].coarsened && hl[0].tr[2].coarsened,
                  "%s: only z coarsened on level 0", hc->name);
        }
    }
    return t_finish("test_transfer_host");
}

} // namespace wb_mg_transfer_host
