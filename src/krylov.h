// krylov.h -- CG (classic, pipelined) and BiCGStab
#pragma once
#include "multigrid.h"
#include "fft.h"
#include "graph.h"

namespace pgpu {

// Conjugate gradients (classic, and the pipelined form of Ghysels and
// Vanroose) and BiCGStab on level 0, preconditioned by nothing, the
// diagonal, one multigrid cycle from zero (classic CG's first: an FMG
// pass), or the FFT solve of the box.
// Every scalar of the recurrences lives on the device: the last block of
// each reduction computes the coefficients that the next kernels read
// (krylov_scalars), so an iteration is a fixed sequence of launches without
// a host synchronisation -- replayed as a graph, capturable under
// PGPU_FIXED -- and the host reads the residual norm every check_interval
// iterations only.
//
// The vectors live in workspace with zero ghosts (the boundary data enter
// once, through the first residual) and are zero at every point that is not
// an unknown: the kernels skip those points, the FFT preconditioner's output
// is masked, and a new mask clears them (reset).
//
// The multigrid preconditioner is the standard cycle (post-smoothing in
// the colour order of pre-smoothing, pre = post by default), which is not
// symmetric, so classic CG takes the flexible coefficients
// (alpha = p.r / p.Ap, beta = -z.Ap / p.Ap: each new direction A-orthogonal
// to the last, Notay's FCG(1)): they equal the classic ones for a
// symmetric preconditioner and keep CG converging when it is not (nothing
// proves the general form's cycle symmetric either).  The symmetric cycle
// (post-smoothing in the reverse colour order) is a much weaker
// preconditioner with red-black smoothing: as a stationary iteration at
// 64^3, V(2,2) reduces the residual by 0.19 per cycle against 0.05 for the
// standard one, and CG around it takes 9 iterations to 1e-10 at 512^3
// against 7 for flexible CG around the standard cycle.  Pipelined CG, whose
// recurrences need a symmetric preconditioner, takes it, and so does
// classic CG where beta varies or a mask is set (Solver::symmetric_cycle;
// the bench's kr-box rows measure both cycles): on 10^6 jumps the standard cycle can
// grow the residual a thousandfold per cycle, and on masks it can be far
// from symmetric; flexible CG around it stalled on both (masks of pockets,
// held cells or thin walls: relative residual 1e-5 to 0.1 after 400
// iterations), where CG around the symmetric cycle converged (the
// symmetric cycle is positive definite whatever its stationary rate, as
// long as the restriction is the interpolation's adjoint and each coarse
// solve symmetric and positive: the smoothing part S + S^T - S^T A S plus a
// semi-definite coarse part).
// The flexible coefficients cost a read of r and of Ap more per iteration.
//
// Singular problems (no Dirichlet face; sealed pockets of a mask): in exact
// arithmetic the residual stays in the range of A (mean zero on each
// singular region) and a constant in a search direction changes neither
// A p nor a dot product with a residual.  Rounding moves the recursive
// residual's mean, and nothing in the recurrences takes it back: in float
// without a preconditioner it grew until r.r was its mean alone (CG ran to
// max_iterations and the constant in u swamped it).  So r's mean is taken
// out as the iterations go: on a singular box the last block of each sum of
// r keeps the mean (KS_RMEAN) and the next update of r subtracts it (no
// extra pass; what is left is one update's rounding, not the sum of all);
// on a mask's singular regions each region's mean is projected out after
// every iteration (Hierarchy::project, three passes: rare domains).  The
// preconditioner's input has its mean passed as the shift (the multigrid and
// FFT solves of a singular box expect a consistent right-hand side), and the
// solver removes the constant from u at the end as for every method.

// Scalar slots (doubles on the device).
enum {
    KS_RR = 0, // ||r||^2 of the recursively updated residual
    KS_BAD,    // non-zero: a breakdown; every coefficient is 0 from then on (u keeps the last good iterate)
    KS_ALPHA,
    KS_BETA,
    KS_OMEGA,
    KS_RHO,    // CG: r.z; BiCGStab: (r0, r); pipelined: gamma = r.u
    KS_PQ,     // CG: p.Ap
    KS_SUM,    // the sum of the preconditioner's next input (its mean times the points)
    KS_RMEAN,  // singular box: the mean of r, taken out of r by the next update (see krylov.h's head)
    KS_COUNT
};

// What the last block of a reduction does with its four sums v.
enum KrylovOp {
    KOP_STORE = 0,    // store the sums (the first stage of a folded reduction)
    KOP_RR,           // [r.r, sum r]: ||r||^2 and the preconditioner's shift
    KOP_SHIFT,        // [sum x]: the preconditioner's shift
    KOP_CG_START,     // [r.z]: rho, beta = 0
    KOP_CG_ALPHA,     // [p.Ap, -, -, p.r]: alpha
    KOP_CG_BETA,      // [r.z, z.Ap]: beta, rho
    KOP_PIPE_START,   // [r.u, w.u, r.r, sum w]: gamma, alpha = gamma / delta, beta = 0
    KOP_PIPE,         // [r.u, w.u, r.r, sum w]: gamma, alpha, beta
    KOP_PIPE0,        // [sum r, w.r, r.r, sum w]: as KOP_PIPE with u = r (no preconditioner)
    KOP_BI_START,     // [r.r, sum r]: rho = ||r||^2 (r0 = r), beta = 0
    KOP_BI_ALPHA,     // [-, r0.v]: alpha
    KOP_BI_S,         // [s.s, sum s]: ||s||^2, the shift
    KOP_BI_OMEGA,     // [-, s.t, t.t]: omega
    KOP_BI_RHO        // [r0.r, r.r, sum r]: rho, ||r||^2, beta
};

template <class T>
__device__ void krylov_scalars(int op, const double *v, double *s, T *shift, double npts, int singular, int flexible)
{
    if (op == KOP_RR || op == KOP_BI_START || op == KOP_BI_S) s[KS_RR] = v[0];
    if (op == KOP_PIPE_START || op == KOP_PIPE || op == KOP_PIPE0) s[KS_RR] = v[2];
    { // the ops that sum r: its mean, for the next update to take out
        const int at = op == KOP_RR || op == KOP_BI_START ? 1 : op == KOP_BI_RHO ? 2 : op == KOP_PIPE0 ? 0 : -1;
        if (at >= 0) s[KS_RMEAN] = singular ? v[at] / npts : 0.0;
    }
    if (shift) { // the ops that sum the preconditioner's next input: its mean
        const int at = op == KOP_SHIFT ? 0
                       : op == KOP_PIPE_START || op == KOP_PIPE || op == KOP_PIPE0 ? 3
                       : op == KOP_RR || op == KOP_BI_START || op == KOP_BI_S ? 1 : -1;
        if (at >= 0) {
            s[KS_SUM] = singular ? v[at] : 0.0;
            store_shift(shift, singular ? v[at] / npts : 0.0);
        }
    }
    auto good = [](double x) { return isfinite(x); };
    if (s[KS_BAD] != 0 || !good(v[0]) || !good(v[1]) || !good(v[2]) || !good(v[3])) { // frozen
        if (op != KOP_STORE && op != KOP_SHIFT && op != KOP_RR && op != KOP_BI_S) s[KS_BAD] = 1;
        s[KS_ALPHA] = s[KS_BETA] = s[KS_OMEGA] = 0;
        return;
    }
    // A denominator that is not positive where its numerator is not zero is a
    // breakdown; a zero numerator (the residual vanished) is not.
    auto ratio = [&](double num, double den, bool positive) {
        if (num == 0) return 0.0;
        if (!(positive ? den > 0 : den != 0) || !good(num / den)) {
            s[KS_BAD] = 1;
            return 0.0;
        }
        return num / den;
    };
    switch (op) {
    case KOP_CG_START:
        s[KS_RHO] = v[0];
        s[KS_BETA] = 0;
        break;
    case KOP_CG_ALPHA:
        s[KS_PQ] = v[0];
        s[KS_ALPHA] = ratio(flexible ? v[3] : s[KS_RHO], v[0], true);
        break;
    case KOP_CG_BETA:
        s[KS_BETA] = flexible ? ratio(-v[1], s[KS_PQ], true) : ratio(v[0], s[KS_RHO], false);
        s[KS_RHO] = v[0];
        break;
    case KOP_PIPE_START:
    case KOP_PIPE:
    case KOP_PIPE0: {
        const double gamma = op == KOP_PIPE0 ? v[2] : v[0], delta = v[1];
        const double beta = op == KOP_PIPE_START ? 0.0 : ratio(gamma, s[KS_RHO], false);
        const double den = op == KOP_PIPE_START ? delta : delta - (beta != 0 ? beta * gamma / s[KS_ALPHA] : 0.0);
        s[KS_BETA] = beta;
        s[KS_ALPHA] = ratio(gamma, den, true);
        s[KS_RHO] = gamma;
        break;
    }
    case KOP_BI_START:
        s[KS_RHO] = v[0];
        s[KS_BETA] = 0;
        s[KS_ALPHA] = s[KS_OMEGA] = 1;
        break;
    case KOP_BI_ALPHA: s[KS_ALPHA] = ratio(s[KS_RHO], v[1], false); break;
    case KOP_BI_OMEGA: s[KS_OMEGA] = ratio(v[1], v[2], true); break;
    case KOP_BI_RHO: {
        const double rho = v[0];
        s[KS_RR] = v[1];
        s[KS_BETA] = s[KS_OMEGA] != 0 ? ratio(rho, s[KS_RHO], false) * (s[KS_ALPHA] / s[KS_OMEGA]) : 0.0;
        if (s[KS_OMEGA] == 0 && v[1] > 0) s[KS_BAD] = 1; // stagnation: t.s = 0 with s != 0
        s[KS_RHO] = rho;
        break;
    }
    default: break;
    }
}

// Block b of the final pass adds partials [b seg, (b+1) seg) of nblocks:
// one block computes the scalars (op), many fold a long list first.
template <class T>
__global__ void __launch_bounds__(FINAL_THREADS) krylov_final_kernel(const double *__restrict__ partials, size_t nblocks,
                                                                     size_t seg, double *out, int op, double *s,
                                                                     T *shift, double npts, int singular, int flexible)
{
    Sum4 v{};
    const size_t end = min(nblocks, seg * (blockIdx.x + 1));
    for (size_t b = seg * blockIdx.x + threadIdx.x; b < end; b += blockDim.x)
#pragma unroll
        for (int q = 0; q < 4; ++q) v.v[q] += partials[4 * b + q];
    v = block_reduce(v);
    if (threadIdx.x != 0) return;
    if (op == KOP_STORE) {
#pragma unroll
        for (int q = 0; q < 4; ++q) out[4 * blockIdx.x + q] = v.v[q];
    } else {
        krylov_scalars<T>(op, v.v, s, shift, npts, singular, flexible);
    }
}

__device__ __forceinline__ void write_partial4(double *partials, Sum4 v)
{
    v = block_reduce(v);
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        const size_t b = blockIdx.x + (size_t)gridDim.x * (blockIdx.y + (size_t)gridDim.y * blockIdx.z);
#pragma unroll
        for (int q = 0; q < 4; ++q) partials[4 * b + q] = v.v[q];
    }
}

