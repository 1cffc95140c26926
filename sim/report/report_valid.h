/* report_valid.h: `servesim validate --report FILE.html`, the validation as one XHTML page: coverage, the error
 * of every metric per source, engine and GPU with the signed median beside the absolute one (a one-signed error
 * is a missing cost, not noise), the open-loop stages' measured and predicted mean and p99 TTFT stage by stage,
 * and the closed-loop points' measured against predicted TTFT and TPOT. Inline SVG (report/svg.h), no script. */
#ifndef SIM_REPORT_VALID_H
#define SIM_REPORT_VALID_H

#include <stdio.h>

#include "validate/validate.h"

int report_validate_html(const vset *s, const vreport_opts *o, FILE *f, sim_err *err);

#endif
