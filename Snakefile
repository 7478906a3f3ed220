# wsvm-span study workflow: Experiments 1-10 (see ../shared/spec/experiments.md).
#
#   snakemake --cores 2                                  # default config (config/config.yaml)
#   snakemake --cores 2 --configfile config/paper.yaml   # the full study
#   snakemake --report results/report.html               # HTML report of tables and figures
#
# Every rule is a thin call of the `wsvm-span` CLI; see docs/study.md.

from snakemake.utils import min_version

min_version("9.0")


include: "workflow/rules/common.smk"
include: "workflow/rules/grid.smk"
include: "workflow/rules/aggregate.smk"


report: "workflow/report/workflow.rst"


rule all:
    default_target: True
    input:
        final_targets(),
