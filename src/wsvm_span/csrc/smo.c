/* SMO for the weighted C-SVM dual on a precomputed kernel: see smo.h for the problem and the sources.
 *
 * Notation (Fan, Chen and Lin 2005): G = Qa - e is the gradient,
 *   I_up  = { t : a_t < C_t, y_t = +1  or  a_t > 0, y_t = -1 }   (a_t can move along +y_t)
 *   I_low = { t : a_t < C_t, y_t = -1  or  a_t > 0, y_t = +1 }   (a_t can move along -y_t)
 *   m(a) = max_{I_up} -y_t G_t,   M(a) = min_{I_low} -y_t G_t;   a is eps-optimal when m(a) - M(a) <= eps.
 * A step moves the pair (i in I_up, j in I_low) along d_i = y_i, d_j = -y_j (which keeps y'a = 0) by
 *   lambda = min( b_ij / a_ij, room of a_i, room of a_j ),   b_ij = -y_i G_i + y_j G_j > 0,
 *   a_ij = K_ii + K_jj - 2 K_ij  (d'Qd; TAU when not positive: duplicate points, an indefinite kernel),
 * and then G_t += lambda y_t (K_it - K_jt). i maximises -y_t G_t over I_up; j maximises the decrease
 * b_it^2 / (2 a_it) over t in I_low with b_it > 0: the second-order working set selection ("WSS 2").
 * The solver stores v_t = -y_t G_t rather than G: the step is then v_t -= lambda (K_it - K_jt) and the
 * selection reads v, the membership flags and the kernel row, and no label, in its loops.
 *
 * Layout: the solver keeps its own copies of the per-variable arrays in a permuted order whose prefix
 * [0, n_active) is the active set, in ascending kernel index order, so that reading a kernel row over the
 * active set walks forward through memory. Shrinking moves the variables that are at a bound and beyond
 * [M, m] on the side they cannot move to behind the prefix (a stable partition). Their gradient is not
 * updated while they are shrunk. Each shrinking pass that sets variables aside keeps a copy of alpha (a
 * snapshot); when they come back, their gradient is brought up to date from the alphas that changed since
 * their snapshot, one kernel row per changed alpha: after the first passes these are the few variables that
 * are still moving. (LIBSVM instead keeps G_bar = sum over the variables at C of C_s Q_s up to date, an O(n)
 * row pass every time a variable reaches or leaves its bound: most steps at a small C, where it costs more
 * than the steps; and recomputing the gradient from every support vector costs a row per support vector.)
 */
#include "smo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { AT_LOWER = 0, AT_UPPER = 1, FREE = 2 };
/* membership flags: in I_up, in I_low (both: a free variable) */
enum { UP = 1, LOW = 2 };

/* the curvature used when a_ij <= 0 (LIBSVM's TAU: a long step that the box then clips) */
#define TAU 1e-12
/* iterations between two shrinking passes (LIBSVM's choice) */
#define SHRINK_EVERY 1000
/* snapshots of alpha kept for the shrunk variables; with more passes than this the shrunk variables' gradient
 * is brought up to date and the snapshots start over */
#define MAX_SNAPSHOTS 32

