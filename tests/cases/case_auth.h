/* Who a case's requests are, and what the case must never see again. Before
 * turnd first starts, the runner pairs a device named "case" (`turnd pair`), and
 * every [request] carries its token unless its `auth` option says otherwise;
 * [pair] pairs more devices and [admin] runs turnd's other admin commands.
 * Every token and PIN a case handles is a secret: at its end, no answer (but the
 * POST /api/pair that gave a token, for that token), nothing turnd printed and
 * no file under the case's folder may hold one, whatever the case was about. */
#ifndef CASE_AUTH_H
#define CASE_AUTH_H

#include "case_net.h"
#include "case_proc.h"

#include <stdbool.h>
#include <stddef.h>

/* What a [request]'s auth option asks for. */
enum case_auth_kind {
  CASE_AUTH_CASE,   /* no option: the token of the device "case" */
  CASE_AUTH_NONE,   /* auth none: no Authorization header */
  CASE_AUTH_BOGUS,  /* auth bogus: a well-formed token no turnd gave */
  CASE_AUTH_RAW,    /* auth raw TEXT: the header's value is TEXT */
  CASE_AUTH_DEVICE, /* auth NAME: the token of device NAME, revoked or not */
};

struct case_auth_spec {
  enum case_auth_kind kind;
  char arg[256]; /* CASE_AUTH_RAW: the value; CASE_AUTH_DEVICE: the name */
};

/* Parses text, what follows "auth " in an option. The first reading checks that
 * a device of that name was paired by a line before. Returns 0, or -1 with a
 * message in err. */
int case_auth_spec_parse(struct case_auth_spec *spec, const char *text, char *err,
                         size_t cap);
/* The Authorization header line spec asks for, in out[0..cap); false for none. */
bool case_auth_header(const struct case_auth_spec *spec, unsigned line_no, char *out,
                      size_t cap);

/* Starts a reading of the case. The first one (dry) only learns device names;
 * the second pairs "case" on data_dir, in the case's folder root. turnd (the
 * case's, borrowed for the whole case) is where %STARTCODE is read. */
void case_auth_begin(bool dry, const char *root, const char *data_dir,
                     const struct case_proc *turnd);
/* Forgets every device and secret. */
void case_auth_end(void);

/* [pair] NAME [elsewhere] [-> CHECK...], arg with its placeholders replaced.
 * `elsewhere` pairs on another data folder, one no turnd runs on. */
void case_auth_pair(char *arg, unsigned line_no);
/* [admin] COMMAND [ARG...] [-> CHECK...]: unpair NAME, set-pin PIN, pair-code,
 * devices. */
void case_auth_admin(char *arg, unsigned line_no);

/* A request was sent (s is its answer; NULL on the first reading): a "pin" in
 * its body becomes a secret, and a POST /api/pair is watched, so that the token
 * of a 200 answer becomes its device's. */
void case_auth_sent(const char *method, const char *path, const char *body,
                    struct case_stream *s, unsigned line_no);

/* What %TOKEN(NAME) (arg: NAME), %PAIRCODE and %STARTCODE (arg: NULL) stand for
 * now; stand-ins on the first reading. Valid until the next call. */
const char *case_auth_placeholder(const char *name, const char *arg, unsigned line_no);

/* Fails the case if answer s holds a secret (a POST /api/pair that gave a token
 * may hold that one). */
void case_auth_scan_stream(const struct case_stream *s);
/* Fails the case at line_no if text[0..len), named what, holds a secret. */
void case_auth_scan(const char *what, const char *text, size_t len, unsigned line_no);
/* At the case's end: every answer of net, and every file under the case's
 * folder (turnd's outputs, its data folders, the fake provider's log). */
void case_auth_scan_all(const struct case_net *net);

#endif
