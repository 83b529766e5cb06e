/* Parsing turnd's command line. Every option is checked here, before anything
 * starts, so a typo stops turnd with a message instead of running it wrongly. */
#include "options.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char options_usage[] =
    "usage: turnd [--listen HOST:PORT] [--data DIR] [--model NAME] [--tools NAME]\n"
    "             [--retain SECONDS] [--approval-timeout SECONDS] [--system FILE]\n"
    "             [--max-tokens N] [--reply-timeout SECONDS] [--stall-timeout SECONDS]\n"
    "             [--max-model-calls N] [--max-total-tokens N] [--coalesce-ms MS]\n"
    "             [--lock-after SECONDS] [--step-up-effects LIST]\n"
    "             [--client-timeout SECONDS] [--reader-timeout SECONDS]\n"
    "             [--max-connections N]\n"
    "             [--live-memory MIB] [--no-auth]\n"
    "       turnd pair|devices|unpair|pair-code|set-pin --data DIR ...  (turnd pair "
    "--help)\n"
    "  --listen            address to serve on (default 127.0.0.1:8080; port 0 picks a\n"
    "                      free port)\n"
    "  --data              folder for the store (default ./data)\n"
    "  --model             demo (default), script:FILE, anthropic:MODEL_ID (key from\n"
    "                      ANTHROPIC_API_KEY, URL from ANTHROPIC_BASE_URL) or\n"
    "                      openai:MODEL_ID (OpenAI-compatible: OPENAI_API_KEY, optional\n"
    "                      for a local server, and OPENAI_BASE_URL)\n"
    "  --system            the system prompt sent with every model call, from FILE\n"
    "  --max-tokens        a provider's output limit per model call (default 4096)\n"
    "  --reply-timeout     seconds a model may stay silent before its reply begins,\n"
    "                      thinking unseen or reading a long prompt (default 600)\n"
    "  --stall-timeout     seconds a reply may then stay silent (default 60)\n"
    "  --max-model-calls   model calls in one turn; more ends it with limit_turns\n"
    "                      (default 20)\n"
    "  --max-total-tokens  tokens (input + output) of one turn's calls; reaching it\n"
    "                      ends the turn with limit_total_tokens (default 0: none)\n"
    "  --coalesce-ms       a provider's text deltas that come this soon after the one\n"
    "                      before, and the last one sent, go out together (default\n"
    "                      15; 0: each at once)\n"
    "  --tools             demo (default), a tools file, or both: demo,FILE\n"
    "  --retain            seconds a finished turn stays in memory (default 300)\n"
    "  --live-memory       MiB of events live turns keep in memory in all; past it, a\n"
    "                      turn's readers that are behind read from the store and a\n"
    "                      script's turns wait for it (default 256, at least 16)\n"
    "  --approval-timeout  seconds an approval waits for the owner (default 300)\n"
    "  --lock-after        lock after this many seconds without a request from a\n"
    "                      paired device (default 0: never; needs a PIN)\n"
    "  --step-up-effects   tool effects whose approval needs the PIN, comma-separated\n"
    "                      (default physical; none: no step-up)\n"
    "  --client-timeout    seconds a client has to send a whole request, or may send\n"
    "                      nothing before its next one (default 30)\n"
    "  --reader-timeout    seconds a client may take nothing of an answer while bytes\n"
    "                      wait for it (default 150: turnd sees a slow reader's reads\n"
    "                      only as its TCP acknowledges them; a stream with nothing\n"
    "                      to send has no limit)\n"
    "  --max-connections   connections open at once; past them a new one is answered\n"
    "                      503 (default: half the descriptors turnd may open, at\n"
    "                      most 16384)\n"
    "  --no-auth           no tokens: whoever reaches turnd is the owner; loopback\n"
    "                      addresses only\n";

static bool parse_u32(const char *s, uint32_t max, uint32_t *out) {
  if (s == NULL || *s < '0' || *s > '9') return false;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno != 0 || *end != '\0' || v > max) return false;
  *out = (uint32_t)v;
  return true;
}

/* HOST:PORT, [V6]:PORT or V6 with the port after the last colon. */
static bool parse_listen(struct options *o, const char *s) {
  const char *colon = strrchr(s, ':');
  if (colon == NULL || colon == s) return false;
  const char *host = s;
  size_t host_len = (size_t)(colon - s);
  if (host[0] == '[') {
    if (host_len < 3 || host[host_len - 1] != ']') return false;
    host++;
    host_len -= 2;
  }
  if (host_len >= sizeof o->listen_host) return false;
  uint32_t port;
  if (!parse_u32(colon + 1, 65535, &port)) return false;
  memcpy(o->listen_host, host, host_len);
  o->listen_host[host_len] = '\0';
  o->listen_port = (uint16_t)port;
  return true;
}

static bool has_value(const char *m, const char *prefix) {
  size_t n = strlen(prefix);
  return strncmp(m, prefix, n) == 0 && m[n] != '\0';
}

static bool model_name_ok(const char *m) {
  return strcmp(m, "demo") == 0 || has_value(m, "script:") ||
         has_value(m, "anthropic:") || has_value(m, "openai:");
}

