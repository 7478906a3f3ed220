"""Spans of support vectors and the leave-one-out estimates built on them.

- :mod:`.geometry`: S_p^2 with and without the box constraints, Lemma 1, the span QPs;
- :mod:`.estimates`: the span-rule (also from the SVs' features alone), the span bound, the xi-alpha and
  SV-count bounds of one model; for the standard SVM the standard and separable forms of the span bound
  and D_SV.
"""
from .estimates import (
    SpanAnalysis,
    analyse_spans,
    inbound_diameter,
    span_bound,
    span_bound_separable,
    span_bound_standard,
    span_rule,
    span_rule_from_svs,
    standard_C,
    sv_count_bound,
    xi_alpha_bound,
)

__all__ = ["SpanAnalysis", "analyse_spans", "inbound_diameter", "span_bound", "span_bound_separable",
           "span_bound_standard", "span_rule", "span_rule_from_svs", "standard_C", "sv_count_bound",
           "xi_alpha_bound"]
