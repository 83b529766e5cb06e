/* load_answer: the framing of one HTTP/1.1 answer, byte by byte where the framing
 * is (head, chunk sizes, CRLFs, trailers) and span by span where the body is, so
 * the body costs one callback per span and not per byte. States are in
 * load_answer.h; every move goes through set_state(). */
#include "load_answer.h"

#include <assert.h>
#include <string.h>
#include <strings.h>

#define CHUNK_SIZE_DIGITS 15 /* hex digits: 2^60 bytes is far past any chunk */

static void set_state(struct load_answer *a, enum load_answer_state s) {
  a->state = s;
  a->n = 0;
}

void load_answer_init(struct load_answer *a) {
  a->state = LOAD_ANSWER_HEAD;
  a->status = 0;
  a->keep_alive = false;
  a->chunked = false;
  a->has_length = false;
  a->left = 0;
  a->n = 0;
  a->received = 0;
  a->head_len = 0;
}

/* True when the header value v[0..len) ends with the token tok, any case. */
static bool ends_with_token(const char *v, size_t len, const char *tok) {
  size_t tlen = strlen(tok);
  while (len > 0 && (v[len - 1] == ' ' || v[len - 1] == '\t'))
    len--;
  if (len < tlen || strncasecmp(v + len - tlen, tok, tlen) != 0) return false;
  return len == tlen || v[len - tlen - 1] == ' ' || v[len - tlen - 1] == ',';
}

/* Reads one header line; returns false for a malformed Content-Length. */
static bool header(struct load_answer *a, const char *line, size_t len) {
  const char *colon = memchr(line, ':', len);
  if (colon == NULL) return true; /* not ours to judge: ignore it */
  size_t name_len = (size_t)(colon - line);
  const char *v = colon + 1;
  size_t vlen = len - name_len - 1;
  while (vlen > 0 && (*v == ' ' || *v == '\t')) {
    v++;
    vlen--;
  }
  if (name_len == 17 && strncasecmp(line, "transfer-encoding", 17) == 0) {
    a->chunked = ends_with_token(v, vlen, "chunked");
  } else if (name_len == 14 && strncasecmp(line, "content-length", 14) == 0) {
    uint64_t n = 0;
    size_t i = 0;
    for (; i < vlen && v[i] >= '0' && v[i] <= '9' && i < 18; i++)
      n = n * 10 + (uint64_t)(v[i] - '0');
    if (i == 0) return false;
    a->has_length = true;
    a->left = n;
  } else if (name_len == 10 && strncasecmp(line, "connection", 10) == 0) {
    if (ends_with_token(v, vlen, "close")) a->keep_alive = false;
    if (ends_with_token(v, vlen, "keep-alive")) a->keep_alive = true;
  }
  return true;
}

/* The head is complete (head[0..head_len) ends with the empty line): reads the
 * status line and the headers and picks the body's framing. */
