/* bench-provider-latency: how long a provider's text delta takes to leave turnd as
 * a `text` line. It starts M turns at once whose model is the fake provider's
 * "timed" scenario: each delta's text is "t=NS ", NS being the fake's
 * CLOCK_MONOTONIC just before it writes the delta to its socket. For every stamp
 * in every text event it records two figures on the same clock:
 *  - leaving turnd: the kernel's receive stamp of the bytes on our socket
 *    (SO_TIMESTAMPNS; on loopback, the moment turnd's send reached the kernel)
 *    minus NS. That is the delta's whole stay in turnd, both loopback hops
 *    included, and none of this process's own wake-up: the target's figure.
 *  - read here: when recv() gave us the bytes, minus NS: what a client sees,
 *    this process's scheduling included.
 * With --direct it reads the fake provider's own streams instead (one hop, no
 * turnd): the floor of the method. Figures are given for every delta and for
 * those sent while every turn streamed (no turn starting or ending then). One
 * libevent loop; each turn's connection is a load_conn that stamps its reads. */
#include "load_args.h"
#include "load_conn.h"
#include "load_lines.h"
#include "load_stats.h"

#include <errno.h>
#include <event2/event.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

#define READ_BYTES   (64u * 1024u)
#define LINE_CAP     (16u * 1024u) /* a line's bytes kept: 200 coalesced stamps fit */
#define STAMP_DIGITS 20            /* a uint64's decimal digits */
#define ERRORS_SHOWN 5
#define FDS_SPARE    64
#ifndef SCM_TIMESTAMPNS /* glibc's headers name only the option; Linux's cmsg is it */
#define SCM_TIMESTAMPNS SO_TIMESTAMPNS
#endif

static const char usage[] =
    "usage: bench-provider-latency --url http://HOST:PORT [options]\n"
    "  --url          turnd's address, or the fake provider's with --direct\n"
    "  --turns M      turns started at once (default 100)\n"
    "  --spread-ms S  start them evenly over S ms instead (default 0): turns started\n"
    "                 together keep their deltas in clumps\n"
    "  --text TEXT    the user's text (default \"timed\"; \"timed:N\" for N deltas)\n"
    "  --deltas N     the stamps each turn must carry (default: N of timed:N, else 200)\n"
    "  --direct API   read the fake provider's stream itself (anthropic or openai):\n"
    "                 the baseline without turnd\n"
    "  --timeout S    seconds the whole run may take (default 120)\n"
    "  --kv FILE      also write the figures as key=value lines to FILE\n"
    "  --dump FILE    write every delta as \"SENT_MS LEAVING_MS READ_MS TURN\" to FILE,\n"
    "                 SENT_MS from the run's start (to see when the slow ones came)\n"
    "  --label TEXT   a title for the report\n"
    "The environment's TURN_TOKEN, when set, is sent to turnd as the bearer token.\n";

enum target { TARGET_TURND, TARGET_ANTHROPIC, TARGET_OPENAI };

struct options {
  const char *url, *text, *kv_path, *label, *dump_path;
  char host[256], port[8];
  enum target target;
  unsigned turns;
  uint64_t deltas;
  unsigned timeout_s;
  unsigned spread_ms; /* the turns' starts are spread over this; 0: all at once */
};

struct bench;

/* A turn, on a connection of its own (never kept alive). */
struct conn {
  struct bench *b;         /* the run it belongs to */
  struct load_conn conn;   /* the turn's connection */
  bool over;               /* conn_end ran: the turn counts as ended */
  struct load_lines lines; /* turnd's NDJSON only: seq, first and end checked */
  char line[LINE_CAP];     /* the current line's first line_len bytes */
  size_t line_len;         /* <= LINE_CAP */
  bool line_long;          /* the current line passed LINE_CAP: its rest is lost */
  uint64_t stamps;         /* stamps read from this turn's stream */
  bool ok;                 /* the turn ended well (set in conn_end) */
};

