/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The web console's files (console/), built into vtld by scripts/embed-files
 * (the Makefile's $(BUILD)/gen/console_files.c): nothing is installed beside
 * the binary, and the page never loads anything from another origin.
 */
#ifndef VTL_VTLD_CONSOLE_FILES_H
#define VTL_VTLD_CONSOLE_FILES_H

#include <stddef.h>

/* console/console.html, console.js, console.css, their bytes and lengths. */
extern const unsigned char console_html[], console_js[], console_css[];
extern const size_t console_html_len, console_js_len, console_css_len;

#endif