/* A comma list of effect names (letters, digits, '_', '-'), at most 16, or "none". */
static bool effects_ok(const char *s) {
  if (strcmp(s, "none") == 0) return true;
  size_t n = 1, len = 0;
  for (const char *p = s;; p++) {
    if (*p == ',' || *p == '\0') {
      if (len == 0 || n > 16) return false;
      if (*p == '\0') return true;
      n++;
      len = 0;
    } else if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
               (*p >= '0' && *p <= '9') || *p == '_' || *p == '-') {
      len++;
    } else {
      return false;
    }
  }
}

bool options_parse(struct options *o, int argc, char **argv, char *err, size_t cap) {
  memset(o, 0, sizeof *o);
  memcpy(o->listen_host, "127.0.0.1", 10);
  o->listen_port = 8080;
  o->data_dir = "./data";
  o->model = "demo";
  o->tools = "demo";
  o->retain_s = 300;
  o->approval_timeout_s = 300;
  o->client_timeout_s = 30;
  o->reader_timeout_s = 150;
  o->live_memory_mib = 256;
  o->max_tokens = 4096;
  o->reply_timeout_s = 600;
  o->stall_timeout_s = 60;
  o->max_model_calls = 20;
  o->coalesce_ms = 15;
  o->step_up_effects = "physical";
  err[0] = '\0';
  for (int i = 1; i < argc; i++) {
    const char *opt = argv[i];
    if (strcmp(opt, "--help") == 0 || strcmp(opt, "-h") == 0) return false;
    if (strcmp(opt, "--no-auth") == 0) {
      o->no_auth = true;
      continue;
    }
    const char *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (val == NULL) {
      snprintf(err, cap, "%s needs a value", opt);
      return false;
    }
    i++;
    bool ok = true;
    if (strcmp(opt, "--listen") == 0) {
      ok = parse_listen(o, val);
    } else if (strcmp(opt, "--data") == 0) {
      ok = val[0] != '\0';
      o->data_dir = val;
    } else if (strcmp(opt, "--model") == 0) {
      ok = model_name_ok(val);
      o->model = val;
    } else if (strcmp(opt, "--tools") == 0) {
      ok = val[0] != '\0'; /* demo, a tools file, or both: main reads them */
      o->tools = val;
    } else if (strcmp(opt, "--retain") == 0) {
      ok = parse_u32(val, 7 * 24 * 3600, &o->retain_s);
    } else if (strcmp(opt, "--system") == 0) {
      ok = val[0] != '\0';
      o->system_file = val;
    } else if (strcmp(opt, "--max-tokens") == 0) {
      ok = parse_u32(val, 1u << 20, &o->max_tokens) && o->max_tokens > 0;
    } else if (strcmp(opt, "--reply-timeout") == 0) {
      ok = parse_u32(val, 24 * 3600, &o->reply_timeout_s) && o->reply_timeout_s > 0;
    } else if (strcmp(opt, "--stall-timeout") == 0) {
      ok = parse_u32(val, 3600, &o->stall_timeout_s) && o->stall_timeout_s > 0;
    } else if (strcmp(opt, "--max-model-calls") == 0) {
      ok = parse_u32(val, 10000, &o->max_model_calls) && o->max_model_calls > 0;
    } else if (strcmp(opt, "--max-total-tokens") == 0) {
      uint32_t v; /* parse_u32 sets it only on success: read it only then */
      ok = parse_u32(val, UINT32_MAX, &v);
      if (ok) o->max_total_tokens = v;
    } else if (strcmp(opt, "--coalesce-ms") == 0) {
      ok = parse_u32(val, 1000, &o->coalesce_ms);
    } else if (strcmp(opt, "--client-timeout") == 0) {
      ok = parse_u32(val, 3600, &o->client_timeout_s) && o->client_timeout_s > 0;
    } else if (strcmp(opt, "--reader-timeout") == 0) {
      ok = parse_u32(val, 24 * 3600, &o->reader_timeout_s) && o->reader_timeout_s > 0;
    } else if (strcmp(opt, "--max-connections") == 0) {
      ok = parse_u32(val, 1u << 20, &o->max_connections) && o->max_connections > 0;
    } else if (strcmp(opt, "--live-memory") == 0) {
      ok = parse_u32(val, 1u << 20, &o->live_memory_mib) && o->live_memory_mib >= 16;
    } else if (strcmp(opt, "--approval-timeout") == 0) {
      ok = parse_u32(val, 7 * 24 * 3600, &o->approval_timeout_s) &&
           o->approval_timeout_s > 0;
    } else if (strcmp(opt, "--lock-after") == 0) {
      ok = parse_u32(val, 30 * 24 * 3600, &o->lock_after_s);
    } else if (strcmp(opt, "--step-up-effects") == 0) {
      ok = effects_ok(val);
      o->step_up_effects = val;
    } else {
      snprintf(err, cap, "unknown option %s", opt);
      return false;
    }
    if (!ok) {
      snprintf(err, cap, "bad value for %s", opt);
      return false;
    }
  }
  return true;
}

bool options_listen_is_loopback(const struct options *o) {
  const char *h = o->listen_host;
  if (strcmp(h, "localhost") == 0) return true;
  struct in_addr v4;
  if (inet_pton(AF_INET, h, &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  struct in6_addr v6;
  if (inet_pton(AF_INET6, h, &v6) == 1)
    return memcmp(&v6, &in6addr_loopback, sizeof v6) == 0;
  return false;
}
