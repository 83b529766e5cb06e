/* turn: the command-line client. Streams a turn to the terminal (reply text as it
 * arrives, reasoning and guard events dimmed, one line per tool call), has each
 * approval answered (approval.c), and re-attaches with after= if the connection
 * drops. Every line is checked with libturn; a line that does not parse stops it.
 * Every request carries the device token found by token.c. */
#include "approval.h"
#include "guard.h"
#include "http.h"
#include "interrupt.h"
#include "listing.h"
#include "pair.h"
#include "secret.h"
#include "shown.h"
#include "token.h"
#include "turn/turn.h"

#include <curl/curl.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REATTACH_TRIES 5
#define WORDS_MAX      256 /* of a text given unquoted, as several arguments */

struct client {
  const struct http_server *server; /* where turnd is, and our token */
  turn_reader *reader;
  turn_order *order;
  char turn[64];     /* the turn's id, from its turn event */
  uint64_t next_seq; /* first seq not yet shown */
  bool ended;
  int stop_reason;
  bool bad_line;      /* a line that did not parse: stop */
  bool color;         /* stdout is a terminal */
  bool text_open;     /* the last thing shown was reply text without a newline */
  bool thinking_open; /* the last thing shown was reasoning: its line is open */
  bool told_waiting;  /* after ^C: said that the turn's name is awaited */
  bool gone;          /* re-attaching, turnd no longer knew the turn */
  CURL *h;            /* the transfer under way */
  long status;        /* its HTTP status, once known */
  char error[512];    /* the body of a non-200 answer, cut */
  size_t error_len;
  char why[CURL_ERROR_SIZE]; /* with no answer: libcurl's reason */
};

/* Ends the line that reply text or reasoning left open. */
static void end_text(struct client *c) {
  if (c->thinking_open) printf("%s\n", c->color ? "\033[0m" : "");
  if (c->text_open) putchar('\n');
  c->text_open = c->thinking_open = false;
}

static void print_str(turn_str s) {
  shown_write(stdout, s);
}

/* A line of the guard's, dimmed like reasoning: it is about the turn, not in it. */
static void show_guard(struct client *c, const turn_event *ev) {
  end_text(c);
  printf("%s(guard) ", c->color ? "\033[2m" : "");
  print_str(ev->guard.action);
  if (ev->guard.message.len > 0) fputs(": ", stdout);
  print_str(ev->guard.message);
  printf("%s\n", c->color ? "\033[0m" : "");
}

/* "  TOOL: " and the rest of a tool's line, as the caller writes it. */
static void tool_line_start(struct client *c, turn_str tool) {
  end_text(c);
  fputs("  ", stdout);
  print_str(tool);
  fputs(": ", stdout);
}

