/* The primal-dual active-set method of the SVM+ dual: see svm_plus_active_set.h. */
#include "svm_plus_active_set.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const double *Q, *T, *T_diag, *y;
    ptrdiff_t ld;
    const int64_t *idx;
    int64_t n;
    double C;
    const SvmPlusLapack *lapack;
    /* work arrays */
    int64_t *F, *N, *J, *posJ;   /* free a_i, free a~_i (off B), the a~_i that move with an unknown, their rows */
    double *M, *A, *x, *s;       /* the reduced system (column-major), its factored copy, solution, singular values */
    int *ipiv, *iwork;
    double *full_v, *full_out;   /* vectors over all ld points of Q and T (the products, ``times``) */
    double *work;
    int lwork, liwork;
} Ctx;

static inline const double *q_row(const Ctx *c, int64_t s) { return c->Q + (c->idx ? c->idx[s] : s) * c->ld; }
static inline const double *t_row(const Ctx *c, int64_t s) { return c->T + (c->idx ? c->idx[s] : s) * c->ld; }
static inline int64_t col(const Ctx *c, int64_t t) { return c->idx ? c->idx[t] : t; }

/* T's entry (s, t) of the problem: the full matrix off the diagonal, T_diag on it (the subset's own ridge). */
static inline double t_entry(const Ctx *c, int64_t s, int64_t t)
{
    return s == t ? c->T_diag[s] : t_row(c, s)[col(c, t)];
}

static int grow_work(Ctx *c, double query, int query_iwork)
{
    int lwork = (int)query;
    if (lwork < 1)
        lwork = 1;
    if (lwork > c->lwork) {
        double *w = realloc(c->work, (size_t)lwork * sizeof(double));
        if (!w)
            return -1;
        c->work = w;
        c->lwork = lwork;
    }
    if (query_iwork > c->liwork) {
        int *w = realloc(c->iwork, (size_t)query_iwork * sizeof(int));
        if (!w)
            return -1;
        c->iwork = w;
        c->liwork = query_iwork;
    }
    return 0;
}

/* out = (P v)_s over the problem's points, P = Q or T (T with the problem's own diagonal T_diag): v scattered over
 * all ld points (0 off the problem) and one BLAS product with the full matrix, whose rows are contiguous, where a
 * product gathered through idx cost several times the reduced system's factorization (l = 200). The full
 * diagonal's term is swapped for the problem's own (the refit's ridge), a round-off apart from the cut matrix's
 * product. */
static void times(const Ctx *c, const double *P, const double *diag, const double *v, double *out)
{
    const int64_t n = c->n;
    int L = (int)c->ld, one = 1;
    double alpha = 1.0, beta = 0.0;
    char trans = 'T';  /* the row-major matrix is its column-major transpose */
    if (c->idx) {
        memset(c->full_v, 0, (size_t)L * sizeof(double));
        for (int64_t s = 0; s < n; s++)
            c->full_v[c->idx[s]] = v[s];
    } else {
        memcpy(c->full_v, v, (size_t)n * sizeof(double));
    }
    c->lapack->dgemv(&trans, &L, &L, &alpha, (double *)P, &L, c->full_v, &one, &beta, c->full_out, &one);
    for (int64_t s = 0; s < n; s++) {
        const int64_t i = col(c, s);
        out[s] = c->full_out[i];
        if (diag)
            out[s] += (diag[s] - P[i * c->ld + i]) * v[s];
    }
}

static void q_times(const Ctx *c, const double *v, double *out) { times(c, c->Q, NULL, v, out); }
static void t_times(const Ctx *c, const double *v, double *out) { times(c, c->T, c->T_diag, v, out); }

/* Least squares, as scipy.linalg.lstsq (dgelsd, rcond = machine epsilon) on M, rhs: the minimiser of a singular
 * system is not unique and any solution of the consistent system serves (``solver.solve_symmetric``). */
