/* The floor of a warm `--related` run: the time the kernel takes to stamp (lstat) every
 * folder and file such a run must look at, on one thread, nothing else done.
 *
 *   cd TREE && find . -path ./node_modules -prune -o -path ./build -prune -o -type d -print \
 *     | sed 's|^\./||' >/tmp/dirs
 *   cd TREE && find . -path ./node_modules -prune -o -path ./build -prune -o -type f -print \
 *     | sed 's|^\./||' >/tmp/files
 *   gcc -O2 -pthread bench/stat-floor.c -o /tmp/stat-floor && /tmp/stat-floor TREE /tmp/dirs /tmp/files
 *
 * Prints, three times: every path stamped relative to the root held open (as curate does),
 * then by its full path, then relative to the root on two threads (each every other path). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char **lines(const char *file, int *n) {
  FILE *f = fopen(file, "r");
  if (!f) { perror(file); exit(1); }
  int cap = 1024;
  char **v = malloc(sizeof(char *) * cap);
  char buf[4096];
  *n = 0;
  while (fgets(buf, sizeof buf, f)) {
    buf[strcspn(buf, "\n")] = 0;
    if (*n == cap) v = realloc(v, sizeof(char *) * (cap *= 2));
    v[(*n)++] = strdup(buf);
  }
  fclose(f);
  return v;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static char **all;
static int nall, root_fd;

static void *half(void *arg) {
  struct stat st;
  for (int i = (int)(long)arg; i < nall; i += 2) fstatat(root_fd, all[i], &st, AT_SYMLINK_NOFOLLOW);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 4) { fprintf(stderr, "usage: %s ROOT DIRS FILES\n", argv[0]); return 2; }
  int nd, nf;
  char **d = lines(argv[2], &nd), **f = lines(argv[3], &nf);
  int root = open(argv[1], O_PATH | O_DIRECTORY);
  if (root < 0) { perror(argv[1]); return 1; }
  struct stat st;
  char full[8192];
  nall = nd + nf;
  all = malloc(sizeof(char *) * nall);
  memcpy(all, d, sizeof(char *) * nd);
  memcpy(all + nd, f, sizeof(char *) * nf);
  root_fd = root;
  for (int rep = 0; rep < 3; rep++) {
    double t0 = now();
    for (int i = 0; i < nd; i++) fstatat(root, d[i], &st, AT_SYMLINK_NOFOLLOW);
    for (int i = 0; i < nf; i++) fstatat(root, f[i], &st, AT_SYMLINK_NOFOLLOW);
    double t1 = now();
    for (int i = 0; i < nd; i++) { snprintf(full, sizeof full, "%s/%s", argv[1], d[i]); lstat(full, &st); }
    for (int i = 0; i < nf; i++) { snprintf(full, sizeof full, "%s/%s", argv[1], f[i]); lstat(full, &st); }
    double t2 = now();
    pthread_t two[2];
    for (long k = 0; k < 2; k++) pthread_create(&two[k], NULL, half, (void *)k);
    for (int k = 0; k < 2; k++) pthread_join(two[k], NULL);
    double t3 = now();
    printf("%d folders + %d files: %.1f ms relative to the root, %.1f ms by full path (%.2f us a stamp), "
           "%.1f ms on two threads\n",
           nd, nf, (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t1 - t0) * 1e6 / (nd + nf), (t3 - t2) * 1e3);
  }
  return 0;
}
