/* The admin commands (see admin.h). Each opens DIR/auth.db, does one small
 * transaction and exits; a running turnd sees the change on its next request.
 * Secrets go to stdout once (a new token, a pairing link) and nowhere else. */
#include "admin.h"

#include "auth_db.h"
#include "clock.h"
#include "credential.h"
#include "daemon.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static const char admin_usage[] =
    "usage: turnd pair --data DIR --name NAME   pair a device; prints its token\n"
    "       turnd devices --data DIR            list the paired devices\n"
    "       turnd unpair --data DIR NAME        revoke a device's token\n"
    "       turnd pair-code --data DIR          print a new one-time pairing link\n"
    "       turnd set-pin --data DIR [--if-unset]\n"
    "                                           set the owner's PIN (read from stdin);\n"
    "                                           --if-unset: only if none is set yet,\n"
    "                                           and an empty line sets none\n";

static const char *const commands[] = {"pair", "devices", "unpair", "pair-code",
                                       "set-pin"};

bool admin_is_command(const char *name) {
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(name, commands[i]) == 0) return true;
  return false;
}

/* What the command line of a command gave. */
struct admin_args {
  const char *data_dir; /* --data, default ./data */
  const char *name;     /* --name, or the one positional argument */
  bool if_unset;        /* set-pin --if-unset */
};

static bool parse(int argc, char **argv, struct admin_args *a) {
  a->data_dir = "./data";
  a->name = NULL;
  a->if_unset = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--if-unset") == 0 && strcmp(argv[0], "set-pin") == 0) {
      a->if_unset = true;
    } else if ((strcmp(argv[i], "--data") == 0 || strcmp(argv[i], "--name") == 0) &&
               i + 1 < argc) {
      if (argv[i][2] == 'd')
        a->data_dir = argv[++i];
      else
        a->name = argv[++i];
    } else if (argv[i][0] != '-' && a->name == NULL) {
      a->name = argv[i];
    } else {
      return false;
    }
  }
  return true;
}

int admin_pair_link(struct auth_db *db, char *link, size_t cap) {
  char code[CREDENTIAL_CODE_LEN + 1], url[300];
  unsigned char hash[CREDENTIAL_HASH_LEN];
  credential_code_new(code);
  credential_code_hash(code, strlen(code), hash);
  uint64_t now = turnd_now_ms();
  if (auth_db_code_add(db, hash, now + PAIR_CODE_TTL_S * 1000ull, now) != 0) return -1;
  if (auth_db_get(db, "url", url, sizeof url) != 1)
    memcpy(url, "http://127.0.0.1:8080", sizeof "http://127.0.0.1:8080");
  snprintf(link, cap, "%s/#pair=%s", url, code);
  return 0;
}