struct bench {
  const struct options *o;
  struct event_base *base;
  struct event *deadline;
  struct load_client client; /* the turns' connections share it */
  const char *request;       /* borrowed: sent as is on every connection */
  size_t request_len;
  struct conn *conns;    /* o->turns */
  unsigned open;         /* connections not yet DONE */
  uint64_t t_read_ns;    /* when the bytes being fed were read */
  uint64_t t_wire_ns;    /* when they reached our socket (the kernel's stamp) */
  uint64_t *lat_ns;      /* one per stamp, to t_wire_ns; n <= cap */
  uint64_t *read_lat_ns; /* one per stamp, to t_read_ns */
  uint64_t *sent_ns;     /* the stamp of each, for --dump */
  unsigned *turn;        /* the turn of each, for --dump */
  size_t n, cap;         /* of lat_ns, read_lat_ns, sent_ns and turn */
  uint64_t unstamped;    /* reads the kernel gave no stamp for: read time used */
  uint64_t text_events;  /* lines that carried at least one stamp */
  uint64_t coalesced;    /* lines that carried more than one */
  uint64_t negative;     /* stamps later than their bytes' arrival: not one clock? */
  uint64_t long_lines;   /* lines cut at LINE_CAP */
  uint64_t ok, failed;   /* turns */
  unsigned errors_shown; /* failures described on stderr so far */
  uint64_t t_begin_ns;   /* the first connect */
  uint64_t t_end_ns;     /* the last answer's end */
  char buf[READ_BYTES];  /* every read lands here */
};

static void *grow(void *p, size_t size) {
  void *q = realloc(p, size);
  if (q == NULL) {
    fprintf(stderr, "bench-provider-latency: out of memory\n");
    exit(2);
  }
  return q;
}

static void record(struct conn *c, uint64_t sent) {
  struct bench *b = c->b;
  if (b->n == b->cap) {
    b->cap = b->cap > 0 ? b->cap * 2 : 65536;
    b->lat_ns = grow(b->lat_ns, b->cap * sizeof *b->lat_ns);
    b->read_lat_ns = grow(b->read_lat_ns, b->cap * sizeof *b->read_lat_ns);
    b->sent_ns = grow(b->sent_ns, b->cap * sizeof *b->sent_ns);
    b->turn = grow(b->turn, b->cap * sizeof *b->turn);
  }
  b->lat_ns[b->n] = b->t_wire_ns - sent;
  b->read_lat_ns[b->n] = b->t_read_ns - sent;
  b->sent_ns[b->n] = sent;
  b->turn[b->n++] = (unsigned)(c - b->conns);
}

/* Every "t=DIGITS " in line[0..len): a stamp, measured against the read time. */
static void scan_stamps(struct conn *c, const char *line, size_t len) {
  struct bench *b = c->b;
  unsigned found = 0;
  for (size_t i = 0; i + 3 <= len; i++) {
    if (line[i] != 't' || line[i + 1] != '=') continue;
    size_t j = i + 2;
    uint64_t ns = 0;
    while (j < len && j - (i + 2) < STAMP_DIGITS && line[j] >= '0' && line[j] <= '9')
      ns = ns * 10 + (uint64_t)(line[j++] - '0');
    if (j == i + 2 || j >= len || line[j] != ' ') continue;
    found++;
    if (ns > b->t_wire_ns)
      b->negative++;
    else
      record(c, ns);
    i = j;
  }
  c->stamps += found;
  if (found > 0) b->text_events++;
  if (found > 1) b->coalesced++;
}

/* One whole line of the body, without its newline. turnd: only text events carry
 * the model's text; a provider's stream: its data lines. */
static void on_line(struct conn *c, const char *line, size_t len) {
  if (c->b->o->target == TARGET_TURND) {
    static const char text_type[] = "\"type\":\"text\"";
    char *end = memchr(line, '}', len); /* the type comes before any nested object */
    size_t head = end != NULL ? (size_t)(end - line) : len;
    bool is_text = false;
    for (size_t i = 0; i + sizeof text_type - 1 <= head && !is_text; i++)
      is_text = memcmp(line + i, text_type, sizeof text_type - 1) == 0;
    if (!is_text) return;
  } else if (len < 6 || memcmp(line, "data: ", 6) != 0) {
    return;
  }
  scan_stamps(c, line, len);
}

