// Package broker serves the SkillContext (fetch, env, readFile, writeFile, log) to every script
// runtime — the QuickJS interpreter and the CPython one alike — through one request format and
// one set of rules: one JSON object per request, each operation run under its own timeout
// inside the run's deadline, refusals mapped to the same error names in every language.
//
// A script runtime moves request and reply bytes between its guest and [Broker.Serve] however
// its interpreter can (a request line on stdout answered into a global for QuickJS, functions
// CPython imports from the host); what a request may do is decided here and by the [Host] behind it, which
// the runtime backs with a *hostfuncs.Call: the grant checks that compiled skills' host
// functions apply are the only ones, for scripts too.
package broker
