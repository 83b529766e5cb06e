/* bench-request: how long turnd takes to build one model request, by the size of
 * the session's history. Before every model call turnd checks the stored
 * conversation (convo_repair) and turns it into the provider's body; both parse
 * and write every message. This is most of the work turnd's builder thread
 * does off the loop (src/turnd/request_build.h; it also reads the messages from
 * the store); the figures say how long the loop would stall otherwise.
 *
 * A session here is N exchanges, each four messages as turnd stores them: the
 * user's question, a reply of 2 KiB text with a tool call, the tool's result of
 * 1 KiB, and a closing reply of 2 KiB. Each size is built REPEAT times and the
 * median reported, for both providers' bodies.
 *
 * usage: bench-request [EXCHANGES...]   (default 10 100 500) */
#include "agent/convo.h"
#include "agent/provider.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPEAT       9
#define REPLY_BYTES  2048
#define RESULT_BYTES 1024

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Words, so that the text is like a model's rather than one repeated byte. */
static void fill_text(char *out, size_t len) {
  static const char *const words[] = {"the", "store", "keeps", "every",   "message",
                                      "and", "a",     "reply", "streams", "tokens"};
  size_t at = 0, w = 0;
  while (at < len) {
    const char *word = words[w++ % (sizeof words / sizeof words[0])];
    for (size_t i = 0; word[i] != '\0' && at < len; i++)
      out[at++] = word[i];
    if (at < len) out[at++] = ' ';
  }
  out[len] = '\0';
}

/* The session's stored messages: exchanges * 4 of them, each malloc'd. */
static char **session(size_t exchanges, size_t *n, size_t *bytes) {
  static char reply[REPLY_BYTES + 1], result[RESULT_BYTES + 1];
  fill_text(reply, REPLY_BYTES);
  fill_text(result, RESULT_BYTES);
  char **m = calloc(exchanges * 4, sizeof *m);
  char line[8192];
  *n = 0;
  *bytes = 0;
  for (size_t i = 0; m != NULL && i < exchanges; i++) {
    int k[4];
    k[0] = snprintf(line, sizeof line,
                    "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":"
                    "\"question %zu: what does the log say?\"}]}",
                    i);
    m[(*n)++] = strdup(line);
    k[1] = snprintf(line, sizeof line,
                    "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":"
                    "\"%s\"},{\"type\":\"tool_use\",\"id\":\"toolu_%zu\",\"name\":"
                    "\"read_log\",\"input\":{\"lines\":40}}]}",
                    reply, i);
    m[(*n)++] = strdup(line);
    k[2] =
        snprintf(line, sizeof line,
                 "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
                 "\"tool_use_id\":\"toolu_%zu\",\"content\":\"%s\",\"is_error\":false}]}",
                 i, result);
    m[(*n)++] = strdup(line);
    k[3] = snprintf(line, sizeof line,
                    "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":"
                    "\"%s\"}]}",
                    reply);
    m[(*n)++] = strdup(line);
    for (int j = 0; j < 4; j++)
      *bytes += (size_t)k[j];
  }
  return m;
}

static void free_messages(char **m, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(m[i]);
  free(m);
}

/* One build as turnd's builder does it; returns its time in ms, -1 on failure. */
static double build_once(size_t exchanges, bool openai) {
  size_t n, bytes;
  char **m = session(exchanges, &n, &bytes);
  struct provider_tool tool = {"read_log", "Reads the last lines of the log.",
                               "{\"type\":\"object\",\"properties\":{\"lines\":"
                               "{\"type\":\"integer\",\"minimum\":1}}}"};
  double t0 = now_ms();
  convo_repair(&m, &n);
  struct provider_request req = {
      .model = "bench-model",
      .system = "You are a careful assistant.",
      .messages = (const char *const *)m,
      .n_messages = n,
      .tools = &tool,
      .n_tools = 1,
      .max_tokens = 4096,
  };
  char *body = openai ? provider_openai_body(&req) : provider_anthropic_body(&req);
  double took = now_ms() - t0;
  bool ok = body != NULL;
  free(body);
  free_messages(m, n);
  return ok ? took : -1;
}

int main(int argc, char **argv) {
  static const size_t defaults[] = {10, 100, 500};
  size_t sizes[16], n_sizes = 0;
  for (int i = 1; i < argc && n_sizes < 16; i++) {
    char *end;
    unsigned long v = strtoul(argv[i], &end, 10);
    if (*end != '\0' || v == 0 || v > 100000) {
      fprintf(stderr, "usage: bench-request [EXCHANGES...] (each 1..100000)\n");
      return 2;
    }
    sizes[n_sizes++] = v;
  }
  if (n_sizes == 0)
    for (; n_sizes < sizeof defaults / sizeof defaults[0]; n_sizes++)
      sizes[n_sizes] = defaults[n_sizes];
  printf("building one model request (convo_repair + body), median of %d:\n", REPEAT);
  for (size_t s = 0; s < n_sizes; s++) {
    size_t n, bytes;
    char **sample = session(sizes[s], &n, &bytes); /* its size, for the report */
    free_messages(sample, n);
    for (int openai = 0; openai <= 1; openai++) {
      double t[REPEAT];
      for (int r = 0; r < REPEAT; r++) {
        if ((t[r] = build_once(sizes[s], openai)) < 0) {
          fprintf(stderr, "bench-request: a body could not be built\n");
          return 1;
        }
      }
      qsort(t, REPEAT, sizeof t[0], compare);
      printf("  %5zu exchanges (%5zu messages, %6.0f KiB)  %-9s %8.2f ms  (%.0f MB/s)\n",
             sizes[s], n, (double)bytes / 1024, openai ? "openai" : "anthropic",
             t[REPEAT / 2], (double)bytes / 1e6 / (t[REPEAT / 2] / 1e3));
    }
  }
  return 0;
}
