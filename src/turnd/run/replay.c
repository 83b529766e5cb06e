/* A turn's recorded lines read back from the store (see run.h), a slice at
 * a time: the store is never read for more than about REPLAY_SLICE bytes at
 * once. */
#include "run.h"

#include "daemon.h"
#include "store/store.h"

#include <event2/buffer.h>
#include <string.h>

#define REPLAY_SLICE (64u * 1024u)

struct slice {
  struct evbuffer *out;
  uint64_t next_seq; /* advanced past each line taken */
  uint64_t stop_seq; /* lines from this seq on are not taken */
  int failed;
};

/* Takes the lines of a chunk at or after next_seq; stops once the slice is full. */
static int take_chunk(void *ctx, const char *turn, uint64_t first_seq, uint64_t n,
                      uint64_t at_ms, const char *lines, size_t len) {
  (void)turn;
  (void)at_ms;
  struct slice *sl = ctx;
  const char *p = lines, *end = lines + len;
  for (uint64_t seq = first_seq; seq < first_seq + n && p < end; seq++) {
    if (seq >= sl->stop_seq) return 1;
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *next = nl != NULL ? nl + 1 : end;
    if (seq == sl->next_seq) {
      if (evbuffer_add(sl->out, p, (size_t)(next - p)) != 0) {
        sl->failed = 1;
        return 1;
      }
      sl->next_seq++;
    }
    p = next;
  }
  return evbuffer_get_length(sl->out) >= REPLAY_SLICE ? 1 : 0;
}

int replay_slice(struct turnd *d, const char *turn, uint64_t *next_seq, uint64_t stop_seq,
                 struct evbuffer *out) {
  struct slice sl = {out, *next_seq, stop_seq, 0};
  if (store_turn_events_each(d->store, turn, *next_seq, take_chunk, &sl) < 0 || sl.failed)
    return -1;
  *next_seq = sl.next_seq;
  return 0;
}
