# cython: language_level=3, boundscheck=False, wraparound=False
"""The package's compiled code (``csrc/``), arrays in, the GIL released while it runs:

- ``solve``: the SMO solver of the weighted C-SVM dual (``csrc/smo.c``) behind ``engines.smo``;
- ``add_expansion``, ``add_row_products``: kernel expansions read in place, along the terms' rows or along
  the rows of the points they are evaluated at (``csrc/expansion.c``), behind ``kernels.kernel_expansion``;
- ``span2_unconstrained``: the span-rule's S_p^2 of one small machine's SVs (``csrc/span.c``), behind
  ``span.geometry.unconstrained_span2``;
- ``svm_plus_solve``: the SMO solver of the SVM+ dual (``csrc/svm_plus_smo.c``) behind ``svm_plus.solver``;
- ``svm_plus_active_set``: the primal-dual active-set method of the SVM+ dual (``csrc/svm_plus_active_set.c``)
  behind ``svm_plus.solver.SVMPlusProblem.active_set``, its reduced systems solved by scipy's LAPACK (the routines
  of ``scipy.linalg.cython_lapack``, looked up at the first call: no LAPACK to link at build time).

A leaf module (it imports nothing from the package), so that every layer can use it. It checks shapes and
index ranges; its callers check the problem.
"""
import threading

import numpy as np

from cpython.pycapsule cimport PyCapsule_GetName, PyCapsule_GetPointer
from libc.stdint cimport int64_t


cdef extern from "smo.h":
    ctypedef struct SmoResult:
        double rho
        int64_t n_iter
        int converged
        double gap
        double objective
        int64_t step_work
        int64_t gradient_work

    ctypedef struct RowSource:
        const unsigned char *computed
        const double *(*row)(void *ctx, int64_t row) noexcept nogil
        void *ctx
        const double *diag
        int64_t n_rows

    int smo_solve(const double *K, Py_ssize_t ld, const int64_t *idx, int64_t n, const double *y,
                  const double *C, double *alpha, const double *grad0, double *grad, double eps, double bound_rtol,
                  int shrinking, int64_t max_iter, double *cache, int64_t cache_len, const RowSource *rows,
                  SmoResult *result) nogil


cdef extern from "expansion.h":
    void c_add_expansion "add_expansion" (const double *K, Py_ssize_t ld, const int64_t *rows, int64_t n,
                                          const int64_t *cols, int64_t m, const double *coef, double *out) nogil
    void c_add_row_products "add_row_products" (const double *K, Py_ssize_t ld, const int64_t *rows, int64_t n,
                                                int64_t width, const double *coef, double *out) nogil


cdef extern from "span.h":
    int c_span2_unconstrained "span2_unconstrained" (const double *K, Py_ssize_t ld, const int64_t *inbound,
                                                     int64_t n_in, const int64_t *others, int64_t n_out,
                                                     double coincident_rtol, double min_rcond, double *s2_in,
                                                     double *s2_out) nogil


cdef extern from "svm_plus_smo.h":
    ctypedef struct SvmPlusKernel:
        const double *K
        Py_ssize_t ld
        const double *X
        int64_t d
        const double *sqnorm
        double rbf_gamma
        double scale
        double diag_add

    ctypedef struct SvmPlusResult:
        double b
        double b_tilde
        int64_t n_iter
        int converged
        double violation
        double objective
        int64_t rows_computed

    int c_svm_plus_solve "svm_plus_solve" (const SvmPlusKernel *K, const SvmPlusKernel *T, const int64_t *idx,
                                           int64_t n, const double *y, double C, double *alpha, double *beta,
                                           double *w, double *z, int have_grad, double eps, int64_t max_iter,
                                           double cache_mb, SvmPlusResult *result) nogil