typedef struct {
    const double *K;
    ptrdiff_t ld;
    int64_t n, n_active;
    /* per position p (the solver's order): */
    int64_t *kidx;          /* the kernel row/column of the variable at p */
    int64_t *home;          /* its index in the caller's arrays */
    double *y, *C, *alpha, *v, *Kdiag;
    signed char *status, *flags;
    /* every K_tt equal (the RBF kernel's 1): the selection reads this one value instead of Kdiag */
    int const_diag;
    /* the next step's i and m(a), found by the previous step's gradient pass (valid = 0: search) */
    int next_valid;
    int64_t next_i;
    double next_m_up;
    /* the active set's kernel columns are kidx[0] + t (an unshrunk problem on all of K, or a contiguous
     * block of it): rows are read in place, no gather, no cache */
    int contiguous;
    /* scratch of n entries */
    double *work, *spare_i, *spare_j;
    int64_t *iwork;
    /* Kernel rows over the active set, K[kidx[p], kidx[t]] for t < n_active, contiguous: the rows of the
     * working pair are read three times per step, and the compact row of a shrunk problem is a fraction of
     * the kernel row it is gathered from. Slots hold n_active doubles (`stride`), so that more rows fit as the
     * active set shrinks (LIBSVM's cache, too, keeps rows over the active set only: with a row cache of fixed
     * size, whose rows are computed again when evicted, this decides how often they are), and stay valid until
     * the active set is permuted (a shrinking pass that removes a variable, unshrinking), when the geometry is
     * set again (set_active_set). */
    double *cache;
    int64_t cache_len, slot_capacity, stride;
    int64_t n_slots, clock;
    int64_t *slot_of;       /* per position: its slot or -1 */
    int64_t *owner;         /* per slot: the position whose row it holds, or -1 */
    int64_t *last_used;     /* per slot: the clock of its last use */
    int64_t step_work, gradient_work;  /* SmoResult's counters */
    const RowSource *rows;  /* NULL: every row of K is valid */
    int fill_failed;
    double *zero_row;       /* with rows: what a failed read returns (n_rows zeros) while the solve winds down */
    /* the shrunk variables' snapshots: alpha in the caller's order at each pass that shrank some, and per
     * caller's index the snapshot its variable was shrunk at (-1: active) */
    const int64_t *idx0;    /* the caller's idx (NULL: 0..n-1) */
    const double *y0;       /* the caller's y */
    double *snapshots[MAX_SNAPSHOTS];
    int n_snapshots;
    int *shrunk_at;
    double *alpha_home;     /* scratch: alpha in the caller's order */
    int64_t *members;       /* scratch: positions grouped by snapshot */
} Smo;

/* cond ? a : b by bit masks: compilers turn a ternary on unpredictable data into a branch, and its
 * mispredictions dominated the selection's cost (cachegrind --branch-sim) */
static inline double choose(int cond, double a, double b) {
    uint64_t ua, ub;
    memcpy(&ua, &a, sizeof ua);
    memcpy(&ub, &b, sizeof ub);
    const uint64_t mask = -(uint64_t)(cond != 0);
    const uint64_t r = (ua & mask) | (ub & ~mask);
    double d;
    memcpy(&d, &r, sizeof d);
    return d;
}

static inline signed char status_of(double a, double c) {
    if (a >= c) return AT_UPPER;
    if (a <= 0.0) return AT_LOWER;
    return FREE;
}

/* K's row r: the one accessor of the kernel. In place (no source, or a row already computed in K) it is read
 * where it is; otherwise the source computes it (RowSource: valid until this thread's next call, so every caller
 * reads it at once). A failed read returns zeros and ends the solve (-2). */
static inline const double *row_of(Smo *s, int64_t r) {
    const RowSource *src = s->rows;
    if (!src || (src->computed && __atomic_load_n(&src->computed[r], __ATOMIC_ACQUIRE))) return s->K + r * s->ld;
    const double *row = src->row(src->ctx, r);
    if (row) return row;
    s->fill_failed = 1;
    return s->zero_row;
}

static inline const double *kernel_row(Smo *s, int64_t p) { return row_of(s, s->kidx[p]); }

static inline signed char flags_of(signed char status, double y) {
    if (status == FREE) return UP | LOW;
    return (status == AT_UPPER) == (y > 0) ? LOW : UP;
}

static void set_alpha(Smo *s, int64_t p, double a) {
    s->alpha[p] = a;
    s->status[p] = status_of(a, s->C[p]);
    s->flags[p] = flags_of(s->status[p], s->y[p]);
}

