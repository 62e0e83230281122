/* glyphs: ASCII stand-ins for what a non-UTF-8 terminal cannot show. With
 * LANG=C ncurses draws a UTF-8 byte as "~V" or "M-b", several cells for one
 * and spilling into the next pane; a stand-in takes the columns the
 * character would have (only the ellipsis, "...", takes more, and text_fit
 * measures it so). Box lines need none: ncurses draws them from terminfo. */
#include "tui/glyphs.h"

#include <string.h>
#include <strings.h>

#include "core/view/safetext.h"

bool glyphs_codeset_is_utf8(const char *codeset)
{
        return codeset != NULL &&
               (strcasecmp(codeset, "UTF-8") == 0 || strcasecmp(codeset, "utf8") == 0);
}

/* One-column stand-ins for characters the TUI itself or common model text
 * uses; the graph ramp rises like the eighth blocks it replaces. */
static const struct {
        uint32_t cp;
        char ascii;
} singles[] = {
    {0x2581, '_'}, {0x2582, '.'}, {0x2583, '-'},  {0x2584, ':'},  {0x2585, '='}, {0x2586, '+'},
    {0x2587, '*'}, {0x2588, '#'}, {0x2190, '<'},  {0x2191, '^'},  {0x2192, '>'}, {0x2193, 'v'},
    {0x2013, '-'}, {0x2014, '-'}, {0x2018, '\''}, {0x2019, '\''}, {0x201C, '"'}, {0x201D, '"'},
    {0x2022, '*'}, {0x00B7, '.'}, {0x00A0, ' '},  {0x2500, '-'},  {0x2501, '-'}, {0x2550, '-'},
    {0x2502, '|'}, {0x2503, '|'}, {0x2551, '|'},
};

size_t glyphs_ascii(uint32_t cp, char *out)
{
        size_t i;

        if (cp >= 0x20 && cp < 0x7f) {
                out[0] = (char)cp;
                out[1] = '\0';
                return 1;
        }
        if (cp == 0x2026) {
                memcpy(out, "...", 4);
                return 3;
        }
        for (i = 0; i < sizeof(singles) / sizeof(singles[0]); i++)
                if (singles[i].cp == cp) {
                        out[0] = singles[i].ascii;
                        out[1] = '\0';
                        return 1;
                }
        if (cp >= 0x2500 && cp <= 0x257F) { /* the other box-drawing pieces */
                memcpy(out, "+", 2);
                return 1;
        }
        if (cp >= 0x2580 && cp <= 0x259F) { /* the other block elements */
                memcpy(out, "#", 2);
                return 1;
        }
        switch (safetext_cpwidth(cp)) {
        case 0:
                out[0] = '\0';
                return 0;
        case 2:
                memcpy(out, "??", 3);
                return 2;
        default:
                memcpy(out, "?", 2);
                return 1;
        }
}
