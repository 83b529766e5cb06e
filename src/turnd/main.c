/* turnd: the turn backend. Parses the command line, starts the HTTP server on
 * one event loop, says where it listens, and stops cleanly on SIGTERM or SIGINT. */
#include "auth/admin.h"
#include "auth/auth.h"
#include "auth/auth_db.h"
#include "daemon.h"
#include "http/server.h"
#include "loop_prio.h"
#include "model_config.h"
#include "options.h"
#include "run/model_http.h"
#include "request_build.h"
#include "run/run.h"
#include "run/tools_config.h"
#include "store/store.h"
#include "thread_sched.h"

#include <errno.h>
#include <event2/event.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>

/* SIGTERM, SIGINT: running turns end as interrupted, and the loop runs a moment
 * longer so that their readers get that end before turnd exits. A turn posted
 * in that moment is refused: it would start model calls and tools that the
 * exit then cuts off, and its reader would never get its end. */
static void on_stop_signal(evutil_socket_t sig, short events, void *arg) {
  (void)sig;
  (void)events;
  struct turnd *d = arg;
  d->draining = true;
  run_interrupt_all(d);
  guard_abandon_check(d);
  struct timeval drain = {0, 200 * 1000};
  event_base_loopexit(d->base, &drain);
}

/* Creates dir and its parents when missing. */
static int make_dirs(const char *dir) {
  char path[4096];
  size_t len = strlen(dir);
  if (len == 0 || len >= sizeof path) return -1;
  memcpy(path, dir, len + 1);
  for (char *p = path + 1; *p != '\0'; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(path, 0700) != 0 && errno != EEXIST) return -1;
    *p = '/';
  }
  if (mkdir(path, 0700) != 0 && errno != EEXIST) return -1;
  return 0;
}

#define SCRIPT_FILE_MAX (1u << 20) /* bytes of a script:FILE */

/* The script model of --model: the built-in demo or script:FILE. */
static int load_model(struct script *s, const char *model) {
  char err[200];
  if (strcmp(model, "demo") == 0) {
    if (script_parse(s, script_demo, strlen(script_demo), err, sizeof err) == 0) return 0;
    fprintf(stderr, "turnd: the demo script is broken: %s\n", err);
    return -1;
  }
  const char *path = model + strlen("script:");
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "turnd: cannot read the script %s: %s\n", path, strerror(errno));
    return -1;
  }
  /* One byte more than the limit, so that a script of exactly 1 MiB is taken. */
  static char text[SCRIPT_FILE_MAX + 1];
  size_t len = fread(text, 1, sizeof text, f);
  bool too_big = len > SCRIPT_FILE_MAX;
  fclose(f);
  if (too_big) {
    fprintf(stderr, "turnd: the script %s is over 1 MiB\n", path);
    return -1;
  }
  if (script_parse(s, text, len, err, sizeof err) != 0) {
    fprintf(stderr, "turnd: the script %s: %s\n", path, err);
    return -1;
  }
  return 0;
}

/* --tools: "demo", a tools file, or both ("demo,FILE"): every tool a model may
 * call, the file's run as programs. */
static int load_tools(struct turnd *d, const char *spec) {
  toolset_init(&d->toolset);
  char list[4096];
  if (strlen(spec) >= sizeof list) {
    fprintf(stderr, "turnd: --tools is too long\n");
    return -1;
  }
  memcpy(list, spec, strlen(spec) + 1);
  bool have_file = false, have_demo = false;
  const char *file = NULL;
  for (char *item = list, *comma; item != NULL; item = comma != NULL ? comma + 1 : NULL) {
    if ((comma = strchr(item, ',')) != NULL) *comma = '\0';
    if (item[0] == '\0') {
      fprintf(stderr, "turnd: --tools has an empty item (it takes demo, a tools file, "
                      "or demo,FILE)\n");
      return -1;
    }
    if (strcmp(item, "demo") == 0) {
      if (have_demo) {
        fprintf(stderr, "turnd: --tools names demo twice\n");
        return -1;
      }
      have_demo = true;
      if (toolset_add_demo(&d->toolset) != 0) {
        fprintf(stderr, "turnd: %s: a tool has the name of a demo tool\n",
                file != NULL ? file : "--tools");
        return -1;
      }
      continue;
    }
    if (have_file) {
      fprintf(stderr, "turnd: --tools takes one tools file\n");
      return -1;
    }
    have_file = true;
    file = item;
    char err[512];
    d->tools_config = calloc(1, sizeof *d->tools_config);
    if (d->tools_config == NULL ||
        tools_config_load(d->tools_config, item, err, sizeof err) != 0) {
      if (d->tools_config == NULL) snprintf(err, sizeof err, "out of memory");
      fprintf(stderr, "turnd: %s\n", err);
      return -1;
    }
    for (size_t i = 0; i < d->tools_config->n; i++) {
      const struct tool_config *t = &d->tools_config->tools[i];
      if (toolset_add(&d->toolset, t->name, t->description, t->input_schema, t->tier,
                      t->effect, TOOL_EXTERNAL, i) != 0) {
        fprintf(stderr,
                "turnd: %s: the tool %s is named twice (a demo tool has that name)\n",
                item, t->name);
        return -1;
      }
    }
  }
  return 0;
}

