/* The primal-dual active-set method of the SVM+ dual (svm-plus.md; Hintermueller, Ito and Kunisch, SIAM J. Optim.
 * 13, 2003) with block principal pivoting (Judice and Pires, 1994; Kim and Park, 2011), behind
 * ``svm_plus.solver.SVMPlusProblem.active_set``:
 *
 *   min 1/2 a'Qa - 1'a + 1/2 a~'T a~   s.t.  y'a = 0,  1'a~ = 0,  0 <= a_i <= C + a~_i,
 *
 * Q = YKY, T = (K~ + ridge I) / gamma. Each iteration guesses the active sets Z = {a_i = 0} and B = {beta_i = 0}
 * (beta = C + a~ - a), solves the equality-constrained QP they leave exactly (its reduced KKT system, a symmetric
 * indefinite one: LAPACK's dsysv, least squares by dgelsd where it is singular or ill-conditioned, as
 * ``solver.solve_symmetric`` does through scipy) and flips the guesses its solution contradicts.
 *
 * The problem is the rows idx[0..n-1] of full-size Q and T (a leave-one-out refit or any subset reads the full
 * matrices in place), with T's diagonal given apart (T_diag, one entry per point of the problem): the privileged
 * ridge is a share of the mean diagonal of the points trained on, so a subset's T differs from the full one's on
 * the diagonal alone.
 */
#ifndef WSVM_SVM_PLUS_ACTIVE_SET_H
#define WSVM_SVM_PLUS_ACTIVE_SET_H

#include <stddef.h>
#include <stdint.h>

/* LAPACK and BLAS routines (scipy.linalg.cython_lapack's and cython_blas's, handed in by the Cython wrapper: the
 * library scipy's own solves call, so the reduced systems are factored exactly as ``solve_symmetric`` factors
 * them). */
typedef void (*dsysv_fn)(char *uplo, int *n, int *nrhs, double *a, int *lda, int *ipiv, double *b, int *ldb,
                         double *work, int *lwork, int *info);
typedef void (*dsycon_fn)(char *uplo, int *n, double *a, int *lda, int *ipiv, double *anorm, double *rcond,
                          double *work, int *iwork, int *info);
typedef double (*dlange_fn)(char *norm, int *m, int *n, double *a, int *lda, double *work);
typedef void (*dgelsd_fn)(int *m, int *n, int *nrhs, double *a, int *lda, double *b, int *ldb, double *s,
                          double *rcond, int *rank, double *work, int *lwork, int *iwork, int *info);
typedef double (*dlamch_fn)(char *cmach);
typedef void (*dgemv_fn)(char *trans, int *m, int *n, double *alpha, double *a, int *lda, double *x, int *incx,
                         double *beta, double *y, int *incy);
typedef void (*dgetrf_fn)(int *m, int *n, double *a, int *lda, int *ipiv, int *info);
typedef void (*dgetrs_fn)(char *trans, int *n, int *nrhs, double *a, int *lda, int *ipiv, double *b, int *ldb,
                          int *info);
typedef void (*dgecon_fn)(char *norm, int *n, double *a, int *lda, double *anorm, double *rcond, double *work,
                          int *iwork, int *info);

typedef struct {
    dsysv_fn dsysv;
    dsycon_fn dsycon;
    dlange_fn dlange;
    dgelsd_fn dgelsd;
    dlamch_fn dlamch;
    dgemv_fn dgemv;
    dgetrf_fn dgetrf;
    dgetrs_fn dgetrs;
    dgecon_fn dgecon;
} SvmPlusLapack;

/* The exact LOO's bordering (``svm_plus.loo.BorderedSystem``): ONE inverse of the full model's KKT system in all 2l
 * variables x = [a; a~] with the model's active bounds as rows (a_i = 0 on Z0, a~_i - a_i = -C on B0) besides
 * y'a = 0 and 1'a~ = 0, N = 2l + 2 + |Z0| + |B0| rows; a refit without p on sets Z, B is that system with p pinned
 * (a_p = a~_p = 0) and the rows that differ from the model's added or dropped, each bordering it by one column w_j
 * (at most two entries): x = x0 - K0^-1 W mu, (W' K0^-1 W) mu = W' x0 - d, O(N k) for k changed rows where a fresh
 * reduced system costs O(n^3). A Schur complement with rcond below 1 / cond_max is refused (the refit's minimiser
 * not unique): the reduced system's least squares decides there. */
