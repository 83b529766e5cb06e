/* The daemon's state: everything a route handler may reach, owned by main. */
#ifndef TURND_DAEMON_H
#define TURND_DAEMON_H

#include "agent/agent.h"
#include "agent/provider.h"
#include "agent/script.h"
#include "agent/tools.h"
#include "idmap.h"
#include "options.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event;
struct event_base;
struct run;
struct session;
struct store;
struct model_http;
struct request_builder;
struct store_reader;
struct auth;
struct guard;
struct tools_config;

/* The model of --model when it is a provider's. */
struct model_config {
  bool external; /* anthropic:ID or openai:ID; else the script model */
  enum provider_kind kind;
  const char *model_id; /* the ID, borrowed from the command line */
  char *url;            /* the endpoint (owned) */
  char *api_key;        /* owned; NULL: none is sent */
  bool openai_own_api;  /* openai: at api.openai.com (see provider_request) */
  char *system;         /* --system's text (owned), or NULL */
};

struct turnd {
  struct event_base *base;    /* the one loop */
  const struct options *opt;  /* borrowed from main */
  struct script script;       /* the script model (demo or --model script:FILE) */
  struct model_config model;  /* a provider's model, when --model names one */
  struct model_http *mh;      /* owned: model calls over HTTP, when external */
  struct request_builder *rb; /* owned: builds model requests and histories */
  struct store_reader *request_reader; /* owned: the builder's connection to the store */
  struct tools_config *tools_config;   /* owned: the owner's tools, from --tools files */
  struct toolset toolset;   /* every tool a model may call (demo and the owner's) */
  struct run *runs;         /* live and recently ended turns, newest first */
  struct run *closing;      /* released runs, freed at the end of the iteration */
  struct run *ended_first;  /* ended runs still in memory, oldest first ... */
  struct run *ended_last;   /* ... and newest: the --retain window by bytes */
  struct session *sessions; /* every session; see run/run.h */
  struct idmap session_ids; /* session id -> struct session */
  struct idmap run_ids;     /* run id -> struct run, for runs on the list above */
  struct store *store;      /* owned; written through run_persist.c only */
  struct event *commit_ev;  /* owned: the end-of-iteration hand-over (run_persist.c) */
  struct event *reap_ev;    /* owned: the store's writer committed (run_persist.c) */
  bool commit_armed;        /* commit_ev is active */
  struct run *dirty;        /* runs with events not yet in the store */
  struct run *handed;       /* runs with events queued for the next hand-over */
  struct run *barrier;      /* runs waiting for the store before a model call */
  size_t ended_bytes;       /* memory of ended runs still kept (kept_bytes) */
  size_t live_bytes;        /* memory of live runs' logs (live_counted) */
  struct run *paused;       /* runs whose pump waits for the store (run.c) */
  bool commit_urgent;       /* the next hand-over is committed without delay */
  struct event *trim_ev;    /* owned: gives freed memory back to the system */
  struct auth *auth;        /* owned: the paired devices (auth.h) */
  struct guard *guard;      /* owned: the owner guard (auth/auth.h) */
  struct agent_guard guard_view; /* the guard's state every agent reads (auth/auth.h) */
  bool draining;                 /* told to stop: running turns end, no new one starts */
  bool stopping; /* the loop has ended: what comes back now is not answered */
};

#endif