cdef extern from "svm_plus_active_set.h":
    ctypedef void (*dsysv_fn)(char *uplo, int *n, int *nrhs, double *a, int *lda, int *ipiv, double *b, int *ldb,
                              double *work, int *lwork, int *info) noexcept nogil
    ctypedef void (*dsycon_fn)(char *uplo, int *n, double *a, int *lda, int *ipiv, double *anorm, double *rcond,
                               double *work, int *iwork, int *info) noexcept nogil
    ctypedef double (*dlange_fn)(char *norm, int *m, int *n, double *a, int *lda, double *work) noexcept nogil
    ctypedef void (*dgelsd_fn)(int *m, int *n, int *nrhs, double *a, int *lda, double *b, int *ldb, double *s,
                               double *rcond, int *rank, double *work, int *lwork, int *iwork,
                               int *info) noexcept nogil
    ctypedef double (*dlamch_fn)(char *cmach) noexcept nogil
    ctypedef void (*dgemv_fn)(char *trans, int *m, int *n, double *alpha, double *a, int *lda, double *x, int *incx,
                              double *beta, double *y, int *incy) noexcept nogil
    ctypedef void (*dgetrf_fn)(int *m, int *n, double *a, int *lda, int *ipiv, int *info) noexcept nogil
    ctypedef void (*dgetrs_fn)(char *trans, int *n, int *nrhs, double *a, int *lda, int *ipiv, double *b, int *ldb,
                               int *info) noexcept nogil
    ctypedef void (*dgecon_fn)(char *norm, int *n, double *a, int *lda, double *anorm, double *rcond, double *work,
                               int *iwork, int *info) noexcept nogil

    ctypedef struct SvmPlusLapack:
        dsysv_fn dsysv
        dsycon_fn dsycon
        dlange_fn dlange
        dgelsd_fn dgelsd
        dlamch_fn dlamch
        dgemv_fn dgemv
        dgetrf_fn dgetrf
        dgetrs_fn dgetrs
        dgecon_fn dgecon

    ctypedef struct SvmPlusBordered:
        const double *inverse
        const double *x0
        const unsigned char *Z0
        const unsigned char *B0
        const int64_t *row_of
        int64_t l_full
        int64_t N
        int64_t p
        double cond_max
        int64_t served
        int64_t refused

    ctypedef struct SvmPlusActiveSetResult:
        int status
        int64_t iterations
        int64_t solves
        double b
        double b_tilde
        double violation

    int c_svm_plus_active_set "svm_plus_active_set" (
        const double *Q, const double *T, Py_ssize_t ld, const double *T_diag, const int64_t *idx, int64_t n,
        const double *y, double C, unsigned char *Z, unsigned char *B, const double *first,
        const unsigned char *first_Z, const unsigned char *first_B, int64_t max_iter, int64_t block_backup,
        double release_tol, double kkt_tol, const SvmPlusLapack *lapack, SvmPlusBordered *bordered, double *alpha,
        double *alpha_tilde, double *workspace, SvmPlusActiveSetResult *result) nogil
    int64_t svm_plus_active_set_workspace(int64_t n, Py_ssize_t ld) nogil


# The solver's row cache, one per thread and kept between calls: a fresh buffer costs a page fault per 4 KB
# touched, more than the cache saves on one training (measured on mnist_2_9's CV folds).
_buffers = threading.local()


def _cache_buffer(Py_ssize_t n_doubles):
    buf = getattr(_buffers, "cache", None)
    if buf is None or buf.shape[0] != n_doubles:
        buf = np.empty(max(n_doubles, 1), dtype=np.float64)
        _buffers.cache = buf
    return buf


cdef const double *_row(void *ctx, int64_t row) noexcept nogil:
    """The solver's call for a kernel row it is about to read (``RowSource``): ``ctx.row_address(row)`` under the
    GIL, the address of the row's first double; an exception is kept for ``solve`` to raise (NULL)."""
    cdef size_t address = 0
    with gil:
        try:
            address = (<object>ctx).row_address(row)
        except BaseException as exc:
            _buffers.fill_error = exc
            return NULL
    return <const double *>address


cdef const int64_t *_rows_of(int64_t n_rows, const int64_t[::1] idx, int64_t n) except? NULL:
    """The pointer to idx (checked to index a kernel of n_rows rows, of length n), or NULL for None (then the
    kernel must be n x n)."""
    if idx is None:
        if n_rows != n:
            raise ValueError("without idx, K must be n x n")
        return NULL
    if idx.shape[0] != n:
        raise ValueError("idx must have the length of y")
    if n and (np.min(idx) < 0 or np.max(idx) >= n_rows):
        raise ValueError(f"idx must hold rows of K (0..{n_rows - 1})")
    return &idx[0]