static int lstsq(Ctx *c, int dim, const double *rhs, int *status)
{
    int one = 1, rank, info, lwork = -1;
    double rcond = DBL_EPSILON, query;
    int iquery = 0;
    memcpy(c->A, c->M, (size_t)dim * dim * sizeof(double));
    memcpy(c->x, rhs, (size_t)dim * sizeof(double));
    c->lapack->dgelsd(&dim, &dim, &one, c->A, &dim, c->x, &dim, c->s, &rcond, &rank, &query, &lwork, &iquery,
                      &info);
    if (info < 0)
        return -2;
    if (grow_work(c, query, iquery > dim ? iquery : dim) < 0)
        return -1;
    lwork = c->lwork;
    c->lapack->dgelsd(&dim, &dim, &one, c->A, &dim, c->x, &dim, c->s, &rcond, &rank, c->work, &lwork, c->iwork,
                      &info);
    if (info < 0)
        return -2;
    if (info > 0)
        *status = SVM_PLUS_AS_LSTSQ;
    return 0;
}

/* The exact minimiser of the dual with a_Z = 0 and a~_B = a_B - C (``SVMPlusProblem.reduced_system``): unknowns
 * z = [a_F; a~_N; b; b~], matrix [[H, A'], [A, 0]] with H = Q_FF on a_F plus T on the a~'s that move with an
 * unknown (a~_i = a_i - C on F & B, the unknown a~_i on N), A the rows of y'a = 0 and 1'a~ = 0; the fixed part -C
 * of a~ on B enters the right-hand side as C T_JB 1. Solved as scipy.linalg.solve(assume_a="sym") solves it
 * (dsysv on the upper triangle, dsycon's estimate against dlamch('E')), by least squares where that is singular or
 * its rcond below eps (``solve_symmetric``). */
static int solve_on_sets(Ctx *c, const unsigned char *Z, const unsigned char *B, double *a, double *at, double *b,
                         double *bt, int *status)
{
    const int64_t n = c->n;
    const double C = c->C;
    int64_t nF = 0, nN = 0, nJ = 0, nB = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!Z[i]) {
            if (B[i]) {
                c->J[nJ] = i;
                c->posJ[nJ++] = nF;
            }
            c->F[nF++] = i;
        }
        if (!B[i])
            c->N[nN++] = i;
        nB += B[i] != 0;
    }
    const int64_t ns = nF + nN;
    for (int64_t k = 0; k < nN; k++) {
        c->J[nJ] = c->N[k];
        c->posJ[nJ++] = nF + k;
    }
    const int dim = (int)(ns + 2);
    double *M = c->M;
    double *rhs_copy = c->x + dim;  /* the right-hand side, behind the solution in x (2 dim_max entries) */
    memset(M, 0, (size_t)dim * dim * sizeof(double));
    for (int64_t j = 0; j < nF; j++) {
        const double *row = q_row(c, c->F[j]);
        double *mcol = M + j * (int64_t)dim;
        for (int64_t i = 0; i < nF; i++)
            mcol[i] = row[col(c, c->F[i])];
    }
    for (int64_t m = 0; m < nJ; m++) {
        double *mcol = M + c->posJ[m] * (int64_t)dim;
        for (int64_t k = 0; k < nJ; k++)
            mcol[c->posJ[k]] += t_entry(c, c->J[m], c->J[k]);
    }
    for (int64_t i = 0; i < nF; i++)
        M[ns + i * (int64_t)dim] = M[i + ns * (int64_t)dim] = c->y[c->F[i]];
    for (int64_t k = 0; k < nJ; k++)
        M[ns + 1 + c->posJ[k] * (int64_t)dim] = M[c->posJ[k] + (ns + 1) * (int64_t)dim] = 1.0;
    for (int64_t i = 0; i < dim; i++)
        rhs_copy[i] = i < nF ? 1.0 : 0.0;
    /* the sums T_JB 1 by one product T b_B (b_B: 1 on B), its entries at J */
    double *ones_B = c->s, *T_ones_B = c->s + n;
    for (int64_t j = 0; j < n; j++)
        ones_B[j] = B[j] ? 1.0 : 0.0;
    t_times(c, ones_B, T_ones_B);
    for (int64_t k = 0; k < nJ; k++)
        rhs_copy[c->posJ[k]] += C * T_ones_B[c->J[k]];
    rhs_copy[ns + 1] = C * (double)nB;

    /* scipy.linalg.solve(M, rhs, assume_a="sym") */
    char uplo = 'U', norm = '1', eps_code = 'E';
    int one = 1, info = 0, lwork = -1;
    double query, rcond = 0.0;
    double anorm = c->lapack->dlange(&norm, (int *)&dim, (int *)&dim, M, (int *)&dim, c->s);
    memcpy(c->A, M, (size_t)dim * dim * sizeof(double));
    memcpy(c->x, rhs_copy, (size_t)dim * sizeof(double));
    c->lapack->dsysv(&uplo, (int *)&dim, &one, c->A, (int *)&dim, c->ipiv, c->x, (int *)&dim, &query, &lwork, &info);
    if (info < 0)
        return -2;
    if (grow_work(c, query > 2.0 * dim ? query : 2.0 * dim, dim) < 0)  /* dsycon needs 2 dim and dim */
        return -1;
    lwork = c->lwork;
    c->lapack->dsysv(&uplo, (int *)&dim, &one, c->A, (int *)&dim, c->ipiv, c->x, (int *)&dim, c->work, &lwork,
                     &info);
    if (info < 0)
        return -2;
    int singular = info > 0;
    if (!singular) {
        c->lapack->dsycon(&uplo, (int *)&dim, c->A, (int *)&dim, c->ipiv, &anorm, &rcond, c->work, c->iwork, &info);
        if (info < 0)
            return -2;
        /* scipy: LinAlgError where rcond == 0, LinAlgWarning where !(rcond >= eps) (NaN included) */
        singular = rcond == 0.0 || !(rcond >= c->lapack->dlamch(&eps_code));
    }
    if (singular) {
        /* the right-hand side sits in x's second half, which the least squares' copy into the first leaves */
        int rc = lstsq(c, dim, rhs_copy, status);
        if (rc < 0)
            return rc;
    }
    const double *z = c->x;
    for (int64_t i = 0; i < n; i++)
        a[i] = 0.0;
    for (int64_t i = 0; i < nF; i++)
        a[c->F[i]] = z[i];
    for (int64_t i = 0; i < n; i++)
        at[i] = B[i] ? a[i] - C : 0.0;
    for (int64_t k = 0; k < nN; k++)
        at[c->N[k]] = z[nF + k];
    *b = z[ns];
    *bt = z[ns + 1];
    return 0;
}

