/* fft_reference.c -- see fft_reference.h.  Plain loops in double. */
#include "fft_reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double pi = 3.14159265358979323846;

/* sin(pi p / q) and cos(pi p / q) with p reduced modulo 2q first, so that
 * the argument stays below 2 pi whatever the size of p. */
static double sinpi_frac(int64_t p, int64_t q)
{
    p %= 2 * q;
    if (p < 0)
        p += 2 * q;
    return sin(pi * (double)p / (double)q);
}

static double cospi_frac(int64_t p, int64_t q)
{
    p %= 2 * q;
    if (p < 0)
        p += 2 * q;
    return cos(pi * (double)p / (double)q);
}

fref_kind fref_kind_of(pgpu_bc lo, pgpu_bc hi)
{
    if (lo == PGPU_BC_PERIODIC)
        return FREF_DFT;
    if (lo == hi)
        return lo == PGPU_BC_DIRICHLET ? FREF_DST1 : FREF_DCT2;
    return FREF_MIXED;
}

fref_kind fref_axis_kind(const ref_grid *g, int axis)
{
    return fref_kind_of(g->bc[2 * axis], g->bc[2 * axis + 1]);
}

/* ---- the 1D transforms by their sums ---------------------------------------------- */

void fref_dst1(int64_t n, const double *x, double *X)
{
    for (int64_t k = 1; k <= n; ++k) {
        double s = 0.0;
        for (int64_t j = 1; j <= n; ++j)
            s += x[j - 1] * sinpi_frac(j * k, n + 1);
        X[k - 1] = s;
    }
}

void fref_dct2(int64_t n, const double *x, double *X)
{
    for (int64_t k = 0; k < n; ++k) {
        double s = 0.0;
        for (int64_t j = 0; j < n; ++j)
            s += x[j] * cospi_frac(k * (2 * j + 1), 2 * n);
        X[k] = s;
    }
}

void fref_dct3(int64_t n, const double *X, double *x)
{
    for (int64_t j = 0; j < n; ++j) {
        double s = 0.5 * X[0];
        for (int64_t k = 1; k < n; ++k)
            s += X[k] * cospi_frac(k * (2 * j + 1), 2 * n);
        x[j] = s;
    }
}

void fref_dft(int64_t n, int sign, const double *re, const double *im, double *out_re, double *out_im)
{
    for (int64_t k = 0; k < n; ++k) {
        double sr = 0.0, si = 0.0;
        for (int64_t j = 0; j < n; ++j) {
            /* exp(sign 2 pi i jk/n) = c + i sign s */
            const double c = cospi_frac(2 * j * k, n), s = sign * sinpi_frac(2 * j * k, n);
            sr += re[j] * c - im[j] * s;
            si += re[j] * s + im[j] * c;
        }
        out_re[k] = sr;
        out_im[k] = si;
    }
}

double fref_eigen(fref_kind kind, int64_t n, double h, int64_t m)
{
    double s;
    switch (kind) {
    case FREF_DST1: s = sinpi_frac(m + 1, 2 * (n + 1)); break;
    case FREF_DCT2: s = sinpi_frac(m, 2 * n); break;
    case FREF_DFT: s = sinpi_frac(m, n); break;
    case FREF_MIXED: s = sinpi_frac(2 * m + 1, 2 * (2 * n + 1)); break;
    default: return NAN;
    }
    return 4.0 / (h * h) * s * s;
}

/* ---- tridiagonal systems ------------------------------------------------------------ */

/* (diag_i on the diagonal, off on both off-diagonals) x = r, n >= 1. */
static void thomas(int64_t n, const double *diag, double off, const double *r, double *x, double *cp)
{
    double dprev = 0.0, cprev = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        const double sub = i > 0 ? off : 0.0;
        const double piv = diag[i] - sub * cprev;
        cp[i] = i < n - 1 ? off / piv : 0.0;
        x[i] = (r[i] - sub * dprev) / piv;
        dprev = x[i];
        cprev = cp[i];
    }
    for (int64_t i = n - 2; i >= 0; --i)
        x[i] -= cp[i] * x[i + 1];
}

