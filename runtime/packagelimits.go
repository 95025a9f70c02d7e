package runtime

import "github.com/skillbox-dev/skillbox/bundle"

// PackageLimits are the limits an upload of a package is read within: the defaults, with the
// policy's module size. Faces that read packages (HTTP uploads) use them, so the loader never
// refuses a module the upload accepted for its size, nor the other way round.
func (rt *Runtime) PackageLimits() bundle.Limits {
	return bundle.Limits{MaxModuleBytes: rt.policy.Load().Modules.WithDefaults().MaxModuleBytes}.WithDefaults()
}