static void cache_clear(Smo *s) {
    for (int64_t k = 0; k < s->n_slots; ++k) {
        if (s->owner[k] >= 0) s->slot_of[s->owner[k]] = -1;
        s->owner[k] = -1;
        s->last_used[k] = -1;
    }
}

/* After the active set changed (the slots are empty then: permute clears them): whether its columns are
 * contiguous, and the slots' geometry, n_active doubles each, at most one per active variable; none rather than
 * one (a step needs two rows at once). The slots hold copies of kernel entries: their number changes the work,
 * never a value. */
static void set_active_set(Smo *s) {
    /* rows read in place need K to hold them: a row cache's pointer is valid only while it is gathered */
    s->contiguous = !s->rows || s->rows->computed != NULL;
    for (int64_t t = 1; t < s->n_active && s->contiguous; ++t) s->contiguous = s->kidx[t] == s->kidx[0] + t;
    /* a shrinking pass may set every variable aside (n_active = 0 until unshrinking): no slots then */
    int64_t slots = s->cache && s->n_active > 0 ? s->cache_len / s->n_active : 0;
    if (slots > s->n_active) slots = s->n_active;
    if (slots > s->slot_capacity) slots = s->slot_capacity;
    s->n_slots = slots >= 2 ? slots : 0;
    s->stride = s->n_active;
}

/* K[kidx[p], kidx[t]] for t < n_active, contiguous: in place, from the cache, or gathered into the least
 * recently used slot (into `spare`, n doubles, without slots). */
static const double *active_row(Smo *s, int64_t p, double *spare) {
    if (s->contiguous) return kernel_row(s, p) + s->kidx[0];
    int64_t k = s->slot_of[p];
    if (k >= 0) {
        s->last_used[k] = ++s->clock;
        return s->cache + k * s->stride;
    }
    double *dst = spare;
    if (s->n_slots > 0) {
        k = 0;
        for (int64_t q = 1; q < s->n_slots; ++q)
            if (s->last_used[q] < s->last_used[k]) k = q;
        if (s->owner[k] >= 0) s->slot_of[s->owner[k]] = -1;
        s->owner[k] = p;
        s->slot_of[p] = k;
        s->last_used[k] = ++s->clock;
        dst = s->cache + k * s->stride;
    }
    const double *Kp = kernel_row(s, p);
    const int64_t *kidx = s->kidx;
    const int64_t na = s->n_active;
    for (int64_t t = 0; t < na; ++t) dst[t] = Kp[kidx[t]];
    return dst;
}

/* v_t = -y_t G_t = y_t - sum_p a_p y_p K_pt for every t: one pass over the start's support vectors' kernel
 * rows (when the caller did not give the start's gradient). */
static void start_gradient(Smo *s) {
    const int64_t n = s->n;
    double *h = s->work;
    memset(h, 0, (size_t)n * sizeof(double));
    const int64_t *kidx = s->kidx;
    for (int64_t p = 0; p < n; ++p) {
        if (s->status[p] == AT_LOWER) continue;
        const double *Kp = kernel_row(s, p);
        const double c = s->alpha[p] * s->y[p];
        for (int64_t t = 0; t < n; ++t) h[t] += c * Kp[kidx[t]];
        s->gradient_work += n;
    }
    for (int64_t t = 0; t < n; ++t) s->v[t] = s->y[t] - h[t];
}