/* A line of turnd's about the turn, on stderr: before, after, then a newline. */
static void report_line(struct client *c, const char *before, turn_str s) {
  end_text(c);
  fflush(stdout); /* stdout's pending text comes first */
  fputs(before, stderr);
  shown_write(stderr, s);
  fputc('\n', stderr);
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
  /* After ^C nothing more is shown; only the turn's name is still wanted, to
   * cancel it by. */
  if (interrupt_seen() && ev->type != TURN_EV_TURN) return 1;
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
    report_line(c, "session ", ev->turn.session);
    break;
  case TURN_EV_TEXT:
    if (c->thinking_open) end_text(c);
    print_str(ev->text.delta);
    c->text_open =
        ev->text.delta.len > 0 && ev->text.delta.p[ev->text.delta.len - 1] != '\n';
    break;
  case TURN_EV_REASONING:
    /* A model's reasoning comes in many small deltas: one dimmed line for them. */
    if (!c->thinking_open) {
      end_text(c);
      printf("%s", c->color ? "\033[2m" : "(thinking) ");
      c->thinking_open = true;
    }
    print_str(ev->text.delta);
    break;
  case TURN_EV_TOOL_PROGRESS:
    tool_line_start(c, ev->tool_progress.tool);
    print_str(ev->tool_progress.message);
    putchar('\n');
    break;
  case TURN_EV_TOOL_RESULT:
    tool_line_start(c, ev->tool_result.tool);
    printf("%s, ", status_word(ev->tool_result.status));
    print_str(ev->tool_result.summary);
    putchar('\n');
    break;
  case TURN_EV_APPROVAL:
    end_text(c);
    approval_answer(c->server, ev);
    break;
  case TURN_EV_GUARD:
    show_guard(c, ev);
    break;
  case TURN_EV_WIDGET:
    end_text(c);
    fputs("  [widget: ", stdout);
    print_str(ev->widget.title);
    fputs("]\n", stdout);
    break;
  case TURN_EV_THROTTLED:
    end_text(c);
    fprintf(stderr, "(the model is busy; trying again in %.1f s)\n",
            ev->throttled.delay_seconds);
    break;
  case TURN_EV_NOTICE:
    report_line(c, "", ev->notice.text);
    break;
  case TURN_EV_ERROR:
    report_line(c, "turn: the backend failed: ", ev->error.message);
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

/* libcurl asks about once a second while the stream is quiet: a ^C stops it,
 * once the turn has a name to cancel it by. Until its first line comes the
 * turn may have started in turnd all the same, so the client waits for it. */
static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow,
                       curl_off_t ultotal, curl_off_t ulnow) {
  (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
  struct client *c = arg;
  if (!interrupt_seen()) return 0;
  if (c->turn[0] != '\0') return 1;
  if (!c->told_waiting) {
    c->told_waiting = true;
    fprintf(stderr, "(waiting for turnd to start the turn, to cancel it; ^C again "
                    "quits)\n");
  }
  return 0;
}

static size_t on_bytes(char *data, size_t size, size_t n, void *arg) {
  struct client *c = arg;
  if (interrupt_seen() && c->turn[0] != '\0') return 0; /* stops the transfer */
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
  snprintf(c->why, sizeof c->why, "out of memory");
  struct curl_slist *hdr;
  CURL *h = http_handle(c->server, body != NULL, &hdr);
  if (h == NULL) return 0;
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_bytes);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, c);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, c);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  if (body != NULL) curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
  c->h = h;
  c->error_len = 0;
  c->why[0] = '\0';
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->why);
  CURLcode rc = curl_easy_perform(h);
  if (rc != CURLE_OK) http_reason(c->why, rc);
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(hdr);
  curl_easy_cleanup(h);
  c->h = NULL;
  if (rc == CURLE_OK && status == 200) turn_reader_finish(c->reader, on_event, c);
  return status;
}

/* How the turn ended, from its lines after seq next_seq - 1 (read once it has
 * ended): its stop reason, or -1 when that cannot be told. */
static int stop_reason_of(const struct client *c) {
  char path[128];
  if (c->next_seq > 0)
    snprintf(path, sizeof path, "/api/turns/%s?after=%llu", c->turn,
             (unsigned long long)(c->next_seq - 1));
  else
    snprintf(path, sizeof path, "/api/turns/%s", c->turn);
  struct http_answer a;
  http_answer_init(&a, 1u << 20);
  int reason = -1;
  if (http_call(c->server, "GET", path, NULL, &a) == 200 && a.body.len > 0) {
    size_t end = a.body.len;
    while (end > 0 && a.body.data[end - 1] == '\n')
      end--;
    size_t start = end;
    while (start > 0 && a.body.data[start - 1] != '\n')
      start--;
    json_t *last = json_loadb(a.body.data + start, end - start, 0, NULL);
    const char *type = json_string_value(json_object_get(last, "type"));
    const char *why = json_string_value(json_object_get(last, "stop_reason"));
    if (type != NULL && strcmp(type, "end") == 0 && why != NULL)
      reason = turn_stop_reason_from_name(turn_str_c(why));
    json_decref(last);
  }
  http_answer_fini(&a);
  return reason;
}

/* After a ^C: asks turnd to cancel the turn (which ends it, and any approval it
 * waits for), then says how the turn ended. Returns the exit status, 130 as
 * for a ^C. */