// The arrays a Krylov kernel reads and writes (named as in the algorithms;
// each kernel uses a few) and the device scalars.
template <class T> struct KArgs {
    const T *in, *f, *shift, *partner; // the walked vector, f, its shift, a dot partner
    T *out, *x, *r, *u, *w, *z, *q, *s, *p, *v, *t, *ph, *sh, *r0;
    const double *sc;
};

// Kernels that need the operator walk a vector (column_walk, A = double):
enum KrylovWalk {
    KW_RESID = 0,  // out = f - shift - A in; sums [out.out, sum out]
    KW_APPLY,      // out = A in; sums [in.out, partner.out, out.out, partner.in]
    KW_JACOBI,     // out = in / diag; sums [in.out, out.q] (q may be NULL)
    KW_PIPE_START, // w = A u (in = u); sums [r.u, w.u, r.r, sum w]
    KW_PIPE,       // n = A m (in = m) and the pipelined updates; sums as above
    KW_PIPE0       // the same without a preconditioner (u = r, m = w, q = s): n = A w
                   // (in = w), the updates, w - alpha z into another buffer (out)
};

template <class T, int OP> struct KrylovEmit {
    static constexpr bool reads_f = OP == KW_RESID;
    KArgs<T> a;
    Sum4 acc;
    double alpha, beta, rmean;
    __device__ void uniform_diag(double, bool) {}
    __device__ void skip(int64_t, T) {} // not an unknown: stays 0
    __device__ void operator()(int64_t p, double centre, double rhs, double diag, bool)
    {
        if constexpr (OP == KW_RESID) {
            const T r = T(point_res(rhs, diag, centre));
            a.out[p] = r;
            acc.v[0] += (double)r * (double)r;
            acc.v[1] += (double)r;
        } else if constexpr (OP == KW_APPLY) {
            const T o = T(-point_res(rhs, diag, centre));
            a.out[p] = o;
            const double w = a.partner ? (double)a.partner[p] : 0.0;
            acc.v[0] += centre * (double)o;
            acc.v[1] += w * (double)o;
            acc.v[2] += (double)o * (double)o;
            acc.v[3] += w * centre;
        } else if constexpr (OP == KW_JACOBI) {
            const T z = diag > 0 ? T(centre / diag) : T(0); // (a fluid point walled in on every side)
            a.out[p] = z;
            acc.v[0] += centre * (double)z;
            if (a.q) acc.v[1] += (double)z * (double)a.q[p];
        } else if constexpr (OP == KW_PIPE_START) {
            const T w = T(-point_res(rhs, diag, centre));
            a.w[p] = w;
            const double r = (double)a.r[p];
            acc.v[0] += r * centre;
            acc.v[1] += (double)w * centre;
            acc.v[2] += r * r;
            acc.v[3] += (double)w;
        } else if constexpr (OP == KW_PIPE0) { // z = n + b z, s = w + b s, p = r + b p,
                                               // x += a p, r -= mean r + a s, out = w - a z
            const T n = T(-point_res(rhs, diag, centre)), w = T(centre), b = T(beta), al = T(alpha);
            T z = n, s = w, r = a.r[p] - T(rmean), pp = r;
            if (beta != 0) {
                z += b * a.z[p];
                s += b * a.s[p];
                pp += b * a.p[p];
            }
            a.z[p] = z;
            a.s[p] = s;
            a.p[p] = pp;
            T wn = w;
            if (alpha != 0) {
                a.x[p] += al * pp;
                r -= al * s;
                wn -= al * z;
            }
            if (alpha != 0 || rmean != 0) a.r[p] = r;
            a.out[p] = wn;
            acc.v[0] += (double)r;
            acc.v[1] += (double)wn * (double)r;
            acc.v[2] += (double)r * (double)r;
            acc.v[3] += (double)wn;
        } else { // KW_PIPE: z = n + b z, q = m + b q, s = w + b s, p = u + b p,
                 // x += a p, r -= a s, u -= a q, w -= a z
            const T n = T(-point_res(rhs, diag, centre)), m = T(centre), b = T(beta), al = T(alpha);
            T z = n, q = m, s = a.w[p], pp = a.u[p];
            if (beta != 0) {
                z += b * a.z[p];
                q += b * a.q[p];
                s += b * a.s[p];
                pp += b * a.p[p];
            }
            a.z[p] = z;
            a.q[p] = q;
            a.s[p] = s;
            a.p[p] = pp;
            T r = a.r[p], u = a.u[p], w = a.w[p];
            if (alpha != 0) {
                a.x[p] += al * pp;
                r -= al * s;
                u -= al * q;
                w -= al * z;
                a.r[p] = r;
                a.u[p] = u;
                a.w[p] = w;
            }
            acc.v[0] += (double)r * (double)u;
            acc.v[1] += (double)w * (double)u;
            acc.v[2] += (double)r * (double)r;
            acc.v[3] += (double)w;
        }
    }
};

