/* turnd's command line: the contract other programs start turnd with. */
#ifndef TURND_OPTIONS_H
#define TURND_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct options {
  char listen_host[256];       /* from --listen HOST:PORT; IPv6 without brackets */
  uint16_t listen_port;        /* 0: the system picks a free port */
  const char *data_dir;        /* --data, default ./data */
  const char *model;           /* --model: demo (default), script:FILE, anthropic:ID,
                                  openai:ID */
  const char *system_file;     /* --system FILE, or NULL */
  uint32_t max_tokens;         /* --max-tokens, default 4096 */
  uint32_t reply_timeout_s;    /* --reply-timeout, default 600 */
  uint32_t stall_timeout_s;    /* --stall-timeout, default 60 */
  uint32_t max_model_calls;    /* --max-model-calls, default 20 */
  uint64_t max_total_tokens;   /* --max-total-tokens, default 0: no limit */
  uint32_t coalesce_ms;        /* --coalesce-ms, default 15 */
  const char *tools;           /* --tools, default "demo" */
  uint32_t retain_s;           /* --retain, default 300 */
  uint32_t approval_timeout_s; /* --approval-timeout, default 300 */
  uint32_t client_timeout_s;   /* --client-timeout, default 30 */
  uint32_t reader_timeout_s;   /* --reader-timeout, default 150 */
  uint32_t max_connections;    /* --max-connections; 0 (the default): half the
                                  descriptors turnd may open, at most 16384
                                  (server.c) */
  uint32_t live_memory_mib;    /* --live-memory, default 256: MiB of events that
                                  live turns keep in memory in all */
  uint32_t lock_after_s;       /* --lock-after, default 0: never */
  const char *step_up_effects; /* --step-up-effects, default "physical"; "none" */
  bool no_auth;                /* --no-auth: loopback only, everyone is the owner */
};

/* Fills o from argv (borrows argv). On a bad command line writes why to err (cap
 * bytes, NUL-terminated) and returns false; "--help" returns false with err "". */
bool options_parse(struct options *o, int argc, char **argv, char *err, size_t cap);

/* True when the listen host is a loopback address (127.0.0.0/8, ::1, localhost):
 * the only kind --no-auth may serve, since then whoever reaches turnd is taken
 * for the owner. */
bool options_listen_is_loopback(const struct options *o);

extern const char options_usage[];

#endif
