/* Model calls on libcurl's multi-socket interface (see model_http.h). libcurl
 * says which sockets to watch and when its timer is due; libevent watches them
 * and hands the readiness back with curl_multi_socket_action. Finished
 * transfers are collected after each action.
 *
 * A call's life:
 *   STREAMING --stream's last event (stop)--> DRAINING --answer ends--> freed,
 *     its connection kept by libcurl (DRAIN_MAX_BYTES or DRAIN_LIMIT: cut)
 *   STREAMING --answer ends or fails--> its last event --> freed
 *   STREAMING --model_call_abort--> torn down at once (outside libcurl's
 *   callbacks) or, from inside one, when libcurl returns: freed, no event
 *
 * A call keeps a copy of its key, wiped when it is freed, for one purpose: to
 * take it out of the error messages it hands on (without_key). */
#include "model_http.h"

#include "loop_prio.h"

#include <curl/curl.h>
#include <event2/event.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define SSE_EVENT_MAX  (1u << 20)  /* bytes of one server-sent event */
#define ERROR_BODY_MAX (16u << 10) /* bytes of an error answer kept for its message */

/* What stands for the key in an error message that held it. */
#define KEY_REDACTED "[key]"
/* A key's beginning this long or longer at the very end of a message is taken
 * out too: the provider's message is cut at 300 bytes, which can cut an echoed
 * key in two. A shorter piece is no secret (it is at most the vendor's public
 * prefix, "sk-ant-"), and matching it would eat ordinary words. For the same
 * reason a whole key shorter than this (a local server's placeholder, such as
 * "ollama" or "x") is taken out only where it stands as a word of its own: every
 * "x" inside other words would make the message unreadable and hide nothing. */
#define KEY_TAIL_MIN 8
/* After a stream's last event only the end of its answer should be left (the
 * last chunk of a chunked answer): it is read and dropped, so that over HTTP/1.1
 * libcurl keeps the connection for the next call, which then needs no new one
 * (nor, over TLS, a new handshake); an answer left unread would close it. (Over
 * HTTP/2 a stream ends without its connection either way.) A server that sends
 * more than this, or does not end its answer within DRAIN_LIMIT, has the
 * answer cut instead. */
#define DRAIN_MAX_BYTES (16u << 10)
static const struct timeval DRAIN_LIMIT = {1, 0};
/* The longest wait a throttled call is retried after, in seconds. Per-minute
 * rate limits, the usual throttle, reset well within it, and someone watching
 * the turn can sit through it. A longer retry-after (a daily quota spent, a
 * maintenance window) fails the call at once, saying how long: a retry before
 * then would only be refused again, and a turn held open for hours helps nobody. */
#define RETRY_AFTER_MAX_S 300

struct model_http {
  struct event_base *base;
  CURLM *multi;
  struct event *timer;      /* libcurl's timeout */
  struct model_call *calls; /* every call in flight */
  size_t waiting;           /* calls started inside libcurl, not yet handed to it */
  size_t aborted;           /* calls aborted inside libcurl, not yet freed */
  int in_curl;              /* > 0 while libcurl runs our callbacks */
};

struct model_call {
  struct model_http *mh;
  struct model_call *next, *prev;
  CURL *easy;
  struct curl_slist *headers; /* one holds the key: wiped when freed */
  char *body;
  char *key; /* the API key, for without_key; NULL: none. Wiped when freed */
  size_t key_len;
  model_call_cb *cb;
  void *ctx;
  struct sse *sse;
  struct provider_stream *stream;
  long status;        /* the answer's status, once its headers came */
  double retry_after; /* seconds from retry-after, or -1 */
  char *err_body;     /* a non-2xx answer's first bytes */
  size_t err_len;
  bool added;     /* the easy handle is in the multi */
  bool waiting;   /* started inside libcurl's callbacks: add_waiting hands it over */
  bool content;   /* text, reasoning or a tool call was handed out */
  bool over;      /* the last event was handed out */
  bool draining;  /* over with MODEL_EV_STOP: the answer's end is read and dropped */
  size_t drained; /* bytes read since */
  bool aborted;   /* the owner is gone: no more events; freed when libcurl returns
                     (counted in mh->aborted) */
  char curl_err[CURL_ERROR_SIZE];
  struct event *stall;        /* fires once no byte moved for quiet_limit() */
  struct timeval reply_after; /* until the reply's content begins */
  struct timeval stall_after; /* from then on */
  curl_off_t uploaded;        /* bytes of the request sent so far */
};

