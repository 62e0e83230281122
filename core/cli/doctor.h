/* doctor: `proctor doctor [--json]`, what isolation this host offers and
 * what sandbox mode will enforce here, with what to do about gaps. */
#ifndef PROCTOR_DOCTOR_H
#define PROCTOR_DOCTOR_H

int doctor_main(int argc, char **argv);

#endif
