/* mask_ref.c -- see mask_ref.h.  Plain loops in double. */
#include "mask_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

mref mref_make(const ref_grid *g, const uint8_t *mask, const double *beta)
{
    mref m;
    m.g = *g;
    m.mask = mask;
    m.beta = beta;
    return m;
}

int mref_type(const mref *m, int64_t p)
{
    return m->mask ? (int)m->mask[p] : PGPU_CELL_FLUID;
}

/* 2 a b / (a + b) without forming a b, which underflows or overflows for
 * beta beyond about 1e-154 .. 1e154 (the mean lies between min and 2 min). */
double mref_harmonic(double a, double b)
{
    const double lo = a < b ? a : b, hi = a < b ? b : a;
    return lo * (2.0 / (1.0 + lo / hi));
}

static double beta_at(const mref *m, int64_t p)
{
    return m->beta ? m->beta[p] : 1.0;
}

mref_face mref_face_at(const mref *m, int64_t i, int64_t j, int64_t k, int f)
{
    const ref_grid *g = &m->g;
    const int64_t idx[3] = {i, j, k};
    const int64_t p = ref_idx(g, i, j, k);
    const int a = f / 2, side = f % 2;
    mref_face fc = {MREF_FACE_NONE, p, 0.0, 0.0, 0.0};
    if (a >= g->dims)
        return fc;
    const int64_t n = g->n[a], s = g->stride[a];
    const double inv_h = 1.0 / g->h[a], inv_h2 = 1.0 / (g->h[a] * g->h[a]);
    const int at_face = side == 0 ? idx[a] == 1 : idx[a] == n;
    const double bp = beta_at(m, p);
    int64_t q = side == 0 ? p - s : p + s;
    if (at_face) {
        switch (g->bc[f]) {
        case PGPU_BC_DIRICHLET:
            fc.kind = MREF_FACE_DIRICHLET;
            fc.q = q;
            fc.a = bp;
            fc.coef = fc.diag = bp * inv_h2;
            return fc;
        case PGPU_BC_NEUMANN:
            fc.kind = MREF_FACE_NEUMANN;
            fc.q = q;
            fc.a = bp;
            fc.coef = bp * inv_h;
            return fc;
        default: /* periodic: the opposite interior plane; nothing when n == 1 */
            if (n == 1)
                return fc;
            q = side == 0 ? p + (n - 1) * s : p - (n - 1) * s;
            break;
        }
    }
    const int t = mref_type(m, q);
    if (t == PGPU_CELL_SOLID)
        return fc;
    fc.kind = t == PGPU_CELL_FLUID ? MREF_FACE_UNKNOWN : MREF_FACE_HELD;
    fc.q = q;
    fc.a = m->beta ? mref_harmonic(bp, m->beta[q]) : 1.0;
    fc.coef = fc.diag = fc.a * inv_h2;
    return fc;
}

ref_terms mref_point(const mref *m, const double *u, int64_t i, int64_t j, int64_t k, int parts)
{
    ref_terms t = {0.0, 0.0, 0.0};
    const int64_t p = ref_idx(&m->g, i, j, k);
    if (mref_type(m, p) != PGPU_CELL_FLUID)
        return t;
    for (int f = 0; f < 2 * m->g.dims; ++f) {
        const mref_face fc = mref_face_at(m, i, j, k, f);
        if (fc.kind == MREF_FACE_NONE)
            continue;
        t.diag += fc.diag;
        const int part = fc.kind == MREF_FACE_UNKNOWN ? REF_NEIGHBOURS : REF_BOUNDARY;
        if (parts & part) {
            const double term = fc.coef * u[fc.q];
            t.off += term;
            t.offabs += fabs(term);
        }
    }
    return t;
}

void mref_apply(const mref *m, const double *u, double *out, int parts)
{
    REF_FOR_EACH_INTERIOR(&m->g, i, j, k) {
        const int64_t p = ref_idx(&m->g, i, j, k);
        if (mref_type(m, p) != PGPU_CELL_FLUID)
            continue;
        const ref_terms t = mref_point(m, u, i, j, k, parts);
        out[p] = t.diag * u[p] - t.off;
    }
}

/* ---- regions ----------------------------------------------------------------------- */

void mref_regions_free(mref_regions *r)
{
    free(r->label);
    free(r->is_singular);
    free(r->size);
    memset(r, 0, sizeof *r);
}