def solve(object K_array, const int64_t[::1] idx, const double[::1] y, const double[::1] C,
          double[::1] alpha, const double[::1] grad0, double[::1] grad, double eps, double bound_rtol,
          bint shrinking, int64_t max_iter, double cache_mb, object source=None):
    """Solve in place: ``alpha`` (a feasible start) becomes the solution, ``grad`` the gradient Qa - e.

    K_array : (L, L) C-contiguous kernel, or None with a row cache (``source`` without ``computed``);
    idx : (n,) the problem's rows of K, each in [0, L) (None: all L);
    y, C, alpha, grad : (n,); grad0 : (n,) the gradient at the start, or None (computed here);
    bound_rtol : an alpha within this fraction of C_i of a bound counts as at it when rho is computed;
    cache_mb : the solver's active-set row slots (per thread, kept between calls);
    source : None (K is valid), or an object whose K rows are computed on demand (kernels.RBFRows): ``shape``,
    ``row_address(r)`` (the address of row r's L doubles, valid until this thread's next call), ``computed``
    (uint8, one flag per row, rows kept in K_array in place) or None (a row cache: K_array None), and ``diag``
    (K_ii, float64) or None (K_array's diagonal).
    Returns (rho, n_iter, converged, gap, objective, step_work, gradient_work).
    """
    cdef int64_t n = y.shape[0]
    if C.shape[0] != n or alpha.shape[0] != n or grad.shape[0] != n:
        raise ValueError("y, C, alpha and grad must have the same length")
    if n == 0:
        raise ValueError("empty problem")
    cdef const double[:, ::1] K
    cdef const double *K_ptr = NULL
    cdef Py_ssize_t ld = 0
    cdef int64_t n_rows
    if K_array is not None:
        K = K_array
        if K.shape[0] != K.shape[1]:
            raise ValueError("K must be square")
        K_ptr, ld, n_rows = &K[0, 0], K.shape[1], K.shape[0]
    elif source is None or source.computed is not None:
        raise ValueError("K is needed unless a row cache computes every row (source.computed None)")
    else:
        n_rows = source.shape[0]
    cdef const int64_t *idx_ptr = _rows_of(n_rows, idx, n)
    cdef const double *grad0_ptr = NULL
    if grad0 is not None:
        if grad0.shape[0] != n:
            raise ValueError("grad0 must have the length of y")
        grad0_ptr = &grad0[0]
    cdef double[::1] cache = _cache_buffer(int(cache_mb * 1048576 / 8))
    cdef SmoResult res
    cdef int rc
    cdef RowSource rows
    cdef const RowSource *rows_ptr = NULL
    cdef const unsigned char[::1] computed
    cdef const double[::1] diag
    if source is not None:
        if tuple(source.shape) != (n_rows, n_rows):
            raise ValueError("the row source must have the kernel's shape")
        rows.computed = NULL
        rows.diag = NULL
        if source.computed is not None:
            computed = source.computed
            if computed.shape[0] != n_rows:
                raise ValueError("source.computed must have one flag per row of K")
            rows.computed = &computed[0]
        if source.diag is not None:
            diag = source.diag
            if diag.shape[0] != n_rows:
                raise ValueError("source.diag must have one entry per row of K")
            rows.diag = &diag[0]
        elif K_array is None:
            raise ValueError("a row cache must give its diagonal (source.diag)")
        rows.row = _row
        rows.ctx = <void *>source
        rows.n_rows = n_rows
        rows_ptr = &rows
    with nogil:
        rc = smo_solve(K_ptr, ld, idx_ptr, n, &y[0], &C[0], &alpha[0], grad0_ptr, &grad[0], eps,
                       bound_rtol, 1 if shrinking else 0, max_iter, &cache[0], cache.shape[0], rows_ptr, &res)
    if rc == -2:
        error, _buffers.fill_error = _buffers.fill_error, None
        raise error
    if rc != 0:
        raise MemoryError(f"the SMO solver could not allocate its work arrays (n = {n})")
    return res.rho, res.n_iter, bool(res.converged), res.gap, res.objective, res.step_work, res.gradient_work


