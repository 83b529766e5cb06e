/* turn-demo: what `make run` shows until the server exists. It reads the spec's
 * example turn, parses and checks every line, encodes it back, and shows that the
 * bytes come out the same; then it shows an input too big to travel inline. */
#include "turn/turn.h"

#include <stdio.h>
#include <string.h>

static const char *const example[] = {
    "{\"v\":1,\"seq\":0,\"type\":\"turn\",\"turn\":\"t-1\",\"session\":\"20261001-080000-"
    "abcd\"}",
    "{\"v\":1,\"seq\":1,\"type\":\"tool_use\",\"id\":\"u1\",\"tool\":\"lamp_set\","
    "\"tier\":2}",
    "{\"v\":1,\"seq\":2,\"type\":\"tool_input\",\"id\":\"u1\",\"tool\":\"lamp_set\","
    "\"input\":{"
    "\"name\":\"desk\",\"on\":true},\"truncated\":false}",
    "{\"v\":1,\"seq\":3,\"type\":\"approval\",\"request\":\"a1\",\"tool\":\"lamp_set\","
    "\"tier\":"
    "2,\"effect\":\"physical\",\"input\":{\"name\":\"desk\",\"on\":true},\"truncated\":"
    "false,"
    "\"expires_at\":1790841900.0}",
    "{\"v\":1,\"seq\":4,\"type\":\"approval_decided\",\"request\":\"a1\",\"decision\":"
    "\"approved\"}",
    "{\"v\":1,\"seq\":5,\"type\":\"tool_result\",\"id\":\"u1\",\"tool\":\"lamp_set\","
    "\"status\":"
    "\"ok\",\"summary\":\"desk lamp is on (simulated)\",\"approval\":\"approved\"}",
    "{\"v\":1,\"seq\":6,\"type\":\"text\",\"delta\":\"The desk lamp is on.\"}",
    "{\"v\":1,\"seq\":7,\"type\":\"end\",\"stop_reason\":\"end_turn\"}",
};

int main(void) {
  turn_arena arena;
  turn_buf out;
  turn_order *order = turn_order_new(NULL);
  turn_arena_init(&arena, NULL);
  turn_buf_init(&out, 1 << 20, NULL);
  int failures = 0;
  printf("The spec's example turn, parsed, order-checked and encoded again:\n\n");
  for (size_t i = 0; i < sizeof example / sizeof example[0]; i++) {
    turn_event ev;
    turn_error err = {TURN_OK, NULL, 0, 0};
    char msg[256];
    turn_arena_reset(&arena);
    turn_buf_reset(&out);
    int rv = turn_event_parse(&ev, &arena, example[i], strlen(example[i]), &err);
    if (rv == TURN_OK) rv = turn_order_step(order, &ev, &err);
    if (rv == TURN_OK) {
      rv = turn_event_encode(&ev, &out);
      if (rv != TURN_OK) err = (turn_error){rv, NULL, 0, 0};
    }
    if (rv != TURN_OK) {
      turn_error_format(&err, msg, sizeof msg);
      printf("  line %zu: %s\n", i + 1, msg);
      failures++;
      continue;
    }
    bool same =
        out.len == strlen(example[i]) && memcmp(out.data, example[i], out.len) == 0;
    failures += !same;
    printf("  %-16s %s  %.*s\n", turn_event_type_name(ev.type), same ? "same" : "DIFFERS",
           (int)out.len, out.data);
  }
  turn_error err;
  if (turn_order_finish(order, &err) != TURN_OK) failures++;

  /* An input over TURN_INPUT_LIMIT bytes travels as a preview. */
  static char big[TURN_INPUT_LIMIT + 64];
  size_t n = (size_t)snprintf(big, sizeof big, "{\"note\": \"");
  while (n < TURN_INPUT_LIMIT + 32)
    big[n++] = 'x';
  memcpy(big + n, "\"}", 3);
  n += 2;
  turn_arena_reset(&arena);
  turn_input input;
  if (turn_input_from_json(&input, &arena, big, n, &err) == TURN_OK)
    printf("\nA %zu-byte tool input travels as %s (preview of %zu bytes).\n", n,
           input.truncated ? "\"input\":null,\"truncated\":true" : "itself",
           input.preview.len);
  printf("\n%s\n", failures == 0 ? "All lines round-trip byte for byte." : "FAILED");
  turn_buf_fini(&out);
  turn_arena_fini(&arena);
  turn_order_free(order);
  return failures == 0 ? 0 : 1;
}
