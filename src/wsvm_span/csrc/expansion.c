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
