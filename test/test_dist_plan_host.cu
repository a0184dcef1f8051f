/* test_dist_plan_host.cu -- the distributed multigrid hierarchy, planned on
 * the host for every rank of a communicator that does not exist (no device,
 * no NCCL: a unit of the white-box build, it calls the planner itself).
 *
 * For global grids of odd and even sizes, every face set of the split axis,
 * 2D and 3D, anisotropic spacing (semicoarsening) and 1 to 8 ranks:
 *  - every rank plans the same number of slab levels (a rank that planned
 *    another would enter other collectives: a hang);
 *  - on each slab level the ranks' node ranges tile the global axis, every
 *    rank at least two nodes; the ranks that own the first replicated
 *    level's nodes tile it;
 *  - the slab axis is the global axis restricted (positions, widths), a face
 *    towards another rank a Dirichlet face at the neighbour's node;
 *  - each slab's restriction rows are the global rows of its own coarse
 *    nodes, children at most one node across its faces; together the ranks'
 *    rows are every global row, each once, with its weights;
 *  - each slab's interpolation taps, mapped back, are the global taps
 *    (where their weight is not zero), at most one coarse node across;
 *    FMG's cubic taps too, except between two slab levels where a global
 *    tap lies further: there another window of four, exact for cubics;
 *  - levels from the first replicated one on are the global levels;
 *  - an odd periodic split axis has no plan (its ring is not nested);
 *  - the paired smoothing's bands: where they are used, and their nodes'
 *    couplings equal those of the slab (this rank's or the neighbour's)
 *    that holds the node.
 * And the all-periodic FFT route's plan (plan_dist_rows), its moves
 * simulated with tagged values for 1 to 8 ranks.
 * cpu suite. */
#include "whitebox.h"

