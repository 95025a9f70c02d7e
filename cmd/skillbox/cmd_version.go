package main

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/skillbox-dev/skillbox/hostfuncs"
)

// buildVersion is set at build time with -ldflags "-X main.buildVersion=v1.2.3"; otherwise the
// module version from the build info is used.
var buildVersion = ""

var cmdVersion = &command{
	summary: "print the versions of skillbox, its guest ABI and its engine",
	run: func(ctx context.Context, e *env, pos []string) int {
		if len(pos) != 0 {
			return e.fail(exitUsage, "version takes no arguments")
		}
		v := map[string]string{"skillbox": moduleVersion(), "abi": hostfuncs.ABIVersion}
		if bi, ok := debug.ReadBuildInfo(); ok {
			v["go"] = bi.GoVersion
			for _, d := range bi.Deps {
				switch d.Path {
				case "github.com/tetratelabs/wazero":
					v["wazero"] = d.Version
				case "github.com/extism/go-sdk":
					v["extism"] = d.Version
				}
			}
		}
		if e.json {
			_ = writeJSON(e.stdout, v)
			return exitOK
		}
		fmt.Fprintf(e.stdout, "skillbox %s\n  abi     %s\n  wazero  %s\n  extism  %s\n  go      %s\n", v["skillbox"], v["abi"], v["wazero"], v["extism"], v["go"])
		return exitOK
	},
}