static void on_body(void *ctx, const char *data, size_t len) {
  struct conn *c = ctx;
  if (c->conn.answer.status != 200) return;
  if (c->b->o->target == TARGET_TURND) load_lines_feed(&c->lines, data, len);
  while (len > 0) {
    const char *nl = memchr(data, '\n', len);
    size_t take = nl != NULL ? (size_t)(nl - data) : len;
    size_t room = LINE_CAP - c->line_len;
    if (take > room) c->line_long = true;
    memcpy(c->line + c->line_len, data, take < room ? take : room);
    c->line_len += take < room ? take : room;
    if (nl == NULL) return;
    if (c->line_long) c->b->long_lines++;
    on_line(c, c->line, c->line_len);
    c->line_len = 0;
    c->line_long = false;
    data += take + 1;
    len -= take + 1;
  }
}

/* The turn is over; why == NULL: its answer ended. It went well if the answer
 * was a 200 that ended, the stream passed its checks and every stamp came. */
static void conn_end(struct conn *c, const char *why) {
  struct bench *b = c->b;
  if (c->over) return;
  load_conn_close(&c->conn);
  c->over = true;
  char what[160];
  if (why == NULL && c->conn.answer.status != 200) {
    snprintf(what, sizeof what, "status %d", c->conn.answer.status);
    why = what;
  }
  if (why == NULL && b->o->target == TARGET_TURND) {
    enum load_lines_fault f = load_lines_finish(&c->lines);
    if (f != LOAD_LINES_OK) why = load_lines_strfault(f);
  }
  if (why == NULL && c->stamps != b->o->deltas) {
    snprintf(what, sizeof what, "%llu stamps, want %llu", (unsigned long long)c->stamps,
             (unsigned long long)b->o->deltas);
    why = what;
  }
  c->ok = why == NULL;
  if (c->ok) {
    b->ok++;
  } else {
    b->failed++;
    if (b->errors_shown++ < ERRORS_SHOWN)
      fprintf(stderr, "bench-provider-latency: a turn failed: %s\n", why);
  }
  if (--b->open == 0) {
    b->t_end_ns = load_conn_now_ns();
    event_base_loopbreak(b->base);
  }
}

/* recv() into buf that also sets b->t_read_ns and b->t_wire_ns. The kernel
 * stamps received bytes on CLOCK_REALTIME (TCP gives the stamp of the last
 * segment read: never early for any byte in it); the deltas' stamps are on
 * CLOCK_MONOTONIC, so the receive stamp is moved by how long ago it was on the
 * real clock. Real is read before monotonic: any error makes a figure larger. */
static ssize_t receive(void *ctx, int fd, char *buf, size_t cap) {
  struct bench *b = ((struct conn *)ctx)->b;
  char control[CMSG_SPACE(sizeof(struct timespec))];
  struct iovec iov = {.iov_base = buf, .iov_len = cap};
  struct msghdr msg = {.msg_iov = &iov,
                       .msg_iovlen = 1,
                       .msg_control = control,
                       .msg_controllen = sizeof control};
  ssize_t n = recvmsg(fd, &msg, 0);
  struct timespec real;
  clock_gettime(CLOCK_REALTIME, &real);
  b->t_read_ns = load_conn_now_ns(); /* every stamp in these bytes arrived by now */
  b->t_wire_ns = b->t_read_ns;
  if (n <= 0) return n;
  for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm != NULL; cm = CMSG_NXTHDR(&msg, cm)) {
    if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_TIMESTAMPNS) continue;
    struct timespec wire;
    memcpy(&wire, CMSG_DATA(cm), sizeof wire);
    int64_t ago_ns = ((int64_t)real.tv_sec - (int64_t)wire.tv_sec) * 1000000000 +
                     ((int64_t)real.tv_nsec - (int64_t)wire.tv_nsec);
    if (ago_ns >= 0 && (uint64_t)ago_ns <= b->t_read_ns) {
      b->t_wire_ns = b->t_read_ns - (uint64_t)ago_ns;
      return n;
    }
  }
  b->unstamped++;
  return n;
}

/* A new connection: without the kernel's stamps every figure falls back to the
 * read time. */
static void on_opened(void *ctx, int fd) {
  (void)ctx;
  int on = 1;
  (void)setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
}

static void on_conn_end(void *ctx, enum load_conn_end e) {
  if (e == LOAD_CONN_E_NOMEM) {
    fprintf(stderr, "bench-provider-latency: out of memory\n");
    exit(2);
  }
  conn_end(ctx, e == LOAD_CONN_DONE ? NULL : load_conn_strend(e));
}

static const struct load_conn_ops conn_ops = {
    .opened = on_opened, .read = receive, .body = on_body, .end = on_conn_end};

