/* test_mask_plan_host.cu -- the coarse build's path tables (the fine faces
 * under each coarse face, from which gen_coarse_kernel averages a coarse
 * level's face fractions), on the host (a unit of the white-box build,
 * whitebox.cu: it calls path_table itself; no device).
 *
 * For fine axes of 1 to 80 nodes and larger ones (odd, even, prime, up to
 * 70001), every pair of face types and periodic rings, two spacings, on
 * every level of the hierarchy the library builds:
 *  - path_table equals the definition (every fine face, walked in order for
 *    each coarse face, whose extent holds the coarse face's midpoint, or
 *    for a wall face overlaps the span from its node to the wall) where
 *    that walk is affordable, on every coarse face; on the large axes on
 *    every 97th coarse face and the last;
 *  - every coarse face has at least one fine face, at most MAX_PATH, each
 *    an index of a fine face of the axis;
 *  - on the large axes the whole table comes back.
 * One check per axis (its levels and faces, the first wrong face), one for
 * its rows' core children (see core_case) and, up to 1024 nodes, one for
 * each point's coarse parents (see parent_case).  And FastDiv, which splits
 * the coarse build's tile indices, against n / d (see fastdiv_case).
 * cpu suite. */
#include "whitebox.h"

namespace wb_mask_plan_host {

using namespace pgpu;

// The definition for coarse face I: the fine faces, in the table's order
// (shift -1, 0, +1 on a periodic axis, then along the axis), whose extent
// (with a relative tolerance of 1e-9) holds the coarse face's midpoint; for
// a wall face, those that overlap the span from its node to the wall.
static std::vector<int> reference_faces(const Axis &a, const Axis &c, int I)
{
    const bool per = a.lo == PGPU_BC_PERIODIC;
    auto pos = [&](const Axis &x, int i) {
        if (i < 0) return per ? x.x[x.n - 1] - x.L : x.xlo;
        if (i >= x.n) return per ? x.x[0] + x.L : x.xhi;
        return x.x[i];
    };
    std::vector<int> out;
    if (!per && (I == 0 || I == c.n)) { // a wall face: every fine face between its node and the wall
        for (int i = 0; i <= a.n; ++i) {
            const double flo = pos(a, i - 1), fhi = pos(a, i), tol = 1e-9 * (fhi - flo);
            if (fhi > pos(c, I - 1) + tol && flo < pos(c, I) - tol) out.push_back(i);
        }
        return out;
    }
    const double mid = 0.5 * (pos(c, I - 1) + pos(c, I));
    for (int s = per ? -1 : 0; s <= (per ? 1 : 0); ++s)
        for (int i = 0; i <= (per ? a.n - 1 : a.n); ++i) {
            const double flo = pos(a, i - 1) + s * a.L, fhi = pos(a, i) + s * a.L;
            const double tol = 1e-9 * (fhi - flo);
            if (mid < flo - tol || mid > fhi + tol) continue;
            out.push_back(i);
        }
    return out;
}

// The hierarchy of an n x 1 (2D) grid whose axis x has faces lo / hi and
// spacing h.
static bool axis_hierarchy(int n, int lo, int hi, double h, const char *name, std::vector<HostLevel> &hl)
{
    Axis fine[3];
    fine[0] = fine_axis(n, h, lo, hi, true);
    fine[1] = fine_axis(1, h, PGPU_BC_DIRICHLET, PGPU_BC_DIRICHLET, true);
    fine[2] = fine_axis(1, 1.0, PGPU_BC_NEUMANN, PGPU_BC_NEUMANN, false);
    if (build_hierarchy(fine, hl)) return true;
    CHECK(0, "%s: no hierarchy", name);
    return false;
}

// Axis x of such a hierarchy: every level's table, one check for the axis.
static void axis_case(const std::vector<HostLevel> &hl, const char *name)
{
    long faces = 0, compared = 0, bad = 0;
    char first[160] = "";
    auto fail = [&](const char *fmt, auto... args) {
        if (!bad++) snprintf(first, sizeof first, fmt, args...);
    };
    int levels = 0;
    for (size_t l = 0; l + 1 < hl.size(); ++l) {
        const Axis &a = hl[l].ax[0], &c = hl[l + 1].ax[0];
        if (!hl[l].tr[0].coarsened) continue;
        ++levels;
        std::vector<int> cnt, idx;
        if (!path_table(a, c, true, cnt, idx)) {
            fail("level %zu (%d -> %d nodes): no table", l, a.n, c.n);
            continue;
        }
        const bool per = a.lo == PGPU_BC_PERIODIC;
        const int last = per ? a.n - 1 : a.n;
        const bool all = (double)a.n * c.n <= 4e6;
        for (int I = 0; I <= c.n; ++I, ++faces) {
            if (cnt[I] < 1 || cnt[I] > MAX_PATH) {
                fail("level %zu face %d: %d fine faces", l, I, cnt[I]);
                continue;
            }
            for (int e = 0; e < cnt[I]; ++e) {
                const int i = idx[(size_t)I * MAX_PATH + e];
                if (i < 0 || i > last) fail("level %zu face %d: fine face %d of 0..%d", l, I, i, last);
            }
            if (!all && I % 97 != 0 && I != c.n) continue;
            ++compared;
            const std::vector<int> want = reference_faces(a, c, I);
            bool same = (int)want.size() == cnt[I];
            for (int e = 0; same && e < cnt[I]; ++e) same = idx[(size_t)I * MAX_PATH + e] == want[(size_t)e];
            if (!same)
                fail("level %zu (%d -> %d nodes) face %d: %d fine faces from %d, the definition %zu from %d", l, a.n,
                     c.n, I, cnt[I], idx[(size_t)I * MAX_PATH], want.size(), want.empty() ? -1 : want[0]);
        }
    }
    CHECK(bad == 0, "%s: %d levels, %ld coarse faces, %ld compared with the definition; %ld wrong%s%s", name, levels,
          faces, compared, bad, bad ? ", first: " : "", first);
}

// Calls fn(l, fine axis, coarse axis, transfer) for each level pair of the
// hierarchy.
template <class F> static void each_pair(const std::vector<HostLevel> &hl, F fn)
{
    for (size_t l = 0; l + 1 < hl.size(); ++l) fn(l, hl[l].ax[0], hl[l + 1].ax[0], hl[l].tr[0]);
}

// Child e of restriction row P by the definition: more than half the row's
// largest weight.  A child within 1e-6 of half (the neighbours of a kept
// node, 1/4 against 1/2, whatever the positions' rounding) is not core:
// rounding made it core at even sizes between Dirichlet walls, and a free
// surface moved a node down on such levels.
static bool core_child(const AxisTransfer &t, int P, int e)
{
    const double *w = &t.rw[(size_t)P * MAX_CHILDREN];
    return w[e] > (0.5 + 1e-6) * *std::max_element(w, w + t.rcnt[P]);
}

// The core children that the coarse build's rows carry (a coarse point is
// Dirichlet where a core child is).
static void core_case(const std::vector<HostLevel> &hl, const char *name)
{
    long rows = 0, bad = 0;
    char first[160] = "";
    each_pair(hl, [&](size_t l, const Axis &a, const Axis &c, const AxisTransfer &t) {
        if (!t.coarsened) return;
        std::vector<int> cnt, idx;
        CoarseAxisHost tab;
        if (!path_table(a, c, true, cnt, idx) || !coarse_axis_table(a, t, cnt, idx, c.n, c.n + 1, 30, tab)) {
            if (!bad++) snprintf(first, sizeof first, "level %zu: no table", l);
            return;
        }
        for (int P = 0; P < c.n; ++P, ++rows) {
            const unsigned core = (unsigned)(tab.row[(size_t)P * 4] >> 16) & 0xffu;
            for (int e = 0; e < t.rcnt[P]; ++e) {
                const bool want = core_child(t, P, e), got = (core >> e) & 1u;
                if (got != want && !bad++)
                    snprintf(first, sizeof first, "level %zu (%d -> %d nodes) row %d child %d: %score", l, a.n, c.n, P,
                             t.ridx[(size_t)P * MAX_CHILDREN + e], got ? "" : "not ");
            }
        }
    });
    CHECK(bad == 0, "%s: core children of %ld coarse rows; %ld wrong%s%s", name, rows, bad, bad ? ", first: " : "",
          first);
}

// parent_table (gen_iso_kernel's parents of each fine point) against the
// restriction rows: every row that holds point i, in ascending order, with
// its weight, and the core flag where i is a core child of one of them.
static void parent_case(const std::vector<HostLevel> &hl, const char *name)
{
    long points = 0, bad = 0;
    char first[160] = "";
    each_pair(hl, [&](size_t l, const Axis &a, const Axis &c, const AxisTransfer &t) {
        std::vector<int> p;
        std::vector<double> w;
        if (!parent_table(t, a.n, c.n, p, w)) {
            if (!bad++) snprintf(first, sizeof first, "level %zu: more than %d parents", l, MAX_PARENTS);
            return;
        }
        for (int i = 0; i < a.n; ++i, ++points) {
            std::vector<int> want;
            std::vector<double> ww;
            bool core = false;
            for (int P = 0; P < c.n; ++P)
                for (int e = 0; e < t.rcnt[P]; ++e)
                    if (t.ridx[(size_t)P * MAX_CHILDREN + e] == i) {
                        want.push_back(P);
                        ww.push_back(t.rw[(size_t)P * MAX_CHILDREN + e]);
                        core = core || core_child(t, P, e);
                    }
            const int got = p[(size_t)i * 4] & 0xff;
            bool same = got == (int)want.size() && ((p[(size_t)i * 4] & 256) != 0) == core && got > 0;
            for (int e = 0; same && e < got; ++e)
                same = p[(size_t)i * 4 + 1 + e] == want[(size_t)e] && w[(size_t)i * MAX_PARENTS + e] == ww[(size_t)e];
            if (!same && !bad++)
                snprintf(first, sizeof first, "level %zu (%d -> %d nodes) point %d: %d parents listed, %zu rows hold it", l,
                         a.n, c.n, i, got, want.size());
        }
    });
    CHECK(bad == 0, "%s: coarse parents of %ld points; %ld wrong%s%s", name, points, bad, bad ? ", first: " : "", first);
}

// FastDiv's quotient equals n / d for divisors 1 to 5000, the powers of two
// and their neighbours, the largest ones and random ones (drawn fresh), each
// with numerators at 0, 1, around d, its multiples and the top of the range
// and random ones.
static void fastdiv_case()
{
    std::vector<uint32_t> ds;
    for (uint32_t d = 1; d <= 5000; ++d) ds.push_back(d);
    for (int b = 1; b < 32; ++b)
        for (int o = -1; o <= 1; ++o) ds.push_back((uint32_t)((1ull << b) + o));
    ds.push_back(0xffffffffu);
    ds.push_back(0xfffffffeu);
    uint64_t x = t_seed() | 1;
    auto next = [&]() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return (uint32_t)(x >> 16);
    };
    for (int r = 0; r < 2000; ++r) ds.push_back(next() | 1u);
    long checked = 0, bad = 0;
    char first[160] = "";
    for (uint32_t d : ds) {
        const FastDiv f(d);
        const uint64_t ns[] = {0, 1, d - 1ull, d, d + 1ull, 2ull * d - 1, 2ull * d, 0x7fffffffull, 0x80000000ull,
                               0xfffffffeull, 0xffffffffull, 0xffffffffull / d * d, 0xffffffffull / d * d - 1};
        for (int k = 0; k < (int)(sizeof ns / sizeof ns[0]) + 64; ++k) {
            const uint64_t n64 = k < (int)(sizeof ns / sizeof ns[0]) ? ns[k] : next();
            if (n64 > 0xffffffffull) continue;
            const uint32_t n = (uint32_t)n64, q = f(n);
            ++checked;
            if (q != n / d && bad++ == 0) snprintf(first, sizeof first, "%u / %u: %u, not %u", n, d, q, n / d);
        }
    }
    CHECK(bad == 0, "FastDiv: %ld quotients, %ld wrong%s%s", checked, bad, bad ? ", first: " : "", first);
}