/* The diagonal of T + lambda I. */
static void tri_diag(pgpu_bc lo, pgpu_bc hi, int64_t n, double h, double lambda, double *diag)
{
    const double c = 1.0 / (h * h);
    for (int64_t i = 0; i < n; ++i) {
        const double below = (i > 0 || lo == PGPU_BC_DIRICHLET) ? c : 0.0;
        const double above = (i < n - 1 || hi == PGPU_BC_DIRICHLET) ? c : 0.0;
        diag[i] = below + above + lambda;
    }
}

void fref_tridiag(pgpu_bc lo, pgpu_bc hi, int64_t n, double h, double lambda, const double *r, double *x)
{
    double *diag = malloc((size_t)n * sizeof(double)), *cp = malloc((size_t)n * sizeof(double));
    if (!diag || !cp)
        abort(); /* a test helper: no way to go on without memory */
    tri_diag(lo, hi, n, h, lambda, diag);
    thomas(n, diag, -1.0 / (h * h), r, x, cp);
    free(diag);
    free(cp);
}

/* ---- the solver ---------------------------------------------------------------------- */

/* Transform matrix, stored by input: out[m] = sum_j in[j] * M[j*n + m]
 * (the inner loop over m is a plain axpy).  Mi is the imaginary part (DFT
 * only).  inverse: the inverse transform, normalisation included.  rev (a
 * mixed axis): the Dirichlet face is the high one. */
static void build_matrix(fref_kind kind, int64_t n, int rev, int inverse, double *Mr, double *Mi)
{
    for (int64_t j = 0; j < n; ++j)
        for (int64_t m = 0; m < n; ++m) {
            double *r = &Mr[j * n + m];
            switch (kind) {
            case FREF_DST1: /* its own inverse up to 2/(n+1) */
                *r = sinpi_frac((j + 1) * (m + 1), n + 1) * (inverse ? 2.0 / (double)(n + 1) : 1.0);
                break;
            case FREF_DCT2:
                if (!inverse) /* input j is x_j, output m is X_m */
                    *r = cospi_frac(m * (2 * j + 1), 2 * n);
                else /* input j is X_j, output m is x_m: 2/n DCT-III */
                    *r = (j == 0 ? 1.0 : 2.0) / (double)n * cospi_frac(j * (2 * m + 1), 2 * n);
                break;
            case FREF_MIXED: /* node numbers from the Dirichlet face; inverse: 4/(2n+1) times the transpose */
                if (!inverse)
                    *r = sinpi_frac((2 * m + 1) * (rev ? n - j : j + 1), 2 * n + 1);
                else
                    *r = 4.0 / (double)(2 * n + 1) * sinpi_frac((2 * j + 1) * (rev ? n - m : m + 1), 2 * n + 1);
                break;
            default: /* DFT: exp(-+ 2 pi i jm/n), inverse scaled by 1/n */
                *r = cospi_frac(2 * j * m, n) / (inverse ? (double)n : 1.0);
                Mi[j * n + m] = (inverse ? 1.0 : -1.0) * sinpi_frac(2 * j * m, n) / (inverse ? (double)n : 1.0);
                break;
            }
        }
}

typedef struct box {
    int64_t n[3];
    int64_t N;
} box;

static int64_t box_stride(const box *b, int a)
{
    return a == 0 ? 1 : a == 1 ? b->n[0] : b->n[0] * b->n[1];
}

static void box_coords(const box *b, int64_t q, int64_t c[3])
{
    c[0] = q % b->n[0];
    c[1] = (q / b->n[0]) % b->n[1];
    c[2] = q / (b->n[0] * b->n[1]);
}

/* Applies the matrix of kind along axis a to (re, im); im may be NULL
 * (real data and a real transform). */