static void conn_start(struct conn *c) {
  struct bench *b = c->b;
  if (b->o->target == TARGET_TURND && load_lines_init(&c->lines, false) != 0) {
    fprintf(stderr, "bench-provider-latency: out of memory\n");
    exit(2);
  }
  load_conn_send(&c->conn, b->request, b->request_len);
}

static void on_start(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  conn_start(arg);
}

static void on_deadline(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  struct bench *b = arg;
  for (unsigned i = 0; i < b->o->turns; i++)
    conn_end(&b->conns[i], "the run took longer than --timeout");
}

/* ------------------------------------------------------------- options */

/* The N of "timed:N", or 200 (the fake's default). */
static uint64_t deltas_of(const char *text) {
  const char *p = strstr(text, "timed:");
  uint64_t n;
  char digits[16];
  if (p == NULL) return 200;
  size_t len = strspn(p + 6, "0123456789");
  if (len == 0 || len >= sizeof digits) return 200;
  memcpy(digits, p + 6, len);
  digits[len] = '\0';
  return load_args_u64(digits, 1, 100000, &n) ? n : 200;
}

static bool parse_options(struct options *o, int argc, char **argv) {
  memset(o, 0, sizeof *o);
  o->text = "timed";
  o->turns = 100;
  o->timeout_s = 120;
  o->target = TARGET_TURND;
  for (int i = 1; i < argc; i += 2) { /* each option takes a value */
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    uint64_t n;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage, stdout);
      exit(0);
    } else if (v == NULL) {
      fprintf(stderr, "bench-provider-latency: %s needs a value\n", a);
      return false;
    } else if (strcmp(a, "--url") == 0) {
      o->url = v;
    } else if (strcmp(a, "--text") == 0) {
      o->text = v;
    } else if (strcmp(a, "--kv") == 0) {
      o->kv_path = v;
    } else if (strcmp(a, "--dump") == 0) {
      o->dump_path = v;
    } else if (strcmp(a, "--label") == 0) {
      o->label = v;
    } else if (strcmp(a, "--direct") == 0 && strcmp(v, "anthropic") == 0) {
      o->target = TARGET_ANTHROPIC;
    } else if (strcmp(a, "--direct") == 0 && strcmp(v, "openai") == 0) {
      o->target = TARGET_OPENAI;
    } else if (strcmp(a, "--turns") == 0 && load_args_u64(v, 1, 100000, &n)) {
      o->turns = (unsigned)n;
    } else if (strcmp(a, "--deltas") == 0 && load_args_u64(v, 1, 100000, &n)) {
      o->deltas = n;
    } else if (strcmp(a, "--spread-ms") == 0 && load_args_u64(v, 0, 60000, &n)) {
      o->spread_ms = (unsigned)n;
    } else if (strcmp(a, "--timeout") == 0 && load_args_u64(v, 1, 86400, &n)) {
      o->timeout_s = (unsigned)n;
    } else {
      fprintf(stderr, "bench-provider-latency: bad option or value: %s %s\n%s", a, v,
              usage);
      return false;
    }
  }
  if (o->url == NULL ||
      !load_args_url(o->url, o->host, sizeof o->host, o->port, sizeof o->port)) {
    fprintf(stderr, "bench-provider-latency: --url must be http://HOST[:PORT]\n%s",
            usage);
    return false;
  }
  if (strchr(o->text, '"') != NULL || strchr(o->text, '\\') != NULL) {
    fprintf(stderr, "bench-provider-latency: --text may not hold \" or \\\n");
    return false;
  }
  if (o->deltas == 0) o->deltas = deltas_of(o->text);
  return true;
}

