/* See case_net.h. One multi handle drives every request, so the runner never
 * blocks on one answer while another stream needs reading. Each request gets its
 * own connection (no reuse), so dropping one is closing exactly that reader. */
#include "case_net.h"

#include "case.h"
#include "turn/turn.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int case_net_init(struct case_net *net) {
  memset(net, 0, sizeof *net);
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return -1;
  net->multi = curl_multi_init();
  return net->multi != NULL ? 0 : -1;
}

static void stream_free(struct case_net *net, struct case_stream *s) {
  if (s->easy != NULL) {
    curl_multi_remove_handle(net->multi, s->easy);
    curl_easy_cleanup(s->easy);
  }
  curl_slist_free_all(s->out_headers);
  for (size_t i = 0; i < s->n_lines; i++)
    free(s->lines[i]);
  free(s->lines);
  free(s->types);
  free(s->headers);
  free(s->raw);
  free(s);
}

void case_net_fini(struct case_net *net) {
  for (size_t i = 0; i < net->n; i++)
    stream_free(net, net->streams[i]);
  net->n = 0;
  if (net->multi != NULL) curl_multi_cleanup(net->multi);
  net->multi = NULL;
  curl_global_cleanup();
}

/* The room a growing buffer of len bytes and its NUL has: a power of two, so
 * that a long answer (tens of MiB) is not copied whole for every chunk. */
static size_t room_for(size_t len) {
  size_t room = 256;
  while (room < len + 1)
    room *= 2;
  return room;
}

/* Appends n bytes to a NUL-terminated growing buffer of *len bytes, which only
 * this function grows (its room is room_for(*len)). */
static bool grow_append(char **buf, size_t *len, const char *data, size_t n) {
  char *grown = *buf;
  if (grown == NULL || room_for(*len + n) > room_for(*len)) {
    grown = realloc(*buf, room_for(*len + n));
    if (grown == NULL) return false;
  }
  memcpy(grown + *len, data, n);
  *len += n;
  grown[*len] = '\0';
  *buf = grown;
  return true;
}

bool case_stream_header(const struct case_stream *s, const char *name, char *out,
                        size_t cap) {
  size_t nl = strlen(name);
  for (const char *p = s->headers; p != NULL && *p != '\0';) {
    const char *end = strchr(p, '\n');
    size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
    if (len > nl && p[nl] == ':' && strncasecmp(p, name, nl) == 0) {
      const char *v = p + nl + 1;
      size_t vl = len - nl - 1;
      while (vl > 0 && *v == ' ')
        v++, vl--;
      while (vl > 0 && (v[vl - 1] == '\r' || v[vl - 1] == ' '))
        vl--;
      snprintf(out, cap, "%.*s", (int)vl, v);
      return true;
    }
    p = end != NULL ? end + 1 : NULL;
  }
  return false;
}

static size_t on_header(char *data, size_t size, size_t n, void *arg) {
  struct case_stream *s = arg;
  size_t len = size * n;
  /* A new status line starts a new header block (100 Continue, then the answer):
   * only the last block is the answer's. */
  if (len >= 5 && memcmp(data, "HTTP/", 5) == 0) s->headers_len = 0;
  return grow_append(&s->headers, &s->headers_len, data, len) ? len : 0;
}

static bool is_ndjson(const struct case_stream *s) {
  char type[128];
  return case_stream_header(s, "Content-Type", type, sizeof type) &&
         strncmp(type, "application/x-ndjson", 20) == 0;
}

/* Keeps one event's id in both the stream's and the case's latest. */
static void note_id(char *stream_slot, char *net_slot, json_t *line, const char *key) {
  const char *v = json_string_value(json_object_get(line, key));
  if (v == NULL) return;
  snprintf(stream_slot, CASE_ID_MAX, "%s", v);
  snprintf(net_slot, CASE_ID_MAX, "%s", v);
}