static int transform_axis(const box *b, int a, fref_kind kind, int rev, int inverse, double *re, double *im)
{
    const int64_t n = b->n[a], s = box_stride(b, a);
    double *Mr = malloc((size_t)(n * n) * sizeof(double));
    double *Mi = kind == FREF_DFT ? malloc((size_t)(n * n) * sizeof(double)) : NULL;
    double *buf = malloc((size_t)(4 * n) * sizeof(double));
    if (!Mr || (kind == FREF_DFT && !Mi) || !buf) {
        free(Mr);
        free(Mi);
        free(buf);
        return 0;
    }
    build_matrix(kind, n, rev, inverse, Mr, Mi);
    double *xr = buf, *xi = buf + n, *yr = buf + 2 * n, *yi = buf + 3 * n;
    for (int64_t q = 0; q < b->N; ++q) {
        int64_t c[3];
        box_coords(b, q, c);
        if (c[a] != 0)
            continue; /* q starts a line along a only when its coordinate a is 0 */
        for (int64_t m = 0; m < n; ++m) {
            xr[m] = re[q + m * s];
            xi[m] = im ? im[q + m * s] : 0.0;
            yr[m] = yi[m] = 0.0;
        }
        for (int64_t j = 0; j < n; ++j) {
            const double *mr = Mr + j * n;
            const double ar = xr[j], ai = xi[j];
            for (int64_t m = 0; m < n; ++m)
                yr[m] += ar * mr[m];
            if (im)
                for (int64_t m = 0; m < n; ++m)
                    yi[m] += ai * mr[m];
            if (Mi) {
                const double *mi = Mi + j * n;
                for (int64_t m = 0; m < n; ++m) {
                    yr[m] -= ai * mi[m];
                    yi[m] += ar * mi[m];
                }
            }
        }
        for (int64_t m = 0; m < n; ++m) {
            re[q + m * s] = yr[m];
            if (im)
                im[q + m * s] = yi[m];
        }
    }
    free(Mr);
    free(Mi);
    free(buf);
    return 1;
}

/* Along the tridiagonal axis: per line, (T + lambda I) x = rhs, lambda the
 * sum of the other axes' eigenvalues of the line's modes. */
static int solve_lines(const ref_grid *g, const box *b, int a, double *const ev[3], double *re, double *im)
{
    const int64_t n = b->n[a], s = box_stride(b, a);
    const pgpu_bc lo = g->bc[2 * a], hi = g->bc[2 * a + 1];
    const int nn = lo == PGPU_BC_NEUMANN && hi == PGPU_BC_NEUMANN;
    double *buf = malloc((size_t)(4 * n) * sizeof(double));
    if (!buf)
        return 0;
    double *diag = buf, *cp = buf + n, *r = buf + 2 * n, *x = buf + 3 * n;
    for (int64_t q = 0; q < b->N; ++q) {
        int64_t c[3];
        box_coords(b, q, c);
        if (c[a] != 0)
            continue;
        double lambda = 0.0;
        for (int o = 0; o < 3; ++o)
            if (o != a && ev[o])
                lambda += ev[o][c[o]];
        tri_diag(lo, hi, n, g->h[a], lambda, diag);
        const int anchored = nn && lambda == 0.0; /* singular line: x_{n-1} = 0, then mean 0 */
        const int64_t len = anchored ? n - 1 : n;
        for (int part = 0; part < (im ? 2 : 1); ++part) {
            double *v = part ? im : re;
            for (int64_t i = 0; i < n; ++i)
                r[i] = v[q + i * s];
            x[n - 1] = 0.0;
            if (len > 0)
                thomas(len, diag, -1.0 / (g->h[a] * g->h[a]), r, x, cp);
            if (anchored) {
                double mean = 0.0;
                for (int64_t i = 0; i < n; ++i)
                    mean += x[i];
                mean /= (double)n;
                for (int64_t i = 0; i < n; ++i)
                    x[i] -= mean;
            }
            for (int64_t i = 0; i < n; ++i)
                v[q + i * s] = x[i];
        }
    }
    free(buf);
    return 1;
}

