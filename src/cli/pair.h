/* `turn pair`: trades a one-time pairing code for a device token and keeps the
 * token where the client looks for it. */
#ifndef TURN_CLI_PAIR_H
#define TURN_CLI_PAIR_H

/* Pairs with the turnd at url (borrowed) using code, or, with code NULL, with a
 * pairing link http://HOST:PORT/#pair=CODE given as url. name: the device's name
 * in turnd (NULL: "turn@" and this host's name). The token goes to token_file,
 * or when NULL to the default file (token.h). Returns the exit status: 0, 1 when
 * turnd said no or the token could not be stored, 2 for a malformed link. */
int pair_command(const char *url, const char *code, const char *name,
                 const char *token_file);

#endif