static void format_time(uint64_t ms, char *out, size_t cap) {
  if (ms == 0) {
    snprintf(out, cap, "never");
    return;
  }
  time_t t = (time_t)(ms / 1000);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int print_device(void *ctx, int64_t id, const char *name,
                        const unsigned char hash[CREDENTIAL_HASH_LEN],
                        uint64_t created_ms, uint64_t last_seen_ms) {
  (void)ctx;
  (void)id;
  (void)hash;
  char created[32], seen[32];
  format_time(created_ms, created, sizeof created);
  format_time(last_seen_ms, seen, sizeof seen);
  printf("%-24s  %-20s  %s\n", name, created, seen);
  return 0;
}

/* Reads one line of at most cap - 1 bytes into out, without the newline; with
 * echo off when stdin is a terminal. Returns its length, or -1. */
static long read_secret(const char *prompt, char *out, size_t cap) {
  bool tty = isatty(STDIN_FILENO);
  struct termios saved, quiet;
  if (tty) {
    /* Echo off before the prompt: what is typed once it shows is never echoed. */
    tcgetattr(STDIN_FILENO, &saved);
    quiet = saved;
    quiet.c_lflag &= ~(tcflag_t)ECHO;
    tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
    fputs(prompt, stderr);
    fflush(stderr);
  }
  bool got = fgets(out, (int)cap, stdin) != NULL;
  if (tty) {
    tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
    fputc('\n', stderr);
  }
  if (!got) return -1;
  size_t len = strcspn(out, "\r\n");
  if (out[len] == '\0' && len == cap - 1) return -1; /* longer than cap allows */
  out[len] = '\0';
  return (long)len;
}

/* set-pin. With if_unset (`make run` at its start) a PIN already set is kept
 * without a question, and an empty line leaves none: the owner may choose one
 * later, when something first needs it. */
static int set_pin(struct auth_db *db, const char *data_dir, bool if_unset) {
  char pin[CREDENTIAL_PIN_MAX + 2], again[CREDENTIAL_PIN_MAX + 2];
  if (if_unset) {
    char hash[CREDENTIAL_PIN_HASH_CAP];
    int set = auth_db_get(db, "pin", hash, sizeof hash);
    if (set != 0) return set == 1 ? 0 : 1;
    fprintf(stderr,
            "turnd: approving a call whose effect needs the step-up (by default a "
            "physical one, such as the demo's lamp) takes the owner's PIN, and none "
            "is set yet. Choose one now (%d to %d characters), or press Enter to "
            "set none: `turnd set-pin --data %s` sets one later.\n",
            CREDENTIAL_PIN_MIN, CREDENTIAL_PIN_MAX, data_dir);
  }
  long len = read_secret("new PIN: ", pin, sizeof pin);
  if (if_unset && len == 0) {
    fprintf(stderr, "turnd: no PIN set\n");
    return 0;
  }
  if (len < 0 || !credential_pin_ok(pin, (size_t)len)) {
    fprintf(stderr, "turnd: a PIN is %d to %d characters, on one line\n",
            CREDENTIAL_PIN_MIN, CREDENTIAL_PIN_MAX);
    return 1;
  }
  if (isatty(STDIN_FILENO) &&
      (read_secret("the same PIN again: ", again, sizeof again) != len ||
       strcmp(pin, again) != 0)) {
    fprintf(stderr, "turnd: the two PINs differ; nothing changed\n");
    return 1;
  }
  char hash[CREDENTIAL_PIN_HASH_CAP];
  int rc = credential_pin_hash(pin, (size_t)len, hash);
  credential_wipe(pin, sizeof pin);
  credential_wipe(again, sizeof again);
  if (rc != 0 || auth_db_set(db, "pin", hash) != 0) {
    fprintf(stderr, "turnd: cannot store the PIN\n");
    return 1;
  }
  fprintf(stderr, "turnd: the PIN is set\n");
  return 0;
}

static int pair(struct auth_db *db, const char *name) {
  if (name == NULL || !auth_db_name_ok(name)) {
    fprintf(stderr,
            "turnd: pair needs --name NAME: 1 to 64 bytes, no control characters\n");
    return 2;
  }
  char token[CREDENTIAL_TOKEN_LEN + 1];
  unsigned char hash[CREDENTIAL_HASH_LEN];
  credential_token_new(token);
  credential_token_hash(token, strlen(token), hash);
  int rc = auth_db_device_add(db, name, hash, turnd_now_ms());
  if (rc != 0) {
    credential_wipe(token, sizeof token);
    if (rc > 0) fprintf(stderr, "turnd: a device named %s is paired already\n", name);
    return 1;
  }
  printf("%s\n", token);
  credential_wipe(token, sizeof token);
  return fflush(stdout) == 0 ? 0 : 1;
}

static int run_command(const char *cmd, struct auth_db *db, const struct admin_args *a) {
  const char *name = a->name;
  if (strcmp(cmd, "pair") == 0) return pair(db, name);
  if (strcmp(cmd, "devices") == 0) {
    printf("%-24s  %-20s  %s\n", "NAME", "CREATED", "LAST SEEN");
    return auth_db_devices_each(db, print_device, NULL) == 0 ? 0 : 1;
  }
  if (strcmp(cmd, "unpair") == 0) {
    int rc = auth_db_device_remove(db, name);
    if (rc > 0) fprintf(stderr, "turnd: no device is named %s\n", name);
    return rc == 0 ? 0 : 1;
  }
  if (strcmp(cmd, "pair-code") == 0) {
    char link[400];
    if (admin_pair_link(db, link, sizeof link) != 0) return 1;
    printf("%s\n", link);
    fprintf(stderr, "turnd: the code works once, for %d minutes\n", PAIR_CODE_TTL_S / 60);
    return 0;
  }
  return set_pin(db, a->data_dir, a->if_unset);
}

int admin_main(int argc, char **argv) {
  /* Right after the command only: a device may be named "-h". */
  if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    fputs(admin_usage, stdout);
    return 0;
  }
  struct admin_args a;
  bool needs_name = strcmp(argv[0], "pair") == 0 || strcmp(argv[0], "unpair") == 0;
  if (!parse(argc, argv, &a) || (a.name != NULL) != needs_name) {
    fputs(admin_usage, stderr);
    return 2;
  }
  if (credential_init() != 0) {
    fprintf(stderr, "turnd: libsodium cannot start\n");
    return 1;
  }
  if (mkdir(a.data_dir, 0700) != 0 && errno != EEXIST) {
    fprintf(stderr, "turnd: cannot create the data folder %s\n", a.data_dir);
    return 1;
  }
  char err[256];
  struct auth_db *db = auth_db_open(a.data_dir, 2000, err, sizeof err);
  if (db == NULL) {
    fprintf(stderr, "turnd: %s\n", err);
    return 1;
  }
  int rc = run_command(argv[0], db, &a);
  auth_db_close(db);
  return rc;
}