/* ------------------------------------------------------------- the calls */

/* Frees a string that held a secret, zeroed first. Accepts NULL. */
static void secret_free(char *s) {
  if (s == NULL) return;
  sodium_memzero(s, strlen(s));
  free(s);
}

static void call_free(struct model_call *c) {
  struct model_http *mh = c->mh;
  if (c->waiting) mh->waiting--;
  if (c->aborted) mh->aborted--;
  if (c->prev != NULL)
    c->prev->next = c->next;
  else
    mh->calls = c->next;
  if (c->next != NULL) c->next->prev = c->prev;
  if (c->easy != NULL) {
    if (c->added) curl_multi_remove_handle(mh->multi, c->easy);
    curl_easy_cleanup(c->easy);
  }
  for (struct curl_slist *h = c->headers; h != NULL; h = h->next)
    sodium_memzero(h->data, strlen(h->data)); /* the auth header among them */
  curl_slist_free_all(c->headers);
  secret_free(c->key);
  sse_free(c->sse);
  provider_stream_free(c->stream);
  if (c->stall != NULL) event_free(c->stall);
  free(c->body);
  free(c->err_body);
  free(c);
}

/* Whether text[at] is part of a word, as a key's letters are (ASCII: the
 * locale does not matter). */
static bool is_word_byte(const char *text, size_t len, size_t at) {
  if (at >= len) return false;
  char b = text[at];
  return (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') ||
         b == '-' || b == '_';
}

/* How far a copy of the key starting at text[at] goes: its bytes in order, and
 * for a key of KEY_TAIL_MIN bytes or more, spaces between them. The message was
 * made safe before it gets here, each control character a space, so a key a
 * server or proxy broke with a line break reads "sk-ant-ap  i03-...". Sets
 * *matched to the key's bytes found (0 when text[at] does not start the key). */
static size_t key_span(const struct model_call *c, const char *text, size_t len,
                       size_t at, size_t *matched) {
  size_t k = 0, end = at;
  bool spaced = c->key_len >= KEY_TAIL_MIN;
  for (size_t i = at; i < len && k < c->key_len; i++) {
    if (text[i] == c->key[k]) {
      k++;
      end = i + 1;
    } else if (!(spaced && k > 0 && text[i] == ' ')) {
      break;
    }
  }
  *matched = k;
  return end - at;
}

/* The bytes of text[at..) to replace: a whole copy of the key (for a short key,
 * only where no word goes on around it: KEY_TAIL_MIN), or a beginning of the key
 * of KEY_TAIL_MIN bytes or more that ends the text. 0: none. */
static size_t key_copy(const struct model_call *c, const char *text, size_t len,
                       size_t at) {
  size_t matched;
  size_t span = key_span(c, text, len, at, &matched);
  if (matched == c->key_len) {
    if (c->key_len >= KEY_TAIL_MIN) return span;
    bool alone = (at == 0 || !is_word_byte(text, len, at - 1)) &&
                 !is_word_byte(text, len, at + span);
    return alone ? span : 0;
  }
  return matched >= KEY_TAIL_MIN && at + span == len ? span : 0;
}

/* text[0..len) with every copy of the call's key replaced by KEY_REDACTED, and
 * a beginning of the key that ends it too (KEY_TAIL_MIN). A server or a proxy
 * may echo the key in its error ("invalid key: sk-..."), and an error's text
 * goes to every client and into the store. Owned, *out_len bytes and a NUL;
 * NULL when out of memory. */
static char *without_key(const struct model_call *c, const char *text, size_t len,
                         size_t *out_len) {
  static const char redacted[] = KEY_REDACTED;
  size_t mark = sizeof redacted - 1;
  /* Each copy takes key_len >= 1 bytes, and the tail at least one more. */
  char *out = malloc(len + (len / c->key_len + 1) * mark + 1);
  if (out == NULL) return NULL;
  size_t n = 0;
  for (size_t i = 0; i < len;) {
    size_t span = key_copy(c, text, len, i);
    if (span > 0) {
      memcpy(out + n, redacted, mark);
      n += mark;
      i += span;
    } else {
      out[n++] = text[i++];
    }
  }
  out[n] = '\0';
  *out_len = n;
  return out;
}

/* How long the call may stay silent now. Before the reply's content begins a
 * model may think unseen (OpenAI's reasoning models send nothing meanwhile) or
 * read a long prompt (a local server on a CPU): reply_after. Once it began,
 * silence is a stall: stall_after (Anthropic pings meanwhile). */
static const struct timeval *quiet_limit(const struct model_call *c) {
  return c->content ? &c->stall_after : &c->reply_after;
}

/* Bytes came: the stall timer starts over (not while draining: DRAIN_LIMIT
 * holds from the last event). */
static void heard_from(struct model_call *c) {
  if (!c->draining) evtimer_add(c->stall, quiet_limit(c));
}

/* Hands ev to the owner, unless it is gone or the call is over. An error's
 * text may be the provider's own words, so the key is taken out of it. */
static void deliver(struct model_call *c, const struct model_event *ev) {
  if (c->aborted || c->over) return;
  struct model_event copy = *ev;
  char *clean = NULL;
  if (ev->kind == MODEL_EV_ERROR && c->key != NULL && ev->text != NULL) {
    clean = without_key(c, ev->text, ev->len, &copy.len);
    copy.text = clean != NULL ? clean : "the model answered with an error";
    if (clean == NULL) copy.len = strlen(copy.text);
  }
  if (ev->kind == MODEL_EV_ERROR && ev->throttled && c->content) {
    copy.throttled = false; /* a retry would say again what was said */
    copy.retry_after_s = -1;
  }
  if (!c->content && (ev->kind == MODEL_EV_TEXT || ev->kind == MODEL_EV_REASONING ||
                      ev->kind == MODEL_EV_TOOL_START)) {
    c->content = true;
    heard_from(c); /* the stall limit applies from here */
  }
  if (ev->kind == MODEL_EV_STOP || ev->kind == MODEL_EV_ERROR) c->over = true;
  if (ev->kind == MODEL_EV_STOP) {
    c->draining = true;
    evtimer_add(c->stall, &DRAIN_LIMIT);
  }
  c->cb(c->ctx, &copy);
  free(clean);
}

static void fail(struct model_call *c, const char *message, bool throttled,
                 double retry_after) {
  struct model_event ev;
  memset(&ev, 0, sizeof ev);
  ev.kind = MODEL_EV_ERROR;
  ev.text = message;
  ev.len = strlen(message);
  ev.throttled = throttled;
  ev.retry_after_s = throttled ? retry_after : -1;
  deliver(c, &ev);
}

static void on_model_event(void *ctx, const struct model_event *ev) {
  deliver(ctx, ev);
}

/* The call fails for a reason of turnd's own, outside libcurl's callbacks, and
 * is freed. Counted as inside libcurl meanwhile: the owner's callback may abort
 * c (then c stays until here) or start another call (then it waits). */
static void fail_and_free(struct model_call *c, const char *message) {
  c->mh->in_curl++;
  fail(c, message, false, -1);
  c->mh->in_curl--;
  call_free(c);
}

static void on_sse_event(void *ctx, const char *event, const char *data, size_t len) {
  struct model_call *c = ctx;
  provider_stream_event(c->stream, event, data, len);
}

static bool status_ok(long status) {
  return status >= 200 && status < 300;
}

/* CURLOPT_XFERINFOFUNCTION: while a long request goes up, the server says
 * nothing, and is not stalled for that. */
static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow,
                       curl_off_t ultotal, curl_off_t ulnow) {
  (void)dltotal;
  (void)dlnow;
  (void)ultotal;
  struct model_call *c = arg;
  if (ulnow > c->uploaded) {
    c->uploaded = ulnow;
    heard_from(c);
  }
  return 0;
}

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *arg) {
  struct model_call *c = arg;
  size_t len = size * nmemb;
  if (c->aborted) return 0; /* the owner is gone: libcurl stops the transfer */
  if (c->draining) {
    c->drained += len;
    return c->drained <= DRAIN_MAX_BYTES ? len : 0;
  }
  heard_from(c);
  if (c->status == 0) curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &c->status);
  if (!status_ok(c->status)) {
    /* An error answer: keep its start for the message, drop the rest. */
    size_t room = ERROR_BODY_MAX - c->err_len;
    size_t take = len < room ? len : room;
    if (take > 0) {
      if (c->err_body == NULL && (c->err_body = malloc(ERROR_BODY_MAX + 1)) == NULL)
        return len;
      memcpy(c->err_body + c->err_len, ptr, take);
      c->err_len += take;
      c->err_body[c->err_len] = '\0';
    }
    return len;
  }
  if (sse_feed(c->sse, ptr, len) != 0)
    fail(c, "the model's stream sent an event too large to read", false, -1);
  /* After an error nothing more is read; after the last event, the rest of this
   * piece was read (and its events dropped), and the answer's end is drained. */
  return c->aborted || (c->over && !c->draining) ? 0 : len;
}