/* A complete line of an NDJSON answer: it must be an event of the protocol; its
 * ids become what the placeholders stand for. */
static int check_event(struct case_net *net, struct case_stream *s, const char *line) {
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  turn_event ev;
  turn_error err;
  int rv = turn_event_parse(&ev, &arena, line, strlen(line), &err);
  int type = rv == TURN_OK ? (int)ev.type : -1;
  turn_arena_fini(&arena);
  if (rv != TURN_OK) {
    char msg[200];
    err.line = s->n_lines + 1;
    turn_error_format(&err, msg, sizeof msg);
    case_show_lines("the line", (char *const *)&line, 1);
    case_fail(s->line_no, "the answer's %s", msg);
  }
  json_error_t je;
  json_t *j = json_loads(line, 0, &je);
  if (type == TURN_EV_TURN) {
    note_id(s->turn, net->turn, j, "turn");
    note_id(s->session, net->session, j, "session");
  } else if (type == TURN_EV_APPROVAL) {
    note_id(s->request, net->request, j, "request");
  }
  json_decref(j);
  return type;
}

static void keep_line(struct case_net *net, struct case_stream *s, const char *p,
                      size_t len) {
  if (s->n_lines == s->cap_lines) {
    size_t cap = s->cap_lines == 0 ? 32 : s->cap_lines * 2;
    char **lines = realloc(s->lines, cap * sizeof *lines);
    if (lines != NULL) s->lines = lines;
    int *types = realloc(s->types, cap * sizeof *types);
    if (types != NULL) s->types = types;
    if (lines == NULL || types == NULL) case_fail(s->line_no, "out of memory");
    s->cap_lines = cap;
  }
  char *line = malloc(len + 1);
  if (line == NULL) case_fail(s->line_no, "out of memory");
  memcpy(line, p, len);
  line[len] = '\0';
  s->types[s->n_lines] = is_ndjson(s) ? check_event(net, s, line) : -1;
  s->lines[s->n_lines++] = line;
}

/* Body bytes: split into lines as they come. Past drop_after lines the rest is
 * thrown away and returning short makes libcurl close the connection: the reader
 * went away mid-answer, as a closed browser tab does. */
static size_t on_body(char *data, size_t size, size_t n, void *arg) {
  struct case_stream *s = arg;
  size_t len = size * n;
  if (!grow_append(&s->raw, &s->raw_len, data, len)) return 0;
  for (char *nl = memchr(s->raw + s->line_start, '\n', s->raw_len - s->line_start);
       nl != NULL;
       nl = memchr(s->raw + s->line_start, '\n', s->raw_len - s->line_start)) {
    keep_line(s->net, s, s->raw + s->line_start, (size_t)(nl - (s->raw + s->line_start)));
    s->line_start = (size_t)(nl - s->raw) + 1;
    if (s->drop_after > 0 && s->n_lines == s->drop_after) {
      s->raw_len = s->line_start;
      s->raw[s->raw_len] = '\0';
      s->dropped = true;
      return 0; /* none of a non-empty chunk taken: libcurl aborts */
    }
  }
  return len;
}