def add_expansion(const double[:, ::1] K, const int64_t[::1] rows, const int64_t[::1] cols,
                  const double[::1] coef, double[::1] out):
    """out[t] += sum_k coef[k] K[cols[k], rows[t]] (rows None: K's first len(out) columns), in place.
    K : (L, M) C-contiguous; cols index its rows, rows its columns."""
    cdef int64_t n = out.shape[0], m = cols.shape[0]
    if coef.shape[0] != m:
        raise ValueError("cols and coef must have the same length")
    cdef const int64_t *rows_ptr = NULL
    if rows is not None:
        if rows.shape[0] != n:
            raise ValueError("rows must have the length of out")
        if n and (np.min(rows) < 0 or np.max(rows) >= K.shape[1]):
            raise ValueError(f"rows must hold columns of K (0..{K.shape[1] - 1})")
        rows_ptr = &rows[0]
    if rows is None and n > K.shape[1]:
        raise ValueError("out is longer than K's rows")
    if m and (np.min(cols) < 0 or np.max(cols) >= K.shape[0]):
        raise ValueError(f"cols must hold rows of K (0..{K.shape[0] - 1})")
    if n == 0 or m == 0:
        return
    with nogil:
        c_add_expansion(&K[0, 0], K.shape[1], rows_ptr, n, &cols[0], m, &coef[0], &out[0])


def add_row_products(const double[:, ::1] K, const int64_t[::1] rows, const double[::1] coef, double[::1] out):
    """out[t] += K[rows[t], :] . coef (coef dense over K's columns), in place."""
    cdef int64_t n = out.shape[0]
    if rows.shape[0] != n:
        raise ValueError("rows must have the length of out")
    if coef.shape[0] != K.shape[1]:
        raise ValueError("coef must have one entry per column of K")
    if n and (np.min(rows) < 0 or np.max(rows) >= K.shape[0]):
        raise ValueError(f"rows must hold rows of K (0..{K.shape[0] - 1})")
    if n == 0:
        return
    with nogil:
        c_add_row_products(&K[0, 0], K.shape[1], &rows[0], n, K.shape[1], &coef[0], &out[0])


cdef bint _rows_in_range(const int64_t[::1] rows, Py_ssize_t n) noexcept:
    """Every entry in [0, n): a loop, as numpy's min and max cost more than the span itself on small machines."""
    cdef Py_ssize_t t
    for t in range(rows.shape[0]):
        if rows[t] < 0 or rows[t] >= n:
            return False
    return True


def span2_unconstrained(const double[:, ::1] K, const int64_t[::1] inbound, const int64_t[::1] others,
                        double coincident_rtol, double min_rcond):
    """(S_p^2 of the in-bound SVs, S_q^2 of the other SVs) without box constraints, or None when the in-bound
    SVs' kernel block (coincident points merged) is not numerically positive definite (``csrc/span.h``).
    K : (L, L) C-contiguous training kernel; inbound (n_in >= 1), others : the SVs' rows of K."""
    cdef int64_t n_in = inbound.shape[0], n_out = others.shape[0]
    if K.shape[0] != K.shape[1]:
        raise ValueError("K must be square")
    if n_in == 0:
        raise ValueError("the span needs at least one in-bound SV")
    if not (_rows_in_range(inbound, K.shape[0]) and _rows_in_range(others, K.shape[0])):
        raise ValueError(f"SV rows must be rows of K (0..{K.shape[0] - 1})")
    s2_in, s2_out = np.empty(n_in), np.empty(n_out)
    cdef double[::1] s2_in_view = s2_in, s2_out_view = s2_out
    cdef const int64_t *others_ptr = &others[0] if n_out else NULL
    cdef double *s2_out_ptr = &s2_out_view[0] if n_out else NULL
    cdef int rc
    with nogil:
        rc = c_span2_unconstrained(&K[0, 0], K.shape[1], &inbound[0], n_in, others_ptr, n_out, coincident_rtol,
                                   min_rcond, &s2_in_view[0], s2_out_ptr)
    if rc < 0:
        raise MemoryError(f"the span-rule could not allocate its work arrays (n* = {n_in})")
    return (s2_in, s2_out) if rc == 0 else None