/* delay-seconds (digits; a fraction is let in), or -1 when text is not that. */
static double delay_seconds(const char *text) {
  double s = 0;
  const char *p = text;
  for (; *p >= '0' && *p <= '9'; p++)
    s = s * 10 + (*p - '0');
  if (*p == '.')
    for (double unit = 0.1; *++p >= '0' && *p <= '9'; unit /= 10)
      s += (*p - '0') * unit;
  return p > text && *p == '\0' ? s : -1;
}

/* The seconds retry-after asks to wait, as it says them: delay-seconds, or an
 * HTTP-date less the time now (0 once it is past). -1 when it says neither.
 * However long, the wait is kept: finished() decides what a long one means. */
static double parse_retry_after(const char *value, size_t len) {
  char text[64];
  while (len > 0 && (*value == ' ' || *value == '\t')) {
    value++;
    len--;
  }
  while (len > 0 &&
         (value[len - 1] == '\r' || value[len - 1] == '\n' || value[len - 1] == ' '))
    len--;
  if (len == 0 || len >= sizeof text) return -1;
  memcpy(text, value, len);
  text[len] = '\0';
  if (text[0] >= '0' && text[0] <= '9') return delay_seconds(text);
  time_t at = curl_getdate(text, NULL);
  if (at == -1) return -1;
  time_t now = time(NULL);
  return at > now ? difftime(at, now) : 0;
}