static int64_t interior_points(const ref_grid *g)
{
    return g->n[0] * g->n[1] * (g->dims == 3 ? g->n[2] : 1);
}

int mref_find_regions(const mref *m, mref_regions *r)
{
    const ref_grid *g = &m->g;
    const int64_t elems = ref_elems(g), npts = interior_points(g);
    memset(r, 0, sizeof *r);
    r->label = malloc((size_t)elems * sizeof(int32_t));
    /* (i, j, k) of each queued point: the flood fill works on indices. */
    int64_t *queue = malloc((size_t)npts * 3 * sizeof(int64_t));
    r->is_singular = malloc((size_t)(npts + 1) * sizeof(int));
    r->size = malloc((size_t)(npts + 1) * sizeof(int64_t));
    if (!r->label || !queue || !r->is_singular || !r->size) {
        free(queue);
        mref_regions_free(r);
        return 0;
    }
    for (int64_t e = 0; e < elems; ++e)
        r->label[e] = -1;
    REF_FOR_EACH_INTERIOR(g, i0, j0, k0) {
        const int64_t p0 = ref_idx(g, i0, j0, k0);
        if (mref_type(m, p0) != PGPU_CELL_FLUID || r->label[p0] >= 0)
            continue;
        const int32_t id = (int32_t)r->count++;
        int touches = 0;
        int64_t head = 0, tail = 0, size = 0;
        r->label[p0] = id;
        queue[3 * tail] = i0, queue[3 * tail + 1] = j0, queue[3 * tail + 2] = k0, ++tail;
        while (head < tail) {
            const int64_t i = queue[3 * head], j = queue[3 * head + 1], k = queue[3 * head + 2];
            ++head;
            ++size;
            for (int f = 0; f < 2 * g->dims; ++f) {
                const mref_face fc = mref_face_at(m, i, j, k, f);
                if (fc.kind == MREF_FACE_HELD || fc.kind == MREF_FACE_DIRICHLET)
                    touches = 1;
                if (fc.kind != MREF_FACE_UNKNOWN || r->label[fc.q] >= 0)
                    continue;
                r->label[fc.q] = id;
                /* the neighbour's indices: one axis moved by one, or wrapped */
                int64_t c[3] = {i, j, k};
                const int a = f / 2;
                c[a] += (f % 2) ? 1 : -1;
                if (c[a] < 1)
                    c[a] = g->n[a];
                else if (c[a] > g->n[a])
                    c[a] = 1;
                queue[3 * tail] = c[0], queue[3 * tail + 1] = c[1], queue[3 * tail + 2] = c[2], ++tail;
            }
        }
        r->is_singular[id] = !touches;
        r->size[id] = size;
        r->singular += !touches;
    }
    free(queue);
    return 1;
}

void mref_rhs_stats(const mref *m, const mref_regions *r, const double *u, const double *f, double *mean_b,
                    double *max_b, double *mag_b)
{
    const ref_grid *g = &m->g;
    /* (the means in long double: the library forms them in 128 bits, and
     * a double sum's rounding, up to n eps of the terms, outgrows the
     * tests' bounds on a region of a few thousand points) */
    long double *sum = calloc((size_t)(r->count + 1), sizeof(long double));
    if (!sum)
        abort(); /* a test helper: no way on without memory */
    for (int64_t id = 0; id < r->count; ++id) {
        if (max_b) max_b[id] = 0.0;
        if (mag_b) mag_b[id] = 0.0;
    }
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const int64_t p = ref_idx(g, i, j, k);
        const int32_t id = r->label[p];
        if (id < 0)
            continue;
        const ref_terms t = mref_point(m, u, i, j, k, REF_BOUNDARY);
        const double b = f[p] + t.off;
        sum[id] += b;
        if (max_b && fabs(b) > max_b[id]) max_b[id] = fabs(b);
        if (mag_b) mag_b[id] += fabs(f[p]) + t.offabs;
    }
    for (int64_t id = 0; id < r->count; ++id) {
        if (mean_b) mean_b[id] = (double)(sum[id] / (long double)r->size[id]);
        if (mag_b) mag_b[id] /= (double)r->size[id];
    }
    free(sum);
}