struct case_stream *case_net_start(struct case_net *net, const struct case_stream *tmpl,
                                   const char *method, const char *url, const char *body,
                                   const char *auth) {
  if (net->n == CASE_MAX_STREAMS)
    case_fail(tmpl->line_no, "too many requests in one case");
  struct case_stream *s = calloc(1, sizeof *s);
  if (s == NULL) case_fail(tmpl->line_no, "out of memory");
  memcpy(s->name, tmpl->name, sizeof s->name);
  s->line_no = tmpl->line_no;
  s->want_status = tmpl->want_status;
  s->drop_after = tmpl->drop_after;
  s->net = net;
  net->streams[net->n++] = s;
  s->easy = curl_easy_init();
  if (s->easy == NULL) case_fail(s->line_no, "libcurl cannot make a request");
  CURL *e = s->easy;
  curl_easy_setopt(e, CURLOPT_URL, url);
  curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
  /* A HEAD answer has headers only; libcurl must not wait for the body they
   * announce. */
  if (strcmp(method, "HEAD") == 0) curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
  curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, s);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, s);
  curl_easy_setopt(e, CURLOPT_PRIVATE, s);
  if (body != NULL) {
    s->out_headers = curl_slist_append(NULL, "Content-Type: application/json");
    /* No "Expect: 100-continue" wait on bodies over 1 KiB: the body goes at once. */
    if (s->out_headers != NULL)
      s->out_headers = curl_slist_append(s->out_headers, "Expect:");
    if (s->out_headers == NULL) case_fail(s->line_no, "out of memory");
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS, body);
  }
  if (auth != NULL) {
    struct curl_slist *list = curl_slist_append(s->out_headers, auth);
    if (list == NULL) case_fail(s->line_no, "out of memory");
    s->out_headers = list;
  }
  if (s->out_headers != NULL) curl_easy_setopt(e, CURLOPT_HTTPHEADER, s->out_headers);
  if (curl_multi_add_handle(net->multi, e) != CURLM_OK)
    case_fail(s->line_no, "libcurl cannot start the request");
  return s;
}

/* A transfer is over: the answer must have the status the case expects, and an
 * NDJSON answer read to its end must not stop inside a line. */
static void finish(struct case_net *net, struct case_stream *s, CURLcode rc) {
  curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &s->status);
  curl_multi_remove_handle(net->multi, s->easy);
  curl_easy_cleanup(s->easy);
  s->easy = NULL;
  s->done = true;
  if (rc != CURLE_OK && !(s->dropped && rc == CURLE_WRITE_ERROR) && !s->cut)
    case_fail(s->line_no, "the request failed: %s", curl_easy_strerror(rc));
  if (s->status != s->want_status)
    case_fail(s->line_no, "status %ld, want %ld; the answer:\n%.2000s", s->status,
              s->want_status, s->raw != NULL ? s->raw : "");
  if (s->cut) return;
  bool ndjson = is_ndjson(s);
  if (!s->dropped && ndjson && s->line_start != s->raw_len)
    case_fail(s->line_no, "the answer ended inside a line");
  /* A body's last line needs no newline: a JSON body is often all one line. */
  if (!s->dropped && !ndjson && s->line_start != s->raw_len) {
    keep_line(net, s, s->raw + s->line_start, s->raw_len - s->line_start);
    s->line_start = s->raw_len;
  }
  if (!s->dropped && s->drop_after > 0)
    case_fail(s->line_no, "the answer ended after %zu lines, before the drop after %zu",
              s->n_lines, s->drop_after);
}

void case_net_pump(struct case_net *net, int wait_ms) {
  if (wait_ms > 0) curl_multi_poll(net->multi, NULL, 0, wait_ms, NULL);
  int running;
  curl_multi_perform(net->multi, &running);
  CURLMsg *msg;
  int left;
  while ((msg = curl_multi_info_read(net->multi, &left)) != NULL) {
    if (msg->msg != CURLMSG_DONE) continue;
    struct case_stream *s = NULL;
    curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&s);
    CURLcode rc = msg->data.result; /* msg is gone once the handle is removed */
    finish(net, s, rc);
  }
}

void case_net_cut_open(struct case_net *net) {
  for (size_t i = 0; i < net->n; i++)
    if (!net->streams[i]->done) net->streams[i]->cut = true;
}

void case_net_forget(struct case_net *net, struct case_stream *s) {
  if (net->n == 0 || net->streams[net->n - 1] != s) return;
  net->n--;
  stream_free(net, s);
}

struct case_stream *case_net_find(const struct case_net *net, const char *name) {
  for (size_t i = 0; i < net->n; i++)
    if (strcmp(net->streams[i]->name, name) == 0) return net->streams[i];
  return NULL;
}
