/* test_routes.cu -- the routes by which a cycle forms a level's residual and
 * its restriction, bit for bit against one reference: the column walk's
 * residual (residual_kernel, the form pgpu_residual and the norms use)
 * restricted by the cycle's restriction (through restrict_tile_kernel where
 * the level has it, else restrict_kernel).
 *
 * Multigrid::down takes one of several routes to the coarse right-hand side
 * R (f - shift - A u), and smooth() may form level 0's residual inside its
 * last pre-smoothing pass.  Each route evaluates the operator in its own
 * kernel; the library promises one summation order (results bit for bit
 * whichever route a level takes), so each is compared bit for bit, at every
 * interior point, on random u (ghosts included) and f:
 *  - residual(): beta_tile_kernel's RES walk where the level's route says
 *    so (ResidRoute::BETA: level 0 of beta alone), else the walk itself;
 *  - the restriction through restrict_tile_kernel against restrict_kernel;
 *  - restrict_residual_kernel (double, the box's uniform levels);
 *  - beta_tile_kernel's RR walk (float, level 0 of beta alone);
 *  - beta_tile_kernel's RS pass (double, level 0 of beta alone): the
 *    residual it stores beside its result, against the walk's residual of
 *    that result.
 * The beta routes are switched on through the smoothing plan on grids
 * smaller than the library takes them from (SmoothPlan::large, mid), then
 * the levels routed again (Hierarchy::route).  The cases: boxes with every
 * face type, masks (solid, Dirichlet cells, one-cell walls), smooth beta
 * and a two-phase beta of ratio 10 (larger jumps take Galerkin levels,
 * whose rows are their own: test_odi), 2D and 3D, float and double; a
 * route none of them took is a failure (a test that checked nothing). */
#include "../whitebox.h"

namespace wb_routes {

enum { R_RES, R_TILED, R_FUSED, R_BETA_RR, R_BETA_RS, R_COUNT };
static const char *route_name[R_COUNT] = {"beta_tile RES residual", "tiled restriction", "fused residual restriction",
                                          "beta_tile RR restriction", "beta_tile RS residual"};
static int seen[2][R_COUNT]; /* per precision (0 float, 1 double) */

typedef struct route_case {
    const char *name;
    int64_t n[3];
    const char *bcs;
    int shape, beta;
    double jump;
} route_case;

static const route_case cases[] = {
    {"box", {70, 60, 50}, "DDDDDD", MREF_SHAPE_NONE, -1, 0},
    {"box, Neumann and periodic", {64, 48, 40}, "NNDDPP", MREF_SHAPE_NONE, -1, 0},
    {"box, Dirichlet and Neumann", {97, 45, 33}, "DNNDDN", MREF_SHAPE_NONE, -1, 0},
    {"smooth beta", {96, 70, 40}, "DDDDDD", MREF_SHAPE_NONE, MREF_BETA_SMOOTH, 0},
    {"smooth beta, Neumann", {80, 66, 30}, "NNDDND", MREF_SHAPE_NONE, MREF_BETA_SMOOTH, 0},
    {"two-phase beta 10 (below the jumps of Galerkin levels)", {64, 60, 44}, "DDDDDD", MREF_SHAPE_NONE,
     MREF_BETA_JUMP, 10},
    {"solid sphere", {63, 57, 45}, "DDDDNN", MREF_SHAPE_SPHERE, -1, 0},
    {"pool: Dirichlet air, a solid block", {60, 52, 40}, "DDDDDN", MREF_SHAPE_POOL, -1, 0},
    {"random solid and Dirichlet cells", {48, 40, 36}, "NDDNDD", MREF_SHAPE_RANDOM, -1, 0},
    {"one-cell walls, Neumann", {66, 50, 38}, "NNNNDD", MREF_SHAPE_WALLS, -1, 0},
    {"sphere and beta", {50, 44, 36}, "DDDDDD", MREF_SHAPE_SPHERE, MREF_BETA_SMOOTH, 0},
    {"2D box", {300, 200, 1}, "DNPP", MREF_SHAPE_NONE, -1, 0},
    {"2D stairs and beta", {150, 130, 1}, "DDDD", MREF_SHAPE_STAIRCASE, MREF_BETA_SMOOTH, 0},
};

/* Interior points of g where a and b differ in their bits; the largest
 * difference. */
template <class T>
static int64_t differ(const pgpu::Grid<T> &g, const std::vector<T> &a, const std::vector<T> &b, double *worst)
{
    int64_t n = 0;
    *worst = 0;
    for (int k = 0; k < (g.is3d ? g.nz : 1); ++k)
        for (int j = 0; j < g.ny; ++j)
            for (int i = 0; i < g.nx; ++i) {
                const size_t p = (size_t)(g.base + i + (int64_t)j * g.sy + (int64_t)k * g.sz);
                if (std::memcmp(&a[p], &b[p], sizeof(T)) == 0) continue;
                ++n;
                *worst = std::fmax(*worst, std::fabs((double)a[p] - (double)b[p]));
            }
    return n;
}

template <class T> static std::vector<T> fetch(const T *d, int64_t n)
{
    std::vector<T> h((size_t)n);
    if (cudaMemcpy(h.data(), d, (size_t)n * sizeof(T), cudaMemcpyDeviceToHost) != cudaSuccess)
        CHECK(0, "download: %s", cudaGetErrorString(cudaGetLastError()));
    return h;
}

/* Device scratch of n words, poisoned with NaN; poison() again before a
 * route writes it, so that a point a route leaves out shows. */
template <class T> static void poison(T *d, int64_t n);
template <class T> static T *scratch(int64_t n)
{
    T *d = (T *)t_dev_alloc((size_t)n * sizeof(T));
    if (d) poison(d, n);
    return d;
}
template <class T> static void poison(T *d, int64_t n)
{
    std::vector<T> h((size_t)n, (T)NAN);
    if (cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice) != cudaSuccess)
        CHECK(0, "poison: %s", cudaGetErrorString(cudaGetLastError()));
}

