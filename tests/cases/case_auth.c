/* See case_auth.h. Devices are known by the names the case gave them; a token
 * is taken from `turnd pair`'s one line or from a POST /api/pair answer of 200,
 * and kept after the device is unpaired, so a case can show that it no longer
 * works. A PIN is a secret from the moment a case writes it, right or wrong. */
#include "case_auth.h"

#include "case.h"
#include "case_outcome.h"

#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_DEVICES 32
#define MAX_SECRETS 64
#define MAX_WATCHED 16
#define TOKEN_LEN   49 /* "turnd_" and 43 characters of base64url */
#define PIN_MIN     8  /* in a case: shorter ones could turn up in an answer by chance */

/* Well formed, but no turnd made it. */
static const char bogus_token[] = "turnd_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG";
static const char stand_in_code[] = "ABCD-EFGH";

struct device {
  char name[72];
  char token[TOKEN_LEN + 1]; /* "" on the first reading */
};

struct secret {
  char *text;  /* owned */
  char *about; /* what it is, for the message that finds it; owned */
};

/* A POST /api/pair answer: its token becomes its device's once it has come. */
struct watched {
  struct case_stream *s;     /* owned by the case's case_net */
  bool taken;                /* its answer ended and was read */
  char token[TOKEN_LEN + 1]; /* what it gave, "" for nothing */
};

static struct {
  bool dry;
  char root[64];
  char data_dir[96];
  char elsewhere[96]; /* root/elsewhere: a data folder no turnd runs on */
  const struct case_proc *turnd;
  struct device devices[MAX_DEVICES];
  size_t n_devices;
  struct secret secrets[MAX_SECRETS];
  size_t n_secrets;
  struct watched watched[MAX_WATCHED];
  size_t n_watched;
  char pair_code[32]; /* of the latest [admin] pair-code */
  char value[64];     /* the latest placeholder's value */
} A;

static bool is_name_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '-' || c == '.';
}

/* A device name of a case: a word of letters, digits, '_', '-' and '.'. */
static bool name_ok(const char *name) {
  size_t n = strlen(name);
  if (n == 0 || n >= sizeof A.devices[0].name) return false;
  for (size_t i = 0; i < n; i++)
    if (!is_name_char(name[i])) return false;
  return true;
}

static bool token_ok(const char *t, size_t len) {
  if (len != TOKEN_LEN || strncmp(t, "turnd_", 6) != 0) return false;
  for (size_t i = 6; i < len; i++)
    if (!is_name_char(t[i]) || t[i] == '.') return false;
  return true;
}

static struct device *find_device(const char *name) {
  for (size_t i = 0; i < A.n_devices; i++)
    if (strcmp(A.devices[i].name, name) == 0) return &A.devices[i];
  return NULL;
}

/* A device paired again under a name keeps the name with the new token. */
static void add_device(const char *name, const char *token, unsigned line_no) {
  struct device *d = find_device(name);
  if (d == NULL) {
    if (A.n_devices == MAX_DEVICES) case_fail(line_no, "too many devices in one case");
    d = &A.devices[A.n_devices++];
    snprintf(d->name, sizeof d->name, "%s", name);
  }
  snprintf(d->token, sizeof d->token, "%s", token);
}

static void add_secret(const char *text, const char *about, unsigned line_no) {
  for (size_t i = 0; i < A.n_secrets; i++)
    if (strcmp(A.secrets[i].text, text) == 0) return;
  if (A.n_secrets == MAX_SECRETS)
    case_fail(line_no, "too many tokens and PINs in one case");
  struct secret *s = &A.secrets[A.n_secrets];
  s->text = strdup(text);
  s->about = strdup(about);
  if (s->text == NULL || s->about == NULL) case_fail(line_no, "out of memory");
  A.n_secrets++;
}

static void add_token(const char *name, const char *token, unsigned line_no) {
  char about[128];
  snprintf(about, sizeof about, "the token of device %s", name);
  add_device(name, token, line_no);
  add_secret(token, about, line_no);
}

static void add_pin(const char *pin, unsigned line_no) {
  if (strlen(pin) < PIN_MIN)
    case_fail(line_no,
              "a PIN in a case has %d characters or more, so that no answer "
              "holds it by chance",
              PIN_MIN);
  char about[160];
  snprintf(about, sizeof about, "the PIN %.100s", pin);
  add_secret(pin, about, line_no);
}

