/* The built-in demo model: what turnd can do without any API key. A greeting, a
 * reasoning step, a tier-0 lookup, a tier-2 lamp_set that asks the owner, a
 * render_ui widget and a Markdown reply. */
#include "script.h"

const char script_demo[] =
    "{\"turns\": [],"
    " \"default\": ["
    "  [{\"reasoning\": \"The owner said: {{input}}. Let me look at the time first.\"},"
    "   {\"text\": \"Hello! \"},"
    "   {\"tool_use\": {\"name\": \"clock\", \"input\": {}}}],"
    "  [{\"text\": \"I will turn on the desk lamp; that needs your approval.\"},"
    "   {\"tool_use\": {\"name\": \"lamp_set\", \"input\": {\"name\": \"desk\", \"on\": "
    "true}}}],"
    "  [{\"tool_use\": {\"name\": \"render_ui\", \"input\": {\"title\": \"Lamps\","
    "     \"html\": \"<ul><li>desk: on</li><li>hall: off</li></ul>\"}}}],"
    "  [{\"text\": \"Done. Here is what I did:\\n\\n- looked at the **clock**\\n"
    "- asked you before switching the *desk lamp*\\n- showed the lamps\\n\"}]"
    " ]}";
