/* Test harness for turnd: starts a real turnd on port 0 in a fresh data folder,
 * talks to it over real HTTP (libcurl), and stops it (harness.c); checks what its
 * API answers (harness_api.c). */
#ifndef TURND_TEST_HARNESS_H
#define TURND_TEST_HARNESS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct turnd_proc {
  pid_t pid;
  unsigned port;
  char base_url[64];     /* http://127.0.0.1:PORT */
  char listen_line[128]; /* the line turnd printed, without its newline */
  char data_dir[256];    /* made by harness_start, removed by harness_stop */
  char token[64];        /* the device harness_start paired ("test") */
  char auth_header[96];  /* "Authorization: Bearer <token>", for raw requests */
};

/* Starts turnd with --listen 127.0.0.1:0 --data <fresh folder> and extra args
 * (NULL-terminated, may be NULL), and waits for its "listening on" line. A
 * device named "test" is paired first (`turnd pair`): http_do, http_stream and
 * http_do_body send its token to this turnd's port unless told otherwise.
 * Returns 0, or -1 if it exited or printed something else. */
int harness_start(struct turnd_proc *t, const char *const *extra);
/* Starts turnd again on t's data folder, after harness_halt, with extra args:
 * what it stored is there, and the device paired first still gets in. Returns
 * as harness_start does. */
int harness_restart(struct turnd_proc *t, const char *const *extra);
/* Sends sig (0: none) and waits: returns the exit status (128 + signal if killed
 * by one). */
int harness_stop(struct turnd_proc *t, int sig);
/* The same, but the data folder stays, for a look at what turnd stored; a
 * harness_stop after it removes the folder (and returns -1). */
int harness_halt(struct turnd_proc *t, int sig);
/* Kills every turnd this harness started and did not stop: a failed assertion
 * jumps past harness_stop. For a test group's teardown. */
int harness_kill_all(void **state);
/* Runs turnd with exactly args (NULL-terminated) to its end: its exit status. */
int harness_run(const char *const *args);
/* Runs turnd with args, input on its standard input (NULL: none), and its first
 * line of stdout into out[0..cap) (without the newline): its exit status. */
int harness_run_line(const char *const *args, const char *input, char *out, size_t cap);
/* From now on, requests to port send no token (token NULL) or this one
 * (copied): for tests of who gets in. */
void harness_use_token(unsigned port, const char *token);

struct http_answer {
  long status;
  char *body; /* NUL-terminated, owned: http_answer_free */
  size_t len;
  char content_type[64];
  char allow[64];
};

/* One request (body may be NULL). Returns 0, or -1 if no HTTP answer came. */
int http_do(const char *method, const char *url, const char *body, struct http_answer *a);
void http_answer_free(struct http_answer *a);

/* A streamed NDJSON answer, read to its end or, with max_lines > 0, until that
 * many lines came, after which the client drops the connection. */
struct http_stream {
  long status;
  char content_type[64];
  char *raw; /* every byte received, NUL-terminated, owned */
  size_t len;
  char **lines; /* the complete lines, without "\n", pointing into a copy */
  size_t n;
  size_t max_lines;
};

int http_stream(const char *method, const char *url, const char *body, size_t max_lines,
                struct http_stream *s);
void http_stream_free(struct http_stream *s);

/* A plain TCP connection to t (for bytes that are not what libcurl sends), with a
 * receive buffer of rcvbuf bytes when rcvbuf > 0. Returns the socket, or -1. */
int harness_connect(const struct turnd_proc *t, int rcvbuf);
/* Reads from fd into buf[len..cap) until want appears in buf, or to EOF when want
 * is NULL (blocking). Keeps buf NUL-terminated; returns the bytes held. */
size_t harness_read_until(int fd, char *buf, size_t len, size_t cap, const char *want);

/* Writes text to a new file in dir; the path goes to out. Returns 0 or -1. */
int harness_write_file(const char *dir, const char *name, const char *text, char *out,
                       size_t cap);

/* ------------------------------------------------ requests libcurl shapes */

/* One request with extra header lines (NULL-terminated, may be NULL) and a body
 * of len bytes (body NULL: none), read from memory as libcurl asks for it. With
 * "Transfer-Encoding: chunked" among the headers the body goes in chunks of at
 * most chunk bytes. Returns 0, or -1 if no HTTP answer came. */
int http_do_body(const char *method, const char *url, const char *const *headers,
                 const char *body, size_t len, size_t chunk, struct http_answer *a);

/* Sends len bytes on a fresh connection to t and reads until turnd closes it. Gives
 * up after 60 s (a safety net, not a test). *out gets what came (NUL-terminated,
 * owned: free), its length in *out_len. Returns 0, or -1 on a socket error. */
