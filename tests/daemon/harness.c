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
#include <stdint.h>
#include <poll.h>
#include <sys/prctl.h>
#include <time.h>

static int exit_status(int wstatus) {
  if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) return 128 + WTERMSIG(wstatus);
  return -1;
}

/* Starts turnd with args, its stdout on *out_fd; with in_fd >= 0, its stdin
 * there (the child's copy; the caller closes its own). */
static pid_t spawn_with_input(const char *const *args, int in_fd, int *out_fd) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    if (in_fd >= 0) dup2(in_fd, STDIN_FILENO);
    close(fds[0]);
    close(fds[1]);
    execv(TURND_PATH, (char *const *)args);
    _exit(127);
  }
  close(fds[1]);
  *out_fd = fds[0];
  return pid;
}

static pid_t spawn(const char *const *args, int *out_fd) {
  return spawn_with_input(args, -1, out_fd);
}

/* The token each running turnd's port gets from the http_ functions. */
static struct {
  unsigned port;
  char token[64]; /* "" sends none */
} tokens[64];

void harness_use_token(unsigned port, const char *token) {
  size_t free_slot = sizeof tokens / sizeof tokens[0];
  for (size_t i = 0; i < sizeof tokens / sizeof tokens[0]; i++) {
    if (tokens[i].port == port) {
      free_slot = i;
      break;
    }
    if (tokens[i].port == 0 && free_slot == sizeof tokens / sizeof tokens[0])
      free_slot = i;
  }
  if (free_slot == sizeof tokens / sizeof tokens[0]) return;
  tokens[free_slot].port = port;
  snprintf(tokens[free_slot].token, sizeof tokens[free_slot].token, "%s",
           token != NULL ? token : "");
}

/* Adds the Authorization header the URL's port is due to headers. */
static struct curl_slist *with_token(struct curl_slist *headers, const char *url) {
  unsigned port;
  if (sscanf(url, "http://127.0.0.1:%u", &port) != 1) return headers;
  for (size_t i = 0; i < sizeof tokens / sizeof tokens[0]; i++) {
    if (tokens[i].port != port || tokens[i].token[0] == '\0') continue;
    char header[96];
    snprintf(header, sizeof header, "Authorization: Bearer %s", tokens[i].token);
    return curl_slist_append(headers, header);
  }
  return headers;
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

int harness_run_line(const char *const *args, const char *input, char *out, size_t cap) {
  const char *argv[32] = {TURND_PATH};
  size_t n = 1;
  for (; args[n - 1] != NULL && n < 31; n++)
    argv[n] = args[n - 1];
  argv[n] = NULL;
  int in[2] = {-1, -1};
  if (input != NULL && pipe(in) != 0) return -1;
  int fd;
  pid_t pid = spawn_with_input(argv, in[0], &fd);
  if (in[0] >= 0) {
    close(in[0]);
    if (write(in[1], input, strlen(input)) < 0) {
    }
    close(in[1]);
  }
  if (pid < 0) return -1;
  size_t len = 0;
  char c;
  bool line_done = false;
  while (read(fd, &c, 1) == 1) {
    if (c == '\n') line_done = true;
    if (!line_done && len + 1 < cap) out[len++] = c;
  }
  out[len] = '\0';
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
  const char *pair[] = {"pair", "--data", t->data_dir, "--name", "test", NULL};
  if (harness_run_line(pair, NULL, t->token, sizeof t->token) != 0) return -1;
  snprintf(t->auth_header, sizeof t->auth_header, "Authorization: Bearer %s", t->token);
  return harness_restart(t, extra);
}

int harness_restart(struct turnd_proc *t, const char *const *extra) {
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
  harness_use_token(t->port, t->token);
  return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

int harness_halt(struct turnd_proc *t, int sig) {
  int status = -1;
  if (t->pid > 0) {
    remember(t->pid, false);
    kill(t->pid, sig);
    int wstatus;
    if (waitpid(t->pid, &wstatus, 0) == t->pid) status = exit_status(wstatus);
    t->pid = 0;
  }
  return status;
}

int harness_stop(struct turnd_proc *t, int sig) {
  int status = harness_halt(t, sig);
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
  struct curl_slist *headers = with_token(NULL, url);
  if (body != NULL) {
    headers = curl_slist_append(headers, "Content-Type: application/json");
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
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
  struct curl_slist *headers = with_token(NULL, url);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  CURLcode rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &s->status);
  curl_slist_free_all(headers);
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

size_t harness_read_until(int fd, char *buf, size_t len, size_t cap, const char *want) {
  while (len + 1 < cap) {
    buf[len] = '\0';
    if (want != NULL && strstr(buf, want) != NULL) break;
    ssize_t got = read(fd, buf + len, cap - 1 - len);
    if (got <= 0) break;
    len += (size_t)got;
  }
  buf[len] = '\0';
  return len;
}

/* ------------------------------------------------ requests libcurl shapes */

struct upload {
  const char *data;
  size_t len;
  size_t off;
  size_t chunk; /* 0: as much as libcurl takes */
};

static size_t on_upload(char *to, size_t size, size_t n, void *arg) {
  struct upload *u = arg;
  size_t k = u->len - u->off;
  if (k > size * n) k = size * n;
  if (u->chunk > 0 && k > u->chunk) k = u->chunk;
  memcpy(to, u->data + u->off, k);
  u->off += k;
  return k;
}

int http_do_body(const char *method, const char *url, const char *const *headers,
                 const char *body, size_t len, size_t chunk, struct http_answer *a) {
  memset(a, 0, sizeof *a);
  CURL *curl = curl_easy_init();
  if (curl == NULL) return -1;
  struct curl_slist *hdr = NULL;
  bool chunked = false;
  for (size_t i = 0; headers != NULL && headers[i] != NULL; i++) {
    hdr = curl_slist_append(hdr, headers[i]);
    chunked = chunked || strncasecmp(headers[i], "Transfer-Encoding: chunked", 26) == 0;
  }
  hdr = with_token(hdr, url);
  struct upload up = {body, len, 0, chunk};
  curl_easy_setopt(curl, CURLOPT_URL, url);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, a);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, a);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 60L);
  curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, hdr);
  if (body != NULL) {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, on_upload);
    curl_easy_setopt(curl, CURLOPT_READDATA, &up);
    if (!chunked) curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
  }
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method); /* after POST, which sets it */
  CURLcode rc = curl_easy_perform(curl);
  if (rc == CURLE_OK) curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &a->status);
  curl_slist_free_all(hdr);
  curl_easy_cleanup(curl);
  if (a->body == NULL) {
    a->body = calloc(1, 1);
    if (a->body == NULL) return -1;
  }
  return rc == CURLE_OK ? 0 : -1;
}