/* Move the variables of `order` (a permutation of the positions) to positions 0..n-1. */
static void permute(Smo *s, const int64_t *order) {
    const int64_t n = s->n;
    cache_clear(s);
    double *tmp = s->work;
#define PERMUTE_DOUBLE(arr)                                          \
    do {                                                             \
        for (int64_t q = 0; q < n; ++q) tmp[q] = (arr)[order[q]];    \
        memcpy((arr), tmp, (size_t)n * sizeof(double));              \
    } while (0)
    PERMUTE_DOUBLE(s->y);
    PERMUTE_DOUBLE(s->C);
    PERMUTE_DOUBLE(s->alpha);
    PERMUTE_DOUBLE(s->v);
    PERMUTE_DOUBLE(s->Kdiag);
#undef PERMUTE_DOUBLE
    int64_t *itmp = s->iwork + n;  /* iwork holds 2n: `order` may be its first half */
    for (int64_t q = 0; q < n; ++q) itmp[q] = s->kidx[order[q]];
    memcpy(s->kidx, itmp, (size_t)n * sizeof(int64_t));
    for (int64_t q = 0; q < n; ++q) itmp[q] = s->home[order[q]];
    memcpy(s->home, itmp, (size_t)n * sizeof(int64_t));
    signed char *ctmp = (signed char *)itmp;
    for (int64_t q = 0; q < n; ++q) ctmp[q] = s->status[order[q]];
    memcpy(s->status, ctmp, (size_t)n);
    for (int64_t q = 0; q < n; ++q) ctmp[q] = s->flags[order[q]];
    memcpy(s->flags, ctmp, (size_t)n);
    s->next_valid = 0;
}

/* The shrunk variables' v brought up to date: for the variables shrunk at snapshot e,
 * v_t -= sum_h (a_h - snapshot_e[h]) y_h K_ht over the alphas that changed since (one kernel row each). */
static void bring_shrunk_up_to_date(Smo *s) {
    const int64_t n = s->n, na = s->n_active;
    if (na == n || s->n_snapshots == 0) return;
    for (int64_t p = 0; p < n; ++p) s->alpha_home[s->home[p]] = s->alpha[p];
    /* the shrunk positions grouped by snapshot (counting sort) */
    int64_t start[MAX_SNAPSHOTS + 1] = {0};
    for (int64_t t = na; t < n; ++t) ++start[s->shrunk_at[s->home[t]] + 1];
    for (int e = 0; e < s->n_snapshots; ++e) start[e + 1] += start[e];
    int64_t fill[MAX_SNAPSHOTS];
    memcpy(fill, start, sizeof fill);
    for (int64_t t = na; t < n; ++t) s->members[fill[s->shrunk_at[s->home[t]]]++] = t;
    const int64_t *kidx = s->kidx;
    /* h outer: each changed alpha's kernel row is read once for every snapshot's group (a row cache would
     * otherwise compute it again per group); each v_t still takes its terms in ascending h, as group by group */
    for (int64_t h = 0; h < n; ++h) {
        const double *Kh = NULL;
        for (int e = 0; e < s->n_snapshots; ++e) {
            const int64_t size = start[e + 1] - start[e];
            const double delta = s->alpha_home[h] - s->snapshots[e][h];
            if (size == 0 || delta == 0.0) continue;
            if (!Kh) Kh = row_of(s, s->idx0 ? s->idx0[h] : h);
            const int64_t *group = s->members + start[e];
            const double c = delta * s->y0[h];
            for (int64_t k = 0; k < size; ++k) s->v[group[k]] -= c * Kh[kidx[group[k]]];
            s->gradient_work += size;
        }
    }
}

/* Every variable active again with its true gradient, in the caller's order. */
static void unshrink(Smo *s) {
    if (s->n_active == s->n) return;
    bring_shrunk_up_to_date(s);
    for (int64_t h = 0; h < s->n; ++h) s->shrunk_at[h] = -1;
    s->n_snapshots = 0;
    int64_t *order = s->iwork;
    for (int64_t p = 0; p < s->n; ++p) order[s->home[p]] = p;
    permute(s, order);
    s->n_active = s->n;
    set_active_set(s);
}

/* Chang and Lin (2011), 5.1: a variable at a bound whose -y_t G_t lies beyond m(a) or M(a) on the side it
 * cannot move to is unlikely to change; it is set aside until the end (or the gap falls below 10 eps). */