/* The tokens of POST /api/pair answers that have ended since the last look. */
static void take_pairs(void) {
  for (size_t i = 0; i < A.n_watched; i++) {
    struct watched *w = &A.watched[i];
    if (w->taken || !w->s->done) continue;
    w->taken = true;
    if (w->s->status != 200 || w->s->raw == NULL) continue;
    json_error_t je;
    json_t *body = json_loads(w->s->raw, 0, &je);
    const char *token = json_string_value(json_object_get(body, "token"));
    const char *name =
        json_string_value(json_object_get(json_object_get(body, "device"), "name"));
    if (token == NULL || !token_ok(token, strlen(token)) || name == NULL) {
      json_decref(body);
      case_fail(w->s->line_no,
                "a 200 of POST /api/pair without a token and a device name");
    }
    snprintf(w->token, sizeof w->token, "%s", token);
    add_token(name, token, w->s->line_no);
    json_decref(body);
  }
}

/* ------------------------------------------------------------ requests */

int case_auth_spec_parse(struct case_auth_spec *spec, const char *text, char *err,
                         size_t cap) {
  memset(spec, 0, sizeof *spec);
  if (strcmp(text, "none") == 0) {
    spec->kind = CASE_AUTH_NONE;
  } else if (strcmp(text, "bogus") == 0) {
    spec->kind = CASE_AUTH_BOGUS;
  } else if (strncmp(text, "raw ", 4) == 0 && text[4] != '\0' &&
             strlen(text + 4) < sizeof spec->arg) {
    spec->kind = CASE_AUTH_RAW;
    snprintf(spec->arg, sizeof spec->arg, "%s", text + 4);
  } else if (name_ok(text)) {
    spec->kind = CASE_AUTH_DEVICE;
    snprintf(spec->arg, sizeof spec->arg, "%s", text);
    if (A.dry && find_device(text) == NULL) {
      snprintf(err, cap, "auth %s: no line before pairs a device named %s", text, text);
      return -1;
    }
  } else {
    snprintf(err, cap, "auth takes NAME, none, bogus or raw TEXT");
    return -1;
  }
  return 0;
}

bool case_auth_header(const struct case_auth_spec *spec, unsigned line_no, char *out,
                      size_t cap) {
  const char *token = bogus_token;
  if (spec->kind == CASE_AUTH_NONE) return false;
  if (spec->kind == CASE_AUTH_RAW) {
    snprintf(out, cap, "Authorization: %s", spec->arg);
    return true;
  }
  if (spec->kind != CASE_AUTH_BOGUS) {
    take_pairs();
    const char *name = spec->kind == CASE_AUTH_CASE ? "case" : spec->arg;
    const struct device *d = find_device(name);
    if (d == NULL || d->token[0] == '\0')
      case_fail(line_no, "no device named %s has been paired", name);
    token = d->token;
  }
  snprintf(out, cap, "Authorization: Bearer %s", token);
  return true;
}

void case_auth_sent(const char *method, const char *path, const char *body,
                    struct case_stream *s, unsigned line_no) {
  json_error_t je;
  json_t *j = body != NULL ? json_loads(body, 0, &je) : NULL;
  const char *pin = json_string_value(json_object_get(j, "pin"));
  if (pin != NULL && pin[0] != '\0') add_pin(pin, line_no);
  size_t path_len = strcspn(path, "?");
  if (strcmp(method, "POST") == 0 && path_len == 9 &&
      strncmp(path, "/api/pair", 9) == 0) {
    const char *name = json_string_value(json_object_get(j, "name"));
    if (A.dry && name != NULL && name_ok(name)) add_device(name, "", line_no);
    if (!A.dry) {
      if (A.n_watched == MAX_WATCHED) case_fail(line_no, "too many pairings in one case");
      A.watched[A.n_watched++] = (struct watched){.s = s};
    }
  }
  json_decref(j);
}

/* ------------------------------------------------------------ the case */

/* `turnd pair` on the case's data folder (or the other one): its one line is
 * the token. Fails the case unless it paired, or, with checks, unless they
 * hold. */
static void run_pair(const char *name, bool elsewhere, const struct case_outcome *want,
                     unsigned line_no) {
  const char *args[] = {"pair",   "--data", elsewhere ? A.elsewhere : A.data_dir,
                        "--name", name,     NULL};
  struct case_proc_run r;
  if (case_proc_admin(&r, args, NULL, CASE_SAFETY_MS) != 0)
    case_fail(line_no, "turnd pair did not end (status %d)", r.status);
  case_auth_scan("turnd pair's stderr", r.err, strlen(r.err), line_no);
  if (want != NULL) case_outcome_check(want, &r, "turnd pair", line_no);
  if (want == NULL && r.status != 0)
    case_fail(line_no, "turnd pair --name %s exited with %d: %s", name, r.status, r.err);
  size_t len = strcspn(r.out, "\n");
  if (r.status == 0 && (!token_ok(r.out, len) || strcmp(r.out + len, "\n") != 0))
    case_fail(line_no, "turnd pair printed \"%.200s\", not one line with a token", r.out);
  if (r.status == 0) {
    r.out[len] = '\0';
    add_token(name, r.out, line_no);
  }
  case_proc_run_free(&r);
}

