package main

import (
	"os"
	"os/user"

	"github.com/skillbox-dev/skillbox/access"
)

// operator is who the CLI acts for: the OS user, with the admin role.
//
// The CLI asks no key and checks no role because there is nothing to check against: whoever can
// open the store's database already owns it. The SQLite file is in a data directory only its
// owner may enter (mode 0700), and a PostgreSQL store is reached with its credentials; either
// way they could rewrite any version's status with the database's own tools. Refusing them
// here would protect nothing, so the CLI records their name (a trail, not a guard) and gives
// them the role they hold in fact. A server's callers are different: they reach the store only
// through the server, which gives each API key its own role.
func operator() access.Principal {
	return access.Local(osUser())
}

// osUser is the name of the user running skillbox, for the records of what they do: the
// account's name, else $USER (or %USERNAME%), else "local".
func osUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	for _, v := range []string{"USER", "USERNAME"} {
		if s := os.Getenv(v); s != "" {
			return s
		}
	}
	return "local"
}