static size_t on_header(char *buffer, size_t size, size_t nitems, void *arg) {
  struct model_call *c = arg;
  size_t len = size * nitems;
  heard_from(c);
  static const char name[] = "retry-after:";
  if (len > sizeof name - 1 && strncasecmp(buffer, name, sizeof name - 1) == 0)
    c->retry_after = parse_retry_after(buffer + sizeof name - 1, len - (sizeof name - 1));
  return len;
}

/* A non-2xx answer: its last event says the provider's message. 429, 503 and
 * 529 are throttles, unless the body says no wait will help, or retry-after
 * asks for more than RETRY_AFTER_MAX_S: then the call fails at once (and says
 * how long the provider wants). */
static void refused(struct model_call *c) {
  char *msg = provider_error_message(c->status, c->err_body, c->err_len);
  /* The provider's own words get the status before them: "Not found" alone
   * does not tell an owner that the base URL lacks its /v1. (Before, not after:
   * a message cut inside an echoed key must still end with that key's part,
   * which is how without_key finds it.) */
  char fallback[64], with_status[400];
  snprintf(fallback, sizeof fallback, "the provider answered with status %ld", c->status);
  if (msg != NULL && strcmp(msg, fallback) != 0) {
    snprintf(with_status, sizeof with_status, "HTTP %ld: %s", c->status, msg);
    free(msg);
    msg = strdup(with_status);
  }
  const char *said = msg != NULL ? msg : "the model answered with an error";
  bool throttled = (c->status == 429 || c->status == 503 || c->status == 529) &&
                   !provider_error_is_lasting(c->err_body, c->err_len);
  if (throttled && c->retry_after > RETRY_AFTER_MAX_S) {
    char text[1024];
    snprintf(text, sizeof text,
             "the provider asks for a wait of %.0f s before a retry: %s", c->retry_after,
             said);
    fail(c, text, false, -1);
  } else {
    fail(c, said, throttled, c->retry_after);
  }
  free(msg);
}