void case_auth_begin(bool dry, const char *root, const char *data_dir,
                     const struct case_proc *turnd) {
  case_auth_end();
  A.dry = dry;
  A.turnd = turnd;
  snprintf(A.root, sizeof A.root, "%s", root);
  snprintf(A.data_dir, sizeof A.data_dir, "%s", data_dir);
  snprintf(A.elsewhere, sizeof A.elsewhere, "%s/elsewhere", root);
  if (dry)
    add_device("case", "", 0);
  else
    run_pair("case", false, NULL, 0);
}

void case_auth_end(void) {
  for (size_t i = 0; i < A.n_secrets; i++) {
    free(A.secrets[i].text);
    free(A.secrets[i].about);
  }
  memset(&A, 0, sizeof A);
}

/* Cuts "ARGS -> CHECKS" at its arrow: *checks is NULL without one. */
static char *split_checks(char *arg, char **checks) {
  char *arrow = strstr(arg, " -> ");
  *checks = NULL;
  if (arrow != NULL) {
    *arrow = '\0';
    *checks = arrow + 4;
  }
  return arg;
}

/* Splits words at spaces, in place; returns how many (at most cap). */
static size_t split_words(char *s, char **words, size_t cap, unsigned line_no) {
  size_t n = 0;
  for (char *p = s + strspn(s, " \t"); *p != '\0'; p += strspn(p, " \t")) {
    if (n == cap) case_fail(line_no, "too many words");
    words[n++] = p;
    p += strcspn(p, " \t");
    if (*p != '\0') *p++ = '\0';
  }
  return n;
}

void case_auth_pair(char *arg, unsigned line_no) {
  char *checks, *words[3];
  size_t n = split_words(split_checks(arg, &checks), words, 3, line_no);
  bool elsewhere = n == 2 && strcmp(words[1], "elsewhere") == 0;
  if ((n != 1 && !elsewhere) || !name_ok(words[0]))
    case_fail(line_no,
              "[pair] takes NAME (letters, digits, _ - .), then maybe elsewhere");
  struct case_outcome want = {0};
  if (checks != NULL) case_outcome_parse(&want, checks, line_no);
  if (A.dry)
    add_device(words[0], "", line_no);
  else
    run_pair(words[0], elsewhere, checks != NULL ? &want : NULL, line_no);
  case_outcome_free(&want);
}

/* The code of a pairing link, "http://HOST:PORT/#pair=CODE", in text. */
static bool code_of_link(const char *text, char *code, size_t cap) {
  const char *at = strstr(text, "#pair=");
  if (at == NULL) return false;
  at += 6;
  size_t len = strcspn(at, " \r\n");
  if (len == 0 || len >= cap) return false;
  memcpy(code, at, len);
  code[len] = '\0';
  return true;
}

void case_auth_admin(char *arg, unsigned line_no) {
  char *checks, *words[3];
  size_t n = split_words(split_checks(arg, &checks), words, 3, line_no);
  const char *cmd = n > 0 ? words[0] : "";
  bool one = strcmp(cmd, "unpair") == 0 || strcmp(cmd, "set-pin") == 0;
  bool none = strcmp(cmd, "pair-code") == 0 || strcmp(cmd, "devices") == 0;
  if (!(one && n == 2) && !(none && n == 1))
    case_fail(line_no, "[admin] takes unpair NAME, set-pin PIN, pair-code or devices "
                       "([pair] pairs)");
  bool set_pin = strcmp(cmd, "set-pin") == 0;
  if (set_pin) add_pin(words[1], line_no);
  struct case_outcome want = {0};
  if (checks != NULL) case_outcome_parse(&want, checks, line_no);
  if (A.dry) {
    case_outcome_free(&want);
    return;
  }
  /* set-pin reads the PIN from stdin, as from an owner at a terminal. */
  const char *args[] = {cmd, "--data", A.data_dir, n == 2 && !set_pin ? words[1] : NULL,
                        NULL};
  char input[200];
  snprintf(input, sizeof input, "%s\n", set_pin ? words[1] : "");
  struct case_proc_run r;
  if (case_proc_admin(&r, args, set_pin ? input : NULL, CASE_SAFETY_MS) != 0)
    case_fail(line_no, "turnd %s did not end (status %d)", cmd, r.status);
  case_auth_scan("the admin command's stdout", r.out, strlen(r.out), line_no);
  case_auth_scan("the admin command's stderr", r.err, strlen(r.err), line_no);
  if (checks != NULL) case_outcome_check(&want, &r, cmd, line_no);
  if (checks == NULL && r.status != 0)
    case_fail(line_no, "turnd %s exited with %d: %s", cmd, r.status, r.err);
  if (strcmp(cmd, "pair-code") == 0 && r.status == 0 &&
      !code_of_link(r.out, A.pair_code, sizeof A.pair_code))
    case_fail(line_no, "turnd pair-code printed \"%.200s\", no link with #pair=", r.out);
  case_outcome_free(&want);
  case_proc_run_free(&r);
}