typedef struct {
    const double *inverse;        /* K0^-1, N x N row-major */
    const double *x0;             /* K0^-1 r0: the model's own solution */
    const unsigned char *Z0, *B0; /* the model's sets, over its l_full points */
    const int64_t *row_of;        /* 2 l_full: the row of a_i = 0 (i), of beta_i = 0 (l_full + i), or -1 */
    int64_t l_full, N, p;         /* the problem is the model's points but p (idx = 0..l_full-1 without p) */
    double cond_max;
    int64_t served, refused;      /* in/out: the bordered solves taken and refused so far */
} SvmPlusBordered;

enum {
    SVM_PLUS_AS_CONVERGED = 0,  /* no guess contradicted, KKT residuals at most kkt_tol */
    SVM_PLUS_AS_CYCLE = 1,      /* the sets came back to a state seen before */
    SVM_PLUS_AS_MAX_ITER = 2,   /* max_iter iterations without convergence */
    SVM_PLUS_AS_KKT = 3,        /* converged sets whose solution violates the KKT conditions by more than kkt_tol */
    SVM_PLUS_AS_LSTSQ = 4       /* the least-squares solve's SVD did not converge (scipy raises LinAlgError) */
};

typedef struct {
    int status;
    int64_t iterations;
    int64_t solves;     /* reduced systems solved (iterations less those that took the known minimiser, plus a
                         * converged known one's check solve) */
    double b, b_tilde;
    double violation;   /* the largest KKT residual (SVMPlus.kkt_residuals) of the solution returned */
} SvmPlusActiveSetResult;

/* The doubles of ``svm_plus_active_set``'s workspace for a problem of n of ld points. */
int64_t svm_plus_active_set_workspace(int64_t n, ptrdiff_t ld);

/* Returns 0, -1 where memory ran out, -2 where LAPACK reported an illegal argument.
 *
 * Q, T      : full row-major symmetric matrices, L x L with leading dimension ld = L; entry (s, t) of the problem is
 *             Q[idx[s] * ld + idx[t]] (T's likewise off the diagonal; its diagonal is T_diag[s])
 * idx       : the problem's points (NULL: 0..n-1); y: their labels
 * Z, B      : in: the first guess (1 = active); out: the last iteration's sets
 * first     : NULL, or a known minimiser on the sets first_Z, first_B (a, a~ of length n, then b, b~), taken
 *             instead of solving those sets where an iteration meets them
 * alpha, alpha_tilde : out (length n): the solution (a clipped at 0, a~ = a - C on B) where converged, else the
 *             last iteration's minimiser
 * bordered  : NULL, or the full model's bordering (each iteration's minimiser from it where its Schur complement
 *             is well conditioned; where the solution the method converges to came from it and fails the KKT check,
 *             its sets are solved once more on their own reduced system)
 * workspace : svm_plus_active_set_workspace(n, ld) doubles (the caller's, kept between calls: fresh pages for the
 *             reduced systems cost a page fault per 4 KB, measured at a tenth of a refit's time)
 */
int svm_plus_active_set(const double *Q, const double *T, ptrdiff_t ld, const double *T_diag, const int64_t *idx,
                        int64_t n, const double *y, double C, unsigned char *Z, unsigned char *B,
                        const double *first, const unsigned char *first_Z, const unsigned char *first_B,
                        int64_t max_iter, int64_t block_backup, double release_tol, double kkt_tol,
                        const SvmPlusLapack *lapack, SvmPlusBordered *bordered, double *alpha,
                        double *alpha_tilde, double *workspace, SvmPlusActiveSetResult *result);

#endif
