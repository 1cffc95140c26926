/* outfmt.c: shared CSV and JSON output pieces (see outfmt.h). */
#include "core/outfmt.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void outfmt_csv_str(FILE *f, const char *s) {
  if (!strpbrk(s, ",\"\r\n")) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

void outfmt_csv_num(FILE *f, double v) {
  if (isfinite(v)) fprintf(f, ",%.6g", v);
  else fputs(",", f);
}

static int refuse(const char *path, sim_err *err) {
  return sim_errf(err, SIM_EINPUT, "%s already exists: not overwriting it (pass --force to replace it)", path);
}

/* The files a command reads (outfmt_protect) and those it has written, by device and inode: an output that
 * resolves to one of them is refused, --force or not. One command per process, files named on its command line
 * or in its scenario: a small table is enough. */
enum { OUTFMT_MAX_FILES = 64 };
typedef struct file_id {
  dev_t dev;
  ino_t ino;
} file_id;
static file_id inputs[OUTFMT_MAX_FILES], outputs[OUTFMT_MAX_FILES];
static int n_inputs, n_outputs;

static void remember(file_id *tab, int *n, const struct stat *st) {
  for (int i = 0; i < *n; i++)
    if (tab[i].dev == st->st_dev && tab[i].ino == st->st_ino) return;
  if (*n < OUTFMT_MAX_FILES) tab[(*n)++] = (file_id){st->st_dev, st->st_ino};
}

static bool known(const file_id *tab, int n, const struct stat *st) {
  for (int i = 0; i < n; i++)
    if (tab[i].dev == st->st_dev && tab[i].ino == st->st_ino) return true;
  return false;
}

void outfmt_protect(const char *path) {
  struct stat st;
  if (path && path[0] && strcmp(path, "-") && stat(path, &st) == 0) remember(inputs, &n_inputs, &st);
}

/* What no --force replaces: something that is not a regular file (a device such as /dev/null, a FIFO, a
 * directory), an input of this command, or a file this command already wrote. */
static int refuse_always(const char *path, const struct stat *st, sim_err *err) {
  if (!S_ISREG(st->st_mode))
    return sim_errf(err, SIM_EINPUT, "%s is not a regular file (a device, FIFO or directory): servesim writes its "
                    "outputs to regular files only, --force or not", path);
  if (known(inputs, n_inputs, st))
    return sim_errf(err, SIM_EINPUT, "%s is an input of this command: not overwriting it, --force or not (give "
                    "the output another name)", path);
  if (known(outputs, n_outputs, st))
    return sim_errf(err, SIM_EINPUT, "%s is another output of this command: give each output its own file", path);
  return SIM_OK;
}

/* The temporary file being written (PATH.tmp.PID, renamed onto PATH when complete) is removed if the process
 * dies while writing it: a signal whose action is the default one (termination, a crash in a Release build,
 * SIGXFSZ at a file size limit) first unlinks it, then takes its default action again. Signals somebody
 * handles (libuv's in `serve`, the sanitizers' fault handlers) are left alone. unlink() is async-signal-safe. */
static const int fatal_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGXFSZ};
static char tmp_path[4200];
static volatile sig_atomic_t tmp_armed;
static struct sigaction saved[SIM_ARRAY_LEN(fatal_signals)];
static bool installed[SIM_ARRAY_LEN(fatal_signals)];

static void on_fatal(int sig) {
  if (tmp_armed) unlink(tmp_path);
  raise(sig); /* SA_RESETHAND put the default action back; SA_NODEFER lets it act now */
}

static void arm_cleanup(const char *tmp) {
  snprintf(tmp_path, sizeof tmp_path, "%s", tmp);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_fatal;
  sa.sa_flags = SA_RESETHAND | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < SIM_ARRAY_LEN(fatal_signals); i++) {
    installed[i] = sigaction(fatal_signals[i], NULL, &saved[i]) == 0 && !(saved[i].sa_flags & SA_SIGINFO) &&
                   saved[i].sa_handler == SIG_DFL && sigaction(fatal_signals[i], &sa, NULL) == 0;
  }
  tmp_armed = 1;
}

static void disarm_cleanup(void) {
  tmp_armed = 0;
  for (size_t i = 0; i < SIM_ARRAY_LEN(fatal_signals); i++)
    if (installed[i]) (void)sigaction(fatal_signals[i], &saved[i], NULL), installed[i] = false;
}

int outfmt_write_file(const char *path, bool force, outfmt_write_fn fn, const void *arg, sim_err *err) {
  struct stat st;
  bool to_stdout = !strcmp(path, "-");
  if (to_stdout) return fn(arg, stdout, err);
  bool exists = stat(path, &st) == 0;
  int rc = exists ? refuse_always(path, &st, err) : SIM_OK;
  if (rc) return rc;
  if (exists && !force) return refuse(path, err);
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  arm_cleanup(tmp);
  FILE *f = fopen(tmp, "w");
  if (!f) {
    disarm_cleanup();
    return sim_errf(err, SIM_EINPUT, "%s: cannot create the file", path);
  }
  if (exists) (void)fchmod(fileno(f), st.st_mode & 07777); /* --force keeps the replaced file's mode */
  rc = fn(arg, f, err);
  if (fclose(f) != 0 && !rc) rc = sim_errf(err, SIM_EINPUT, "%s: write failed", path);
  if (!rc && rename(tmp, path) != 0) rc = sim_errf(err, SIM_EINPUT, "%s: cannot rename the temporary file", path);
  if (rc) unlink(tmp);
  disarm_cleanup();
  if (!rc && stat(path, &st) == 0) remember(outputs, &n_outputs, &st);
  return rc;
}

int outfmt_refuse_existing(const char *const *paths, int n, bool force, sim_err *err) {
  struct stat st;
  for (int i = 0; i < n; i++) {
    if (!paths[i] || !strcmp(paths[i], "-")) continue;
    for (int j = 0; j < i; j++) /* the same name twice; the same file under two names is caught on writing */
      if (paths[j] && !strcmp(paths[i], paths[j]))
        return sim_errf(err, SIM_EINPUT, "%s is named for two outputs: give each output its own file", paths[i]);
    if (stat(paths[i], &st) != 0) continue;
    int rc = refuse_always(paths[i], &st, err);
    if (rc) return rc;
    if (!force) return refuse(paths[i], err);
  }
  return SIM_OK;
}