int run(int, char **)
{
    fastdiv_case();
    const int types[3] = {PGPU_BC_DIRICHLET, PGPU_BC_NEUMANN, PGPU_BC_PERIODIC};
    const char tn[3] = {'D', 'N', 'P'};
    int cases = 0;
    auto run = [&](int n, int lo, int hi, double h) {
        char name[96];
        snprintf(name, sizeof name, "%c%c n %d h %.3g", tn[lo], tn[hi], n, h);
        std::vector<HostLevel> hl;
        if (axis_hierarchy(n, types[lo], types[hi], h, name, hl)) {
            axis_case(hl, name);
            core_case(hl, name);
            if (n <= 1024) parent_case(hl, name); // (its reference is quadratic in n)
        }
        ++cases;
    };
    for (int n = 1; n <= 80; ++n)
        for (int lo = 0; lo < 3; ++lo)
            for (int hi = 0; hi < 3; ++hi) {
                if ((lo == 2) != (hi == 2)) continue; // periodic on both sides or neither
                run(n, lo, hi, 1.0 / (n + 1));
                run(n, lo, hi, 0.37 / n);
            }
    for (int n : {127, 128, 255, 256, 257, 509, 1000, 1023, 1024, 4097, 32768, 40000, 70001})
        for (int lo = 0; lo < 3; ++lo)
            for (int hi = 0; hi < 3; ++hi) {
                if ((lo == 2) != (hi == 2)) continue;
                run(n, lo, hi, 1.0 / (n + 1));
            }
    t_note("%d axes", cases);
    return t_finish("test_mask_plan_host");
}

} // namespace wb_mask_plan_host