template <class T, int OP, int MK>
__global__ void __launch_bounds__(WALK_THREADS, Tune<T>::norm_blocks)
    krylov_walk_kernel(const Grid<T> g, const KArgs<T> a, double *partials, int kchunk, int nyb, int nchunks)
{
    int i, j, k0, k1;
    KrylovEmit<T, OP> emit{a, Sum4{}, 0.0, 0.0, 0.0};
    if (OP == KW_PIPE || OP == KW_PIPE0) {
        emit.alpha = a.sc[KS_ALPHA];
        emit.beta = a.sc[KS_BETA];
    }
    if (OP == KW_PIPE0) emit.rmean = a.sc[KS_RMEAN];
    if (walk_thread(g.nx, g.ny, g.nz, kchunk, nyb, nchunks, i, j, k0, k1)) {
        const Shift<T> shift = load_shift(a.shift);
        column_walk<T, double, Tune<T>::walk_group, MK>(g, a.in, a.f, i, j, k0, k1, shift, emit);
    }
    if (partials) write_partial4(partials, emit.acc);
}

// Pointwise kernels (column launches over the unknowns):
enum KrylovPoint {
    KP_CG_UPDATE = 0, // x += alpha p, r -= mean r + alpha q; sums [r.r, sum r]
    KP_DOT,           // sums [r.z, z.q] (q may be NULL)
    KP_CG_P,          // p = z + beta p
    KP_BI_P,          // p = r - mean r + beta (p - omega v); sums [sum p]
    KP_BI_S,          // s = r - mean r - alpha v (s may be r); sums [s.s, sum s]
    KP_BI_XR,         // x += alpha ph + omega sh, r = s - omega t; sums [r0.r, r.r, sum r]
    KP_COPY,          // out = in
    KP_MASK           // out = 0 where the point is not an unknown
};

