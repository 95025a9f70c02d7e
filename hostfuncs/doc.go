// Package hostfuncs implements the SkillContext: the host functions a skill module imports from
// the "extism:host/user" namespace (fetch, env, read file, write file, log), as specified byte for
// byte in docs/abi.md (ABI "skillbox/v1").
//
// Every function checks the calling run's [Grant] and limits before it acts, validates every
// offset, length and path the guest hands it, and records what it did (or refused) in the run's
// [Usage]. A refusal is an answer to the guest, never a host error: a skill can handle it. Only a
// guest fault (an offset that is not a live memory block) stops the run, as a trap.
//
// The functions are defined once per compiled module; the per-run state reaches them through the
// call's context ([WithCall]), so one compiled module serves concurrent runs with different grants.
package hostfuncs