cdef class _KernelSource:
    """One kernel of ``svm_plus_solve``, holding its arrays while the solver reads them."""
    cdef SvmPlusKernel spec
    cdef const double[:, ::1] K
    cdef const double[:, ::1] X
    cdef const double[::1] sqnorm

    def __init__(self, source, int64_t n_points, double scale, double diag_add):
        kind = source[0]
        self.spec.scale = scale
        self.spec.diag_add = diag_add
        self.spec.K = NULL
        self.spec.X = NULL
        self.spec.sqnorm = NULL
        self.spec.ld = 0
        self.spec.d = 0
        self.spec.rbf_gamma = 0.0
        if kind == "precomputed":
            self.K = source[1]
            if self.K.shape[0] != n_points or self.K.shape[1] != n_points:
                raise ValueError(f"a precomputed kernel must be {n_points} x {n_points}")
            self.spec.K = &self.K[0, 0]
            self.spec.ld = self.K.shape[1]
        elif kind == "rbf":
            self.X = source[1]
            if self.X.shape[0] != n_points or self.X.shape[1] == 0:
                raise ValueError(f"the features must have {n_points} rows and at least one column")
            self.sqnorm = np.einsum("ij,ij->i", np.asarray(self.X), np.asarray(self.X))
            self.spec.X = &self.X[0, 0]
            self.spec.d = self.X.shape[1]
            self.spec.sqnorm = &self.sqnorm[0]
            self.spec.rbf_gamma = float(source[2])
        else:
            raise ValueError(f"unknown kernel source {kind!r}")


def svm_plus_solve(kernel, privileged_kernel, int64_t n_points, const int64_t[::1] idx, const double[::1] y,
                   double C, double priv_scale, double priv_diag_add, double[::1] alpha, double[::1] beta,
                   double[::1] w, double[::1] z, bint have_grad, double eps, int64_t max_iter, double cache_mb):
    """Solve the SVM+ dual in place (``csrc/svm_plus_smo.h``): ``alpha``, ``beta`` (a feasible start) become the
    solution, ``w`` = Q alpha and ``z`` = T u.

    kernel, privileged_kernel : ("precomputed", K) with K (n_points, n_points) C-contiguous, or ("rbf", X, gamma)
    with X (n_points, d) C-contiguous; the privileged one enters as priv_scale * K~ + priv_diag_add I;
    idx : (n,) the problem's points, each in [0, n_points) (None: all n_points);
    y, alpha, beta, w, z : (n,); have_grad : w and z hold the start's values.
    Returns (b, b_tilde, n_iter, converged, violation, objective, rows_computed).
    """
    cdef int64_t n = y.shape[0]
    if alpha.shape[0] != n or beta.shape[0] != n or w.shape[0] != n or z.shape[0] != n:
        raise ValueError("y, alpha, beta, w and z must have the same length")
    if n == 0:
        raise ValueError("empty problem")
    if not (np.isfinite(eps) and eps > 0 and np.isfinite(cache_mb) and cache_mb >= 0 and np.isfinite(C) and C > 0):
        raise ValueError(f"eps and C must be positive and finite, cache_mb finite and >= 0 (got {eps!r}, {C!r}, "
                         f"{cache_mb!r})")
    cdef const int64_t *idx_ptr = NULL
    if idx is not None:
        if idx.shape[0] != n:
            raise ValueError("idx must have the length of y")
        if not _rows_in_range(idx, n_points):
            raise ValueError(f"idx must hold points 0..{n_points - 1}")
        idx_ptr = &idx[0]
    elif n != n_points:
        raise ValueError("without idx, y must have one entry per point")
    cdef _KernelSource K = _KernelSource(kernel, n_points, 1.0, 0.0)
    cdef _KernelSource T = _KernelSource(privileged_kernel, n_points, priv_scale, priv_diag_add)
    cdef SvmPlusResult res
    cdef int rc
    with nogil:
        rc = c_svm_plus_solve(&K.spec, &T.spec, idx_ptr, n, &y[0], C, &alpha[0], &beta[0], &w[0], &z[0],
                              1 if have_grad else 0, eps, max_iter, cache_mb, &res)
    if rc != 0:
        raise MemoryError(f"the SVM+ SMO solver could not allocate its work arrays and row cache (n = {n})")
    return res.b, res.b_tilde, res.n_iter, bool(res.converged), res.violation, res.objective, res.rows_computed


