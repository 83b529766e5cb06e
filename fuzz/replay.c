/* A main for a fuzz target without libFuzzer: runs LLVMFuzzerTestOneInput once on
 * every file named on the command line and on every file in every directory named
 * there (not recursive; dot files skipped). A target reports a finding by
 * crashing, so getting to the end means every input passed. */
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads the whole file; returns 0, or -1 with a message printed. */
static int run_file(const char *path, size_t *n_run) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    perror(path);
    return -1;
  }
  size_t cap = 4096, len = 0;
  uint8_t *data = malloc(cap);
  if (data == NULL) {
    fclose(f);
    fprintf(stderr, "%s: out of memory\n", path);
    return -1;
  }
  for (;;) {
    if (len == cap) {
      uint8_t *grown = realloc(data, cap * 2);
      if (grown == NULL) {
        free(data);
        fclose(f);
        fprintf(stderr, "%s: out of memory\n", path);
        return -1;
      }
      data = grown;
      cap *= 2;
    }
    size_t got = fread(data + len, 1, cap - len, f);
    len += got;
    if (got == 0) break;
  }
  int failed = ferror(f);
  fclose(f);
  if (failed) {
    free(data);
    fprintf(stderr, "%s: read error\n", path);
    return -1;
  }
  /* The copy is exactly len bytes, so ASan sees any read past the input. */
  uint8_t *exact = malloc(len > 0 ? len : 1);
  if (exact == NULL) {
    free(data);
    fprintf(stderr, "%s: out of memory\n", path);
    return -1;
  }
  memcpy(exact, data, len);
  free(data);
  /* Named before it runs, so a crash's report says which input it was. */
  fprintf(stderr, "replay: %s\n", path);
  LLVMFuzzerTestOneInput(exact, len);
  free(exact);
  (*n_run)++;
  return 0;
}

static int run_dir(const char *dir, size_t *n_run) {
  DIR *d = opendir(dir);
  if (d == NULL) {
    perror(dir);
    return -1;
  }
  int status = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    size_t n = strlen(dir) + strlen(e->d_name) + 2;
    char *path = malloc(n);
    if (path == NULL) {
      status = -1;
      break;
    }
    snprintf(path, n, "%s/%s", dir, e->d_name);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && run_file(path, n_run) != 0)
      status = -1;
    free(path);
  }
  closedir(d);
  return status;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
    return 2;
  }
  size_t n_run = 0;
  int status = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      perror(argv[i]);
      status = 1;
    } else if (S_ISDIR(st.st_mode)) {
      if (run_dir(argv[i], &n_run) != 0) status = 1;
    } else if (run_file(argv[i], &n_run) != 0) {
      status = 1;
    }
  }
  if (n_run == 0) {
    fprintf(stderr, "%s: no inputs found\n", argv[0]);
    return 1;
  }
  printf("%s: %zu inputs passed\n", argv[0], n_run);
  return status;
}