void mref_project_rhs(const mref *m, const mref_regions *r, const double *u, const double *f, double *fb)
{
    const ref_grid *g = &m->g;
    double *mean = malloc((size_t)(r->count + 1) * sizeof(double));
    if (!mean)
        abort(); /* a test helper: no way on without memory */
    mref_rhs_stats(m, r, u, f, mean, NULL, NULL);
    memcpy(fb, f, (size_t)ref_elems(g) * sizeof(double));
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const int64_t p = ref_idx(g, i, j, k);
        const int32_t id = r->label[p];
        if (id >= 0 && r->is_singular[id])
            fb[p] = f[p] - mean[id];
    }
    free(mean);
}

void mref_project_u(const mref *m, const mref_regions *r, double *u, double *means)
{
    const ref_grid *g = &m->g;
    long double *sum = calloc((size_t)(r->count + 1), sizeof(long double)); /* (as mref_rhs_stats) */
    double *mean = calloc((size_t)(r->count + 1), sizeof(double));
    if (!sum || !mean)
        abort();
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const int64_t p = ref_idx(g, i, j, k);
        if (r->label[p] >= 0)
            sum[r->label[p]] += u[p];
    }
    for (int64_t id = 0; id < r->count; ++id) {
        mean[id] = r->is_singular[id] ? (double)(sum[id] / (long double)r->size[id]) : 0.0;
        if (means)
            means[id] = mean[id];
    }
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const int64_t p = ref_idx(g, i, j, k);
        const int32_t id = r->label[p];
        if (id >= 0 && r->is_singular[id])
            u[p] -= mean[id];
    }
    free(sum);
    free(mean);
}

ref_norms mref_residual(const mref *m, const mref_regions *r, const double *u, const double *f, double *res,
                        double *mag_r, double *mag_b)
{
    const ref_grid *g = &m->g;
    ref_norms nm = {0.0, 0.0, 0.0, 0.0, 0.0};
    double *mean = malloc((size_t)(r->count + 1) * sizeof(double));
    if (!mean)
        abort();
    mref_rhs_stats(m, r, u, f, mean, NULL, NULL);
    double rr = 0.0, bb = 0.0, mr = 0.0, mb = 0.0;
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const int64_t p = ref_idx(g, i, j, k);
        const int32_t id = r->label[p];
        if (id < 0)
            continue;
        const double shift = r->is_singular[id] ? mean[id] : 0.0;
        const ref_terms all = mref_point(m, u, i, j, k, REF_ALL_TERMS);
        const ref_terms bnd = mref_point(m, u, i, j, k, REF_BOUNDARY);
        const double b = (f[p] - shift) + bnd.off;
        const double rp = (f[p] - shift) + all.off - all.diag * u[p];
        if (res)
            res[p] = rp;
        rr += rp * rp;
        bb += b * b;
        if (fabs(rp) > nm.max || rp != rp)
            nm.max = fabs(rp);
        const double er = fabs(f[p]) + fabs(shift) + all.offabs + all.diag * fabs(u[p]);
        const double eb = fabs(f[p]) + fabs(shift) + bnd.offabs;
        mr += er * er;
        mb += eb * eb;
    }
    free(mean);
    nm.norm = sqrt(rr);
    nm.rhs_norm = sqrt(bb);
    nm.relative = nm.rhs_norm > 0.0 ? nm.norm / nm.rhs_norm : nm.norm;
    if (mag_r)
        *mag_r = sqrt(mr);
    if (mag_b)
        *mag_b = sqrt(mb);
    return nm;
}

/* ---- relaxation -------------------------------------------------------------------- */

static int selected(const ref_grid *g, int colours, int64_t i, int64_t j, int64_t k)
{
    return ref_is_red(g, i, j, k) ? (colours & REF_RED) != 0 : (colours & REF_BLACK) != 0;
}

void mref_relax(const mref *m, const double *uin, double *uout, const double *fb, double omega, int colours)
{
    const ref_grid *g = &m->g;
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const int64_t p = ref_idx(g, i, j, k);
        uout[p] = uin[p];
        if (mref_type(m, p) != PGPU_CELL_FLUID || !selected(g, colours, i, j, k))
            continue;
        const ref_terms t = mref_point(m, uin, i, j, k, REF_ALL_TERMS);
        if (t.diag != 0.0)
            uout[p] = (1.0 - omega) * uin[p] + omega * (fb[p] + t.off) / t.diag;
    }
}

