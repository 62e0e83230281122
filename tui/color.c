/* color: colour-depth detection and theme colours mapped to what the
 * terminal has (nearest in 256 colours, by hue in 16 and 8). Numbers only;
 * the TUI makes ncurses pairs. Mapping must never make fg == bg. */
#include "tui/color.h"

#include <stddef.h>
#include <string.h>

#define R(c) ((int)(((c) >> 16) & 0xff))
#define G(c) ((int)(((c) >> 8) & 0xff))
#define B(c) ((int)((c)&0xff))

/* The six levels of each axis of the 6x6x6 cube (indices 16-231). */
static const int cube_level[6] = {0, 95, 135, 175, 215, 255};

enum color_depth color_detect(const char *no_color_env, const char *colorterm_env,
                              bool no_color_flag, int terminfo_colors)
{
        if (no_color_flag || (no_color_env != NULL && no_color_env[0] != '\0'))
                return COLOR_MONO;
        if (colorterm_env != NULL &&
            (strcmp(colorterm_env, "truecolor") == 0 || strcmp(colorterm_env, "24bit") == 0))
                return COLOR_TRUE;
        if (terminfo_colors >= 256)
                return COLOR_256;
        if (terminfo_colors >= 16)
                return COLOR_16;
        if (terminfo_colors >= 8)
                return COLOR_8;
        return COLOR_MONO;
}

const char *color_depth_name(enum color_depth depth)
{
        switch (depth) {
        case COLOR_MONO:
                return "mono";
        case COLOR_8:
                return "8";
        case COLOR_16:
                return "16";
        case COLOR_256:
                return "256";
        case COLOR_TRUE:
                return "truecolor";
        }
        return "?";
}

/* Squared distance weighted by the mean red level ("redmean"): cheap, and
 * much closer to what the eye sees than plain RGB distance. */
static long distance(uint32_t a, uint32_t b)
{
        long rmean = (R(a) + R(b)) / 2;
        long dr = R(a) - R(b), dg = G(a) - G(b), db = B(a) - B(b);

        return (((512 + rmean) * dr * dr) >> 8) + 4 * dg * dg + (((767 - rmean) * db * db) >> 8);
}

/* Colour `i` of the xterm palette, 16-255. */
static uint32_t palette256(int i)
{
        if (i < 232) {
                i -= 16;
                return (uint32_t)cube_level[i / 36] << 16 | (uint32_t)cube_level[i / 6 % 6] << 8 |
                       (uint32_t)cube_level[i % 6];
        }
        i = 8 + 10 * (i - 232);
        return (uint32_t)i << 16 | (uint32_t)i << 8 | (uint32_t)i;
}

/* Perceived brightness, 0-255. */
static int luma(uint32_t c)
{
        return (R(c) * 299 + G(c) * 587 + B(c) * 114) / 1000;
}

static int channel_max(uint32_t c)
{
        int r = R(c), g = G(c), b = B(c);

        return r > g ? (r > b ? r : b) : (g > b ? g : b);
}

static int nearest(uint32_t rgb, int from, int to)
{
        long best_d = -1, d;
        int best = from;

        for (int i = from; i < to; i++) {
                d = distance(rgb, palette256(i));
                if (best_d < 0 || d < best_d) {
                        best_d = d;
                        best = i;
                }
        }
        return best;
}

int color_to_256(uint32_t rgb)
{
        return nearest(rgb & 0xffffff, 16, 256);
}

/* The ANSI colour of a colour's hue, 1-6 (red, green, yellow, blue,
 * magenta, cyan), or -1 for one too dark or too grey to have a hue worth
 * keeping. Nearest-by-distance is wrong with only 8 or 16 colours: a soft
 * red such as #ff6b6b is nearer grey than red, and a failure would lose the
 * colour that says so. */
static int ansi_hue(uint32_t c)
{
        /* sectors of 60 degrees from red, centred on each primary/secondary */
        static const int sector[6] = {1, 3, 2, 6, 4, 5};
        int r = R(c), g = G(c), b = B(c);
        int max = channel_max(c);
        int min = r < g ? (r < b ? r : b) : (g < b ? g : b);
        int chroma = max - min, hue;

        if (max < 96 || chroma < 40 || chroma * 4 < max)
                return -1;
        if (max == r)
                hue = 60 * (g - b) / chroma;
        else if (max == g)
                hue = 120 + 60 * (b - r) / chroma;
        else
                hue = 240 + 60 * (r - g) / chroma;
        hue = (hue + 360 + 30) % 360;
        return sector[hue / 60];
}

