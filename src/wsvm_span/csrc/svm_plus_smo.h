/* A decomposition (SMO-type) solver of the SVM+ dual (svm-plus.md), in the coordinates of the alternating SMO of
 * Pechyony, Izmailov, Vashist and Vapnik ("SMO-style algorithms for learning using privileged information",
 * DMIN 2010): alpha >= 0 and beta >= 0 (beta_i = C + a~_i - alpha_i, the multiplier of xi_i >= 0), so that every
 * bound is a lower bound at 0,
 *
 *   min  F = 1/2 alpha'Q alpha - 1'alpha + 1/2 u'T u,   u = alpha + beta - C 1  (= a~),
 *   s.t. y'alpha = 0,  1'(alpha + beta) = n C,  alpha >= 0,  beta >= 0,
 *
 * Q_ij = y_i y_j K_ij, T = K~ / gamma (+ the privileged ridge on its diagonal). A step moves two or three
 * variables along a direction that keeps both equality constraints: two betas (type I), two alphas of one class
 * (type II), or one alpha of each class and one beta (type III, d = e_alpha_i + e_alpha_j - 2 e_beta_k, and its
 * opposite). Each type's candidate keeps its first-order (maximal violating) indices and picks the last index by
 * the largest second-order decrease (Fan, Chen and Lin, JMLR 6, 2005); the step taken is the candidate with the
 * largest decrease of F. It stops when the largest KKT violation, in margin units, is at most eps (the analogue of
 * LIBSVM's m(a) - M(a) <= eps). Kernel rows come from precomputed matrices (restricted to an index set, so a
 * fold or a leave-one-out problem reads the full kernel) or are computed from the features (RBF) through a row
 * cache of a stated size, so that no n x n array is needed.
 */
#ifndef WSVM_SVM_PLUS_SMO_H
#define WSVM_SVM_PLUS_SMO_H

#include <stddef.h>
#include <stdint.h>

/* One kernel: entry (s, t) of the problem is scale * k(x_idx[s], x_idx[t]) + (s == t) * diag_add, with k read from
 * a precomputed row-major matrix K (leading dimension ld) or, where K is NULL, computed from the features X
 * (row-major, d columns; sqnorm their squared norms) as exp(-rbf_gamma ||x - x'||^2). */
typedef struct {
    const double *K;
    ptrdiff_t ld;
    const double *X;
    int64_t d;
    const double *sqnorm;
    double rbf_gamma;
    double scale;
    double diag_add;
} SvmPlusKernel;

typedef struct {
    double b, b_tilde;   /* f(x) = sum alpha_i y_i K(x_i, x) + b;  xi(x~) = (T u)(x~) + b_tilde */
    int64_t n_iter;
    int converged;       /* 1: the violation reached eps; 0: stopped at max_iter */
    double violation;    /* the largest KKT violation at the end (margin units) */
    double objective;    /* F at the end */
    int64_t rows_computed;  /* kernel rows computed or gathered (cache misses) */
} SvmPlusResult;

/* Returns 0, -1 when memory ran out.
 *
 * idx     : the problem's points are rows idx[0..n-1] of both kernels (NULL: 0..n-1)
 * y       : labels in {-1, +1};  C > 0
 * alpha, beta : in: a feasible start (checked by the caller); out: the solution
 * w, z    : in: Q alpha and T u at the start when have_grad, else computed here; out: at the solution
 * cache_mb: kernel rows kept per kernel (at least a few rows whatever it says)
 */
int svm_plus_solve(const SvmPlusKernel *K, const SvmPlusKernel *T, const int64_t *idx, int64_t n, const double *y,
                   double C, double *alpha, double *beta, double *w, double *z, int have_grad, double eps,
                   int64_t max_iter, double cache_mb, SvmPlusResult *result);

#endif
