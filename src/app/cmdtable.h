/* cmdtable.h - the server's command table, from the rows of src/cmd/.
 *
 * The top of the program: the server (src/server/) owns the table's
 * machinery and knows no handler; the handlers (src/cmd/) describe
 * themselves in .def rows and know nothing of how the table is built.
 * This is the one place the two meet. */
#ifndef HK_CMDTABLE_H
#define HK_CMDTABLE_H

/* Build the command table from every row of commands.def, keyspecs.def
 * and cmddocs.def (commands_init). Once, on the main thread, before any
 * worker starts; exits with a message when the rows disagree. */
void cmdtable_init(void);

#endif