/* ``SVMPlus.kkt_residuals`` of (a, a~, b, b~), its largest: a, beta relative to C, mu and xi in margin units,
 * products relative to C. */
static double kkt_violation(const Ctx *c, const double *a, const double *at, double b, double bt, double *w,
                            double *xi)
{
    const double C = c->C;
    q_times(c, a, w);
    t_times(c, at, xi);
    double neg_a = 0.0, neg_beta = 0.0, neg_xi = 0.0, neg_mu = 0.0, a_mu = 0.0, beta_xi = 0.0, ya = 0.0, sum_at = 0.0;
    for (int64_t i = 0; i < c->n; i++) {
        const double y = c->y[i];
        const double x = xi[i] + bt;              /* correcting_train */
        const double mu = y * (y * w[i] + b) - 1.0 + x;  /* y decision_train - 1 + xi */
        const double beta = C + at[i] - a[i];
        neg_a = fmax(neg_a, -a[i]);
        neg_beta = fmax(neg_beta, -beta);
        neg_xi = fmax(neg_xi, -x);
        neg_mu = fmax(neg_mu, -mu);
        a_mu = fmax(a_mu, fabs(a[i] * mu));
        beta_xi = fmax(beta_xi, fabs(beta * x));
        ya += y * a[i];
        sum_at += at[i];
    }
    double v = fmax(fmax(neg_a / C, neg_beta / C), fmax(neg_xi, neg_mu));
    v = fmax(v, fmax(a_mu / C, beta_xi / C));
    return fmax(v, fmax(fabs(ya) / C, fabs(sum_at) / C));
}

static uint64_t state_hash(const unsigned char *Z, const unsigned char *B, int64_t n)
{
    uint64_t h = 1469598103934665603ULL;  /* FNV-1a */
    for (int64_t i = 0; i < n; i++)
        h = (h ^ Z[i]) * 1099511628211ULL;
    for (int64_t i = 0; i < n; i++)
        h = (h ^ B[i]) * 1099511628211ULL;
    return h;
}

/* The minimiser on the sets Z, B (over the points but p) by bordering the full model's inverse
 * (``SvmPlusBordered``): 1 where served, 0 where the Schur complement is refused, -1 where memory ran out,
 * -2 on a LAPACK argument error. */
