/* turnd's admin commands, run on the data folder beside a running turnd or
 * without one: pair, devices, unpair, pair-code, set-pin. */
#ifndef TURND_ADMIN_H
#define TURND_ADMIN_H

#include <stdbool.h>
#include <stddef.h>

struct auth_db;

/* Whether name is an admin command. */
bool admin_is_command(const char *name);
/* Runs argv[0] (an admin command) with its arguments; returns the exit status. */
int admin_main(int argc, char **argv);

/* A new pairing code, valid for PAIR_CODE_TTL_S, added to the open auth.db, and
 * the link that carries it into link[0..cap) ("URL/#pair=CODE", URL as turnd
 * recorded it). Returns 0 or -1. Shared by start-up and `turnd pair-code`. */
#define PAIR_CODE_TTL_S 600
int admin_pair_link(struct auth_db *db, char *link, size_t cap);

#endif