int harness_exchange(const struct turnd_proc *t, const char *req, size_t len, char **out,
                     size_t *out_len);

/* ------------------------------------------------------- the turn client */

struct cli_run {
  int status; /* exit status; 128 + signal if killed by one; -1 */
  char *out;  /* its standard output, NUL-terminated, owned: cli_run_free */
  size_t out_len;
  char *err; /* its standard error, likewise */
  size_t err_len;
};

/* Runs the turn client (TURN_CLI_PATH) with args (NULL-terminated) and input on
 * its standard input, to its end; killed after 60 s (a safety net). Returns 0, or
 * -1 if it could not be run. */
int harness_cli(const char *const *args, const char *input, struct cli_run *r);
void cli_run_free(struct cli_run *r);

/* ---------------------------------------------------- a connection cutter */

/* A TCP proxy on 127.0.0.1 in front of a turnd, in a child process. It relays
 * every connection as it is, except that from turnd to the client it relays the
 * first connection (with HARNESS_CUT_EVERY: each connection) up to the end of the
 * first occurrence of cut_after (with HARNESS_CUT_TO_EOL: up to the end of the
 * line that holds it) and then closes both sides, so the client sees its answer
 * stop there. The first line of every request is logged, in order. */
#define HARNESS_CUT_TO_EOL 1
#define HARNESS_CUT_EVERY  2
struct harness_proxy {
  pid_t pid;
  unsigned port;
  char base_url[64]; /* http://127.0.0.1:PORT */
  char log_path[64]; /* made by harness_proxy_start, removed by _stop */
  char *requests;    /* after harness_proxy_stop: the log, owned */
};

int harness_proxy_start(struct harness_proxy *p, const struct turnd_proc *t,
                        const char *cut_after, int flags);
/* Stops the proxy and reads its log into p->requests. */
void harness_proxy_stop(struct harness_proxy *p);
void harness_proxy_free(struct harness_proxy *p);
/* Kills every proxy not stopped; for a test group's teardown, with
 * harness_kill_all. */
int harness_proxy_kill_all(void **state);

/* --------------------------------------------------------- turnd's API */
/* Each of these fails the running test instead of returning an error. */

/* t's base URL and then the path fmt makes, printf style, into out[0..cap). */
void harness_url(char *out, size_t cap, const struct turnd_proc *t, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Writes script (a script model's JSON) to a fresh folder and puts the --model
 * value that names it, "script:PATH", into model[0..cap). harness_remove_script
 * with that value removes the file and its folder. */
void harness_script_model(const char *script, char *model, size_t cap);
void harness_remove_script(const char *model);
/* harness_start with a script model and more arguments (NULL-terminated, may be
 * NULL; up to 13). The script's file is removed once turnd runs: it reads it at
 * its start. */
void harness_start_script(struct turnd_proc *t, const char *script,
                          const char *const *more);

/* text parsed as JSON; returns owned (json_decref). */
json_t *harness_json(const char *text);
/* j's string member key, or "" when it has none. */
const char *harness_str(const json_t *j, const char *key);
/* The string member key of the JSON object line into out[0..cap), "" when it has
 * none. Returns whether it had one. */
bool harness_line_field(const char *line, const char *key, char *out, size_t cap);
/* The first "key":"..." in text, which need not be JSON (a raw answer's head and
 * first line), into out[0..cap). */
void harness_text_field(const char *text, const char *key, char *out, size_t cap);

/* An error answer: status, a JSON body {"error": {"code": code, "message": M}}
 * with M not empty. The body alone: body[0..len). */
void harness_expect_error(const struct http_answer *a, long status, const char *code);
void harness_expect_error_body(const char *body, size_t len, const char *code);

/* The session as a 200 to GET /api/sessions/<session> gives it; returns owned
 * (json_decref). */
json_t *harness_get_session(const struct turnd_proc *t, const char *session);
/* POST /api/turns {"text": text} in session (NULL: a new one), read to its end
 * (max_lines 0) or max_lines lines; the answer must be a 200 with a line. */
void harness_post_turn(const struct turnd_proc *t, const char *session, const char *text,
                       size_t max_lines, struct http_stream *s);
/* The head of a POST /api/turns with a body of len bytes, as a raw client sends
 * it with t's token, into out[0..cap). Returns its length. */
size_t harness_turn_head(char *out, size_t cap, const struct turnd_proc *t, size_t len);
/* That head and body[0..len), sent on fd. */
void harness_send_turn(int fd, const struct turnd_proc *t, const char *body, size_t len);

#endif
