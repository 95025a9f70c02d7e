/* SQLite's OS layer in the Skillbox sandbox: the demo VFS of SQLite's sources (POSIX files,
   no locking), registered as the default. */
#include "sqlite3.h"
sqlite3_vfs *sqlite3_demovfs(void);
int sqlite3_os_init(void) { return sqlite3_vfs_register(sqlite3_demovfs(), 1); }
int sqlite3_os_end(void) { return SQLITE_OK; }
