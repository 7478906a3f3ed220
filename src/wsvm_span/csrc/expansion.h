/* Kernel expansions over a few points of a precomputed kernel, read in place. */
#ifndef WSVM_EXPANSION_H
#define WSVM_EXPANSION_H

#include <stddef.h>
#include <stdint.h>

/* out[t] += sum_k coef[k] K[cols[k], rows[t]] for t < n (rows NULL: t itself). K is row-major with leading
 * dimension ld and symmetric where rows and cols mix (a training kernel): each term reads one contiguous
 * kernel row, where numpy's K[np.ix_(rows, cols)] @ coef would first copy an n x m block. */
void add_expansion(const double *K, ptrdiff_t ld, const int64_t *rows, int64_t n, const int64_t *cols, int64_t m,
                   const double *coef, double *out);

/* out[t] += sum_j K[rows[t], j] coef[j] for t < n, j < width: the same sum read along the rows of the points
 * it is evaluated at (coef dense over K's columns), cheaper than add_expansion when there are fewer such points
 * than terms. */
void add_row_products(const double *K, ptrdiff_t ld, const int64_t *rows, int64_t n, int64_t width,
                      const double *coef, double *out);

#endif