static int be_shrunk(const Smo *s, int64_t t, double m_up, double minus_M) {
    if (s->flags[t] == UP) return -s->v[t] > minus_M;  /* can only be i: below M(a) */
    if (s->flags[t] == LOW) return s->v[t] > m_up;     /* can only be j: above m(a) */
    return 0;
}

/* m(a) and -M(a) over the first `count` positions */
static void gap_terms(const Smo *s, int64_t count, double *m_up, double *minus_M) {
    double mu = -INFINITY, mm = -INFINITY;
    for (int64_t t = 0; t < count; ++t) {
        if ((s->flags[t] & UP) && s->v[t] > mu) mu = s->v[t];
        if ((s->flags[t] & LOW) && -s->v[t] > mm) mm = -s->v[t];
    }
    *m_up = mu;
    *minus_M = mm;
}

static void do_shrinking(Smo *s, double eps, int *unshrunk) {
    double m_up, minus_M;
    gap_terms(s, s->n_active, &m_up, &minus_M);
    if (!*unshrunk && m_up + minus_M <= 10.0 * eps) {
        /* close to the end: bring every variable back once, with its true gradient */
        *unshrunk = 1;
        unshrink(s);
    }
    const int64_t n = s->n, na = s->n_active;
    int64_t *order = s->iwork;
    int64_t kept = 0;
    for (int64_t t = 0; t < na; ++t)
        if (!be_shrunk(s, t, m_up, minus_M)) order[kept++] = t;
    if (kept == na) return;
    if (s->n_snapshots == MAX_SNAPSHOTS) {
        /* the variables shrunk so far brought up to date: they start over with the snapshot taken below */
        bring_shrunk_up_to_date(s);
        for (int64_t t = na; t < n; ++t) s->shrunk_at[s->home[t]] = 0;
        s->n_snapshots = 0;
    }
    double *snap = s->snapshots[s->n_snapshots];
    if (!snap) snap = s->snapshots[s->n_snapshots] = malloc((size_t)n * sizeof(double));
    if (!snap) return;  /* no memory for a snapshot: no shrinking this time (correct, only slower) */
    for (int64_t p = 0; p < n; ++p) snap[s->home[p]] = s->alpha[p];
    int64_t q = kept;
    for (int64_t t = 0; t < na; ++t)
        if (be_shrunk(s, t, m_up, minus_M)) {
            s->shrunk_at[s->home[t]] = s->n_snapshots;
            order[q++] = t;
        }
    for (int64_t t = na; t < n; ++t) order[q++] = t;
    ++s->n_snapshots;
    permute(s, order);
    s->n_active = kept;
    set_active_set(s);
}