/* Appends len bytes to a growing NUL-terminated buffer. */
static int grow(char **buf, size_t *used, const char *data, size_t len) {
  char *bigger = realloc(*buf, *used + len + 1);
  if (bigger == NULL) return -1;
  memcpy(bigger + *used, data, len);
  *used += len;
  bigger[*used] = '\0';
  *buf = bigger;
  return 0;
}

int harness_exchange(const struct turnd_proc *t, const char *req, size_t len, char **out,
                     size_t *out_len) {
  *out = NULL;
  *out_len = 0;
  int fd = harness_connect(t, 0);
  if (fd < 0) return -1;
  struct timeval safety = {60, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &safety, sizeof safety);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &safety, sizeof safety);
  /* turnd may answer and close before it has read everything: then the rest
   * cannot be sent, and its answer is still there to read. */
  for (size_t off = 0; off < len;) {
    ssize_t n = send(fd, req + off, len - off, MSG_NOSIGNAL);
    if (n <= 0) break;
    off += (size_t)n;
  }
  int rv = grow(out, out_len, "", 0);
  char buf[4096];
  ssize_t n;
  while (rv == 0 && (n = recv(fd, buf, sizeof buf, 0)) > 0)
    rv = grow(out, out_len, buf, (size_t)n);
  close(fd);
  return rv;
}

