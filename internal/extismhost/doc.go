// Package extismhost adapts the SkillContext (package hostfuncs) to the Extism guest ABI: the
// host functions a skill module imports from "extism:host/user", with their arguments and replies
// in Extism memory blocks, as specified byte for byte in docs/abi.md (skillbox/v1).
//
// It only moves bytes: every check, limit and record is hostfuncs'. What it adds is what the ABI
// itself needs: reading argument blocks without copying more than an operation accepts, encoding
// replies, and stopping a run whose module hands the host an offset that is no block (a guest
// fault, recorded in the run's Call).
//
// The functions are defined once per compiled module; the per-run state reaches them through the
// call's context ([WithCall]), so one compiled module serves concurrent runs with different grants.
package extismhost