int fref_solve_ex(const ref_grid *g, double *u, const double *f, int tri, fref_info *info)
{
    const int dims = g->dims;
    box b;
    b.n[0] = g->n[0];
    b.n[1] = g->n[1];
    b.n[2] = dims == 3 ? g->n[2] : 1;
    b.N = b.n[0] * b.n[1] * b.n[2];

    fref_kind kind[3] = {FREF_DFT, FREF_DFT, FREF_DFT}; /* a missing third axis: n = 1, eigenvalue 0 */
    int mixed = -1, any_dft = 0, rev[3] = {0, 0, 0};
    for (int a = 0; a < dims; ++a) {
        kind[a] = fref_axis_kind(g, a);
        if (kind[a] == FREF_MIXED) {
            mixed = a;
            rev[a] = g->bc[2 * a] == PGPU_BC_NEUMANN;
        }
        any_dft |= kind[a] == FREF_DFT;
    }
    if (tri == FREF_TRI_AUTO)
        tri = mixed;
    else if (tri == FREF_TRI_NONE)
        tri = -1;
    else if (tri < 0 || tri >= dims || kind[tri] == FREF_DFT)
        return 0;

    double *re = calloc((size_t)b.N, sizeof(double));
    double *im = any_dft ? calloc((size_t)b.N, sizeof(double)) : NULL;
    double *ev[3] = {NULL, NULL, NULL};
    int ok = re && (!any_dft || im);
    for (int a = 0; ok && a < dims; ++a) {
        if (a == tri)
            continue;
        ev[a] = malloc((size_t)b.n[a] * sizeof(double));
        ok = ev[a] != NULL;
        for (int64_t m = 0; ok && m < b.n[a]; ++m)
            ev[a][m] = fref_eigen(kind[a], b.n[a], g->h[a], m);
    }

    if (ok) {
        /* b = f + boundary terms - shift, packed (x fastest). */
        const double shift = ref_shift(g, u, f);
        REF_FOR_EACH_INTERIOR(g, i, j, k) {
            const int64_t q = (i - 1) + b.n[0] * ((j - 1) + b.n[1] * (k - ref_k_first(g)));
            re[q] = f[ref_idx(g, i, j, k)] + ref_point(g, u, i, j, k, REF_BOUNDARY).off - shift;
        }
        /* Forward transforms; the data is real until the first DFT. */
        int complex_data = 0;
        for (int a = 0; ok && a < dims; ++a) {
            if (a == tri)
                continue;
            complex_data |= kind[a] == FREF_DFT;
            ok = transform_axis(&b, a, kind[a], rev[a], 0, re, complex_data ? im : NULL);
        }
        if (ok && tri >= 0) {
            ok = solve_lines(g, &b, tri, ev, re, im);
        } else if (ok) {
            for (int64_t q = 0; q < b.N; ++q) {
                int64_t c[3];
                box_coords(&b, q, c);
                double lambda = 0.0;
                for (int a = 0; a < dims; ++a)
                    lambda += ev[a][c[a]];
                if (lambda > 0.0) {
                    re[q] /= lambda;
                    if (im)
                        im[q] /= lambda;
                } else { /* the zero mode of a singular problem */
                    re[q] = 0.0;
                    if (im)
                        im[q] = 0.0;
                }
            }
        }
        for (int a = dims - 1; ok && a >= 0; --a)
            if (a != tri)
                ok = transform_axis(&b, a, kind[a], rev[a], 1, re, im);
        if (ok) {
            double imax = 0.0, rmax = 0.0;
            REF_FOR_EACH_INTERIOR(g, i, j, k) {
                const int64_t q = (i - 1) + b.n[0] * ((j - 1) + b.n[1] * (k - ref_k_first(g)));
                u[ref_idx(g, i, j, k)] = re[q];
                rmax = fmax(rmax, fabs(re[q]));
                if (im)
                    imax = fmax(imax, fabs(im[q]));
            }
            if (info) {
                info->tri_axis = tri;
                info->imag_max = imax;
                info->real_max = rmax;
            }
        }
    }
    free(re);
    free(im);
    for (int a = 0; a < 3; ++a)
        free(ev[a]);
    return ok;
}

int fref_solve(const ref_grid *g, double *u, const double *f)
{
    return fref_solve_ex(g, u, f, FREF_TRI_AUTO, NULL);
}
