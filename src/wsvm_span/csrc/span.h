/* The span-rule's S_p^2 of one machine's support vectors (method.md, Corollary 1), read from a precomputed
 * kernel in place: the small-machine path of span.geometry.unconstrained_span2. */
#ifndef WSVM_SPAN_H
#define WSVM_SPAN_H

#include <stddef.h>
#include <stdint.h>

/* S_p^2 without box constraints: the squared distance from phi(x_p) to the affine hull of the in-bound SVs
 * (other than p). inbound: the n_in >= 1 in-bound SVs' rows of K; others: the n_out other SVs' rows. Coincident
 * in-bound points (squared distance <= coincident_rtol * max(1, max K_ii)) are merged into the first of their
 * group, and every point of such a group gets S_p^2 = 0 (a twin spans it). The bordered matrix
 * Kt = [[K_RR, 1], [1', 0]] of the representatives R is inverted through the Cholesky factor U of K_RR
 * (U'U = K_RR) and W = U^-1; with w = W'1 and s = ||w||^2 = 1'K_RR^-1 1:
 *   in-bound p:  (Kt^-1)_pp = ||W_p.||^2 - (W_p. w)^2 / s,  S_p^2 = 1 / (Kt^-1)_pp, inf where that is <= 0;
 *   other q:     z = W' K_Rq,  S_q^2 = K_qq - ||z||^2 + (w'z - 1)^2 / s, clipped at 0 from below.
 * Returns 0 with s2_in (n_in) and s2_out (n_out) filled; 1 when K_RR is not numerically positive definite (a
 * pivot <= 0, or a reciprocal condition number, bounded from below, not above min_rcond): the caller takes the
 * general route; -1 when memory ran out. */
int span2_unconstrained(const double *K, ptrdiff_t ld, const int64_t *inbound, int64_t n_in, const int64_t *others,
                        int64_t n_out, double coincident_rtol, double min_rcond, double *s2_in, double *s2_out);

#endif
