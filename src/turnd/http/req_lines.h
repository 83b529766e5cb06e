/* What libevent took of a request, line by line: enough to tell, when it refuses
 * a chunked body with 413, whether the body was over the limit or a chunk size
 * (or a trailer) it could not read. No I/O: conn_watch.c feeds it the first bytes
 * of the connection's input and how many bytes libevent took from there. */
#ifndef TURND_REQ_LINES_H
#define TURND_REQ_LINES_H

#include <stdbool.h>
#include <stddef.h>

/* Bytes of the input's front kept: a chunk-size line, or a Transfer-Encoding
 * header with its value, fits with room to spare. */
#define REQ_LINES_FRONT 64

/* Which part of the request libevent takes next. */
enum req_part {
  REQ_PART_LINE,    /* the request line */
  REQ_PART_HEADERS, /* header lines, up to the empty line */
  REQ_PART_BODY     /* the body: chunk-size lines, data, the trailer */
};

/* A plain struct the caller embeds; req_lines_reset before each request. */
struct req_lines {
  enum req_part part;
  bool te_seen;  /* a Transfer-Encoding header came: only the first counts */
  bool te_last;  /* the header line taken last was that one (a folded line that
                    follows it changes its value) */
  bool chunked;  /* that header says exactly "chunked", as libevent reads it */
  bool last_bad; /* in the body: the line libevent took last, read as a chunk
                    size the way libevent reads one, is not one */
  char front[REQ_LINES_FRONT]; /* the input's first bytes, front_len of them */
  size_t front_len;            /* <= REQ_LINES_FRONT */
  char taken[REQ_LINES_FRONT]; /* the bytes taken last, if not a line end: a
                                  line's content (or a run of data) */
  size_t taken_len;            /* of them kept, <= REQ_LINES_FRONT */
  bool taken_cut;              /* more were taken than kept */
};

void req_lines_reset(struct req_lines *t);

/* Whether the front kept may be missing bytes of its first line (it is shorter
 * than the cap and holds no line end): then bytes added to the input matter. */
bool req_lines_wants_front(const struct req_lines *t);

/* The input now starts with p[0..len) (borrowed; len may be more than is kept). */
void req_lines_front(struct req_lines *t, const char *p, size_t len);

/* libevent took n bytes from the front of the input. It takes a line in two
 * steps (evbuffer_readln): its content, if any, then its end ("\n" or "\r\n");
 * a run of data (a chunk's, a body's) in one. Call req_lines_front with the new
 * front afterwards. */
void req_lines_took(struct req_lines *t, size_t n);

/* Whether a 413 from libevent now is for a chunked body it could not read (a
 * malformed chunk size or trailer line), not one over the limit: the request said
 * Transfer-Encoding: chunked and the last thing libevent took is no chunk size. */
bool req_lines_bad_chunk(const struct req_lines *t);

#endif