/* The request every connection sends. Returns owned, or NULL when out of memory. */
static char *build_request(const struct options *o, size_t *len) {
  char body[1024], turnd_auth[256] = "";
  const char *path, *headers;
  int blen;
  const char *token = getenv("TURN_TOKEN"); /* a paired device's, as turn reads it */
  if (token != NULL && strlen(token) < 128)
    snprintf(turnd_auth, sizeof turnd_auth, "Authorization: Bearer %s\r\n", token);
  switch (o->target) {
  case TARGET_ANTHROPIC:
    path = "/v1/messages";
    headers = "x-api-key: test-key\r\nanthropic-version: 2023-06-01\r\n";
    blen = snprintf(body, sizeof body,
                    "{\"model\":\"fake-model\",\"max_tokens\":4096,\"stream\":true,"
                    "\"messages\":[{\"role\":\"user\",\"content\":\"%s\"}]}",
                    o->text);
    break;
  case TARGET_OPENAI:
    path = "/v1/chat/completions";
    headers = "Authorization: Bearer test-key\r\n";
    blen = snprintf(body, sizeof body,
                    "{\"model\":\"fake-model\",\"stream\":true,\"stream_options\":"
                    "{\"include_usage\":true},\"messages\":[{\"role\":\"user\","
                    "\"content\":\"%s\"}]}",
                    o->text);
    break;
  case TARGET_TURND:
  default:
    path = "/api/turns";
    headers = turnd_auth;
    blen = snprintf(body, sizeof body, "{\"text\":\"%s\"}", o->text);
    break;
  }
  if (blen < 0 || (size_t)blen >= sizeof body) return NULL;
  size_t cap = (size_t)blen + 1024;
  char *req = malloc(cap);
  if (req == NULL) return NULL;
  int n = snprintf(req, cap,
                   "POST %s HTTP/1.1\r\nHost: %s:%s\r\nContent-Type: application/json\r\n"
                   "%sContent-Length: %d\r\nConnection: close\r\n\r\n%s",
                   path, o->host, o->port, headers, blen, body);
  if (n < 0 || (size_t)n >= cap) {
    free(req);
    return NULL;
  }
  *len = (size_t)n;
  return req;
}

/* -------------------------------------------------------------- report */

#define WITHIN_NS 1000000u /* the target's bound, 1 ms: the share within it */

struct figures {
  size_t n;                              /* deltas they are of */
  double p50, p90, p99, p999, max, mean; /* ms */
  double within_pct;                     /* of the deltas, those under WITHIN_NS */
};

/* Sorts v[0..n) and fills *f from it. */
static void figures_of(uint64_t *v, size_t n, struct figures *f) {
  load_stats_sort(v, n);
  double sum = 0;
  size_t within = 0;
  for (size_t i = 0; i < n; i++) {
    sum += (double)v[i];
    if (v[i] < WITHIN_NS) within++;
  }
  f->n = n;
  f->within_pct = n > 0 ? 100.0 * (double)within / (double)n : 0;
  f->p50 = load_stats_pct_ms(v, n, 50);
  f->p90 = load_stats_pct_ms(v, n, 90);
  f->p99 = load_stats_pct_ms(v, n, 99);
  f->p999 = load_stats_pct_ms(v, n, 99.9);
  f->max = load_stats_pct_ms(v, n, 100);
  f->mean = n > 0 ? sum / (double)n / 1e6 : 0;
}

/* One way of timing the deltas: over all of them, and mid-run. */
struct timing {
  struct figures all; /* every delta */
  struct figures mid; /* the deltas sent while every turn was streaming (after
                       * the last turn's first delta, before the first turn's
                       * last one), so turns starting or ending (sessions made,
                       * messages stored) are not in it; n is 0 when there is
                       * no such time */
};

/* Both timings: *wire to the kernel's receive stamp, *read to our read. Sorts
 * b->lat_ns and b->read_lat_ns, after which they no longer match b->sent_ns. */
static void compute(struct bench *b, struct timing *wire, struct timing *read) {
  unsigned turns = b->o->turns;
  size_t room = b->n > 0 ? b->n : 1;
  uint64_t *first = calloc(turns, sizeof *first), *last = calloc(turns, sizeof *last);
  uint64_t *wire_mid = malloc(room * sizeof *wire_mid);
  uint64_t *read_mid = malloc(room * sizeof *read_mid);
  if (first == NULL || last == NULL || wire_mid == NULL || read_mid == NULL) {
    fprintf(stderr, "bench-provider-latency: out of memory\n");
    exit(2);
  }
  for (size_t i = 0; i < b->n; i++) {
    unsigned t = b->turn[i];
    if (first[t] == 0 || b->sent_ns[i] < first[t]) first[t] = b->sent_ns[i];
    if (b->sent_ns[i] > last[t]) last[t] = b->sent_ns[i];
  }
  uint64_t from = 0, to = UINT64_MAX;
  for (unsigned t = 0; t < turns; t++) {
    if (first[t] > from) from = first[t];
    if (last[t] < to) to = last[t];
  }
  size_t n = 0;
  for (size_t i = 0; i < b->n; i++) {
    if (b->sent_ns[i] <= from || b->sent_ns[i] >= to) continue;
    wire_mid[n] = b->lat_ns[i];
    read_mid[n++] = b->read_lat_ns[i];
  }
  figures_of(wire_mid, n, &wire->mid);
  figures_of(read_mid, n, &read->mid);
  figures_of(b->lat_ns, b->n, &wire->all);
  figures_of(b->read_lat_ns, b->n, &read->all);
  free(first);
  free(last);
  free(wire_mid);
  free(read_mid);
}

