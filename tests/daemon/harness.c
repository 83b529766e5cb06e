/* See harness.h. turnd's path comes from the build (TURND_PATH). */
#define _XOPEN_SOURCE 700 /* nftw */
#include "harness.h"

#include <curl/curl.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

static int exit_status(int wstatus) {
  if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) return 128 + WTERMSIG(wstatus);
  return -1;
}

static pid_t spawn(const char *const *args, int *out_fd) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    execv(TURND_PATH, (char *const *)args);
    _exit(127);
  }
  close(fds[1]);
  *out_fd = fds[0];
  return pid;
}

int harness_run(const char *const *args) {
  const char *argv[32] = {TURND_PATH};
  size_t n = 1;
  for (; args[n - 1] != NULL && n < 31; n++)
    argv[n] = args[n - 1];
  argv[n] = NULL;
  int fd;
  pid_t pid = spawn(argv, &fd);
  if (pid < 0) return -1;
  char sink[256];
  while (read(fd, sink, sizeof sink) > 0)
    ;
  close(fd);
  int wstatus;
  if (waitpid(pid, &wstatus, 0) != pid) return -1;
  return exit_status(wstatus);
}

int harness_start(struct turnd_proc *t, const char *const *extra) {
  memset(t, 0, sizeof *t);
  snprintf(t->data_dir, sizeof t->data_dir, "/tmp/turnd-test-XXXXXX");
  if (mkdtemp(t->data_dir) == NULL) return -1;
  const char *argv[32] = {TURND_PATH, "--listen", "127.0.0.1:0", "--data", t->data_dir};
  size_t n = 5;
  for (size_t i = 0; extra != NULL && extra[i] != NULL && n < 31; i++)
    argv[n++] = extra[i];
  argv[n] = NULL;
  int fd;
  t->pid = spawn(argv, &fd);
  if (t->pid < 0) return -1;
  /* The first line, byte by byte so nothing after it is swallowed. */
  size_t len = 0;
  char c;
  while (len + 1 < sizeof t->listen_line && read(fd, &c, 1) == 1 && c != '\n')
    t->listen_line[len++] = c;
  t->listen_line[len] = '\0';
  close(fd);
  if (sscanf(t->listen_line, "listening on http://127.0.0.1:%u", &t->port) != 1) {
    harness_stop(t, SIGKILL);
    return -1;
  }
  snprintf(t->base_url, sizeof t->base_url, "http://127.0.0.1:%u", t->port);
  return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

int harness_stop(struct turnd_proc *t, int sig) {
  int status = -1;
  if (t->pid > 0) {
    kill(t->pid, sig);
    int wstatus;
    if (waitpid(t->pid, &wstatus, 0) == t->pid) status = exit_status(wstatus);
    t->pid = 0;
  }
  if (t->data_dir[0] != '\0') nftw(t->data_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  t->data_dir[0] = '\0';
  return status;
}

static size_t on_body(char *data, size_t size, size_t n, void *arg) {
  struct http_answer *a = arg;
  size_t len = size * n;
  char *grown = realloc(a->body, a->len + len + 1);
  if (grown == NULL) return 0;
  memcpy(grown + a->len, data, len);
  a->body = grown;
  a->len += len;
  a->body[a->len] = '\0';
  return len;
}

/* Keeps the two headers the tests look at. */
static size_t on_header(char *data, size_t size, size_t n, void *arg) {
  struct http_answer *a = arg;
  size_t len = size * n;
  struct {
    const char *name;
    char *to;
  } keep[] = {{"Content-Type:", a->content_type}, {"Allow:", a->allow}};
  for (size_t k = 0; k < 2; k++) {
    size_t nl = strlen(keep[k].name);
    if (len > nl && strncasecmp(data, keep[k].name, nl) == 0) {
      const char *v = data + nl;
      size_t vl = len - nl;
      while (vl > 0 && (*v == ' '))
        v++, vl--;
      while (vl > 0 && (v[vl - 1] == '\r' || v[vl - 1] == '\n'))
        vl--;
      if (vl >= 64) vl = 63;
      memcpy(keep[k].to, v, vl);
      keep[k].to[vl] = '\0';
    }
  }
  return len;
}

int http_do(const char *method, const char *url, const char *body,
            struct http_answer *a) {
  memset(a, 0, sizeof *a);
  CURL *curl = curl_easy_init();
  if (curl == NULL) return -1;
  curl_easy_setopt(curl, CURLOPT_URL, url);
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, a);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, a);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
  curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
  struct curl_slist *headers = NULL;
  if (body != NULL) {
    headers = curl_slist_append(headers, "Content-Type: application/json");
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
  }
  CURLcode rc = curl_easy_perform(curl);
  if (rc == CURLE_OK) curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &a->status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  if (a->body == NULL) {
    a->body = calloc(1, 1);
    if (a->body == NULL) return -1;
  }
  return rc == CURLE_OK ? 0 : -1;
}

void http_answer_free(struct http_answer *a) {
  free(a->body);
  a->body = NULL;
}
