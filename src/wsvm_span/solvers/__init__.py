"""Numerical solvers: the one QP switch (``solvers.qp``) and the exact enclosing ball (D)."""