static const char *target_name(enum target t) {
  return t == TARGET_ANTHROPIC ? "the fake provider directly (Anthropic stream)"
         : t == TARGET_OPENAI  ? "the fake provider directly (OpenAI stream)"
                               : "turnd";
}

static void print_figures(const char *name, const struct figures *f) {
  printf("%-12s p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, p99.9 %.3f ms, max %.3f ms, mean "
         "%.3f ms (%zu deltas, %.1f %% under %u ms)\n",
         name, f->p50, f->p90, f->p99, f->p999, f->max, f->mean, f->n, f->within_pct,
         WITHIN_NS / 1000000u);
}

static void report(const struct bench *b, const struct timing *wire,
                   const struct timing *read) {
  const struct options *o = b->o;
  if (o->label != NULL) printf("== %s\n", o->label);
  char when[48] = "at once";
  if (o->spread_ms > 0) snprintf(when, sizeof when, "started over %u ms", o->spread_ms);
  printf("turns        %u %s, from %s: %llu ended well, %llu failed, %.2f s\n", o->turns,
         when, target_name(o->target), (unsigned long long)b->ok,
         (unsigned long long)b->failed, (double)(b->t_end_ns - b->t_begin_ns) / 1e9);
  printf("stamps       %zu measured (%llu per turn asked), in %llu lines; %llu lines "
         "held more than one (coalesced)\n",
         b->n, (unsigned long long)o->deltas, (unsigned long long)b->text_events,
         (unsigned long long)b->coalesced);
  if (b->negative > 0 || b->long_lines > 0)
    printf(
        "  dropped    %llu stamps later than their arrival, %llu lines over %u bytes\n",
        (unsigned long long)b->negative, (unsigned long long)b->long_lines, LINE_CAP);
  if (b->unstamped > 0)
    printf("  unstamped  %llu reads had no kernel stamp: their read time stands in\n",
           (unsigned long long)b->unstamped);
  printf("leaving      the provider writes a delta -> its line reaches our socket\n");
  print_figures("  all", &wire->all);
  print_figures("  mid-run", &wire->mid);
  printf("read here    the provider writes a delta -> we read its line\n");
  print_figures("  all", &read->all);
  print_figures("  mid-run", &read->mid);
  printf("             (mid-run: deltas sent while every turn streamed; turns starting "
         "and ending are left out)\n");
}

static int write_dump(const struct bench *b) {
  FILE *out = fopen(b->o->dump_path, "w");
  if (out == NULL) {
    fprintf(stderr, "bench-provider-latency: %s: %s\n", b->o->dump_path, strerror(errno));
    return -1;
  }
  for (size_t i = 0; i < b->n; i++)
    fprintf(out, "%.3f %.3f %.3f %u\n",
            ((double)b->sent_ns[i] - (double)b->t_begin_ns) / 1e6,
            (double)b->lat_ns[i] / 1e6, (double)b->read_lat_ns[i] / 1e6, b->turn[i]);
  return fclose(out) == 0 ? 0 : -1;
}

static void write_timing(FILE *out, const char *prefix, const struct timing *t) {
  fprintf(out, "%sstamps=%zu\n", prefix, t->all.n);
  fprintf(out, "%sp50_ms=%.3f\n%sp90_ms=%.3f\n%sp99_ms=%.3f\n%sp999_ms=%.3f\n", prefix,
          t->all.p50, prefix, t->all.p90, prefix, t->all.p99, prefix, t->all.p999);
  fprintf(out, "%smax_ms=%.3f\n%smean_ms=%.3f\n%swithin_1ms_pct=%.1f\n", prefix,
          t->all.max, prefix, t->all.mean, prefix, t->all.within_pct);
  fprintf(out, "%smid_stamps=%zu\n%smid_p50_ms=%.3f\n%smid_p99_ms=%.3f\n", prefix,
          t->mid.n, prefix, t->mid.p50, prefix, t->mid.p99);
  fprintf(out, "%smid_max_ms=%.3f\n", prefix, t->mid.max);
}

