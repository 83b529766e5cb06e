/* turn: the command-line client. Streams a turn to the terminal (reply text as it
 * arrives, reasoning dimmed, one line per tool call), asks the owner y/n for each
 * approval and posts the answer, and re-attaches with after= if the connection
 * drops. Every line is checked with libturn; a line that does not parse stops it. */
#include "listing.h"
#include "turn/turn.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REATTACH_TRIES 5

struct client {
  const char *url; /* base, e.g. http://127.0.0.1:8080 */
  turn_reader *reader;
  turn_order *order;
  char turn[64];     /* the turn's id, from its turn event */
  uint64_t next_seq; /* first seq not yet shown */
  bool ended;
  int stop_reason;
  bool bad_line;   /* a line that did not parse: stop */
  bool color;      /* stdout is a terminal */
  bool text_open;  /* the last thing shown was reply text without a newline */
  CURL *h;         /* the transfer under way */
  long status;     /* its HTTP status, once known */
  char error[512]; /* the body of a non-200 answer, cut */
  size_t error_len;
};

static void end_text(struct client *c) {
  if (c->text_open) putchar('\n');
  c->text_open = false;
}

static void print_str(turn_str s) {
  fwrite(s.p, 1, s.len, stdout);
}

static int post_json(const char *url, const char *body, long *status) {
  CURL *h = curl_easy_init();
  if (h == NULL) return -1;
  struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
  curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
  FILE *sink = fopen("/dev/null", "w");
  if (sink != NULL) curl_easy_setopt(h, CURLOPT_WRITEDATA, sink);
  CURLcode rc = curl_easy_perform(h);
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
  if (sink != NULL) fclose(sink);
  curl_slist_free_all(hdr);
  curl_easy_cleanup(h);
  return rc == CURLE_OK ? 0 : -1;
}

/* An approval: ask on the terminal, post the answer. */
static void ask(struct client *c, const turn_event *ev) {
  end_text(c);
  const turn_input *in = &ev->approval.input;
  turn_str shown = in->truncated ? in->preview : in->json;
  printf("? run %.*s (%.*s) with %.*s%s [y/n] ", (int)ev->approval.tool.len,
         ev->approval.tool.p, (int)ev->approval.effect.len, ev->approval.effect.p,
         (int)shown.len, shown.p, in->truncated ? "..." : "");
  fflush(stdout);
  char answer[16] = "";
  bool yes = fgets(answer, sizeof answer, stdin) != NULL &&
             (answer[0] == 'y' || answer[0] == 'Y');
  if (!isatty(STDIN_FILENO)) putchar('\n');
  char url[512], request[256];
  snprintf(request, sizeof request, "%.*s", (int)ev->approval.request.len,
           ev->approval.request.p);
  snprintf(url, sizeof url, "%s/api/approvals/%s", c->url, request);
  long status = 0;
  if (post_json(url,
                yes ? "{\"decision\": \"approved\"}" : "{\"decision\": \"rejected\"}",
                &status) != 0 ||
      status != 204)
    fprintf(stderr, "turn: the answer was not taken (HTTP %ld)\n", status);
}

static const char *status_word(turn_status s) {
  return s == TURN_STATUS_OK ? "ok" : s == TURN_STATUS_ERROR ? "error" : "rejected";
}

