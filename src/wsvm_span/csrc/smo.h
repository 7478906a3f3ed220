/* The SMO decomposition solver of the weighted C-SVM dual (method.md section 1) on a precomputed kernel.
 *
 *   min_a  f(a) = 1/2 a'Qa - e'a   s.t.  y'a = 0,  0 <= a_i <= C_i,   Q_ij = y_i y_j K_ij
 *
 * Working sets by the second-order rule of Fan, Chen and Lin (JMLR 6, 2005), shrinking as in Chang and Lin
 * (ACM TIST 2011, section 5.1) and the stopping rule m(a) - M(a) <= eps (the maximal violating pair's gap), so
 * that a solution at tolerance eps is comparable with LIBSVM's at -e eps. The solver starts from any feasible
 * a (a warm start) and reads the kernel directly: rows of a row-major matrix, restricted to an index set, so
 * that a CV fold or a leave-one-out problem is solved on the full kernel without copying it.
 */
#ifndef WSVM_SMO_H
#define WSVM_SMO_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    double rho;        /* f(x) = sum_i a_i y_i K(x_i, x) - rho */
    int64_t n_iter;    /* working-set iterations */
    int converged;     /* 1: the gap reached eps; 0: stopped at max_iter */
    double gap;        /* m(a) - M(a) at the end, over all variables */
    double objective;  /* f(a) at the end */
    /* work done, in kernel entries read (deterministic, unlike timings): by the steps (the active set's size
     * summed over the steps) and by computing gradients from the support vectors (the start's, and the
     * shrunk variables' when they come back) */
    int64_t step_work;
    int64_t gradient_work;
} SmoResult;

/* A kernel whose rows are computed on demand (kernels.RBFRows), read through one accessor (smo.c: row_of).
 * row(ctx, r) returns K's row r (n_rows doubles), or NULL on failure (the solve then ends with -2). The pointer
 * is valid until the calling thread's next call of row(): the solver reads it at once (gathers it into an
 * active-set slot, or adds it into a gradient) and never holds two such pointers.
 * Two storages:
 *  - in place (computed != NULL): the rows live in K (leading dimension ld) once computed; the solver reads row r
 *    in place when computed[r] is set (with acquire order: row() sets it with release order after writing the
 *    row), and calls row() first otherwise. K's diagonal is valid from the start.
 *  - a row cache of fixed size (computed == NULL, K unused): every read goes through row() (the cache may evict
 *    and recompute any row), and diag holds K_ii. */
typedef struct {
    const unsigned char *computed;
    const double *(*row)(void *ctx, int64_t row);
    void *ctx;
    const double *diag;  /* n_rows entries K_ii, or NULL: read K's diagonal */
    int64_t n_rows;      /* rows (and columns) of the kernel */
} RowSource;

/* Returns 0, -1 when memory ran out (nothing is written then), or -2 when rows->row failed.
 *
 * K      : row-major kernel with leading dimension ld; the problem's points are K's rows/columns idx[0..n-1]
 *          (idx NULL: 0..n-1)
 * y      : labels in {-1, +1};  C : upper bounds C_i > 0
 * alpha  : in: a feasible start (0 <= a_i <= C_i, y'a = 0, checked by the caller); out: the solution
 * grad0  : the gradient Qa - e at the start, when the caller knows it (NULL: computed here, one pass over the
 *          start's support vectors' kernel rows)
 * grad   : out (may be NULL): the gradient Qa - e at the solution
 * cache  : cache_len doubles of scratch (may be NULL) for kernel rows restricted to the active set; the
 *          caller keeps it between calls (memory touched for the first time costs a page fault per 4 KB)
 * rows   : NULL when all of K is valid; else its rows are computed on demand (RowSource; K may then be NULL
 *          when rows->computed is NULL)
 */
int smo_solve(const double *K, ptrdiff_t ld, const int64_t *idx, int64_t n, const double *y, const double *C,
              double *alpha, const double *grad0, double *grad, double eps, double bound_rtol, int shrinking,
              int64_t max_iter, double *cache, int64_t cache_len, const RowSource *rows, SmoResult *result);


#endif
