/* The case runner's HTTP side: every request of a case is one libcurl easy handle
 * in one multi handle, so background streams go on being read while the case
 * waits for something else. An NDJSON answer is kept as its complete lines, each
 * checked with turn_event_parse as it arrives. */
#ifndef CASE_NET_H
#define CASE_NET_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>

#define CASE_ID_MAX 128 /* bytes of a turn, session or request id, with its NUL */

/* One request and its answer. Owned by the case_net that started it. */
struct case_net;

struct case_stream {
  struct case_net *net; /* the owner */
  char name[32];        /* the case's name for it ("A"), or "" */
  unsigned line_no;     /* line of its [request] in the .case file */
  long want_status;     /* the status the [request] line expects */
  size_t drop_after;    /* 0: read to the end; else close after this many lines */
  CURL *easy;           /* owned; NULL once the transfer is over */
  struct curl_slist *out_headers; /* owned */
  char *headers;                  /* header lines received, NUL-terminated; owned */
  size_t headers_len;             /* bytes in headers */
  char *raw;         /* body bytes kept (up to the drop), NUL-terminated; owned */
  size_t raw_len;    /* bytes in raw */
  size_t line_start; /* offset in raw where the line being received starts */
  char **lines;      /* complete lines, without "\n"; each owned */
  int *types;        /* per line: its turn_event_type, -1 when not an NDJSON answer */
  size_t n_lines;    /* lines held */
  size_t cap_lines;  /* room in lines and types */
  long status;       /* 0 until the headers came */
  bool done;         /* the answer ended, or we dropped it */
  bool dropped;      /* we closed it after drop_after lines */
  bool cut;          /* turnd was killed while it was open: it ends where it stops */
  char turn[CASE_ID_MAX];    /* ids this stream carried, the latest of each */
  char session[CASE_ID_MAX]; /* ... */
  char request[CASE_ID_MAX]; /* ... */
};

#define CASE_MAX_STREAMS 64

struct case_net {
  CURLM *multi;                                  /* owned */
  struct case_stream *streams[CASE_MAX_STREAMS]; /* in the order started; owned */
  size_t n;                                      /* streams held */
  char turn[CASE_ID_MAX];    /* the latest id of each kind received on any stream: */
  char session[CASE_ID_MAX]; /* what %TURN, %SESSION and %REQUEST stand for */
  char request[CASE_ID_MAX];
};

/* Returns 0, or -1 when libcurl cannot start. */
int case_net_init(struct case_net *net);
/* Aborts what still runs and frees every stream. */
void case_net_fini(struct case_net *net);

/* Starts a request (borrows every argument; body may be NULL for none, auth too:
 * else a whole header line, "Authorization: Bearer ..."). The stream's name,
 * line_no, want_status and drop_after come from the caller's template. Fails the
 * case if it cannot start. */
struct case_stream *case_net_start(struct case_net *net, const struct case_stream *tmpl,
                                   const char *method, const char *url, const char *body,
                                   const char *auth);
/* Frees s, the stream started last, which has ended: a poll whose answer
 * nothing refers to. */
void case_net_forget(struct case_net *net, struct case_stream *s);

/* Waits up to wait_ms for sockets (0: does not wait), then moves every transfer
 * on: lines are split and checked, ids noted, and an answer that ended is checked
 * against its expected status. Fails the case on anything wrong. */
void case_net_pump(struct case_net *net, int wait_ms);

/* Marks every answer not yet ended as cut: turnd is about to be killed, so each
 * ends without its last chunk, maybe inside a line. A cut answer keeps its
 * complete lines and is still checked for its status. */
void case_net_cut_open(struct case_net *net);

/* The stream the case named name, or NULL. */
struct case_stream *case_net_find(const struct case_net *net, const char *name);

/* Copies the value of header name (case-insensitive) into out; false when the
 * answer has no such header. */
bool case_stream_header(const struct case_stream *s, const char *name, char *out,
                        size_t cap);

#endif