void mref_relax_bound(const mref *m, const double *uin, const double *fb, const double *smag, double omega,
                      int colours, const double *err_in, double *err_out)
{
    const ref_grid *g = &m->g;
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const int64_t p = ref_idx(g, i, j, k);
        const double carried = err_in ? err_in[p] : 0.0;
        err_out[p] = carried;
        if (mref_type(m, p) != PGPU_CELL_FLUID || !selected(g, colours, i, j, k))
            continue;
        const ref_terms t = mref_point(m, uin, i, j, k, REF_ALL_TERMS);
        if (t.diag == 0.0)
            continue;
        double e = fabs(uin[p]) + omega * (fabs(fb[p]) + (smag ? smag[p] : 0.0) + t.offabs) / t.diag;
        if (err_in) {
            /* Errors already in the unknowns pass through with the update's
             * own (positive) coefficients; data carries none. */
            const double through = mref_point(m, err_in, i, j, k, REF_NEIGHBOURS).off;
            e += fabs(1.0 - omega) * carried + omega * through / t.diag;
        }
        err_out[p] = e;
    }
}

int mref_step(const mref *m, const mref_regions *r, double *u, const double *f, double omega, int rbgs)
{
    const size_t bytes = (size_t)ref_elems(&m->g) * sizeof(double);
    double *fb = malloc(bytes), *old = malloc(bytes);
    if (!fb || !old) {
        free(fb);
        free(old);
        return 0;
    }
    mref_project_rhs(m, r, u, f, fb);
    memcpy(old, u, bytes);
    mref_relax(m, old, u, fb, omega, rbgs ? REF_RED : REF_ALL_POINTS);
    if (rbgs) {
        memcpy(old, u, bytes);
        mref_relax(m, old, u, fb, omega, REF_BLACK);
    }
    mref_project_u(m, r, u, NULL);
    free(fb);
    free(old);
    return 1;
}

int mref_step_bound(const mref *m, const mref_regions *r, const double *uin, const double *f, double omega,
                    int rbgs, double *bound)
{
    const ref_grid *g = &m->g;
    const size_t bytes = (size_t)ref_elems(g) * sizeof(double);
    double *fb = malloc(bytes), *smag = calloc((size_t)ref_elems(g), sizeof(double));
    double *half = malloc(bytes), *b1 = calloc((size_t)ref_elems(g), sizeof(double));
    double *max_b = malloc((size_t)(r->count + 1) * sizeof(double));
    double *sum = calloc((size_t)(r->count + 1), sizeof(double));
    if (!fb || !smag || !half || !b1 || !max_b || !sum) {
        free(fb), free(smag), free(half), free(b1), free(max_b), free(sum);
        return 0;
    }
    mref_rhs_stats(m, r, uin, f, NULL, max_b, NULL);
    double bmax = 0.0;
    for (int64_t id = 0; id < r->count; ++id)
        if (r->is_singular[id] && max_b[id] > bmax)
            bmax = max_b[id];
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const int64_t p = ref_idx(g, i, j, k);
        if (r->label[p] >= 0 && r->is_singular[r->label[p]])
            smag[p] = bmax;
    }
    mref_project_rhs(m, r, uin, f, fb);
    memset(bound, 0, bytes);
    mref_relax_bound(m, uin, fb, smag, omega, rbgs ? REF_RED : REF_ALL_POINTS, NULL, rbgs ? b1 : bound);
    /* the values after the step (before the projection of u); ghosts as uin */
    memcpy(half, uin, bytes);
    mref_relax(m, uin, half, fb, omega, rbgs ? REF_RED : REF_ALL_POINTS);
    if (rbgs) {
        double *after = malloc(bytes);
        if (!after) {
            free(fb), free(smag), free(half), free(b1), free(max_b), free(sum);
            return 0;
        }
        mref_relax_bound(m, half, fb, smag, omega, REF_BLACK, b1, bound);
        memcpy(after, half, bytes);
        mref_relax(m, half, after, fb, omega, REF_BLACK);
        memcpy(half, after, bytes);
        free(after);
    }
    /* the projection of u: the region's mean bound and the largest |u| of
     * the singular regions (what the mean is formed relative to) */
    double umax = 0.0;
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const int64_t p = ref_idx(g, i, j, k);
        const int32_t id = r->label[p];
        if (id >= 0 && r->is_singular[id]) {
            sum[id] += bound[p];
            if (fabs(half[p]) > umax)
                umax = fabs(half[p]);
        }
    }
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const int64_t p = ref_idx(g, i, j, k);
        const int32_t id = r->label[p];
        if (id >= 0 && r->is_singular[id])
            bound[p] += sum[id] / (double)r->size[id] + umax;
    }
    free(fb), free(smag), free(half), free(b1), free(max_b), free(sum);
    return 1;
}

