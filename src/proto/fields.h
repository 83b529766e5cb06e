/* The protocol's fields, described once as data: every key the protocol knows,
 * the kind of value each field holds, and per event type and block type the list
 * of fields in wire order. The parsers and encoders walk these lists, so a field
 * is read and written by the same description. */
#ifndef TURN_PROTO_FIELDS_H
#define TURN_PROTO_FIELDS_H

#include "json_scan.h"

enum turn__key {
  TURN__K_V,
  TURN__K_SEQ,
  TURN__K_TYPE,
  TURN__K_TURN,
  TURN__K_SESSION,
  TURN__K_DELTA,
  TURN__K_ID,
  TURN__K_TOOL,
  TURN__K_TIER,
  TURN__K_INPUT,
  TURN__K_PREVIEW,
  TURN__K_TRUNCATED,
  TURN__K_MESSAGE,
  TURN__K_STATUS,
  TURN__K_SUMMARY,
  TURN__K_APPROVAL,
  TURN__K_REQUEST,
  TURN__K_EFFECT,
  TURN__K_EXPIRES_AT,
  TURN__K_DECISION,
  TURN__K_TITLE,
  TURN__K_HTML,
  TURN__K_DELAY_SECONDS,
  TURN__K_TEXT,
  TURN__K_ACTION,
  TURN__K_STOP_REASON,
  TURN__K_AT,
  TURN__K_DURATION_MS,
  TURN__K__COUNT
};

extern const char *const turn__key_names[TURN__K__COUNT];

enum turn__kind {
  TURN__KIND_STR,           /* string */
  TURN__KIND_ID,            /* non-empty string */
  TURN__KIND_OPT_STR,       /* string, null or absent (both read as empty) */
  TURN__KIND_STR_OR_NULL,   /* string or null; flag says which */
  TURN__KIND_TIER,          /* integer 0-2 or null (TURN_TIER_NULL) */
  TURN__KIND_INPUT,         /* input, preview and truncated: a turn_input */
  TURN__KIND_INPUT_OR_NULL, /* the same, or "input":null,"truncated":false (unknown) */
  TURN__KIND_STATUS,        /* turn_status other than null */
  TURN__KIND_STATUS_OR_NULL,
  TURN__KIND_APPROVAL,     /* turn_approval, null included */
  TURN__KIND_DECISION,     /* turn_decision */
  TURN__KIND_STOP,         /* turn_stop_reason */
  TURN__KIND_TIME_OR_NULL, /* number >= 0 (double) or null; flag says which */
  TURN__KIND_SECONDS,      /* number >= 0 (double) */
  TURN__KIND_MS_OR_NULL,   /* integer >= 0 (int64_t) or null; flag says which */
  TURN__KIND_AT            /* ISO 8601 string or null (empty turn_str) */
};

typedef struct turn__field {
  unsigned char key;       /* enum turn__key */
  unsigned char kind;      /* enum turn__kind */
  unsigned short off;      /* offset of the value in turn_event / turn_block */
  unsigned short flag_off; /* offset of the bool saying "not null", for *_OR_NULL */
} turn__field;

typedef struct turn__schema {
  const turn__field *fields;
  size_t n;
} turn__schema;

extern const turn__schema turn__event_schemas[TURN_EV__COUNT];
extern const turn__schema turn__block_schemas[TURN_BLOCK__COUNT];

/* The known members of one object, as the scanner found them. */
typedef struct turn__members {
  uint32_t present; /* bit k set: v[k] holds the value of key k */
  turn__jval v[TURN__K__COUNT];
} turn__members;

/* Walks the object at s->p, keeping the known members (strings decoded into the
 * arena) and skipping the rest. Duplicate keys: the last one wins, as in jansson. */
int turn__read_members(turn__scan *s, turn__members *m);

/* Reads one line or block that must be exactly one JSON object into *m, with *s
 * left at its end (for the offsets of later field errors). Returns
 * TURN_E_NOT_OBJECT for valid JSON of another kind. */
int turn__read_object_text(turn__scan *s, const char *text, size_t len, turn_arena *arena,
                           turn__members *m, turn_error *err);

/* Fills the fields of a schema into obj (a turn_event or turn_block) from m.
 * Returns TURN_OK or a code with err->field/offset set. */
int turn__apply_schema(const turn__schema *sc, const turn__members *m, void *obj,
                       const turn__scan *s, turn_arena *arena, turn_error *err);

/* Appends ",\"key\":value" for each field of the schema read from obj. */
int turn__encode_schema(const turn__schema *sc, const void *obj, turn_buf *out);

#endif
