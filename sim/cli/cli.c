/* cli.c: the table-driven flag parser shared by every subcommand, the
 * start every subcommand shares (parse, help) and output files. */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const cli_opt *find(const cli_opt *opts, const char *name, size_t len, bool *negated) {
  *negated = false;
  for (const cli_opt *o = opts; o->name; o++) {
    if ((strlen(o->name) == len && !strncmp(o->name, name, len)) ||
        (o->alias && strlen(o->alias) == len && !strncmp(o->alias, name, len)))
      return o;
  }
  if (len > 3 && !strncmp(name, "no-", 3)) {
    for (const cli_opt *o = opts; o->name; o++)
      if (o->type == CLI_BOOL && ((strlen(o->name) == len - 3 && !strncmp(o->name, name + 3, len - 3)) ||
                                  (o->alias && strlen(o->alias) == len - 3 && !strncmp(o->alias, name + 3, len - 3)))) {
        *negated = true;
        return o;
      }
  }
  return NULL;
}

static int set_value(const cli_opt *o, const char *v, sim_err *err) {
  uint64_t u;
  double d;
  switch (o->type) {
    case CLI_STR:
      if (!*v) return sim_errf(err, SIM_EINPUT, "--%s: empty value", o->name);
      *(const char **)o->dest = v;
      return 0;
    case CLI_U32:
      if (!sim_parse_u64(v, &u) || u > UINT32_MAX)
        return sim_errf(err, SIM_EINPUT, "--%s: expected a non-negative integer, got '%s'", o->name, v);
      *(uint32_t *)o->dest = (uint32_t)u;
      return 0;
    case CLI_U64:
      if (!sim_parse_u64(v, &u))
        return sim_errf(err, SIM_EINPUT, "--%s: expected a non-negative integer, got '%s'", o->name, v);
      *(uint64_t *)o->dest = u;
      return 0;
    case CLI_F64:
      if (!sim_parse_double(v, &d))
        return sim_errf(err, SIM_EINPUT, "--%s: expected a number, got '%s'", o->name, v);
      *(double *)o->dest = d;
      return 0;
    case CLI_LIST:
    case CLI_MULTI: {
      cli_list *l = o->dest;
      if (l->n >= (int)SIM_ARRAY_LEN(l->items))
        return sim_errf(err, SIM_EINPUT, "--%s: given too many times", o->name);
      l->items[l->n++] = v;
      return 0;
    }
    case CLI_BOOL:
      if (!strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "yes")) *(bool *)o->dest = true;
      else if (!strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "no")) *(bool *)o->dest = false;
      else return sim_errf(err, SIM_EINPUT, "--%s: expected true or false, got '%s'", o->name, v);
      return 0;
    case CLI_FLAG:
      return sim_errf(err, SIM_EINPUT, "--%s takes no value", o->name);
  }
  return sim_errf(err, SIM_EINTERNAL, "bad option table");
}

int cli_parse(const cli_opt *opts, int argc, char **argv, cli_list *pos, sim_err *err) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    char longform[8];
    if (a[0] == '-' && a[1] && a[1] != '-' && a[2] == 0) { /* -q: a one-letter alias */
      snprintf(longform, sizeof longform, "--%c", a[1]);
      a = longform;
    }
    if (strncmp(a, "--", 2) != 0 || a[2] == 0) {
      if (pos && pos->n < (int)SIM_ARRAY_LEN(pos->items) && strcmp(a, "--")) {
        pos->items[pos->n++] = a;
        continue;
      }
      return sim_errf(err, SIM_EINPUT, "unexpected argument '%s' (options start with --; see --help)", a);
    }
    const char *name = a + 2, *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    bool neg;
    const cli_opt *o = find(opts, name, len, &neg);
    if (!o) return sim_errf(err, SIM_EINPUT, "unknown option '--%.*s' (see --help)", (int)len, name);
    if (o->seen) *o->seen = true;
    if (o->type == CLI_FLAG || (o->type == CLI_BOOL && !eq)) {
      if (eq) return sim_errf(err, SIM_EINPUT, "--%s takes no value", o->name);
      *(bool *)o->dest = !neg;
      continue;
    }
    if (neg) return sim_errf(err, SIM_EINPUT, "--no-%s takes no value", o->name);
    const char *v;
    if (eq) v = eq + 1;
    else if (i + 1 < argc) v = argv[++i];
    else return sim_errf(err, SIM_EINPUT, "--%s needs a value (%s)", o->name, o->metavar ? o->metavar : "VALUE");
    int rc = set_value(o, v, err);
    if (rc) return rc;
    if (o->type == CLI_MULTI)
      while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)
        if ((rc = set_value(o, argv[++i], err))) return rc;
  }
  return 0;
}

void cli_print_help(FILE *f, const char *usage, const char *summary, const cli_opt *opts) {
  fprintf(f, "usage: %s\n\n%s\n\noptions:\n", usage, summary);
  for (const cli_opt *o = opts; o->name; o++) {
    char left[96];
    const char *neg = o->type == CLI_BOOL ? "[no-]" : "";
    if (o->alias)
      snprintf(left, sizeof left, "--%s%s, %s%s%s%s", neg, o->name, strlen(o->alias) == 1 ? "-" : "--", o->alias,
               o->metavar ? " " : "", o->metavar ? o->metavar : "");
    else
      snprintf(left, sizeof left, "--%s%s%s%s", neg, o->name, o->metavar ? " " : "", o->metavar ? o->metavar : "");
    if (strlen(left) > 34) fprintf(f, "  %s\n  %-34s %s\n", left, "", o->help);
    else fprintf(f, "  %-34s %s\n", left, o->help);
  }
}

int cli_fail(const char *cmd, const sim_err *err) {
  fprintf(stderr, "servesim %s: %s\n", cmd, err->msg);
  if (err->code == SIM_EINPUT) fprintf(stderr, "(see `servesim %s --help`)\n", cmd);
  return err->code ? err->code : SIM_EINTERNAL;
}

int cli_opts_append(cli_opt *opts, int n, int cap, const cli_opt *add) {
  for (; add->name; add++) {
    SIM_ASSERT(n + 1 < cap);
    opts[n++] = *add;
  }
  SIM_ASSERT(n < cap);
  opts[n] = (cli_opt){NULL, NULL, 0, NULL, NULL, NULL, NULL};
  return n;
}

int cli_start(const char *cmd, const char *usage, const char *summary, const cli_opt *opts, const bool *help, int argc,
              char **argv) {
  sim_err err = {0, ""};
  if (cli_parse(opts, argc, argv, NULL, &err)) return cli_fail(cmd, &err);
  if (!*help) return CLI_GO;
  cli_print_help(stdout, usage, summary, opts);
  return 0;
}

