"""The compiled part of the package, ``wsvm_span._native`` (C in ``src/wsvm_span/csrc``, wrapped by Cython):
the SMO solver of ``wsvm_span.engines.smo``, in-place kernel expansions, the span-rule of small machines and
SVM+'s solvers (SMO and the primal-dual active-set method).

Everything else is declared in pyproject.toml; setuptools reads this file only for the extension module.
"""
from setuptools import Extension, setup

CSRC = "src/wsvm_span/csrc"

setup(
    ext_modules=[
        Extension(
            "wsvm_span._native",
            sources=["src/wsvm_span/_native.pyx", f"{CSRC}/smo.c", f"{CSRC}/expansion.c", f"{CSRC}/span.c",
                     f"{CSRC}/svm_plus_smo.c", f"{CSRC}/svm_plus_active_set.c"],
            include_dirs=[CSRC],
            depends=[f"{CSRC}/smo.h", f"{CSRC}/expansion.h", f"{CSRC}/span.h", f"{CSRC}/svm_plus_smo.h",
                     f"{CSRC}/svm_plus_active_set.h"],
            # -O3: the solver's inner loops are plain streaming loops that gcc vectorises at -O3, not at -O2;
            # no -march: the extension must run on any x86-64 the wheel lands on
            extra_compile_args=["-O3"],
        )
    ],
)