#: ``svm_plus_active_set``'s ending states (csrc/svm_plus_active_set.h): converged, the sets cycled, max_iter run
#: out, converged sets that violate the KKT conditions, the least squares' SVD did not converge
ACTIVE_SET_STATUS = ("converged", "cycle", "max_iter", "kkt", "lstsq")

cdef SvmPlusLapack _lapack
cdef bint _lapack_ready = False


def _workspace(Py_ssize_t n_doubles):
    """This thread's workspace of ``svm_plus_active_set``, at least n_doubles long (grown, never shrunk)."""
    buf = getattr(_buffers, "active_set", None)
    if buf is None or buf.shape[0] < n_doubles:
        buf = np.empty(max(n_doubles, 1), dtype=np.float64)
        _buffers.active_set = buf
    return buf


cdef void *_lapack_routine(str name, bint blas=False) except NULL:
    """The address of scipy's LAPACK (or BLAS) routine ``name`` (a capsule of ``scipy.linalg.cython_lapack``,
    ``cython_blas``)."""
    from scipy.linalg import cython_blas, cython_lapack
    capsule = (cython_blas if blas else cython_lapack).__pyx_capi__[name]
    return PyCapsule_GetPointer(capsule, PyCapsule_GetName(capsule))


cdef const SvmPlusLapack *_lapack_table() except NULL:
    global _lapack_ready
    if not _lapack_ready:
        _lapack.dsysv = <dsysv_fn>_lapack_routine("dsysv")
        _lapack.dsycon = <dsycon_fn>_lapack_routine("dsycon")
        _lapack.dlange = <dlange_fn>_lapack_routine("dlange")
        _lapack.dgelsd = <dgelsd_fn>_lapack_routine("dgelsd")
        _lapack.dlamch = <dlamch_fn>_lapack_routine("dlamch")
        _lapack.dgemv = <dgemv_fn>_lapack_routine("dgemv", blas=True)
        _lapack.dgetrf = <dgetrf_fn>_lapack_routine("dgetrf")
        _lapack.dgetrs = <dgetrs_fn>_lapack_routine("dgetrs")
        _lapack.dgecon = <dgecon_fn>_lapack_routine("dgecon")
        _lapack_ready = True
    return &_lapack


