/* fake-provider: a local model provider for turnd's tests. It answers the
 * Anthropic Messages and the OpenAI Chat Completions endpoints with streams shaped
 * like the real ones, the answer chosen by a keyword in the user's text (see
 * README.md). It listens on loopback only, and never logs or echoes a key but in
 * the scenarios that echo one on purpose (keyleak, streamleak). */
#include "provider.h"
#include "scenario.h"
#include "stream.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define BODY_MAX  (16u * 1024u * 1024u) /* bytes of a request body */
#define TIMEOUT_S 600                   /* evhttp's idle limit: outlasts a stall */
#define KEY_MAX   4096                  /* bytes of a conversation's key we keep */

/* How many times a conversation sent the same request. */
struct attempt {
  struct attempt *next;
  char *key;  /* owned: endpoint, message count and first user text */
  unsigned n; /* requests seen with this key */
};

struct fake {
  struct event_base *base;
  struct evhttp *http;
  struct streams streams;   /* the replies being streamed */
  struct attempt *attempts; /* a list: tests send a handful of conversations */
  FILE *log;                /* owned; NULL without --log */
  uint64_t ids;             /* ids handed out so far */
};

/* Counts this request among its conversation's and returns its number, from
 * 1. The key holds the message count, so a retry (the same request again) is a
 * new attempt and the conversation's next turn starts again at 1. Out of
 * memory: 1 every time. */
static unsigned attempt_of(struct fake *f, const char *endpoint, const struct ask *q) {
  char key[KEY_MAX];
  snprintf(key, sizeof key, "%s %zu %s", endpoint, q->n_messages, q->first_text);
  for (struct attempt *a = f->attempts; a != NULL; a = a->next)
    if (strcmp(a->key, key) == 0) return ++a->n;
  struct attempt *a = malloc(sizeof *a);
  char *copy = strdup(key);
  if (a == NULL || copy == NULL) {
    free(a);
    free(copy);
    return 1;
  }
  *a = (struct attempt){f->attempts, copy, 1};
  f->attempts = a;
  return 1;
}

/* One line per request; port is the client's, which tells its connections
 * apart (a client that keeps its connection sends its calls from one port). */
static void log_request(struct fake *f, unsigned port, const char *endpoint,
                        const char *scenario, bool after_tools, unsigned attempt,
                        size_t n_messages, int status) {
  if (f->log == NULL) return;
  fprintf(f->log,
          "%s scenario=%s after_tools=%d attempt=%u messages=%zu status=%d port=%u\n",
          endpoint, scenario, after_tools ? 1 : 0, attempt, n_messages, status, port);
  fflush(f->log); /* a test reads it while we run */
}

static enum refusal refusal_of(enum answer_failure failure) {
  switch (failure) {
  case ANSWER_RATE_LIMITED:
    return REFUSE_RATE_LIMIT;
  case ANSWER_OVERLOADED:
    return REFUSE_OVERLOADED;
  case ANSWER_KEY_REFUSED:
    return REFUSE_AUTH;
  case ANSWER_NO_QUOTA:
    return REFUSE_NO_QUOTA;
  case ANSWER_SERVER_ERROR:
  case ANSWER_STREAMS:
    break;
  }
  return REFUSE_SERVER;
}

/* The retry-after header a failure asks for, if any. */
static void add_retry_after(struct evhttp_request *req, const struct answer *a) {
  char value[64];
  if (a->retry_form == RETRY_SECONDS) {
    snprintf(value, sizeof value, "%ld", a->retry_after_s);
  } else if (a->retry_form == RETRY_DATE) {
    time_t at = time(NULL) + (time_t)a->retry_after_s;
    struct tm tm;
    /* IMF-fixdate; the fake never calls setlocale, so the names are English. */
    if (gmtime_r(&at, &tm) == NULL ||
        strftime(value, sizeof value, "%a, %d %b %Y %H:%M:%S GMT", &tm) == 0)
      return;
  } else {
    return;
  }
  evhttp_add_header(evhttp_request_get_output_headers(req), "retry-after", value);
}

static enum stream_end end_of(enum answer_ending ending) {
  switch (ending) {
  case ENDING_STALL:
  case ENDING_LINGER:
    return STREAM_STALL;
  case ENDING_CUT:
    return STREAM_CUT;
  case ENDING_NORMAL:
  case ENDING_ERROR:
    break;
  }
  return STREAM_END;
}

/* Answers a request that passed the checks: an error or a stream. Returns the
 * status. */
