/* load_answer: reads one HTTP/1.1 answer from a connection's bytes without doing
 * I/O: the status line and headers, then a body framed by the chunked coding, by
 * Content-Length or by the connection's close, handing the body on as it arrives
 * whatever the read and chunk boundaries. Enough HTTP for turnd's answers, not a
 * general client: no 1xx answers, no pipelining, headers up to a fixed size. */
#ifndef BENCH_LOAD_ANSWER_H
#define BENCH_LOAD_ANSWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of status line and headers; turnd sends about 150. */
#define LOAD_ANSWER_HEAD_MAX 8192

/* HEAD --chunked--> CHUNK_SIZE -> CHUNK_DATA -> CHUNK_END -> CHUNK_SIZE ...
 *                   CHUNK_SIZE (size 0) -> TRAILER -> DONE
 * HEAD --Content-Length--> BODY_LEN -> DONE
 * HEAD --neither---------> BODY_EOF -> DONE [load_answer_eof]
 * HEAD --204, 304, or Content-Length: 0--> DONE
 * any --bad byte, or close before the body's end--> ERROR, which absorbs.
 * The body's bytes pass on in CHUNK_DATA, BODY_LEN and BODY_EOF only. */
enum load_answer_state {
  LOAD_ANSWER_HEAD,
  LOAD_ANSWER_CHUNK_SIZE, /* hex digits, then an extension or CRLF */
  LOAD_ANSWER_CHUNK_EXT,  /* ";name=value" after the size: skipped to LF */
  LOAD_ANSWER_CHUNK_DATA,
  LOAD_ANSWER_CHUNK_END, /* the CRLF after a chunk's data */
  LOAD_ANSWER_TRAILER,   /* trailer lines up to an empty one */
  LOAD_ANSWER_BODY_LEN,
  LOAD_ANSWER_BODY_EOF,
  LOAD_ANSWER_DONE,
  LOAD_ANSWER_ERROR
};

struct load_answer {
  enum load_answer_state state;
  int status;                      /* 0 until the headers are complete */
  bool keep_alive;                 /* the connection may carry the next request */
  bool chunked;                    /* Transfer-Encoding ends in chunked */
  bool has_length;                 /* a Content-Length header was given */
  uint64_t left;                   /* bytes left of the chunk or of the body */
  unsigned n;                      /* HEAD: LFs in a row, CRs aside;
                                      CHUNK_SIZE: digits; CHUNK_END: CR seen (0/1);
                                      TRAILER: bytes of the line so far */
  uint64_t received;               /* every byte fed, head included */
  size_t head_len;                 /* <= LOAD_ANSWER_HEAD_MAX */
  char head[LOAD_ANSWER_HEAD_MAX]; /* status line and headers while in HEAD */
};

/* Called with each span of body bytes, in order; data is valid during the call. */
typedef void (*load_answer_body_cb)(void *ctx, const char *data, size_t len);

/* Starts an answer: before each request on a connection. */
void load_answer_init(struct load_answer *a);
/* Feeds bytes read from the connection (borrows data[0..len)). Stops at the end
 * of the answer: *used says how many bytes it took. Returns the state after the
 * bytes: LOAD_ANSWER_DONE once the answer is complete, LOAD_ANSWER_ERROR when the
 * bytes are not an answer we read, any other state when more is needed. */
enum load_answer_state load_answer_feed(struct load_answer *a, const char *data,
                                        size_t len, size_t *used, load_answer_body_cb cb,
                                        void *ctx);
/* The connection was closed: completes a body that runs to the close, else the
 * answer is cut short (LOAD_ANSWER_ERROR). Returns the state after it. */
enum load_answer_state load_answer_eof(struct load_answer *a);

#endif