static void free_tools(struct turnd *d) {
  toolset_fini(&d->toolset);
  if (d->tools_config != NULL) tools_config_free(d->tools_config);
  free(d->tools_config);
  d->tools_config = NULL;
}

/* Frees what main() set up before the server: the sessions, the model, the
 * tools and the loop. Whatever uses them (server, store, builder) is stopped
 * first. */
static void free_loaded(struct turnd *d, struct event_base *base) {
  session_free_all(d);
  script_free(&d->script);
  model_http_free(d->mh);
  model_config_free(&d->model);
  free_tools(d);
  event_base_free(base);
}

static bool still_paired(void *ctx, int64_t device) {
  return auth_device_paired(ctx, device);
}

/* An admin command changed auth.db: the streams of unpaired devices stop, and
 * `turnd set-pin` may have been the change. */
static void auth_changed(struct turnd *d) {
  guard_pin_set(d);
  run_drop_followers(d, still_paired, d);
}

/* Sets up who may get in, once the address is known, and prints where turnd
 * listens and a pairing link for the owner's first device. */
static int start_auth(struct turnd *d, const struct options *opt, uint16_t port) {
  bool v6 = strchr(opt->listen_host, ':') != NULL;
  char url[300];
  snprintf(url, sizeof url, "http://%s%s%s:%u", v6 ? "[" : "", opt->listen_host,
           v6 ? "]" : "", (unsigned)port);
  /* Every address is no address to open: the links name this machine's
   * loopback, which the owner can change for the address others reach. */
  const char *link_host = strcmp(opt->listen_host, "0.0.0.0") == 0 ? "127.0.0.1"
                          : strcmp(opt->listen_host, "::") == 0    ? "::1"
                                                                   : opt->listen_host;
  char link_url[300];
  snprintf(link_url, sizeof link_url, "http://%s%s%s:%u", v6 ? "[" : "", link_host,
           v6 ? "]" : "", (unsigned)port);
  if (auth_start(d, link_url, auth_changed) != 0 || guard_start(d) != 0) return -1;
  printf("listening on %s\n", url);
  char link[400];
  if (opt->no_auth) {
    printf("no auth (--no-auth): whoever reaches this address is the owner\n");
  } else if (admin_pair_link(d->auth->db, link, sizeof link) == 0) {
    /* The link last, where someone who just started turnd at a terminal finds
     * it: what is said about it comes first (stdout is line-buffered there; to a
     * pipe both lines go in one write, as readers of the link expect). */
    fprintf(stderr,
            "turnd: the pairing link below works once, for %d minutes; `turnd "
            "pair-code --data %s` makes another\n",
            PAIR_CODE_TTL_S / 60, opt->data_dir);
    printf("pair a device: %s\n", link);
  }
  fflush(stdout);
  return 0;
}

/* The builder of model requests and history documents, and its own
 * connection to the store (which persist_start opened). */
static int start_builder(struct turnd *d) {
  if ((d->request_reader = store_reader_open(d->store)) == NULL ||
      (d->rb = request_builder_new(d->base, d)) == NULL) {
    fprintf(stderr,
            "turnd: cannot start the thread that builds requests and histories\n");
    return -1;
  }
  return 0;
}

/* Before the HTTP server goes: a history still being built comes back while
 * its request still exists (and is dropped, see d->stopping). */
static void stop_builder(struct turnd *d) {
  request_builder_free(d->rb); /* waits for a build under way */
  d->rb = NULL;
  store_reader_close(d->request_reader);
  d->request_reader = NULL;
}