static void end_head(struct load_answer *a) {
  const char *p = a->head, *end = a->head + a->head_len;
  const char *eol = memchr(p, '\n', (size_t)(end - p));
  /* "HTTP/1.x SSS": 1.1 keeps the connection unless told otherwise, 1.0 closes. */
  if (eol == NULL || eol - p < 12 || memcmp(p, "HTTP/1.", 7) != 0 || p[8] != ' ' ||
      p[9] < '1' || p[9] > '5' || p[10] < '0' || p[10] > '9' || p[11] < '0' ||
      p[11] > '9') {
    set_state(a, LOAD_ANSWER_ERROR);
    return;
  }
  a->keep_alive = p[7] == '1';
  a->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
  for (p = eol + 1; p < end;) {
    eol = memchr(p, '\n', (size_t)(end - p));
    size_t len = (size_t)(eol - p);
    if (len > 0 && p[len - 1] == '\r') len--;
    if (len > 0 && !header(a, p, len)) {
      set_state(a, LOAD_ANSWER_ERROR);
      return;
    }
    p = eol + 1;
  }
  if (a->status == 204 || a->status == 304 || (a->status >= 100 && a->status < 200)) {
    set_state(a, LOAD_ANSWER_DONE);
  } else if (a->chunked) {
    set_state(a, LOAD_ANSWER_CHUNK_SIZE);
    a->left = 0; /* the size is summed here; a Content-Length beside it is void */
  } else if (a->has_length) {
    uint64_t left = a->left;
    set_state(a, left == 0 ? LOAD_ANSWER_DONE : LOAD_ANSWER_BODY_LEN);
    a->left = left;
  } else {
    a->keep_alive = false; /* the close is what ends the body */
    set_state(a, LOAD_ANSWER_BODY_EOF);
  }
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* One byte of framing, in any state but the body's. */
static void framing_byte(struct load_answer *a, char c) {
  switch (a->state) {
  case LOAD_ANSWER_HEAD:
    if (a->head_len == LOAD_ANSWER_HEAD_MAX) {
      set_state(a, LOAD_ANSWER_ERROR);
      return;
    }
    a->head[a->head_len++] = c;
    /* The head ends at an empty line: two LFs with nothing but a CR between. */
    if (c == '\n' && ++a->n == 2)
      end_head(a);
    else if (c != '\n' && c != '\r')
      a->n = 0;
    return;
  case LOAD_ANSWER_CHUNK_SIZE: {
    int v = hex_value(c);
    if (v >= 0 && a->n < CHUNK_SIZE_DIGITS) {
      a->left = a->left * 16 + (uint64_t)v;
      a->n++;
      return;
    }
    if (a->n == 0 || v >= 0) {
      set_state(a, LOAD_ANSWER_ERROR);
      return;
    }
    uint64_t size = a->left;
    if (c == '\n') {
      set_state(a, size == 0 ? LOAD_ANSWER_TRAILER : LOAD_ANSWER_CHUNK_DATA);
      a->left = size;
    } else {
      set_state(a, LOAD_ANSWER_CHUNK_EXT);
      a->left = size;
    }
    return;
  }
  case LOAD_ANSWER_CHUNK_EXT:
    if (c == '\n') {
      uint64_t size = a->left;
      set_state(a, size == 0 ? LOAD_ANSWER_TRAILER : LOAD_ANSWER_CHUNK_DATA);
      a->left = size;
    }
    return;
  case LOAD_ANSWER_CHUNK_END:
    if (c == '\r' && a->n == 0) {
      a->n = 1;
    } else if (c == '\n') {
      set_state(a, LOAD_ANSWER_CHUNK_SIZE);
      a->left = 0;
    } else {
      set_state(a, LOAD_ANSWER_ERROR);
    }
    return;
  case LOAD_ANSWER_TRAILER:
    if (c == '\n') {
      if (a->n == 0) set_state(a, LOAD_ANSWER_DONE);
      a->n = 0;
    } else if (c != '\r') {
      a->n++;
    }
    return;
  default:
    assert(0 && "framing_byte in a body state");
    return;
  }
}

enum load_answer_state load_answer_feed(struct load_answer *a, const char *data,
                                        size_t len, size_t *used, load_answer_body_cb cb,
                                        void *ctx) {
  size_t i = 0;
  while (i < len && a->state != LOAD_ANSWER_DONE && a->state != LOAD_ANSWER_ERROR) {
    switch (a->state) {
    case LOAD_ANSWER_CHUNK_DATA:
    case LOAD_ANSWER_BODY_LEN:
    case LOAD_ANSWER_BODY_EOF: {
      size_t n = len - i;
      if (a->state != LOAD_ANSWER_BODY_EOF && a->left < n) n = (size_t)a->left;
      cb(ctx, data + i, n);
      i += n;
      if (a->state == LOAD_ANSWER_BODY_EOF) break;
      a->left -= n;
      if (a->left == 0)
        set_state(a, a->state == LOAD_ANSWER_CHUNK_DATA ? LOAD_ANSWER_CHUNK_END
                                                        : LOAD_ANSWER_DONE);
      break;
    }
    default:
      framing_byte(a, data[i++]);
      break;
    }
  }
  a->received += i;
  *used = i;
  return a->state;
}

enum load_answer_state load_answer_eof(struct load_answer *a) {
  if (a->state == LOAD_ANSWER_BODY_EOF)
    set_state(a, LOAD_ANSWER_DONE);
  else if (a->state != LOAD_ANSWER_DONE)
    set_state(a, LOAD_ANSWER_ERROR);
  return a->state;
}