int color_to_16(uint32_t rgb)
{
        int h = ansi_hue(rgb & 0xffffff), l = luma(rgb & 0xffffff);

        /* only a near-full channel is worth the bright variant */
        if (h > 0)
                return channel_max(rgb) >= 230 ? h + 8 : h;
        return l < 64 ? 0 : l < 160 ? 8 : l < 240 ? 7 : 15;
}

int color_to_8(uint32_t rgb)
{
        int h = ansi_hue(rgb & 0xffffff);

        if (h > 0)
                return h;
        return luma(rgb & 0xffffff) < 96 ? 0 : 7;
}

int color_map(int32_t rgb, enum color_depth depth)
{
        if (rgb < 0)
                return -1;
        switch (depth) {
        case COLOR_MONO:
                return -1;
        case COLOR_8:
                return color_to_8((uint32_t)rgb);
        case COLOR_16:
                return color_to_16((uint32_t)rgb);
        case COLOR_256:
                return color_to_256((uint32_t)rgb);
        case COLOR_TRUE:
                return rgb;
        }
        return -1;
}

#define BOLD THEME_ATTR_BOLD
#define REV  THEME_ATTR_REVERSE

/* What each role adds in mono so it still stands apart with no colour. */
static const unsigned mono_attr[THEME_ROLE_COUNT] = {
    [THEME_TEXT_DIM] = THEME_ATTR_DIM,
    [THEME_BORDER_FOCUSED] = BOLD,
    [THEME_TITLE] = BOLD,
    [THEME_HEADER] = BOLD | THEME_ATTR_UNDERLINE,
    [THEME_SELECTION] = REV,
    [THEME_STATUS] = REV,
    [THEME_STATUS_KEY] = REV | BOLD,
    [THEME_BADGE_LOCAL] = REV | BOLD,
    [THEME_BADGE_SANDBOX] = REV,
    [THEME_BADGE_REPLAY] = REV,
    [THEME_BADGE_SCRIPTED] = REV,
    [THEME_STATE_CREATING] = THEME_ATTR_DIM,
    [THEME_STATE_RUNNING] = BOLD,
    [THEME_STATE_KILLED] = BOLD,
    [THEME_STATE_TIMEOUT] = BOLD,
    [THEME_STATE_OOM] = BOLD,
    [THEME_STATE_CPU_LIMIT] = BOLD,
    [THEME_STATE_PIDS_LIMIT] = BOLD,
    [THEME_STATE_SETUP_FAILED] = BOLD,
    [THEME_STATE_SIGNALED] = BOLD,
    [THEME_TOOL_ERROR] = BOLD,
    [THEME_TOOL_INTERRUPTED] = THEME_ATTR_UNDERLINE,
    [THEME_METER] = REV,
    [THEME_WARNING] = BOLD,
    [THEME_ERROR] = BOLD,
    [THEME_SPINNER] = BOLD,
    [THEME_DIALOG_BORDER] = BOLD,
    [THEME_DIALOG_DANGER] = REV | BOLD,
};

#undef BOLD
#undef REV

static struct color_spec keep_contrast(struct color_spec s, int32_t bg_rgb, enum color_depth depth)
{
        bool light = luma((uint32_t)bg_rgb) > 128;

        switch (depth) {
        case COLOR_8:
                s.fg = light ? 0 : 7;
                break;
        case COLOR_16:
                s.fg = light ? 0 : 15;
                break;
        case COLOR_256:
                s.fg = light ? 16 : 231;
                break;
        default:
                break;
        }
        return s;
}

struct color_spec color_resolve(const struct theme *t, enum theme_role role, enum color_depth depth)
{
        const struct theme_style *st = &t->style[role];
        struct color_spec s = {-1, -1, st->attr};

        if (depth == COLOR_MONO) {
                s.attr |= mono_attr[role];
                return s;
        }
        s.fg = color_map(st->fg, depth);
        s.bg = color_map(st->bg, depth);
        if (s.fg >= 0 && s.fg == s.bg && st->fg != st->bg)
                s = keep_contrast(s, st->bg, depth);
        return s;
}