static int cancel_turn(struct client *c) {
  signal(SIGPIPE, SIG_IGN); /* the ^C may have ended the program reading stdout */
  long status = 0;
  struct http_answer a;
  http_answer_init(&a, 64u << 10);
  char path[128];
  if (c->turn[0] != '\0' && !c->ended) {
    snprintf(path, sizeof path, "/api/turns/%s/cancel", c->turn);
    status = http_call(c->server, "POST", path, NULL, &a);
  }
  end_text(c);
  fflush(stdout);
  if (c->turn[0] == '\0' || c->ended) {
    http_answer_fini(&a);
    return 130; /* nothing was started, or nothing is left to cancel */
  }
  if (status >= 200 && status < 300) {
    int reason = stop_reason_of(c);
    if (reason < 0 || reason == TURN_STOP_CANCELLED)
      fprintf(stderr, "(turn %s cancelled)\n", c->turn);
    else
      fprintf(stderr, "(turn %s had ended already: %s)\n", c->turn,
              turn_stop_reason_name((turn_stop_reason)reason));
  } else {
    http_report_answer(c->server, "cancelling the turn", &a);
  }
  http_answer_fini(&a);
  return 130;
}

/* text as a JSON string into out (cap bytes); false when it does not fit. */
static bool as_json_string(const char *text, char *out, size_t cap) {
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
  fprintf(to,
          "usage: turn [OPTIONS] [--] TEXT\n"
          "       turn [OPTIONS] sessions | history ID | lock | unlock\n"
          "       turn pair URL CODE [--name NAME] [--token-file FILE]\n"
          "       turn pair LINK [--name NAME] [--token-file FILE]\n"
          "  Sends TEXT to turnd and shows the turn as it streams; asks y/n for each\n"
          "  approval, and for the PIN when approving needs it; Ctrl-C cancels the\n"
          "  turn. `sessions` lists the sessions, `history` shows one. `lock` locks\n"
          "  turnd; `unlock` asks for the PIN and unlocks it. `pair` trades a pairing\n"
          "  code from `turnd pair-code` for a token and stores it; LINK is the\n"
          "  http://HOST:PORT/#pair=CODE link that `turnd pair-code` (and turnd at\n"
          "  start) prints.\n"
          "options:\n"
          "  --url URL          turnd's address (default: the one `turn pair` noted,\n"
          "                     else http://127.0.0.1:8080)\n"
          "  --session ID       go on in that session\n"
          "  --token-file FILE  the token's file, read or (pair) written\n"
          "  --name NAME        pair: this device's name in turnd (default turn@HOST)\n"
          "  The token comes from --token-file, else TURN_TOKEN, else\n"
          "  $XDG_CONFIG_HOME/turn/token (~/.config/turn/token); pair writes there too.\n"
          "  After --, TEXT is text even when it reads like a command.\n");
}

struct args {
  const char *url, *session, *token_file, *name;
  bool url_given;         /* --url: else `turn pair`'s note, else the default */
  bool literal;           /* the words came after --: text, whatever they read */
  char *words[WORDS_MAX]; /* the other arguments: a command, or the text's words */
  int n_words;
};

/* The command line into *a. Returns -1 when it is good, else the exit status:
 * 0 after --help, 2 after the usage for a bad one. */
static int parse_args(int argc, char **argv, struct args *a) {
  memset(a, 0, sizeof *a);
  a->url = "http://127.0.0.1:8080";
  bool literal = false;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    bool has_value = i + 1 < argc;
    if (!literal && strcmp(arg, "--url") == 0 && has_value) {
      /* The routes are appended to it: "http://host:8080/" (as turnd's
       * pairing link has it) must not make "//api/turns". */
      char *url = argv[++i];
      size_t len = strlen(url);
      while (len > 0 && url[len - 1] == '/')
        url[--len] = '\0';
      if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) {
        fprintf(stderr, "turn: --url must start with http:// or https://\n");
        return 2;
      }
      a->url = url;
      a->url_given = true;
    } else if (!literal && strcmp(arg, "--session") == 0 && has_value)
      a->session = argv[++i];
    else if (!literal && strcmp(arg, "--token-file") == 0 && has_value)
      a->token_file = argv[++i];
    else if (!literal && strcmp(arg, "--name") == 0 && has_value)
      a->name = argv[++i];
    else if (!literal && (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)) {
      usage(stdout);
      return 0;
    } else if (!literal && strcmp(arg, "--") == 0 && a->n_words == 0)
      literal = a->literal = true;
    else if ((literal || arg[0] != '-') && a->n_words < WORDS_MAX)
      a->words[a->n_words++] = argv[i];
    else if (a->n_words == WORDS_MAX) {
      fprintf(stderr, "turn: more than %d words: quote the text\n", WORDS_MAX);
      return 2;
    } else {
      usage(stderr);
      return 2;
    }
  }
  return -1;
}

