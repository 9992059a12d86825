// SPDX-License-Identifier: MIT
/* swaplab guest agent, `churn` mode (churn.c). */
#ifndef SWAPLAB_GUEST_CHURN_H
#define SWAPLAB_GUEST_CHURN_H

/* argv: agent churn PROCESSES CONCURRENT GROWING MIN_PAGES MAX_PAGES
 * ZAP_PERMILLE SWAPPED_PAGES SEED MIX. Returns the exit status. */
int RunChurn(int argc, char **argv);

#endif