static int on_event(void *ctx, const turn_event *ev, const turn_error *err) {
  struct client *c = ctx;
  if (err != NULL) {
    char msg[200];
    turn_error_format(err, msg, sizeof msg);
    end_text(c);
    fprintf(stderr, "turn: the server sent a line that does not parse: %s\n", msg);
    c->bad_line = true;
    return 1;
  }
  if (ev->seq < c->next_seq && ev->type != TURN_EV_TURN) return 0; /* already shown */
  if (ev->seq >= c->next_seq) { /* not seen before: the order checker follows it */
    turn_error oerr;
    if (turn_order_step(c->order, ev, &oerr) != TURN_OK) {
      char msg[200];
      turn_error_format(&oerr, msg, sizeof msg);
      end_text(c);
      fprintf(stderr, "turn: the server sent an event out of order: %s\n", msg);
      c->bad_line = true;
      return 1;
    }
  }
  c->next_seq = ev->seq + 1;
  switch (ev->type) {
  case TURN_EV_TURN:
    snprintf(c->turn, sizeof c->turn, "%.*s", (int)ev->turn.turn.len, ev->turn.turn.p);
    fprintf(stderr, "session %.*s\n", (int)ev->turn.session.len, ev->turn.session.p);
    break;
  case TURN_EV_TEXT:
    print_str(ev->text.delta);
    c->text_open =
        ev->text.delta.len > 0 && ev->text.delta.p[ev->text.delta.len - 1] != '\n';
    break;
  case TURN_EV_REASONING:
    end_text(c);
    printf("%s", c->color ? "\033[2m" : "(thinking) ");
    print_str(ev->text.delta);
    printf("%s\n", c->color ? "\033[0m" : "");
    break;
  case TURN_EV_TOOL_PROGRESS:
    end_text(c);
    printf("  %.*s: %.*s\n", (int)ev->tool_progress.tool.len, ev->tool_progress.tool.p,
           (int)ev->tool_progress.message.len, ev->tool_progress.message.p);
    break;
  case TURN_EV_TOOL_RESULT:
    end_text(c);
    printf("  %.*s: %s, %.*s\n", (int)ev->tool_result.tool.len, ev->tool_result.tool.p,
           status_word(ev->tool_result.status), (int)ev->tool_result.summary.len,
           ev->tool_result.summary.p);
    break;
  case TURN_EV_APPROVAL:
    ask(c, ev);
    break;
  case TURN_EV_WIDGET:
    end_text(c);
    printf("  [widget: %.*s]\n", (int)ev->widget.title.len, ev->widget.title.p);
    break;
  case TURN_EV_THROTTLED:
    end_text(c);
    fprintf(stderr, "(the model is busy; trying again in %.1f s)\n",
            ev->throttled.delay_seconds);
    break;
  case TURN_EV_NOTICE:
    end_text(c);
    fprintf(stderr, "%.*s\n", (int)ev->notice.text.len, ev->notice.text.p);
    break;
  case TURN_EV_ERROR:
    end_text(c);
    fprintf(stderr, "turn: the backend failed: %.*s\n", (int)ev->error.message.len,
            ev->error.message.p);
    break;
  case TURN_EV_END:
    end_text(c);
    c->ended = true;
    c->stop_reason = (int)ev->end.stop_reason;
    break;
  default:
    break;
  }
  fflush(stdout);
  return 0;
}

static size_t on_bytes(char *data, size_t size, size_t n, void *arg) {
  struct client *c = arg;
  curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &c->status);
  if (c->status != 200) {
    size_t k = size * n;
    if (k > sizeof c->error - 1 - c->error_len) k = sizeof c->error - 1 - c->error_len;
    memcpy(c->error + c->error_len, data, k);
    c->error_len += k;
    c->error[c->error_len] = '\0';
    return size * n;
  }
  int rv = turn_reader_feed(c->reader, data, size * n, on_event, c);
  return rv == TURN_OK ? size * n : 0;
}

/* One streaming request; returns the HTTP status (0: no answer). */
static long stream(struct client *c, const char *url, const char *body) {
  CURL *h = curl_easy_init();
  if (h == NULL) return 0;
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_bytes);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, c);
  struct curl_slist *hdr = NULL;
  if (body != NULL) {
    hdr = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
  }
  c->h = h;
  c->error_len = 0;
  CURLcode rc = curl_easy_perform(h);
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(hdr);
  curl_easy_cleanup(h);
  c->h = NULL;
  if (rc == CURLE_OK && status == 200) turn_reader_finish(c->reader, on_event, c);
  return status;
}

/* text as a JSON string into out (cap bytes); false when it does not fit. */
static bool json_string(const char *text, char *out, size_t cap) {
  turn_buf b;
  turn_buf_init(&b, cap - 1, NULL);
  turn_event ev; /* the encoder's escaping, through a notice */
  memset(&ev, 0, sizeof ev);
  ev.type = TURN_EV_NOTICE;
  ev.notice.text = turn_str_c(text);
  bool ok = turn_event_encode(&ev, &b) == TURN_OK;
  if (ok) {
    /* {"v":1,"seq":0,"type":"notice","text":"..."}: take the string's part. */
    const char *q = strstr(b.data, "\"text\":");
    size_t start = (size_t)(q - b.data) + 7;
    size_t len = b.len - start - 1;
    memcpy(out, b.data + start, len);
    out[len] = '\0';
  }
  turn_buf_fini(&b);
  return ok;
}

static void usage(FILE *to) {
  fprintf(to, "usage: turn [--url URL] [--session ID] [--] TEXT\n"
              "       turn [--url URL] sessions\n"
              "       turn [--url URL] history ID\n"
              "  Sends TEXT to turnd and shows the turn as it streams; asks y/n for\n"
              "  each approval. `sessions` lists the sessions, `history` shows one.\n"
              "  --url defaults to http://127.0.0.1:8080; after --, TEXT is text even\n"
              "  when it reads \"sessions\".\n");
}