/* The commands; what else is on the command line is the text. Without --session
 * only: with it, a lone "sessions" was always text, and still is. */
static bool is_command(const struct args *a) {
  static const char *const names[] = {"sessions", "history", "pair", "lock", "unlock"};
  if (a->n_words == 0 || a->session != NULL || a->literal) return false;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(a->words[0], names[i]) == 0) return true;
  return false;
}

/* Runs the command in a->words; returns its exit status. */
static int run_command(const struct args *a, const struct http_server *s) {
  const char *cmd = a->words[0];
  int n = a->n_words;
  if (strcmp(cmd, "sessions") == 0 && n == 1) return listing_sessions(s);
  if (strcmp(cmd, "history") == 0 && n == 2)
    return listing_history(s, a->words[1], isatty(STDOUT_FILENO));
  if (strcmp(cmd, "lock") == 0 && n == 1) return guard_lock(s);
  if (strcmp(cmd, "unlock") == 0 && n == 1) return guard_unlock(s);
  usage(stderr);
  return 2;
}

/* The request's body, {"session"?, "text"}, into body (cap bytes). */
static bool turn_body(const char *text, const char *session, char *body, size_t cap) {
  static char text_json[96 * 1024], session_json[512];
  if (!as_json_string(text, text_json, sizeof text_json) ||
      (session != NULL && !as_json_string(session, session_json, sizeof session_json)))
    return false;
  int len = session != NULL ? snprintf(body, cap, "{\"session\": %s, \"text\": %s}",
                                       session_json, text_json)
                            : snprintf(body, cap, "{\"text\": %s}", text_json);
  return len > 0 && (size_t)len < cap;
}

/* Sends the text and follows the turn to its end; returns the exit status. */
static int run_turn(const struct http_server *s, const char *text, const char *session) {
  static char body[100 * 1024];
  if (!turn_body(text, session, body, sizeof body)) {
    fprintf(stderr, "turn: the text is too long\n");
    return 2;
  }
  struct client c;
  memset(&c, 0, sizeof c);
  c.server = s;
  c.color = isatty(STDOUT_FILENO);
  c.reader = turn_reader_new(TURN_READER_DEFAULT_MAX_LINE, NULL);
  c.order = turn_order_new(NULL);
  if (c.reader == NULL || c.order == NULL) {
    fprintf(stderr, "turn: out of memory\n");
    turn_reader_free(c.reader);
    turn_order_free(c.order);
    return 1;
  }
  char target[HTTP_URL_MAX]; /* main saw to it that every route fits */
  snprintf(target, sizeof target, "%s/api/turns", s->url);
  interrupt_catch();
  long status = stream(&c, target, body);
  if (interrupt_seen() && !c.ended) { /* a ^C after the end changes nothing */
    int rc = cancel_turn(&c);
    turn_reader_free(c.reader);
    turn_order_free(c.order);
    return rc;
  }
  if (status != 200) {
    http_report(s, "the turn", status, c.why, c.error, c.error_len, -1);
    turn_reader_free(c.reader);
    turn_order_free(c.order);
    return 1;
  }
  /* The connection dropped before the end: the turn goes on; follow it again. */
  for (int tries = 0; !c.ended && !c.bad_line && !interrupt_seen() && c.turn[0] != '\0' &&
                      tries < REATTACH_TRIES;
       tries++) {
    turn_reader_free(c.reader);
    c.reader = turn_reader_new(TURN_READER_DEFAULT_MAX_LINE, NULL);
    snprintf(target, sizeof target, "%s/api/turns/%s?after=%llu", s->url, c.turn,
             (unsigned long long)(c.next_seq == 0 ? 0 : c.next_seq - 1));
    uint64_t before = c.next_seq;
    long st = stream(&c, target, NULL);
    if (c.next_seq > before) {
      tries = -1; /* it made progress: the count of tries starts again */
    } else if (st == 404) {
      c.gone = true; /* no use trying again */
      break;
    } else if (st == 401) {
      /* this device was unpaired while it followed the turn: trying again
       * cannot help, and the owner should know why it stopped */
      end_text(&c);
      http_report(s, "following the turn", st, c.why, c.error, c.error_len, -1);
      break;
    } else if (st != 200) {
      sleep(1);
    }
  }
  turn_reader_free(c.reader);
  turn_order_free(c.order);
  if (interrupt_seen() && !c.ended) return cancel_turn(&c);
  if (c.bad_line) return 1;
  if (!c.ended) {
    end_text(&c);
    fflush(stdout);
    if (c.gone)
      fprintf(stderr, "turn: turnd no longer knows the turn %s\n", c.turn);
    else if (c.turn[0] == '\0')
      fprintf(stderr,
              "turn: the connection to turnd was lost%s%s; the turn may have "
              "started there\n",
              c.why[0] != '\0' ? ": " : "", c.why);
    else
      fprintf(stderr,
              "turn: the connection to turnd was lost%s%s; the turn %s goes on there\n",
              c.why[0] != '\0' ? ": " : "", c.why, c.turn);
    return 1;
  }
  if (c.stop_reason == TURN_STOP_LOCKED)
    fprintf(stderr, "(the turn ended: locked; `turn unlock` unlocks turnd)\n");
  else if (c.stop_reason == TURN_STOP_BUSY)
    fprintf(stderr, "(the turn ended: busy; another turn of this session is still "
                    "running)\n");
  else if (c.stop_reason != TURN_STOP_END_TURN)
    fprintf(stderr, "(the turn ended: %s)\n", turn_stop_reason_name(c.stop_reason));
  return c.stop_reason == TURN_STOP_END_TURN ? 0 : 3;
}