/* ------------------------------------------------------- the turn client */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int harness_cli(const char *const *args, const char *input, struct cli_run *r) {
  memset(r, 0, sizeof *r);
  r->status = -1;
  int in[2], out[2], err[2];
  if (pipe(in) != 0) return -1;
  if (pipe(out) != 0 || pipe(err) != 0) return -1;
  const char *argv[32] = {TURN_CLI_PATH};
  size_t n = 1;
  for (; args[n - 1] != NULL && n < 31; n++)
    argv[n] = args[n - 1];
  argv[n] = NULL;
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    dup2(in[0], STDIN_FILENO);
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    for (int i = 0; i < 2; i++)
      close(in[i]), close(out[i]), close(err[i]);
    execv(TURN_CLI_PATH, (char *const *)argv);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  /* The input is a few bytes: the pipe takes them whether or not it reads them. */
  void (*old)(int) = signal(SIGPIPE, SIG_IGN);
  if (input != NULL && write(in[1], input, strlen(input)) < 0) {
    /* it has exited already; its status says why */
  }
  close(in[1]);
  signal(SIGPIPE, old);
  int rv = grow(&r->out, &r->out_len, "", 0) | grow(&r->err, &r->err_len, "", 0);
  struct pollfd pf[2] = {{.fd = out[0], .events = POLLIN},
                         {.fd = err[0], .events = POLLIN}};
  double deadline = now_s() + 60;
  while (rv == 0 && (pf[0].fd >= 0 || pf[1].fd >= 0)) {
    double left = deadline - now_s();
    if (left <= 0 || poll(pf, 2, (int)(left * 1000) + 1) < 0) break;
    for (int i = 0; i < 2; i++) {
      if (pf[i].fd < 0 || pf[i].revents == 0) continue;
      char buf[4096];
      ssize_t got = read(pf[i].fd, buf, sizeof buf);
      if (got > 0) {
        rv = i == 0 ? grow(&r->out, &r->out_len, buf, (size_t)got)
                    : grow(&r->err, &r->err_len, buf, (size_t)got);
      } else {
        close(pf[i].fd);
        pf[i].fd = -1;
      }
    }
  }
  for (int i = 0; i < 2; i++)
    if (pf[i].fd >= 0) close(pf[i].fd);
  if (now_s() >= deadline) kill(pid, SIGKILL); /* stuck: the safety net */
  int wstatus;
  if (waitpid(pid, &wstatus, 0) == pid) r->status = exit_status(wstatus);
  return rv;
}