/* `turn sessions`, `turn history ID`: returns the exit status, or -1 when args
 * are not one of these commands. */
static int listing_command(const char *url, char **args, int n) {
  if (n == 1 && strcmp(args[0], "sessions") == 0) return listing_sessions(url);
  if (n == 2 && strcmp(args[0], "history") == 0)
    return listing_history(url, args[1], isatty(STDOUT_FILENO));
  if (n >= 1 && (strcmp(args[0], "sessions") == 0 || strcmp(args[0], "history") == 0)) {
    usage(stderr);
    return 2;
  }
  return -1;
}

int main(int argc, char **argv) {
  const char *url = "http://127.0.0.1:8080", *session = NULL, *text = NULL;
  char *words[2];
  int n_words = 0;
  bool literal = false; /* after "--": the text, whatever it reads */
  for (int i = 1; i < argc; i++) {
    if (!literal && strcmp(argv[i], "--url") == 0 && i + 1 < argc)
      url = argv[++i];
    else if (!literal && strcmp(argv[i], "--session") == 0 && i + 1 < argc)
      session = argv[++i];
    else if (!literal && strcmp(argv[i], "--help") == 0) {
      usage(stdout);
      return 0;
    } else if (!literal && strcmp(argv[i], "--") == 0)
      literal = true;
    else if ((literal || argv[i][0] != '-') && n_words < 2 && text == NULL) {
      if (literal)
        text = argv[i];
      else
        words[n_words++] = argv[i];
    } else {
      usage(stderr);
      return 2;
    }
  }
  if (text == NULL && n_words > 0) {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int rc = session == NULL ? listing_command(url, words, n_words) : -1;
    curl_global_cleanup();
    if (rc >= 0) return rc;
    if (n_words == 1) text = words[0];
  }
  if (text == NULL) {
    usage(stderr);
    return 2;
  }
  static char text_json[96 * 1024], session_json[512], body[100 * 1024];
  if (!json_string(text, text_json, sizeof text_json) ||
      (session != NULL && !json_string(session, session_json, sizeof session_json))) {
    fprintf(stderr, "turn: the text is too long\n");
    return 2;
  }
  if (session != NULL)
    snprintf(body, sizeof body, "{\"session\": %s, \"text\": %s}", session_json,
             text_json);
  else
    snprintf(body, sizeof body, "{\"text\": %s}", text_json);

  curl_global_init(CURL_GLOBAL_DEFAULT);
  struct client c;
  memset(&c, 0, sizeof c);
  c.url = url;
  c.color = isatty(STDOUT_FILENO);
  c.reader = turn_reader_new(TURN_READER_DEFAULT_MAX_LINE, NULL);
  c.order = turn_order_new(NULL);
  if (c.reader == NULL || c.order == NULL) {
    fprintf(stderr, "turn: out of memory\n");
    return 1;
  }
  char target[512];
  snprintf(target, sizeof target, "%s/api/turns", url);
  long status = stream(&c, target, body);
  if (status != 200) {
    fprintf(stderr, "turn: turnd answered HTTP %ld at %s %s\n", status, target, c.error);
    turn_reader_free(c.reader);
    turn_order_free(c.order);
    return 1;
  }
  /* The connection dropped before the end: the turn goes on; follow it again. */
  for (int tries = 0;
       !c.ended && !c.bad_line && c.turn[0] != '\0' && tries < REATTACH_TRIES; tries++) {
    turn_reader_free(c.reader);
    c.reader = turn_reader_new(TURN_READER_DEFAULT_MAX_LINE, NULL);
    snprintf(target, sizeof target, "%s/api/turns/%s?after=%llu", url, c.turn,
             (unsigned long long)(c.next_seq == 0 ? 0 : c.next_seq - 1));
    uint64_t before = c.next_seq;
    long st = stream(&c, target, NULL);
    if (c.next_seq > before)
      tries = -1; /* it made progress: the count of tries starts again */
    else if (st == 404)
      break; /* the turn is gone: no use trying again */
    else if (st != 200)
      sleep(1);
  }
  turn_reader_free(c.reader);
  turn_order_free(c.order);
  curl_global_cleanup();
  if (c.bad_line) return 1;
  if (!c.ended) {
    fprintf(stderr, "turn: the connection to turnd was lost\n");
    return 1;
  }
  if (c.stop_reason != TURN_STOP_END_TURN)
    fprintf(stderr, "(the turn ended: %s)\n", turn_stop_reason_name(c.stop_reason));
  return c.stop_reason == TURN_STOP_END_TURN ? 0 : 3;
}