/* The code turnd printed at its latest start: "pair a device: URL/#pair=CODE". */
static void start_code(unsigned line_no) {
  char text[1024];
  FILE *f = fopen(A.turnd->out_path, "r");
  size_t got = 0;
  if (f != NULL && fseek(f, A.turnd->out_start, SEEK_SET) == 0)
    got = fread(text, 1, sizeof text - 1, f);
  if (f != NULL) fclose(f);
  text[got] = '\0';
  if (!code_of_link(text, A.value, sizeof A.value))
    case_fail(line_no, "%%STARTCODE: turnd printed no pairing link at its start");
}

const char *case_auth_placeholder(const char *name, const char *arg, unsigned line_no) {
  if (strcmp(name, "TOKEN") == 0) {
    if (!A.dry) take_pairs();
    const struct device *d = find_device(arg);
    if (d == NULL) case_fail(line_no, "%%TOKEN(%s): no device of that name", arg);
    return A.dry ? bogus_token : d->token;
  }
  if (A.dry) return stand_in_code;
  if (strcmp(name, "PAIRCODE") == 0) {
    if (A.pair_code[0] == '\0')
      case_fail(line_no, "%%PAIRCODE: no [admin] pair-code yet");
    return A.pair_code;
  }
  start_code(line_no);
  return A.value;
}

/* ------------------------------------------------------------ the search */

static const char *find_bytes(const char *hay, size_t len, const char *needle) {
  size_t n = strlen(needle);
  for (size_t i = 0; n > 0 && i + n <= len; i++)
    if (hay[i] == needle[0] && memcmp(hay + i, needle, n) == 0) return hay + i;
  return NULL;
}

static void scan(const char *what, const char *text, size_t len, const char *allowed,
                 unsigned line_no) {
  for (size_t i = 0; text != NULL && i < A.n_secrets; i++) {
    const struct secret *s = &A.secrets[i];
    if (allowed != NULL && strcmp(allowed, s->text) == 0) continue;
    const char *at = find_bytes(text, len, s->text);
    if (at != NULL)
      case_fail(line_no, "%s holds %s, at byte %zu", what, s->about, (size_t)(at - text));
  }
}

void case_auth_scan(const char *what, const char *text, size_t len, unsigned line_no) {
  scan(what, text, len, NULL, line_no);
}

void case_auth_scan_stream(const struct case_stream *s) {
  const char *allowed = NULL;
  for (size_t i = 0; i < A.n_watched; i++)
    if (A.watched[i].s == s && A.watched[i].token[0] != '\0')
      allowed = A.watched[i].token;
  char what[64];
  snprintf(what, sizeof what, "the answer of line %u", s->line_no);
  scan(what, s->headers, s->headers_len, allowed, s->line_no);
  scan(what, s->raw, s->raw_len, allowed, s->line_no);
}

/* Every regular file under path. */
static void scan_tree(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return;
  if (S_ISREG(st.st_mode)) {
    FILE *f = fopen(path, "rb");
    char *text = f != NULL ? malloc((size_t)st.st_size + 1) : NULL;
    size_t len = text != NULL ? fread(text, 1, (size_t)st.st_size, f) : 0;
    if (f != NULL) fclose(f);
    if (f != NULL && text == NULL) case_fail(0, "out of memory");
    scan(path, text, len, NULL, 0);
    free(text);
    return;
  }
  if (!S_ISDIR(st.st_mode)) return;
  DIR *dir = opendir(path);
  if (dir == NULL) return;
  struct dirent *e;
  while ((e = readdir(dir)) != NULL) {
    char child[4096];
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
        (size_t)snprintf(child, sizeof child, "%s/%s", path, e->d_name) < sizeof child)
      scan_tree(child);
  }
  closedir(dir);
}

void case_auth_scan_all(const struct case_net *net) {
  take_pairs();
  for (size_t i = 0; i < net->n; i++)
    case_auth_scan_stream(net->streams[i]);
  scan_tree(A.root);
}