def svm_plus_active_set(const double[:, ::1] Q, const double[:, ::1] T, const double[::1] T_diag,
                        const int64_t[::1] idx, const double[::1] y, double C, unsigned char[::1] Z,
                        unsigned char[::1] B, const double[::1] first, const unsigned char[::1] first_Z,
                        const unsigned char[::1] first_B, int64_t max_iter, int64_t block_backup, double release_tol,
                        double kkt_tol, bordered=None):
    """The primal-dual active-set method of the SVM+ dual on the points ``idx`` of Q = YKY and T (its diagonal
    ``T_diag`` on those points), from the sets Z (a_i = 0), B (beta_i = 0), uint8, updated in place to the last
    iteration's (``csrc/svm_plus_active_set.h``).

    Q, T : (L, L) C-contiguous; idx : (n,) rows of them (None: all L); T_diag, y, Z, B : (n,);
    first : None, or (2n + 2,) [a; a~; b; b~], a known minimiser on the sets first_Z, first_B (uint8, (n,)).
    bordered : None, or (inverse, x0, Z0, B0, row_of, p, cond_max): the full model's bordering (``SvmPlusBordered``,
    csrc/svm_plus_active_set.h; inverse (N, N) C-contiguous, x0 (N,), Z0 and B0 uint8 (L,), row_of int64 (2L,)); the
    problem must then be the L points but p, in order.
    Returns (alpha, alpha_tilde, b, b_tilde, iterations, status, violation, solves, served, refused): status an index
    of ``ACTIVE_SET_STATUS``, violation the largest KKT residual where the method converged, solves the reduced
    systems it solved, served and refused the bordered solves taken and refused.
    """
    cdef int64_t n = y.shape[0], L = Q.shape[0]
    if Q.shape[1] != L or T.shape[0] != L or T.shape[1] != L or L == 0:
        raise ValueError("Q and T must be square and of one size")
    if T_diag.shape[0] != n or Z.shape[0] != n or B.shape[0] != n:
        raise ValueError("T_diag, Z and B must have the length of y")
    if n == 0 or max_iter < 0:
        raise ValueError("empty problem, or max_iter < 0")
    cdef const int64_t *idx_ptr = NULL
    if idx is not None:
        if idx.shape[0] != n:
            raise ValueError("idx must have the length of y")
        if not _rows_in_range(idx, L):
            raise ValueError(f"idx must hold rows of Q and T (0..{L - 1})")
        idx_ptr = &idx[0]
    elif n != L:
        raise ValueError("without idx, y must have one entry per row of Q")
    cdef const double *first_ptr = NULL
    cdef const unsigned char *first_Z_ptr = NULL
    cdef const unsigned char *first_B_ptr = NULL
    if first is not None:
        if first.shape[0] != 2 * n + 2 or first_Z is None or first_B is None or first_Z.shape[0] != n \
                or first_B.shape[0] != n:
            raise ValueError("first must be [a; a~; b; b~] (2n + 2) with its sets first_Z, first_B (n)")
        first_ptr, first_Z_ptr, first_B_ptr = &first[0], &first_Z[0], &first_B[0]
    cdef SvmPlusBordered bd
    cdef SvmPlusBordered *bd_ptr = NULL
    cdef const double[:, ::1] inverse
    cdef const double[::1] x0
    cdef const unsigned char[::1] Z0, B0
    cdef const int64_t[::1] row_of
    if bordered is not None:
        inverse, x0, Z0, B0, row_of, p, cond_max = bordered
        N = inverse.shape[0]
        if inverse.shape[1] != N or x0.shape[0] != N or Z0.shape[0] != L or B0.shape[0] != L \
                or row_of.shape[0] != 2 * L or N < 2 * L + 2:
            raise ValueError("the bordering must be the full model's: inverse (N, N), x0 (N,), Z0, B0 (L,), row_of "
                             "(2L,)")
        if idx is None or n != L - 1 or not (0 <= p < L) or not np.array_equal(
                np.asarray(idx), np.delete(np.arange(L), p)):
            raise ValueError("with the bordering, idx must be the L points but p, in order")
        if np.min(row_of) < -1 or np.max(row_of) >= N:
            raise ValueError("row_of must hold rows of the bordered system or -1")
        bd.inverse, bd.x0, bd.Z0, bd.B0, bd.row_of = &inverse[0, 0], &x0[0], &Z0[0], &B0[0], &row_of[0]
        bd.l_full, bd.N, bd.p, bd.cond_max = L, N, p, cond_max
        bd.served = bd.refused = 0
        bd_ptr = &bd
    cdef const SvmPlusLapack *lapack = _lapack_table()
    # per thread, kept between calls (a refit's reduced systems on fresh pages paid a page fault per 4 KB)
    cdef double[::1] workspace = _workspace(svm_plus_active_set_workspace(n, Q.shape[1]))
    alpha, alpha_tilde = np.empty(n), np.empty(n)
    cdef double[::1] a_view = alpha, at_view = alpha_tilde
    cdef SvmPlusActiveSetResult res
    cdef int rc
    with nogil:
        rc = c_svm_plus_active_set(&Q[0, 0], &T[0, 0], Q.shape[1], &T_diag[0], idx_ptr, n, &y[0], C, &Z[0], &B[0],
                                   first_ptr, first_Z_ptr, first_B_ptr, max_iter, block_backup, release_tol, kkt_tol,
                                   lapack, bd_ptr, &a_view[0], &at_view[0], &workspace[0], &res)
    if rc == -1:
        raise MemoryError(f"the SVM+ active-set method could not allocate its work arrays (n = {n})")
    if rc != 0:
        raise ValueError("LAPACK reported an illegal argument in the SVM+ active-set method")
    return (alpha, alpha_tilde, res.b, res.b_tilde, int(res.iterations), int(res.status), res.violation,
            int(res.solves), int(bd.served) if bd_ptr else 0, int(bd.refused) if bd_ptr else 0)