/* ---- geometry ---------------------------------------------------------------------- */

const char *mref_shape_name(int shape)
{
    static const char *names[MREF_SHAPE_COUNT] = {"no mask", "sphere", "staircase", "thin walls", "pockets",
                                                  "pool", "cells on the box", "random solid",
                                                  "sphere, solid x layers", "held pocket"};
    return shape >= 0 && shape < MREF_SHAPE_COUNT ? names[shape] : "?";
}

void mref_shape(const ref_grid *g, int shape, uint8_t *mask)
{
    const int is3d = g->dims == 3;
    const int64_t nx = g->n[0], ny = g->n[1], nz = g->n[2];
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const int64_t p = ref_idx(g, i, j, k);
        const double x = (i - 0.5) / nx, y = (j - 0.5) / ny, z = is3d ? (k - 0.5) / nz : 0.5;
        const double up = is3d ? z : y;
        const double r2 = (x - .5) * (x - .5) + (y - .5) * (y - .5) + (is3d ? (z - .5) * (z - .5) : 0.0);
        uint8_t t = PGPU_CELL_FLUID;
        switch (shape) {
        case MREF_SHAPE_SPHERE:
        case MREF_SHAPE_SPHERE_WALL:
            if (r2 < 0.3 * 0.3 || (shape == MREF_SHAPE_SPHERE_WALL && (i == 1 || i == nx)))
                t = PGPU_CELL_SOLID;
            break;
        case MREF_SHAPE_STAIRCASE: {
            /* five steps along x, in 3D three more along y */
            const double height = 0.12 * (1.0 + floor(5.0 * x)) + (is3d ? 0.08 * floor(3.0 * y) : 0.0);
            if (up < height)
                t = PGPU_CELL_SOLID;
            break;
        }
        case MREF_SHAPE_WALLS:
            /* a wall across x at i = nx/3, open above 3/4 */
            if (i == nx / 3 && up < 0.75)
                t = PGPU_CELL_SOLID;
            /* a wall across "up" from 0.55 to 0.9 in x (free-standing: touches no face) */
            if ((is3d ? k == nz / 2 : j == ny / 2) && x > 0.55 && x < 0.9 && (!is3d || (y > 0.1 && y < 0.9)))
                t = PGPU_CELL_SOLID;
            /* 3D: a wall across y at j = 2ny/3 for x > 0.4 */
            if (is3d && j == 2 * ny / 3 && x > 0.4)
                t = PGPU_CELL_SOLID;
            break;
        case MREF_SHAPE_POCKET: {
            if (r2 > 0.2 * 0.2 && r2 < 0.3 * 0.3)
                t = PGPU_CELL_SOLID;
            if (r2 <= 0.2 * 0.2 && i == nx / 2)
                t = PGPU_CELL_SOLID;
            /* the one-point pocket at (3, 3, 3): its face neighbours solid */
            const int64_t di = i - 3, dj = j - 3, dk = is3d ? k - 3 : 0;
            const int64_t dist = llabs(di) + llabs(dj) + llabs(dk);
            if (dist == 1)
                t = PGPU_CELL_SOLID;
            if (dist == 0)
                t = PGPU_CELL_FLUID;
            break;
        }
        case MREF_SHAPE_CELLS: {
            if (r2 < 0.25 * 0.25)
                t = PGPU_CELL_SOLID;
            /* 1-based; 2D: the low corner, the low x face, the high corner */
            const int64_t c3[4][3] = {{1, 1, 1}, {1, 1, nz / 2}, {1, ny / 2, nz / 2}, {nx, ny, nz}};
            const int64_t c2[3][3] = {{1, 1, 0}, {1, ny / 2, 0}, {nx, ny, 0}};
            const int nc = is3d ? 4 : 3;
            for (int pass = 0; pass < 2; ++pass)
                for (int q = 0; q < nc; ++q) {
                    const int64_t *c = is3d ? c3[q] : c2[q];
                    const int64_t dist = llabs(i - c[0]) + llabs(j - c[1]) + (is3d ? llabs(k - c[2]) : 0);
                    if (pass == 0 && dist == 1)
                        t = PGPU_CELL_SOLID;
                    if (pass == 1 && dist == 0)
                        t = PGPU_CELL_FLUID;
                }
            break;
        }
        case MREF_SHAPE_RANDOM: {
            const double r = t_rand(0.0, 1.0);
            if (r < 0.35)
                t = PGPU_CELL_SOLID;
            else if (r < 0.36)
                t = PGPU_CELL_DIRICHLET;
            break;
        }
        case MREF_SHAPE_HELD: {
            const int64_t n3[3] = {nx, ny, nz}, at[3] = {i - 1, j - 1, k - 1};
            int in = 1, shell = 0, held = 1;
            for (int d = 0; d < (is3d ? 3 : 2); ++d) {
                const int64_t a = (int64_t)(0.3 * (double)n3[d]), b = (int64_t)(0.7 * (double)n3[d]);
                in = in && at[d] >= a && at[d] <= b;
                shell = shell || at[d] == a || at[d] == b;
                held = held && at[d] == 2 * ((a + b) / 4);
            }
            if (in && shell)
                t = PGPU_CELL_SOLID;
            if (held)
                t = PGPU_CELL_DIRICHLET;
            break;
        }
        case MREF_SHAPE_POOL:
            if (up > 0.7)
                t = PGPU_CELL_DIRICHLET;
            if (x < 0.2 && (is3d ? y < 0.3 && z < 0.25 : y < 0.3))
                t = PGPU_CELL_SOLID;
            break;
        default:
            break;
        }
        mask[p] = t;
    }
}

