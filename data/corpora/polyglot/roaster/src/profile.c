/* Roast profile loader: "seconds,celsius" lines, '#' starts a comment. */
#include <stdio.h>
#include <string.h>

#include "profile.h"

int profile_load(FILE *in, roast_profile *out)
{
    char line[128];
    memset(out, 0, sizeof *out);
    while (fgets(line, sizeof line, in) != NULL) {
        unsigned seconds;
        float celsius;
        if (line[0] == '#' || line[0] == '\n') {
            continue;
        }
        if (strncmp(line, "name=", 5) == 0) {
            strncpy(out->name, line + 5, PROFILE_NAME_LEN - 1);
            out->name[strcspn(out->name, "\r\n")] = '\0';
            continue;
        }
        if (sscanf(line, "%u,%f", &seconds, &celsius) != 2) {
            return -1;
        }
        if (out->count == PROFILE_MAX_POINTS) {
            fprintf(stderr, "profile: more than %d set points\n", PROFILE_MAX_POINTS);
            return -2;
        }
        out->points[out->count].seconds = seconds;
        out->points[out->count].celsius = celsius;
        out->count++;
    }
    return out->count > 0 ? 0 : -1;
}

float profile_target_at(const roast_profile *profile, unsigned seconds)
{
    size_t i;
    if (profile->count == 0) {
        return 0.0f;
    }
    for (i = 1; i < profile->count; i++) {
        const profile_point *a = &profile->points[i - 1];
        const profile_point *b = &profile->points[i];
        if (seconds <= b->seconds) {
            float t = (float)(seconds - a->seconds) / (float)(b->seconds - a->seconds);
            return a->celsius + t * (b->celsius - a->celsius);
        }
    }
    return profile->points[profile->count - 1].celsius;
}