/* The transfer is over: the call's last event, from how it ended. */
static void finished(struct model_call *c, CURLcode result) {
  if (c->status == 0) curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &c->status);
  if (c->over || c->aborted) return;
  if (result != CURLE_OK && c->status == 0) {
    char msg[200];
    snprintf(msg, sizeof msg, "cannot reach the model: %s", curl_easy_strerror(result));
    fail(c, msg, false, -1);
  } else if (!status_ok(c->status)) {
    refused(c);
  } else if (result != CURLE_OK) {
    char msg[200];
    snprintf(msg, sizeof msg, "the model's stream broke off: %s",
             curl_easy_strerror(result));
    fail(c, msg, false, -1);
  } else {
    sse_finish(c->sse);
    provider_stream_finish(c->stream); /* an early end is an error there */
  }
}

/* Collects the transfers libcurl has finished. */
static void reap(struct model_http *mh) {
  CURLMsg *msg;
  int left;
  while ((msg = curl_multi_info_read(mh->multi, &left)) != NULL) {
    if (msg->msg != CURLMSG_DONE) continue;
    struct model_call *c = NULL;
    curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&c);
    CURLcode result = msg->data.result;
    if (c == NULL) continue;
    mh->in_curl++; /* the owner may abort from its callback: c stays until here */
    finished(c, result);
    mh->in_curl--;
    call_free(c);
  }
}

/* Hands libcurl the calls started while it ran our callbacks (it refuses a
 * handle added from inside them). One that it refuses now fails. This runs
 * after every socket action, so the walk over all calls waits for a call that
 * needs it: with thousands in flight, a delta would pay for each. */
static void add_waiting(struct model_http *mh) {
  struct model_call *c = mh->calls;
  while (mh->waiting > 0 && c != NULL) {
    struct model_call *next = c->next;
    if (!c->waiting) {
      c = next;
      continue;
    }
    if (c->aborted) { /* given up before libcurl ever had it */
      call_free(c);
    } else if (curl_multi_add_handle(mh->multi, c->easy) == CURLM_OK) {
      c->added = true;
      c->waiting = false;
      mh->waiting--;
    } else {
      c->waiting = false;
      mh->waiting--;
      fail_and_free(c, "turnd could not start the request");
      next = mh->calls; /* a failure's callback may have started another call */
    }
    c = next;
  }
}

/* Frees the calls aborted while libcurl ran our callbacks (another call's
 * owner may give up a call from its callback): their transfers end now, not
 * when their own next bytes or their stall timeout would come. Like
 * add_waiting, it walks the calls only when one needs it. */
static void drop_aborted(struct model_http *mh) {
  struct model_call *c = mh->calls;
  while (mh->aborted > 0 && c != NULL) {
    struct model_call *next = c->next; /* call_free calls no owner */
    if (c->aborted) call_free(c);
    c = next;
  }
}

/* No byte moved for the call's quiet limit (since its start, the last bytes
 * of its request sent, or the last bytes of its answer): the call fails and its
 * transfer ends. libcurl's own low-speed
 * check is not used: it averages over seconds, so it fired up to 6 s late. */