namespace wb_dist_plan_host {

static int checks = 0, failures = 0;
static long long shifted = 0; // fine nodes whose cubic window was moved inside the halo
#define PLAN_CHECK(cond, ...)                                                                                         \
    do {                                                                                                              \
        ++checks;                                                                                                     \
        if (!(cond)) {                                                                                                \
            if (++failures <= 40) {                                                                                   \
                printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                           \
                printf(__VA_ARGS__);                                                                                  \
                printf("\n");                                                                                         \
            }                                                                                                         \
        }                                                                                                             \
    } while (0)

using namespace pgpu;

static pgpu_config make(int64_t nx, int64_t ny, int64_t nz, const char *bc, double hz_scale)
{
    pgpu_config c = pgpu_config_default(nx, ny, nz);
    c.flags = PGPU_VCYCLE | PGPU_DOUBLE;
    c.hx = 1.0 / (double)(nx + 1);
    c.hy = 1.3 / (double)(ny + 1);
    c.hz = hz_scale / (double)(nz + 1);
    for (int k = 0; k < 6; ++k)
        c.bc[k] = bc[k] == 'N' ? PGPU_BC_NEUMANN : bc[k] == 'P' ? PGPU_BC_PERIODIC : PGPU_BC_DIRICHLET;
    return c;
}

// Every rank's plan for c over R ranks; false: no plan (the same on every rank).
// want_plan: 1 must plan, -1 either (an odd periodic split axis: no plan where its ring is the first coarsening)
static bool plan_case(const pgpu_config &c, int R, const char *name, int want_plan)
{
    std::vector<Dist> d(R);
    std::vector<std::vector<HostLevel>> hl(R);
    int planned = 0;
    for (int r = 0; r < R; ++r) {
        char err[ERR_LEN] = {0};
        pgpu_config local;
        if (dist_configs(&c, R, r, d[r], local, err) != PGPU_SUCCESS) {
            PLAN_CHECK(false, "%s: rank %d configs: %s", name, r, err);
            return false;
        }
        planned += dist_plan(d[r], hl[r], err) ? 1 : 0;
    }
    PLAN_CHECK(planned == 0 || planned == R, "%s: %d of %d ranks planned", name, planned, R);
    PLAN_CHECK(want_plan < 0 || planned == R, "%s: no plan", name);
    if (planned != R) return false;
    // The global hierarchy, as the planner built it.
    const bool is3d = c.nz > 1;
    const int ax = is3d ? 2 : 1;
    pgpu_config g = d[0].global;
    Axis fine[3];
    fine_axes(g, fine);
    std::vector<HostLevel> hg;
    build_hierarchy(fine, hg);
    const int nd = d[0].levels, nl = (int)hg.size();
    for (int r = 1; r < R; ++r) PLAN_CHECK(d[r].levels == nd, "%s: rank %d plans %d slab levels, rank 0 %d", name, r, d[r].levels, nd);
    PLAN_CHECK(nd >= 1 && nd < nl, "%s: %d slab levels of %d", name, nd, nl);
    for (int r = 0; r < R; ++r) PLAN_CHECK((int)hl[r].size() == nl, "%s: rank %d has %zu levels, global %d", name, r, hl[r].size(), nl);
    const bool per = g.bc[2 * ax] == PGPU_BC_PERIODIC && R > 1;
    // Ranges tile each slab level; the own ranges tile the first replicated one.
    for (int l = 0; l <= nd && l < nl; ++l) {
        int64_t next = 0;
        for (int r = 0; r < R; ++r) {
            const int64_t a = l < nd ? d[r].lva[l] : d[r].own_a[r], n = l < nd ? hl[r][l].ax[ax].n : d[r].own_b[r] - d[r].own_a[r];
            if (l == nd) { // every rank has every rank's own range
                for (int q = 1; q < R; ++q)
                    PLAN_CHECK(d[q].own_a[r] == d[0].own_a[r] && d[q].own_b[r] == d[0].own_b[r], "%s: own ranges differ", name);
            }
            if (l == nd && n == 0) continue; // a rank may own no node of the first replicated level
            PLAN_CHECK(a == next, "%s: level %d rank %d starts at %lld, expected %lld", name, l, r, (long long)a, (long long)next);
            if (l < nd) PLAN_CHECK(n >= 2, "%s: level %d rank %d holds %lld nodes", name, l, r, (long long)n);
            next = a + n;
        }
        PLAN_CHECK(next == hg[l].ax[ax].n, "%s: level %d covered to %lld of %d", name, l, (long long)next, hg[l].ax[ax].n);
    }
    for (int r = 0; r < R; ++r) {
        for (int l = 0; l < nl; ++l) {
            for (int dd = 0; dd < 3; ++dd) {
                const Axis &S = hl[r][l].ax[dd], &G = hg[l].ax[dd];
                if (dd != ax || l >= nd) {
                    PLAN_CHECK(S.n == G.n && S.x == G.x && S.lo == G.lo && S.hi == G.hi, "%s: rank %d level %d axis %d not global", name, r, l, dd);
                    continue;
                }
                const int64_t a = d[r].lva[l], n = S.n, N = G.n;
                bool same = true;
                for (int64_t i = 0; i < n; ++i) same = same && S.x[i] == G.x[a + i] && S.w[i] == G.w[a + i];
                PLAN_CHECK(same, "%s: rank %d level %d: the slab's nodes are not the global ones", name, r, l);
                const bool lo_if = R > 1 && (a > 0 || per), hi_if = R > 1 && (a + n < N || per);
                if (lo_if) PLAN_CHECK(S.lo == PGPU_BC_DIRICHLET && S.xlo == (a > 0 ? G.x[a - 1] : G.x[N - 1] - G.L), "%s: rank %d level %d: low face", name, r, l);
                else PLAN_CHECK(S.lo == G.lo && S.xlo == G.xlo, "%s: rank %d level %d: low wall", name, r, l);
                if (hi_if) PLAN_CHECK(S.hi == PGPU_BC_DIRICHLET && S.xhi == (a + n < N ? G.x[a + n] : G.x[0] + G.L), "%s: rank %d level %d: high face", name, r, l);
                else PLAN_CHECK(S.hi == G.hi && S.xhi == G.xhi, "%s: rank %d level %d: high wall", name, r, l);
            }
        }
        // Transfers of the slab levels along the split axis.
        for (int l = 0; l < nd; ++l) {
            const AxisTransfer &t = hl[r][l].tr[ax], &tg = hg[l].tr[ax];
            const int64_t a = d[r].lva[l], n = hl[r][l].ax[ax].n, N = hg[l].ax[ax].n;
            const bool slab_c = l + 1 < nd;
            const int64_t ca = slab_c ? d[r].lva[l + 1] : 0, nc = slab_c ? hl[r][l + 1].ax[ax].n : hg[l + 1].ax[ax].n;
            const int64_t Nc = hg[l + 1].ax[ax].n;
            auto back = [&](int64_t s) { // a coarse storage index of the slab's tables, in the global level's
                if (!slab_c) return s;
                int64_t J = ca + s - 1;
                if (per) J = (J % Nc + Nc) % Nc;
                return J + 1;
            };
            for (int64_t i = 0; i < n; ++i) {
                const int64_t ig = a + i;
                const int64_t P[2] = {t.p0[i], t.p1[i]}, Pg[2] = {tg.p0[ig], tg.p1[ig]};
                const double Q[2] = {t.q0[i], t.q1[i]};
                for (int q = 0; q < 2; ++q) {
                    PLAN_CHECK(P[q] >= 0 && P[q] <= nc + 1, "%s: rank %d level %d fine %lld: tap %lld outside 0..%lld", name, r, l, (long long)i, (long long)P[q], (long long)nc + 1);
                    if (Q[q] != 0.0) PLAN_CHECK(back(P[q]) == Pg[q], "%s: rank %d level %d fine %lld: tap %lld is global %lld, want %lld", name, r, l, (long long)i, (long long)P[q], (long long)back(P[q]), (long long)Pg[q]);
                }
                PLAN_CHECK(t.q0[i] == tg.q0[ig] && t.q1[i] == tg.q1[ig], "%s: rank %d level %d: weights differ", name, r, l);
                // FMG's cubic taps: within the halo; to a replicated level
                // the global ones; between slabs the global ones where those
                // stay within the halo, else another cubic window (the
                // interpolant of cubics exact at the node's position).
                bool reach = true, same = true;
                for (int q = 0; q < 4; ++q) {
                    const int64_t c4 = t.c4[(size_t)i * 4 + q];
                    PLAN_CHECK(c4 >= 0 && c4 <= nc + 1, "%s: rank %d level %d fine %lld: cubic tap %lld outside 0..%lld", name, r, l, (long long)i, (long long)c4, (long long)nc + 1);
                    if (!tg.coarsened) continue;
                    const int64_t J = tg.c4[(size_t)ig * 4 + q] - 1; // a global node, or -1 / Nc: a wall
                    if (slab_c) {
                        int64_t s = J - ca + 1;
                        if (per && s < 0) s += Nc;
                        if (per && s > nc + 1) s -= Nc;
                        reach = reach && s >= 0 && s <= nc + 1;
                    }
                    same = same && back(c4) == tg.c4[(size_t)ig * 4 + q] && t.w4[(size_t)i * 4 + q] == tg.w4[(size_t)ig * 4 + q];
                }
                if (!tg.coarsened) continue;
                if (!slab_c || (reach && !per)) { // (periodic: the global window may take a node's other image)
                    PLAN_CHECK(same, "%s: rank %d level %d fine %lld: cubic taps are not the global ones", name, r, l, (long long)i);
                    continue;
                }
                if (!reach) ++shifted;
                const Axis &C = hl[r][l + 1].ax[ax];
                const double xi = hl[r][l].ax[ax].x[i], hc = hg[l + 1].ax[ax].L / Nc;
                double mom[4] = {0, 0, 0, 0};
                for (int q = 0; q < 4; ++q) {
                    const int64_t c4 = t.c4[(size_t)i * 4 + q];
                    const double X = c4 == 0 ? C.xlo : c4 == nc + 1 ? C.xhi : C.x[c4 - 1], dx = (X - xi) / hc;
                    for (int k = 0; k < 4; ++k) mom[k] += t.w4[(size_t)i * 4 + q] * pow(dx, k);
                }
                PLAN_CHECK(fabs(mom[0] - 1) <= 1e-12 && fabs(mom[1]) <= 1e-12 && fabs(mom[2]) <= 1e-12 && fabs(mom[3]) <= 1e-12,
                      "%s: rank %d level %d fine %lld: cubic moments %g %g %g %g", name, r, l, (long long)i, mom[0] - 1, mom[1],
                      mom[2], mom[3]);
            }
            // Rows: this rank's coarse nodes with their global children.
            const int64_t rows = (int64_t)t.rcnt.size(), first = slab_c ? ca : 0;
            PLAN_CHECK(rows == (slab_c ? nc : Nc), "%s: rank %d level %d: %lld rows", name, r, l, (long long)rows);
            for (int64_t I = 0; I < rows; ++I) {
                const int64_t J = first + I;
                const bool mine = slab_c || (J >= d[r].own_a[r] && J < d[r].own_b[r]);
                if (!mine) {
                    PLAN_CHECK(t.rcnt[I] == 0, "%s: rank %d level %d: a row for another rank's node %lld", name, r, l, (long long)J);
                    continue;
                }
                PLAN_CHECK(t.rcnt[I] == tg.rcnt[J], "%s: rank %d level %d node %lld: %d children, global %d", name, r, l, (long long)J, t.rcnt[I], tg.rcnt[J]);
                for (int m = 0; m < t.rcnt[I] && m < tg.rcnt[J]; ++m) {
                    const int64_t kf = t.ridx[(size_t)I * MAX_CHILDREN + m];
                    PLAN_CHECK(kf >= -1 && kf <= n, "%s: rank %d level %d node %lld: child %lld beyond the ghost planes", name, r, l, (long long)J, (long long)kf);
                    const int64_t kg = per ? ((a + kf) % N + N) % N : a + kf;
                    PLAN_CHECK(kg == tg.ridx[(size_t)J * MAX_CHILDREN + m] && t.rw[(size_t)I * MAX_CHILDREN + m] == tg.rw[(size_t)J * MAX_CHILDREN + m] &&
                              t.fw[(size_t)I * MAX_CHILDREN + m] == tg.fw[(size_t)J * MAX_CHILDREN + m],
                          "%s: rank %d level %d node %lld child %d: %lld (%g), global %d (%g)", name, r, l, (long long)J, m, (long long)kg,
                          t.rw[(size_t)I * MAX_CHILDREN + m], tg.ridx[(size_t)J * MAX_CHILDREN + m], tg.rw[(size_t)J * MAX_CHILDREN + m]);
                }
            }
        }
        // The bands (dist_band_pass): alike on every rank, where the split
        // axis is z, every slab of the level has 2 S - 1 nodes or more and a
        // periodic seam an even count; a band node's couplings are those of
        // the slab that holds it (the neighbour's for its nodes, whose face
        // towards this rank is a Dirichlet face at this rank's node).
        const int S = DIST_BAND_S, LB = DIST_BAND_L;
        for (int l = 0; l < nd; ++l) {
            const int64_t N = hg[l].ax[ax].n;
            bool want = ax == 2 && R > 1 && !(per && (N & 1));
            for (int q = 0; q < R; ++q) want = want && hl[q][l].ax[ax].n >= 2 * S - 1;
            PLAN_CHECK((int)d[r].band.size() == nd && d[r].band[l] == want, "%s: rank %d level %d: band %d, want %d", name, r, l,
                  l < (int)d[r].band.size() ? d[r].band[l] : -1, want);
            if (!want || l >= (int)d[r].band.size()) continue;
            const int64_t n = hl[r][l].ax[ax].n;
            for (int side = 0; side < 2; ++side) {
                const int q = side ? d[r].hi_peer : d[r].lo_peer;
                if (q < 0) continue;
                const int64_t nq = hl[q][l].ax[ax].n;
                const AxisCoef mine = axis_coef(hl[r][l].ax[ax]), theirs = axis_coef(hl[q][l].ax[ax]);
                for (int b = 0; b < LB; ++b) {
                    const int64_t k = side ? n - 2 * S + 1 + b : b - S - 1;
                    const bool own = k >= 0 && k < n;
                    const int64_t kk = own ? k : side ? k - n : nq + k;
                    const AxisCoef &ac = own ? mine : theirs;
                    const double cl = d[r].bandc[((size_t)l * 4 + side) * LB + b], ch = d[r].bandc[((size_t)l * 4 + 2 + side) * LB + b];
                    PLAN_CHECK(kk >= 0 && fabs(cl - ac.c_lo[kk]) <= 1e-12 * fabs(ac.c_lo[kk]) && fabs(ch - ac.c_hi[kk]) <= 1e-12 * fabs(ac.c_hi[kk]),
                          "%s: rank %d level %d band %d plane %d (node %lld of rank %d): couplings %g %g, the slab's %g %g", name, r, l,
                          side, b, (long long)kk, own ? r : q, cl, ch, ac.c_lo[kk], ac.c_hi[kk]);
                }
            }
        }
    }
    return true;
}

// The all-periodic FFT route's plan (plan_dist_rows) for every rank of R,
// its data movement simulated on the host with a tag per spectral value
// (mode kx, global plane z, y): after the forward moves each rank finds
// every plane of its own x modes where the plane table says (and nowhere
// else: the tags are distinct), every p2p send has the size its receiver
// posts, no receive overwrites the spectrum or another receive; after the
// z solve (the tags negated where the table points) and the moves back,
// every rank's spectrum holds every mode solved.  complex_bytes large
// forces a chunk a plane.
static int rows_case(const pgpu_config &c, int R, size_t complex_bytes, const char *name)
{
    const int64_t ny = c.ny, nz = c.nz, kx = c.nx / 2 + 1;
    std::vector<DistRows> P(R);
    for (int r = 0; r < R; ++r) {
        char err[ERR_LEN] = {0};
        PLAN_CHECK(plan_dist_rows(c, R, r, 2, complex_bytes, P[r], err) == PGPU_SUCCESS, "%s rank %d: %s", name, r, err);
        if (failures) return 0;
    }
    const int K = P[0].chunks;
    for (int r = 0; r < R; ++r) PLAN_CHECK(P[r].chunks == K, "%s: rank %d plans %d chunks, rank 0 %d", name, r, P[r].chunks, K);
    if (failures) return 0;
    auto zc0 = [&](int r, int q, int ch) { return P[r].zc0[(size_t)q * (K + 1) + ch]; };
    // The planes and the modes tile their axes; every chunk holds a plane.
    for (int r = 0; r < R; ++r) {
        int64_t z = 0, k = 0;
        for (int q = 0; q < R; ++q) {
            PLAN_CHECK(P[r].zlo[q] == z && P[r].zn[q] >= 1 && P[r].kxlo[q] == k, "%s rank %d: rank %d's ranges", name, r, q);
            z += P[r].zn[q];
            k += P[r].kxn[q];
            PLAN_CHECK(zc0(r, q, 0) == 0 && zc0(r, q, K) == P[r].zn[q], "%s rank %d: rank %d's chunks", name, r, q);
            for (int ch = 0; ch < K; ++ch) PLAN_CHECK(zc0(r, q, ch + 1) > zc0(r, q, ch), "%s: chunk %d empty", name, ch);
        }
        PLAN_CHECK(z == nz && k == kx, "%s rank %d: %lld planes, %lld modes", name, r, (long long)z, (long long)k);
    }
    if (failures) return 0;
    auto tag = [&](int64_t k, int64_t z, int64_t y) { return (k * nz + z) * ny + y + 1; };
    std::vector<std::vector<int64_t>> C(R);
    std::vector<std::vector<char>> got(R);
    for (int r = 0; r < R; ++r) {
        C[r].assign((size_t)P[r].elems, 0);
        got[r].assign((size_t)P[r].elems, 0);
    }
    // Chunk c's spectrum of rank r: [kx][its planes][y] at C + kx ny z0.
    auto fill = [&](int r, int ch, int64_t sign) {
        const int64_t z0 = zc0(r, r, ch), zc = zc0(r, r, ch + 1) - z0;
        for (int64_t k = 0; k < kx; ++k)
            for (int64_t z = 0; z < zc; ++z)
                for (int64_t y = 0; y < ny; ++y) {
                    const int64_t at = kx * ny * z0 + (k * zc + z) * ny + y, want = sign * tag(k, P[r].zlo[r] + z0 + z, y);
                    if (sign > 0) C[r][(size_t)at] = want;
                    else PLAN_CHECK(C[r][(size_t)at] == want, "%s rank %d: chunk %d's (%lld, %lld, %lld) holds %lld after the moves back",
                                    name, r, ch, (long long)k, (long long)z, (long long)y, (long long)C[r][(size_t)at]);
                }
    };
    // dist_swap of chunk ch between me and q, each side with its own plan.
    auto swap = [&](int ch, bool back) {
        for (int me = 0; me < R; ++me)
            for (int q = 0; q < R; ++q) {
                if (q == me) continue;
                const DistRows &S = P[me], &T = P[q]; // me: C_c's block of q's modes <-> q: its block (me, ch)
                const int64_t z0 = zc0(me, me, ch), zc = zc0(me, me, ch + 1) - z0;
                const int64_t mine = kx * ny * z0 + S.kxlo[q] * zc * ny, nm = S.kxn[q] * zc * ny;
                const int64_t qc = zc0(q, me, ch + 1) - zc0(q, me, ch);
                const int64_t theirs = T.roff[(size_t)me * (K + 1) + ch], nt = T.kxn[q] * qc * ny;
                PLAN_CHECK(nm == nt, "%s chunk %d: rank %d sends %lld to %d, which posts %lld", name, ch, me, (long long)nm, q,
                           (long long)nt);
                PLAN_CHECK(mine >= 0 && mine + nm <= kx * ny * (z0 + zc), "%s: rank %d's block of %d outside its chunk", name, me, q);
                PLAN_CHECK(theirs >= kx * ny * T.zn[q] && theirs + nt <= T.elems,
                           "%s: rank %d's receive from %d at [%lld, %lld) outside [spectrum, C)", name, q, me, (long long)theirs,
                           (long long)(theirs + nt));
                if (failures) return;
                for (int64_t e = 0; e < nm; ++e) {
                    if (back) C[me][(size_t)(mine + e)] = C[q][(size_t)(theirs + e)];
                    else {
                        PLAN_CHECK(!got[q][(size_t)(theirs + e)], "%s: rank %d receives twice at %lld", name, q, (long long)(theirs + e));
                        got[q][(size_t)(theirs + e)] = 1;
                        C[q][(size_t)(theirs + e)] = C[me][(size_t)(mine + e)];
                    }
                    if (failures) return;
                }
            }
    };
    for (int ch = 0; ch < K && !failures; ++ch) {
        for (int r = 0; r < R; ++r) fill(r, ch, 1);
        swap(ch, false);
    }
    // The z solve: every plane of this rank's modes where the table says.
    for (int r = 0; r < R && !failures; ++r)
        for (int64_t z = 0; z < nz && !failures; ++z)
            for (int64_t k = 0; k < P[r].kxn[r]; ++k)
                for (int64_t y = 0; y < ny; ++y) {
                    const int64_t at = P[r].ztab[(size_t)(2 * z)] + k * P[r].ztab[(size_t)(2 * z + 1)] + y;
                    const int64_t want = tag(P[r].kxlo[r] + k, z, y);
                    PLAN_CHECK(at >= 0 && at < P[r].elems && C[r][(size_t)at] == want,
                               "%s rank %d: mode %lld plane %lld y %lld at %lld holds %lld", name, r, (long long)k, (long long)z,
                               (long long)y, (long long)at, at >= 0 && at < P[r].elems ? (long long)C[r][(size_t)at] : -1LL);
                    if (failures) break;
                    C[r][(size_t)at] = -want;
                }
    for (int ch = 0; ch < K && !failures; ++ch) swap(ch, true);
    for (int ch = 0; ch < K && !failures; ++ch)
        for (int r = 0; r < R; ++r) fill(r, ch, -1);
    return K;
}

int run(int, char **)
{
    const char *faces3[] = {"DDDDDD", "NNDNPP", "NNNNNN", "DDNNDN", "PPDDND", "NDPPNN", "PPPPPP"};
    const int64_t sizes[] = {8, 9, 26, 28, 31, 64, 90, 200, 221, 255, 256, 300, 513};
    int planned = 0, cases = 0;
    for (const char *bc : faces3)
        for (int64_t nz : sizes)
            for (int R = 1; R <= 8; ++R) {
                if (nz < 2 * R) continue;
                for (int aniso = 0; aniso < 2; ++aniso) {
                    const double hz = aniso ? 3.0 : 0.9; // 3.0: z weak, the first levels keep it
                    const int64_t nx = nz > 100 ? 64 : 24, ny = nz > 100 ? 48 : 20;
                    pgpu_config c = make(nx, ny, nz, bc, hz);
                    char name[128];
                    snprintf(name, sizeof name, "%s %lldx%lldx%lld%s over %d", bc, (long long)nx, (long long)ny, (long long)nz,
                             aniso ? " (z weak)" : "", R);
                    // An odd periodic split axis cannot be cut (its first coarsening is a ring).
                    const bool ring = bc[4] == 'P' && nz % 2 == 1;
                    if (R == 1) continue; // one rank: the single-GPU hierarchy, no plan
                    const bool ok = plan_case(c, R, name, ring ? -1 : 1);
                    planned += ok;
                    ++cases;
                }
            }
    // 2D: split along y.
    const char *faces2[] = {"DDDDxx", "NNPPxx", "DNNDxx", "PPNNxx"};
    for (const char *bc : faces2)
        for (int64_t ny : {16, 33, 64, 255, 400})
            for (int R = 2; R <= 8; ++R) {
                if (ny < 2 * R) continue;
                pgpu_config c = make(300, ny, 1, bc, 1.0);
                char name[128];
                snprintf(name, sizeof name, "2D %s 300x%lld over %d", bc, (long long)ny, R);
                const bool ring = bc[2] == 'P' && ny % 2 == 1;
                planned += plan_case(c, R, name, ring ? -1 : 1);
                ++cases;
            }
    // Slab levels of two or three nodes per rank next to walls of each type
    // (FMG's cubic taps there), a periodic pair of ranks with four coarse nodes.
    {
        const char *thin[] = {"DDDDNN", "DDDDDN", "DDDDND", "DDDDDD", "DDDDPP"};
        for (const char *bc : thin)
            for (int64_t nz : {8, 9, 10, 12, 14})
                for (int R = 2; R <= 3; ++R) {
                    if (nz < 2 * R) continue;
                    pgpu_config c = make(512, 512, nz, bc, 1.0);
                    c.hx = c.hy = c.hz = 1.0 / 513;
                    char name[128];
                    snprintf(name, sizeof name, "%s 512x512x%lld over %d", bc, (long long)nz, R);
                    const bool ring = bc[4] == 'P' && nz % 2 == 1;
                    planned += plan_case(c, R, name, ring ? -1 : 1);
                    ++cases;
                }
        pgpu_config c2 = make(70000, 8, 1, "DDNNxx", 1.0);
        c2.hx = c2.hy = 1.0 / 70001;
        planned += plan_case(c2, 2, "2D DDNN 70000x8 over 2", 1);
        ++cases;
    }
    // The 512^3-per-GPU grids of the bench: slabs down to a small level.
    for (int R = 2; R <= 8; R *= 2) {
        pgpu_config c = make(512, 512, 512 * R, "DDDDDD", 1.0);
        c.hx = c.hy = c.hz = 1.0 / 513;
        char name[64];
        snprintf(name, sizeof name, "512x512x%d over %d", 512 * R, R);
        if (plan_case(c, R, name, 1)) {
            Dist dd;
            pgpu_config local;
            char err[ERR_LEN] = {0};
            dist_configs(&c, R, 0, dd, local, err);
            std::vector<HostLevel> hl;
            dist_plan(dd, hl, err);
            const Axis *ra = hl[dd.levels].ax; // slabs down to a level below DIST_REPLICATE_AT points
            PLAN_CHECK(dd.levels >= 4 && (double)ra[0].n * ra[1].n * ra[2].n < DIST_REPLICATE_AT, "%s: %d slab levels", name, dd.levels);
            printf("  %s: %d slab levels, replicated from %dx%dx%d\n", name, dd.levels, hl[dd.levels].ax[0].n,
                   hl[dd.levels].ax[1].n, hl[dd.levels].ax[2].n);
        }
    }
    // The all-periodic FFT route (x modes over the ranks: kx >= R).
    int rows = 0, most = 0;
    for (int R = 1; R <= 8; ++R)
        for (int64_t nx : {14, 16, 64})
            for (int64_t ny : {1, 5, 24})
                for (int64_t nz : {2, 3, 7, 16, 33, 64, 100})
                    for (size_t bytes : {(size_t)8, (size_t)16, (size_t)1 << 24}) {
                        if (nz < 2 * R || nx / 2 + 1 < R) continue;
                        pgpu_config c = make(nx, ny, nz, "PPPPPP", 1.0);
                        char name[128];
                        snprintf(name, sizeof name, "FFT rows %lldx%lldx%lld over %d (%zu-byte values)", (long long)nx,
                                 (long long)ny, (long long)nz, R, bytes);
                        most = std::max(most, rows_case(c, R, bytes, name));
                        ++rows;
                        if (failures) break;
                    }
    {
        pgpu_config c = make(1024, 64, 1024, "PPPPPP", 1.0); // 8 chunks of the bench's size in float
        char err[ERR_LEN] = {0};
        DistRows p;
        PLAN_CHECK(plan_dist_rows(c, 4, 0, 2, 8, p, err) == PGPU_SUCCESS && p.chunks == FFT_DIST_CHUNKS,
                   "1024x64x1024 float over 4: %d chunks", p.chunks);
    }
    printf("dist_plan: %d FFT row plans simulated (up to %d chunks)\n", rows, most);
    printf("dist_plan: %d of %d cases planned (%lld cubic windows moved); %d checks, %d failed\n", planned, cases,
           shifted, checks, failures);
    return failures ? 1 : 0;
}

} // namespace wb_dist_plan_host
