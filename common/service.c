/* SPDX-License-Identifier: Apache-2.0 */
#include "common/service.h"
#include "common/log.h"
#include "common/sdnotify.h"

#include <pthread.h>

void service_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, set, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int service_wait(const sigset_t *set, const char *status, const char *stopping, service_reload_fn reload, void *arg)
{
	/* A manager that missed a state times the daemon out and says so; sdnotify logged why: nothing to add. */
	vtl_ignore(sdnotify_ready(status));
	for (;;) {
		int sig = 0;
		if (sigwait(set, &sig) != 0)
			continue; /* only EINVAL, for a set this module built: cannot happen */
		if (sig == SIGHUP) {
			log_info("signal %d (SIGHUP): reloading the configuration", sig);
			if (reload)
				reload(arg);
			continue;
		}
		log_info("signal %d: stopping", sig);
		vtl_ignore(sdnotify_stopping(stopping));
		return sig;
	}
}