static void on_stall(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  struct model_call *c = arg;
  struct model_http *mh = c->mh;
  if (c->draining) { /* its owner has had the last event: nobody to tell */
    call_free(c);
    return;
  }
  char why[160];
  if (c->content)
    snprintf(why, sizeof why, "the model's stream stalled: nothing for %ld s",
             (long)c->stall_after.tv_sec);
  else
    snprintf(why, sizeof why, "the model did not begin its reply within %ld s",
             (long)c->reply_after.tv_sec);
  fail_and_free(c, why);
  add_waiting(mh);
  drop_aborted(mh);
}

static void act(struct model_http *mh, curl_socket_t fd, int flags) {
  int running;
  mh->in_curl++;
  curl_multi_socket_action(mh->multi, fd, flags, &running);
  mh->in_curl--;
  reap(mh);
  add_waiting(mh);
  drop_aborted(mh);
}

/* ------------------------------------------------- libcurl <-> libevent */

static void on_socket_ready(evutil_socket_t fd, short what, void *arg) {
  int flags = ((what & EV_READ) ? CURL_CSELECT_IN : 0) |
              ((what & EV_WRITE) ? CURL_CSELECT_OUT : 0);
  act(arg, fd, flags);
}

static void on_timer(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  act(arg, CURL_SOCKET_TIMEOUT, 0);
}

/* CURLMOPT_SOCKETFUNCTION: watch s as libcurl asks (its event rides on s). */
static int on_socket(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp) {
  (void)easy;
  struct model_http *mh = userp;
  struct event *ev = socketp;
  if (what == CURL_POLL_REMOVE) {
    if (ev != NULL) event_free(ev);
    curl_multi_assign(mh->multi, s, NULL);
    return 0;
  }
  short kind = EV_PERSIST | ((what & CURL_POLL_IN) ? EV_READ : 0) |
               ((what & CURL_POLL_OUT) ? EV_WRITE : 0);
  if (ev != NULL) event_free(ev);
  ev = event_new(mh->base, s, kind, on_socket_ready, mh);
  if (ev == NULL || event_priority_set(ev, LOOP_PRIO_STREAM) != 0 ||
      event_add(ev, NULL) != 0) {
    if (ev != NULL) event_free(ev);
    curl_multi_assign(mh->multi, s, NULL);
    return -1;
  }
  curl_multi_assign(mh->multi, s, ev);
  return 0;
}

/* CURLMOPT_TIMERFUNCTION: one timer; -1 deletes it. */
static int on_timeout(CURLM *multi, long timeout_ms, void *userp) {
  (void)multi;
  struct model_http *mh = userp;
  if (timeout_ms < 0) {
    evtimer_del(mh->timer);
    return 0;
  }
  struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  return evtimer_add(mh->timer, &tv);
}