int main(int argc, char **argv) {
  /* The tools turnd starts run as its user, who may read the memory of (and
   * trace) a process of theirs only while it is dumpable: turnd holds the
   * provider's key and the owner's credentials, and dumps no core either. */
  prctl(PR_SET_DUMPABLE, 0);
  if (argc > 1 && admin_is_command(argv[1])) return admin_main(argc - 1, argv + 1);
  struct options opt;
  char err[256];
  if (!options_parse(&opt, argc, argv, err, sizeof err)) {
    if (err[0] == '\0') {
      fputs(options_usage, stdout);
      return 0;
    }
    fprintf(stderr, "turnd: %s\n%s", err, options_usage);
    return 2;
  }
  if (opt.no_auth && !options_listen_is_loopback(&opt)) {
    fprintf(stderr,
            "turnd: refusing --no-auth on %s: anyone who can reach it could use "
            "it; without auth turnd listens on 127.0.0.1 or ::1 only\n",
            opt.listen_host);
    return 2;
  }
  if (make_dirs(opt.data_dir) != 0) {
    fprintf(stderr, "turnd: cannot create the data folder %s: %s\n", opt.data_dir,
            strerror(errno));
    return 1;
  }
  signal(SIGPIPE,
         SIG_IGN); /* a client gone mid-write is an error to handle, not a kill */
#ifdef __GLIBC__
  /* A big turn's buffers (its reply's message parts on the way to the store)
   * come and go in pieces of about a MiB. Each freed mapped one would make
   * glibc raise its mapping threshold, and put the next ones on the heap,
   * where freed memory stays resident after the turns are gone (2-3 MiB more
   * settled after 60 MiB turns). Fixed, the threshold keeps those mapped; the
   * heap's top is given back by the explicit trims after turns are released
   * (run.c, store_write.c) rather than after every free: a fixed trim
   * threshold of glibc's default cost the throughput load a fifth more CPU. */
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif

  /* With epoll's change list, a watch added and removed within one pass of the
   * loop costs no system call: a stream's chunk that leaves at once
   * (http_stream_write_now) is one write and nothing else. turnd never dup()s
   * a descriptor it watches, which is what the change list cannot tell. */
  struct event_config *cfg = event_config_new();
  if (cfg != NULL) event_config_set_flag(cfg, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
  /* libevent runs every ready callback of a priority before it looks for new
   * events: a hundred requests that arrived together would each start their
   * turn while the running streams' bytes wait for all of them. After each
   * callback below the stream's priority it looks again (loop_prio.h). */
  if (cfg != NULL &&
      event_config_set_max_dispatch_interval(cfg, NULL, 1, LOOP_PRIO_OTHER) != 0) {
    event_config_free(cfg);
    cfg = NULL; /* reported as the loop's failure just below */
  }
  struct event_base *base = cfg != NULL ? event_base_new_with_config(cfg) : NULL;
  if (cfg != NULL) event_config_free(cfg);
  if (base == NULL || event_base_priority_init(base, LOOP_PRIOS) != 0) {
    if (base != NULL) event_base_free(base);
    fprintf(stderr, "turnd: cannot create the event loop\n");
    return 1;
  }
  struct turnd d = {.base = base, .opt = &opt};
  if (load_tools(&d, opt.tools) != 0) {
    free_tools(&d);
    event_base_free(base);
    return 1;
  }
  int loaded = model_config_load(&d.model, &opt);
  model_config_forget_keys();
  if (loaded != 0) {
    free_tools(&d);
    event_base_free(base);
    return 1;
  }
  if (!d.model.external && load_model(&d.script, opt.model) != 0) {
    free_tools(&d);
    event_base_free(base);
    return 1;
  }
  if (d.model.external && (d.mh = model_http_new(base)) == NULL) {
    fprintf(stderr, "turnd: cannot set up libcurl for the model\n");
    model_config_free(&d.model);
    free_tools(&d);
    event_base_free(base);
    return 1;
  }
  struct server srv;
  if (persist_start(&d) != 0 || start_builder(&d) != 0 ||
      server_start(&srv, &d, base, &opt, routes_dispatch) != 0) {
    stop_builder(&d);
    persist_stop(&d);
    free_loaded(&d, base);
    return 1;
  }
  struct event *sigterm = evsignal_new(base, SIGTERM, on_stop_signal, &d);
  struct event *sigint = evsignal_new(base, SIGINT, on_stop_signal, &d);
  /* A stop is seen however busy the streams keep the loop (loop_prio.h). */
  if (sigterm == NULL || sigint == NULL ||
      event_priority_set(sigterm, LOOP_PRIO_STREAM) != 0 ||
      event_priority_set(sigint, LOOP_PRIO_STREAM) != 0 ||
      event_add(sigterm, NULL) != 0 || event_add(sigint, NULL) != 0) {
    fprintf(stderr, "turnd: cannot watch for signals\n");
    return 1;
  }
  int status = 0;
  if (start_auth(&d, &opt, srv.port) != 0) {
    status = 1;
    event_base_loopexit(base, NULL); /* what started is stopped below */
  }

  loop_thread_begin();
  event_base_dispatch(base);
  d.stopping = true;

  event_free(sigterm);
  event_free(sigint);
  run_free_all(&d); /* running turns end as interrupted */
  stop_builder(&d); /* after the runs (each forgot its job), before the server */
  guard_stop(&d);
  server_stop(&srv);
  auth_stop(&d);
  persist_stop(&d); /* after the runs: their last events are committed */
  free_loaded(&d, base);
  return status;
}
