/* The span-rule's S_p^2 of one machine's support vectors: see span.h. The same computation as
 * span.geometry's Cholesky route (BorderedInverse.diagonal and .quadratic), without numpy's per-call overhead,
 * which dominates on the small machines of one-vs-one models (image: 10 in-bound SVs, 53 SVs on average). */
#include "span.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int64_t root_of(int64_t *label, int64_t x) {
    while (label[x] != x) {
        label[x] = label[label[x]];
        x = label[x];
    }
    return x;
}

/* ||W W'||_1 for upper triangular W (r x r, row-major): the exact 1-norm of K_RR^-1 */
static double inverse_norm1(const double *W, int64_t r) {
    double best = 0.0;
    for (int64_t j = 0; j < r; ++j) {
        double col = 0.0;
        for (int64_t i = 0; i < r; ++i) {
            const int64_t k0 = i > j ? i : j;
            double g = 0.0;
            for (int64_t k = k0; k < r; ++k) g += W[i * r + k] * W[j * r + k];
            col += fabs(g);
        }
        if (col > best) best = col;
    }
    return best;
}

int span2_unconstrained(const double *K, ptrdiff_t ld, const int64_t *inbound, int64_t n_in, const int64_t *others,
                        int64_t n_out, double coincident_rtol, double min_rcond, double *s2_in, double *s2_out) {
    int status = 0;
    int64_t *label = malloc((size_t)n_in * sizeof *label);
    int64_t *rep = malloc((size_t)n_in * sizeof *rep);
    unsigned char *merged = calloc((size_t)n_in, 1);
    double *U = malloc((size_t)n_in * (size_t)n_in * sizeof *U);
    double *W = calloc((size_t)n_in * (size_t)n_in, sizeof *W);
    double *w1 = malloc((size_t)n_in * sizeof *w1);
    double *z = malloc((size_t)n_in * sizeof *z);
    if (!label || !rep || !merged || !U || !W || !w1 || !z) {
        status = -1;
        goto done;
    }

    /* Coincident in-bound points (duplicates in the data): one union-find pass over the pairs, as
     * geometry.coincident_groups; a group's root is its first point. */
    double max_diag = 1.0;
    for (int64_t i = 0; i < n_in; ++i) {
        const double d = K[inbound[i] * ld + inbound[i]];
        if (d > max_diag) max_diag = d;
        label[i] = i;
    }
    const double close = coincident_rtol * max_diag;
    for (int64_t a = 0; a < n_in; ++a) {
        const double *Ka = K + inbound[a] * ld;
        const double Kaa = Ka[inbound[a]];
        for (int64_t b = a + 1; b < n_in; ++b) {
            const double d2 = (Kaa + K[inbound[b] * ld + inbound[b]]) - 2.0 * Ka[inbound[b]];
            if (d2 <= close) {
                const int64_t ra = root_of(label, a), rb = root_of(label, b);
                if (ra != rb) label[ra > rb ? ra : rb] = ra < rb ? ra : rb;
                merged[a] = merged[b] = 1; /* both have a twin: S_p = 0 */
            }
        }
    }
    int64_t r = 0;
    for (int64_t i = 0; i < n_in; ++i)
        if (root_of(label, i) == i) rep[r++] = i;

    /* K_RR and its Cholesky factor U (upper, U'U = K_RR), in place; a pivot that is not positive (or NaN) means
     * K_RR is not numerically positive definite, as LAPACK's dpotrf decides */
    double anorm = 0.0;
    for (int64_t j = 0; j < r; ++j) {
        const double *Kj = K + inbound[rep[j]] * ld;
        double col = 0.0;
        for (int64_t i = 0; i < r; ++i) {
            U[j * r + i] = Kj[inbound[rep[i]]];
            col += fabs(U[j * r + i]);
        }
        if (col > anorm) anorm = col;
    }
    /* right-looking, one row of U at a time: every inner loop runs along a row (row-major storage) */
    for (int64_t j = 0; j < r; ++j) {
        double *Uj = U + j * r;
        if (!(Uj[j] > 0.0)) {
            status = 1;
            goto done;
        }
        const double ujj = sqrt(Uj[j]);
        Uj[j] = ujj;
        for (int64_t i = j + 1; i < r; ++i) Uj[i] /= ujj;
        for (int64_t i = j + 1; i < r; ++i) {
            const double f = Uj[i];
            double *Ui = U + i * r;
            for (int64_t k = i; k < r; ++k) Ui[k] -= f * Uj[k];
        }
    }
    /* W = U^-1, upper triangular, row by row: W_i. U = e_i' by forward substitution along the rows of U */
    for (int64_t i = 0; i < r; ++i) {
        double *Wi = W + i * r;
        Wi[i] = 1.0;
        for (int64_t k = i; k < r; ++k) {
            const double x = Wi[k] / U[k * r + k];
            Wi[k] = x;
            const double *Uk = U + k * r;
            for (int64_t j = k + 1; j < r; ++j) Wi[j] -= x * Uk[j];
        }
    }
    /* The reciprocal condition number, from below: first by ||W||_1 ||W||_inf >= ||W W'||_1, then (only when that
     * is not enough) by the exact ||W W'||_1. Both are at least LAPACK's estimate (dpocon: a lower bound of the
     * norm), so this route is taken only where geometry's Cholesky route is. */
    double n1 = 0.0, ninf = 0.0;
    for (int64_t i = 0; i < r; ++i) {
        double row = 0.0, col = 0.0;
        for (int64_t k = 0; k < r; ++k) {
            row += fabs(W[i * r + k]);
            col += fabs(W[k * r + i]);
        }
        if (!isfinite(row)) {
            status = 1;
            goto done;
        }
        if (row > ninf) ninf = row;
        if (col > n1) n1 = col;
    }
    if (!(1.0 / (anorm * (n1 * ninf)) > min_rcond) && !(1.0 / (anorm * inverse_norm1(W, r)) > min_rcond)) {
        status = 1;
        goto done;
    }

    /* w1 = W' 1 (column sums), s = 1' K_RR^-1 1 = ||w1||^2; (Kt^-1)_pp = ||W_p.||^2 - u_p^2 / s, u = W w1 */
    double s = 0.0;
    for (int64_t j = 0; j < r; ++j) {
        double v = 0.0;
        for (int64_t i = 0; i <= j; ++i) v += W[i * r + j];
        w1[j] = v;
        s += v * v;
    }
    for (int64_t i = 0; i < n_in; ++i) s2_in[i] = 0.0; /* merged points: lambda = e_twin */
    for (int64_t t = 0; t < r; ++t) {
        const int64_t p = rep[t];
        if (merged[p]) continue;
        double sq = 0.0, u = 0.0;
        for (int64_t k = t; k < r; ++k) {
            sq += W[t * r + k] * W[t * r + k];
            u += W[t * r + k] * w1[k];
        }
        const double diag = sq - u * u / s;
        s2_in[p] = diag > 0.0 ? 1.0 / diag : INFINITY;
    }
    /* other SVs q: S_q^2 = K_qq - v' Kt^-1 v, v = [K_Rq; 1]; with z = W' K_Rq: v' Kt^-1 v = ||z||^2 - (w1'z - 1)^2 / s */
    for (int64_t t = 0; t < n_out; ++t) {
        const double *Kq = K + others[t] * ld;
        for (int64_t j = 0; j < r; ++j) z[j] = 0.0;
        for (int64_t i = 0; i < r; ++i) {
            const double v = Kq[inbound[rep[i]]];
            const double *Wi = W + i * r;
            for (int64_t j = i; j < r; ++j) z[j] += Wi[j] * v;
        }
        double zz = 0.0, wz = 0.0;
        for (int64_t j = 0; j < r; ++j) {
            zz += z[j] * z[j];
            wz += w1[j] * z[j];
        }
        const double value = Kq[others[t]] - (zz - (wz - 1.0) * (wz - 1.0) / s);
        s2_out[t] = value > 0.0 ? value : 0.0;
    }
done:
    free(label);
    free(rep);
    free(merged);
    free(U);
    free(W);
    free(w1);
    free(z);
    return status;
}
