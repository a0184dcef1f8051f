/* test_odi_host.cu -- where the operator-dependent transfers (src/odi.h)
 * may run, on the host (no device): odi_node_map on every level pair of 1D
 * hierarchies that the library builds.
 *
 * Per face pair (D-D, N-N, D-N, N-D, P-P), n = 1..300 and a few large
 * axes, two spacings, on each level pair:
 *  - the map says the pair keeps nodes exactly where the coarsening rule
 *    keeps them: an axis not coarsened; a coarsened odd Dirichlet or
 *    Neumann axis; a coarsened even axis between two Dirichlet walls (not
 *    a Neumann wall's even axis, which pairs cells, nor a periodic ring);
 *  - where it does, the map agrees with the prolongation's taps: a fine
 *    node on a coarse node (cn >= 0) takes that node's value alone, and a
 *    node between takes its values only from its neighbours' coarse nodes
 *    or from the wall beside it; the coarse nodes it names are distinct,
 *    every one named once;
 *  - P's stored weights' places along the axis (odi_first_place,
 *    odi_place_of): each in range, each taken once, a coarse node's block
 *    finding its nodes' places towards it.
 * cpu suite. */
#include "../whitebox.h"

namespace wb_odi_host {

using namespace pgpu;

static void axis_case(int n, int lo, int hi, double h)
{
    char name[96];
    snprintf(name, sizeof name, "%c-%c n = %d, h = %g", "DNP"[lo], "DNP"[hi], n, h);
    Axis fine[3];
    fine[0] = fine_axis(n, h, lo, hi, true);
    fine[1] = fine_axis(1, h, PGPU_BC_DIRICHLET, PGPU_BC_DIRICHLET, true);
    fine[2] = fine_axis(1, 1.0, PGPU_BC_NEUMANN, PGPU_BC_NEUMANN, false);
    std::vector<HostLevel> hl;
    if (!CHECK(build_hierarchy(fine, hl), "%s: a hierarchy", name)) return;
    long bad = 0, pairs = 0, kept = 0;
    char first[200] = "";
    auto fail = [&](const char *fmt, auto... args) {
        if (!bad++) snprintf(first, sizeof first, fmt, args...);
    };
    for (size_t l = 0; l + 1 < hl.size(); ++l, ++pairs) {
        const Axis &a = hl[l].ax[0], &c = hl[l + 1].ax[0];
        const AxisTransfer &t = hl[l].tr[0];
        std::vector<int> cn;
        const bool got = odi_node_map(a, c, t.coarsened, cn);
        const bool want = !t.coarsened ||
                          (a.lo != PGPU_BC_PERIODIC && (a.n % 2 == 1 || (a.lo == PGPU_BC_DIRICHLET &&
                                                                          a.hi == PGPU_BC_DIRICHLET)));
        if (got != want) {
            fail("level %zu (%d -> %d nodes, %s): keeps nodes %d, the rule %d", l, a.n, c.n,
                 t.coarsened ? "coarsened" : "whole", (int)got, (int)want);
            continue;
        }
        if (!got) continue;
        ++kept;
        if ((int)cn.size() != a.n) {
            fail("level %zu: %zu entries for %d nodes", l, cn.size(), a.n);
            continue;
        }
        std::vector<int> named((size_t)c.n, 0);
        for (int i = 0; i < a.n; ++i) {
            const int ps[2] = {t.p0[(size_t)i], t.p1[(size_t)i]};
            const double qs[2] = {t.q0[(size_t)i], t.q1[(size_t)i]};
            if (cn[(size_t)i] >= 0) {
                if (cn[(size_t)i] >= c.n) {
                    fail("level %zu node %d: coarse node %d of %d", l, i, cn[(size_t)i], c.n);
                    continue;
                }
                ++named[(size_t)cn[(size_t)i]];
                for (int m = 0; m < 2; ++m) // storage index I + 1 with weight 1, any other with 0
                    if (qs[m] != 0.0 && !(ps[m] == cn[(size_t)i] + 1 && std::fabs(qs[m] - 1.0) <= 1e-12))
                        fail("level %zu node %d (on coarse node %d): tap %d to storage %d, weight %g", l, i,
                             cn[(size_t)i], m, ps[m], qs[m]);
            } else {
                const int lo_s = i > 0 ? cn[(size_t)i - 1] + 1 : 0, hi_s = i < a.n - 1 ? cn[(size_t)i + 1] + 1 : c.n + 1;
                for (int m = 0; m < 2; ++m)
                    if (qs[m] != 0.0 && ps[m] != lo_s && ps[m] != hi_s)
                        fail("level %zu node %d (between storage %d and %d): tap %d to storage %d, weight %g", l, i,
                             lo_s, hi_s, m, ps[m], qs[m]);
            }
        }
        for (int I = 0; I < c.n; ++I)
            if (named[(size_t)I] != 1) fail("level %zu: coarse node %d named %d times", l, I, named[(size_t)I]);
        // P's stored weights' places along the axis (odi_pw_at's factor): a
        // coarse node takes one, a node between two takes two (its corners
        // below and above), within [0, 2 n - nc), each place once; a coarse
        // node's block finds its nodes' places towards it
        const int np = 2 * a.n - c.n;
        std::vector<int> taken((size_t)np, 0), fI((size_t)c.n, -1);
        for (int i = 0; i < a.n; ++i) {
            const int ci = cn[(size_t)i], p = odi_first_place(i, ci, ci >= 0 || i == 0 ? -1 : cn[(size_t)i - 1]);
            if (ci >= 0 && ci < c.n) fI[(size_t)ci] = i;
            for (int q = 0; q < (ci >= 0 ? 1 : 2); ++q) {
                if (p + q < 0 || p + q >= np) fail("level %zu node %d: place %d of %d", l, i, p + q, np);
                else ++taken[(size_t)(p + q)];
            }
        }
        for (int u = 0; u < np; ++u)
            if (taken[(size_t)u] != 1) fail("level %zu: place %d taken %d times", l, u, taken[(size_t)u]);
        for (int I = 0; I < c.n; ++I)
            for (int o = -1; o <= 1; ++o) {
                const int x = fI[(size_t)I] + o;
                if (o && (x < 0 || x >= a.n || cn[(size_t)x] >= 0)) continue; // (not in its block)
                const int want = odi_first_place(x, cn[(size_t)x], cn[(size_t)x] >= 0 || x == 0 ? -1 : cn[(size_t)x - 1]) +
                                 (o < 0);
                if (odi_place_of(fI[(size_t)I], I, o) != want)
                    fail("level %zu coarse node %d offset %d: place %d, the node's %d", l, I, o,
                         odi_place_of(fI[(size_t)I], I, o), want);
            }
    }
    CHECK(bad == 0, "%s: %ld level pairs, %ld keep nodes; %ld wrong%s%s", name, pairs, kept, bad,
          bad ? ", first: " : "", first);
}

int run(int, char **)
{
    const int faces[5][2] = {{PGPU_BC_DIRICHLET, PGPU_BC_DIRICHLET},
                             {PGPU_BC_NEUMANN, PGPU_BC_NEUMANN},
                             {PGPU_BC_DIRICHLET, PGPU_BC_NEUMANN},
                             {PGPU_BC_NEUMANN, PGPU_BC_DIRICHLET},
                             {PGPU_BC_PERIODIC, PGPU_BC_PERIODIC}};
    static const int large[] = {511, 512, 513, 1023, 1024, 4095, 70001};
    for (const auto &f : faces)
        for (double h : {0.01, 1.0 / 7}) {
            for (int n = 1; n <= 300; ++n) axis_case(n, f[0], f[1], h);
            for (int n : large) axis_case(n, f[0], f[1], h);
        }
    return t_finish("test_odi_host");
}

} // namespace wb_odi_host
