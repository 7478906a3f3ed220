/* Kernel expansions over a few points: see expansion.h. */
#include "expansion.h"

void add_expansion(const double *K, ptrdiff_t ld, const int64_t *rows, int64_t n, const int64_t *cols, int64_t m,
                   const double *coef, double *out) {
    for (int64_t k = 0; k < m; ++k) {
        const double *Kc = K + cols[k] * ld;
        const double c = coef[k];
        if (rows)
            for (int64_t t = 0; t < n; ++t) out[t] += c * Kc[rows[t]];
        else
            for (int64_t t = 0; t < n; ++t) out[t] += c * Kc[t];
    }
}

void add_row_products(const double *K, ptrdiff_t ld, const int64_t *rows, int64_t n, int64_t width,
                      const double *coef, double *out) {
    for (int64_t t = 0; t < n; ++t) {
        const double *Kr = K + rows[t] * ld;
        /* four partial sums: one would chain every addition to the previous one */
        double acc[4] = {0.0, 0.0, 0.0, 0.0};
        int64_t j = 0;
        for (; j + 4 <= width; j += 4) {
            acc[0] += Kr[j] * coef[j];
            acc[1] += Kr[j + 1] * coef[j + 1];
            acc[2] += Kr[j + 2] * coef[j + 2];
            acc[3] += Kr[j + 3] * coef[j + 3];
        }
        for (; j < width; ++j) acc[0] += Kr[j] * coef[j];
        out[t] += (acc[0] + acc[1]) + (acc[2] + acc[3]);
    }
}
