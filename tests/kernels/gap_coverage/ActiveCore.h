#ifndef ACTIVE_CORE_H
#define ACTIVE_CORE_H
#include "Gap.h"

/* Out[0..3]: ActiveCore, gap_ncore(), gap_ncorem1(), rt_nb_pe() (Gap8.h); Out[4 + id]: what
 * core id saw as ActiveCore inside a fork on every core. */
void KerActiveCore(Word32 *Out);
void KerParActiveCore(Word32 *Out);
#endif