struct model_http *model_http_new(struct event_base *base) {
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return NULL;
  struct model_http *mh = calloc(1, sizeof *mh);
  if (mh == NULL) {
    curl_global_cleanup(); /* model_http_free undoes it in every other case */
    return NULL;
  }
  mh->base = base;
  mh->multi = curl_multi_init();
  mh->timer = evtimer_new(base, on_timer, mh);
  if (mh->multi == NULL || mh->timer == NULL ||
      event_priority_set(mh->timer, LOOP_PRIO_STREAM) != 0) {
    model_http_free(mh);
    return NULL;
  }
  curl_multi_setopt(mh->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
  curl_multi_setopt(mh->multi, CURLMOPT_SOCKETDATA, mh);
  curl_multi_setopt(mh->multi, CURLMOPT_TIMERFUNCTION, on_timeout);
  curl_multi_setopt(mh->multi, CURLMOPT_TIMERDATA, mh);
  return mh;
}

void model_http_free(struct model_http *mh) {
  if (mh == NULL) return;
  while (mh->calls != NULL)
    call_free(mh->calls);
  if (mh->multi != NULL) curl_multi_cleanup(mh->multi);
  if (mh->timer != NULL) event_free(mh->timer);
  free(mh);
  curl_global_cleanup();
}

/* The header that carries key, sized to it: a bearer token (a JWT) can run to
 * kilobytes. Owned (secret_free); NULL when out of memory. */
static char *auth_header(enum provider_kind kind, const char *key) {
  const char *name =
      kind == PROVIDER_ANTHROPIC ? "x-api-key: " : "Authorization: Bearer ";
  size_t cap = strlen(name) + strlen(key) + 1;
  char *header = malloc(cap);
  if (header != NULL) snprintf(header, cap, "%s%s", name, key);
  return header;
}

struct model_call *model_call_start(struct model_http *mh,
                                    const struct model_call_spec *spec, model_call_cb *cb,
                                    void *ctx) {
  struct model_call *c = calloc(1, sizeof *c);
  if (c == NULL) return NULL;
  c->mh = mh;
  c->cb = cb;
  c->ctx = ctx;
  c->retry_after = -1;
  c->next = mh->calls;
  if (mh->calls != NULL) mh->calls->prev = c;
  mh->calls = c;
  c->body = strdup(spec->body);
  bool keyed = spec->api_key != NULL && spec->api_key[0] != '\0';
  if (keyed && (c->key = strdup(spec->api_key)) != NULL) c->key_len = strlen(c->key);
  c->sse = sse_new(SSE_EVENT_MAX, on_sse_event, c);
  c->stream = provider_stream_new(spec->kind, on_model_event, c);
  c->easy = curl_easy_init();
  c->stall = evtimer_new(mh->base, on_stall, c);
  struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
  c->headers = h;
  if (h != NULL) h = curl_slist_append(c->headers, "Accept: text/event-stream");
  /* No "Expect: 100-continue" wait before a large body. */
  if (h != NULL) h = curl_slist_append(c->headers, "Expect:");
  if (h != NULL && keyed) {
    char *auth = auth_header(spec->kind, spec->api_key);
    h = auth != NULL ? curl_slist_append(c->headers, auth) : NULL;
    secret_free(auth); /* the slist has its own copy, wiped in call_free */
  }
  if (h != NULL && spec->kind == PROVIDER_ANTHROPIC)
    h = curl_slist_append(c->headers, "anthropic-version: 2023-06-01");
  if (c->body == NULL || c->sse == NULL || c->stream == NULL || c->easy == NULL ||
      c->stall == NULL || event_priority_set(c->stall, LOOP_PRIO_STREAM) != 0 ||
      h == NULL || (keyed && c->key == NULL)) {
    call_free(c);
    return NULL;
  }
  CURL *e = c->easy;
  curl_easy_setopt(e, CURLOPT_URL, spec->url);
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, c->headers);
  curl_easy_setopt(e, CURLOPT_POSTFIELDS, c->body);
  curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(c->body));
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, c);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, c);
  curl_easy_setopt(e, CURLOPT_PRIVATE, c);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, c->curl_err);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, 30L);
  /* A stream that sends nothing for this long is stalled (providers ping). */
  curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(e, CURLOPT_XFERINFODATA, c);
  curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
  c->reply_after = (struct timeval){(time_t)spec->reply_timeout_s, 0};
  c->stall_after = (struct timeval){(time_t)spec->stall_timeout_s, 0};
  if (evtimer_add(c->stall, quiet_limit(c)) != 0) {
    call_free(c);
    return NULL;
  }
  if (mh->in_curl > 0) { /* libcurl is busy with us: added when it returns */
    c->waiting = true;
    mh->waiting++;
    return c;
  }
  if (curl_multi_add_handle(mh->multi, e) != CURLM_OK) {
    call_free(c);
    return NULL;
  }
  c->added = true;
  return c;
}

void model_call_abort(struct model_call *c) {
  struct model_http *mh = c->mh;
  if (mh->in_curl == 0) {
    call_free(c);
    return;
  }
  /* Inside libcurl's callbacks the handle must stay: on_body returns 0 for it,
   * and once libcurl returns, reap() frees it if its transfer ended, else
   * drop_aborted() does. */
  if (!c->aborted) mh->aborted++;
  c->aborted = true;
}