static int bordered_solve(const Ctx *c, SvmPlusBordered *bd, const unsigned char *Z, const unsigned char *B,
                          double *a, double *at, double *b, double *bt)
{
    const int64_t l = bd->l_full, N = bd->N, p = bd->p, n = c->n;
    const double C = c->C;
    int rc = 0;
    unsigned char *Zf = calloc((size_t)(2 * l), 1);
    int64_t *first = malloc((size_t)(4 * l + 4) * sizeof(int64_t));
    if (!Zf || !first) {
        free(Zf);
        free(first);
        return -1;
    }
    unsigned char *Bf = Zf + l;
    int64_t *second = first + 2 * l + 2;
    for (int64_t s = 0; s < n; s++) {
        Zf[c->idx[s]] = Z[s];
        Bf[c->idx[s]] = B[s];
    }
    /* each bordering column w_j: up to two (position, coefficient) pairs, first[j] with 1 and second[j] with
     * coefficient -1 where it is a new beta_i = 0 row (a~_i - a_i = -C: right-hand side -C), else 1 at first[j]
     * alone: a new a_i = 0, p's pins (a~_p, and a_p unless a_p = 0 is a model row), and the dropped model rows (a
     * multiplier held at 0: its row freed by its own unknown) */
    int64_t k = 0, n_new_B;
    for (int64_t i = 0; i < l; i++)
        if (Zf[i] && !bd->Z0[i])
            first[k++] = i;
    const int64_t start_B = k;
    for (int64_t i = 0; i < l; i++)
        if (Bf[i] && !bd->B0[i]) {
            second[k] = i;
            first[k++] = l + i;
        }
    n_new_B = k - start_B;
    if (!bd->Z0[p])
        first[k++] = p;
    first[k++] = l + p;
    for (int64_t i = 0; i < l; i++)  /* p's a_p = 0 row is its pin */
        if (bd->Z0[i] && !Zf[i] && i != p)
            first[k++] = bd->row_of[i];
    for (int64_t i = 0; i < l; i++)  /* p's beta_p = 0 row is dropped with the others: a~_p = 0, not a_p - C */
        if (bd->B0[i] && !Bf[i])
            first[k++] = bd->row_of[l + i];
    double *Y = malloc((size_t)(N * k + k * k + 6 * k + 1) * sizeof(double));
    int *ipiv = malloc((size_t)(2 * k + 1) * sizeof(int));
    if (!Y || !ipiv) {
        rc = -1;
        goto out;
    }
    double *S = Y + N * k, *mu = S + k * k, *work = mu + k;
    int *iwork = ipiv + k;
    /* Y = K0^-1 W (column j of Y: row-major N x k, Y[r * k + j]); S = W' Y, column-major for LAPACK */
    for (int64_t r = 0; r < N; r++) {
        const double *row = bd->inverse + r * N;
        for (int64_t j = 0; j < k; j++) {
            double v = row[first[j]];
            if (j >= start_B && j < start_B + n_new_B)
                v -= row[second[j]];
            Y[r * k + j] = v;
        }
    }
    for (int64_t j = 0; j < k; j++)
        for (int64_t i = 0; i < k; i++) {
            double v = Y[first[i] * k + j];
            if (i >= start_B && i < start_B + n_new_B)
                v -= Y[second[i] * k + j];
            S[i + j * k] = v;
        }
    /* rhs W' x0 - d, d = -C on the new beta_i = 0 rows */
    for (int64_t i = 0; i < k; i++) {
        double v = bd->x0[first[i]];
        if (i >= start_B && i < start_B + n_new_B)
            v = v - bd->x0[second[i]] + C;
        mu[i] = v;
    }
    /* LAPACK's 1-norm estimate of cond(S) from its LU factors (scipy's lu_factor and dgecon, as the Python
     * bordering took it) */
    double anorm = 0.0, rcond = 0.0;
    for (int64_t j = 0; j < k; j++) {
        double sum = 0.0;
        for (int64_t i = 0; i < k; i++)
            sum += fabs(S[i + j * k]);
        anorm = fmax(anorm, sum);
    }
    int kk = (int)k, one = 1, info = 0;
    char norm = '1', trans = 'N';
    c->lapack->dgetrf(&kk, &kk, S, &kk, ipiv, &info);
    if (info < 0) {
        rc = -2;
        goto out;
    }
    c->lapack->dgecon(&norm, &kk, S, &kk, &anorm, &rcond, work, iwork, &info);
    if (info < 0) {
        rc = -2;
        goto out;
    }
    if (!(rcond * bd->cond_max >= 1.0)) {
        bd->refused++;
        goto out;
    }
    c->lapack->dgetrs(&trans, &kk, &one, S, &kk, ipiv, mu, &kk, &info);
    if (info < 0) {
        rc = -2;
        goto out;
    }
    bd->served++;
    rc = 1;
    /* x = x0 - Y mu, read at the problem's points' a_i (i), a~_i (l + i), b (2l), b~ (2l + 1) */
    for (int64_t s = 0; s < n; s++) {
        const int64_t i = c->idx[s];
        double xa = bd->x0[i], xt = bd->x0[l + i];
        for (int64_t j = 0; j < k; j++) {
            xa -= Y[i * k + j] * mu[j];
            xt -= Y[(l + i) * k + j] * mu[j];
        }
        a[s] = Z[s] ? 0.0 : xa;
        at[s] = B[s] ? a[s] - C : xt;
    }
    double xb = bd->x0[2 * l], xbt = bd->x0[2 * l + 1];
    for (int64_t j = 0; j < k; j++) {
        xb -= Y[2 * l * k + j] * mu[j];
        xbt -= Y[(2 * l + 1) * k + j] * mu[j];
    }
    *b = xb;
    *bt = xbt;
out:
    free(Zf);
    free(first);
    free(Y);
    free(ipiv);
    return rc;
}