int main(int argc, char **argv) {
  struct args a;
  int rc = parse_args(argc, argv, &a);
  if (rc >= 0) return rc;
  bool command = is_command(&a);
  /* Unquoted, the text comes as several words: they are joined as the shell
   * split them, by one space each. */
  static char joined[96 * 1024];
  size_t len = 0;
  for (int i = 0; !command && i < a.n_words; i++) {
    size_t n = strlen(a.words[i]);
    if (n + 1 >= sizeof joined - len) {
      fprintf(stderr, "turn: the text is too long\n");
      return 2;
    }
    if (i > 0) joined[len++] = ' ';
    memcpy(joined + len, a.words[i], n + 1);
    len += n;
  }
  const char *text = !command && a.n_words > 0 ? joined : NULL;
  if (!command && text == NULL) {
    usage(stderr);
    return 2;
  }
  bool pair = command && strcmp(a.words[0], "pair") == 0;
  if ((pair && (a.n_words < 2 || a.n_words > 3)) || (a.name != NULL && !pair)) {
    usage(stderr);
    return 2;
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);
  if (pair) { /* it reads no token: pairing is how a missing or bad one is replaced */
    rc = pair_command(a.words[1], a.n_words == 3 ? a.words[2] : NULL, a.name,
                      a.token_file);
    curl_global_cleanup();
    return rc;
  }
  char token[TOKEN_MAX];
  int found = token_find(a.token_file, token, sizeof token);
  if (found < 0) {
    curl_global_cleanup();
    return 1;
  }
  static char noted_url[HTTP_URL_MAX];
  /* The note goes with the default file's token: a token from elsewhere is
   * for some other turnd, which must not be sent it. */
  const char *env_token = getenv("TURN_TOKEN");
  bool default_token =
      a.token_file == NULL && (env_token == NULL || env_token[0] == '\0');
  if (!a.url_given && default_token && token_url_find(noted_url, sizeof noted_url) == 1)
    a.url = noted_url;
  if (strlen(a.url) > HTTP_BASE_MAX) {
    fprintf(stderr, "turn: the address is too long (at most %d bytes)\n", HTTP_BASE_MAX);
    secret_wipe(token, sizeof token);
    curl_global_cleanup();
    return 2;
  }
  struct http_server server = {a.url, found == 1 ? token : NULL};
  rc = command ? run_command(&a, &server) : run_turn(&server, text, a.session);
  secret_wipe(token, sizeof token);
  curl_global_cleanup();
  return rc;
}