template <class T, int OP>
__global__ void __launch_bounds__(COL_BX *COL_BY)
    krylov_point_kernel(const Grid<T> g, const KArgs<T> a, double *partials, int kchunk, int nyb, int nchunks)
{
    int i, j, k0, k1;
    Sum4 acc{};
    if (col_thread(g, kchunk, nyb, nchunks, i, j, k0, k1)) {
        const double *sc = a.sc;
        const T alpha = sc ? T(sc[KS_ALPHA]) : T(0), beta = sc ? T(sc[KS_BETA]) : T(0),
                omega = sc ? T(sc[KS_OMEGA]) : T(0), rmean = sc ? T(sc[KS_RMEAN]) : T(0);
        for (int k = k0; k < k1; ++k) {
            const int64_t p = at_point(g, i, j, k);
            if (!gen_fluid(g, p)) {
                if (OP == KP_MASK) a.out[p] = T(0);
                continue;
            }
            if constexpr (OP == KP_CG_UPDATE) {
                T r = a.r[p] - rmean;
                if (alpha != T(0)) {
                    a.x[p] += alpha * a.p[p];
                    r -= alpha * a.q[p];
                }
                if (alpha != T(0) || rmean != T(0)) a.r[p] = r;
                acc.v[0] += (double)r * (double)r;
                acc.v[1] += (double)r;
            } else if constexpr (OP == KP_DOT) {
                const double z = (double)a.z[p];
                acc.v[0] += (double)a.r[p] * z;
                if (a.q) acc.v[1] += z * (double)a.q[p];
            } else if constexpr (OP == KP_CG_P) {
                a.p[p] = beta != T(0) ? a.z[p] + beta * a.p[p] : a.z[p];
            } else if constexpr (OP == KP_BI_P) {
                const T r = a.r[p] - rmean;
                const T v = beta != T(0) ? r + beta * (a.p[p] - omega * a.v[p]) : r;
                a.p[p] = v;
                acc.v[0] += (double)v;
            } else if constexpr (OP == KP_BI_S) {
                const T r = a.r[p] - rmean;
                const T s = alpha != T(0) ? r - alpha * a.v[p] : r;
                a.s[p] = s;
                acc.v[0] += (double)s * (double)s;
                acc.v[1] += (double)s;
            } else if constexpr (OP == KP_BI_XR) {
                if (alpha != T(0)) a.x[p] += alpha * a.ph[p];
                T r = a.s[p];
                if (omega != T(0)) {
                    a.x[p] += omega * a.sh[p];
                    r -= omega * a.t[p];
                }
                a.r[p] = r;
                acc.v[0] += (double)a.r0[p] * (double)r;
                acc.v[1] += (double)r * (double)r;
                acc.v[2] += (double)r;
            } else if constexpr (OP == KP_COPY) {
                a.out[p] = a.in[p];
            }
        }
    }
    if (partials) write_partial4(partials, acc);
}

// PGPU_MIXED's float preconditioner: a float level 0 (zero ghosts) with its
// cycle or FFT.
struct FloatPrecond {
    Hierarchy<float> *h = nullptr;
    Multigrid<float> *mg = nullptr;
    FftSolver<float> *fft = nullptr;
    float *zero = nullptr; // a float 0 (the FFT's shift: the input is centred already)
};

// The Krylov method of a handle: its vectors, its reductions, its
// preconditioner (the handle's multigrid or FFT solver, on level 0; with
// PGPU_MIXED the float ones of `fp`).
template <class T> class Krylov {
  public:
    int method = 0, pre = PGPU_PRECOND_NONE;
    bool pipelined = false, flexible = false;
    FloatPrecond fp; // set by the handle for PGPU_MIXED

    ~Krylov()
    {
        if (h_s) cudaFreeHost(h_s);
        if (fork_ev) cudaEventDestroy(fork_ev);
        if (join_ev) cudaEventDestroy(join_ev);
        if (side) cudaStreamDestroy(side);
    }
    pgpu_status init(Env &e, Hierarchy<T> &hh, Multigrid<T> *m, FftSolver<T> *ff, Replay *r, Reducer *rd,
                     const pgpu_config &c);
    // Zeroes every vector (a new mask: points that were unknowns may not be).
    pgpu_status reset();
    // Solves A u = f - shift from u (level 0 must not be bound to anything
    // the caller still needs); cv, fixed, interval as for the other methods.
    pgpu_status run(T *u, const T *f, const T *shift, Convergence cv, bool fixed, int interval, pgpu_report &r);
    // The number of vectors (level-0 arrays) a method and preconditioner need.
    static int vectors(int method, bool pipelined, int pre)
    {
        if (method == PGPU_BICGSTAB) return pre == PGPU_PRECOND_NONE ? 5 : 7;
        if (pipelined) return pre == PGPU_PRECOND_NONE ? 6 : 8;
        return pre == PGPU_PRECOND_NONE ? 3 : 4;
    }

  private:
    Env *env = nullptr;
    Hierarchy<T> *h = nullptr;
    Multigrid<T> *mg = nullptr;
    FftSolver<T> *fft = nullptr;
    Replay *rp = nullptr;
    Reducer *red = nullptr; // the handle's (the true residual's norm)
    std::vector<T *> vec;
    double *d_part = nullptr, *d_s = nullptr, *h_s = nullptr;
    double *d_loc = nullptr; // distributed: the rank's four sums, all-reduced in place
    T *d_kshift = nullptr; // the preconditioner input's mean (singular problems)
    size_t nparts = 0;
    cudaStream_t side = nullptr; // the pipelined reduction's last block runs here, beside the preconditioner
    cudaEvent_t fork_ev = nullptr, join_ev = nullptr;
    T *x = nullptr;       // the iterate (the caller's u) of the current solve
    int par = 0;          // unpreconditioned pipelined CG: which buffer holds w
    bool fresh = false;   // classic CG: start() made the direction the next iteration steps along
    const T *fb = nullptr, *fshift = nullptr;

    KArgs<T> args() const
    {
        KArgs<T> a{};
        a.sc = d_s;
        return a;
    }
    const Level<T> &L() const { return h->lv[0]; }
    pgpu_status finish(size_t blocks, int op, cudaStream_t st);
    template <int OP> pgpu_status walk(const KArgs<T> &a, int op, cudaStream_t st = nullptr);
    template <int OP> pgpu_status point(const KArgs<T> &a, int op);
    // fmg: one FMG pass instead of the cycle (flexible CG's first direction)
    pgpu_status precond(T *out, const T *in, bool fmg = false);
    pgpu_status start();
    // tail: classic CG forms its next direction first (false right after
    // start(), which made the first)
    pgpu_status iterate(bool tail);
    pgpu_status step(bool tail);
    // The first preconditioner application is an FMG pass: flexible CG with
    // the standard cycle (no mask, no beta), on one GPU (the distributed FMG
    // as a correction solve is not yet run on several).  Not around the
    // symmetric cycle: the flexible coefficients keep each later direction
    // A-orthogonal to the last alone, and from an FMG direction CG stalled
    // on some random solid masks (test_mask replays them) that converge
    // from the cycle's own first direction.
    bool fmg_start() const { return flexible && pre == PGPU_PRECOND_VCYCLE && !env->dist && !h->gen.on(); }
    bool cg_projects() const { return method == PGPU_CG && h->gen.mask && h->gen.regions; }
};

