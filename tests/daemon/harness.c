/* See harness.h. turnd's path comes from the build (TURND_PATH). */
#define _XOPEN_SOURCE 700 /* nftw */
#include "harness.h"

#include <curl/curl.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
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

static pid_t started[64]; /* turnd processes not yet stopped */

static void remember(pid_t pid, bool add) {
  for (size_t i = 0; i < sizeof started / sizeof started[0]; i++) {
    if (add && started[i] == 0) {
      started[i] = pid;
      return;
    }
    if (!add && started[i] == pid) {
      started[i] = 0;
      return;
    }
  }
}

int harness_kill_all(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof started / sizeof started[0]; i++) {
    if (started[i] == 0) continue;
    kill(started[i], SIGKILL);
    waitpid(started[i], NULL, 0);
    started[i] = 0;
  }
  return 0;
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
  remember(t->pid, true);
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
    remember(t->pid, false);
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

static size_t on_stream(char *data, size_t size, size_t n, void *arg) {
  struct http_stream *s = arg;
  size_t len = size * n;
  char *grown = realloc(s->raw, s->len + len + 1);
  if (grown == NULL) return 0;
  memcpy(grown + s->len, data, len);
  s->raw = grown;
  s->len += len;
  s->raw[s->len] = '\0';
  if (s->max_lines > 0) {
    size_t lines = 0;
    for (size_t i = 0; i < s->len; i++)
      lines += s->raw[i] == '\n';
    if (lines >= s->max_lines) return 0; /* drop the connection here */
  }
  return len;
}

static size_t on_stream_header(char *data, size_t size, size_t n, void *arg) {
  struct http_stream *s = arg;
  size_t len = size * n;
  static const char name[] = "Content-Type:";
  if (len > sizeof name && strncasecmp(data, name, sizeof name - 1) == 0) {
    const char *v = data + sizeof name - 1;
    size_t vl = len - (sizeof name - 1);
    while (vl > 0 && *v == ' ')
      v++, vl--;
    while (vl > 0 && (v[vl - 1] == '\r' || v[vl - 1] == '\n'))
      vl--;
    if (vl >= sizeof s->content_type) vl = sizeof s->content_type - 1;
    memcpy(s->content_type, v, vl);
    s->content_type[vl] = '\0';
  }
  return len;
}

int http_stream(const char *method, const char *url, const char *body, size_t max_lines,
                struct http_stream *s) {
  memset(s, 0, sizeof *s);
  s->max_lines = max_lines;
  CURL *curl = curl_easy_init();
  if (curl == NULL) return -1;
  curl_easy_setopt(curl, CURLOPT_URL, url);
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_stream);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, s);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_stream_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, s);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 60L);
  curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(curl, CURLOPT_FORBID_REUSE, 1L);
  if (body != NULL) curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
  CURLcode rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &s->status);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && max_lines > 0)) return -1;
  if (s->raw == NULL) s->raw = calloc(1, 1);
  /* Split a copy at newlines; a partial last line is left out. */
  char *copy = malloc(s->len + 1);
  s->lines = calloc(s->len + 1, sizeof *s->lines);
  if (s->raw == NULL || copy == NULL || s->lines == NULL) {
    free(copy);
    return -1;
  }
  memcpy(copy, s->raw, s->len + 1);
  char *p = copy;
  char *nl;
  while ((nl = strchr(p, '\n')) != NULL) {
    *nl = '\0';
    s->lines[s->n++] = p;
    p = nl + 1;
  }
  if (s->n == 0) free(copy);
  return 0;
}

void http_stream_free(struct http_stream *s) {
  if (s->n > 0) free(s->lines[0]);
  free(s->lines);
  free(s->raw);
  memset(s, 0, sizeof *s);
}

int harness_write_file(const char *dir, const char *name, const char *text, char *out,
                       size_t cap) {
  snprintf(out, cap, "%s/%s", dir, name);
  FILE *f = fopen(out, "w");
  if (f == NULL) return -1;
  fputs(text, f);
  return fclose(f) == 0 ? 0 : -1;
}

int harness_connect(const struct turnd_proc *t, int rcvbuf) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  if (rcvbuf > 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)t->port)};
  inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}