void mref_beta_field(const ref_grid *g, int kind, double jump, double *beta)
{
    const int is3d = g->dims == 3;
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const int64_t p = ref_idx(g, i, j, k);
        const double x = (i - 0.5) / g->n[0], y = (j - 0.5) / g->n[1], z = is3d ? (k - 0.5) / g->n[2] : 0.5;
        const double up = is3d ? z : y;
        double b = 1.0;
        switch (kind) {
        case MREF_BETA_SMOOTH:
            b = 1.0 + 0.5 * sin(3.0 * x) * cos(2.0 * y) + (is3d ? 0.3 * sin(2.0 * z) : 0.0);
            break;
        case MREF_BETA_JUMP:
            b = up > 0.5 ? jump : 1.0;
            break;
        case MREF_BETA_RANDOM:
            b = t_rand(0.1, 10.0);
            break;
        case MREF_BETA_BALL: {
            const double dx = x - 0.45, dy = y - 0.55, dz = is3d ? z - 0.5 : 0.0;
            b = dx * dx + dy * dy + dz * dz < 0.09 ? jump : 1.0;
            break;
        }
        case MREF_BETA_CONST:
            b = jump;
            break;
        default:
            break;
        }
        beta[p] = b;
    }
}

double mref_poison(void)
{
    const uint64_t bits = 0x7ffdeadbeef00000ull;
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

void mref_random_data(const mref *m, double *u, double *f, double fscale, double foffset)
{
    const ref_grid *g = &m->g;
    const double poison = mref_poison();
    for (int64_t e = 0; e < ref_elems(g); ++e) {
        int face = -1;
        const int kind = ref_classify(g, e, &face);
        u[e] = f[e] = poison;
        if (kind == REF_EDGE_GHOST) {
            u[e] = T_POISON_FINITE;
        } else if (kind == REF_FACE_GHOST) {
            if (g->bc[face] != PGPU_BC_PERIODIC)
                u[e] = t_rand(-1.0, 1.0);
        } else if (kind == REF_INTERIOR) {
            switch (mref_type(m, e)) {
            case PGPU_CELL_FLUID:
                u[e] = t_rand(-1.0, 1.0);
                f[e] = fscale * (t_rand(-1.0, 1.0) + foffset);
                break;
            case PGPU_CELL_DIRICHLET:
                u[e] = t_rand(2.0, 3.0);
                break;
            default:
                break;
            }
        }
    }
}