static int answer(struct fake *f, const struct provider *p, struct evhttp_request *req,
                  const struct ask *q, const struct answer *a) {
  if (a->failure != ANSWER_STREAMS) {
    add_retry_after(req, a);
    /* An echo of the key is this fake's one exception to never echoing one. */
    char *echo = a->echo_key ? provider_key_echo(q->key, a->wrap_key) : NULL;
    int status = p->refuse(req, refusal_of(a->failure), echo);
    free(echo);
    return status;
  }
  struct stream *s = stream_new(f->base, req);
  if (s == NULL || p->stream(s, a, q, &f->ids) != 0) {
    stream_discard(s);
    evhttp_send_error(req, 500, NULL);
    return 500;
  }
  if (a->paced) stream_keep_pace(s);
  stream_start(s, &f->streams, end_of(a->ending));
  return 200;
}

static void on_request(struct evhttp_request *req, void *arg) {
  struct fake *f = arg;
  const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
  const char *path = uri != NULL ? evhttp_uri_get_path(uri) : NULL;
  const struct provider *p = NULL;
  if (path != NULL && strcmp(path, anthropic_provider.path) == 0) p = &anthropic_provider;
  if (path != NULL && strcmp(path, openai_provider.path) == 0) p = &openai_provider;
  const char *endpoint = p != NULL ? p->path : "-";
  char *host = NULL; /* evhttp's own */
  ev_uint16_t peer_port = 0;
  evhttp_connection_get_peer(evhttp_request_get_connection(req), &host, &peer_port);
  unsigned port = peer_port;
  if (p == NULL || evhttp_request_get_command(req) != EVHTTP_REQ_POST) {
    /* An unknown path gets Anthropic's shape; nothing checks it. */
    const struct provider *shape = p != NULL ? p : &anthropic_provider;
    int status = shape->refuse(req, p == NULL ? REFUSE_NOT_FOUND : REFUSE_METHOD, NULL);
    log_request(f, port, endpoint, "-", false, 0, 0, status);
    return;
  }

  struct evbuffer *in = evhttp_request_get_input_buffer(req);
  size_t len = evbuffer_get_length(in);
  const char *bytes = (const char *)evbuffer_pullup(in, -1);
  json_error_t jerr;
  /* \u0000 is valid JSON, and a tool's output may hold one. */
  json_t *body = bytes != NULL ? json_loadb(bytes, len, JSON_ALLOW_NUL, &jerr) : NULL;
  struct ask q = {0};
  struct verdict v;
  if (p->check(req, body, &q, &v) != 0) {
    int status = p->refuse(req, v.refusal, v.why);
    log_request(f, port, endpoint, "-", false, 0,
                json_array_size(json_object_get(body, "messages")), status);
    json_decref(body);
    return;
  }
  q.input_tokens = len / 4 + 1; /* about what a tokenizer makes of JSON */
  enum scenario sc = scenario_of(q.text);
  unsigned attempt = attempt_of(f, endpoint, &q);
  struct answer a;
  answer_for(&a, sc, q.text, q.after_tools, attempt);
  int status = answer(f, p, req, &q, &a);
  log_request(f, port, endpoint, scenario_name(sc), q.after_tools, attempt, q.n_messages,
              status);
  json_decref(body); /* q pointed into it; the stream holds copies */
}

/* -------------------------------------------------------------- startup */

static void on_signal(evutil_socket_t sig, short what, void *arg) {
  (void)sig;
  (void)what;
  event_base_loopbreak(arg);
}

static int usage(void) {
  fprintf(stderr, "usage: fake-provider --listen HOST:PORT [--log FILE]\n"
                  "  HOST must be a loopback address; PORT 0 picks a free port.\n");
  return 2;
}

/* Splits "HOST:PORT" ("[::1]:0" too) into host (cap bytes) and *port. */
static int parse_listen(const char *arg, char *host, size_t cap, unsigned *port) {
  const char *colon = strrchr(arg, ':');
  if (colon == NULL || colon == arg) return -1;
  const char *h = arg;
  size_t hlen = (size_t)(colon - arg);
  if (h[0] == '[' && hlen >= 2 && h[hlen - 1] == ']') {
    h++;
    hlen -= 2;
  }
  if (hlen == 0 || hlen >= cap) return -1;
  memcpy(host, h, hlen);
  host[hlen] = '\0';
  char *end;
  errno = 0;
  long p = strtol(colon + 1, &end, 10);
  if (errno != 0 || end == colon + 1 || *end != '\0' || p < 0 || p > 65535) return -1;
  *port = (unsigned)p;
  return 0;
}