/* WSS 2 over the active set. Returns 1 when the active set is eps-optimal (no pair is chosen). */
static int select_working_set(Smo *s, double eps, int64_t *out_i, int64_t *out_j) {
    const int64_t na = s->n_active;
    const double *v = s->v;
    const signed char *flags = s->flags;
    double m_up = -INFINITY;
    int64_t i = -1;
    if (s->next_valid) {
        i = s->next_i;
        m_up = s->next_m_up;
    } else {
        for (int64_t t = 0; t < na; ++t)
            if ((flags[t] & UP) && v[t] >= m_up) { m_up = v[t]; i = t; }
    }
    s->next_valid = 0;
    if (i < 0) return 1;
    const double *Ki = active_row(s, i, s->spare_i);
    const double *Kdiag = s->Kdiag;
    const double Kii = Kdiag[i], Kc = Kdiag[0];
    const int const_diag = s->const_diag;
    double minus_M = -INFINITY, best_b2 = 0.0, best_a = 1.0;
    int64_t j = -1;
    /* Without data-dependent branches but the rare improvement of the best pair (whether a variable is in
     * I_low and whether b_it > 0 follow no pattern: mispredicted branches would cost more than the pass),
     * and -M(a) in four running maxima (one would chain every element's max to the previous one's). */
    double mm[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
#define CANDIDATE(t, mmk)                                                                         \
    do {                                                                                          \
        const int low = (flags[t] & LOW) != 0;                                                    \
        const double vt = v[t];                                                                   \
        const double neg = choose(low, -vt, -INFINITY);                                           \
        mmk = neg > mmk ? neg : mmk;                                                              \
        const double b = m_up - vt; /* b_it */                                                    \
        double a = Kii + (const_diag ? Kc : Kdiag[t]) - 2.0 * Ki[t];                              \
        a = choose(a > 0, a, TAU);                                                                \
        /* the decrease b^2 / (2a): keep the largest, comparing b^2 a_best >= b_best^2 a */       \
        const double b2 = choose(low & (b > 0), b * b, 0.0);                                      \
        if ((b2 > 0) & (b2 * best_a >= best_b2 * a)) { best_b2 = b2; best_a = a; j = t; }         \
    } while (0)
    int64_t t = 0;
    for (; t + 4 <= na; t += 4) {
        CANDIDATE(t, mm[0]);
        CANDIDATE(t + 1, mm[1]);
        CANDIDATE(t + 2, mm[2]);
        CANDIDATE(t + 3, mm[3]);
    }
    for (; t < na; ++t) CANDIDATE(t, mm[0]);
#undef CANDIDATE
    for (int k = 0; k < 4; ++k) minus_M = mm[k] > minus_M ? mm[k] : minus_M;
    if (j < 0 || m_up + minus_M < eps) return 1;
    *out_i = i;
    *out_j = j;
    return 0;
}

static void take_step(Smo *s, int64_t i, int64_t j) {
    /* i's row was fetched by the selection and is the newest in the cache: fetching j's cannot evict it */
    const double *Ki = active_row(s, i, s->spare_i), *Kj = active_row(s, j, s->spare_j);
    double a = s->Kdiag[i] + s->Kdiag[j] - 2.0 * Ki[j];
    if (a <= 0) a = TAU;
    const double b = s->v[i] - s->v[j];
    double lambda = b / a;
    /* room along d: a_i moves by +y_i lambda, a_j by -y_j lambda */
    const double room_i = s->y[i] > 0 ? s->C[i] - s->alpha[i] : s->alpha[i];
    const double room_j = s->y[j] > 0 ? s->alpha[j] : s->C[j] - s->alpha[j];
    int clip_i = 0, clip_j = 0;
    if (room_i <= lambda) { lambda = room_i; clip_i = 1; }
    if (room_j <= lambda) {
        if (room_j < lambda) clip_i = 0;
        lambda = room_j;
        clip_j = 1;
    }
    /* a variable whose room limited the step lands exactly on its bound */
    const double ai = clip_i ? (s->y[i] > 0 ? s->C[i] : 0.0) : s->alpha[i] + s->y[i] * lambda;
    const double aj = clip_j ? (s->y[j] > 0 ? 0.0 : s->C[j]) : s->alpha[j] - s->y[j] * lambda;
    set_alpha(s, i, fmin(fmax(ai, 0.0), s->C[i]));
    set_alpha(s, j, fmin(fmax(aj, 0.0), s->C[j]));

    /* v_t -= lambda (K_it - K_jt), and the next i (the largest v_t in I_up) in the same pass */
    const int64_t na = s->n_active;
    const signed char *flags = s->flags;
    double *v = s->v;
    double m_up = -INFINITY;
    int64_t next = -1;
    for (int64_t t = 0; t < na; ++t) {
        const double vt = v[t] - lambda * (Ki[t] - Kj[t]);
        v[t] = vt;
        const double up = choose(flags[t] & UP, vt, -INFINITY);
        if (up >= m_up) { m_up = up; next = t; }
    }
    s->next_valid = 1;
    s->next_i = next;
    s->next_m_up = m_up;
}

/* rho = the mean of y_t G_t over the free variables; without any, the middle of the interval that the
 * KKT conditions of the bounded ones allow (a_t = 0: y_t f_t >= 1, a_t = C_t: y_t f_t <= 1). A variable within
 * bound_rtol (relative to C_t) of a bound counts as at it, as the model's sets are read (model.BOUND_RTOL): a step
 * may leave an alpha an ulp below C_t, and alone among the free it would set rho at an end of the optimal
 * interval where no variable is truly free (issue 26: bank_marketing's models with n* = 0). */
static double compute_rho(const Smo *s, double bound_rtol) {
    double ub = INFINITY, lb = -INFINITY, sum = 0.0;
    int64_t n_free = 0;
    for (int64_t t = 0; t < s->n; ++t) {
        const double yg = -s->v[t];
        const double a = s->alpha[t], c = s->C[t];
        const signed char status = a >= c * (1.0 - bound_rtol) ? AT_UPPER : a <= c * bound_rtol ? AT_LOWER : FREE;
        if (status == FREE) {
            sum += yg;
            ++n_free;
        } else if ((status == AT_UPPER) == (s->y[t] < 0)) {
            if (yg < ub) ub = yg;
        } else {
            if (yg > lb) lb = yg;
        }
    }
    if (n_free > 0) return sum / (double)n_free;
    if (isinf(ub)) return lb;
    if (isinf(lb)) return ub;
    return 0.5 * (ub + lb);
}

static double objective(const Smo *s) {
    /* f = 1/2 a'Qa - e'a = 1/2 a'(G + e) - e'a = 1/2 sum a_t (G_t - 1),  G_t = -y_t v_t */
    double f = 0.0;
    for (int64_t t = 0; t < s->n; ++t) f += s->alpha[t] * (-s->y[t] * s->v[t] - 1.0);
    return 0.5 * f;
}

int smo_solve(const double *K, ptrdiff_t ld, const int64_t *idx, int64_t n, const double *y, const double *C,
              double *alpha, const double *grad0, double *grad, double eps, double bound_rtol, int shrinking,
              int64_t max_iter, double *cache, int64_t cache_len, const RowSource *rows, SmoResult *result) {
    Smo s;
    memset(&s, 0, sizeof s);
    s.rows = rows;
    s.K = K;
    s.ld = ld;
    s.n = n;
    s.n_active = n;
    /* the most slots the caller's cache can hold: min(n_active, cache_len / n_active) <= sqrt(cache_len) */
    int64_t capacity = cache ? (int64_t)sqrt((double)cache_len) + 1 : 0;
    if (capacity > n) capacity = n;
    s.slot_capacity = capacity >= 2 ? capacity : 0;
    s.cache_len = cache_len;
    const size_t nd = (size_t)n * sizeof(double), ni = (size_t)n * sizeof(int64_t);
    s.kidx = malloc(ni);
    s.home = malloc(ni);
    s.slot_of = malloc(ni);
    s.iwork = malloc(2 * ni);
    s.y = malloc(nd);
    s.C = malloc(nd);
    s.alpha = malloc(nd);
    s.v = malloc(nd);
    s.Kdiag = malloc(nd);
    s.work = malloc(nd);
    s.spare_i = malloc(nd);
    s.spare_j = malloc(nd);
    s.status = malloc((size_t)n);
    s.flags = malloc((size_t)n);
    s.shrunk_at = malloc((size_t)n * sizeof(int));
    s.alpha_home = malloc(nd);
    s.members = malloc(ni);
    s.idx0 = idx;
    s.y0 = y;
    s.owner = malloc((size_t)(s.slot_capacity + 1) * sizeof(int64_t));
    s.last_used = malloc((size_t)(s.slot_capacity + 1) * sizeof(int64_t));
    s.cache = s.slot_capacity ? cache : NULL;
    s.zero_row = rows ? calloc((size_t)(rows->n_rows > 0 ? rows->n_rows : 1), sizeof(double)) : NULL;
    int rc = 0;
    if (!s.kidx || !s.home || !s.slot_of || !s.iwork || !s.y || !s.C || !s.alpha || !s.v || !s.Kdiag || !s.work
        || !s.spare_i || !s.spare_j || !s.status || !s.flags || !s.shrunk_at || !s.alpha_home || !s.members || !s.owner || !s.last_used
        || (rows && !s.zero_row)) {
        rc = -1;
        goto done;
    }
    for (int64_t k = 0; k < s.slot_capacity; ++k) {
        s.owner[k] = -1;
        s.last_used[k] = -1;
    }
    for (int64_t p = 0; p < n; ++p) {
        s.kidx[p] = idx ? idx[p] : p;
        s.home[p] = p;
        s.slot_of[p] = -1;
        s.shrunk_at[p] = -1;
        s.y[p] = y[p];
        s.C[p] = C[p];
        set_alpha(&s, p, alpha[p]);
        s.Kdiag[p] = rows && rows->diag ? rows->diag[s.kidx[p]] : K[s.kidx[p] * ld + s.kidx[p]];
    }
    s.const_diag = 1;
    for (int64_t p = 1; p < n && s.const_diag; ++p) s.const_diag = s.Kdiag[p] == s.Kdiag[0];
    set_active_set(&s);
    if (grad0)
        for (int64_t p = 0; p < n; ++p) s.v[p] = -s.y[p] * grad0[p];
    else
        start_gradient(&s);

    int64_t iter = 0;
    /* The first shrinking pass comes after min(n, SHRINK_EVERY) steps, as in LIBSVM, from zero or from a start:
     * shrinking at the first step of a warm start (its gradient is mostly right already) was measured and saves
     * nothing (a waveform search, 84 warm solves: 1.59-1.62 s of user CPU against 1.55-1.69 s). */
    int counter = (int)(n < SHRINK_EVERY ? n : SHRINK_EVERY) + 1;
    int unshrunk = 0, converged = 0;
    while (iter < max_iter && !s.fill_failed) {
        if (shrinking && --counter == 0) {
            counter = (int)(n < SHRINK_EVERY ? n : SHRINK_EVERY);
            do_shrinking(&s, eps, &unshrunk);
        }
        int64_t i, j;
        if (select_working_set(&s, eps, &i, &j)) {
            if (s.n_active == n) { converged = 1; break; }
            /* optimal on the active set: check on all variables */
            unshrink(&s);
            if (select_working_set(&s, eps, &i, &j)) { converged = 1; break; }
            counter = 1;  /* shrink again at the next iteration */
        }
        ++iter;
        s.step_work += s.n_active;
        take_step(&s, i, j);
    }
    unshrink(&s);  /* the true gradient of every variable, in the caller's order */
    if (s.fill_failed) {
        rc = -2;
        goto done;
    }
    double m_up, minus_M;
    gap_terms(&s, n, &m_up, &minus_M);
    result->rho = compute_rho(&s, bound_rtol);
    result->n_iter = iter;
    result->converged = converged;
    result->gap = m_up + minus_M;
    result->objective = objective(&s);
    result->step_work = s.step_work;
    result->gradient_work = s.gradient_work;
    memcpy(alpha, s.alpha, nd);
    if (grad)
        for (int64_t t = 0; t < n; ++t) grad[t] = -s.y[t] * s.v[t];
done:
    free(s.kidx);
    free(s.home);
    free(s.slot_of);
    free(s.iwork);
    free(s.y);
    free(s.C);
    free(s.alpha);
    free(s.v);
    free(s.Kdiag);
    free(s.work);
    free(s.spare_i);
    free(s.spare_j);
    free(s.status);
    free(s.flags);
    free(s.shrunk_at);
    free(s.alpha_home);
    free(s.members);
    for (int e = 0; e < MAX_SNAPSHOTS; ++e) free(s.snapshots[e]);
    free(s.owner);
    free(s.last_used);
    free(s.zero_row);
    return rc;
}

