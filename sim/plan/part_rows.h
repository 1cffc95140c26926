/* part_rows.h: is a raw record of a shard part (sweep_part.h) a valid sweep_row or cap_candidate?
 *
 * A part's records are the structs' bytes, and parts travel between machines: untrusted input. Before a record
 * is used as a struct, part_row_check reads its raw bytes at their offsetof() positions: every bool (arrays of
 * them too) holds 0 or 1, every enum is one of its values, every string ends with a NUL inside its buffer,
 * every count is within its array (bis.n_probes, n_fleet, slo.n, mem.pp, mem.binding_stage < pp), indices are
 * within their bounds (fail_slo, slo.first_fail, inst >= -1, verified in {-1, 0, 1}), and the doubles that are
 * compared or converted to integers are numbers (not NaN; a probe's rate and max_rate finite and >= 0).
 * The fill functions then check a record against the set rebuilt from the part's arguments: its index and
 * label are the grid's (and the grid's point, label and index replace the record's), its SLO counts and
 * indices are below the study's number of SLOs, its instance below the catalog's size, its max_rate within
 * the search's range, and a capacity candidate that merge sizes names the GPU its point loads.
 * Every refusal is SIM_EINPUT: "PART: row I: FIELD: the problem" (I: the grid index). */
#ifndef SIM_PART_ROWS_H
#define SIM_PART_ROWS_H

#include "plan/capacity.h"

/* kind: "sweep" (a sweep_row) or "capacity" (a cap_candidate); raw: the record's bytes (its size is the
 * struct's: sweep_part_read checked it); row: the grid index (messages). */
int part_row_check(const char *kind, const unsigned char *raw, const char *path, uint64_t row, sim_err *err);
/* x (checked by part_row_check) against grid, the rebuilt sweep's row of the same index; on success x holds
 * the grid's index, point and label. */
int part_sweep_row_fit(sweep_row *x, const sweep_row *grid, const sweep_set *s, const char *path, sim_err *err);
/* The same for a capacity candidate against the rebuilt search s. */
int part_cap_fit(cap_candidate *x, const cap_candidate *grid, const capacity_set *s, const char *path, sim_err *err);

#endif