template <class T>
pgpu_status Krylov<T>::init(Env &e, Hierarchy<T> &hh, Multigrid<T> *m, FftSolver<T> *ff, Replay *r, Reducer *rd,
                            const pgpu_config &c)
{
    env = &e;
    red = rd;
    h = &hh;
    mg = m;
    fft = ff;
    rp = r;
    char *err = e.err;
    method = (int)(c.flags & PGPU_METHOD_MASK);
    pipelined = (c.flags & PGPU_PIPELINED) != 0;
    pre = (int)c.preconditioner;
    const Level<T> &L0 = h->lv[0];
    const int nv = vectors(method, pipelined, pre);
    vec.assign(nv, nullptr);
    for (int k = 0; k < nv; ++k)
        PGPU_FORWARD(e.mem.alloc(err, (void **)&vec[k], (size_t)L0.elems * sizeof(T), "a Krylov vector"));
    nparts = std::max(blocks_of(L0.rwalk), blocks_of(L0.col));
    PGPU_FORWARD(e.mem.alloc(err, (void **)&d_part, (nparts + FOLD_BLOCKS) * 4 * sizeof(double), "Krylov partials"));
    PGPU_FORWARD(e.mem.alloc(err, (void **)&d_s, KS_COUNT * sizeof(double), "Krylov scalars"));
    if (e.dist) PGPU_FORWARD(e.mem.alloc(err, (void **)&d_loc, 4 * sizeof(double), "Krylov sums to all-reduce"));
    PGPU_FORWARD(e.mem.alloc(err, (void **)&d_kshift, 2 * sizeof(T), "the preconditioner's shift"));
    PGPU_CUDA_SETUP(e, cudaMallocHost((void **)&h_s, KS_COUNT * sizeof(double)));
    PGPU_CUDA_SETUP(e, cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    PGPU_CUDA_SETUP(e, cudaEventCreateWithFlags(&fork_ev, cudaEventDisableTiming));
    PGPU_CUDA_SETUP(e, cudaEventCreateWithFlags(&join_ev, cudaEventDisableTiming));
    PGPU_CUDA_SETUP(e, cudaMemsetAsync(d_kshift, 0, 2 * sizeof(T), e.st));
    PGPU_CUDA_SETUP(e, cudaMemsetAsync(d_s, 0, KS_COUNT * sizeof(double), e.st));
    for (T *v : vec) PGPU_CUDA_SETUP(e, cudaMemsetAsync(v, 0, (size_t)L0.elems * sizeof(T), e.st));
    return PGPU_SUCCESS;
}

template <class T> pgpu_status Krylov<T>::reset()
{
    char *err = env->err;
    for (T *v : vec) PGPU_CUDA(cudaMemsetAsync(v, 0, (size_t)L().elems * sizeof(T), env->st));
    return PGPU_SUCCESS;
}

// The last block of a reduction of `blocks` partials (folded first when
// they are many), on stream st.
// Distributed: the rank's four sums are all-reduced (on st: the pipelined
// form's all-reduction runs beside the preconditioner), then the scalars
// are formed from the global sums.
template <class T> pgpu_status Krylov<T>::finish(size_t blocks, int op, cudaStream_t st)
{
    char *err = env->err;
    const int singular = h->singular;
    PGPU_FORWARD(fold_then_last(
        env->err, d_part, nparts, 4, blocks,
        [&](unsigned n, size_t seg, const double *from, size_t b, double *to) {
            krylov_final_kernel<T><<<n, FINAL_THREADS, 0, st>>>(from, b, seg, to, KOP_STORE, d_s, nullptr, 0, 0, 0);
        },
        [&](const double *from, size_t b) {
            if (d_loc)
                krylov_final_kernel<T><<<1, FINAL_THREADS, 0, st>>>(from, b, b, d_loc, KOP_STORE, d_s, nullptr, 0, 0, 0);
            else
                krylov_final_kernel<T><<<1, FINAL_THREADS, 0, st>>>(from, b, b, nullptr, op, d_s, d_kshift, L().npts,
                                                                    singular, (int)flexible);
        }));
    if (!d_loc) return PGPU_SUCCESS;
    PGPU_FORWARD(dist_allreduce(*env, d_loc, 4, 0, st));
    krylov_final_kernel<T><<<1, FINAL_THREADS, 0, st>>>(d_loc, 1, 1, nullptr, op, d_s, d_kshift, L().npts, singular,
                                                        (int)flexible);
    PGPU_LAUNCHED();
    return PGPU_SUCCESS;
}

// A walk kernel, then (op != KOP_STORE) its reduction's last block; the
// reduction's last block goes to stream st when given (after an event).
template <class T> template <int OP> pgpu_status Krylov<T>::walk(const KArgs<T> &a, int op, cudaStream_t st)
{
    char *err = env->err;
    const Level<T> &l = L();
    if (OP != KW_JACOBI) PGPU_FORWARD(dist_halo(*env, l.g, const_cast<T *>(a.in))); // the walked vector's neighbours
    walk_masked(l.g, [&](auto mk) {
        launch(l.rwalk, 0, env->st, krylov_walk_kernel<T, OP, decltype(mk)::value>, l.g, a,
               op == KOP_STORE ? (double *)nullptr : d_part);
    });
    PGPU_LAUNCHED();
    if (op == KOP_STORE) return PGPU_SUCCESS;
    if (!st) return finish(blocks_of(l.rwalk), op, env->st);
    PGPU_CUDA(cudaEventRecord(fork_ev, env->st));
    PGPU_CUDA(cudaStreamWaitEvent(st, fork_ev, 0));
    PGPU_FORWARD(finish(blocks_of(l.rwalk), op, st));
    PGPU_CUDA(cudaEventRecord(join_ev, st));
    return PGPU_SUCCESS;
}

template <class T> template <int OP> pgpu_status Krylov<T>::point(const KArgs<T> &a, int op)
{
    char *err = env->err;
    const Level<T> &l = L();
    launch(l.col, 0, env->st, krylov_point_kernel<T, OP>, l.g, a, op == KOP_STORE ? (double *)nullptr : d_part);
    PGPU_LAUNCHED();
    return op == KOP_STORE ? PGPU_SUCCESS : finish(blocks_of(l.col), op, env->st);
}

// out = M in, for an input whose mean (singular problems) is in d_kshift.
template <class T> pgpu_status Krylov<T>::precond(T *out, const T *in, bool fmg)
{
    char *err = env->err;
    KArgs<T> a = args();
    a.in = in;
    a.out = out;
    if (fp.h) { // PGPU_MIXED: out = M_float (in - mean), rounded in, added out in double
        Level<float> &E = fp.h->lv[0];
        const double *mean_of = h->singular ? d_s + KS_SUM : nullptr;
        PGPU_FORWARD(axpby(*env, E.g, E.col, 0.0f, 1.0f, in, 0.0f, (const float *)nullptr, E.f, mean_of, L().npts));
        fp.h->bind(E.u, E.f, nullptr);
        PGPU_CUDA(cudaMemsetAsync(E.u, 0, (size_t)E.elems * sizeof(float), env->st));
        if (pre == PGPU_PRECOND_FFT) {
            PGPU_FORWARD(fp.fft->set_stream(err, env->st));
            PGPU_FORWARD(fp.fft->run(E.u, E.f, fp.zero));
        } else {
            PGPU_FORWARD(fmg ? fp.mg->fmg_pass() : fp.mg->cycle(0));
        }
        return axpby(*env, L().g, L().col, T(0), T(1), (const float *)E.u, T(0), (const T *)nullptr, out);
    }
    switch (pre) {
    case PGPU_PRECOND_NONE: return point<KP_COPY>(a, KOP_STORE);
    case PGPU_PRECOND_JACOBI: return walk<KW_JACOBI>(a, KOP_STORE);
    case PGPU_PRECOND_FFT:
        // (cuFFT's plans launch on the stream they are given: the one being
        // captured when an iteration becomes a graph)
        PGPU_FORWARD(fft->set_stream(err, env->st));
        PGPU_FORWARD(fft->run(out, in, d_kshift));
        return h->gen.mask ? point<KP_MASK>(a, KOP_STORE) : PGPU_SUCCESS;
    default: // one cycle (or FMG pass) from zero on the correction problem A out = in - shift
        h->bind(out, in, d_kshift);
        PGPU_CUDA(cudaMemsetAsync(out, 0, (size_t)L().elems * sizeof(T), env->st));
        PGPU_FORWARD(fmg ? mg->fmg_pass() : mg->cycle(0));
        // CG on a mask's singular regions: z (pipelined CG's u and m) loses
        // each region's mean, as r does (iterate), so the preconditioner
        // stays the symmetric P M P and the directions free of the null
        // space, whose constants made p.Ap rounding alone in float (a
        // breakdown; in pipelined CG too, with a single sealed pocket).
        return cg_projects() ? h->project(*env, out, out, 0, out) : PGPU_SUCCESS;
    }
}

// The residual of x and the first search directions (every launch on the
// stream, nothing waited for).
template <class T> pgpu_status Krylov<T>::start()
{
    KArgs<T> a = args();
    a.in = x;
    a.f = fb;
    a.shift = fshift;
    a.out = vec[0]; // r
    if (method == PGPU_BICGSTAB) {
        PGPU_FORWARD(walk<KW_RESID>(a, KOP_BI_START));
        KArgs<T> c = args();
        c.in = vec[0];
        c.out = vec[1]; // r0 = r
        return point<KP_COPY>(c, KOP_STORE);
    }
    PGPU_FORWARD(walk<KW_RESID>(a, KOP_RR));
    if (pipelined && pre == PGPU_PRECOND_NONE) { // w = A r into its first buffer; gamma, delta
        par = 0;
        KArgs<T> b = args();
        b.in = vec[0];
        b.r = vec[0];
        b.w = vec[1];
        return walk<KW_PIPE_START>(b, KOP_PIPE_START);
    }
    if (pipelined) { // u = M r, w = A u; gamma, delta
        T *r = vec[0], *u = vec[1], *w = vec[2];
        PGPU_FORWARD(precond(u, r));
        KArgs<T> b = args();
        b.in = u;
        b.r = r;
        b.w = w;
        PGPU_FORWARD(walk<KW_PIPE_START>(b, KOP_PIPE_START));
        return precond(vec[3], w); // m = M w
    }
    // z = M r, rho = r.z, p = z
    T *r = vec[0], *z = pre == PGPU_PRECOND_NONE ? vec[0] : vec[3], *p = vec[1];
    KArgs<T> b = args();
    b.in = r;
    b.r = r;
    b.z = z;
    b.out = z;
    if (pre == PGPU_PRECOND_JACOBI) {
        PGPU_FORWARD(walk<KW_JACOBI>(b, KOP_CG_START));
    } else {
        // Flexible CG's first direction may come from a stronger solve: one
        // FMG pass costs ~1.4 cycles and saved one to three iterations at
        // 512^3 (rough f: 7 -> 6 to 1e-10; smooth f: 5 -> 2 to 1e-6).
        if (pre != PGPU_PRECOND_NONE) PGPU_FORWARD(precond(z, r, fmg_start()));
        PGPU_FORWARD(point<KP_DOT>(b, KOP_CG_START));
    }
    b.p = p;
    return point<KP_CG_P>(b, KOP_STORE);
}

// One iteration; on a mask's singular regions r (vec[0] of every method)
// then loses each region's mean (the box's goes with the next update) --
// except in preconditioned pipelined CG, whose u = M r is a recurrence of
// its own that a shift of r would part from (M of a constant is not one);
// there the preconditioner's output loses it instead (precond), which
// changes no product with A and, r being in A's range, no dot product.
template <class T> pgpu_status Krylov<T>::iterate(bool tail)
{
    PGPU_FORWARD(step(tail));
    const bool own_u = pipelined && pre != PGPU_PRECOND_NONE;
    return h->gen.mask && h->gen.regions && !own_u ? h->project(*env, vec[0], vec[0], 0, vec[0]) : PGPU_SUCCESS;
}

template <class T> pgpu_status Krylov<T>::step(bool tail)
{
    char *err = env->err;
    if (method == PGPU_BICGSTAB) {
        // vec: r (s in place), r0, p, v, t, [ph, sh]
        T *r = vec[0], *r0 = vec[1], *p = vec[2], *v = vec[3], *t = vec[4];
        T *ph = pre == PGPU_PRECOND_NONE ? p : vec[5], *sh = pre == PGPU_PRECOND_NONE ? r : vec[6];
        KArgs<T> a = args();
        a.x = x; a.r = r; a.r0 = r0; a.p = p; a.v = v; a.t = t; a.ph = ph; a.sh = sh; a.s = r;
        PGPU_FORWARD(point<KP_BI_P>(a, KOP_SHIFT));                // p = r + beta (p - omega v)
        if (pre != PGPU_PRECOND_NONE) PGPU_FORWARD(precond(ph, p)); // ph = M p
        a.in = ph; a.out = v; a.partner = r0;
        PGPU_FORWARD(walk<KW_APPLY>(a, KOP_BI_ALPHA));             // v = A ph; alpha = rho / r0.v
        PGPU_FORWARD(point<KP_BI_S>(a, KOP_BI_S));                 // s = r - alpha v
        if (pre != PGPU_PRECOND_NONE) PGPU_FORWARD(precond(sh, r)); // sh = M s
        a.in = sh; a.out = t; a.partner = r;
        PGPU_FORWARD(walk<KW_APPLY>(a, KOP_BI_OMEGA));             // t = A sh; omega = t.s / t.t
        return point<KP_BI_XR>(a, KOP_BI_RHO);                     // x, r = s - omega t; rho, beta
    }
    if (pipelined && pre == PGPU_PRECOND_NONE) {
        // vec: r, w (two buffers), z, s, p.  One pass: n = A w and every
        // update; w's new values go to the other buffer (the walk reads
        // the old ones of the neighbours).  Nothing to overlap the
        // reduction's last block with.
        KArgs<T> a = args();
        a.in = vec[1 + par]; a.out = vec[2 - par]; a.x = x; a.r = vec[0]; a.z = vec[3]; a.s = vec[4]; a.p = vec[5];
        par ^= 1;
        return walk<KW_PIPE0>(a, KOP_PIPE0);
    }
    if (pipelined) {
        // vec: r, u, w, m, z, q, s, p.  One pass: n = A m and every update,
        // the next sums; then m = M w beside the sums' last block (which
        // the preconditioner needs first when the problem is singular: the
        // mean of w is its shift).
        T *w = vec[2], *m = vec[3];
        KArgs<T> a = args();
        a.in = m; a.x = x; a.r = vec[0]; a.u = vec[1]; a.w = w; a.z = vec[4]; a.q = vec[5]; a.s = vec[6]; a.p = vec[7];
        const bool overlap = !h->singular;
        PGPU_FORWARD(walk<KW_PIPE>(a, KOP_PIPE, overlap ? side : nullptr));
        PGPU_FORWARD(precond(m, w));
        if (overlap) PGPU_CUDA(cudaStreamWaitEvent(env->st, join_ev, 0));
        return PGPU_SUCCESS;
    }
    // vec: r, p, q, [z].  The next direction, then the step along it: the
    // convergence check after an iteration comes before the preconditioner
    // that a converged solve would not use (start() made the first one).
    T *r = vec[0], *p = vec[1], *q = vec[2], *z = pre == PGPU_PRECOND_NONE ? vec[0] : vec[3];
    KArgs<T> a = args();
    a.partner = flexible ? r : nullptr; a.x = x; a.r = r; a.p = p; a.q = q; a.z = z;
    if (tail) {
        if (pre == PGPU_PRECOND_JACOBI) {
            a.in = r; a.out = z;
            PGPU_FORWARD(walk<KW_JACOBI>(a, KOP_CG_BETA)); // z = r / diag; r.z, z.q
        } else {
            if (pre != PGPU_PRECOND_NONE) PGPU_FORWARD(precond(z, r));
            PGPU_FORWARD(point<KP_DOT>(a, KOP_CG_BETA)); // r.z, z.q; beta
        }
        PGPU_FORWARD(point<KP_CG_P>(a, KOP_STORE)); // p = z + beta p
    }
    a.in = p; a.out = q;
    PGPU_FORWARD(walk<KW_APPLY>(a, KOP_CG_ALPHA)); // q = A p; alpha
    return point<KP_CG_UPDATE>(a, KOP_RR);         // x += alpha p, r -= alpha q
}

// Krylov iterations on the problem A u = f - shift from u, checked every
// `interval` iterations (none with `fixed`).  When the recursive residual
// meets the tolerance, or a recurrence breaks down, the true residual is
// formed; where rounding made the two part (float vectors, pipelined CG's
// longer recurrences), the method restarts from the true residual while
// that keeps halving (at most KRYLOV_RESTARTS times).
template <class T>
pgpu_status Krylov<T>::run(T *u, const T *f, const T *shift, Convergence cv, bool fixed, int interval,
                           pgpu_report &r)
{
    char *err = env->err;
    x = u;
    fb = f;
    fshift = shift;
    Level<T> &l0 = h->lv[0];
    // The multigrid preconditioner solves on level 0 with zero ghosts: the
    // second iterate's ghosts, filled by solves of the caller's problem, are
    // cleared.
    if (pre == PGPU_PRECOND_VCYCLE && !fp.h)
        PGPU_FORWARD(frame(*env, l0.g, (const T *)nullptr, l0.t, l0.x, h->data_faces));
    PGPU_CUDA(cudaMemsetAsync(d_s, 0, KS_COUNT * sizeof(double), env->st));
    const char *what = method == PGPU_BICGSTAB ? "BiCGStab" : pipelined ? "pipelined CG" : "CG";
    // The flexible coefficients where the preconditioner is not symmetric
    // (krylov.h's head): the standard cycle, and PGPU_MIXED's rounding; and
    // around the symmetric cycle too, which is symmetric only to rounding
    // (on random solid cells the classic coefficients stalled more often).
    flexible = method == PGPU_CG && !pipelined && (fp.h || pre == PGPU_PRECOND_VCYCLE);
    int none = 0;
    const bool classic = method == PGPU_CG && !pipelined;
    auto start_ = [&]() {
        par = 0;
        fresh = classic;
        return rp->run(*env, u, f, REPLAY_KRYLOV_START, none, [&] { return start(); });
    };
    // (the graph of an iteration depends on the buffer parity of w, see
    // iterate, and for classic CG on whether a start made its direction)
    auto iterate_ = [&]() {
        const int kind = fresh ? REPLAY_KRYLOV_STEP : par ? REPLAY_KRYLOV_ITER_ODD : REPLAY_KRYLOV_ITER;
        const int was = par;
        const bool tail = !fresh;
        const pgpu_status st = rp->run(*env, u, f, kind, none, [&] { return iterate(tail); });
        par = was ^ (pipelined && pre == PGPU_PRECOND_NONE); // also where the graph was only launched
        fresh = false;
        return st;
    };
    auto true_norm = [&](double &rn, double &rmax) {
        h->bind(u, f, shift);
        return h->norm(*env, *red, rn, rmax);
    };
    PGPU_FORWARD(start_());
    int it = 0, restarts = 0;
    pgpu_status result = PGPU_SUCCESS;
    if (fixed) {
        for (; it < cv.max_it; ++it) PGPU_FORWARD(iterate_());
        h->bind(u, f, shift);
        r.iterations = it;
        return PGPU_SUCCESS;
    }
    // Float with tolerance 0: the recursive residual falls to FLOAT_CORRECTION
    // of ||b||, where the updates reach float's rounding of u; the true
    // residual of a float u cannot go much below float_residual_floor and
    // is accepted there.
    const bool own_stop = cv.own();
    if (own_stop) cv.tol = FLOAT_CORRECTION; // (judge's target: the recursive residual)
    const double accept = own_stop ? float_accept(cv) : cv.tol;
    double best = HUGE_VAL; // the true residual at the last restart
    // A restart from the true residual, where the last one gained (halved
    // the true residual) and restarts are left.
    auto restart = [&](double tn) -> pgpu_status {
        best = tn;
        ++restarts;
        PGPU_CUDA(cudaMemsetAsync(d_s, 0, KS_COUNT * sizeof(double), env->st));
        return start_();
    };
    for (;;) {
        const int n = std::min(interval, cv.max_it - it);
        for (int k = 0; k < n; ++k) PGPU_FORWARD(iterate_());
        it += n;
        PGPU_CUDA(cudaMemcpyAsync(h_s, d_s, KS_COUNT * sizeof(double), cudaMemcpyDeviceToHost, env->st));
        PGPU_CUDA(cudaStreamSynchronize(env->st));
        const double rn = std::sqrt(std::max(h_s[KS_RR], 0.0));
        bool stop = false;
        cv.judge(err, h_s[KS_RR] >= 0 ? rn : NAN, NAN, it, what, "iterations", r, stop, result);
        const bool met = stop && result == PGPU_SUCCESS;
        const bool bad = !met && h_s[KS_BAD] != 0 && result != PGPU_ERROR_BREAKDOWN;
        if (!met && !bad) {
            if (stop) break; // not converged, or the recursive residual broke down
            continue;
        }
        // The recursive residual met the tolerance, or a recurrence broke
        // down (rounding, in float): the true residual decides.
        double tn = 0, tmax = 0;
        PGPU_FORWARD(true_norm(tn, tmax));
        const double rel = cv.rhs_norm > 0 ? tn / cv.rhs_norm : tn;
        // (judge's message, where it stopped on max_iterations, goes with
        // the status it gave)
        if (rel <= accept) {
            result = PGPU_SUCCESS;
            err[0] = 0;
            break;
        }
        const bool gains = tn < 0.5 * best && restarts < KRYLOV_RESTARTS && it < cv.max_it;
        if (gains) {
            result = PGPU_SUCCESS;
            err[0] = 0;
            PGPU_FORWARD(restart(tn));
            continue;
        }
        if (own_stop && rel <= FLOAT_OWN_SLACK * accept) {
            // (float's own stop accepts where restarts no longer gain, up to
            // FLOAT_OWN_SLACK times its floor: the floor is the box's,
            // rough solutions, masks and beta raise it; a recurrence that
            // broke down there ends alike)
            result = PGPU_SUCCESS;
            err[0] = 0;
        } else if (bad) {
            result = record(err, PGPU_ERROR_BREAKDOWN,
                            "%s: breakdown after %d iterations (a denominator of the recurrences was zero, negative "
                            "or not finite: the operator or preconditioner is not %s); u holds the last good iterate",
                            what, it, method == PGPU_BICGSTAB ? "invertible on this residual" : "positive definite");
        } else {
            result = record(err, PGPU_ERROR_NOT_CONVERGED,
                            "%s: the recursive residual met the tolerance after %d iterations but the true relative "
                            "residual is %.3e (tolerance %.3e): rounding limits what this precision reaches",
                            what, it, rel, own_stop ? FLOAT_OWN_SLACK * accept : cv.tol);
        }
        break;
    }
    double tn = 0, tmax = 0;
    PGPU_FORWARD(true_norm(tn, tmax));
    cv.measured(tn, tmax, r);
    if (result == PGPU_ERROR_NOT_CONVERGED && std::isfinite(tn) &&
        (cv.rhs_norm > 0 ? tn / cv.rhs_norm : tn) <= (own_stop ? FLOAT_OWN_SLACK : 1.0) * accept) {
        // the recursive residual stalled above the true one
        result = PGPU_SUCCESS;
        err[0] = 0;
    }
    if (!std::isfinite(tn) && result == PGPU_SUCCESS)
        result = record(err, PGPU_ERROR_BREAKDOWN, "%s: the residual became %g", what, tn);
    r.iterations = it;
    return result;
}

} // namespace pgpu