int64_t svm_plus_active_set_workspace(int64_t n, ptrdiff_t ld)
{
    const int64_t dim_max = 2 * n + 2;
    return 2 * dim_max * dim_max + 3 * dim_max + 2 * (int64_t)ld + 4 * n + 1;
}

int svm_plus_active_set(const double *Q, const double *T, ptrdiff_t ld, const double *T_diag, const int64_t *idx,
                        int64_t n, const double *y, double C, unsigned char *Z, unsigned char *B,
                        const double *first, const unsigned char *first_Z, const unsigned char *first_B,
                        int64_t max_iter, int64_t block_backup, double release_tol, double kkt_tol,
                        const SvmPlusLapack *lapack, SvmPlusBordered *bordered, double *alpha,
                        double *alpha_tilde, double *workspace, SvmPlusActiveSetResult *result)
{
    Ctx c = {.Q = Q, .T = T, .T_diag = T_diag, .y = y, .ld = ld, .idx = idx, .n = n, .C = C, .lapack = lapack};
    const int64_t dim_max = 2 * n + 2;
    int rc = 0;
    double b = 0.0, bt = 0.0;
    c.F = malloc((size_t)(4 * n + 1) * sizeof(int64_t));
    c.M = workspace;
    c.ipiv = malloc((size_t)dim_max * sizeof(int));
    double *vec = workspace + 2 * dim_max * dim_max + 3 * dim_max + 2 * ld;  /* xi, mu (w), beta */
    unsigned char *wrong = malloc((size_t)(2 * n + 1));
    unsigned char *seen = malloc((size_t)(max_iter * 2 * n + 1));  /* max_iter 0: no iteration, "max_iter" */
    uint64_t *hashes = malloc((size_t)(max_iter + 1) * sizeof(uint64_t));
    if (!c.F || !c.ipiv || !wrong || !seen || !hashes) {
        rc = -1;
        goto done;
    }
    c.N = c.F + n;
    c.J = c.N + n;
    c.posJ = c.J + n;
    c.A = c.M + dim_max * dim_max;
    c.x = c.A + dim_max * dim_max;  /* 2 dim_max: the solution, then the right-hand side */
    c.s = c.x + 2 * dim_max;
    c.full_v = c.s + dim_max;
    c.full_out = c.full_v + ld;
    double *xi = vec, *mu = vec + n, *beta = vec + 2 * n;
    double fewest = INFINITY;
    int64_t backup = block_backup, n_seen = 0;
    result->solves = 0;
    result->violation = INFINITY;
    result->status = SVM_PLUS_AS_MAX_ITER;
    result->iterations = max_iter;
    for (int64_t iteration = 1; iteration <= max_iter; iteration++) {
        int status = SVM_PLUS_AS_CONVERGED;
        /* known: this iteration's minimiser not from its own reduced system (the known one, the bordering) */
        int known = first && memcmp(Z, first_Z, (size_t)n) == 0 && memcmp(B, first_B, (size_t)n) == 0;
        if (known) {
            memcpy(alpha, first, (size_t)n * sizeof(double));
            memcpy(alpha_tilde, first + n, (size_t)n * sizeof(double));
            b = first[2 * n];
            bt = first[2 * n + 1];
        } else if (bordered && (rc = bordered_solve(&c, bordered, Z, B, alpha, alpha_tilde, &b, &bt)) != 0) {
            if (rc < 0)
                goto done;
            rc = 0;
            known = 1;
        } else {
            if ((rc = solve_on_sets(&c, Z, B, alpha, alpha_tilde, &b, &bt, &status)) < 0)
                goto done;
            result->solves++;
        }
        if (status != SVM_PLUS_AS_CONVERGED) {
            result->status = status;
            result->iterations = iteration;
            goto done;
        }
        q_times(&c, alpha, mu);
        t_times(&c, alpha_tilde, xi);
        int64_t n_wrong = 0, last = -1;
        for (int64_t i = 0; i < n; i++) {
            xi[i] += bt;
            mu[i] = mu[i] + b * y[i] - 1.0 + xi[i];
            beta[i] = C + alpha_tilde[i] - alpha[i];
        }
        /* complementarity as a fixed point: an active bound stays active unless its multiplier is below
         * -release_tol; a free variable becomes active where it left its bound by more than kkt_tol C */
        for (int64_t i = 0; i < n; i++)
            wrong[i] = Z[i] ? mu[i] < -release_tol : alpha[i] < -kkt_tol * C;
        for (int64_t i = 0; i < n; i++)
            wrong[n + i] = B[i] ? xi[i] < -release_tol : beta[i] < -kkt_tol * C;
        for (int64_t k = 0; k < 2 * n; k++)
            if (wrong[k]) {
                n_wrong++;
                last = k;
            }
        if (n_wrong == 0) {
            for (int pass = 0; pass < 2; pass++) {
                for (int64_t i = 0; i < n; i++) {
                    alpha[i] = fmax(alpha[i], 0.0);
                    if (B[i])
                        alpha_tilde[i] = alpha[i] - C;
                }
                result->violation = kkt_violation(&c, alpha, alpha_tilde, b, bt, mu, xi);
                if (result->violation <= kkt_tol || !known || pass == 1)
                    break;
                /* the known minimiser's round-off (the exact LOO's first iteration or its bordering, whose explicit
                 * inverse's products have errors of cond(K0) eps |x|): the converged sets' own system */
                if ((rc = solve_on_sets(&c, Z, B, alpha, alpha_tilde, &b, &bt, &status)) < 0)
                    goto done;
                result->solves++;
                if (status != SVM_PLUS_AS_CONVERGED)
                    break;
            }
            result->status = status != SVM_PLUS_AS_CONVERGED ? status
                             : result->violation <= kkt_tol ? SVM_PLUS_AS_CONVERGED : SVM_PLUS_AS_KKT;
            result->iterations = iteration;
            goto done;
        }
        /* block principal pivoting: all wrong guesses flip while their number falls, or for block_backup more
         * tries; then only the last one (Murty's single pivot), which ends the cycling of full block updates */
        if (n_wrong < fewest) {
            fewest = (double)n_wrong;
            backup = block_backup;
        } else if (backup > 0) {
            backup--;
        } else {
            memset(wrong, 0, (size_t)(2 * n));
            wrong[last] = 1;
        }
        for (int64_t i = 0; i < n; i++) {
            Z[i] ^= wrong[i];
            B[i] ^= wrong[n + i];
        }
        /* a state seen after an earlier flip ends the method (the first guess is not among them, as in
         * ``SVMPlusProblem.active_set`` before it was compiled) */
        const uint64_t h = state_hash(Z, B, n);
        for (int64_t k = 0; k < n_seen; k++) {
            const unsigned char *s = seen + k * 2 * n;
            if (hashes[k] == h && memcmp(s, Z, (size_t)n) == 0 && memcmp(s + n, B, (size_t)n) == 0) {
                result->status = SVM_PLUS_AS_CYCLE;
                result->iterations = iteration;
                goto done;
            }
        }
        hashes[n_seen] = h;
        memcpy(seen + n_seen * 2 * n, Z, (size_t)n);
        memcpy(seen + n_seen * 2 * n + n, B, (size_t)n);
        n_seen++;
    }
done:
    result->b = b;
    result->b_tilde = bt;
    free(c.F);
    free(c.ipiv);
    free(c.iwork);
    free(c.work);
    free(wrong);
    free(seen);
    free(hashes);
    return rc;
}