template <class T> static void upload_random(T *d, int64_t n)
{
    std::vector<T> h((size_t)n);
    for (auto &v : h) v = (T)t_rand(-1.0, 1.0);
    if (cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice) != cudaSuccess)
        CHECK(0, "upload: %s", cudaGetErrorString(cudaGetLastError()));
}

/* r = f - shift - A u by the column walk. */
template <class T> static void walk_residual(pgpu::Env &e, const pgpu::Level<T> &L, const T *u, const T *f, T *r)
{
    pgpu::walk_masked(L.g, [&](auto mk) {
        pgpu::launch(L.walk, 0, e.st, pgpu::residual_kernel<T, true, false, T, decltype(mk)::value>, L.g, u, f,
                     L.shift, r, (double *)nullptr);
    });
}

/* Compares a residual (fine interior) or a restriction (coarse interior). */
template <class T>
static void compare(const pgpu::Grid<T> &g, int64_t elems, const T *ref, const T *got, const char *what, int level,
                    const char *route)
{
    if (!t_sync(what)) return;
    double worst = 0;
    const int64_t n = differ(g, fetch(ref, elems), fetch(got, elems), &worst);
    CHECK(n == 0, "%s, level %d: %s against the reference: %lld points differ in their bits (largest difference %.3e)",
          what, level, route, (long long)n, worst);
}