/* Prints the listening line for the bound socket, if it is on loopback. */
static int announce(struct evhttp_bound_socket *bound) {
  struct sockaddr_storage ss;
  socklen_t slen = sizeof ss;
  if (getsockname(evhttp_bound_socket_get_fd(bound), (struct sockaddr *)&ss, &slen) != 0)
    return -1;
  char addr[INET6_ADDRSTRLEN];
  unsigned port;
  bool loopback, v6 = ss.ss_family == AF_INET6;
  if (v6) {
    const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)&ss;
    loopback = IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr);
    inet_ntop(AF_INET6, &sin6->sin6_addr, addr, sizeof addr);
    port = ntohs(sin6->sin6_port);
  } else {
    const struct sockaddr_in *sin = (const struct sockaddr_in *)&ss;
    loopback = (ntohl(sin->sin_addr.s_addr) >> 24) == 127;
    inet_ntop(AF_INET, &sin->sin_addr, addr, sizeof addr);
    port = ntohs(sin->sin_port);
  }
  if (!loopback) {
    fprintf(stderr, "fake-provider: %s is not a loopback address\n", addr);
    return -1;
  }
  printf(v6 ? "listening on http://[%s]:%u\n" : "listening on http://%s:%u\n", addr,
         port);
  fflush(stdout);
  return 0;
}

static void fake_fini(struct fake *f) {
  streams_fini(&f->streams); /* before evhttp_free frees the connections */
  if (f->http != NULL) evhttp_free(f->http);
  while (f->attempts != NULL) {
    struct attempt *a = f->attempts;
    f->attempts = a->next;
    free(a->key);
    free(a);
  }
  if (f->log != NULL) fclose(f->log);
}

int main(int argc, char **argv) {
  const char *listen_arg = NULL, *log_path = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc)
      listen_arg = argv[++i];
    else if (strcmp(argv[i], "--log") == 0 && i + 1 < argc)
      log_path = argv[++i];
    else
      return usage();
  }
  char host[256];
  unsigned port;
  if (listen_arg == NULL || parse_listen(listen_arg, host, sizeof host, &port) != 0)
    return usage();

  /* A client that leaves mid-stream must not kill us on the next write. */
  signal(SIGPIPE, SIG_IGN);
  struct fake f = {0};
  if (log_path != NULL && (f.log = fopen(log_path, "a")) == NULL) {
    fprintf(stderr, "fake-provider: cannot open %s: %s\n", log_path, strerror(errno));
    return 1;
  }
  struct event *sigs[2] = {NULL, NULL};
  struct evhttp_bound_socket *bound = NULL;
  int rv = 1;
  /* Timers to the microsecond (a timerfd) rather than epoll's millisecond: a
   * paced stream's events go out on their own schedule, not with every other
   * stream's due within the same millisecond. */
  struct event_config *cfg = event_config_new();
  if (cfg != NULL) {
    event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER);
    f.base = event_base_new_with_config(cfg);
    event_config_free(cfg);
  }
  if (f.base == NULL || (f.http = evhttp_new(f.base)) == NULL ||
      streams_init(&f.streams, f.base) != 0) {
    fprintf(stderr, "fake-provider: out of memory\n");
    goto out;
  }
  evhttp_set_max_body_size(f.http, BODY_MAX);
  evhttp_set_timeout(f.http, TIMEOUT_S);
  evhttp_set_gencb(f.http, on_request, &f);
  bound = evhttp_bind_socket_with_handle(f.http, host, (ev_uint16_t)port);
  if (bound == NULL) {
    fprintf(stderr, "fake-provider: cannot listen on %s\n", listen_arg);
    goto out;
  }
  sigs[0] = evsignal_new(f.base, SIGTERM, on_signal, f.base);
  sigs[1] = evsignal_new(f.base, SIGINT, on_signal, f.base);
  if (sigs[0] == NULL || sigs[1] == NULL || event_add(sigs[0], NULL) != 0 ||
      event_add(sigs[1], NULL) != 0 || announce(bound) != 0)
    goto out;
  rv = event_base_dispatch(f.base) < 0 ? 1 : 0;
out:
  for (int i = 0; i < 2; i++)
    if (sigs[i] != NULL) event_free(sigs[i]);
  fake_fini(&f);
  if (f.base != NULL) event_base_free(f.base);
  return rv;
}
