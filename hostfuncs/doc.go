// Package hostfuncs is the SkillContext: the operations a skill may ask of the host — fetch, env,
// read file, write file, log — as one engine-neutral Go API. Every guest ABI adapts to it (the
// Extism host functions in internal/extismhost today; a native kernel or a script interpreter's
// broker next), so each check is written once, here.
//
// A [Call] is one run's context. Every operation checks the run's [Grant] and limits before it
// acts, validates every path and URL the guest hands it, and records what it did (or refused) in
// the run's [Usage]. A refusal is an answer to the guest — a [*Refusal] with a [Status] — never a
// host error: a skill can handle it.
package hostfuncs

// ABIVersion names the contract in docs/abi.md: these operations, their statuses and their wire
// forms.
const ABIVersion = "skillbox/v1"