template <class T> static void run_case(const route_case *rc)
{
    using namespace pgpu;
    const unsigned prec = sizeof(T) == sizeof(float) ? PGPU_FLOAT : PGPU_DOUBLE;
    const int pi = prec == PGPU_DOUBLE;
    pgpu_config cfg = t_config(rc->n[0], rc->n[1], rc->n[2], rc->bcs, 1.0 / 64, 1.0 / 64, 1.0 / 64, PGPU_VCYCLE | prec);
    char what[160];
    snprintf(what, sizeof what, "%s %lldx%lldx%lld %s %s", rc->name, (long long)rc->n[0], (long long)rc->n[1],
             (long long)rc->n[2], rc->bcs, t_precision_name(prec));
    pgpu_solver *s = t_create(&cfg, what);
    if (!s) return;
    const ref_grid rg = ref_grid_from_config(&cfg);
    const int64_t elems = ref_elems(&rg);
    void *d_mask = nullptr, *d_beta = nullptr;
    bool ok = true;
    if (rc->shape != MREF_SHAPE_NONE) {
        std::vector<uint8_t> m((size_t)elems, 0);
        mref_shape(&rg, rc->shape, m.data());
        d_mask = t_dev_upload(m.data(), m.size());
        const pgpu_status st = pgpu_set_mask(s, (const uint8_t *)d_mask);
        ok = CHECK(st == PGPU_SUCCESS, "%s: pgpu_set_mask: %s", what, st ? pgpu_last_error(s) : "");
    }
    if (ok && rc->beta >= 0) {
        std::vector<double> b((size_t)elems, 1.0);
        mref_beta_field(&rg, rc->beta, rc->jump, b.data());
        std::vector<T> bt(b.begin(), b.end());
        d_beta = t_dev_upload(bt.data(), bt.size() * sizeof(T));
        const pgpu_status st = pgpu_set_coefficients(s, d_beta);
        ok = CHECK(st == PGPU_SUCCESS, "%s: pgpu_set_coefficients: %s", what, st ? pgpu_last_error(s) : "");
    }
    Solver<T> *sol = solver_of<T>(s);
    Env &e = sol->env;
    Hierarchy<T> &h = sol->h;
    T *du = scratch<T>(h.lv[0].elems), *df = scratch<T>(h.lv[0].elems);
    if (ok && du && df && t_sync(what)) {
        upload_random(du, h.lv[0].elems);
        upload_random(df, h.lv[0].elems);
        h.bind(du, df, nullptr);
        for (Level<T> &L : h.lv) { // the beta routes on grids smaller than the library takes them from
            L.sm.large = true;
            L.sm.mid = true;
        }
        h.route(e);
        for (size_t l = 0; l + 1 < h.lv.size(); ++l) {
            Level<T> &L = h.lv[l], &C = h.lv[l + 1];
            if (L.gr.st || L.down.odi) continue; // (a Galerkin pair: its own rows, test_odi)
            const T *u = l ? (const T *)L.iter() : du, *f = l ? (const T *)L.f : df;
            if (l) {
                upload_random(L.iter(), L.elems);
                upload_random(L.f, L.elems);
            }
            T *r1 = scratch<T>(L.elems), *r2 = scratch<T>(L.elems), *x = scratch<T>(L.elems);
            T *c1 = scratch<T>(C.elems), *c2 = scratch<T>(C.elems);
            if (!r1 || !r2 || !x || !c1 || !c2) break;
            const int li = (int)l;
            walk_residual(e, L, u, f, r1);
            // residual(): the RES walk where the level's route says so
            if (L.route.resid == ResidRoute::BETA) {
                ++seen[pi][R_RES];
                CHECK(residual(e, L, u, r2) == PGPU_SUCCESS, "%s: residual(): %s", what, e.err);
                compare(L.g, L.elems, r1, r2, what, li, route_name[R_RES]);
            }
            // the tiled restriction against the direct one; the reference:
            // the cycle's own (tiled where the level has it)
            if (L.down.rs_tile) {
                ++seen[pi][R_TILED];
                CHECK(L.down.restrict_(e, r1, nullptr, c1, false, Transfer<T>::DIRECT) == PGPU_SUCCESS, "%s: %s",
                      what, e.err);
                CHECK(L.down.restrict_(e, r1, nullptr, c2, false, Transfer<T>::TILED) == PGPU_SUCCESS, "%s: %s",
                      what, e.err);
                compare(C.g, C.elems, c1, c2, what, li, route_name[R_TILED]);
            }
            CHECK(L.down.restrict_(e, r1, nullptr, c1) == PGPU_SUCCESS, "%s: %s", what, e.err);
            if (L.route.down == DownRoute::FUSED) {
                ++seen[pi][R_FUSED];
                poison(c2, C.elems);
                CHECK(L.down.restrict_residual(e, u, f, L.shift, c2) == PGPU_SUCCESS, "%s: %s", what, e.err);
                compare(C.g, C.elems, c1, c2, what, li, route_name[R_FUSED]);
            }
            if (L.route.down == DownRoute::BETA_RR) {
                ++seen[pi][R_BETA_RR];
                poison(c2, C.elems);
                CHECK(L.down.restrict_beta_residual(e, u, f, L.shift, c2) == PGPU_SUCCESS, "%s: %s", what, e.err);
                compare(C.g, C.elems, c1, c2, what, li, route_name[R_BETA_RR]);
            }
            // (the pass, where level 0 allows it: route.pre_resid also asks for
            // the third iterate, which these small grids do not allocate)
            if (l == 0 && beta_resid(e, L.g, L.sm)) {
                ++seen[pi][R_BETA_RS];
                poison(r2, L.elems);
                // (x's ghosts: the boundary data, as the level's iterates hold them)
                CHECK(cudaMemcpy(x, u, (size_t)L.elems * sizeof(T), cudaMemcpyDeviceToDevice) == cudaSuccess,
                      "%s: copy", what);
                CHECK(rb_pass_resid(e, L.g, L.sm, u, x, r2, f, L.shift, T(1.3), 0) == PGPU_SUCCESS, "%s: %s", what,
                      e.err);
                walk_residual(e, L, (const T *)x, f, r1);
                compare(L.g, L.elems, r1, r2, what, li, route_name[R_BETA_RS]);
            }
            CHECK(t_sync(what), "%s, level %d: the device after the routes", what, li);
            t_dev_free(r1), t_dev_free(r2), t_dev_free(x), t_dev_free(c1), t_dev_free(c2);
        }
    }
    t_dev_free(du), t_dev_free(df);
    if (d_mask) t_dev_free(d_mask);
    if (d_beta) t_dev_free(d_beta);
    pgpu_destroy(s);
}

static int run(int argc, char **argv)
{
    (void)argc, (void)argv;
    t_require_device("test_routes");
    t_seed();
    for (const route_case &rc : cases) {
        run_case<float>(&rc);
        run_case<double>(&rc);
    }
    /* The routes each precision has: RES and the tiled restriction both,
     * the fused restriction and RS double, RR float (config.h's Tune). */
    for (int pi = 0; pi < 2; ++pi)
        for (int r = 0; r < R_COUNT; ++r) {
            const bool exists = (r == R_FUSED || r == R_BETA_RS) ? pi == 1 : r == R_BETA_RR ? pi == 0 : true;
            if (!exists) continue;
            CHECK(seen[pi][r] > 0, "%s: %s taken on %d levels of the cases (none: nothing compared)",
                  pi ? "double" : "float", route_name[r], seen[pi][r]);
        }
    return t_finish("test_routes");
}

} // namespace wb_routes