/* The figures to the kernel's stamp unprefixed, those to our read as read_*. */
static int write_kv(const struct bench *b, const struct timing *wire,
                    const struct timing *read) {
  FILE *out = fopen(b->o->kv_path, "w");
  if (out == NULL) {
    fprintf(stderr, "bench-provider-latency: %s: %s\n", b->o->kv_path, strerror(errno));
    return -1;
  }
  fprintf(out, "turns=%u\nok=%llu\nfailed=%llu\nlines=%llu\ncoalesced=%llu\n",
          b->o->turns, (unsigned long long)b->ok, (unsigned long long)b->failed,
          (unsigned long long)b->text_events, (unsigned long long)b->coalesced);
  fprintf(out, "spread_ms=%u\nunstamped=%llu\n", b->o->spread_ms,
          (unsigned long long)b->unstamped);
  write_timing(out, "", wire);
  write_timing(out, "read_", read);
  return fclose(out) == 0 ? 0 : -1;
}

int main(int argc, char **argv) {
  struct options o;
  if (!parse_options(&o, argc, argv)) return 2;
  struct bench *b = calloc(1, sizeof *b);
  if (b == NULL) return 2;
  b->o = &o;
  if (!load_conn_resolve("bench-provider-latency", o.host, o.port, &b->client.addr,
                         &b->client.addr_len))
    return 2;
  char *req = build_request(&o, &b->request_len);
  b->request = req;
  b->conns = calloc(o.turns, sizeof *b->conns);
  b->base = event_base_new();
  b->client.base = b->base;
  b->client.ops = &conn_ops;
  b->client.buf = b->buf;
  b->client.buf_cap = sizeof b->buf;
  if (b->base != NULL) b->deadline = evtimer_new(b->base, on_deadline, b);
  if (req == NULL || b->conns == NULL || b->base == NULL || b->deadline == NULL) {
    fprintf(stderr, "bench-provider-latency: cannot set the run up\n");
    return 2;
  }
  load_stats_raise_fds((uint64_t)o.turns + FDS_SPARE);
  struct timeval limit = {(time_t)o.timeout_s, 0};
  evtimer_add(b->deadline, &limit);
  b->open = o.turns;
  b->t_begin_ns = load_conn_now_ns();
  for (unsigned i = 0; i < o.turns; i++) {
    b->conns[i].b = b;
    load_conn_init(&b->conns[i].conn, &b->client, &b->conns[i]);
  }
  for (unsigned i = 0; i < o.turns; i++) {
    /* Turn i at i * spread / turns: the fake's streams keep their phase, so
     * their deltas then come evenly instead of in bursts of every turn. */
    uint64_t at_us = (uint64_t)o.spread_ms * 1000u * i / o.turns;
    struct timeval tv = {(time_t)(at_us / 1000000u), (suseconds_t)(at_us % 1000000u)};
    if (at_us == 0)
      conn_start(&b->conns[i]);
    else if (event_base_once(b->base, -1, EV_TIMEOUT, on_start, &b->conns[i], &tv) != 0)
      conn_end(&b->conns[i], "cannot arm the start timer");
  }
  if (b->open > 0) event_base_dispatch(b->base);

  int rv = 0;
  if (o.dump_path != NULL && write_dump(b) != 0) rv = 1; /* before compute sorts */
  struct timing wire, read;
  compute(b, &wire, &read);
  report(b, &wire, &read);
  if (b->failed != 0 || b->ok != o.turns) rv = 1;
  if (o.kv_path != NULL && write_kv(b, &wire, &read) != 0) rv = 1;

  for (unsigned i = 0; i < o.turns; i++) {
    load_conn_close(&b->conns[i].conn);
    load_lines_fini(&b->conns[i].lines);
  }
  event_free(b->deadline);
  event_base_free(b->base);
  free(b->conns);
  free(b->lat_ns);
  free(b->read_lat_ns);
  free(b->sent_ns);
  free(b->turn);
  free(req);
  free(b);
  return rv;
}