void cli_run_free(struct cli_run *r) {
  free(r->out);
  free(r->err);
  memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------- a connection cutter */

static pid_t proxies[8]; /* proxy processes not yet stopped */

struct relay {
  int c, s;         /* client side, turnd side; -1 once closed */
  bool to_cut;      /* its answer stops after the marker */
  char first[256];  /* the request's first line, while it comes */
  size_t first_len; /* SIZE_MAX once logged */
  char *seen;       /* to_cut: every byte from turnd so far, to find the cut */
  size_t seen_len;
  size_t cut_at;     /* stream offset to stop at; SIZE_MAX: not known yet */
  size_t marker_end; /* where the marker ended; SIZE_MAX: not found yet */
};

static bool send_all(int fd, const char *p, size_t len) {
  while (len > 0) {
    ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
    if (n <= 0) return false;
    p += n;
    len -= (size_t)n;
  }
  return true;
}

static size_t find(const char *hay, size_t len, size_t from, const char *needle) {
  size_t nl = strlen(needle);
  for (size_t i = from; i + nl <= len; i++)
    if (memcmp(hay + i, needle, nl) == 0) return i;
  return SIZE_MAX;
}

/* Bytes from the client: relayed; the first line goes to the log. */
static bool from_client(struct relay *r, int log_fd) {
  char buf[16384];
  ssize_t n = recv(r->c, buf, sizeof buf, 0);
  if (n <= 0) return false;
  for (ssize_t i = 0; i < n && r->first_len != SIZE_MAX; i++) {
    if (buf[i] == '\r' || buf[i] == '\n' || r->first_len == sizeof r->first - 1) {
      r->first[r->first_len++] = '\n';
      if (write(log_fd, r->first, r->first_len) < 0) return false;
      r->first_len = SIZE_MAX;
    } else {
      r->first[r->first_len++] = buf[i];
    }
  }
  return send_all(r->s, buf, (size_t)n);
}

/* Bytes from turnd: relayed, on a connection to cut only up to the cut. */
static bool from_turnd(struct relay *r, const char *cut_after, int flags) {
  char buf[16384];
  ssize_t n = recv(r->s, buf, sizeof buf, 0);
  if (n <= 0) return false;
  if (!r->to_cut) return send_all(r->c, buf, (size_t)n);
  size_t old = r->seen_len;
  if (grow(&r->seen, &r->seen_len, buf, (size_t)n) != 0) return false;
  size_t mlen = strlen(cut_after);
  if (r->cut_at == SIZE_MAX && r->marker_end == SIZE_MAX) {
    size_t at = find(r->seen, r->seen_len, old >= mlen ? old - mlen + 1 : 0, cut_after);
    if (at != SIZE_MAX) {
      r->marker_end = at + mlen;
      if (!(flags & HARNESS_CUT_TO_EOL)) r->cut_at = r->marker_end;
    }
  }
  if (r->cut_at == SIZE_MAX && r->marker_end != SIZE_MAX) {
    size_t nl =
        find(r->seen, r->seen_len, r->marker_end > old ? r->marker_end : old, "\n");
    if (nl != SIZE_MAX) r->cut_at = nl + 1;
  }
  size_t end = r->cut_at < r->seen_len ? r->cut_at : r->seen_len;
  if (end > old && !send_all(r->c, r->seen + old, end - old)) return false;
  return r->seen_len < r->cut_at; /* at the cut: close both sides */
}

static int connect_to(unsigned port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* The proxy process: one poll loop over every relay, until it is killed. */
static void proxy_run(int lfd, unsigned port, const char *cut_after, int flags,
                      int log_fd) {
  struct relay relays[16];
  size_t n = 0, accepted = 0;
  for (;;) {
    struct pollfd pf[1 + 2 * 16];
    pf[0] = (struct pollfd){.fd = lfd, .events = n < 16 ? POLLIN : 0};
    for (size_t i = 0; i < n; i++) {
      pf[1 + 2 * i] = (struct pollfd){.fd = relays[i].c, .events = POLLIN};
      pf[2 + 2 * i] = (struct pollfd){.fd = relays[i].s, .events = POLLIN};
    }
    if (poll(pf, 1 + 2 * n, -1) < 0) _exit(1);
    for (size_t i = 0; i < n; i++) {
      struct relay *r = &relays[i];
      bool ok = true;
      if (pf[1 + 2 * i].revents != 0) ok = from_client(r, log_fd);
      if (ok && pf[2 + 2 * i].revents != 0) ok = from_turnd(r, cut_after, flags);
      if (!ok) {
        close(r->c);
        close(r->s);
        free(r->seen);
        r->c = -1;
      }
    }
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
      if (relays[i].c >= 0) relays[kept++] = relays[i];
    n = kept;
    if (pf[0].revents != 0) {
      int c = accept(lfd, NULL, NULL);
      int s = c >= 0 ? connect_to(port) : -1;
      if (s < 0) {
        if (c >= 0) close(c);
        continue;
      }
      relays[n++] =
          (struct relay){.c = c,
                         .s = s,
                         .to_cut = accepted++ == 0 || (flags & HARNESS_CUT_EVERY),
                         .cut_at = SIZE_MAX,
                         .marker_end = SIZE_MAX};
    }
  }
}

int harness_proxy_start(struct harness_proxy *p, const struct turnd_proc *t,
                        const char *cut_after, int flags) {
  memset(p, 0, sizeof *p);
  snprintf(p->log_path, sizeof p->log_path, "/tmp/turnd-proxy-XXXXXX");
  int log_fd = mkstemp(p->log_path);
  if (log_fd < 0) return -1;
  int lfd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET};
  inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  socklen_t sl = sizeof sa;
  if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
      listen(lfd, 16) != 0 || getsockname(lfd, (struct sockaddr *)&sa, &sl) != 0) {
    if (lfd >= 0) close(lfd);
    close(log_fd);
    return -1;
  }
  p->port = ntohs(sa.sin_port);
  snprintf(p->base_url, sizeof p->base_url, "http://127.0.0.1:%u", p->port);
  p->pid = fork();
  if (p->pid < 0) return -1;
  if (p->pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the test */
    proxy_run(lfd, t->port, cut_after, flags, log_fd);
    _exit(0);
  }
  close(lfd);
  close(log_fd);
  for (size_t i = 0; i < sizeof proxies / sizeof proxies[0]; i++)
    if (proxies[i] == 0) {
      proxies[i] = p->pid;
      break;
    }
  return 0;
}

void harness_proxy_stop(struct harness_proxy *p) {
  if (p->pid > 0) {
    kill(p->pid, SIGKILL);
    waitpid(p->pid, NULL, 0);
    for (size_t i = 0; i < sizeof proxies / sizeof proxies[0]; i++)
      if (proxies[i] == p->pid) proxies[i] = 0;
    p->pid = 0;
  }
  size_t len = 0;
  free(p->requests);
  p->requests = NULL;
  grow(&p->requests, &len, "", 0);
  FILE *f = fopen(p->log_path, "r");
  if (f != NULL) {
    char buf[4096];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0)
      grow(&p->requests, &len, buf, got);
    fclose(f);
  }
  remove(p->log_path);
}

void harness_proxy_free(struct harness_proxy *p) {
  free(p->requests);
  p->requests = NULL;
}

int harness_proxy_kill_all(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof proxies / sizeof proxies[0]; i++) {
    if (proxies[i] == 0) continue;
    kill(proxies[i], SIGKILL);
    waitpid(proxies[i], NULL, 0);
    proxies[i] = 0;
  }
  return 0;
}
