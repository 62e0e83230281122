/* doctor: placeholder until the probe lands. */
#include "core/doctor.h"

#include <stdio.h>

int doctor_main(int argc, char **argv)
{
        fprintf(stderr, "proctor doctor: not built yet\n");
        return 1;
}
