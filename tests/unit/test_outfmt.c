/* test_outfmt.c: outputs are written to PATH.tmp.PID and renamed onto PATH when complete; a process that dies
 * while writing leaves neither a half-written PATH nor the temporary file ([hardening] item 4: crashed merges
 * left *.tmp.PID files). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/outfmt.h"

static int die_while_writing(const void *arg, FILE *f, sim_err *err) {
  (void)err;
  fputs("half of an output\n", f);
  fflush(f);
  raise(*(const int *)arg);
  return SIM_OK; /* not reached for a fatal signal */
}

static int write_ok(const void *arg, FILE *f, sim_err *err) {
  (void)arg, (void)err;
  fputs("whole\n", f);
  return SIM_OK;
}

/* Files in dir whose name starts with "out". */
static int files_named_out(const char *dir) {
  DIR *d = opendir(dir);
  cr_assert(d);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) n += !strncmp(e->d_name, "out", 3);
  closedir(d);
  return n;
}

static bool default_action(int sig) {
  struct sigaction sa;
  return sigaction(sig, NULL, &sa) == 0 && !(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_DFL;
}

Test(outfmt, a_process_killed_while_writing_leaves_no_temporary_file) {
  char dir[] = "/tmp/servesim_outfmt_XXXXXX";
  cr_assert(mkdtemp(dir));
  char path[256];
  snprintf(path, sizeof path, "%s/out.json", dir);
  const int sigs[] = {SIGTERM, SIGINT, SIGABRT, SIGSEGV, SIGXFSZ};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    bool handled_by_us = default_action(sigs[i]); /* a sanitizer's fault handler keeps its signal */
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
      sim_err err = {0, ""};
      outfmt_write_file(path, false, die_while_writing, &sigs[i], &err);
      _exit(0);
    }
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    if (!handled_by_us) { /* a sanitizer took the signal: its temporary file stays; clear it for the next case */
      DIR *d = opendir(dir);
      cr_assert(d);
      char p[512];
      for (struct dirent *e; (e = readdir(d));)
        if (!strncmp(e->d_name, "out", 3)) snprintf(p, sizeof p, "%s/%s", dir, e->d_name), unlink(p);
      closedir(d);
      continue;
    }
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == sigs[i], "signal %d: the child must die of it (status %#x)",
              sigs[i], status);
    cr_assert_eq(files_named_out(dir), 0, "signal %d: a temporary or partial output was left in %s", sigs[i], dir);
  }
  /* the handlers are gone after a write: the signal dispositions are what they were */
  sim_err err = {0, ""};
  bool before = default_action(SIGTERM);
  cr_assert_eq(outfmt_write_file(path, false, write_ok, NULL, &err), SIM_OK, "%s", err.msg);
  cr_assert_eq(default_action(SIGTERM), before);
  cr_assert_eq(files_named_out(dir), 1, "the output, and no temporary file");
  unlink(path);
  rmdir(dir);
}
